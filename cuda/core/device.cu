// device.cu -- lazy device probing and the context's CUDA state. CUDA errors are mapped to grip_status in
// one place (cuda/core/check.cuh); nothing here prints, exits or resets the device.
#include "cuda/core/check.cuh"

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
    if (ctx->device < 0)
        return;
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, ctx->device) == cudaSuccess)
        (void)cudaMemPoolTrimTo(pool, 0); // give the cached blocks back; nothing of ours is live any more
    (void)cudaGetLastError();
}

extern "C" grip_status grip_cuda_copy_to_host(grip_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return GRIP_OK;
}

// The context's device: the ordinal it was created with, else the first one. Chosen once.
static grip_status select_device(grip_ctx *ctx)
{
    if (ctx->device >= 0) { // made current again: the thread may have used another context's device since
        GRIP_CUDA_CHECK(ctx, cudaSetDevice(ctx->device));
        return GRIP_OK;
    }
    if (grip_ctx_device_count(ctx) <= 0)
        return grip_fail(ctx, GRIP_ENODEV, "no usable CUDA device");
    int want = ctx->opts.device_ordinal >= 0 ? ctx->opts.device_ordinal : 0;
    if (want >= ctx->device_count)
        return grip_fail(ctx, GRIP_ENODEV, "CUDA device %d asked for, but only %d exist", want, ctx->device_count);
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(want));
    // Keep freed blocks in the device's pool: the stages allocate per call, and a cudaMalloc costs a driver round
    // trip (tenths of a millisecond) where a pooled cudaMallocAsync costs microseconds. Trimmed at context release.
    cudaMemPool_t pool;
    GRIP_CUDA_CHECK(ctx, cudaDeviceGetDefaultMemPool(&pool, want));
    uint64_t keep = UINT64_MAX;
    GRIP_CUDA_CHECK(ctx, cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    ctx->device = want;
    return GRIP_OK;
}

extern "C" grip_status grip_cuda_sync(grip_ctx *ctx)
{
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

extern "C" grip_status grip_cuda_alloc(grip_ctx *ctx, size_t bytes, void **dev)
{
    *dev = NULL;
    grip_status st = select_device(ctx);
    if (st != GRIP_OK)
        return st;
    void *p = NULL;
    // on the legacy default stream: ordered with every synchronous call the stages make
    GRIP_CUDA_CHECK_ALLOC(ctx, cudaMallocAsync(&p, bytes ? bytes : 1, 0));
    *dev = p;
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
    GRIP_CUDA_CHECK_ALLOC(ctx, cudaMallocAsync(&p, bytes ? bytes : 1, 0));
    cudaError_t err = GRIP_CUDA_COPY(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice));
    if (err != cudaSuccess) {
        (void)cudaFreeAsync(p, 0);
        return grip_cuda_status(ctx, err, "cudaMemcpy", __FILE__, __LINE__);
    }
    *dev = p;
    *device = ctx->device;
    return GRIP_OK;
}

// Every pointer grip hands out from grip_cuda_upload/grip_cuda_alloc comes from the stream-ordered pool.
extern "C" void grip_cuda_free(void *dev)
{
    if (dev)
        (void)cudaFreeAsync(dev, 0);
}

extern "C" grip_status grip_cuda_copy_to_device(grip_ctx *ctx, void *dev, const void *host, size_t bytes)
{
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
    return GRIP_OK;
}

extern "C" grip_status grip_cuda_copy_on_device(grip_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return GRIP_OK;
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
    return GRIP_OK;
}
