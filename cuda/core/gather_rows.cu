// gather_rows.cu -- rows of a device matrix copied into a new, dense one: a few descriptor rows (the mutual filter's
// reverse search takes only the reference rows some query listed: src/match/match_mutual.c), and the keypoints'
// normal rows (the descriptor front: src/stages/descriptor_front.c).
#include "cuda/core/check.cuh"

#include <stdint.h>

constexpr unsigned kRowsPerBlock = 4; // a warp per row: rows of descriptors are tens to hundreds of floats

__global__ void gather_rows_kernel(const float *rows, size_t dim, const uint32_t *row_ids, size_t count, float *out)
{
    const size_t i = (size_t)blockIdx.x * kRowsPerBlock + threadIdx.x / 32;
    if (i >= count)
        return;
    const float *src = rows + (size_t)row_ids[i] * dim;
    float *dst = out + i * dim;
    for (size_t c = threadIdx.x % 32; c < dim; c += 32)
        dst[c] = src[c];
}

extern "C" grip_status grip_cuda_gather_rows(grip_ctx *ctx, const float *rows, size_t dim, const uint32_t *row_ids,
                                             size_t count, float *out)
{
    if (count == 0)
        return GRIP_OK;
    if (count / kRowsPerBlock >= INT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "gather: %zu rows is more than this function's one launch takes", count);
    void *ids = NULL;
    grip_status st = grip_cuda_alloc(ctx, count * sizeof *row_ids, &ids);
    if (st == GRIP_OK)
        st = grip_cuda_copy_to_device(ctx, ids, row_ids, count * sizeof *row_ids);
    if (st == GRIP_OK) {
        const unsigned blocks = (unsigned)((count + kRowsPerBlock - 1) / kRowsPerBlock);
        gather_rows_kernel<<<blocks, 32 * kRowsPerBlock>>>(rows, dim, (const uint32_t *)ids, count, out);
        st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "gather_rows_kernel", __FILE__, __LINE__);
    }
    grip_cuda_free(ids); // stream-ordered: freed after the kernel has run
    return st;
}

// One thread per float: the rows need not be 16-byte aligned.
__global__ void gather_rows4_kernel(const float *__restrict__ rows, const uint32_t *__restrict__ idx, size_t count,
                                    float *__restrict__ out)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < 4 * count)
        out[e] = rows[4 * (size_t)idx[e / 4] + e % 4];
}

extern "C" grip_status grip_cuda_gather_rows4(grip_ctx *ctx, const float *rows, const uint32_t *idx, size_t count,
                                              float *out)
{
    constexpr int kThreads = 256;
    if (count == 0)
        return GRIP_OK;
    const size_t blocks = (4 * count + kThreads - 1) / kThreads;
    if (blocks > 0x7fffffffu)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "gather: %zu rows exceed one launch", count);
    gather_rows4_kernel<<<(unsigned)blocks, kThreads>>>(rows, idx, count, out);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}
