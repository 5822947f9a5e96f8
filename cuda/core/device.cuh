// device.cuh -- what cuda/core/device.cu offers the other kernels' files beside core/cuda_bridge.h: the copy between
// host and device memory that the context counts, and a typed allocation.
#ifndef GRIP_CUDA_DEVICE_CUH
#define GRIP_CUDA_DEVICE_CUH

#include "cuda/core/check.cuh"

// cudaMemcpy (synchronous, on the calling thread's default stream) through its fault-injection hook, counted in the
// context's counters when it crosses between host and device (grip_plugin.ctx_stats): every such copy in cuda/ is
// made here (tests/cli/device_calls.sh checks it). It first waits for the work queued before it, which the copy
// would wait for anyway, so that the time counted is the copy's own. Returns CUDA's error; check it with
// GRIP_CUDA_CHECK, not GRIP_CUDA_CHECK_COPY (the hook is inside).
cudaError_t grip_cuda_memcpy(grip_ctx *ctx, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);

// count elements of T from the context's pool (grip_cuda_alloc), into *p: NULL after a failure. Free with
// grip_cuda_free.
template <typename T> grip_status grip_cuda_alloc_n(grip_ctx *ctx, T **p, size_t count)
{
    void *v = NULL;
    grip_status st = grip_cuda_alloc(ctx, count * sizeof(T), &v);
    *p = (T *)v;
    return st;
}

#endif
