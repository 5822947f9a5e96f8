// bruteforce.cu -- exact brute-force k-NN on the GPU, bit for bit the CPU twin src/index/bruteforce.c.
//
// One block owns 64 queries and walks every reference row in tiles of 128. For a tile, its 256 threads compute
// the 64 x 128 squared distances (each thread 4 queries x 8 rows, in registers), staging 8 dimensions of the
// queries and rows at a time in shared memory (the next 8 are loaded into registers while these are computed).
// Each distance is summed in float, dimension after dimension, with __fsub_rn/__fmul_rn/__fadd_rn so that nvcc
// cannot contract it into FMAs: the CPU twin's very sum (SASS: no FFMA in the kernel). The tile
// goes to shared memory and every query whose row holds a candidate (below its current k-th distance and within
// the bound) is flagged; then each warp merges the candidates of its 8 queries, in ascending row order, into
// their top-k lists, kept one entry per lane in registers (k <= 32). Merging in row order with the CPU's rule
// (insert after the entries of equal distance) makes the ties go to the lower row, as on the CPU. No distance
// matrix ever reaches global memory.
//
// Few queries (fewer blocks than twice the multiprocessors) would leave most of the GPU idle while their blocks
// walk every row: the rows are then split into contiguous ranges, each walked by its own blocks (gridDim.y), and
// the ranges' k-lists merged in row order (merge_splits_kernel), which keeps ties at the lower row. Up to 16
// queries go to cuda/index/bruteforce_few.cu's kernel instead (one pass over the rows for them all), split the same
// way.
//
// Searches that the tensor-core screening serves go through cuda/index/bruteforce_tensor.cu, which comes back here for
// the queries whose answer it cannot certify (on SHOT-like rows a handful at 1e5 rows, about 0.6% of the queries at
// 1e6, and then, at 0.3 s of a 1e6 x 1e6 search's 1.2 s, the largest cost after the screening: the split serves them).
//
// A reference set the device cannot hold is streamed instead (the handle, at the end of this file): its rows stay
// in host memory and each search copies them to the device batch by batch, searches every batch with the kernel
// above or the screening, and merges the batches' k-lists; since the batches come in row order and a merge keeps
// the earlier entry of equal distance, ties still go to the lower row, and the results are the same bit for bit.
//
// Non-finite rows need no special case: a NaN or inf coordinate makes every distance to the row NaN or +inf,
// which fails `d < k-th distance` (the k-th distance starts at +inf), exactly as on the CPU; a non-finite query
// row likewise gets nothing.
#include "cuda/index/bruteforce.cuh"
#include "cuda/core/device.cuh"
#include "cuda/index/bruteforce_few.cuh"
#include "cuda/index/bruteforce_screen.cuh"
#include "cuda/index/bruteforce_tensor.cuh"

extern "C" {
#include "index/bruteforce_cuda.h"
}

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kBlockQueries = 64;                      // queries per block
constexpr int kTileRefs = 128;                         // reference rows per tile
constexpr int kChunkDims = 8;                          // dimensions staged in shared memory at a time
constexpr int kRowsPerWarp = kBlockQueries / kWarps;   // queries whose lists one warp keeps
constexpr int kQueryStride = kBlockQueries + 4;        // padded (16-byte aligned) rows of the staged chunks
constexpr int kRefStride = kTileRefs + 4;
using grip_screen::kFullMask;
using grip_screen::list_insert_kth;
using grip_screen::merged_places;

// Thread (tx, ty), tx = tid % 16, ty = tid / 16, computes queries 4ty..4ty+3 against rows 4tx..4tx+3 and
// 64+4tx..64+4tx+3 of the tile: float4 reads of the staged rows are then conflict-free, and the 16 threads of one
// query row sit in one half-warp, which lets them flag it with a single ballot.
constexpr int kThreadQueries = 4;
constexpr int kThreadRefs = 8;

struct __align__(16) knn_shared {
    float q[kChunkDims][kQueryStride];     // staged queries, dimension-major
    float r[kChunkDims][kRefStride];       // staged reference rows, dimension-major
    float dist[kBlockQueries][kRefStride]; // the tile's squared distances
    float kth[kBlockQueries];              // each query's current k-th distance (+inf while its list is short)
    int flagged[kBlockQueries];            // 1 when the tile holds a candidate for that query
};

// One thread's share of a staged chunk, fetched from global memory into registers ahead of its use, so that the
// loads of the next chunk fly while the current one is computed. Element e = threadIdx.x + kThreads * t of a chunk
// is dimension e % kChunkDims of row e / kChunkDims.
constexpr int kQueryLoads = kBlockQueries * kChunkDims / kThreads;
constexpr int kRefLoads = kTileRefs * kChunkDims / kThreads;

template <int LOADS>
__device__ __forceinline__ void fetch_chunk(float (&regs)[LOADS], const float *__restrict__ src, size_t row0,
                                            size_t total, size_t dim, size_t d0, int len)
{
#pragma unroll
    for (int t = 0; t < LOADS; ++t) {
        const int e = (int)threadIdx.x + kThreads * t, dd = e % kChunkDims;
        const size_t g = row0 + (size_t)(e / kChunkDims);
        regs[t] = dd < len && g < total ? src[g * dim + d0 + (size_t)dd] : 0.0f;
    }
}

// Stores fetched registers dimension-major into dst (dimensions past the chunk's length are never read).
template <int LOADS, int STRIDE>
__device__ __forceinline__ void store_chunk(float (*dst)[STRIDE], const float (&regs)[LOADS])
{
#pragma unroll
    for (int t = 0; t < LOADS; ++t) {
        const int e = (int)threadIdx.x + kThreads * t;
        dst[e % kChunkDims][e / kChunkDims] = regs[t];
    }
}

