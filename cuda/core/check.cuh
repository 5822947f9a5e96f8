// check.cuh -- the one macro that checks CUDA calls: on failure it records CUDA's own message in the context's
// last error (naming the call and the place) and returns GRIP_ECUDA (GRIP_ENOMEM for allocation failures).
#ifndef GRIP_CUDA_CHECK_CUH
#define GRIP_CUDA_CHECK_CUH

#include <cuda_runtime.h>

extern "C" {
#include "core/ctx.h"
#include "core/cuda_bridge.h"
}

static inline grip_status grip_cuda_status(grip_ctx *ctx, cudaError_t err, const char *call, const char *file,
                                           int line)
{
    if (err == cudaSuccess)
        return GRIP_OK;
    grip_status st = (err == cudaErrorMemoryAllocation) ? GRIP_ENOMEM
                     : (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) ? GRIP_ENODEV
                                                                                          : GRIP_ECUDA;
    if (err == cudaErrorMemoryAllocation)
        (void)cudaGetLastError(); // allocation failures are not sticky: leave the context usable
    return grip_fail(ctx, st, "%s failed at %s:%d: %s", call, file, line, cudaGetErrorString(err));
}

#define GRIP_CUDA_CHECK(ctx, call)                                                                             \
    do {                                                                                                       \
        grip_status grip_st_ = grip_cuda_status((ctx), (call), #call, __FILE__, __LINE__);                     \
        if (grip_st_ != GRIP_OK)                                                                               \
            return grip_st_;                                                                                   \
    } while (0)

#endif
