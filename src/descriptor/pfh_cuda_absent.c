/* pfh_cuda_absent.c -- the GPU PFH of a CPU-only build: both entry points report that this build has no GPU (see
 * pfh_cuda.h), so callers use the CPU twin grip_pfh_describe. */
#include "descriptor/pfh_cuda.h"

#ifndef GRIP_HAVE_CUDA
grip_status grip_pfh_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *keypoint_xyz, uint32_t k,
                          float *out)
{
    (void)nb; (void)keypoint_xyz; (void)k; (void)out;
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "pfh (cuda): the GPU PFH asked for from a CPU-only build of grip");
}

grip_status grip_pfh_cuda_surface(grip_ctx *ctx, const grip_surface_cuda *s, const float *keypoint_xyz, uint32_t k,
                                  float radius, float *out)
{
    (void)s; (void)keypoint_xyz; (void)k; (void)radius; (void)out;
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "pfh (cuda): the GPU PFH asked for from a CPU-only build of grip");
}
#else
/* the CUDA build gets these from cuda/pfh.cu; keep this translation unit non-empty */
typedef int grip_pfh_cuda_absent_unused;
#endif
