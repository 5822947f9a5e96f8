// gather_rows.cu -- a few rows of a device matrix copied into a new, dense one (the mutual filter's reverse search
// takes only the reference rows some query listed: src/match/match_mutual.c).
#include "cuda/check.cuh"

#include <stdint.h>

// One block per gathered row; its threads copy the row's floats.
__global__ void gather_rows_kernel(const float *rows, size_t dim, const uint32_t *row_ids, float *out)
{
    const float *src = rows + (size_t)row_ids[blockIdx.x] * dim;
    float *dst = out + (size_t)blockIdx.x * dim;
    for (size_t c = threadIdx.x; c < dim; c += blockDim.x)
        dst[c] = src[c];
}

extern "C" grip_status grip_cuda_gather_rows(grip_ctx *ctx, const float *rows, size_t dim, const uint32_t *row_ids,
                                             size_t count, float *out)
{
    if (count == 0)
        return GRIP_OK;
    if (count > INT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "gather: %zu rows is more than one launch takes", count);
    void *ids = NULL;
    grip_status st = grip_cuda_alloc(ctx, count * sizeof *row_ids, &ids);
    if (st == GRIP_OK)
        st = grip_cuda_copy_to_device(ctx, ids, row_ids, count * sizeof *row_ids);
    if (st == GRIP_OK) {
        gather_rows_kernel<<<(unsigned)count, 128>>>(rows, dim, (const uint32_t *)ids, out);
        st = grip_cuda_status(ctx, cudaGetLastError(), "gather_rows_kernel", __FILE__, __LINE__);
    }
    grip_cuda_free(ids); // stream-ordered: freed after the kernel has run
    return st;
}
