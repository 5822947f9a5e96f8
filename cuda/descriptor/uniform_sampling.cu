// uniform_sampling.cu -- uniform-sampling keypoints on the GPU, exactly the CPU twin src/descriptor/uniform_sampling.c
// (see src/descriptor/uniform_sampling_cuda.h).
//
// The CPU keeps, per voxel, the point of smallest score, the first in cloud order among equal scores. Here:
//  1. each point's voxel (i, j, k) and score, with __fmul_rn/__fadd_rn/__fsub_rn in the CPU's order (no FMA);
//  2. the point indices sorted by voxel: two stable radix sorts, by (j, k) and then by (non-finite, i), give the
//     lexicographic order of (non-finite, i, j, k) -- any int voxel coordinate, no hashing -- with each voxel's
//     points in cloud order and the non-finite points last;
//  3. voxel heads flagged and numbered by a scan; each voxel's best as the atomic minimum of
//     (score bits << 32 | point index): scores are >= 1 (or +inf), so their bits order as the floats do, and the
//     index breaks ties toward the first point, as the CPU's strict `<` does;
//  4. the voxels' points sorted ascending.
#include "cuda/core/device.cuh"

extern "C" {
#include "descriptor/uniform_sampling_cuda.h"
}

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <limits.h>
#include <math.h>

namespace {

constexpr int kThreads = 256;
constexpr uint32_t kSignFlip = 0x80000000u; // int -> uint keeping the order

__device__ __forceinline__ bool point_finite(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

// floor(x * inv) per axis in float, as the CPU's voxel_coord; false when one does not fit in an int.
__device__ __forceinline__ bool voxel_of(const float *p, float inv, int ijk[3])
{
    for (int a = 0; a < 3; ++a) {
        const float f = floorf(__fmul_rn(p[a], inv));
        if (!(f >= -2147483648.0f && f < 2147483648.0f))
            return false;
        ijk[a] = (int)f;
    }
    return true;
}

// The CPU's voxel_score: (dx^2 + dz^2) + (dy^2 + 1), dx = x - ((float)i + 0.5) * leaf.
__device__ __forceinline__ float voxel_score(const float *p, const int ijk[3], float leaf)
{
    float d[3];
    for (int a = 0; a < 3; ++a)
        d[a] = __fsub_rn(p[a], __fmul_rn(__fadd_rn((float)ijk[a], 0.5f), leaf));
    return __fadd_rn(__fadd_rn(__fmul_rn(d[0], d[0]), __fmul_rn(d[2], d[2])),
                     __fadd_rn(__fmul_rn(d[1], d[1]), 1.0f));
}

// Pass 1 keys: (j, k) of each finite point, its index as the value; the first point whose voxel does not fit in
// an int goes to *bad.
__global__ void jk_keys_kernel(const float *__restrict__ xyz, uint32_t n, float inv, uint64_t *keys, uint32_t *vals,
                               uint32_t *bad)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float *p = xyz + 3 * (size_t)i;
    int ijk[3] = {0, 0, 0};
    if (point_finite(p) && !voxel_of(p, inv, ijk))
        atomicMin(bad, i);
    keys[i] = (uint64_t)((uint32_t)ijk[1] ^ kSignFlip) << 32 | (uint64_t)((uint32_t)ijk[2] ^ kSignFlip);
    vals[i] = i;
}

// Pass 2 keys, in pass 1's order: (non-finite, i) in 33 bits.
__global__ void i_keys_kernel(const float *__restrict__ xyz, uint32_t n, float inv, const uint32_t *__restrict__ vals,
                              uint64_t *keys)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n)
        return;
    const float *pt = xyz + 3 * (size_t)vals[p];
    int ijk[3] = {0, 0, 0};
    const bool finite = point_finite(pt);
    if (finite)
        voxel_of(pt, inv, ijk);
    keys[p] = (uint64_t)!finite << 32 | (uint64_t)((uint32_t)ijk[0] ^ kSignFlip);
}

