/* descriptor_front_cuda_absent.c -- the device steps of the descriptor front in a CPU-only build: they report that
 * this build has no GPU (see descriptor_front_cuda.h); the front only calls them on a stage that runs on CUDA. */
#include "stages/descriptor_front_cuda.h"

#ifndef GRIP_HAVE_CUDA
static grip_status front_cuda_unsupported(grip_ctx *ctx)
{
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "descriptor (cuda): device memory asked for from a CPU-only build of grip");
}

grip_status grip_front_cuda_copy(grip_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    (void)dst; (void)src; (void)bytes;
    return front_cuda_unsupported(ctx);
}

grip_status grip_front_cuda_gather_normals(grip_ctx *ctx, const float *normals, const uint32_t *idx, size_t count,
                                           float *out)
{
    (void)normals; (void)idx; (void)count; (void)out;
    return front_cuda_unsupported(ctx);
}
#else
/* the CUDA build gets these from cuda/descriptor_front.cu; keep this translation unit non-empty */
typedef int grip_front_cuda_absent_unused;
#endif
