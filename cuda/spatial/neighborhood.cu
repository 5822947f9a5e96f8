// neighborhood.cu -- radius and k-nearest neighbourhoods of query points over a grip_surface_cuda, as CSR lists of
// structure-of-arrays (src/spatial/neighborhood_cuda.h).
//
// Radius: one warp per query walks the rows of grid cells that the ball touches (grid3d.cuh: each row is one
// contiguous run of the cell-ordered points, two loads of cell_start), the rows' runs laid end to end so that the
// 32 lanes test 32 points at a time whatever the rows' lengths. A count pass sizes the lists and an exclusive
// scan places them. Each hit is a 64-bit key, squared distance bits << 32 | point index: a non-negative float's
// bits sort as unsigned, so the keys sort by distance, ties to the lower index (the walk, the keys and the sorts:
// ball_lists.cuh). A list of at most kWarpSortMax is then found again by its warp into shared memory, sorted there
// (bitonic) and its first max_neighbors written out; one of at most kShortMax likewise, but sorted by a block of its
// own (a warp a list, a database scene's SHOT supports of 2,049-4,096 points took 0.78 ms: each warp's sort a long
// chain of steps, and 7 such warps a multiprocessor for their shared memory);
// longer lists (huge radii) go through device memory and cub's segmented sort. A last pass gathers coordinates
// and normals per entry.
// Grid: the surface's own (cells of a few points) while the radius spans at most kMaxRadiusCells of its cells
// (at most ~(2 * 8 + 2)^2 rows a query); a larger radius gets a grid of its own for the call, of cells a quarter
// of the radius (at most ~100 rows a query), whose build costs a sort of the points.
// k nearest: one thread per query keeps its k best sorted and walks the surface's grid ring by ring
// (grip_grid3d_knn); the lists' lengths are known beforehand (k, or the finite points when fewer).
#include "cuda/core/device.cuh"
#include "cuda/spatial/ball_lists.cuh"
#include "cuda/spatial/grid3d.cuh"
#include "cuda/spatial/surface.cuh"

#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <math.h>
#include <string.h>

using namespace grip_ball;

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr float kMaxRadiusCells = 8.0f;
constexpr double kRadiusCellFraction = 0.25;
constexpr uint32_t kShortMax = 4096;        // longest list sorted in shared memory
constexpr uint32_t kWarpSortMax = 1024;     // longest list a warp sorts; longer ones, to kShortMax, a block each
constexpr int kBlockSortThreads = 256;      // 8 or 16 keys a thread: 2 * kWarpSortMax and kShortMax keys
static_assert(8 * kBlockSortThreads == 2 * kWarpSortMax && 16 * kBlockSortThreads == kShortMax,
              "a block's list takes 8 or 16 keys a thread");
constexpr uint32_t kSharedKeysPerBlock = 4096; // 32 KiB of keys a block

// Per-call summaries, reduced on the device and read back in one copy.
struct list_stats {
    unsigned int max_count;            // longest kept list
    unsigned int truncated;            // lists the cap shortened
    unsigned int max_short;            // longest list of at most kWarpSortMax
    unsigned int n_block;              // lists longer than that, to kShortMax: block_rows[0 .. n_block)
    unsigned int max_block;            // the longest of them
    unsigned int unused;
    unsigned long long kept_total;     // entries
    unsigned long long long_total;     // candidates of the lists longer than kShortMax
};

__device__ __forceinline__ bool load_query(const float *queries, const float *xyz, uint32_t q, float *qx, float *qy,
                                           float *qz)
{
    const float *p = (queries ? queries : xyz) + 3 * (size_t)q;
    *qx = p[0];
    *qy = p[1];
    *qz = p[2];
    return grip_finite3(*qx, *qy, *qz);
}

