// grid3d.cu -- building the device uniform grid of grid3d.cuh: bounds, planning, cell keys, the radix sort by
// cell, the per-cell starts (a histogram and its exclusive scan), the points re-laid in cell order.
#include "cuda/core/device.cuh"
#include "cuda/spatial/grid3d.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <float.h>
#include <math.h>
#include <string.h>

namespace {

constexpr int kThreads = 256;

// Floats mapped to ints of the same order, so that atomicMin/atomicMax on ints order floats.
__device__ __forceinline__ int float_order(float f)
{
    const int i = __float_as_int(f);
    return i >= 0 ? i : i ^ 0x7fffffff;
}

float order_float(int i)
{
    const int bits = i >= 0 ? i : i ^ 0x7fffffff;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

int host_float_order(float f)
{
    int i;
    memcpy(&i, &f, sizeof i);
    return i >= 0 ? i : i ^ 0x7fffffff;
}

struct bounds_acc {
    int lo[3], hi[3];
    unsigned int finite;
};

__device__ void warp_bounds_reduce(float lo[3], float hi[3], unsigned int *finite)
{
    for (int off = 16; off > 0; off >>= 1) {
        *finite += __shfl_xor_sync(0xffffffffu, *finite, off);
        for (int a = 0; a < 3; ++a) {
            lo[a] = fminf(lo[a], __shfl_xor_sync(0xffffffffu, lo[a], off));
            hi[a] = fmaxf(hi[a], __shfl_xor_sync(0xffffffffu, hi[a], off));
        }
    }
}

// The bounds and count of the finite points, into acc (initialised to an empty box by the caller).
__global__ void bounds_kernel(const float *__restrict__ xyz, uint32_t n, bounds_acc *acc)
{
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    unsigned int finite = 0;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float p[3] = {xyz[3 * (size_t)i], xyz[3 * (size_t)i + 1], xyz[3 * (size_t)i + 2]};
        if (!grip_finite3(p[0], p[1], p[2]))
            continue;
        ++finite;
        for (int a = 0; a < 3; ++a) {
            lo[a] = fminf(lo[a], p[a]);
            hi[a] = fmaxf(hi[a], p[a]);
        }
    }
    // the block's warps reduce by shuffles, their results in shared memory, one set of atomics a block
    __shared__ float block_lo[3][kThreads / 32], block_hi[3][kThreads / 32];
    __shared__ unsigned int block_finite[kThreads / 32];
    warp_bounds_reduce(lo, hi, &finite);
    const unsigned int warp = threadIdx.x / 32, warps = blockDim.x / 32;
    if ((threadIdx.x & 31) == 0) {
        block_finite[warp] = finite;
        for (int a = 0; a < 3; ++a) {
            block_lo[a][warp] = lo[a];
            block_hi[a][warp] = hi[a];
        }
    }
    __syncthreads();
    if (warp != 0)
        return;
    const unsigned int lane = threadIdx.x & 31;
    finite = lane < warps ? block_finite[lane] : 0;
    for (int a = 0; a < 3; ++a) {
        lo[a] = lane < warps ? block_lo[a][lane] : INFINITY;
        hi[a] = lane < warps ? block_hi[a][lane] : -INFINITY;
    }
    warp_bounds_reduce(lo, hi, &finite);
    if (lane != 0 || finite == 0)
        return;
    atomicAdd(&acc->finite, finite);
    for (int a = 0; a < 3; ++a) {
        atomicMin(&acc->lo[a], float_order(lo[a]));
        atomicMax(&acc->hi[a], float_order(hi[a]));
    }
}

// Each point's cell key (non-finite points get the key `cells`, which sorts last), its index, and the per-cell
// counts in `count` (zeroed by the caller).
__global__ void cell_keys_kernel(const float *__restrict__ xyz, uint32_t n, grip_grid3d_geom g, uint32_t cells,
                                 uint32_t *keys, uint32_t *ids, uint32_t *count)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float x = xyz[3 * (size_t)i], y = xyz[3 * (size_t)i + 1], z = xyz[3 * (size_t)i + 2];
    uint32_t key = cells;
    if (grip_finite3(x, y, z)) {
        key = grip_grid3d_key(g, grip_grid3d_coord(g, x, 0), grip_grid3d_coord(g, y, 1), grip_grid3d_coord(g, z, 2));
        atomicAdd(&count[key], 1u);
    }
    keys[i] = key;
    ids[i] = i;
}

__global__ void relay_kernel(const float *__restrict__ xyz, const uint32_t *__restrict__ ids, uint32_t finite,
                             float4 *pts)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= finite)
        return;
    const uint32_t id = ids[i];
    pts[i] = make_float4(xyz[3 * (size_t)id], xyz[3 * (size_t)id + 1], xyz[3 * (size_t)id + 2], __uint_as_float(id));
}