// acc[i][j] += (q_i - r_j)^2 for one staged dimension, rounded like the CPU's float code (no FMA).
__device__ __forceinline__ void accumulate_dim(const knn_shared &s, int dd, int tx, int ty,
                                               float acc[kThreadQueries][kThreadRefs])
{
    const float4 q = *reinterpret_cast<const float4 *>(&s.q[dd][4 * ty]);
    const float4 ra = *reinterpret_cast<const float4 *>(&s.r[dd][4 * tx]);
    const float4 rb = *reinterpret_cast<const float4 *>(&s.r[dd][kTileRefs / 2 + 4 * tx]);
    const float qv[kThreadQueries] = {q.x, q.y, q.z, q.w};
    const float rv[kThreadRefs] = {ra.x, ra.y, ra.z, ra.w, rb.x, rb.y, rb.z, rb.w};
#pragma unroll
    for (int i = 0; i < kThreadQueries; ++i)
#pragma unroll
        for (int j = 0; j < kThreadRefs; ++j)
            acc[i][j] = grip_screen::add_squared_diff(acc[i][j], qv[i], rv[j]);
}

// Writes the thread's distances into the tile (+inf for columns past the last row) and flags the queries that
// have a candidate in it: a distance under min(k-th distance, the first float above max_sqdist).
__device__ __forceinline__ void publish_tile(knn_shared &s, float acc[kThreadQueries][kThreadRefs], int tx, int ty,
                                             size_t q0, size_t m, size_t tile_rows, float above_bound)
{
    if (tile_rows < (size_t)kTileRefs) {
#pragma unroll
        for (int j = 0; j < kThreadRefs; ++j) {
            const int col = (j < 4 ? 0 : kTileRefs / 2) + 4 * tx + (j % 4);
            if ((size_t)col >= tile_rows)
#pragma unroll
                for (int i = 0; i < kThreadQueries; ++i)
                    acc[i][j] = INFINITY;
        }
    }
#pragma unroll
    for (int i = 0; i < kThreadQueries; ++i) {
        const int row = 4 * ty + i;
        float best = acc[i][0]; // fminf skips NaN, which is never a candidate anyway
#pragma unroll
        for (int j = 1; j < kThreadRefs; ++j)
            best = fminf(best, acc[i][j]);
        *reinterpret_cast<float4 *>(&s.dist[row][4 * tx]) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        *reinterpret_cast<float4 *>(&s.dist[row][kTileRefs / 2 + 4 * tx]) =
            make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
        const unsigned votes = __ballot_sync(kFullMask, best < fminf(s.kth[row], above_bound));
        const unsigned half = (ty & 1) ? votes >> 16 : votes & 0xffffu;
        if (tx == 0)
            s.flagged[row] = half != 0 && q0 + (size_t)row < m;
    }
}

// Each warp merges the flagged rows of its queries into their lists, candidates in ascending reference order.
__device__ __forceinline__ void select_tile(knn_shared &s, float list_d[kRowsPerWarp],
                                            uint32_t list_id[kRowsPerWarp], size_t r0, int k, float above_bound,
                                            int warp, int lane)
{
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
        const int row = warp * kRowsPerWarp + i;
        if (!s.flagged[row])
            continue;
        // the list's own k-th entry (s.kth holds the same, but lane 0 rewrites it below: no read of it here)
        float kth = __shfl_sync(kFullMask, list_d[i], k - 1);
        for (int c = 0; c < kTileRefs / 32; ++c) {
            const float d = s.dist[row][c * 32 + lane];
            unsigned candidates = __ballot_sync(kFullMask, d < fminf(kth, above_bound));
            while (candidates) {
                const int src = __ffs(candidates) - 1;
                candidates &= candidates - 1;
                const float cd = __shfl_sync(kFullMask, d, src);
                if (cd < kth) // the list may have tightened since the ballot
                    list_insert_kth(list_d[i], list_id[i], kth, cd, (uint32_t)(r0 + (size_t)(c * 32 + src)), k,
                                lane);
            }
        }
        if (lane == 0)
            s.kth[row] = kth;
    }
}

__device__ __forceinline__ int chunk_length(size_t dim, size_t d0)
{
    return dim - d0 < (size_t)kChunkDims ? (int)(dim - d0) : kChunkDims;
}

__global__ void __launch_bounds__(kThreads)
    knn_exact_kernel(const float *__restrict__ ref, size_t n, size_t span, const float *__restrict__ queries,
                     size_t m, size_t dim, int k, float max_sqdist, uint32_t *__restrict__ ids,
                     float *__restrict__ sqdist)
{
    __shared__ knn_shared s;
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16, lane = tid % 32, warp = tid / 32;
    const size_t q0 = (size_t)blockIdx.x * kBlockQueries;
    // the block's rows: range blockIdx.y of `span` rows (all of them when gridDim.y == 1); its lists go to the
    // range's own m x k arrays
    const size_t row_begin = (size_t)blockIdx.y * span, row_end = min(n, row_begin + span);
    ids += (size_t)blockIdx.y * m * (size_t)k;
    sqdist += (size_t)blockIdx.y * m * (size_t)k;
    // with a single chunk the queries are staged once and stay; otherwise every chunk restages them
    const bool restage_queries = dim > (size_t)kChunkDims;
    // d <= max_sqdist exactly when d < the next float up (+inf stays +inf: then only d < k-th distance counts)
    const float above_bound = nextafterf(max_sqdist, INFINITY);
    if (tid < kBlockQueries)
        s.kth[tid] = INFINITY;
    float list_d[kRowsPerWarp];
    uint32_t list_id[kRowsPerWarp];
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
        list_d[i] = INFINITY;
        list_id[i] = UINT32_MAX;
    }
    float next_q[kQueryLoads], next_r[kRefLoads];
    fetch_chunk(next_q, queries, q0, m, dim, 0, chunk_length(dim, 0));
    fetch_chunk(next_r, ref, row_begin, row_end, dim, 0, chunk_length(dim, 0));
    store_chunk(s.q, next_q);
    store_chunk(s.r, next_r);
    for (size_t r0 = row_begin; r0 < row_end; r0 += kTileRefs) {
        float acc[kThreadQueries][kThreadRefs];
#pragma unroll
        for (int i = 0; i < kThreadQueries; ++i)
#pragma unroll
            for (int j = 0; j < kThreadRefs; ++j)
                acc[i][j] = 0.0f;
        for (size_t d0 = 0; d0 < dim; d0 += kChunkDims) {
            const int len = chunk_length(dim, d0);
            __syncthreads(); // the chunk is staged
            // fetch the next chunk: the next dimensions of this tile, else the first of the next tile
            const bool tile_ends = d0 + kChunkDims >= dim;
            const size_t next_r0 = tile_ends ? r0 + kTileRefs : r0, next_d0 = tile_ends ? 0 : d0 + kChunkDims;
            const bool more = next_r0 < row_end;
            if (more) {
                if (restage_queries)
                    fetch_chunk(next_q, queries, q0, m, dim, next_d0, chunk_length(dim, next_d0));
                fetch_chunk(next_r, ref, next_r0, row_end, dim, next_d0, chunk_length(dim, next_d0));
            }
            if (len == kChunkDims) {
#pragma unroll
                for (int dd = 0; dd < kChunkDims; ++dd)
                    accumulate_dim(s, dd, tx, ty, acc);
            } else {
                for (int dd = 0; dd < len; ++dd)
                    accumulate_dim(s, dd, tx, ty, acc);
            }
            if (tile_ends) {
                const size_t tile_rows = row_end - r0 < (size_t)kTileRefs ? row_end - r0 : (size_t)kTileRefs;
                publish_tile(s, acc, tx, ty, q0, m, tile_rows, above_bound);
                __syncthreads();
                select_tile(s, list_d, list_id, r0, k, above_bound, warp, lane);
            }
            __syncthreads(); // everyone is done with the staged chunk
            if (more) {
                if (restage_queries)
                    store_chunk(s.q, next_q);
                store_chunk(s.r, next_r);
            }
        }
    }
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
        const size_t q = q0 + (size_t)(warp * kRowsPerWarp + i);
        if (q < m && lane < k) {
            ids[q * (size_t)k + (size_t)lane] = list_id[i];
            sqdist[q * (size_t)k + (size_t)lane] = list_d[i];
        }
    }
}