// Count pass: support[q] (points within the radius), kept lengths (after the cap) and the lengths of the lists
// too long for shared memory, the stats; the queries whose lists a block sorts appended to block_rows (in no
// particular order: each list is its query's own).
__global__ void radius_count_kernel(grip_grid3d_view v, const float *__restrict__ queries,
                                    const float *__restrict__ xyz, uint32_t m, float radius, float r2, uint32_t cap,
                                    uint32_t *support, unsigned long long *long_len, unsigned long long *kept,
                                    uint32_t *block_rows, list_stats *stats)
{
    const uint32_t q = blockIdx.x * kWarps + threadIdx.x / 32;
    if (q >= m)
        return;
    float qx, qy, qz;
    count_visit c = {0};
    if (load_query(queries, xyz, q, &qx, &qy, &qz))
        warp_ball_scan(v, qx, qy, qz, radius, r2, c);
    if (lane_id() != 0)
        return;
    const uint32_t keep = cap > 0 && c.count > cap ? cap : c.count;
    support[q] = c.count;
    long_len[q] = c.count > kShortMax ? c.count : 0;
    kept[q] = keep;
    if (keep > 0)
        atomicMax(&stats->max_count, keep);
    if (keep < c.count)
        atomicAdd(&stats->truncated, 1u);
    if (c.count > 0 && c.count <= kWarpSortMax) {
        atomicMax(&stats->max_short, c.count);
    } else if (c.count > kWarpSortMax && c.count <= kShortMax) {
        atomicMax(&stats->max_block, c.count);
        block_rows[atomicAdd(&stats->n_block, 1u)] = q;
    }
}

// The scans' totals (their last entries) into the stats, so that one copy reads everything back.
__global__ void totals_kernel(const unsigned long long *kept_off, const unsigned long long *long_off, uint32_t m,
                              list_stats *stats)
{
    stats->kept_total = kept_off[m];
    stats->long_total = long_off[m];
}

// Lists of at most kWarpSortMax: found again into the warp's shared keys (p_max of them), sorted, the first kept
// written out.
__global__ void radius_short_kernel(grip_grid3d_view v, const float *__restrict__ queries,
                                    const float *__restrict__ xyz, uint32_t m, float radius, float r2,
                                    const uint32_t *__restrict__ support,
                                    const unsigned long long *__restrict__ offsets, uint32_t p_max, uint32_t *idx,
                                    float *sqdist)
{
    extern __shared__ unsigned long long shared_keys[];
    const uint32_t warp = threadIdx.x / 32, q = blockIdx.x * (blockDim.x / 32) + warp;
    if (q >= m)
        return;
    const uint32_t count = support[q];
    if (count == 0 || count > kWarpSortMax)
        return;
    float qx, qy, qz;
    load_query(queries, xyz, q, &qx, &qy, &qz);
    unsigned long long *keys = shared_keys + (size_t)warp * p_max;
    fill_visit f = {keys, 0, UINT32_MAX};
    warp_ball_scan(v, qx, qy, qz, radius, r2, f);
    uint32_t p = 2;
    while (p < count)
        p <<= 1;
    for (uint32_t i = count + lane_id(); i < p; i += 32)
        keys[i] = ~0ull;
    __syncwarp();
    warp_bitonic_sort(keys, p);
    const unsigned long long at = offsets[q], kept = offsets[q + 1] - at;
    for (uint32_t j = lane_id(); j < kept; j += 32)
        unpack_key(keys[j], idx + at + j, sqdist + at + j);
}

// The lists longer than kWarpSortMax and at most kShortMax, a block each (the queries rows[blockIdx.x]): the
// block's warps find the list again into its shared keys, each walking a share of the ball's rows, then the block
// sorts them and writes the first kept out.
// 4 blocks a multiprocessor: 64 registers a thread, enough for a run of 16 keys without spilling.
__global__ void __launch_bounds__(kBlockSortThreads, 4)
    radius_block_kernel(grip_grid3d_view v, const float *__restrict__ queries, const float *__restrict__ xyz,
                        const uint32_t *__restrict__ rows, float radius, float r2,
                        const uint32_t *__restrict__ support, const unsigned long long *__restrict__ offsets,
                        uint32_t *idx, float *sqdist)
{
    extern __shared__ unsigned long long shared_keys[];
    __shared__ uint32_t filled;
    const uint32_t q = rows[blockIdx.x], count = support[q];
    if (threadIdx.x == 0)
        filled = 0;
    __syncthreads();
    { // the walk is the count pass's, so the warps' hits fill keys[0 .. count)
        float qx, qy, qz;
        load_query(queries, xyz, q, &qx, &qy, &qz);
        shared_fill_visit f = {shared_keys, &filled};
        warp_ball_scan(v, qx, qy, qz, radius, r2, f, (int)(threadIdx.x / 32), kBlockSortThreads / 32);
    }
    // kWarpSortMax < count <= kShortMax: 8 or 16 keys a thread
    const uint32_t p = count <= 8 * kBlockSortThreads ? 8 * kBlockSortThreads : 16 * kBlockSortThreads;
    for (uint32_t i = count + threadIdx.x; i < p; i += blockDim.x)
        shared_keys[padded(i)] = ~0ull;
    __syncthreads(); // the warps' keys and the padding before the sort reads them
    if (p == 8 * kBlockSortThreads)
        block_bitonic_sort<8>(shared_keys);
    else
        block_bitonic_sort<16>(shared_keys);
    const unsigned long long at = offsets[q], kept = offsets[q + 1] - at;
    for (uint32_t j = threadIdx.x; j < kept; j += blockDim.x)
        unpack_key(shared_keys[padded(j)], idx + at + j, sqdist + at + j);
}

