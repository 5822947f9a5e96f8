/* normals_cuda.h -- the GPU twin of grip_normals_compute (src/descriptor/normals.h): PCA normals and curvature of
 * every point, PCL 1.13 NormalEstimation semantics, on the context's device, over a device-resident cloud
 * (grip_surface_cuda, src/spatial/neighborhood_cuda.h) or a host one.
 *
 * As on the CPU: NaN rows for non-finite points and for fewer than 3 neighbours; the neighbourhood holds the point
 * itself; the covariance is accumulated in float in neighbour order exactly as pcl::computeMeanAndCovarianceMatrix
 * (no fused multiply-add); the smallest eigenvector comes from a device copy of PCL's float eigen33
 * (grip_sym3_smallest_pcl); curvature |l0 / trace|; normals flipped towards the viewpoint.
 * Neighbours: the k nearest (exactly the CPU's set, sorted by distance with ties to the lower index:
 * grip_kdtree3d_knn's rule), or every point strictly within the radius, nearest first, ties to the lower index
 * (grip_kdtree3d_radius's order, the CPU twin's). PCL/FLANN (grip_kdtree3d_knn_pcl, used by the CPU twin for k
 * nearest) keeps among points at the k-th distance those its traversal meets first: where several points tie at
 * the k-th distance the GPU may pick others, and rows whose neighbours tie may differ in the last bits of the sums.
 * The device's atan2f/cosf/sinf are within 2 ulp of glibc's: rows where the two smallest eigenvalues nearly
 * coincide can differ by more than rounding (as the CPU twin's own comment says of any other solver).
 * Every call is synchronous. A CPU-only build links src/no_cuda.c, which fails with GRIP_EUNSUPPORTED. */
#ifndef GRIP_DESCRIPTOR_NORMALS_CUDA_H
#define GRIP_DESCRIPTOR_NORMALS_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "spatial/neighborhood_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest k the GPU keeps; larger k fails with GRIP_EUNSUPPORTED (use the CPU twin). */
#define GRIP_NORMALS_CUDA_MAX_K 32

/* Radius normals: a point with at most this many neighbours is summed from a list sorted in shared memory; one with
 * more, from lists in device memory (the same bits either way; tests make both happen). */
#define GRIP_NORMALS_CUDA_LIST_CAP 256

/* Normals of every point of the surface s, written into its view.normals (n x 4: nx, ny, nz, curvature), which
 * is then marked filled (grip_surface_cuda_mark_normals). The neighbourhood is the k nearest when k > 0 (1 <= k <=
 * GRIP_NORMALS_CUDA_MAX_K; radius is then ignored), else every point strictly within radius (> 0; squared distance
 * < (float)(radius * radius in double), as the CPU's search). viewpoint: NULL for (0, 0, 0). Fails with
 * GRIP_EINVAL on a NULL surface, k == 0 with a radius that is not finite and > 0, GRIP_EUNSUPPORTED when
 * k > GRIP_NORMALS_CUDA_MAX_K or on a CPU-only build, GRIP_ENOMEM when device memory is short (the context stays
 * usable; the surface's normals are then left unmarked), GRIP_ECUDA when a CUDA call fails. */
grip_status grip_normals_cuda_surface(grip_ctx *ctx, grip_surface_cuda *s, uint32_t k, float radius,
                                      const float viewpoint[3]);

/* Negates nx, ny, nz of every row of the surface s's normals (view.normals, n x 4; NaN rows stay NaN), leaving the
 * curvature: the GPU twin of grip_normals_turn_around (normals.h), bit for bit. Used after the normals were flipped
 * toward the centroid, to point them away from it. Fails with GRIP_EINVAL on a NULL surface or one whose normals
 * are not filled, GRIP_EUNSUPPORTED on a CPU-only build, GRIP_ECUDA when a CUDA call fails. */
grip_status grip_normals_cuda_turn_around(grip_ctx *ctx, grip_surface_cuda *s);

/* The same for the n points xyz (host memory, n x 3; NaN rows allowed) from their k nearest (1 <= k <= 32): a
 * surface is made of them (upload), its normals computed, and downloaded into out.
 * viewpoint: NULL for (0, 0, 0). out: caller's host n x 4 floats (nx, ny, nz, curvature). Nothing is done when
 * n is 0. Fails with GRIP_EINVAL on NULL arrays with n > 0, k == 0 or n >= UINT32_MAX, GRIP_EUNSUPPORTED when
 * k > GRIP_NORMALS_CUDA_MAX_K or on a CPU-only build, GRIP_ENOMEM when host or device memory is short (the context
 * stays usable; out is then untouched), GRIP_ENODEV without a usable device, GRIP_ECUDA when a CUDA call fails. */
grip_status grip_normals_cuda(grip_ctx *ctx, const float *xyz, size_t n, uint32_t k, const float viewpoint[3],
                              float *out);

#ifdef __cplusplus
}
#endif
#endif
