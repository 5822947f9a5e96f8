// device.cu -- lazy device probing and the context's CUDA state: its own stream-ordered memory pool, and the
// counters of what it copies between host and device. CUDA errors are mapped to grip_status in one place
// (cuda/core/check.cuh); nothing here prints, exits or resets the device.
#include "cuda/core/device.cuh"

#include <time.h>

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

static cudaMemPool_t ctx_pool(const grip_ctx *ctx)
{
    return (cudaMemPool_t)ctx->pool;
}

extern "C" void grip_cuda_ctx_release(grip_ctx *ctx)
{
    if (!ctx->pool)
        return;
    // The frees the stages queued complete first: destroying a pool under queued frees of its blocks crashed the
    // driver inside the next context's first cudaStreamSynchronize (CUDA 13.0, driver 580). They sit on the streams
    // of every thread that used the context (each call's work goes to its thread's default stream), so this waits
    // for the whole device: once, when the context ends, never inside a run. Blocks still allocated (a result the
    // host has not released yet) keep the pool's memory until they are freed: CUDA destroys the pool then.
    (void)cudaSetDevice(ctx->device);
    (void)cudaDeviceSynchronize();
    (void)cudaMemPoolDestroy(ctx_pool(ctx));
    ctx->pool = NULL;
    (void)cudaGetLastError();
}

// The context's own pool on `device`. Freed blocks stay in it (release threshold: all of it): the stages allocate
// per call, and a cudaMalloc costs a driver round trip (tenths of a millisecond) where a pooled allocation costs
// microseconds. Its own, not the device's default pool, so that releasing a context trims only its cache, and its
// counters are its own.
static grip_status pool_create(grip_ctx *ctx, int device)
{
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool;
    GRIP_CUDA_CHECK(ctx, cudaMemPoolCreate(&pool, &props));
    uint64_t keep = UINT64_MAX;
    cudaError_t err = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    if (err != cudaSuccess) {
        (void)cudaMemPoolDestroy(pool);
        return grip_cuda_status(ctx, err, "cudaMemPoolSetAttribute", __FILE__, __LINE__);
    }
    ctx->pool = pool;
    ctx->counters.pool_reserved = 0;
    return GRIP_OK;
}

// The context's device: the ordinal it was created with, else the first one. Chosen once, with the pool.
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
    grip_status st = pool_create(ctx, want);
    if (st != GRIP_OK)
        return st;
    ctx->device = want;
    return GRIP_OK;
}

extern "C" grip_status grip_cuda_ctx_prepare(grip_ctx *ctx)
{
    return select_device(ctx);
}

extern "C" grip_status grip_cuda_sync(grip_ctx *ctx)
{
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

// After an allocation: a pool that reserves more than it did before grew (its reserved memory only shrinks by
// grip_cuda_pool_trim, with the release threshold at its maximum).
static void note_pool_growth(grip_ctx *ctx)
{
    uint64_t reserved = 0;
    if (cudaMemPoolGetAttribute(ctx_pool(ctx), cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    if (reserved > ctx->counters.pool_reserved)
        ctx->counters.pool_grows++;
    ctx->counters.pool_reserved = reserved;
}

extern "C" grip_status grip_cuda_alloc(grip_ctx *ctx, size_t bytes, void **dev)
{
    *dev = NULL;
    grip_status st = select_device(ctx);
    if (st != GRIP_OK)
        return st;
    void *p = NULL;
    // on the calling thread's default stream: ordered with every call the stages make (plugin.h, "Synchrony")
    GRIP_CUDA_CHECK_ALLOC(ctx, cudaMallocFromPoolAsync(&p, bytes ? bytes : 1, ctx_pool(ctx), 0));
    note_pool_growth(ctx);
    *dev = p;
    return GRIP_OK;
}

extern "C" grip_status grip_cuda_upload(grip_ctx *ctx, const void *host, size_t bytes, void **dev, int *device)
{
    *dev = NULL;
    *device = -1;
    void *p = NULL;
    grip_status st = grip_cuda_alloc(ctx, bytes, &p);
    if (st != GRIP_OK)
        return st;
    cudaError_t err = grip_cuda_memcpy(ctx, p, host, bytes, cudaMemcpyHostToDevice);
    if (err != cudaSuccess) {
        grip_cuda_free(p);
        return grip_cuda_status(ctx, err, "cudaMemcpy", __FILE__, __LINE__);
    }
    *dev = p;
    *device = ctx->device;
    return GRIP_OK;
}

// Every pointer grip hands out from grip_cuda_upload/grip_cuda_alloc comes from a context's stream-ordered pool.
extern "C" void grip_cuda_free(void *dev)
{
    if (dev)
        (void)cudaFreeAsync(dev, 0);
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

cudaError_t grip_cuda_memcpy(grip_ctx *ctx, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    const bool to_device = kind == cudaMemcpyHostToDevice, to_host = kind == cudaMemcpyDeviceToHost;
    if (!to_device && !to_host)
        return GRIP_CUDA_COPY(cudaMemcpy(dst, src, bytes, kind));
    cudaError_t err = cudaStreamSynchronize(0);
    if (err != cudaSuccess)
        return err;
    const uint64_t start = now_ns();
    err = GRIP_CUDA_COPY(cudaMemcpy(dst, src, bytes, kind));
    if (err != cudaSuccess)
        return err;
    const uint64_t ns = now_ns() - start;
    grip_ctx_counters *c = &ctx->counters;
    if (to_device) {
        c->h2d_bytes += bytes;
        c->h2d_copies++;
        c->h2d_ns += ns;
    } else {
        c->d2h_bytes += bytes;
        c->d2h_copies++;
        c->d2h_ns += ns;
    }
    return cudaSuccess;
}

extern "C" grip_status grip_cuda_copy_to_host(grip_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, dst, src, bytes, cudaMemcpyDeviceToHost));
    return GRIP_OK;
}

extern "C" grip_status grip_cuda_copy_to_device(grip_ctx *ctx, void *dev, const void *host, size_t bytes)
{
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, dev, host, bytes, cudaMemcpyHostToDevice));
    return GRIP_OK;
}

extern "C" grip_status grip_cuda_copy_on_device(grip_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return GRIP_OK;
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
    return GRIP_OK;
}

extern "C" grip_status grip_cuda_pool_trim(grip_ctx *ctx)
{
    if (!ctx->pool)
        return GRIP_OK;
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0)); // blocks freed on the stream are back in the pool
    GRIP_CUDA_CHECK(ctx, cudaMemPoolTrimTo(ctx_pool(ctx), 0));
    GRIP_CUDA_CHECK(
        ctx, cudaMemPoolGetAttribute(ctx_pool(ctx), cudaMemPoolAttrReservedMemCurrent, &ctx->counters.pool_reserved));
    return GRIP_OK;
}

extern "C" grip_status grip_cuda_pool_usage(grip_ctx *ctx, grip_cuda_pool_figures *out)
{
    *out = grip_cuda_pool_figures{};
    if (!ctx->pool)
        return GRIP_OK;
    const struct {
        cudaMemPoolAttr attr;
        uint64_t *to;
    } figures[] = {{cudaMemPoolAttrReservedMemCurrent, &out->reserved},
                   {cudaMemPoolAttrReservedMemHigh, &out->reserved_high},
                   {cudaMemPoolAttrUsedMemCurrent, &out->used},
                   {cudaMemPoolAttrUsedMemHigh, &out->used_high}};
    for (const auto &f : figures)
        GRIP_CUDA_CHECK(ctx, cudaMemPoolGetAttribute(ctx_pool(ctx), f.attr, f.to));
    return GRIP_OK;
}
