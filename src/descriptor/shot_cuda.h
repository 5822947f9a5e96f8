/* shot_cuda.h -- the GPU twin of the SHOT frame (shot.h) and of SHOT-352 (shot.h), exact (PCL 1.13's
 * semantics) or approximate (G-SHOT, Hu 2017: the support capped at the nearest N points).
 *
 * Both take the keypoints' support as grip_neighborhoods_cuda_radius lists (spatial/neighborhood_cuda.h): sorted
 * by distance, ties to the lower index, i.e. the CPU's grip_kdtree3d_radius order, so that the GPU visits the
 * support in the CPU's order. The cap is the list's: lists searched with max_neighbors N give the approximate
 * G-SHOT of the CPU twin's max_neighbors N, for the frame and the descriptor alike (one list serves both).
 *  - Frames: one block per keypoint; the 7 sums of the weighted covariance are each added in list order (the
 *    terms in parallel, each sum by one thread), and the per-point and per-keypoint arithmetic is the CPU's
 *    (shot_math.h, sym3_jacobi.h), so frames equal the CPU twin's to the bit.
 *  - Descriptors: one block per keypoint, its 352-float histogram in shared memory; the votes are the CPU's
 *    (shot_math.h) but added in another order, so the values agree with the CPU twin's to float rounding (2.1e-7
 *    at most on the tutorial pair, tests/gpu/test_shot_cuda.c) and NaN rows are the same.
 *
 * Every pointer is device memory of the context's device. Calls are queued on the calling thread's default
 * stream, which every grip CUDA call uses: their results are ready for any later call of the thread (a copy to
 * the host waits for them).
 * A CPU-only build links src/no_cuda.c, whose functions fail with GRIP_EUNSUPPORTED. */
#ifndef GRIP_DESCRIPTOR_SHOT_CUDA_H
#define GRIP_DESCRIPTOR_SHOT_CUDA_H

#include <stdint.h>
#include "core/ctx.h"
#include "spatial/neighborhood_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SHOT local reference frame of each of the k keypoints (keypoint_xyz: k x 3) over `support`, their radius lists
 * at `radius` (support->m == k). frames: caller's k x 9 (rows x, y, z axis), NaN rows as the CPU twin's. Nothing
 * is done when k is 0. Errors: GRIP_EINVAL (NULL arrays, m != k, radius not finite and > 0), GRIP_ECUDA,
 * GRIP_EUNSUPPORTED on a CPU-only build. */
grip_status grip_shot_lrf_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *support, const float *keypoint_xyz,
                               uint32_t k, float radius, float *frames);

/* SHOT-352 of each of the k keypoints over `support` (their radius lists at `radius`, with normals: the surface
 * had its normals when the lists were searched), in the frames of grip_shot_lrf_cuda (k x 9). descriptors:
 * caller's k x GRIP_SHOT_DIM, NaN rows as the CPU twin's. Nothing is done when k is 0. Errors: GRIP_EINVAL (NULL
 * arrays, lists without normals, m != k, radius not finite and > 0), GRIP_ECUDA, GRIP_EUNSUPPORTED on a CPU-only
 * build. */
grip_status grip_shot_describe_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *support, const float *keypoint_xyz,
                                    const float *frames, uint32_t k, float radius, float *descriptors);

#ifdef __cplusplus
}
#endif
#endif
