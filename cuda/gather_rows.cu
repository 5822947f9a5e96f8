// gather_rows.cu -- a few rows of a device matrix copied into a new, dense one (the mutual filter's reverse search
// takes only the reference rows some query listed: src/match/match_mutual.c).
#include "cuda/check.cuh"

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
        st = grip_cuda_status(ctx, cudaGetLastError(), "gather_rows_kernel", __FILE__, __LINE__);
    }
    grip_cuda_free(ids); // stream-ordered: freed after the kernel has run
    return st;
}