// Lists longer than kShortMax: their keys into device memory (the segments of long_off), for the segmented sort.
__global__ void radius_long_fill_kernel(grip_grid3d_view v, const float *__restrict__ queries,
                                        const float *__restrict__ xyz, uint32_t m, float radius, float r2,
                                        const unsigned long long *__restrict__ long_off, unsigned long long *keys)
{
    const uint32_t q = blockIdx.x * kWarps + threadIdx.x / 32;
    if (q >= m || long_off[q + 1] == long_off[q])
        return;
    float qx, qy, qz;
    load_query(queries, xyz, q, &qx, &qy, &qz);
    fill_visit f = {keys + long_off[q], 0, UINT32_MAX};
    warp_ball_scan(v, qx, qy, qz, radius, r2, f);
}

// The first kept entries of each long sorted list, unpacked into idx and sqdist at the lists' final places.
__global__ void radius_long_unpack_kernel(uint32_t m, const unsigned long long *__restrict__ sorted,
                                          const unsigned long long *__restrict__ long_off,
                                          const unsigned long long *__restrict__ offsets, uint32_t *idx,
                                          float *sqdist)
{
    const uint32_t q = blockIdx.x * kWarps + threadIdx.x / 32;
    if (q >= m || long_off[q + 1] == long_off[q])
        return;
    const unsigned long long from = long_off[q], to = offsets[q], count = offsets[q + 1] - offsets[q];
    for (unsigned long long j = lane_id(); j < count; j += 32)
        unpack_key(sorted[from + j], idx + to + j, sqdist + to + j);
}

// The entries' coordinates and (when the surface has them) normals, from their point indices.
__global__ void gather_kernel(const float *__restrict__ xyz, const float4 *__restrict__ normals, size_t entries,
                              const uint32_t *__restrict__ idx, float *x, float *y, float *z, float *nx, float *ny,
                              float *nz)
{
    const size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (e >= entries)
        return;
    const size_t i = idx[e];
    x[e] = xyz[3 * i];
    y[e] = xyz[3 * i + 1];
    z[e] = xyz[3 * i + 2];
    if (normals) {
        const float4 nrm = normals[i];
        nx[e] = nrm.x;
        ny[e] = nrm.y;
        nz[e] = nrm.z;
    }
}

// k nearest: list lengths first (k, or fewer when the surface has fewer finite points; 0 for a non-finite query).
__global__ void knn_count_kernel(const float *__restrict__ queries, const float *__restrict__ xyz, uint32_t m,
                                 uint32_t len, uint32_t *support, unsigned long long *kept)
{
    const uint32_t q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= m)
        return;
    float qx, qy, qz;
    const uint32_t count = load_query(queries, xyz, q, &qx, &qy, &qz) ? len : 0;
    support[q] = count;
    kept[q] = count;
}

__global__ void knn_kernel(grip_grid3d_view v, const float *__restrict__ queries, const float *__restrict__ xyz,
                           uint32_t m, int k, const unsigned long long *__restrict__ offsets, uint32_t *idx,
                           float *sqdist)
{
    const uint32_t q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= m)
        return;
    float qx, qy, qz;
    if (!load_query(queries, xyz, q, &qx, &qy, &qz))
        return;
    grip_knn_list<GRIP_NEIGHBORHOODS_CUDA_MAX_K> l;
    l.init(k);
    grip_grid3d_knn(v, qx, qy, qz, l);
    const unsigned long long at = offsets[q];
    for (int j = 0; j < l.count; ++j) {
        idx[at + j] = l.id[j];
        sqdist[at + j] = l.d[j];
    }
}

unsigned int blocks_of(size_t items, size_t per_block)
{
    return (unsigned int)((items + per_block - 1) / per_block);
}

