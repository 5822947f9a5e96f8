// bruteforce_few.cu -- exact k-NN for a few queries (the screening's uncertified leftovers, a kd-tree's exact finish),
// bit for bit the CPU twin src/index/bruteforce.c, like cuda/index/bruteforce.cu's kernel.
//
// That kernel computes 64 queries against every row: for 5 queries it does the work of 64 (3.35 ms for 5 queries
// against 1e6 x 352 rows on the H100, k = 32). Here a block takes up to 16 queries, held in shared memory, and a
// range of rows; each lane of a warp takes a row, reads it once from global memory (float4 where the rows allow)
// and sums its distance to each query, dimension after dimension with __fsub_rn/__fmul_rn/__fadd_rn, the CPU's
// very sum: 1.51 ms for the same 5 queries. Still 3x the time of reading the rows once (each lane reads its own
// row, 32 rows a warp); past 16 queries the 64-query kernel is faster (cuda/index/bruteforce_few.cuh).
//
// Lists: each warp walks a contiguous part of its block's range, in row order, and keeps a sorted k-list per query
// in its lanes (cuda/index/bruteforce_screen.cuh's list_insert_kth: after the entries of equal distance, so ties go to
// the lower row, as on the CPU). At the end the block's 8 warps' lists are merged in warp order (merge_into: the
// earlier list first on equal distances) into the range's list; the caller merges the ranges the same way.
#include "cuda/index/bruteforce_few.cuh"
#include "cuda/index/bruteforce_screen.cuh"

#include <math.h>
#include <stdint.h>

