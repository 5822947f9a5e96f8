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
