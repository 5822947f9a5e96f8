// group_dev.cuh -- typed device allocation and upload for the group kernels (hough3d.cu, gc.cu): thin wrappers of
// grip_cuda_alloc / grip_cuda_copy_to_device (core/cuda_bridge.h); the caller frees with grip_cuda_free.
#ifndef GRIP_CUDA_GROUP_DEV_CUH
#define GRIP_CUDA_GROUP_DEV_CUH

#include <stddef.h>

extern "C" {
#include "core/cuda_bridge.h"
}

// count elements of T on the context's device, uninitialised; *p is NULL after a failure.
template <class T> grip_status grip_group_dev_alloc(grip_ctx *ctx, T **p, size_t count)
{
    void *v = NULL;
    grip_status st = grip_cuda_alloc(ctx, count * sizeof(T), &v);
    *p = (T *)v;
    return st;
}

// A device copy of count elements of host memory.
template <class T> grip_status grip_group_dev_upload(grip_ctx *ctx, T **p, const T *host, size_t count)
{
    grip_status st = grip_group_dev_alloc(ctx, p, count);
    return st ? st : grip_cuda_copy_to_device(ctx, *p, host, count * sizeof(T));
}

#endif
