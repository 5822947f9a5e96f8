// knn_bruteforce.cu -- exact brute-force k-NN on the GPU, bit for bit the CPU twin src/index/knn_exact.c.
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
// Searches that the fp16 screening serves go through cuda/knn_tensor.cu, which comes back here for the queries
// whose answer it cannot certify.
//
// Non-finite rows need no special case: a NaN or inf coordinate makes every distance to the row NaN or +inf,
// which fails `d < k-th distance` (the k-th distance starts at +inf), exactly as on the CPU; a non-finite query
// row likewise gets nothing.
#include "cuda/knn_bruteforce.cuh"
#include "cuda/check.cuh"
#include "cuda/knn_tensor.cuh"

extern "C" {
#include "index/knn_cuda.h"
}

#include <limits.h>
#include <math.h>
#include <stdlib.h>

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kBlockQueries = 64;                      // queries per block
constexpr int kTileRefs = 128;                         // reference rows per tile
constexpr int kChunkDims = 8;                          // dimensions staged in shared memory at a time
constexpr int kRowsPerWarp = kBlockQueries / kWarps;   // queries whose lists one warp keeps
constexpr int kQueryStride = kBlockQueries + 4;        // padded (16-byte aligned) rows of the staged chunks
constexpr int kRefStride = kTileRefs + 4;
constexpr unsigned kFullMask = 0xffffffffu;

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
        for (int j = 0; j < kThreadRefs; ++j) {
            const float diff = __fsub_rn(qv[i], rv[j]);
            acc[i][j] = __fadd_rn(acc[i][j], __fmul_rn(diff, diff));
        }
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

