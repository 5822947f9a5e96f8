// voxel_sort.cu -- see voxel_sort.cuh.
#include "cuda/core/device.cuh"
#include "cuda/descriptor/voxel_sort.cuh"

extern "C" {
#include "descriptor/voxel_key.h"
}

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

namespace {

constexpr int kThreads = 256;
constexpr uint32_t kSignFlip = 0x80000000u; // int -> uint keeping the order

unsigned blocks_for(uint32_t n)
{
    return (n + kThreads - 1) / kThreads;
}

// How a coordinate becomes key bits: (c - lo) in `bits` bits when the range is known; else the whole int, its sign
// flipped so that the unsigned order is the int order (lo 0x80000000 as a uint: the same subtraction).
struct key_layout {
    uint32_t lo[3];
    int bits[3];
};

key_layout layout_of(const grip_voxel_range *range)
{
    key_layout k;
    for (int a = 0; a < 3; ++a) {
        k.lo[a] = range ? (uint32_t)range->lo[a] : kSignFlip;
        const uint32_t span = range ? (uint32_t)range->hi[a] - (uint32_t)range->lo[a] : UINT32_MAX;
        k.bits[a] = span ? 32 - __builtin_clz(span) : 0;
    }
    return k;
}

__device__ __forceinline__ uint64_t key_part(const key_layout &k, const int32_t ijk[3], int a)
{
    return (uint64_t)((uint32_t)ijk[a] - k.lo[a]); // modulo 2^32: (c - lo) for a range, c ^ 0x80000000 without one
}

// Pass 1 keys: (j, k) of each finite point (0 for the others), its index as the value; the first point whose voxel
// does not fit in an int goes to *bad.
__global__ void jk_keys_kernel(const float *__restrict__ xyz, uint32_t n, float inv, key_layout layout, uint64_t *keys,
                               uint32_t *vals, uint32_t *bad)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float *p = xyz + 3 * (size_t)i;
    int32_t ijk[3] = {0, 0, 0};
    const bool finite = grip_voxel_point_finite(p);
    if (finite && grip_voxel_of(p, inv, ijk) != 0)
        atomicMin(bad, i);
    keys[i] = finite ? key_part(layout, ijk, 1) << layout.bits[2] | key_part(layout, ijk, 2) : 0;
    vals[i] = i;
}

// Pass 2 keys, in pass 1's order: (non-finite, i) in bits[0] + 1 bits.
__global__ void i_keys_kernel(const float *__restrict__ xyz, uint32_t n, float inv, key_layout layout,
                              const uint32_t *__restrict__ vals, uint64_t *keys)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n)
        return;
    const float *pt = xyz + 3 * (size_t)vals[p];
    int32_t ijk[3] = {0, 0, 0};
    const bool finite = grip_voxel_point_finite(pt);
    if (finite)
        grip_voxel_of(pt, inv, ijk);
    keys[p] = finite ? key_part(layout, ijk, 0) : (uint64_t)1 << layout.bits[0];
}

// heads[p] = 1 where a voxel's run of finite points starts in the sorted order.
__global__ void heads_kernel(const float *__restrict__ xyz, uint32_t n, float inv, const uint32_t *__restrict__ vals,
                             uint32_t *heads)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n)
        return;
    const float *pt = xyz + 3 * (size_t)vals[p];
    int32_t ijk[3], prev[3];
    if (!grip_voxel_point_finite(pt)) {
        heads[p] = 0;
        return;
    }
    grip_voxel_of(pt, inv, ijk);
    if (p == 0) {
        heads[p] = 1;
        return;
    }
    grip_voxel_of(xyz + 3 * (size_t)vals[p - 1], inv, prev); // finite: the non-finite points sort last
    heads[p] = ijk[0] != prev[0] || ijk[1] != prev[1] || ijk[2] != prev[2];
}

// The error of a point whose voxel does not fit in an int, in the CPU twin's words.
grip_status report_bad_point(grip_ctx *ctx, const char *what, const float *xyz, uint32_t bad, float leaf)
{
    float p[3];
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, p, xyz + 3 * (size_t)bad, sizeof p, cudaMemcpyDeviceToHost));
    return grip_voxel_fail_too_far(ctx, what, bad, p, leaf);
}

} // namespace

