/* kdtree3d.h -- exact k-nearest and radius search over 3D points on the CPU (the twin of the GPU search).
 * Points with a non-finite coordinate are left out of the tree. Queries are const and thread-safe. */
#ifndef GRIP_SPATIAL_KDTREE3D_H
#define GRIP_SPATIAL_KDTREE3D_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

typedef struct grip_kdtree3d grip_kdtree3d;

/* Builds a tree over xyz (n x 3, row-major; borrowed: must outlive the tree). Free with grip_kdtree3d_free(). */
grip_status grip_kdtree3d_build(grip_ctx *ctx, const float *xyz, size_t n, grip_kdtree3d **out);
void grip_kdtree3d_free(grip_kdtree3d *tree);

/* Number of finite points in the tree. */
size_t grip_kdtree3d_size(const grip_kdtree3d *tree);

/* The k nearest points of q: writes up to k indices (into the original xyz) and squared distances, sorted by
 * distance, ties to the lower index. Returns how many were written (< k when the tree is smaller). */
size_t grip_kdtree3d_knn(const grip_kdtree3d *tree, const float q[3], size_t k, uint32_t *idx, float *sqdist);

/* A growable result buffer for radius search, reused across queries by one thread. */
typedef struct grip_neighbors {
    uint32_t *idx;
    float *sqdist;
    size_t count, capacity;
} grip_neighbors;
void grip_neighbors_free(grip_neighbors *nb);

/* All points within `radius` of q (squared distance <= radius^2), sorted by squared distance, ties to the
 * lower index. GRIP_ENOMEM if the buffer cannot grow. */
grip_status grip_kdtree3d_radius(const grip_kdtree3d *tree, const float q[3], float radius, grip_neighbors *out);

#endif