// ---- the lists' arrays ----------------------------------------------------------------------------------------

// A search's per-query scratch (offsets and support are the caller's, in out).
struct query_arrays {
    unsigned long long *long_off; // m + 1: the candidates of the lists longer than kShortMax, scanned
    list_stats *stats;
    void *scan_tmp;
    size_t scan_bytes;
};

void query_arrays_free(query_arrays *a)
{
    grip_cuda_free(a->long_off);
    grip_cuda_free(a->stats);
    grip_cuda_free(a->scan_tmp);
}

grip_status query_arrays_alloc(grip_ctx *ctx, uint32_t m, grip_neighborhoods_cuda *out, query_arrays *a)
{
    grip_status st = grip_cuda_alloc(ctx, ((size_t)m + 1) * sizeof(uint64_t), (void **)&out->offsets);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, (size_t)m * sizeof(uint32_t), (void **)&out->support);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, ((size_t)m + 1) * sizeof(unsigned long long), (void **)&a->long_off);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, sizeof(list_stats), (void **)&a->stats);
    if (st != GRIP_OK)
        return st;
    GRIP_CUDA_CHECK(ctx, cub::DeviceScan::ExclusiveSum(NULL, a->scan_bytes, a->long_off, a->long_off, (size_t)m + 1));
    st = grip_cuda_alloc(ctx, a->scan_bytes, &a->scan_tmp);
    if (st != GRIP_OK)
        return st;
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(a->stats, 0, sizeof(list_stats), 0));
    // the scans' last inputs, so that offsets[m] and long_off[m] end up as the totals
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(out->offsets + m, 0, sizeof(uint64_t), 0));
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(a->long_off + m, 0, sizeof(unsigned long long), 0));
    return GRIP_OK;
}

// Scans both length arrays in place into offsets and reads the totals and stats back.
grip_status scan_lengths(grip_ctx *ctx, query_arrays *a, uint32_t m, grip_neighborhoods_cuda *out, list_stats *host)
{
    unsigned long long *kept = (unsigned long long *)out->offsets;
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceScan::ExclusiveSum(a->scan_tmp, a->scan_bytes, kept, kept, (size_t)m + 1));
    GRIP_CUDA_CHECK_LAUNCH(
        ctx, cub::DeviceScan::ExclusiveSum(a->scan_tmp, a->scan_bytes, a->long_off, a->long_off, (size_t)m + 1));
    totals_kernel<<<1, 1>>>(kept, a->long_off, m, a->stats);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, host, a->stats, sizeof *host, cudaMemcpyDeviceToHost));
    out->entries = (size_t)host->kept_total;
    out->max_count = host->max_count;
    out->truncated = host->truncated;
    return GRIP_OK;
}

// The entries' arrays, sized by out->entries (nx, ny, nz only when the surface has normals).
grip_status entry_arrays_alloc(grip_ctx *ctx, bool with_normals, grip_neighborhoods_cuda *out)
{
    const size_t e = out->entries;
    void **slots[] = {(void **)&out->idx, (void **)&out->sqdist, (void **)&out->x, (void **)&out->y,
                      (void **)&out->z, (void **)&out->nx, (void **)&out->ny, (void **)&out->nz};
    const int used = with_normals ? 8 : 5;
    for (int i = 0; i < used; ++i) {
        grip_status st = grip_cuda_alloc(ctx, e * sizeof(float), slots[i]);
        if (st == GRIP_ENOMEM)
            grip_fail_append(ctx, "neighborhoods (cuda): %zu neighbours do not fit on the device; ask for fewer "
                             "queries at a time", e);
        if (st != GRIP_OK)
            return st;
    }
    return GRIP_OK;
}

grip_status gather_entries(grip_ctx *ctx, const grip_surface_cuda *s, grip_neighborhoods_cuda *out)
{
    if (out->entries == 0)
        return GRIP_OK;
    gather_kernel<<<blocks_of(out->entries, kThreads), kThreads>>>(
        s->xyz, s->has_normals ? (const float4 *)s->normals : NULL, out->entries, out->idx, out->x, out->y, out->z,
        out->nx, out->ny, out->nz);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}

// ---- radius ---------------------------------------------------------------------------------------------------

struct radius_job {
    const grip_surface_cuda *s;
    const float *queries;
    uint32_t m, cap;
    float radius, r2;
    grip_grid3d_view grid;
};