__global__ void occupied_kernel(const uint32_t *__restrict__ cell_start, size_t cells, unsigned long long *occupied)
{
    unsigned long long mine = 0;
    for (size_t c = blockIdx.x * (size_t)blockDim.x + threadIdx.x; c < cells; c += (size_t)gridDim.x * blockDim.x)
        mine += cell_start[c + 1] > cell_start[c];
    for (int off = 16; off > 0; off >>= 1)
        mine += __shfl_xor_sync(0xffffffffu, mine, off);
    if ((threadIdx.x & 31) == 0 && mine)
        atomicAdd(occupied, mine);
}

unsigned int blocks_for(size_t n)
{
    return (unsigned int)((n + kThreads - 1) / kThreads);
}

// Blocks for a grid-stride pass: enough to fill the device, no more than the work.
unsigned int stride_blocks(size_t n)
{
    const size_t want = (n + kThreads - 1) / kThreads;
    return (unsigned int)(want < 1024 ? (want ? want : 1) : 1024);
}

int bits_for(size_t v)
{
    int b = 1;
    while (b < 32 && ((size_t)1 << b) <= v)
        ++b;
    return b;
}

// The build's scratch: keys and ids twice (the sort's double buffer) and the sort's temporary storage.
struct build_scratch {
    uint32_t *keys[2], *ids[2];
    void *sort_tmp;
    size_t sort_bytes, scan_bytes;
};

void scratch_free(build_scratch *s)
{
    for (int t = 0; t < 2; ++t) {
        grip_cuda_free(s->keys[t]);
        grip_cuda_free(s->ids[t]);
    }
    grip_cuda_free(s->sort_tmp);
}

grip_status scratch_alloc(grip_ctx *ctx, uint32_t n, size_t cells, build_scratch *s, grip_grid3d *out)
{
    GRIP_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(NULL, s->sort_bytes, s->keys[0], s->keys[1], s->ids[0],
                                                         s->ids[1], (int)n, 0, bits_for(cells)));
    GRIP_CUDA_CHECK(ctx, cub::DeviceScan::ExclusiveSum(NULL, s->scan_bytes, out->cell_start, out->cell_start,
                                                       cells + 1));
    void **slots[] = {(void **)&s->keys[0], (void **)&s->keys[1], (void **)&s->ids[0], (void **)&s->ids[1]};
    for (void **slot : slots) {
        grip_status st = grip_cuda_alloc(ctx, (size_t)n * sizeof(uint32_t), slot);
        if (st != GRIP_OK)
            return st;
    }
    grip_status st = grip_cuda_alloc(ctx, s->sort_bytes > s->scan_bytes ? s->sort_bytes : s->scan_bytes, &s->sort_tmp);
    if (st != GRIP_OK)
        return st;
    st = grip_cuda_alloc(ctx, (cells + 1) * sizeof(uint32_t), (void **)&out->cell_start);
    if (st != GRIP_OK)
        return st;
    return grip_cuda_alloc(ctx, (size_t)out->finite * sizeof(float4), (void **)&out->pts);
}

grip_status build_run(grip_ctx *ctx, const float *xyz, uint32_t n, build_scratch *s, grip_grid3d *out)
{
    const size_t cells = out->cells;
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(out->cell_start, 0, (cells + 1) * sizeof(uint32_t), 0));
    cell_keys_kernel<<<blocks_for(n), kThreads>>>(xyz, n, out->geom, (uint32_t)cells, s->keys[0], s->ids[0],
                                                  out->cell_start);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceRadixSort::SortPairs(s->sort_tmp, s->sort_bytes, s->keys[0], s->keys[1],
                                                                s->ids[0], s->ids[1], (int)n, 0, bits_for(cells)));
    GRIP_CUDA_CHECK_LAUNCH(
        ctx, cub::DeviceScan::ExclusiveSum(s->sort_tmp, s->scan_bytes, out->cell_start, out->cell_start, cells + 1));
    if (out->finite > 0) {
        relay_kernel<<<blocks_for(out->finite), kThreads>>>(xyz, s->ids[1], out->finite, out->pts);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
    }
    return GRIP_OK;
}

grip_status count_occupied(grip_ctx *ctx, const grip_grid3d &grid, unsigned long long *scratch,
                           unsigned long long *occupied)
{
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(scratch, 0, sizeof *scratch, 0));
    occupied_kernel<<<stride_blocks(grid.cells), kThreads>>>(grid.cell_start, grid.cells, scratch);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, occupied, scratch, sizeof *occupied, cudaMemcpyDeviceToHost));
    return GRIP_OK;
}

grip_status measure_run(grip_ctx *ctx, const float *xyz, uint32_t n, bounds_acc *dev, grip_grid3d_bounds *out)
{
    bounds_acc acc;
    for (int a = 0; a < 3; ++a) {
        acc.lo[a] = host_float_order(INFINITY);
        acc.hi[a] = host_float_order(-INFINITY);
    }
    acc.finite = 0;
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, dev, &acc, sizeof acc, cudaMemcpyHostToDevice));
    if (n > 0) {
        bounds_kernel<<<stride_blocks(n), kThreads>>>(xyz, n, dev);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
    }
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, &acc, dev, sizeof acc, cudaMemcpyDeviceToHost));
    for (int a = 0; a < 3; ++a) {
        out->lo[a] = order_float(acc.lo[a]);
        out->hi[a] = order_float(acc.hi[a]);
    }
    out->finite = acc.finite;
    return GRIP_OK;
}

} // namespace