constexpr int kSplitMergeWarps = 4;
constexpr size_t kMinSplitRows = 4 * kTileRefs; // a range shorter than this is not worth its merge

// Merges the row ranges' k-lists of each query (range y's at split_ids + y m k) into ids and sqdist: one warp per
// query, range after range (merge_into: the running list holds the lower rows).
__global__ void __launch_bounds__(32 * kSplitMergeWarps)
    merge_splits_kernel(const uint32_t *__restrict__ split_ids, const float *__restrict__ split_d, size_t m, int k,
                        int splits, uint32_t *__restrict__ ids, float *__restrict__ sqdist)
{
    __shared__ float merged_d[kSplitMergeWarps][32];
    __shared__ uint32_t merged_id[kSplitMergeWarps][32];
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    const size_t q = (size_t)blockIdx.x * kSplitMergeWarps + (size_t)w;
    if (q >= m) // the whole warp
        return;
    const bool mine = lane < k;
    float a = mine ? split_d[q * (size_t)k + (size_t)lane] : INFINITY;
    uint32_t a_id = mine ? split_ids[q * (size_t)k + (size_t)lane] : UINT32_MAX;
    for (int y = 1; y < splits; ++y) {
        const size_t at = ((size_t)y * m + q) * (size_t)k + (size_t)lane;
        grip_screen::merge_into(a, a_id, mine ? split_d[at] : INFINITY, mine ? split_ids[at] : UINT32_MAX, k, lane,
                                merged_d[w], merged_id[w]);
    }
    if (mine) {
        ids[q * (size_t)k + (size_t)lane] = a_id;
        sqdist[q * (size_t)k + (size_t)lane] = a;
    }
}

// How many row ranges a search of m queries (`blocks` blocks of them) over n rows takes. The 64-query kernel: enough
// for two blocks per multiprocessor, each range at least kMinSplitRows rows; the few-queries kernel: its own rule.
grip_status split_count(grip_ctx *ctx, bool few, size_t m, size_t blocks, size_t n, size_t *splits)
{
    *splits = 1;
    int sms = 0;
    GRIP_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx->device));
    if (few) {
        *splits = grip_bruteforce_few_ranges(m, n, sms);
        return GRIP_OK;
    }
    const size_t want = 2 * (size_t)sms;
    if (blocks >= want)
        return GRIP_OK;
    size_t s = (want + blocks - 1) / blocks;
    s = min(s, max(n / kMinSplitRows, (size_t)1));
    *splits = min(s, (size_t)65535); // gridDim.y's limit
    return GRIP_OK;
}

// Enqueues the kernel for the search: row range y (`span` rows) writes its lists at ids and sqdist + y m k.
cudaError_t enqueue_ranges(bool few, const float *ref, size_t n, size_t span, size_t ranges, const float *queries,
                           size_t m, size_t blocks, size_t dim, uint32_t k, float max_sqdist, uint32_t *ids,
                           float *sqdist)
{
    if (few)
        return grip_bruteforce_few_enqueue(ref, n, span, ranges, queries, m, dim, (int)k, max_sqdist, ids, sqdist);
    knn_exact_kernel<<<dim3((unsigned)blocks, (unsigned)ranges), kThreads>>>(
        ref, n, span, queries, m, dim, (int)k, max_sqdist, ids, sqdist);
    return cudaGetLastError();
}

} // namespace