// heads[p] = 1 where a voxel's run of finite points starts in the sorted order.
__global__ void heads_kernel(const float *__restrict__ xyz, uint32_t n, float inv, const uint32_t *__restrict__ vals,
                             uint32_t *heads)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n)
        return;
    const float *pt = xyz + 3 * (size_t)vals[p];
    int ijk[3], prev[3];
    if (!point_finite(pt)) {
        heads[p] = 0;
        return;
    }
    voxel_of(pt, inv, ijk);
    if (p == 0) {
        heads[p] = 1;
        return;
    }
    voxel_of(xyz + 3 * (size_t)vals[p - 1], inv, prev); // finite: the non-finite points sort last
    heads[p] = ijk[0] != prev[0] || ijk[1] != prev[1] || ijk[2] != prev[2];
}

// best[voxel] = min over its points of (score bits << 32 | index); voxel = the inclusive scan of heads, less 1.
__global__ void best_kernel(const float *__restrict__ xyz, uint32_t n, float leaf, float inv,
                            const uint32_t *__restrict__ vals, const uint32_t *__restrict__ voxel,
                            unsigned long long *best)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n)
        return;
    const uint32_t id = vals[p];
    const float *pt = xyz + 3 * (size_t)id;
    int ijk[3];
    if (!point_finite(pt))
        return;
    voxel_of(pt, inv, ijk);
    const unsigned long long key = (unsigned long long)__float_as_uint(voxel_score(pt, ijk, leaf)) << 32 | id;
    atomicMin(best + voxel[p] - 1, key);
}

__global__ void best_index_kernel(const unsigned long long *__restrict__ best, uint32_t voxels, uint32_t *idx)
{
    const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < voxels)
        idx[v] = (uint32_t)(best[v] & 0xffffffffu);
}

unsigned blocks_for(uint32_t n)
{
    return (n + kThreads - 1) / kThreads;
}

// Working memory, all from grip_cuda_alloc; allocated and freed by the entry point.
struct sampling_buffers {
    uint64_t *keys[2]; // keys[0] is reused for the voxels' best keys once the sorts are done
    uint32_t *vals[2]; // vals[0] is reused for the voxels' points before their final sort
    uint32_t *voxel;   // the inclusive scan of the voxel heads (flagged in vals[1])
    uint32_t *found;   // [0]: the first point whose voxel does not fit in an int (UINT32_MAX: none); [1]: voxels
    void *tmp;
    size_t tmp_bytes;
};

grip_status buffers_alloc(grip_ctx *ctx, sampling_buffers *b, uint32_t n)
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
    GRIP_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(NULL, sort64, b->keys[0], b->keys[1], b->vals[0],
                                                         b->vals[1], (int)n));
    GRIP_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortKeys(NULL, sort32, b->vals[0], b->vals[1], (int)n));
    GRIP_CUDA_CHECK(ctx, cub::DeviceScan::InclusiveSum(NULL, scan, b->vals[1], b->voxel, (int)n));
    b->tmp_bytes = sort64 > sort32 ? sort64 : sort32;
    b->tmp_bytes = b->tmp_bytes > scan ? b->tmp_bytes : scan;
    st = grip_cuda_alloc(ctx, b->tmp_bytes, &p[6]);
    b->tmp = p[6];
    return st;
}

void buffers_free(sampling_buffers *b)
{
    grip_cuda_free(b->keys[0]);
    grip_cuda_free(b->keys[1]);
    grip_cuda_free(b->vals[0]);
    grip_cuda_free(b->vals[1]);
    grip_cuda_free(b->voxel);
    grip_cuda_free(b->found);
    grip_cuda_free(b->tmp);
}

// The error of a point whose voxel does not fit in an int, in the CPU twin's words.
grip_status report_bad_point(grip_ctx *ctx, const float *xyz, uint32_t bad, float leaf)
{
    float p[3];
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, p, xyz + 3 * (size_t)bad, sizeof p, cudaMemcpyDeviceToHost));
    return grip_fail(ctx, GRIP_EINVAL,
                     "uniform_sampling: point %u (%g, %g, %g) is too far out for leaf %g: its voxel coordinate does "
                     "not fit in an int",
                     bad, (double)p[0], (double)p[1], (double)p[2], (double)leaf);
}