// Inserts (d, id) into the warp's sorted list (entry j in lane j), after the entries of equal distance, as the
// CPU's list_insert does. The caller has checked d < kth, so the entry lands within the first k lanes; lanes >= k
// only ever hold evicted entries, which are >= kth > d and so never counted.
__device__ __forceinline__ void list_insert(float &list_d, uint32_t &list_id, float &kth, float d, uint32_t id,
                                            int k, int lane)
{
    const int pos = __popc(__ballot_sync(kFullMask, list_d <= d));
    const float up_d = __shfl_up_sync(kFullMask, list_d, 1);
    const uint32_t up_id = __shfl_up_sync(kFullMask, list_id, 1);
    if (lane > pos) {
        list_d = up_d;
        list_id = up_id;
    }
    if (lane == pos) {
        list_d = d;
        list_id = id;
    }
    kth = __shfl_sync(kFullMask, list_d, k - 1);
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
                    list_insert(list_d[i], list_id[i], kth, cd, (uint32_t)(r0 + (size_t)(c * 32 + src)), k,
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
    knn_exact_kernel(const float *__restrict__ ref, size_t n, const float *__restrict__ queries, size_t m,
                     size_t dim, int k, float max_sqdist, uint32_t *__restrict__ ids, float *__restrict__ sqdist)
{
    __shared__ knn_shared s;
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16, lane = tid % 32, warp = tid / 32;
    const size_t q0 = (size_t)blockIdx.x * kBlockQueries;
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
    fetch_chunk(next_r, ref, 0, n, dim, 0, chunk_length(dim, 0));
    store_chunk(s.q, next_q);
    store_chunk(s.r, next_r);
    for (size_t r0 = 0; r0 < n; r0 += kTileRefs) {
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
            const bool more = next_r0 < n;
            if (more) {
                if (restage_queries)
                    fetch_chunk(next_q, queries, q0, m, dim, next_d0, chunk_length(dim, next_d0));
                fetch_chunk(next_r, ref, next_r0, n, dim, next_d0, chunk_length(dim, next_d0));
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
                const size_t tile_rows = n - r0 < (size_t)kTileRefs ? n - r0 : (size_t)kTileRefs;
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

} // namespace

grip_status grip_knn_cuda_launch(grip_ctx *ctx, const float *ref, size_t n, const float *queries, size_t m,
                                 size_t dim, uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist,
                                 cudaStream_t stream)
{
    const size_t blocks = (m + kBlockQueries - 1) / kBlockQueries;
    if (blocks > (size_t)INT_MAX)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "knn (cuda): %zu queries exceed one launch", m);
    knn_exact_kernel<<<(unsigned)blocks, kThreads, 0, stream>>>(ref, n, queries, m, dim, (int)k, max_sqdist, ids,
                                                                sqdist);
    GRIP_CUDA_CHECK(ctx, cudaGetLastError());
    return GRIP_OK;
}

struct grip_knn_cuda_ref {
    float *rows; // n x dim, device memory
    size_t n, dim;
    int device;
    grip_knn_screen *screen; // the fp16 screening of the rows; NULL where it does not apply (knn_tensor.cuh)
};

// The search of one device-resident batch: fp16-screened where the rows were prepared for it and k is small
// enough, else the exact kernel alone. Both give grip_knn_exact's answer; the caller synchronises.
static grip_status search_rows(grip_ctx *ctx, const grip_knn_cuda_ref *ref, const float *queries, size_t m,
                               uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist)
{
    if (ref->screen && k <= GRIP_KNN_SCREEN_MAX_K)
        return grip_knn_screen_search(ctx, ref->screen, ref->rows, queries, m, k, max_sqdist, ids, sqdist);
    return grip_knn_cuda_launch(ctx, ref->rows, ref->n, queries, m, ref->dim, k, max_sqdist, ids, sqdist, 0);
}

// A handle over a copy of ref (n x dim; host memory for cudaMemcpyHostToDevice, device memory of the context's
// device for cudaMemcpyDeviceToDevice), with its fp16 screening prepared.
static grip_status ref_make(grip_ctx *ctx, const float *ref, size_t n, size_t dim, cudaMemcpyKind kind,
                            grip_knn_cuda_ref **out)
{
    if (!out)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): no place for the uploaded reference");
    *out = NULL;
    if (dim == 0)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): dim must be >= 1");
    if (n > 0 && !ref)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): reference is NULL with %zu rows", n);
    if (n >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): %zu reference rows exceed the 32-bit ids", n);
    grip_knn_cuda_ref *h = (grip_knn_cuda_ref *)calloc(1, sizeof *h);
    if (!h)
        return grip_fail(ctx, GRIP_ENOMEM, "knn (cuda): out of host memory");
    void *rows = NULL;
    const size_t bytes = n * dim * sizeof(float);
    grip_status st = grip_cuda_alloc(ctx, bytes, &rows);
    h->rows = (float *)rows;
    h->n = n;
    h->dim = dim;
    h->device = ctx->device;
    if (st == GRIP_OK && bytes > 0)
        st = grip_cuda_status(ctx, cudaMemcpy(rows, ref, bytes, kind), "cudaMemcpy", __FILE__, __LINE__);
    if (st != GRIP_OK)
        grip_fail_append(ctx, "knn (cuda): copying %zu reference rows of %zu dims to the device", n, dim);
    if (st == GRIP_OK)
        st = grip_knn_screen_build(ctx, h->rows, n, dim, &h->screen);
    if (st != GRIP_OK) {
        grip_knn_cuda_ref_free(h);
        return st;
    }
    *out = h;
    return GRIP_OK;
}

extern "C" grip_status grip_knn_cuda_ref_upload(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                                grip_knn_cuda_ref **out)
{
    return ref_make(ctx, ref, n, dim, cudaMemcpyHostToDevice, out);
}

extern "C" grip_status grip_knn_cuda_ref_copy_device(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                                     grip_knn_cuda_ref **out)
{
    return ref_make(ctx, ref, n, dim, cudaMemcpyDeviceToDevice, out);
}

extern "C" const float *grip_knn_cuda_ref_rows(const grip_knn_cuda_ref *ref)
{
    return ref ? ref->rows : NULL;
}

extern "C" void grip_knn_cuda_ref_free(grip_knn_cuda_ref *ref)
{
    if (!ref)
        return;
    grip_knn_screen_free(ref->screen);
    grip_cuda_free(ref->rows);
    free(ref);
}