grip_status grip_bruteforce_cuda_launch(grip_ctx *ctx, const float *ref, size_t n, const float *queries, size_t m,
                                        size_t dim, uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist)
{
    const size_t blocks = (m + kBlockQueries - 1) / kBlockQueries;
    if (blocks > (size_t)INT_MAX)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "knn (cuda): %zu queries exceed one launch", m);
    // a handful of queries (the screening's uncertified ones, typically) take the few-queries kernel: the 64-query
    // one would do a whole block's work for them
    const bool few = grip_bruteforce_few_applies(m, dim);
    size_t splits = 1;
    grip_status st = split_count(ctx, few, m, blocks, n, &splits);
    if (st != GRIP_OK)
        return st;
    if (splits == 1) {
        GRIP_CUDA_CHECK_LAUNCH(
            ctx, enqueue_ranges(few, ref, n, n, 1, queries, m, blocks, dim, k, max_sqdist, ids, sqdist));
        return GRIP_OK;
    }
    // the ranges' lists, stream-ordered: freed once the merge that reads them has run
    const size_t span = (n + splits - 1) / splits;
    splits = (n + span - 1) / span; // every range holds rows
    const size_t cells = splits * m * (size_t)k;
    void *lists = NULL;
    grip_status st_lists = grip_cuda_alloc(ctx, cells * (sizeof(uint32_t) + sizeof(float)), &lists);
    if (st_lists != GRIP_OK)
        return st_lists;
    uint32_t *split_ids = (uint32_t *)lists;
    float *split_d = (float *)(split_ids + cells);
    cudaError_t err = GRIP_CUDA_LAUNCH(
        enqueue_ranges(few, ref, n, span, splits, queries, m, blocks, dim, k, max_sqdist, split_ids, split_d));
    if (err == cudaSuccess) {
        merge_splits_kernel<<<(unsigned)((m + kSplitMergeWarps - 1) / kSplitMergeWarps), 32 * kSplitMergeWarps>>>(
            split_ids, split_d, m, (int)k, (int)splits, ids, sqdist);
        err = GRIP_CUDA_LAUNCH(cudaGetLastError());
    }
    grip_cuda_free(lists); // stream-ordered: after the merge
    GRIP_CUDA_CHECK(ctx, err);
    return GRIP_OK;
}

// ---------------------------------------------------------------------------------------------------------------
// The handle. Resident: the rows and their screening on the device, held until freed. Streamed (when the device
// cannot hold them, or for tests): the rows in host memory, and every search walks them in batches, each copied
// into a device buffer, screened and searched on its own, its k-lists merged into the running ones.

namespace {

constexpr size_t kMinBatchRows = kTileRefs;           // halving a batch stops at one tile of rows...
constexpr size_t kMinPassQueries = kBlockQueries;     // ...and a pass at one block of queries
constexpr size_t kPlannedQueries = (size_t)1 << 16;   // the queries an automatic plan at upload leaves room for
constexpr int kMergeThreads = 128;

// Merges a batch's k-lists (ids counted from the batch's first row, `offset`) into the running ones, keeping the k
// smallest by (distance, row); one warp per query, entry j of both lists in lane j, placed by merged_places (the
// running entries all come from lower rows). Every lane reads before any writes (the shuffles order them), so the
// merge is in place; no per-thread arrays, so no local memory to reserve on a device that is short of it.
__global__ void merge_kernel(uint32_t *__restrict__ run_ids, float *__restrict__ run_d,
                             const uint32_t *__restrict__ batch_ids, const float *__restrict__ batch_d, size_t m,
                             int k, uint32_t offset)
{
    const size_t q = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = (int)(threadIdx.x % 32);
    if (q >= m) // the whole warp: q is the warp's
        return;
    const size_t row = q * (size_t)k;
    const bool mine = lane < k;
    const float a = mine ? run_d[row + lane] : INFINITY, b = mine ? batch_d[row + lane] : INFINITY;
    const uint32_t a_id = mine ? run_ids[row + lane] : UINT32_MAX, b_id = mine ? batch_ids[row + lane] : UINT32_MAX;
    int a_at, b_at;
    merged_places(a, b, k, lane, a_at, b_at);
    __syncwarp();
    if (mine && a_at < k) {
        run_ids[row + a_at] = a_id;
        run_d[row + a_at] = a;
    }
    if (mine && b_at < k) {
        run_ids[row + b_at] = b_id == UINT32_MAX ? UINT32_MAX : b_id + offset;
        run_d[row + b_at] = b;
    }
}

} // namespace

struct grip_bruteforce_cuda_ref {
    float *rows;      // resident: n x dim, device memory; NULL when streamed
    float *host_rows; // streamed: n x dim, host memory (pinned when host_pinned); NULL when resident
    size_t n, dim;
    int device;
    grip_bruteforce_screen *screen; // resident: the tensor-core screening of the rows; NULL where it does not apply
    grip_bruteforce_cuda_options options; // how the rows are screened and searched (a streamed handle's every batch)
    bool streamed, host_pinned;
    size_t batch_rows;  // streamed: rows per batch, planned at upload, or the caller's (batch_forced)
    bool batch_forced;  // the caller chose batch_rows: searches keep it instead of planning their own
    size_t query_limit; // the most queries a search holds on the device at once; 0: as many as fit
};

// Reference rows on the device that one search walks: a resident handle's, or one batch of a streamed one.
struct ref_batch {
    const float *rows;
    size_t n, dim;
    const grip_bruteforce_screen *screen;
};

// The search of one device-resident batch: screened where the rows were prepared for it and k is small
// enough, else the exact kernel alone. Both give grip_bruteforce_search's answer; the caller synchronises.
static grip_status search_rows(grip_ctx *ctx, const ref_batch &b, const float *queries, size_t m, uint32_t k,
                               float max_sqdist, uint32_t *ids, float *sqdist)
{
    if (b.screen && k <= GRIP_BRUTEFORCE_SCREEN_MAX_K)
        return grip_bruteforce_screen_search(ctx, b.screen, b.rows, queries, m, k, max_sqdist, ids, sqdist);
    return grip_bruteforce_cuda_launch(ctx, b.rows, b.n, queries, m, b.dim, k, max_sqdist, ids, sqdist);
}

// Device bytes of `rows` of the handle's reference rows with their screening.
static size_t batch_bytes(const grip_bruteforce_cuda_ref *h, size_t rows)
{
    return rows * h->dim * sizeof(float) + grip_bruteforce_screen_bytes(rows, h->dim, h->options);
}

// Device bytes a pass over `queries` queries of the handle takes beside the reference rows: the queries, the running
// and the batch's k-lists (ids and distances), and the screened search's scratch.
static size_t pass_query_bytes(const grip_bruteforce_cuda_ref *h, size_t queries, uint32_t k)
{
    return queries * (h->dim * sizeof(float) + 4 * (size_t)k * sizeof(float)) +
           grip_bruteforce_screen_search_bytes(queries, h->dim, k, h->options);
}