grip_status grip_grid3d_measure(grip_ctx *ctx, const float *xyz, uint32_t n, grip_grid3d_bounds *out)
{
    void *dev = NULL;
    grip_status st = grip_cuda_alloc(ctx, sizeof(bounds_acc), &dev);
    if (st == GRIP_OK)
        st = measure_run(ctx, xyz, n, (bounds_acc *)dev, out);
    grip_cuda_free(dev);
    return st;
}

grip_grid3d_geom grip_grid3d_plan(const grip_grid3d_bounds &b, double cell, size_t max_cells)
{
    double ext[3], big = 0.0;
    for (int a = 0; a < 3; ++a) {
        ext[a] = (double)b.hi[a] - (double)b.lo[a];
        big = fmax(big, ext[a]);
    }
    if (!(cell > 0.0) || !isfinite(cell))
        cell = big > 0.0 ? big : 1.0;
    if (max_cells == 0 || max_cells > GRIP_GRID3D_MAX_CELLS)
        max_cells = GRIP_GRID3D_MAX_CELLS;
    // few enough cells a side that float cell coordinates are exact to 0.002 (grid3d.cuh's rounding note)
    for (;; cell *= 1.25) {
        double cells = 1.0, widest = 0.0;
        for (int a = 0; a < 3; ++a) {
            cells *= floor(ext[a] / cell) + 1.0;
            widest = fmax(widest, floor(ext[a] / cell) + 1.0);
        }
        if (cells <= (double)max_cells && widest <= (double)GRIP_GRID3D_MAX_SIDE)
            break;
    }
    grip_grid3d_geom g;
    for (int a = 0; a < 3; ++a) {
        g.lo[a] = b.lo[a];
        g.dims[a] = (int)(floor(ext[a] / cell) + 1.0);
    }
    g.cell = (float)cell;
    g.inv_cell = (float)(1.0 / cell);
    return g;
}

void grip_grid3d_free(grip_grid3d *grid)
{
    grip_cuda_free(grid->cell_start);
    grip_cuda_free(grid->pts);
    *grid = grip_grid3d{};
}

grip_status grip_grid3d_build(grip_ctx *ctx, const float *xyz, uint32_t n, const grip_grid3d_bounds &b,
                              const grip_grid3d_geom &g, grip_grid3d *out)
{
    *out = grip_grid3d{};
    out->geom = g;
    out->cells = (size_t)g.dims[0] * (size_t)g.dims[1] * (size_t)g.dims[2];
    out->finite = b.finite;
    build_scratch s = {};
    grip_status st = scratch_alloc(ctx, n, out->cells, &s, out);
    if (st == GRIP_OK)
        st = build_run(ctx, xyz, n, &s, out);
    scratch_free(&s);
    if (st != GRIP_OK)
        grip_grid3d_free(out);
    return st;
}

grip_status grip_grid3d_build_for_knn(grip_ctx *ctx, const float *xyz, uint32_t n, const grip_grid3d_bounds &b,
                                      grip_grid3d *out)
{
    double ext[3], big = 0.0, vol = 1.0;
    for (int a = 0; a < 3; ++a) {
        ext[a] = (double)b.hi[a] - (double)b.lo[a];
        big = fmax(big, ext[a]);
    }
    for (int a = 0; a < 3; ++a)
        vol *= fmax(ext[a], big * 1e-3); // a flat or linear cloud still gets a volume
    // cell_start costs 4 bytes a cell: stay within 64 cells a point
    const size_t max_cells = 64 * (size_t)b.finite + 65536;
    grip_grid3d_geom g = grip_grid3d_plan(b, cbrt(vol / (double)b.finite), max_cells);
    grip_status st = grip_grid3d_build(ctx, xyz, n, b, g, out);
    if (st != GRIP_OK)
        return st;
    void *scratch = NULL;
    unsigned long long occupied = 0;
    st = grip_cuda_alloc(ctx, sizeof occupied, &scratch);
    if (st == GRIP_OK)
        st = count_occupied(ctx, *out, (unsigned long long *)scratch, &occupied);
    grip_cuda_free(scratch);
    if (st != GRIP_OK) {
        grip_grid3d_free(out);
        return st;
    }
    const double per_cell = (double)b.finite / (double)(occupied ? occupied : 1);
    if (per_cell <= 2.0 * GRIP_GRID3D_KNN_TARGET)
        return GRIP_OK;
    const grip_grid3d_geom finer = grip_grid3d_plan(b, g.cell * sqrt(GRIP_GRID3D_KNN_TARGET / per_cell), max_cells);
    if (finer.cell >= 0.9f * g.cell) // the cell cap leaves no room for a finer grid
        return GRIP_OK;
    grip_grid3d_free(out);
    return grip_grid3d_build(ctx, xyz, n, b, finer, out);
}