static grip_status check_search(grip_ctx *ctx, const grip_knn_cuda_ref *ref, const float *queries, size_t m,
                                uint32_t k, float max_sqdist, const uint32_t *ids, const float *sqdist)
{
    if (!ref)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): no reference uploaded");
    if (k > GRIP_KNN_CUDA_MAX_K)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "knn (cuda): k = %u exceeds the GPU's %d", k, GRIP_KNN_CUDA_MAX_K);
    if (m > 0 && !queries)
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): queries is NULL with %zu rows", m);
    if (m > 0 && k > 0 && (!ids || !sqdist))
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): output ids or sqdist is NULL");
    if (isnan(max_sqdist))
        return grip_fail(ctx, GRIP_EINVAL, "knn (cuda): max_sqdist is NaN");
    return GRIP_OK;
}

extern "C" grip_status grip_knn_cuda_search_device(grip_ctx *ctx, const grip_knn_cuda_ref *ref, const float *queries,
                                                   size_t m, uint32_t k, float max_sqdist, uint32_t *ids,
                                                   float *sqdist)
{
    grip_status st = check_search(ctx, ref, queries, m, k, max_sqdist, ids, sqdist);
    if (st != GRIP_OK || m == 0 || k == 0)
        return st;
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(ref->device));
    st = search_rows(ctx, ref, queries, m, k, max_sqdist, ids, sqdist);
    if (st != GRIP_OK)
        return st;
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

// Device copies of one host search's queries and results.
struct search_buffers {
    float *queries;
    uint32_t *ids;
    float *sqdist;
};

static grip_status search_buffers_alloc(grip_ctx *ctx, search_buffers *b, size_t m, size_t dim, uint32_t k)
{
    GRIP_CUDA_CHECK(ctx, cudaMalloc((void **)&b->queries, m * dim * sizeof(float)));
    GRIP_CUDA_CHECK(ctx, cudaMalloc((void **)&b->ids, m * k * sizeof(uint32_t)));
    GRIP_CUDA_CHECK(ctx, cudaMalloc((void **)&b->sqdist, m * k * sizeof(float)));
    return GRIP_OK;
}

static void search_buffers_free(search_buffers *b)
{
    (void)cudaFree(b->queries);
    (void)cudaFree(b->ids);
    (void)cudaFree(b->sqdist);
}

static grip_status search_through(grip_ctx *ctx, const grip_knn_cuda_ref *ref, const search_buffers *b,
                                  const float *queries, size_t m, uint32_t k, float max_sqdist, uint32_t *ids,
                                  float *sqdist)
{
    GRIP_CUDA_CHECK(ctx, cudaMemcpy(b->queries, queries, m * ref->dim * sizeof(float), cudaMemcpyHostToDevice));
    grip_status st = search_rows(ctx, ref, b->queries, m, k, max_sqdist, b->ids, b->sqdist);
    if (st != GRIP_OK)
        return st;
    GRIP_CUDA_CHECK(ctx, cudaMemcpy(ids, b->ids, m * k * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    GRIP_CUDA_CHECK(ctx, cudaMemcpy(sqdist, b->sqdist, m * k * sizeof(float), cudaMemcpyDeviceToHost));
    return GRIP_OK;
}

extern "C" grip_status grip_knn_cuda_search(grip_ctx *ctx, const grip_knn_cuda_ref *ref, const float *queries,
                                            size_t m, uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist)
{
    grip_status st = check_search(ctx, ref, queries, m, k, max_sqdist, ids, sqdist);
    if (st != GRIP_OK || m == 0 || k == 0)
        return st;
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(ref->device));
    search_buffers b = {NULL, NULL, NULL};
    st = search_buffers_alloc(ctx, &b, m, ref->dim, k);
    if (st == GRIP_OK)
        st = search_through(ctx, ref, &b, queries, m, k, max_sqdist, ids, sqdist);
    search_buffers_free(&b);
    if (st != GRIP_OK)
        grip_fail_append(ctx, "knn (cuda): searching %zu queries, k = %u", m, k);
    return st;
}
