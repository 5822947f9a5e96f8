/* pfh_cuda.h -- the GPU twin of grip_pfh_describe (pfh.h): PFH-125 with PCL 1.13's CPU semantics, the same
 * histogram as the CPU twin for the same neighbour lists. One block per keypoint, its pairs strided over the
 * threads, votes counted in a shared-memory histogram and turned into PCL's float sums (grip_repeat_add): the
 * counts do not depend on the order of the votes and the angles are glibc's (src/math/libm_float.h), so the rows
 * equal the CPU's to the bit. Rows: NaN for a keypoint with a non-finite coordinate or
 * an empty list, zeros for a single neighbour. Every call is synchronous. A CPU-only build links
 * src/no_cuda.c, whose functions fail with GRIP_EUNSUPPORTED. */
#ifndef GRIP_DESCRIPTOR_PFH_CUDA_H
#define GRIP_DESCRIPTOR_PFH_CUDA_H

#include <stdint.h>
#include "core/ctx.h"
#include "spatial/neighborhood_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* PFH of the k keypoints keypoint_xyz (device, k x 3) from their radius lists nb (nb->m == k, with normals, as
 * grip_neighborhoods_cuda_radius makes them) into out (device, k x 125, the caller's). GRIP_EINVAL for NULL
 * arrays with k > 0, nb->m != k or lists without normals; GRIP_ECUDA. */
grip_status grip_pfh_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *keypoint_xyz, uint32_t k,
                          float *out);

/* The whole of it over a surface with normals: the keypoints' radius lists, in chunks when they do not all fit
 * (pfh_chunks.h), and grip_pfh_cuda on each. radius: finite and > 0. keypoint_xyz and out as above.
 * GRIP_EINVAL (bad radius, NULL arrays, a surface without normals), GRIP_ENOMEM, GRIP_ECUDA. */
grip_status grip_pfh_cuda_surface(grip_ctx *ctx, const grip_surface_cuda *s, const float *keypoint_xyz, uint32_t k,
                                  float radius, float *out);

#ifdef __cplusplus
}
#endif
#endif
