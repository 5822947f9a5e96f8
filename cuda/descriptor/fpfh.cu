// fpfh.cu -- FPFH-33 on the GPU, the twin of src/descriptor/fpfh.c (see src/descriptor/fpfh_cuda.h).
//
// Per chunk of keypoints (pfh_chunks.h): their lists; a mark on every surface point in them, an exclusive scan of
// the marks (each marked point's SPFH row) and the marked points in order (the union); the union's own lists, a
// chunk at a time, and its SPFH rows, a warp per point; then the weighted sums, a warp per keypoint.
// Arithmetic: the CPU's (pair_features.h). SPFH votes are counted in shared memory and turned into PCL's float sums
// (grip_repeat_add); the weighted sum runs over the neighbours in list order with a lane per bin, and lanes 0-2
// add each sub-histogram's total in double in the CPU's order (neighbour by neighbour, bin by bin).
#include "cuda/core/check.cuh"
#include "cuda/descriptor/pfh_lists.cuh"

#include "descriptor/pair_features.h"

extern "C" {
#include "descriptor/fpfh_cuda.h"
#include "descriptor/pfh_chunks.h"
}

#include <cub/device/device_scan.cuh>

namespace {

using namespace grip_pfh;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// What the chunks of one call share (device pointers; the union's arrays are those of the current keypoint chunk).
struct fpfh_job {
    const grip_surface_cuda *surface;
    grip_surface_cuda_view view;
    float radius;
    float *out;           // k x 33
    const uint32_t *rows; // n: SPFH row of a marked point (exclusive scan of the marks)
    const uint32_t *points; // u: the marked points, ascending
    float *spfh;          // u x 33
};

// Device buffers of one keypoint chunk; zeroed, then filled by union_alloc / spfh_alloc, freed by buffers_free.
struct chunk_buffers {
    uint32_t *marks, *rows, *points;
    void *scan_temp;
    size_t scan_bytes;
    float *union_xyz, *spfh;
};

__global__ void mark_kernel(const uint32_t *__restrict__ idx, size_t entries, uint32_t *marks)
{
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < entries; e += (size_t)gridDim.x * blockDim.x)
        marks[idx[e]] = 1;
}

__global__ void compact_kernel(const uint32_t *__restrict__ marks, const uint32_t *__restrict__ rows, uint32_t n,
                               uint32_t *points)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && marks[i])
        points[rows[i]] = i;
}

// SPFH of union points [0, count) of a chunk: a warp per point, its list strided over the lanes, itself (by index)
// left out.
__global__ void __launch_bounds__(kThreads) spfh_kernel(lists l, const uint32_t *__restrict__ points, uint32_t count,
                                                        const float *__restrict__ xyz,
                                                        const float *__restrict__ normals, float *spfh)
{
    __shared__ unsigned int counts[kWarps][GRIP_FPFH_DIM];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const uint32_t r = blockIdx.x * kWarps + warp;
    if (r >= count) // the whole warp leaves; the kernel has no block-wide barrier
        return;
    unsigned int *c = counts[warp];
    for (int b = lane; b < GRIP_FPFH_DIM; b += 32)
        c[b] = 0;
    __syncwarp();
    const uint32_t self = points[r];
    const float p[3] = {xyz[3 * (size_t)self], xyz[3 * (size_t)self + 1], xyz[3 * (size_t)self + 2]};
    const float np[3] = {normals[4 * (size_t)self], normals[4 * (size_t)self + 1], normals[4 * (size_t)self + 2]};
    const uint64_t begin = l.offsets[r], size = l.offsets[r + 1] - begin;
    for (uint64_t base = 0; base < size; base += 32) {
        const uint64_t e = begin + base + lane;
        int bins[3] = {-1, -1, -1};
        if (base + lane < size && __ldg(l.idx + e) != self) {
            float q[3], nq[3];
            entry_at(l, e, q, nq);
            grip_spfh_pair_bins(p, np, q, nq, bins);
        }
        for (int f = 0; f < 3; ++f)
            vote(c, bins[f]);
    }
    __syncwarp();
    const float incr = grip_spfh_increment(size);
    float *row = spfh + (size_t)r * GRIP_FPFH_DIM;
    for (int b = lane; b < GRIP_FPFH_DIM; b += 32)
        row[b] = grip_repeat_add(incr, c[b]);
}