// The device memory a streamed search plans with: what is free once the context's pool has handed its cached blocks
// back to the driver (a streamed search is the one that fills the device: it pays the pool's growth again), less a
// margin for the allocations' granularity and the runtime's own needs (the plan is a first guess: a failed
// allocation halves it).
static grip_status device_budget(grip_ctx *ctx, size_t *budget)
{
    *budget = 0;
    grip_status st = grip_cuda_pool_trim(ctx);
    if (st != GRIP_OK)
        return st;
    size_t free_bytes = 0, total = 0;
    GRIP_CUDA_CHECK(ctx, cudaMemGetInfo(&free_bytes, &total));
    const size_t margin = free_bytes / 16 + ((size_t)32 << 20);
    *budget = free_bytes > margin ? free_bytes - margin : 0;
    return GRIP_OK;
}

// The rows of a batch that fit in `budget` bytes beside `reserved` ones: whole tiles, at least one, at most the
// handle's n.
static size_t plan_batch_rows(const grip_bruteforce_cuda_ref *h, size_t budget, size_t reserved)
{
    const size_t n = h->n;
    const size_t sample = (size_t)1 << 16; // the screening's fixed bytes spread over many rows
    const size_t per_row = (batch_bytes(h, sample) + sample - 1) / sample;
    size_t rows = budget > reserved ? (budget - reserved) / per_row / kTileRefs * kTileRefs : 0;
    if (rows < kMinBatchRows)
        rows = kMinBatchRows;
    return rows < n ? rows : (n > 0 ? n : 1);
}

// How a search cuts its work: queries per pass (each pass walks every reference row) and, streamed, rows per batch.
struct pass_plan {
    size_t queries, batch_rows;
};

static grip_status plan_passes(grip_ctx *ctx, const grip_bruteforce_cuda_ref *h, size_t m, uint32_t k, pass_plan *p)
{
    p->queries = h->query_limit && h->query_limit < m ? h->query_limit : m;
    p->batch_rows = h->batch_rows;
    if (!h->streamed || h->batch_forced)
        return GRIP_OK; // a resident search learns its limits from failed allocations alone
    size_t budget = 0;
    grip_status st = device_budget(ctx, &budget);
    if (st != GRIP_OK)
        return st;
    // the queries get at most half of the budget (every pass streams the whole reference), the batch the rest
    while (p->queries > kMinPassQueries && pass_query_bytes(h, p->queries, k) > budget / 2)
        p->queries = (p->queries + 1) / 2;
    p->batch_rows = plan_batch_rows(h, budget, pass_query_bytes(h, p->queries, k));
    return GRIP_OK;
}

// After the device ran out of memory: a smaller batch (streamed, down to one tile), else fewer queries per pass
// (down to one block). false when both are as small as they go.
static bool shrink_plan(const grip_bruteforce_cuda_ref *h, pass_plan *p, size_t pass_queries)
{
    if (h->streamed && p->batch_rows > kMinBatchRows) {
        p->batch_rows = p->batch_rows / 2 > kMinBatchRows ? p->batch_rows / 2 : kMinBatchRows;
        return true;
    }
    if (pass_queries > kMinPassQueries) {
        p->queries = pass_queries / 2 > kMinPassQueries ? pass_queries / 2 : kMinPassQueries;
        return true;
    }
    return false;
}

// One search's arguments: queries, ids and sqdist all in host memory (host) or all on the device.
struct search_io {
    const float *queries;
    size_t m;
    uint32_t k;
    float max_sqdist;
    uint32_t *ids;
    float *sqdist;
    bool host;
};

// Device buffers of one pass, only those it needs: a host search's queries and running k-lists; a streamed
// handle's batch of rows and the batch's k-lists.
struct pass_buffers {
    float *queries;
    uint32_t *ids;
    float *sqdist;
    float *batch;
    uint32_t *batch_ids;
    float *batch_sqdist;
};

// From the context's pool (a streamed search trimmed it first: device_budget). The caller frees them, also after a
// failure.
static grip_status pass_buffers_alloc(grip_ctx *ctx, pass_buffers *b, const grip_bruteforce_cuda_ref *h,
                                      const search_io &io, size_t queries, size_t batch_rows)
{
    const size_t lists = queries * io.k;
    grip_status st = GRIP_OK;
    if (io.host) {
        st = grip_cuda_alloc(ctx, queries * h->dim * sizeof(float), (void **)&b->queries);
        if (st == GRIP_OK)
            st = grip_cuda_alloc(ctx, lists * sizeof(uint32_t), (void **)&b->ids);
        if (st == GRIP_OK)
            st = grip_cuda_alloc(ctx, lists * sizeof(float), (void **)&b->sqdist);
    }
    if (st == GRIP_OK && h->streamed) {
        st = grip_cuda_alloc(ctx, batch_rows * h->dim * sizeof(float), (void **)&b->batch);
        if (st == GRIP_OK)
            st = grip_cuda_alloc(ctx, lists * sizeof(uint32_t), (void **)&b->batch_ids);
        if (st == GRIP_OK)
            st = grip_cuda_alloc(ctx, lists * sizeof(float), (void **)&b->batch_sqdist);
    }
    return st;
}

static void pass_buffers_free(pass_buffers *b)
{
    grip_cuda_free(b->queries);
    grip_cuda_free(b->ids);
    grip_cuda_free(b->sqdist);
    grip_cuda_free(b->batch);
    grip_cuda_free(b->batch_ids);
    grip_cuda_free(b->batch_sqdist);
}

static grip_status merge_lists(grip_ctx *ctx, uint32_t *ids, float *sqdist, const uint32_t *batch_ids,
                               const float *batch_sqdist, size_t m, uint32_t k, size_t offset)
{
    const size_t warps = kMergeThreads / 32, blocks = (m + warps - 1) / warps;
    if (blocks > (size_t)INT_MAX)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "knn (cuda): %zu queries exceed one launch", m);
    merge_kernel<<<(unsigned)blocks, kMergeThreads>>>(ids, sqdist, batch_ids, batch_sqdist, m, (int)k,
                                                      (uint32_t)offset);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}

