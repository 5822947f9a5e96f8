/* gc_cuda.h -- geometric-consistency grouping on the GPU, the twin of group/gc.h: the same arguments (host arrays),
 * the same consensus sets (same members, in the same order) and, after RANSAC, the same instances.
 *
 * How: the correspondences are put in the CPU twin's visiting order (a stable radix sort by descriptor distance,
 * so ties go by index); every pair is tested once, in parallel, by the CPU twin's test (group/gc_math.h) into a
 * bit matrix (n x n bits: 400 KiB for 1,800 correspondences, 1.2 GiB for 100,000); then a warp grows a seed's set
 * -- whether j joins depends on who joined before, so one set's growth is sequential -- keeping the candidates that
 * agree with every member so far as a bit set, ANDed with each new member's row, the next member being the lowest
 * candidate bit. The seeds are grown 32 at a time by one block, speculatively, all under the same taken bits; the
 * first kept set among them is exact (no seed before it changed the taken bits) and the seeds after it are grown
 * again -- so the sets are the CPU twin's, in its order (cuda/group/gc.cu says why in full).
 *
 * The RANSAC that filters each set and gives its pose is the CPU twin's C code (group/cluster.h) on the host.
 * Implementation: cuda/group/gc.cu. Synchronous; everything allocated is freed before return. A CPU-only build's
 * versions (src/no_cuda.c) fail with GRIP_EUNSUPPORTED. */
#ifndef GRIP_GROUP_GC_CUDA_H
#define GRIP_GROUP_GC_CUDA_H

#include "group/gc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* grip_gc_consensus on the GPU; same arguments, results and ownership. */
grip_status grip_gc_consensus_cuda(grip_ctx *ctx, const grip_gc_params *params, const float *model_kp_xyz,
                                   size_t n_model_kp, const float *scene_kp_xyz, size_t n_scene_kp,
                                   const grip_corr *corr, size_t n_corr, grip_cluster **out, size_t *n_out);

/* grip_gc_cluster with the consensus on the GPU and RANSAC on the host (the CPU twin's). */
grip_status grip_gc_cluster_cuda(grip_ctx *ctx, const grip_gc_params *params, const float *model_kp_xyz,
                                 size_t n_model_kp, const float *scene_kp_xyz, size_t n_scene_kp, const grip_corr *corr,
                                 size_t n_corr, grip_cluster **out, size_t *n_out);

#ifdef __cplusplus
}
#endif
#endif