// FPFH of keypoints [0, count) of a chunk: a warp per keypoint, lane b sums bin b (lane 0 also bin 32) over the
// neighbours in list order; lanes 0-2 sum the totals of sub-histograms 0-2.
__global__ void __launch_bounds__(kThreads) fpfh_kernel(lists l, const float *__restrict__ keypoints, uint32_t count,
                                                        const uint32_t *__restrict__ rows,
                                                        const float *__restrict__ spfh, float *out)
{
    __shared__ float values[kWarps][GRIP_FPFH_DIM];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const uint32_t q = blockIdx.x * kWarps + warp;
    if (q >= count)
        return;
    float *row = out + (size_t)q * GRIP_FPFH_DIM;
    const uint64_t begin = l.offsets[q], size = l.offsets[q + 1] - begin;
    if (size == 0 || !finite_point(keypoints, q)) {
        for (int b = lane; b < GRIP_FPFH_DIM; b += 32)
            row[b] = NAN;
        return;
    }
    float *v = values[warp];
    float low = 0.0f, top = 0.0f; // bin lane, and bin 32 on lane 0
    double total = 0.0;           // lanes 0-2: sub-histogram lane
    for (uint64_t e = begin; e < begin + size; ++e) {
        const float d2 = __ldg(l.sqdist + e);
        if (d2 == 0.0f) // the keypoint itself and its duplicates (the same for the whole warp)
            continue;
        const float w = grip_fpfh_weight(d2);
        const float *s = spfh + (size_t)__ldg(rows + __ldg(l.idx + e)) * GRIP_FPFH_DIM;
        const float value = GRIP_FMUL(__ldg(s + lane), w);
        low = GRIP_FADD(low, value);
        v[lane] = value;
        if (lane == 0) {
            const float value_top = GRIP_FMUL(__ldg(s + 32), w);
            top = GRIP_FADD(top, value_top);
            v[32] = value_top;
        }
        __syncwarp();
        if (lane < 3)
            for (int b = 0; b < GRIP_FPFH_BINS; ++b)
                total = GRIP_DADD(total, (double)v[lane * GRIP_FPFH_BINS + b]);
        __syncwarp();
    }
    const double scale = grip_fpfh_scale_of(total);
    const double scale_low = __shfl_sync(kFullWarp, scale, lane / GRIP_FPFH_BINS);
    const double scale_top = __shfl_sync(kFullWarp, scale, 2);
    row[lane] = grip_fpfh_scaled(low, scale_low);
    if (lane == 0)
        row[32] = grip_fpfh_scaled(top, scale_top);
}

unsigned blocks_for(size_t items, int per_block)
{
    size_t blocks = (items + per_block - 1) / per_block;
    return (unsigned)(blocks < 1 ? 1 : (blocks > (1u << 30) ? (1u << 30) : blocks));
}

void buffers_free(chunk_buffers *b)
{
    grip_cuda_free(b->marks);
    grip_cuda_free(b->rows);
    grip_cuda_free(b->points);
    grip_cuda_free(b->scan_temp);
    grip_cuda_free(b->union_xyz);
    grip_cuda_free(b->spfh);
    *b = chunk_buffers{};
}

// The marks, their scan and the scan's scratch, for a surface of n points.
grip_status union_alloc(grip_ctx *ctx, uint32_t n, chunk_buffers *b)
{
    grip_status st = grip_cuda_alloc(ctx, (size_t)n * sizeof(uint32_t), (void **)&b->marks);
    if (!st)
        st = grip_cuda_alloc(ctx, (size_t)n * sizeof(uint32_t), (void **)&b->rows);
    if (st)
        return st;
    GRIP_CUDA_CHECK(ctx, cub::DeviceScan::ExclusiveSum(nullptr, b->scan_bytes, b->marks, b->rows, n));
    return grip_cuda_alloc(ctx, b->scan_bytes, &b->scan_temp);
}

