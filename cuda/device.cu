// device.cu -- lazy device probing and the context's CUDA state. CUDA errors are mapped to grip_status in
// one place (cuda/check.cuh); nothing here prints, exits or resets the device.
#include "cuda/check.cuh"

extern "C" int grip_cuda_device_count(void)
{
    int n = 0;
    // cudaGetDeviceCount fails cleanly (cudaErrorNoDevice / cudaErrorInsufficientDriver) without a GPU
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); // clear the sticky-free error so later calls start clean
        return 0;
    }
    return n;
}

extern "C" void grip_cuda_ctx_release(grip_ctx *ctx)
{
    (void)ctx; // no per-context CUDA state yet: streams and pools arrive with the CUDA stages
}

extern "C" grip_status grip_cuda_copy_to_host(grip_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    GRIP_CUDA_CHECK(ctx, cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return GRIP_OK;
}

// The context's device: the ordinal it was created with, else the first one. Chosen once.
static grip_status select_device(grip_ctx *ctx)
{
    if (ctx->device >= 0)
        return GRIP_OK;
    if (grip_ctx_device_count(ctx) <= 0)
        return grip_fail(ctx, GRIP_ENODEV, "no usable CUDA device");
    int want = ctx->opts.device_ordinal >= 0 ? ctx->opts.device_ordinal : 0;
    if (want >= ctx->device_count)
        return grip_fail(ctx, GRIP_ENODEV, "CUDA device %d asked for, but only %d exist", want, ctx->device_count);
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(want));
    ctx->device = want;
    return GRIP_OK;
}

extern "C" grip_status grip_cuda_upload(grip_ctx *ctx, const void *host, size_t bytes, void **dev, int *device)
{
    *dev = NULL;
    *device = -1;
    grip_status st = select_device(ctx);
    if (st != GRIP_OK)
        return st;
    void *p = NULL;
    GRIP_CUDA_CHECK(ctx, cudaMalloc(&p, bytes ? bytes : 1));
    cudaError_t err = cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
    if (err != cudaSuccess) {
        cudaFree(p);
        return grip_cuda_status(ctx, err, "cudaMemcpy", __FILE__, __LINE__);
    }
    *dev = p;
    *device = ctx->device;
    return GRIP_OK;
}

extern "C" void grip_cuda_free(void *dev)
{
    if (dev)
        (void)cudaFree(dev);
}

extern "C" grip_status grip_cuda_copy_to_device(grip_ctx *ctx, void *dev, const void *host, size_t bytes)
{
    GRIP_CUDA_CHECK(ctx, cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
    return GRIP_OK;
}
