/* normals.h -- surface normals and curvature by PCA of each point's neighbourhood: the CPU twin of PCL 1.13's
 * NormalEstimation / NormalEstimationOMP.
 *
 * Per point, as PCL does:
 *   - a non-finite point, or one with fewer than 3 neighbours, gets a NaN row (all 4 values);
 *   - the neighbourhood includes the point itself: the k nearest, in the order PCL's FLANN search returns them
 *     (grip_kdtree3d_knn_pcl: the same points among equal distances, the same order), or all points with
 *     squared distance < radius^2, nearest first (PCL's default search leaves these unsorted, in FLANN's
 *     traversal order: the float sums below then differ from PCL's in the last bits);
 *   - the covariance is accumulated in float exactly as pcl::computeMeanAndCovarianceMatrix does (coordinates
 *     shifted by the nearest neighbour, sums of products divided by the count, minus the product of means);
 *   - the normal is the eigenvector of its smallest eigenvalue l0, from PCL's own float solver
 *     (grip_sym3_smallest_pcl: where l0 and l1 nearly coincide an accurate solver would differ from PCL by
 *     more than 1e-4), the curvature |l0 / trace| (0 when the trace is 0);
 *   - the normal is negated when (viewpoint - point) . normal < 0 (pcl::flipNormalTowardsViewpoint, in float).
 * Degenerate neighbourhoods come out as in PCL: all neighbours equal gives a NaN normal with curvature 0.
 *
 * Outward orientation (a complete model seen from all sides, where no one viewpoint sees every face): flip toward
 * the centroid of the finite points (grip_normals_centroid as the viewpoint), then turn every normal around
 * (grip_normals_turn_around): each then points away from the centroid. Both steps are exact or shared with the GPU
 * twin (normals_cuda.h), so the two backends keep agreeing as they do for any viewpoint. */
#ifndef GRIP_DESCRIPTOR_NORMALS_H
#define GRIP_DESCRIPTOR_NORMALS_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "spatial/kdtree3d.h"

/* Normals of the n points xyz (n x 3; NaN rows allowed). The neighbourhood is the k nearest points when k > 0
 * (k wins; radius is then ignored), else every point strictly within radius (> 0); both 0 is GRIP_EINVAL.
 * tree: a tree built over the same xyz, or NULL to build one here. viewpoint: NULL for (0, 0, 0).
 * out: caller's n x 4 floats (nx, ny, nz, curvature). Runs on ctx->opts.threads OpenMP threads
 * (0 = the runtime's default). */
grip_status grip_normals_compute(grip_ctx *ctx, const float *xyz, size_t n, const grip_kdtree3d *tree,
                                 uint32_t k, float radius, const float viewpoint[3], float *out);

/* The centroid of the finite rows of xyz (n x 3; rows with a NaN or infinite coordinate are skipped): summed in
 * double in row order, divided by their count, then rounded to float, so that every caller gets the same bits.
 * (0, 0, 0) when no row is finite. out: caller's 3 floats. */
void grip_normals_centroid(const float *xyz, size_t n, float out[3]);

/* Negates nx, ny, nz of every row of normals (n x 4; NaN rows stay NaN), leaving the curvature: normals flipped
 * toward a viewpoint then point away from it. Exact (a sign change); the GPU twin is
 * grip_normals_cuda_turn_around. */
void grip_normals_turn_around(float *normals, size_t n);

#endif