namespace {

using grip_screen::kFullMask;

constexpr int kFewThreads = 256;
constexpr int kFewWarps = kFewThreads / 32;

// Shared memory: the group's query rows; at the end, the warps' lists and the merge's scratch in the same bytes.
size_t few_smem_bytes(size_t dim)
{
    const size_t queries = (size_t)GRIP_BRUTEFORCE_FEW_GROUP * dim * sizeof(float);
    const size_t lists = (size_t)(kFewWarps * GRIP_BRUTEFORCE_FEW_GROUP + kFewWarps) * 32 *
                         (sizeof(float) + sizeof(uint32_t));
    return queries > lists ? queries : lists;
}

// Adds the squared differences of 4 dimensions to acc, in order.
__device__ __forceinline__ float add_squares4(float acc, float4 q, float4 r)
{
    acc = grip_screen::add_squared_diff(acc, q.x, r.x);
    acc = grip_screen::add_squared_diff(acc, q.y, r.y);
    acc = grip_screen::add_squared_diff(acc, q.z, r.z);
    return grip_screen::add_squared_diff(acc, q.w, r.w);
}

// The squared distances of row `row` (the lane's) to the group's nq queries (staged in sq, dim floats each).
template <bool kVec4>
__device__ __forceinline__ void row_distances(const float *__restrict__ row, const float *sq, size_t dim, int nq,
                                              float (&acc)[GRIP_BRUTEFORCE_FEW_GROUP])
{
#pragma unroll
    for (int q = 0; q < GRIP_BRUTEFORCE_FEW_GROUP; ++q)
        acc[q] = 0.0f;
    if (kVec4) {
        const float4 *r4 = reinterpret_cast<const float4 *>(row);
        const float4 *q4 = reinterpret_cast<const float4 *>(sq);
        const size_t dim4 = dim / 4;
        for (size_t d = 0; d < dim4; ++d) {
            const float4 r = __ldg(r4 + d);
#pragma unroll
            for (int q = 0; q < GRIP_BRUTEFORCE_FEW_GROUP; ++q)
                if (q < nq)
                    acc[q] = add_squares4(acc[q], q4[(size_t)q * dim4 + d], r);
        }
    } else {
        for (size_t d = 0; d < dim; ++d) {
            const float r = __ldg(row + d);
#pragma unroll
            for (int q = 0; q < GRIP_BRUTEFORCE_FEW_GROUP; ++q)
                if (q < nq)
                    acc[q] = grip_screen::add_squared_diff(acc[q], sq[(size_t)q * dim + d], r);
        }
    }
}

// Merges the block's warps' lists of query q (warp w's at lists_d/id + (w * GROUP + q) * 32) in warp order, by
// one warp; returns the lane's entry of the merged list.
__device__ __forceinline__ void merge_warp_lists(const float *lists_d, const uint32_t *lists_id, float *scratch_d,
                                                 uint32_t *scratch_id, int q, int k, int lane, float &out_d,
                                                 uint32_t &out_id)
{
    const bool mine = lane < k;
    float a = mine ? lists_d[q * 32 + lane] : INFINITY;
    uint32_t a_id = mine ? lists_id[q * 32 + lane] : UINT32_MAX;
    for (int w = 1; w < kFewWarps; ++w) {
        const size_t at = (size_t)(w * GRIP_BRUTEFORCE_FEW_GROUP + q) * 32 + lane;
        grip_screen::merge_into(a, a_id, mine ? lists_d[at] : INFINITY, mine ? lists_id[at] : UINT32_MAX, k, lane,
                                scratch_d, scratch_id);
    }
    out_d = a;
    out_id = a_id;
}

// Block (g, y): queries GROUP g .. GROUP g + GROUP - 1 against rows [y span, (y + 1) span); its lists go to range
// y's m x k arrays (ids + y m k).
template <bool kVec4>
__global__ void __launch_bounds__(kFewThreads)
    knn_few_kernel(const float *__restrict__ ref, size_t n, size_t span, const float *__restrict__ queries, size_t m,
                   size_t dim, int k, float max_sqdist, uint32_t *__restrict__ ids, float *__restrict__ sqdist)
{
    extern __shared__ __align__(16) float few_smem[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const size_t q0 = (size_t)blockIdx.x * GRIP_BRUTEFORCE_FEW_GROUP;
    const int nq = (int)min((size_t)GRIP_BRUTEFORCE_FEW_GROUP, m - q0);
    for (size_t i = threadIdx.x; i < (size_t)nq * dim; i += kFewThreads)
        few_smem[i] = queries[q0 * dim + i];
    __syncthreads();

    // the warp's part of the block's range, whole 32-row steps but the last
    const size_t begin = (size_t)blockIdx.y * span, end = min(n, begin + span);
    const size_t part = ((end - begin + kFewWarps - 1) / kFewWarps + 31) / 32 * 32;
    const size_t w_begin = min(end, begin + (size_t)warp * part), w_end = min(end, w_begin + part);
    const float above_bound = nextafterf(max_sqdist, INFINITY); // d <= max_sqdist exactly when d < this
    float list_d[GRIP_BRUTEFORCE_FEW_GROUP], kth[GRIP_BRUTEFORCE_FEW_GROUP];
    uint32_t list_id[GRIP_BRUTEFORCE_FEW_GROUP];
#pragma unroll
    for (int q = 0; q < GRIP_BRUTEFORCE_FEW_GROUP; ++q) {
        list_d[q] = INFINITY;
        kth[q] = INFINITY;
        list_id[q] = UINT32_MAX;
    }
    for (size_t r0 = w_begin; r0 < w_end; r0 += 32) {
        const size_t row = r0 + (size_t)lane;
        const bool valid = row < w_end;
        float d[GRIP_BRUTEFORCE_FEW_GROUP];
        row_distances<kVec4>(ref + (valid ? row : r0) * dim, few_smem, dim, nq, d);
#pragma unroll
        for (int q = 0; q < GRIP_BRUTEFORCE_FEW_GROUP; ++q) {
            if (q >= nq)
                break;
            unsigned candidates = __ballot_sync(kFullMask, valid && d[q] < fminf(kth[q], above_bound));
            while (candidates) { // in row order: ties go to the lower row
                const int src = __ffs(candidates) - 1;
                candidates &= candidates - 1;
                const float cd = __shfl_sync(kFullMask, d[q], src);
                if (cd < kth[q]) // the list may have tightened since the ballot
                    grip_screen::list_insert_kth(list_d[q], list_id[q], kth[q], cd, (uint32_t)(r0 + (size_t)src), k,
                                                 lane);
            }
        }
    }

    __syncthreads(); // the queries' bytes now hold the warps' lists
    constexpr int kListCells = kFewWarps * GRIP_BRUTEFORCE_FEW_GROUP * 32;
    float *lists_d = few_smem;
    uint32_t *lists_id = reinterpret_cast<uint32_t *>(lists_d + kListCells);
    float *scratch_d = reinterpret_cast<float *>(lists_id + kListCells) + warp * 32;      // kFewWarps x 32
    uint32_t *scratch_id = reinterpret_cast<uint32_t *>(lists_id + kListCells + kFewWarps * 32) + warp * 32;
#pragma unroll
    for (int q = 0; q < GRIP_BRUTEFORCE_FEW_GROUP; ++q) {
        lists_d[(warp * GRIP_BRUTEFORCE_FEW_GROUP + q) * 32 + lane] = list_d[q];
        lists_id[(warp * GRIP_BRUTEFORCE_FEW_GROUP + q) * 32 + lane] = list_id[q];
    }
    __syncthreads();
    for (int q = warp; q < nq; q += kFewWarps) { // warp w merges queries w, w + 8
        float out_d;
        uint32_t out_id;
        merge_warp_lists(lists_d, lists_id, scratch_d, scratch_id, q, k, lane, out_d, out_id);
        const size_t at = ((size_t)blockIdx.y * m + q0 + (size_t)q) * (size_t)k + (size_t)lane;
        if (lane < k) {
            ids[at] = out_id;
            sqdist[at] = out_d;
        }
    }
}

} // namespace

bool grip_bruteforce_few_applies(size_t m, size_t dim)
{
    return m <= GRIP_BRUTEFORCE_FEW_MAX_QUERIES && dim <= GRIP_BRUTEFORCE_FEW_MAX_DIM;
}

size_t grip_bruteforce_few_ranges(size_t m, size_t n, int sms)
{
    const size_t groups = (m + GRIP_BRUTEFORCE_FEW_GROUP - 1) / GRIP_BRUTEFORCE_FEW_GROUP;
    const size_t want = (4 * (size_t)sms + groups - 1) / groups; // about 4 blocks a multiprocessor
    const size_t most = n / GRIP_BRUTEFORCE_FEW_MIN_ROWS;
    size_t ranges = want < most ? want : most;
    if (ranges < 1)
        ranges = 1;
    return ranges < 65535 ? ranges : 65535; // gridDim.y's limit
}

cudaError_t grip_bruteforce_few_enqueue(const float *ref, size_t n, size_t span, size_t ranges, const float *queries,
                                        size_t m, size_t dim, int k, float max_sqdist, uint32_t *ids, float *sqdist)
{
    const dim3 grid((unsigned)((m + GRIP_BRUTEFORCE_FEW_GROUP - 1) / GRIP_BRUTEFORCE_FEW_GROUP), (unsigned)ranges);
    const size_t smem = few_smem_bytes(dim);
    // float4 reads need every row, and the staged queries, 16-byte aligned
    if (dim % 4 == 0 && ((uintptr_t)ref % 16) == 0)
        knn_few_kernel<true><<<grid, kFewThreads, smem>>>(ref, n, span, queries, m, dim, k, max_sqdist, ids, sqdist);
    else
        knn_few_kernel<false><<<grid, kFewThreads, smem>>>(ref, n, span, queries, m, dim, k, max_sqdist, ids, sqdist);
    return cudaGetLastError();
}