// Rows [b0, b0 + rows) of a streamed handle: copied into the batch buffer, screened when the screened path serves
// k, and searched (ids counted from b0).
static grip_status search_batch(grip_ctx *ctx, const grip_bruteforce_cuda_ref *h, float *batch, size_t b0, size_t rows,
                                const float *queries, size_t m, uint32_t k, float max_sqdist, uint32_t *ids,
                                float *sqdist)
{
    const size_t dim = h->dim;
    if (rows > 0) // ordered after the previous batch's kernels, which read the buffer, on the default stream
        GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, batch, h->host_rows + b0 * dim, rows * dim * sizeof(float),
                                              cudaMemcpyHostToDevice));
    grip_bruteforce_screen *screen = NULL;
    grip_status st = k <= GRIP_BRUTEFORCE_SCREEN_MAX_K
                         ? grip_bruteforce_screen_build(ctx, batch, rows, dim, h->options, &screen)
                         : GRIP_OK;
    if (st == GRIP_OK)
        st = search_rows(ctx, ref_batch{batch, rows, dim, screen}, queries, m, k, max_sqdist, ids, sqdist);
    grip_bruteforce_screen_free(screen);
    return st;
}

// Every batch of a streamed handle against one pass's queries (device memory): the first batch writes the running
// k-lists (ids, sqdist), each later one is merged into them. Batches come in ascending row order, which is what
// sends ties to the lower row. One batch of no rows when n == 0: it writes the padding.
static grip_status stream_batches(grip_ctx *ctx, const grip_bruteforce_cuda_ref *h, const pass_buffers &b,
                                  const float *queries, size_t m, uint32_t k, float max_sqdist, uint32_t *ids,
                                  float *sqdist, size_t batch_rows)
{
    size_t b0 = 0;
    do {
        const size_t rows = h->n - b0 < batch_rows ? h->n - b0 : batch_rows;
        const bool first = b0 == 0;
        grip_status st = search_batch(ctx, h, b.batch, b0, rows, queries, m, k, max_sqdist,
                                      first ? ids : b.batch_ids, first ? sqdist : b.batch_sqdist);
        if (st == GRIP_OK && !first)
            st = merge_lists(ctx, ids, sqdist, b.batch_ids, b.batch_sqdist, m, k, b0);
        if (st != GRIP_OK)
            return st;
        b0 += rows;
    } while (b0 < h->n);
    return GRIP_OK;
}

// One pass: queries [q0, q0 + count) against every reference row, staged through the pass's buffers when the
// search's arrays are in host memory.
static grip_status pass_search(grip_ctx *ctx, const grip_bruteforce_cuda_ref *h, const pass_buffers &b,
                               const search_io &io, size_t q0, size_t count, size_t batch_rows)
{
    const size_t dim = h->dim, k = io.k;
    const float *queries = io.host ? b.queries : io.queries + q0 * dim;
    uint32_t *ids = io.host ? b.ids : io.ids + q0 * k;
    float *sqdist = io.host ? b.sqdist : io.sqdist + q0 * k;
    if (io.host)
        GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, b.queries, io.queries + q0 * dim, count * dim * sizeof(float),
                                              cudaMemcpyHostToDevice));
    grip_status st = h->streamed
                         ? stream_batches(ctx, h, b, queries, count, io.k, io.max_sqdist, ids, sqdist, batch_rows)
                         : search_rows(ctx, ref_batch{h->rows, h->n, dim, h->screen}, queries, count, io.k,
                                       io.max_sqdist, ids, sqdist);
    if (st != GRIP_OK)
        return st;
    if (!io.host) {
        GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
        return GRIP_OK;
    }
    GRIP_CUDA_CHECK(
        ctx, grip_cuda_memcpy(ctx, io.ids + q0 * k, b.ids, count * k * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    GRIP_CUDA_CHECK(
        ctx, grip_cuda_memcpy(ctx, io.sqdist + q0 * k, b.sqdist, count * k * sizeof(float), cudaMemcpyDeviceToHost));
    return GRIP_OK;
}

static grip_status pass_run(grip_ctx *ctx, const grip_bruteforce_cuda_ref *h, const search_io &io, size_t q0,
                            size_t count, size_t batch_rows)
{
    pass_buffers b = {};
    grip_status st = pass_buffers_alloc(ctx, &b, h, io, count, batch_rows);
    if (st == GRIP_OK)
        st = pass_search(ctx, h, b, io, q0, count, batch_rows);
    pass_buffers_free(&b);
    return st;
}

// The search in passes over slices of the queries (one pass when they fit); a pass that runs out of device memory
// runs again with a smaller batch, else fewer queries.
static grip_status search_passes(grip_ctx *ctx, const grip_bruteforce_cuda_ref *h, const search_io &io)
{
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(h->device));
    pass_plan p = {0, 0};
    grip_status st = plan_passes(ctx, h, io.m, io.k, &p);
    size_t count = 0;
    for (size_t q0 = 0; st == GRIP_OK && q0 < io.m;) {
        count = io.m - q0 < p.queries ? io.m - q0 : p.queries;
        st = pass_run(ctx, h, io, q0, count, p.batch_rows);
        if (st == GRIP_ENOMEM && shrink_plan(h, &p, count))
            st = grip_cuda_pool_trim(ctx); // and this pass again
        else if (st == GRIP_OK)
            q0 += count;
    }
    if (st != GRIP_OK && h->streamed)
        grip_fail_append(ctx, "knn (cuda): searching %zu queries (%zu per pass), k = %u, against %zu rows of %zu dims "
                              "streamed in batches of %zu", io.m, count, io.k, h->n, h->dim, p.batch_rows);
    else if (st != GRIP_OK)
        grip_fail_append(ctx, "knn (cuda): searching %zu queries (%zu per pass), k = %u", io.m, count, io.k);
    return st;
}

// The resident form: the rows (copied from host or device memory) and their screening on the device. After a
// failure the handle holds nothing on the device.
static grip_status resident_make(grip_ctx *ctx, grip_bruteforce_cuda_ref *h, const float *ref, cudaMemcpyKind kind)
{
    void *rows = NULL;
    const size_t bytes = h->n * h->dim * sizeof(float);
    grip_status st = grip_cuda_alloc(ctx, bytes, &rows);
    h->rows = (float *)rows;
    if (st == GRIP_OK && bytes > 0)
        st = grip_cuda_status(ctx, grip_cuda_memcpy(ctx, rows, ref, bytes, kind), "cudaMemcpy", __FILE__, __LINE__);
    if (st != GRIP_OK)
        grip_fail_append(ctx, "knn (cuda): copying %zu reference rows of %zu dims to the device", h->n, h->dim);
    if (st == GRIP_OK)
        st = grip_bruteforce_screen_build(ctx, h->rows, h->n, h->dim, h->options, &h->screen);
    if (st != GRIP_OK) {
        grip_bruteforce_screen_free(h->screen);
        h->screen = NULL;
        grip_cuda_free(h->rows);
        h->rows = NULL;
    }
    return st;
}

