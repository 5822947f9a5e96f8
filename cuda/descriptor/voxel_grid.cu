// voxel_grid.cu -- the voxel grid on the GPU, exactly the CPU twin src/descriptor/voxel_grid.c (see
// src/descriptor/voxel_grid_cuda.h):
//  1. the points sorted by voxel (voxel_sort.cuh, shared with uniform sampling): (non-finite, i, j, k, index), the
//     CPU twin's qsort order, and the voxels numbered by a scan of their heads;
//  2. one kernel writes order, start and voxel_of from the sorted positions;
//  3. centroids and mean normals: one thread per voxel summing its points in order (voxel_grid_math.h), spread: one
//     thread per point. No atomics: every output has one writer, so the result does not depend on scheduling.
#include "cuda/core/device.cuh"
#include "cuda/descriptor/voxel_sort.cuh"

extern "C" {
#include "descriptor/voxel_grid_cuda.h"
#include "descriptor/voxel_grid_math.h"
#include "descriptor/voxel_key.h"
}

#include <limits.h>
#include <math.h>

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(size_t n)
{
    return (unsigned)((n + kThreads - 1) / kThreads);
}

// For sorted position p: order[p] = its point and voxel_of[point] = its voxel (finite points, which come first);
// start[v] = p at each voxel's head, start[voxels] = the number of finite points at the last finite position;
// voxel_of = GRIP_VOXEL_NONE for the non-finite points.
__global__ void number_kernel(const float *__restrict__ xyz, uint32_t n, const uint32_t *__restrict__ sorted,
                              const uint32_t *__restrict__ voxel, uint32_t *order, uint32_t *start, uint32_t *voxel_of)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n)
        return;
    const uint32_t id = sorted[p];
    if (!grip_voxel_point_finite(xyz + 3 * (size_t)id)) {
        voxel_of[id] = GRIP_VOXEL_NONE;
        return;
    }
    const uint32_t v = voxel[p] - 1;
    order[p] = id;
    voxel_of[id] = v;
    if (p == 0 || voxel[p - 1] != voxel[p])
        start[v] = p;
    if (p + 1 == n || !grip_voxel_point_finite(xyz + 3 * (size_t)sorted[p + 1]))
        start[v + 1] = p + 1;
}

__global__ void centroids_kernel(const uint32_t *__restrict__ order, const uint32_t *__restrict__ start,
                                 uint32_t voxels, const float *__restrict__ xyz, float *out)
{
    const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < voxels)
        grip_voxel_grid_centroid_of(order, start[v], start[v + 1], xyz, out + 3 * (size_t)v);
}

__global__ void mean_normals_kernel(const uint32_t *__restrict__ order, const uint32_t *__restrict__ start,
                                    uint32_t voxels, const float *__restrict__ normals, float *out)
{
    const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < voxels)
        grip_voxel_grid_mean_normal_of(order, start[v], start[v + 1], normals, out + 4 * (size_t)v);
}

__global__ void spread_kernel(const uint32_t *__restrict__ voxel_of, uint32_t n, const float4 *__restrict__ rows,
                              float4 *out)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint32_t v = voxel_of[i];
    out[i] = v == GRIP_VOXEL_NONE ? make_float4(NAN, NAN, NAN, NAN) : rows[v];
}

// Steps 1 and 2 into grid (its n set, its arrays allocated), with the sort's buffers b.
grip_status sort_and_number(grip_ctx *ctx, grip_voxel_sort *b, const char *what, const float *xyz, float leaf,
                            grip_voxel_grid *grid)
{
    const uint32_t n = (uint32_t)grid->n;
    uint32_t voxels = 0, finite = 0;
    grip_status st = grip_voxel_sort_run(ctx, b, xyz, n, leaf, NULL, what, &voxels);
    if (st != GRIP_OK)
        return st;
    number_kernel<<<blocks_for(n), kThreads>>>(xyz, n, b->vals[0], b->voxel, grid->order, grid->start, grid->voxel_of);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, &finite, grid->start + voxels, sizeof finite, cudaMemcpyDeviceToHost));
    grid->voxels = voxels;
    grid->finite = finite;
    return GRIP_OK;
}

