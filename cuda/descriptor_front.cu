// descriptor_front.cu -- the device steps of the descriptor front (see src/stages/descriptor_front_cuda.h).
#include "cuda/check.cuh"

extern "C" {
#include "stages/descriptor_front_cuda.h"
}

namespace {

constexpr int kThreads = 256;

// One thread per float: the rows need not be 16-byte aligned.
__global__ void gather_rows4_kernel(const float *__restrict__ rows, const uint32_t *__restrict__ idx, size_t count,
                                    float *__restrict__ out)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < 4 * count)
        out[e] = rows[4 * (size_t)idx[e / 4] + e % 4];
}

} // namespace

extern "C" grip_status grip_front_cuda_copy(grip_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return GRIP_OK;
    GRIP_CUDA_CHECK(ctx, cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
    return GRIP_OK;
}

extern "C" grip_status grip_front_cuda_gather_normals(grip_ctx *ctx, const float *normals, const uint32_t *idx,
                                                      size_t count, float *out)
{
    if (count == 0)
        return GRIP_OK;
    const size_t blocks = (4 * count + kThreads - 1) / kThreads;
    if (blocks > 0x7fffffffu)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "descriptor (cuda): %zu keypoints exceed one launch", count);
    gather_rows4_kernel<<<(unsigned)blocks, kThreads>>>(normals, idx, count, out);
    GRIP_CUDA_CHECK(ctx, cudaGetLastError());
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}
