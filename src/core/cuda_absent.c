/* cuda_absent.c -- the CUDA bridge of a CPU-only build: no device, nothing to free. */
#include "core/cuda_bridge.h"
#include "core/ctx.h"

#ifndef GRIP_HAVE_CUDA
int grip_cuda_device_count(void) { return 0; }
void grip_cuda_ctx_release(grip_ctx *ctx) { (void)ctx; }
grip_status grip_cuda_copy_to_host(grip_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    (void)dst; (void)src; (void)bytes;
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "device memory given to a CPU-only build of grip");
}
grip_status grip_cuda_upload(grip_ctx *ctx, const void *host, size_t bytes, void **dev, int *device)
{
    (void)host; (void)bytes;
    *dev = NULL;
    *device = -1;
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "CUDA memory asked for from a CPU-only build of grip");
}
void grip_cuda_free(void *dev) { (void)dev; }
grip_status grip_cuda_sync(grip_ctx *ctx)
{
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "CUDA work asked for from a CPU-only build of grip");
}
grip_status grip_cuda_alloc(grip_ctx *ctx, size_t bytes, void **dev)
{
    (void)bytes;
    *dev = NULL;
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "CUDA memory asked for from a CPU-only build of grip");
}
grip_status grip_cuda_copy_to_device(grip_ctx *ctx, void *dev, const void *host, size_t bytes)
{
    (void)dev; (void)host; (void)bytes;
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "device memory given to a CPU-only build of grip");
}
grip_status grip_cuda_gather_rows(grip_ctx *ctx, const float *rows, size_t dim, const uint32_t *row_ids, size_t count,
                                  float *out)
{
    (void)rows; (void)dim; (void)row_ids; (void)count; (void)out;
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "device memory given to a CPU-only build of grip");
}
#else
/* the CUDA build gets these from cuda/device.cu; keep this translation unit non-empty */
typedef int grip_cuda_absent_unused;
#endif