// Host memory for a streamed handle's rows: pinned, which every batch's copy to the device runs faster from (the
// driver stages pageable memory through a pinned buffer of its own), else pageable (the host may refuse to pin that
// much: the search is then slower, not wrong).
static grip_status host_rows_alloc(grip_ctx *ctx, grip_bruteforce_cuda_ref *h, size_t bytes, bool after_device)
{
    void *pinned = NULL;
    if (cudaMallocHost(&pinned, bytes ? bytes : 1) == cudaSuccess) {
        h->host_rows = (float *)pinned;
        h->host_pinned = true;
        return GRIP_OK;
    }
    (void)cudaGetLastError(); // a refused pinning is not sticky; leave no error behind
    h->host_rows = (float *)malloc(bytes ? bytes : 1);
    if (h->host_rows)
        return GRIP_OK;
    if (!after_device)
        return grip_fail(ctx, GRIP_ENOMEM, "knn (cuda): no host memory for the %zu bytes of rows to stream", bytes);
    grip_fail_append(ctx, "knn (cuda): nor is there host memory for the %zu bytes of rows to stream from", bytes);
    return GRIP_ENOMEM;
}

// The streamed form: a host copy of the rows (downloaded when they are in device memory), searched in batches of
// batch_rows rows when given, else of as many as the device's free memory holds beside a search of
// kPlannedQueries queries (each search plans again from the memory free then).
static grip_status streamed_make(grip_ctx *ctx, grip_bruteforce_cuda_ref *h, const float *ref, cudaMemcpyKind kind,
                                 size_t batch_rows)
{
    const size_t bytes = h->n * h->dim * sizeof(float);
    grip_status st = host_rows_alloc(ctx, h, bytes, batch_rows == 0);
    if (st != GRIP_OK)
        return st;
    h->streamed = true;
    if (bytes > 0 && kind == cudaMemcpyHostToDevice)
        memcpy(h->host_rows, ref, bytes);
    else if (bytes > 0)
        GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, h->host_rows, ref, bytes, cudaMemcpyDeviceToHost));
    h->batch_forced = batch_rows > 0;
    if (h->batch_forced) {
        h->batch_rows = batch_rows < h->n ? batch_rows : (h->n > 0 ? h->n : 1);
        return GRIP_OK;
    }
    size_t budget = 0;
    st = device_budget(ctx, &budget);
    if (st == GRIP_OK)
        h->batch_rows = plan_batch_rows(h, budget, pass_query_bytes(h, kPlannedQueries, GRIP_BRUTEFORCE_SCREEN_MAX_K));
    return st;
}

// Makes the context's device current, choosing it on first use, as every grip_cuda_alloc does.
static grip_status use_context_device(grip_ctx *ctx)
{
    void *probe = NULL;
    grip_status st = grip_cuda_alloc(ctx, 0, &probe);
    grip_cuda_free(probe);
    return st;
}

// Whether the resident form may fit: its bytes against the device's free memory (with the pool trimmed, when they
// seem not to fit, as the rows come from the pool). A guess that spares a hopeless attempt (copying tens of GB,
// then failing on the screening); the allocations decide. When it says no, the last error says why.
static grip_status resident_may_fit(grip_ctx *ctx, const grip_bruteforce_cuda_ref *h, bool *fits)
{
    const size_t need = batch_bytes(h, h->n);
    size_t free_bytes = 0, total = 0;
    GRIP_CUDA_CHECK(ctx, cudaMemGetInfo(&free_bytes, &total));
    *fits = need <= free_bytes;
    if (*fits)
        return GRIP_OK;
    grip_status st = grip_cuda_pool_trim(ctx);
    if (st != GRIP_OK)
        return st;
    GRIP_CUDA_CHECK(ctx, cudaMemGetInfo(&free_bytes, &total));
    *fits = need <= free_bytes;
    if (!*fits)
        (void)grip_fail(ctx, GRIP_ENOMEM, "knn (cuda): %zu rows of %zu dims take %zu bytes on the device with their "
                                          "screening, more than its %zu free", h->n, h->dim, need, free_bytes);
    return GRIP_OK;
}

// The options a handle takes: every field within its range (src/index/bruteforce_cuda.h), the first bad one named.
static grip_status check_options(grip_ctx *ctx, const grip_bruteforce_cuda_options *o)
{
    if (!o)
        return grip_fail(ctx, GRIP_EINVAL,
                         "knn (cuda): no options (GRIP_BRUTEFORCE_CUDA_OPTIONS_DEFAULT for the defaults)");
    if (o->precision != GRIP_BRUTEFORCE_CUDA_INT8 && o->precision != GRIP_BRUTEFORCE_CUDA_FP16)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): options.precision %d is neither int8 nor fp16",
                         (int)o->precision);
    if (o->kernel != GRIP_BRUTEFORCE_CUDA_KERNEL_AUTO && o->kernel != GRIP_BRUTEFORCE_CUDA_KERNEL_MMA_SYNC)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): options.kernel %d is neither auto nor mma_sync",
                         (int)o->kernel);
    if (o->rescreen_capacity < 1 || o->rescreen_capacity > GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): options.rescreen_capacity %u is outside [1, %d]",
                         o->rescreen_capacity, GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY);
    return GRIP_OK;
}

