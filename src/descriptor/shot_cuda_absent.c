/* shot_cuda_absent.c -- the GPU SHOT of a CPU-only build: the entry points report that this build has no GPU
 * (see shot_cuda.h), so callers use the CPU twins grip_shot_lrf and grip_shot_describe. */
#include "descriptor/shot_cuda.h"

#ifndef GRIP_HAVE_CUDA
grip_status grip_shot_lrf_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *support, const float *keypoint_xyz,
                               uint32_t k, float radius, float *frames)
{
    (void)support; (void)keypoint_xyz; (void)k; (void)radius; (void)frames;
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "shot_lrf (cuda): the GPU SHOT frame asked for from a CPU-only build of grip");
}

grip_status grip_shot_describe_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *support, const float *keypoint_xyz,
                                    const float *frames, uint32_t k, float radius, float *descriptors)
{
    (void)support; (void)keypoint_xyz; (void)frames; (void)k; (void)radius; (void)descriptors;
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "shot (cuda): the GPU SHOT asked for from a CPU-only build of grip");
}
#else
/* the CUDA build gets these from cuda/shot.cu; keep this translation unit non-empty */
typedef int grip_shot_cuda_absent_unused;
#endif
