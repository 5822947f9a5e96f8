/* normals_cuda_absent.c -- the GPU normals of a CPU-only build: the entry points report that this build has no
 * GPU (see normals_cuda.h), so callers use the CPU twin grip_normals_compute. */
#include "descriptor/normals_cuda.h"

#ifndef GRIP_HAVE_CUDA
static grip_status normals_cuda_unsupported(grip_ctx *ctx)
{
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "normals (cuda): the GPU normals asked for from a CPU-only build of grip");
}

grip_status grip_normals_cuda_surface(grip_ctx *ctx, grip_surface_cuda *s, uint32_t k, float radius,
                                      const float viewpoint[3])
{
    (void)s; (void)k; (void)radius; (void)viewpoint;
    return normals_cuda_unsupported(ctx);
}

grip_status grip_normals_cuda(grip_ctx *ctx, const float *xyz, size_t n, uint32_t k, const float viewpoint[3],
                              float *out)
{
    (void)xyz; (void)n; (void)k; (void)viewpoint; (void)out;
    return normals_cuda_unsupported(ctx);
}
#else
/* the CUDA build gets this from cuda/normals.cu; keep this translation unit non-empty */
typedef int grip_normals_cuda_absent_unused;
#endif
