/* hough3d_cuda.h -- Hough 3D voting on the GPU, the twin of group/hough3d.h: the same arguments (host arrays), the
 * same maxima and, after RANSAC, the same instances.
 *
 * Determinism: every vote and share is computed by the CPU twin's code (group/hough3d_math.h), so it lands in the
 * same bin with the same weight, bit for bit. The shares are then sorted by bin, stably (a radix sort keyed by bin,
 * the shares laid out in voting order), and each bin is summed by one thread in voting order -- the CPU twin's
 * order -- so a bin's value is the CPU twin's to the bit, and the same bins pass the threshold. No floating-point
 * atomics: the box of the votes and the largest bin come from integer atomics on order-preserving keys (exact).
 *
 * The RANSAC that filters each maximum and gives its pose is the CPU twin's C code (group/cluster.h) run on the
 * host on the few maxima: it is sequential per cluster (a seeded Mersenne Twister drawing PCL's samples) and cheap.
 *
 * Implementation: cuda/group/hough3d.cu. Synchronous; everything allocated is freed before return. A CPU-only
 * build's versions (src/no_cuda.c) fail with GRIP_EUNSUPPORTED. */
#ifndef GRIP_GROUP_HOUGH3D_CUDA_H
#define GRIP_GROUP_HOUGH3D_CUDA_H

#include "group/hough3d.h"

#ifdef __cplusplus
extern "C" {
#endif

/* grip_hough3d_vote on the GPU; same arguments, results and ownership (*out malloc'd, grip_clusters_free). */
grip_status grip_hough3d_vote_cuda(grip_ctx *ctx, const grip_hough3d_params *params, const float *model_kp_xyz,
                                   const float *model_rf, size_t n_model_kp, const float *scene_kp_xyz,
                                   const float *scene_rf, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                                   grip_cluster **out, size_t *n_out);

/* grip_hough3d_cluster with the voting on the GPU and RANSAC on the host (the CPU twin's). */
grip_status grip_hough3d_cluster_cuda(grip_ctx *ctx, const grip_hough3d_params *params, const float *model_kp_xyz,
                                      const float *model_rf, size_t n_model_kp, const float *scene_kp_xyz,
                                      const float *scene_rf, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                                      grip_cluster **out, size_t *n_out);

#ifdef __cplusplus
}
#endif
#endif
