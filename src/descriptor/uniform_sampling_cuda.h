/* uniform_sampling_cuda.h -- the GPU twin of grip_uniform_sampling (src/descriptor/uniform_sampling.h): keypoints by
 * uniform sampling of a device-resident cloud (src/spatial/neighborhood_cuda.h), with exactly the CPU twin's
 * result: the same voxel of each point (floor(x * inv) per axis, inv = 1 / leaf, in float), the same float score
 * (PCL 1.13's distance to the voxel centre, summed in Eigen's SSE order, no fused multiply-add), among equal
 * scores the first point in cloud order, non-finite points skipped, and the indices in ascending order.
 * Every call is synchronous. A CPU-only build links src/no_cuda.c, which fails with
 * GRIP_EUNSUPPORTED. */
#ifndef GRIP_DESCRIPTOR_UNIFORM_SAMPLING_CUDA_H
#define GRIP_DESCRIPTOR_UNIFORM_SAMPLING_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "spatial/neighborhood_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Samples the points of surface s with voxels of side `leaf` (finite, > 0). On success *idx_dev is a device array
 * (grip_cuda_alloc, on the surface's device) of *count point indices in ascending order, which the caller frees
 * with grip_cuda_free (a 1-element allocation when the count is 0: a cloud without finite points). Errors, as the
 * CPU twin's: GRIP_EINVAL for a bad leaf or NULL arguments, or a point so far out that its voxel coordinate does
 * not fit in an int (the text names it); GRIP_ENOMEM (the context stays usable), GRIP_ECUDA, GRIP_EUNSUPPORTED on
 * a CPU-only build. On failure *idx_dev is NULL and *count 0. */
grip_status grip_uniform_sampling_cuda(grip_ctx *ctx, const grip_surface_cuda *s, float leaf, uint32_t **idx_dev,
                                       size_t *count);

#ifdef __cplusplus
}
#endif
#endif