// Marks every point in the chunk's lists and numbers them; *u gets their count.
grip_status union_mark(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, uint32_t n, chunk_buffers *b, uint32_t *u)
{
    *u = 0;
    if (n == 0)
        return GRIP_OK;
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(b->marks, 0, (size_t)n * sizeof(uint32_t), 0));
    if (nb->entries > 0)
        mark_kernel<<<blocks_for(nb->entries, kThreads), kThreads>>>(nb->idx, nb->entries, b->marks);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceScan::ExclusiveSum(b->scan_temp, b->scan_bytes, b->marks, b->rows, n));
    uint32_t last[2];
    grip_status st = grip_cuda_copy_to_host(ctx, &last[0], b->rows + (n - 1), sizeof(uint32_t));
    if (!st)
        st = grip_cuda_copy_to_host(ctx, &last[1], b->marks + (n - 1), sizeof(uint32_t));
    if (!st)
        *u = last[0] + last[1];
    return st;
}

// The u union points in order, their coordinates, and room for their SPFH rows.
grip_status union_gather(grip_ctx *ctx, const grip_surface_cuda *s, uint32_t n, uint32_t u, chunk_buffers *b)
{
    grip_status st = grip_cuda_alloc(ctx, (size_t)u * sizeof(uint32_t), (void **)&b->points);
    if (!st)
        st = grip_cuda_alloc(ctx, (size_t)u * 3 * sizeof(float), (void **)&b->union_xyz);
    if (!st)
        st = grip_cuda_alloc(ctx, (size_t)u * GRIP_FPFH_DIM * sizeof(float), (void **)&b->spfh);
    if (st || u == 0)
        return st;
    compact_kernel<<<blocks_for(n, kThreads), kThreads>>>(b->marks, b->rows, n, b->points);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return grip_surface_cuda_gather(ctx, s, b->points, u, b->union_xyz);
}

grip_status spfh_chunk(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *queries, uint32_t first,
                       uint32_t count, void *user)
{
    const fpfh_job *job = (const fpfh_job *)user;
    (void)queries;
    spfh_kernel<<<blocks_for(count, kWarps), kThreads>>>(lists_of(nb), job->points + first, count, job->view.xyz,
                                                         job->view.normals, job->spfh + (size_t)first * GRIP_FPFH_DIM);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

grip_status keypoint_chunk(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *queries, uint32_t first,
                           uint32_t count, void *user)
{
    fpfh_job job = *(const fpfh_job *)user;
    chunk_buffers b = {};
    uint32_t u = 0;
    grip_status st = union_alloc(ctx, job.view.n, &b);
    if (!st)
        st = union_mark(ctx, nb, job.view.n, &b, &u);
    if (!st)
        st = union_gather(ctx, job.surface, job.view.n, u, &b);
    if (!st) {
        job.rows = b.rows;
        job.points = b.points;
        job.spfh = b.spfh;
        st = grip_pfh_for_each_chunk(ctx, job.surface, b.union_xyz, u, job.radius, spfh_chunk, &job);
    }
    if (!st) {
        fpfh_kernel<<<blocks_for(count, kWarps), kThreads>>>(lists_of(nb), queries, count, b.rows, b.spfh,
                                                             job.out + (size_t)first * GRIP_FPFH_DIM);
        grip_status launch = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "fpfh_kernel", __FILE__,
                                              __LINE__);
        st = launch ? launch : grip_cuda_status(ctx, cudaStreamSynchronize(0), "cudaStreamSynchronize", __FILE__,
                                                __LINE__);
    }
    buffers_free(&b);
    return st;
}

} // namespace

extern "C" grip_status grip_fpfh_cuda(grip_ctx *ctx, const grip_surface_cuda *s, const float *keypoint_xyz,
                                      uint32_t k, float radius, float *out)
{
    if (!(radius > 0.0f) || !isfinite(radius))
        return grip_fail(ctx, GRIP_EINVAL, "fpfh (cuda): radius must be finite and > 0 (got %g)", (double)radius);
    if (k == 0)
        return GRIP_OK;
    if (!s || !keypoint_xyz || !out)
        return grip_fail(ctx, GRIP_EINVAL, "fpfh (cuda): surface, keypoints and output must not be NULL");
    fpfh_job job = {};
    job.surface = s;
    job.view = grip_surface_cuda_get_view(s);
    job.radius = radius;
    job.out = out;
    if (!job.view.has_normals)
        return grip_fail(ctx, GRIP_EINVAL, "fpfh (cuda): the surface has no normals");
    return grip_pfh_for_each_chunk(ctx, s, keypoint_xyz, k, radius, keypoint_chunk, &job);
}