// A handle over a copy of ref (n x dim; host memory for cudaMemcpyHostToDevice, device memory of the context's
// device for cudaMemcpyDeviceToDevice) searched as the options say: resident when the device holds it, else
// streamed; streamed in batches of batch_rows rows when batch_rows > 0.
static grip_status ref_make(grip_ctx *ctx, const float *ref, size_t n, size_t dim, cudaMemcpyKind kind,
                            size_t batch_rows, const grip_bruteforce_cuda_options *options,
                            grip_bruteforce_cuda_ref **out)
{
    if (!out)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): no place for the uploaded reference");
    *out = NULL;
    grip_status st = check_options(ctx, options);
    if (st != GRIP_OK)
        return st;
    if (dim == 0)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): dim must be >= 1");
    if (n > 0 && !ref)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): reference is NULL with %zu rows", n);
    if (n >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): %zu reference rows exceed the 32-bit ids", n);
    if (n > 0 && dim > SIZE_MAX / 2 / sizeof(float) / n) // the byte counts below stay far from overflowing
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): %zu rows of %zu dims exceed any memory", n, dim);
    grip_bruteforce_cuda_ref *h = (grip_bruteforce_cuda_ref *)calloc(1, sizeof *h);
    if (!h)
        return grip_fail(ctx, GRIP_ENOMEM, "knn (cuda): out of host memory");
    h->n = n;
    h->dim = dim;
    h->options = *options;
    st = use_context_device(ctx);
    h->device = ctx->device;
    bool resident = batch_rows == 0;
    if (st == GRIP_OK && resident)
        st = resident_may_fit(ctx, h, &resident);
    if (st == GRIP_OK && resident)
        st = resident_make(ctx, h, ref, kind);
    if (st == GRIP_ENOMEM && resident) { // the device could not hold the rows after all
        resident = false;
        st = GRIP_OK;
    }
    if (st == GRIP_OK && !resident) // the last error says why, unless the caller asked for batches
        st = streamed_make(ctx, h, ref, kind, batch_rows);
    if (st != GRIP_OK) {
        grip_bruteforce_cuda_ref_free(h);
        return st;
    }
    *out = h;
    return GRIP_OK;
}

extern "C" grip_status grip_bruteforce_cuda_ref_upload(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                                       const grip_bruteforce_cuda_options *options,
                                                       grip_bruteforce_cuda_ref **out)
{
    return ref_make(ctx, ref, n, dim, cudaMemcpyHostToDevice, 0, options, out);
}

extern "C" grip_status grip_bruteforce_cuda_ref_copy_device(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                                            const grip_bruteforce_cuda_options *options,
                                                            grip_bruteforce_cuda_ref **out)
{
    return ref_make(ctx, ref, n, dim, cudaMemcpyDeviceToDevice, 0, options, out);
}

extern "C" grip_status grip_bruteforce_cuda_ref_upload_batched(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                                        size_t batch_rows, const grip_bruteforce_cuda_options *options,
                                                        grip_bruteforce_cuda_ref **out)
{
    if (out)
        *out = NULL;
    if (batch_rows == 0)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): a streamed reference needs batches of >= 1 row");
    return ref_make(ctx, ref, n, dim, cudaMemcpyHostToDevice, batch_rows, options, out);
}

extern "C" void grip_bruteforce_cuda_ref_limit_queries(grip_bruteforce_cuda_ref *ref, size_t queries)
{
    if (ref)
        ref->query_limit = queries;
}

extern "C" const float *grip_bruteforce_cuda_ref_rows(const grip_bruteforce_cuda_ref *ref)
{
    return ref ? ref->rows : NULL;
}

extern "C" const float *grip_bruteforce_cuda_ref_host_rows(const grip_bruteforce_cuda_ref *ref)
{
    return ref ? ref->host_rows : NULL;
}

extern "C" int grip_bruteforce_cuda_ref_is_streamed(const grip_bruteforce_cuda_ref *ref)
{
    return ref && ref->streamed;
}

extern "C" size_t grip_bruteforce_cuda_ref_device_bytes(const grip_bruteforce_cuda_ref *ref)
{
    if (!ref)
        return 0;
    if (ref->streamed)
        return batch_bytes(ref, ref->batch_rows);
    const size_t screen = ref->screen ? grip_bruteforce_screen_bytes(ref->n, ref->dim, ref->options) : 0;
    return ref->n * ref->dim * sizeof(float) + screen;
}

extern "C" void grip_bruteforce_cuda_ref_free(grip_bruteforce_cuda_ref *ref)
{
    if (!ref)
        return;
    grip_bruteforce_screen_free(ref->screen);
    grip_cuda_free(ref->rows);
    if (ref->host_pinned)
        (void)cudaFreeHost(ref->host_rows);
    else
        free(ref->host_rows);
    free(ref);
}

static grip_status check_search(grip_ctx *ctx, const grip_bruteforce_cuda_ref *ref, const float *queries, size_t m,
                                uint32_t k, float max_sqdist, const uint32_t *ids, const float *sqdist)
{
    if (!ref)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): no reference uploaded");
    if (k > GRIP_BRUTEFORCE_CUDA_MAX_K)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "knn (cuda): k = %u exceeds the GPU's %d", k,
                         GRIP_BRUTEFORCE_CUDA_MAX_K);
    if (m > 0 && !queries)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): queries is NULL with %zu rows", m);
    if (m > 0 && k > 0 && (!ids || !sqdist))
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): output ids or sqdist is NULL");
    if (isnan(max_sqdist))
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): max_sqdist is NaN");
    return GRIP_OK;
}

extern "C" grip_status grip_bruteforce_cuda_search_device(grip_ctx *ctx, const grip_bruteforce_cuda_ref *ref,
                                                          const float *queries, size_t m, uint32_t k, float max_sqdist,
                                                          uint32_t *ids, float *sqdist)
{
    grip_status st = check_search(ctx, ref, queries, m, k, max_sqdist, ids, sqdist);
    if (st != GRIP_OK || m == 0 || k == 0)
        return st;
    return search_passes(ctx, ref, search_io{queries, m, k, max_sqdist, ids, sqdist, false});
}

extern "C" grip_status grip_bruteforce_cuda_search(grip_ctx *ctx, const grip_bruteforce_cuda_ref *ref,
                                                   const float *queries, size_t m, uint32_t k, float max_sqdist,
                                                   uint32_t *ids, float *sqdist)
{
    grip_status st = check_search(ctx, ref, queries, m, k, max_sqdist, ids, sqdist);
    if (st != GRIP_OK || m == 0 || k == 0)
        return st;
    return search_passes(ctx, ref, search_io{queries, m, k, max_sqdist, ids, sqdist, true});
}
