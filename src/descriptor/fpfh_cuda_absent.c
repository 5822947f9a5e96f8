/* fpfh_cuda_absent.c -- the GPU FPFH of a CPU-only build: the entry point reports that this build has no GPU (see
 * fpfh_cuda.h), so callers use the CPU twin grip_fpfh_describe. */
#include "descriptor/fpfh_cuda.h"

#ifndef GRIP_HAVE_CUDA
grip_status grip_fpfh_cuda(grip_ctx *ctx, const grip_surface_cuda *s, const float *keypoint_xyz, uint32_t k,
                           float radius, float *out)
{
    (void)s; (void)keypoint_xyz; (void)k; (void)radius; (void)out;
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "fpfh (cuda): the GPU FPFH asked for from a CPU-only build of grip");
}
#else
/* the CUDA build gets this from cuda/fpfh.cu; keep this translation unit non-empty */
typedef int grip_fpfh_cuda_absent_unused;
#endif
