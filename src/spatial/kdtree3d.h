/* kdtree3d.h -- exact k-nearest and radius search over 3D points on the CPU (the twin of the GPU search).
 * Points with a non-finite coordinate are left out of the tree. Queries are const and thread-safe.
 *
 * Distances follow PCL's KdTreeFLANN exactly: squared distances in float, computed as dx*dx + dy*dy + dz*dz
 * (dx = p.x - q.x), so a neighbour set and its distances equal PCL's up to the order of ties. The tree has the
 * shape of the FLANN tree PCL 1.13 builds (KDTreeSingleIndex, middle splits, at most 15 points per leaf), so
 * that grip_kdtree3d_knn_pcl can also reproduce PCL's choice among ties. */
#ifndef GRIP_SPATIAL_KDTREE3D_H
#define GRIP_SPATIAL_KDTREE3D_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "core/error_note.h"

typedef struct grip_kdtree3d grip_kdtree3d;

/* Builds a tree over xyz (n x 3, row-major; n <= UINT32_MAX). The tree keeps its own copy of the finite
 * points; xyz is only read during the build. Free with grip_kdtree3d_free() (NULL is allowed). */
grip_status grip_kdtree3d_build(grip_ctx *ctx, const float *xyz, size_t n, grip_kdtree3d **out);
/* The same, failing into err instead of a context (core/error_note.h: for OpenMP worker threads). */
grip_status grip_kdtree3d_build_noted(grip_error_note *err, const float *xyz, size_t n, grip_kdtree3d **out);
void grip_kdtree3d_free(grip_kdtree3d *tree);

/* Number of finite points in the tree. */
size_t grip_kdtree3d_size(const grip_kdtree3d *tree);

/* The k nearest points of q: writes up to k indices (into the original xyz) and squared distances (caller's
 * buffers of k entries), sorted by distance, ties to the lower index. Returns how many were written: k, or the
 * tree size when that is smaller, or 0 when q has a non-finite coordinate. */
size_t grip_kdtree3d_knn(const grip_kdtree3d *tree, const float q[3], size_t k, uint32_t *idx, float *sqdist);

/* Whether a point of the tree lies within squared distance `limit` of q (its squared distance, computed as
 * grip_kdtree3d_knn computes it, <= limit): the answer of a 1-nearest search followed by that test, found without
 * looking for the nearest: only boxes within limit are visited, and the first such point ends the search. 0 for
 * a non-finite q or an empty tree. */
int grip_kdtree3d_any_within(const grip_kdtree3d *tree, const float q[3], float limit);

/* The k nearest points of q as PCL 1.13's KdTreeFLANN::nearestKSearch returns them: the same points in the same
 * order, also where distances tie (FLANN keeps, among points at the k-th distance, those its traversal meets
 * first, and lists equal distances in the order met). Same buffers and return value as grip_kdtree3d_knn;
 * use it where PCL parity matters (normals), and grip_kdtree3d_knn where a canonical answer does. */
size_t grip_kdtree3d_knn_pcl(const grip_kdtree3d *tree, const float q[3], size_t k, uint32_t *idx, float *sqdist);

/* A growable result buffer for radius search, reused across queries by one thread. Start it zeroed; free its
 * arrays with grip_neighbors_free(). */
typedef struct grip_neighbors {
    uint32_t *idx;
    float *sqdist;
    size_t count, capacity;
} grip_neighbors;
void grip_neighbors_free(grip_neighbors *nb);

/* All points strictly within `radius` of q: squared distance < r2, with r2 = (float)(radius^2 computed in
 * double) -- FLANN's rule, as PCL's radiusSearch, so radius 0 finds nothing. Sorted by squared distance,
 * ties to the lower index. A non-finite q finds nothing. GRIP_EINVAL for a NULL argument or a negative or NaN
 * radius; GRIP_ENOMEM if the buffer cannot grow (then out->count is 0). */
grip_status grip_kdtree3d_radius(const grip_kdtree3d *tree, const float q[3], float radius, grip_neighbors *out);

/* The points of grip_kdtree3d_radius (squared distance < r2), in the order PCL 1.13's KdTreeFLANN::radiusSearch
 * returns them unsorted -- as PCL's features search by default (pcl::search::KdTree(false)) -- that is, in
 * FLANN's visiting order. Use it where PCL's order decides (first of equal values, float summation order).
 * Same arguments and errors as grip_kdtree3d_radius. */
grip_status grip_kdtree3d_radius_pcl(const grip_kdtree3d *tree, const float q[3], float radius, grip_neighbors *out);

#endif