// The long lists' scratch: their keys, sorted into a second buffer.
struct sort_arrays {
    unsigned long long *keys[2];
    void *tmp;
};

void sort_arrays_free(sort_arrays *k)
{
    grip_cuda_free(k->keys[0]);
    grip_cuda_free(k->keys[1]);
    grip_cuda_free(k->tmp);
}

grip_status sort_arrays_alloc(grip_ctx *ctx, unsigned long long total, uint32_t m, const query_arrays *a,
                              sort_arrays *k, size_t *tmp_bytes)
{
    grip_status st = grip_cuda_alloc(ctx, total * sizeof(unsigned long long), (void **)&k->keys[0]);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, total * sizeof(unsigned long long), (void **)&k->keys[1]);
    if (st == GRIP_OK)
        st = grip_cuda_status(ctx,
                              cub::DeviceSegmentedSort::SortKeys(NULL, *tmp_bytes, k->keys[0], k->keys[1],
                                                                 (int64_t)total, (int64_t)m, a->long_off,
                                                                 a->long_off + 1),
                              "cub::DeviceSegmentedSort::SortKeys", __FILE__, __LINE__);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, *tmp_bytes, &k->tmp);
    if (st == GRIP_ENOMEM)
        grip_fail_append(ctx, "neighborhoods (cuda): the sort of %llu candidates does not fit on the device; ask for "
                         "fewer queries at a time", total);
    return st;
}

grip_status radius_long_run(grip_ctx *ctx, const radius_job &j, const query_arrays *a, unsigned long long total,
                            sort_arrays *k, grip_neighborhoods_cuda *out)
{
    size_t tmp_bytes = 0;
    grip_status st = sort_arrays_alloc(ctx, total, j.m, a, k, &tmp_bytes);
    if (st != GRIP_OK)
        return st;
    const unsigned int blocks = blocks_of(j.m, kWarps);
    radius_long_fill_kernel<<<blocks, kThreads>>>(j.grid, j.queries, j.s->xyz, j.m, j.radius, j.r2, a->long_off,
                                                  k->keys[0]);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx,
                           cub::DeviceSegmentedSort::SortKeys(k->tmp, tmp_bytes, k->keys[0], k->keys[1], (int64_t)total,
                                                              (int64_t)j.m, a->long_off, a->long_off + 1));
    radius_long_unpack_kernel<<<blocks, kThreads>>>(j.m, k->keys[1], a->long_off,
                                                    (const unsigned long long *)out->offsets, out->idx, out->sqdist);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}

// The lists of at most kShortMax, sorted in shared memory: each warp of a block holds p_max keys (the longest
// such list, rounded up to a power of two), kSharedKeysPerBlock keys a block.
grip_status radius_short_run(grip_ctx *ctx, const radius_job &j, uint32_t max_short, grip_neighborhoods_cuda *out)
{
    uint32_t p_max = 32;
    while (p_max < max_short)
        p_max <<= 1;
    uint32_t warps = kSharedKeysPerBlock / p_max;
    warps = warps < 1 ? 1 : (warps > (uint32_t)kWarps ? (uint32_t)kWarps : warps);
    const size_t shared = (size_t)warps * p_max * sizeof(unsigned long long);
    radius_short_kernel<<<blocks_of(j.m, warps), warps * 32, shared>>>(
        j.grid, j.queries, j.s->xyz, j.m, j.radius, j.r2, out->support, (const unsigned long long *)out->offsets,
        p_max, out->idx, out->sqdist);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}

// The lists longer than kWarpSortMax and at most kShortMax, a block each, the block's keys the longest such list's
// (2,048 or 4,096, padded).
grip_status radius_block_run(grip_ctx *ctx, const radius_job &j, const uint32_t *block_rows, const list_stats &host,
                             grip_neighborhoods_cuda *out)
{
    const uint32_t p_max = host.max_block <= 8 * kBlockSortThreads ? 8 * kBlockSortThreads : kShortMax;
    radius_block_kernel<<<host.n_block, kBlockSortThreads, (size_t)padded_size(p_max) * sizeof(unsigned long long)>>>(
        j.grid, j.queries, j.s->xyz, block_rows, j.radius, j.r2, out->support,
        (const unsigned long long *)out->offsets, out->idx, out->sqdist);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}

