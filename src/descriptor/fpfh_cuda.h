/* fpfh_cuda.h -- the GPU twin of grip_fpfh_describe (fpfh.h): FPFH-33 with PCL 1.13's CPU semantics.
 *
 * The keypoints' radius lists; the union of their neighbours (marks over the surface, a scan, a compaction); the
 * radius lists of that union and its SPFH rows (a warp per point, votes counted in shared memory and turned into
 * PCL's float sums); then each keypoint's weighted sum (a warp per keypoint, a lane per bin, the neighbours in list
 * order, each sub-histogram's total in double in the CPU's order). Lists that do not fit are made a chunk of
 * keypoints (and of union points) at a time (pfh_chunks.h). Same lists and same arithmetic as the CPU twin (glibc's
 * atan2f/acosf included, src/math/libm_float.h): the rows equal the CPU's to the bit.
 * Rows: NaN for a keypoint with a non-finite coordinate or no neighbour, zeros when every neighbour is at distance
 * 0. Every call is synchronous. A CPU-only build links src/no_cuda.c, which fails with GRIP_EUNSUPPORTED. */
#ifndef GRIP_DESCRIPTOR_FPFH_CUDA_H
#define GRIP_DESCRIPTOR_FPFH_CUDA_H

#include <stdint.h>
#include "core/ctx.h"
#include "spatial/neighborhood_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* FPFH of the k keypoints keypoint_xyz (device, k x 3) over the surface s, which must carry normals, into out
 * (device, k x 33, the caller's). radius: finite and > 0. GRIP_EINVAL (bad radius, NULL arrays with k > 0, a
 * surface without normals), GRIP_ENOMEM (host or device; the context stays usable), GRIP_ECUDA. */
grip_status grip_fpfh_cuda(grip_ctx *ctx, const grip_surface_cuda *s, const float *keypoint_xyz, uint32_t k,
                           float radius, float *out);

#ifdef __cplusplus
}
#endif
#endif