// The whole build into grid (its n set, its arrays allocated). start[0] is 0 before the kernels: a cloud without a
// finite point has no voxel and start = {0}.
grip_status build_run(grip_ctx *ctx, const char *what, const float *xyz, float leaf, grip_voxel_grid *grid)
{
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(grid->start, 0, sizeof(uint32_t), 0));
    if (grid->n == 0)
        return GRIP_OK;
    grip_voxel_sort b = {};
    grip_status st = grip_voxel_sort_alloc(ctx, &b, (uint32_t)grid->n);
    if (st == GRIP_OK)
        st = sort_and_number(ctx, &b, what, xyz, leaf, grid);
    grip_voxel_sort_free(&b);
    return st;
}

} // namespace

extern "C" grip_status grip_voxel_grid_cuda_build(grip_ctx *ctx, const char *what, const float *xyz_dev, size_t n,
                                                  float leaf, grip_voxel_grid *grid)
{
    *grid = grip_voxel_grid{};
    grip_status st = grip_voxel_check_leaf(ctx, what, leaf);
    if (st != GRIP_OK)
        return st;
    if (!xyz_dev && n > 0)
        return grip_fail(ctx, GRIP_EINVAL, "%s (cuda): the cloud is NULL with %zu points", what, n);
    if (n > (size_t)INT_MAX)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "%s (cuda): %zu points exceed one sort", what, n);
    void *p[3] = {NULL, NULL, NULL};
    const size_t bytes[3] = {(n ? n : 1) * sizeof(uint32_t), (n + 1) * sizeof(uint32_t),
                             (n ? n : 1) * sizeof(uint32_t)};
    for (int i = 0; i < 3 && st == GRIP_OK; ++i)
        st = grip_cuda_alloc(ctx, bytes[i], &p[i]);
    grid->n = n;
    grid->order = (uint32_t *)p[0];
    grid->start = (uint32_t *)p[1];
    grid->voxel_of = (uint32_t *)p[2];
    if (st == GRIP_OK)
        st = build_run(ctx, what, xyz_dev, leaf, grid);
    if (st != GRIP_OK)
        grip_voxel_grid_cuda_free(grid);
    return st;
}

extern "C" grip_status grip_voxel_grid_cuda_centroids(grip_ctx *ctx, const grip_voxel_grid *grid, const float *xyz_dev,
                                                      float *out_dev)
{
    if (grid->voxels == 0)
        return GRIP_OK;
    centroids_kernel<<<blocks_for(grid->voxels), kThreads>>>(grid->order, grid->start, (uint32_t)grid->voxels, xyz_dev,
                                                             out_dev);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

extern "C" grip_status grip_voxel_grid_cuda_mean_normals(grip_ctx *ctx, const grip_voxel_grid *grid,
                                                         const float *normals_dev, float *out_dev)
{
    if (grid->voxels == 0)
        return GRIP_OK;
    mean_normals_kernel<<<blocks_for(grid->voxels), kThreads>>>(grid->order, grid->start, (uint32_t)grid->voxels,
                                                                normals_dev, out_dev);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

extern "C" grip_status grip_voxel_grid_cuda_spread(grip_ctx *ctx, const grip_voxel_grid *grid, const float *rows_dev,
                                                   float *out_dev)
{
    if (grid->n == 0)
        return GRIP_OK;
    spread_kernel<<<blocks_for(grid->n), kThreads>>>(grid->voxel_of, (uint32_t)grid->n, (const float4 *)rows_dev,
                                                     (float4 *)out_dev);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

extern "C" void grip_voxel_grid_cuda_free(grip_voxel_grid *grid)
{
    grip_cuda_free(grid->order);
    grip_cuda_free(grid->start);
    grip_cuda_free(grid->voxel_of);
    *grid = grip_voxel_grid{};
}
