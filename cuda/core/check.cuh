// check.cuh -- the one macro that checks CUDA calls: on failure it records CUDA's own message in the context's
// last error (naming the call and the place) and returns GRIP_ECUDA (GRIP_ENOMEM for allocation failures); and its
// variants for allocations, copies and launches, which carry the fault-injection hooks.
#ifndef GRIP_CUDA_CHECK_CUH
#define GRIP_CUDA_CHECK_CUH

#include <cuda_runtime.h>

extern "C" {
#include "core/ctx.h"
#include "core/cuda_bridge.h"
#include "core/fault.h"
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

// GRIP_CUDA_CHECK(ctx, call): returns from the calling function with the mapped status when `call` fails.
#define GRIP_CUDA_CHECK_AS_(ctx, err, text)                                                                    \
    do {                                                                                                       \
        grip_status grip_st_ = grip_cuda_status((ctx), (err), (text), __FILE__, __LINE__);                     \
        if (grip_st_ != GRIP_OK)                                                                               \
            return grip_st_;                                                                                   \
    } while (0)
#define GRIP_CUDA_CHECK(ctx, call) GRIP_CUDA_CHECK_AS_(ctx, call, #call)

// Fault injection's hooks (core/fault.h): every device allocation, copy or fill, and every kernel launch passes
// one, so that a test can make any one of them fail. Without GRIP_FAULT_INJECTION, GRIP_FAULT_HIT is the constant
// 0 and each is the plain call. A faulted allocation or copy is not made, as a real failure makes none; a launch
// has already happened when its check runs, so only its error is replaced.
//  - GRIP_CUDA_ALLOC(call): cudaMalloc, cudaMallocAsync; fails with cudaErrorMemoryAllocation (GRIP_ENOMEM)
//  - GRIP_CUDA_COPY(call): cudaMemcpy*, cudaMemset*; fails with cudaErrorInvalidValue (GRIP_ECUDA)
//  - GRIP_CUDA_LAUNCH(call): the error of a launch (cudaGetLastError() right after `<<<...>>>`, a CUB algorithm, a
//    function that launches and returns the launch's error); fails with cudaErrorLaunchOutOfResources (GRIP_ECUDA)
// GRIP_CUDA_CHECK_ALLOC, _COPY and _LAUNCH are GRIP_CUDA_CHECK through them (the error text names the call as
// written). tests/cli/fault_hooks.sh finds any call that bypasses them.
#define GRIP_CUDA_ALLOC(call) (GRIP_FAULT_HIT(GRIP_FAULT_DEVICE_ALLOC) ? cudaErrorMemoryAllocation : (call))
#define GRIP_CUDA_COPY(call) (GRIP_FAULT_HIT(GRIP_FAULT_COPY) ? cudaErrorInvalidValue : (call))
#define GRIP_CUDA_LAUNCH(call) grip_cuda_launch_hook(call)
#define GRIP_CUDA_CHECK_ALLOC(ctx, call) GRIP_CUDA_CHECK_AS_(ctx, GRIP_CUDA_ALLOC(call), #call)
#define GRIP_CUDA_CHECK_COPY(ctx, call) GRIP_CUDA_CHECK_AS_(ctx, GRIP_CUDA_COPY(call), #call)
#define GRIP_CUDA_CHECK_LAUNCH(ctx, call) GRIP_CUDA_CHECK_AS_(ctx, GRIP_CUDA_LAUNCH(call), #call)
// after `kernel<<<...>>>(...)`, or several launches in a row
#define GRIP_CUDA_CHECK_LAUNCHED(ctx) GRIP_CUDA_CHECK_LAUNCH(ctx, cudaGetLastError())

static inline cudaError_t grip_cuda_launch_hook(cudaError_t err)
{
    return GRIP_FAULT_HIT(GRIP_FAULT_LAUNCH) ? cudaErrorLaunchOutOfResources : err;
}

#endif