grip_status radius_run(grip_ctx *ctx, const radius_job &j, grip_neighborhoods_cuda *out)
{
    query_arrays a = {};
    list_stats host = {};
    uint32_t *block_rows = NULL;
    grip_status st = query_arrays_alloc(ctx, j.m, out, &a);
    if (st == GRIP_OK && j.m > 0)
        st = grip_cuda_alloc(ctx, (size_t)j.m * sizeof *block_rows, (void **)&block_rows);
    if (st == GRIP_OK && j.m > 0) {
        radius_count_kernel<<<blocks_of(j.m, kWarps), kThreads>>>(j.grid, j.queries, j.s->xyz, j.m, j.radius, j.r2,
                                                                  j.cap, out->support, a.long_off,
                                                                  (unsigned long long *)out->offsets, block_rows,
                                                                  a.stats);
        st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "radius_count_kernel", __FILE__, __LINE__);
    }
    if (st == GRIP_OK)
        st = scan_lengths(ctx, &a, j.m, out, &host);
    if (st == GRIP_OK)
        st = entry_arrays_alloc(ctx, j.s->has_normals != 0, out);
    sort_arrays k = {};
    if (st == GRIP_OK && host.long_total > 0)
        st = radius_long_run(ctx, j, &a, host.long_total, &k, out);
    if (st == GRIP_OK && host.max_short > 0)
        st = radius_short_run(ctx, j, host.max_short, out);
    if (st == GRIP_OK && host.n_block > 0)
        st = radius_block_run(ctx, j, block_rows, host, out);
    if (st == GRIP_OK)
        st = gather_entries(ctx, j.s, out);
    if (st == GRIP_OK)
        st = grip_cuda_status(ctx, cudaStreamSynchronize(0), "radius search", __FILE__, __LINE__);
    sort_arrays_free(&k);
    grip_cuda_free(block_rows);
    query_arrays_free(&a);
    return st;
}

// Lists that are all empty, without a search.
grip_status empty_lists(grip_ctx *ctx, const grip_surface_cuda *s, uint32_t m, grip_neighborhoods_cuda *out)
{
    grip_status st = grip_cuda_alloc(ctx, ((size_t)m + 1) * sizeof(uint64_t), (void **)&out->offsets);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, (size_t)m * sizeof(uint32_t), (void **)&out->support);
    if (st == GRIP_OK)
        st = entry_arrays_alloc(ctx, s->has_normals != 0, out);
    if (st != GRIP_OK)
        return st;
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemset(out->offsets, 0, ((size_t)m + 1) * sizeof(uint64_t)));
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemset(out->support, 0, (size_t)m * sizeof(uint32_t)));
    return GRIP_OK;
}

// The grid for a radius: the surface's while the radius spans few of its cells, else one of its own.
grip_status radius_grid(grip_ctx *ctx, const grip_surface_cuda *s, float radius, grip_grid3d *own,
                        grip_grid3d_view *view)
{
    *view = grip_grid3d_get_view(s->grid);
    if (radius * s->grid.geom.inv_cell <= kMaxRadiusCells)
        return GRIP_OK;
    const size_t max_cells = 64 * (size_t)s->bounds.finite + 65536;
    const grip_grid3d_geom g = grip_grid3d_plan(s->bounds, (double)radius * kRadiusCellFraction, max_cells);
    grip_status st = grip_grid3d_build(ctx, s->xyz, s->n, s->bounds, g, own);
    if (st == GRIP_OK)
        *view = grip_grid3d_get_view(*own);
    return st;
}

// ---- k nearest ------------------------------------------------------------------------------------------------