// Steps 1-3: the voxels' best keys in b->keys[0], their number in *voxels.
grip_status find_voxels(grip_ctx *ctx, sampling_buffers *b, const float *xyz, uint32_t n, float leaf,
                        uint32_t *voxels)
{
    const float inv = 1.0f / leaf;
    const unsigned blocks = blocks_for(n);
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemset(b->found, 0xff, sizeof(uint32_t)));
    jk_keys_kernel<<<blocks, kThreads>>>(xyz, n, inv, b->keys[0], b->vals[0], b->found);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceRadixSort::SortPairs(b->tmp, b->tmp_bytes, b->keys[0], b->keys[1],
                                                                b->vals[0], b->vals[1], (int)n));
    i_keys_kernel<<<blocks, kThreads>>>(xyz, n, inv, b->vals[1], b->keys[0]);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceRadixSort::SortPairs(b->tmp, b->tmp_bytes, b->keys[0], b->keys[1],
                                                                b->vals[1], b->vals[0], (int)n, 0, 33));
    heads_kernel<<<blocks, kThreads>>>(xyz, n, inv, b->vals[0], b->vals[1]);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceScan::InclusiveSum(b->tmp, b->tmp_bytes, b->vals[1], b->voxel, (int)n));
    GRIP_CUDA_CHECK_COPY(
        ctx, cudaMemcpyAsync(b->found + 1, b->voxel + (n - 1), sizeof(uint32_t), cudaMemcpyDeviceToDevice, 0));
    uint32_t found[2];
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, found, b->found, sizeof found, cudaMemcpyDeviceToHost));
    if (found[0] != UINT32_MAX)
        return report_bad_point(ctx, xyz, found[0], leaf);
    *voxels = found[1];
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemset(b->keys[0], 0xff, (size_t)*voxels * sizeof(uint64_t)));
    best_kernel<<<blocks, kThreads>>>(xyz, n, leaf, inv, b->vals[0], b->voxel,
                                      reinterpret_cast<unsigned long long *>(b->keys[0]));
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}

// Step 4: the voxels' points, ascending, into idx (voxels entries).
grip_status sorted_points(grip_ctx *ctx, sampling_buffers *b, uint32_t voxels, uint32_t *idx)
{
    if (voxels == 0)
        return GRIP_OK;
    best_index_kernel<<<blocks_for(voxels), kThreads>>>(reinterpret_cast<const unsigned long long *>(b->keys[0]),
                                                        voxels, b->vals[1]);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceRadixSort::SortKeys(b->tmp, b->tmp_bytes, b->vals[1], idx, (int)voxels));
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

} // namespace

extern "C" grip_status grip_uniform_sampling_cuda(grip_ctx *ctx, const grip_surface_cuda *s, float leaf,
                                                  uint32_t **idx_dev, size_t *count)
{
    if (!idx_dev || !count)
        return grip_fail(ctx, GRIP_EINVAL, "uniform_sampling (cuda): idx_dev and count must not be NULL");
    *idx_dev = NULL;
    *count = 0;
    if (!s)
        return grip_fail(ctx, GRIP_EINVAL, "uniform_sampling (cuda): the surface is NULL");
    if (!(leaf > 0.0f) || !isfinite(leaf) || !isfinite(1.0f / leaf))
        return grip_fail(ctx, GRIP_EINVAL, "uniform_sampling (cuda): leaf must be finite and > 0 (got %g)",
                         (double)leaf);
    const grip_surface_cuda_view v = grip_surface_cuda_get_view(s);
    if (v.n > (uint32_t)INT_MAX)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "uniform_sampling (cuda): %u points exceed one sort", v.n);
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(v.device));
    sampling_buffers b = {};
    uint32_t voxels = 0;
    void *idx = NULL;
    grip_status st = v.n > 0 ? buffers_alloc(ctx, &b, v.n) : GRIP_OK;
    if (st == GRIP_OK && v.n > 0)
        st = find_voxels(ctx, &b, v.xyz, v.n, leaf, &voxels);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, (size_t)voxels * sizeof(uint32_t), &idx);
    if (st == GRIP_OK)
        st = sorted_points(ctx, &b, voxels, (uint32_t *)idx);
    buffers_free(&b);
    if (st != GRIP_OK) {
        grip_cuda_free(idx);
        return st;
    }
    *idx_dev = (uint32_t *)idx;
    *count = voxels;
    return GRIP_OK;
}
