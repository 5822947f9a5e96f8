// uniform_sampling.cu -- uniform-sampling keypoints on the GPU, exactly the CPU twin src/descriptor/uniform_sampling.c
// (see src/descriptor/uniform_sampling_cuda.h).
//
// The CPU keeps, per voxel, the point of smallest score, the first in cloud order among equal scores. Here:
//  1. each point's voxel (i, j, k) and score, with __fmul_rn/__fadd_rn/__fsub_rn in the CPU's order (no FMA);
//  2. the point indices sorted by voxel (voxel_sort.cuh, shared with the voxel grid): the lexicographic order of
//     (non-finite, i, j, k), each voxel's points in cloud order, the non-finite points last;
//  3. voxel heads flagged and numbered by a scan; each voxel's best as the atomic minimum of
//     (score bits << 32 | point index): scores are >= 1 (or +inf), so their bits order as the floats do, and the
//     index breaks ties toward the first point, as the CPU's strict `<` does;
//  4. the voxels' points sorted ascending.
#include "cuda/core/device.cuh"
#include "cuda/descriptor/voxel_sort.cuh"
#include "cuda/spatial/surface.cuh"

extern "C" {
#include "descriptor/uniform_sampling_cuda.h"
#include "descriptor/voxel_key.h"
}

#include <cub/device/device_radix_sort.cuh>
#include <limits.h>
#include <math.h>

namespace {

constexpr int kThreads = 256;

// The CPU's voxel_score: (dx^2 + dz^2) + (dy^2 + 1), dx = x - ((float)i + 0.5) * leaf.
__device__ __forceinline__ float voxel_score(const float *p, const int32_t ijk[3], float leaf)
{
    float d[3];
    for (int a = 0; a < 3; ++a)
        d[a] = __fsub_rn(p[a], __fmul_rn(__fadd_rn((float)ijk[a], 0.5f), leaf));
    return __fadd_rn(__fadd_rn(__fmul_rn(d[0], d[0]), __fmul_rn(d[2], d[2])),
                     __fadd_rn(__fmul_rn(d[1], d[1]), 1.0f));
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
    int32_t ijk[3];
    if (!grip_voxel_point_finite(pt))
        return;
    grip_voxel_of(pt, inv, ijk);
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

// Steps 1-3: the voxels' best keys in b->keys[0], their number in *voxels.
grip_status find_voxels(grip_ctx *ctx, grip_voxel_sort *b, const float *xyz, uint32_t n, float leaf,
                        const grip_voxel_range *range, uint32_t *voxels)
{
    grip_status st = grip_voxel_sort_run(ctx, b, xyz, n, leaf, range, "uniform_sampling", voxels);
    if (st != GRIP_OK)
        return st;
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemset(b->keys[0], 0xff, (size_t)*voxels * sizeof(uint64_t)));
    best_kernel<<<blocks_for(n), kThreads>>>(xyz, n, leaf, 1.0f / leaf, b->vals[0], b->voxel,
                                             reinterpret_cast<unsigned long long *>(b->keys[0]));
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}

// Step 4: the voxels' points, ascending, into idx (voxels entries).
grip_status sorted_points(grip_ctx *ctx, grip_voxel_sort *b, uint32_t voxels, uint32_t *idx)
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
    grip_status st = grip_voxel_check_leaf(ctx, "uniform_sampling (cuda)", leaf);
    if (st != GRIP_OK)
        return st;
    const grip_surface_cuda_view v = grip_surface_cuda_get_view(s);
    if (v.n > (uint32_t)INT_MAX)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "uniform_sampling (cuda): %u points exceed one sort", v.n);
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(v.device));
    grip_voxel_sort b = {};
    uint32_t voxels = 0;
    void *idx = NULL;
    // the surface's bounds give the voxel range: the sorts read only the bits that vary
    grip_voxel_range range;
    const bool ranged =
        s->bounds.finite > 0 && grip_voxel_range_of_box(s->bounds.lo, s->bounds.hi, 1.0f / leaf, &range);
    st = v.n > 0 ? grip_voxel_sort_alloc(ctx, &b, v.n) : GRIP_OK;
    if (st == GRIP_OK && v.n > 0)
        st = find_voxels(ctx, &b, v.xyz, v.n, leaf, ranged ? &range : NULL, &voxels);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, (size_t)voxels * sizeof(uint32_t), &idx);
    if (st == GRIP_OK)
        st = sorted_points(ctx, &b, voxels, (uint32_t *)idx);
    grip_voxel_sort_free(&b);
    if (st != GRIP_OK) {
        grip_cuda_free(idx);
        return st;
    }
    *idx_dev = (uint32_t *)idx;
    *count = voxels;
    return GRIP_OK;
}