grip_status knn_run(grip_ctx *ctx, const grip_surface_cuda *s, const float *queries, uint32_t m, uint32_t k,
                    grip_neighborhoods_cuda *out)
{
    query_arrays a = {};
    list_stats host = {};
    grip_status st = query_arrays_alloc(ctx, m, out, &a);
    const uint32_t len = k < s->bounds.finite ? k : s->bounds.finite;
    if (st == GRIP_OK && m > 0) {
        knn_count_kernel<<<blocks_of(m, kThreads), kThreads>>>(queries, s->xyz, m, len, out->support,
                                                               (unsigned long long *)out->offsets);
        st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "knn_count_kernel", __FILE__, __LINE__);
    }
    if (st == GRIP_OK && m > 0) // no list is long: the long lengths stay 0
        st = grip_cuda_status(ctx,
                              GRIP_CUDA_COPY(cudaMemsetAsync(a.long_off, 0, (size_t)m * sizeof(unsigned long long), 0)),
                              "cudaMemsetAsync", __FILE__, __LINE__);
    if (st == GRIP_OK)
        st = scan_lengths(ctx, &a, m, out, &host);
    if (st == GRIP_OK)
        st = entry_arrays_alloc(ctx, s->has_normals != 0, out);
    if (st == GRIP_OK && out->entries > 0) {
        knn_kernel<<<blocks_of(m, 128), 128>>>(grip_grid3d_get_view(s->grid), queries, s->xyz, m, (int)len,
                                               (const unsigned long long *)out->offsets, out->idx, out->sqdist);
        st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "knn_kernel", __FILE__, __LINE__);
        if (st == GRIP_OK)
            st = gather_entries(ctx, s, out);
    }
    out->max_count = out->entries > 0 ? len : 0;
    if (st == GRIP_OK)
        st = grip_cuda_status(ctx, cudaStreamSynchronize(0), "k-nearest search", __FILE__, __LINE__);
    query_arrays_free(&a);
    return st;
}

grip_status check_queries(grip_ctx *ctx, const char *what, const grip_surface_cuda *s, const float *queries,
                          uint32_t m, grip_neighborhoods_cuda *out)
{
    if (!out)
        return grip_fail(ctx, GRIP_EINVAL, "neighborhoods (cuda) %s: out is NULL", what);
    memset(out, 0, sizeof *out);
    if (!s)
        return grip_fail(ctx, GRIP_EINVAL, "neighborhoods (cuda) %s: the surface is NULL", what);
    if (!queries && m != s->n)
        return grip_fail(ctx, GRIP_EINVAL, "neighborhoods (cuda) %s: queries NULL (every surface point) with m = %u, "
                         "but the surface has %u points", what, m, s->n);
    return GRIP_OK;
}

} // namespace

extern "C" grip_status grip_neighborhoods_cuda_radius(grip_ctx *ctx, const grip_surface_cuda *s, const float *queries,
                                                      uint32_t m, float radius, uint32_t max_neighbors,
                                                      grip_neighborhoods_cuda *out)
{
    grip_status st = check_queries(ctx, "radius", s, queries, m, out);
    if (st != GRIP_OK)
        return st;
    if (!(radius >= 0.0f))
        return grip_fail(ctx, GRIP_EINVAL, "neighborhoods (cuda) radius: radius %g (must be >= 0)", (double)radius);
    radius_job j = {s, queries, m, max_neighbors, radius, (float)((double)radius * (double)radius), {}};
    grip_grid3d own = {};
    // radius 0 (or one whose square is 0 in float) and a surface without a finite point give empty lists
    if (j.r2 > 0.0f && s->bounds.finite > 0) {
        st = radius_grid(ctx, s, radius, &own, &j.grid);
        if (st == GRIP_OK)
            st = radius_run(ctx, j, out);
    } else {
        st = empty_lists(ctx, s, m, out);
    }
    grip_grid3d_free(&own);
    out->m = m;
    if (st != GRIP_OK)
        grip_neighborhoods_cuda_free(out);
    return st;
}

extern "C" grip_status grip_neighborhoods_cuda_knn(grip_ctx *ctx, const grip_surface_cuda *s, const float *queries,
                                                   uint32_t m, uint32_t k, grip_neighborhoods_cuda *out)
{
    grip_status st = check_queries(ctx, "knn", s, queries, m, out);
    if (st != GRIP_OK)
        return st;
    if (k < 1 || k > GRIP_NEIGHBORHOODS_CUDA_MAX_K)
        return grip_fail(ctx, GRIP_EINVAL, "neighborhoods (cuda) knn: k = %u (1 to %d)", k,
                         GRIP_NEIGHBORHOODS_CUDA_MAX_K);
    st = knn_run(ctx, s, queries, m, k, out);
    out->m = m;
    if (st != GRIP_OK)
        grip_neighborhoods_cuda_free(out);
    return st;
}

extern "C" void grip_neighborhoods_cuda_free(grip_neighborhoods_cuda *nb)
{
    if (!nb)
        return;
    void *arrays[] = {nb->offsets, nb->support, nb->idx, nb->sqdist, nb->x, nb->y, nb->z, nb->nx, nb->ny, nb->nz};
    for (void *p : arrays)
        grip_cuda_free(p);
    memset(nb, 0, sizeof *nb);
}
