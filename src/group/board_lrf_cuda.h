/* board_lrf_cuda.h -- BOARD local reference frames of all keypoints on the GPU, in one launch: the CPU twin's frame
 * (group/board_lrf_math.h, the same code) on the same support, which the GPU radius neighbourhoods
 * (spatial/neighborhood_cuda.h) list by squared distance, ties to the lower point number -- the CPU twin's
 * GRIP_BOARD_TIES_NEAREST order. So a frame equals grip_board_lrf_ties(..., GRIP_BOARD_TIES_NEAREST, ...)'s: the
 * same NaN rows, the same z axis and the same chosen x candidate; only a frame whose x points into a hole may
 * differ, by the device's cosf/sinf against glibc's (a few 1e-7). PCL's own tie order (GRIP_BOARD_TIES_PCL) needs
 * FLANN's tree and is the CPU twin's only.
 *
 * Implementation (cuda/group/board_lrf.cu): the supports of all keypoints by one radius search, then one warp per
 * keypoint runs board_lrf_math.h over its list, staged in shared memory: the per-point margin measures on every
 * lane, the sums and the in-order choices on one.
 * Synchronous with respect to the host (results ready on return); a CPU-only build's versions (src/no_cuda.c) fail
 * with GRIP_EUNSUPPORTED. */
#ifndef GRIP_GROUP_BOARD_LRF_CUDA_H
#define GRIP_GROUP_BOARD_LRF_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "spatial/neighborhood_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* surface: a GPU cloud with normals (grip_surface_cuda_set_normals or a normals kernel; GRIP_EINVAL without);
 * keypoint_xyz: device, k x 3; radius > 0; frames_out: device, k x 9, allocated by the caller. Errors: GRIP_EINVAL
 * (bad radius, NULL arrays with k > 0), GRIP_ENOMEM (the supports do not fit on the device; the context stays
 * usable), GRIP_ECUDA. */
grip_status grip_board_lrf_cuda(grip_ctx *ctx, const grip_surface_cuda *surface, const float *keypoint_xyz, uint32_t k,
                                float radius, int find_holes, float *frames_out);

/* The same for host keypoints (k x 3) into host frames_out (k x 9, the caller's), over a surface already on the
 * device (a descriptor stage's, stages/results.h): uploads the keypoints, frees what it allocates before it returns. */
grip_status grip_board_lrf_cuda_on_surface(grip_ctx *ctx, const grip_surface_cuda *surface, const float *keypoint_xyz,
                                           size_t k, float radius, int find_holes, float *frames_out);

/* The same from host arrays (grip_board_lrf's arguments, without a tree): takes the cloud (n x 3) from xyz_mem and
 * the normals (n x 4) from normals_mem (host memory, uploaded; or the context's device, copied there: what a
 * descriptor stage left on the device), uploads the keypoints, and writes frames_out (host, k x 9, the caller's).
 * Everything it allocates is freed before it returns. */
grip_status grip_board_lrf_cuda_host(grip_ctx *ctx, const float *surface_xyz, grip_memory xyz_mem,
                                     const float *surface_normals, grip_memory normals_mem, size_t n,
                                     const float *keypoint_xyz, size_t k, float radius, int find_holes,
                                     float *frames_out);

#ifdef __cplusplus
}
#endif
#endif