grip_status grip_voxel_sort_alloc(grip_ctx *ctx, grip_voxel_sort *b, uint32_t n)
{
    void *p[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    const size_t bytes[6] = {n * sizeof(uint64_t), n * sizeof(uint64_t), n * sizeof(uint32_t),
                             n * sizeof(uint32_t), n * sizeof(uint32_t), 2 * sizeof(uint32_t)};
    grip_status st = GRIP_OK;
    for (int i = 0; i < 6 && st == GRIP_OK; ++i)
        st = grip_cuda_alloc(ctx, bytes[i], &p[i]);
    b->keys[0] = (uint64_t *)p[0];
    b->keys[1] = (uint64_t *)p[1];
    b->vals[0] = (uint32_t *)p[2];
    b->vals[1] = (uint32_t *)p[3];
    b->voxel = (uint32_t *)p[4];
    b->found = (uint32_t *)p[5];
    if (st != GRIP_OK)
        return st;
    // one scratch area for every cub call: the largest they ask for
    size_t sort64 = 0, sort32 = 0, scan = 0;
    GRIP_CUDA_CHECK(
        ctx, cub::DeviceRadixSort::SortPairs(NULL, sort64, b->keys[0], b->keys[1], b->vals[0], b->vals[1], (int)n));
    GRIP_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortKeys(NULL, sort32, b->vals[0], b->vals[1], (int)n));
    GRIP_CUDA_CHECK(ctx, cub::DeviceScan::InclusiveSum(NULL, scan, b->vals[1], b->voxel, (int)n));
    b->tmp_bytes = sort64 > sort32 ? sort64 : sort32;
    b->tmp_bytes = b->tmp_bytes > scan ? b->tmp_bytes : scan;
    st = grip_cuda_alloc(ctx, b->tmp_bytes, &p[6]);
    b->tmp = p[6];
    return st;
}

void grip_voxel_sort_free(grip_voxel_sort *b)
{
    grip_cuda_free(b->keys[0]);
    grip_cuda_free(b->keys[1]);
    grip_cuda_free(b->vals[0]);
    grip_cuda_free(b->vals[1]);
    grip_cuda_free(b->voxel);
    grip_cuda_free(b->found);
    grip_cuda_free(b->tmp);
    *b = grip_voxel_sort{};
}

bool grip_voxel_range_of_box(const float lo[3], const float hi[3], float inv, grip_voxel_range *out)
{
    return grip_voxel_of(lo, inv, out->lo) == 0 && grip_voxel_of(hi, inv, out->hi) == 0;
}

grip_status grip_voxel_sort_run(grip_ctx *ctx, grip_voxel_sort *b, const float *xyz, uint32_t n, float leaf,
                                const grip_voxel_range *range, const char *what, uint32_t *voxels)
{
    const float inv = 1.0f / leaf;
    const unsigned blocks = blocks_for(n);
    const key_layout layout = layout_of(range);
    const int jk_bits = layout.bits[1] + layout.bits[2], i_bits = layout.bits[0] + 1; // at most 64 and 33
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemset(b->found, 0xff, sizeof(uint32_t)));
    jk_keys_kernel<<<blocks, kThreads>>>(xyz, n, inv, layout, b->keys[0], b->vals[0], b->found);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceRadixSort::SortPairs(b->tmp, b->tmp_bytes, b->keys[0], b->keys[1],
                                                                b->vals[0], b->vals[1], (int)n, 0,
                                                                jk_bits > 0 ? jk_bits : 1));
    i_keys_kernel<<<blocks, kThreads>>>(xyz, n, inv, layout, b->vals[1], b->keys[0]);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceRadixSort::SortPairs(b->tmp, b->tmp_bytes, b->keys[0], b->keys[1],
                                                                b->vals[1], b->vals[0], (int)n, 0, i_bits));
    heads_kernel<<<blocks, kThreads>>>(xyz, n, inv, b->vals[0], b->vals[1]);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceScan::InclusiveSum(b->tmp, b->tmp_bytes, b->vals[1], b->voxel, (int)n));
    GRIP_CUDA_CHECK_COPY(
        ctx, cudaMemcpyAsync(b->found + 1, b->voxel + (n - 1), sizeof(uint32_t), cudaMemcpyDeviceToDevice, 0));
    uint32_t found[2];
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, found, b->found, sizeof found, cudaMemcpyDeviceToHost));
    if (found[0] != UINT32_MAX)
        return report_bad_point(ctx, what, xyz, found[0], leaf);
    *voxels = found[1];
    return GRIP_OK;
}
