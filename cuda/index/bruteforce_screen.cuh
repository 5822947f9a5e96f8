// bruteforce_screen.cuh -- what the two screening kernels share (cuda/index/bruteforce_tensor.cu: mma.sync, any sm_80+
// GPU; cuda/index/sm90a/bruteforce_wgmma.cu: wgmma, Hopper only): the prepared rows and the candidates' sizes; the
// mma.sync kernel's lists of each query's kList best screened rows in shared memory, fed through a small per-query
// buffer
// (the wgmma kernel's threads keep their own: cuda/index/sm90a/bruteforce_thread_lists.cuh); and what the exact kernels
// (cuda/index/bruteforce.cu, cuda/index/bruteforce_few.cu, cuda/index/kdtree_hd.cu) share with it: the CPU's distance
// step and the warp-held sorted lists. Internal; the public faces are cuda/index/bruteforce_tensor.cuh and
// cuda/index/bruteforce.cuh.
#ifndef GRIP_CUDA_KNN_SCREEN_CUH
#define GRIP_CUDA_KNN_SCREEN_CUH

#include <cuda_fp16.h>
#include <stddef.h>
#include <stdint.h>

namespace grip_screen {

constexpr int kBlockQueries = 128; // queries per block, in both kernels
constexpr int kTileRows = 128;     // reference rows per tile, in both kernels
constexpr int kList = 32;          // candidates kept per query
constexpr int kBufferCap = 16;     // buffered candidates per query between two merges
constexpr int kQueriesPerWarp = 16; // a warp merges the buffers of queries 16 w .. 16 w + 15
constexpr int kWgmmaChunkBytes = 128; // bytes of a row per staged chunk of the wgmma kernel (the last may be shorter):
                                      // 64 fp16 or 128 int8 dimensions
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kS8NeverNorm = 1 << 30; // above any int8 screened value: the row never enters a list

enum row_state : int { ROW_SCREENED = 0, ROW_NON_FINITE = 1, ROW_OUT_OF_RANGE = 2 };

// Per-row screening data (rows padded to the block or tile size; padding rows are ROW_NON_FINITE).
struct rows_prep {
    union {
        __half *h;        // rows x kdim, scaled and rounded (row-major, or in wgmma tiles: see bruteforce_tensor.cu)
        signed char *s8;  // or quantized to int8 for the wgmma kernel's int8 screening (same layouts, in bytes)
    };
    union {
        float *norm2; // |r|^2 in float (NaN for rows never screened in); int8 queries: |q~|^2, an exact integer
        int *norm2_t; // int8 reference rows: |r~|^2 (kS8NeverNorm for rows never screened in)
    };
    float *inv_scale; // 1 / scale (a power of two); int8 rows: the quantization step
    float *norm_up;   // an upper bound of |r|
    float *resid_up;  // an upper bound of |r - fp16(r)/scale|
    int *state;
};

// A block's candidate lists in shared memory. Lists and buffers are entry-major ([entry][query]) so that
// threads working on different queries hit different words.
struct candidate_lists {
    float *list_d;      // kList x kBlockQueries, each query's best screened values, ascending
    uint32_t *list_id;  // their reference rows
    float *buf_d;       // kBufferCap x kBlockQueries, offered since the last merge
    uint32_t *buf_id;
    int *count;         // kBlockQueries: entries offered since the last merge (may exceed kBufferCap)
    float *threshold;   // kBlockQueries: the list's last value; only rows below it are offered
};

// Carves the lists out of a block's shared memory with the caller's allocator (take(bytes) -> unsigned char *),
// which both kernels also use for the rest of their shared memory.
template <class Take> __host__ __device__ inline void lists_carve(candidate_lists *l, Take &&take)
{
    l->list_d = (float *)take((size_t)kList * kBlockQueries * sizeof(float));
    l->list_id = (uint32_t *)take((size_t)kList * kBlockQueries * sizeof(uint32_t));
    l->buf_d = (float *)take((size_t)kBufferCap * kBlockQueries * sizeof(float));
    l->buf_id = (uint32_t *)take((size_t)kBufferCap * kBlockQueries * sizeof(uint32_t));
    l->count = (int *)take((size_t)kBlockQueries * sizeof(int));
    l->threshold = (float *)take((size_t)kBlockQueries * sizeof(float));
}

__host__ __device__ constexpr size_t round_up(size_t x, size_t to)
{
    return (x + to - 1) / to * to;
}

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

// Offers (d, id) to query q's buffer; false when the buffer was full (offer it again after the next merge).
__device__ __forceinline__ bool buffer_offer(const candidate_lists &s, int q, float d, uint32_t id)
{
    const int at = atomicAdd(&s.count[q], 1);
    if (at >= kBufferCap)
        return false;
    s.buf_d[at * kBlockQueries + q] = d;
    s.buf_id[at * kBlockQueries + q] = id;
    return true;
}

// One dimension of the CPU twin's squared distance (src/index/bruteforce.c): acc + (a - b)^2, each step rounded
// on its own (no FMA contraction), so that a sum over the dimensions in order is the CPU's bit for bit. Every
// exact kernel sums with it.
__device__ __forceinline__ float add_squared_diff(float acc, float a, float b)
{
    const float diff = __fsub_rn(a, b);
    return __fadd_rn(acc, __fmul_rn(diff, diff));
}

// The CPU twin's squared distance of two rows: add_squared_diff over the dimensions in order. One thread sums a
// row pair, reading rows other threads do not share, so the reads are the cost: 16-byte ones when both rows allow
// (several in flight, rather than one L2 round trip per 32-byte sector), the same sum in the same order.
__device__ __forceinline__ float exact_distance(const float *__restrict__ x, const float *__restrict__ y, size_t dim)
{
    float acc = 0.0f;
    size_t d = 0;
    if ((reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y)) % 16 == 0) {
        const float4 *x4 = reinterpret_cast<const float4 *>(x), *y4 = reinterpret_cast<const float4 *>(y);
#pragma unroll 4
        for (; d + 4 <= dim; d += 4) {
            const float4 a = x4[d / 4], b = y4[d / 4];
            acc = add_squared_diff(acc, a.x, b.x);
            acc = add_squared_diff(acc, a.y, b.y);
            acc = add_squared_diff(acc, a.z, b.z);
            acc = add_squared_diff(acc, a.w, b.w);
        }
    }
    for (; d < dim; ++d)
        acc = add_squared_diff(acc, x[d], y[d]);
    return acc;
}

// Places (d, id) at place pos of a warp's sorted list (entry j in lane j), the entries from pos on moving up a lane.
__device__ __forceinline__ void list_put(float &list_d, uint32_t &list_id, int pos, float d, uint32_t id, int lane)
{
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
}

// Inserts (d, id) into a warp's sorted list of kList entries (entry j in lane j), after equal values.
__device__ __forceinline__ void list_insert(float &list_d, uint32_t &list_id, float d, uint32_t id, int lane)
{
    list_put(list_d, list_id, __popc(__ballot_sync(kFullMask, list_d <= d)), d, id, lane);
}

// list_insert for a list of k <= 32 entries whose k-th distance the caller keeps in kth (and has checked d < kth,
// so the entry lands within the first k lanes; lanes >= k only ever hold evicted entries, which are >= kth > d
// and so never counted).
__device__ __forceinline__ void list_insert_kth(float &list_d, uint32_t &list_id, float &kth, float d, uint32_t id,
                                                int k, int lane)
{
    list_insert(list_d, list_id, d, id, lane);
    kth = __shfl_sync(kFullMask, list_d, k - 1);
}

// The places, in the merge of two sorted k-lists (entry j in lane j; a from the earlier, lower rows), of the lane's
// entries a and b: each one's own place plus the other list's entries that go before it, the earlier list first
// on equal distances. Padding (+inf) sorts last, as no listed distance is +inf.
__device__ __forceinline__ void merged_places(float a, float b, int k, int lane, int &a_at, int &b_at)
{
    a_at = lane;
    b_at = lane;
    for (int j = 0; j < k; ++j) {
        a_at += __shfl_sync(kFullMask, b, j) < a;
        b_at += __shfl_sync(kFullMask, a, j) <= b;
    }
}

// Merges the sorted k-list b (entry j in lane j, +inf / UINT32_MAX past k) into the sorted k-list a, whose entries
// come from lower rows (merged_places: a's first on equal distances), through 32 entries of shared memory the
// warp owns (scratch_d, scratch_id).
__device__ __forceinline__ void merge_into(float &a, uint32_t &a_id, float b, uint32_t b_id, int k, int lane,
                                           float *scratch_d, uint32_t *scratch_id)
{
    const bool mine = lane < k;
    int a_at, b_at;
    merged_places(a, b, k, lane, a_at, b_at);
    if (mine && a_at < k) {
        scratch_d[a_at] = a;
        scratch_id[a_at] = a_id;
    }
    if (mine && b_at < k) {
        scratch_d[b_at] = b;
        scratch_id[b_at] = b_id;
    }
    __syncwarp();
    if (mine) {
        a = scratch_d[lane];
        a_id = scratch_id[lane];
    }
    __syncwarp();
}

// A buffer this full is sorted and merged into its list at once (34 shuffles whatever its size) rather than
// inserted entry by entry (about 6 dependent shuffles an entry): the first tiles of a walk fill whole buffers.
// (A build with -DGRIP_BRUTEFORCE_SORT_MERGE_MIN=17 inserts entry by entry always, for side-by-side runs.)
#ifndef GRIP_BRUTEFORCE_SORT_MERGE_MIN
#define GRIP_BRUTEFORCE_SORT_MERGE_MIN 6
#endif
constexpr int kSortMergeMin = GRIP_BRUTEFORCE_SORT_MERGE_MIN;

// Sorts lanes 0 .. N - 1's (d, id) ascending by d (a bitonic network; equal values in any order); N is 16 or 32.
// With N = 16, lanes 16 .. 31 are sorted among themselves, descending: the caller gives them +inf. Equal values may
// swap: a buffer's order is the order of the offers' shared-memory atomics anyway, and the lists' ties do not
// decide any result (the re-rank orders exact distances, then rows).
template <int N> __device__ __forceinline__ void warp_bitonic_sort(float &d, uint32_t &id, int lane)
{
    static_assert(N == 16 || N == 32, "a half warp or a whole one");
#pragma unroll
    for (int size = 2; size <= N; size *= 2)
#pragma unroll
        for (int stride = size / 2; stride > 0; stride /= 2) {
            const float other_d = __shfl_xor_sync(kFullMask, d, stride);
            const uint32_t other_id = __shfl_xor_sync(kFullMask, id, stride);
            const bool keep_less = ((lane & size) == 0) == ((lane & stride) == 0);
            if (keep_less ? other_d < d : other_d > d) {
                d = other_d;
                id = other_id;
            }
        }
}

// The first kList entries of the merge of the sorted list a (kList entries, entry j in lane j) and the sorted b
// (its first nb <= kBufferCap entries, in lanes 0 .. nb - 1), a's entries before b's on equal values, into a. Each
// lane finds by binary search how many of a's entries come before its place (merge path), in registers.
__device__ __forceinline__ void merge_sorted(float &a_d, uint32_t &a_id, float b_d, uint32_t b_id, int nb, int lane)
{
    // the least i in [lo, hi) with a[i] > b[lane - 1 - i], else hi: a's entries among the merge's first `lane`
    int lo = max(0, lane - nb), hi = lane;
#pragma unroll
    for (int step = 0; step < 5; ++step) { // hi - lo <= kBufferCap = 16: 5 halvings empty the range
        const int mid = (lo + hi) / 2;
        const float a_mid = __shfl_sync(kFullMask, a_d, mid & 31);
        const float b_mid = __shfl_sync(kFullMask, b_d, (lane - 1 - mid) & 31);
        if (lo < hi) {
            if (a_mid > b_mid)
                hi = mid;
            else
                lo = mid + 1;
        }
    }
    const int r = lane - lo; // b's entries before this place
    const float a_at = __shfl_sync(kFullMask, a_d, lo & 31), b_at = __shfl_sync(kFullMask, b_d, r & 31);
    const uint32_t a_at_id = __shfl_sync(kFullMask, a_id, lo & 31), b_at_id = __shfl_sync(kFullMask, b_id, r & 31);
    const bool from_a = r >= nb || a_at <= b_at;
    a_d = from_a ? a_at : b_at;
    a_id = from_a ? a_at_id : b_at_id;
}

// Merges the buffers of the warp's kQueriesPerWarp queries into their lists (one list in the warp's lanes at a
// time), updates their thresholds and empties the buffers. One read of the counts finds the queries with entries;
// most rounds give a query none. (Merging only the full buffers, and leaving the others' thresholds to lag, made
// the k-NN benchmark's searches 30% slower.) The caller orders this with the offers (a barrier, or __syncwarp when
// the warp alone offers to its queries).
__device__ __forceinline__ void merge_buffers(const candidate_lists &s, int warp, int lane)
{
    static_assert(kList == 32 && kBufferCap == 16, "merge_sorted's search and the buffer's sort assume these sizes");
    const int mine = lane < kQueriesPerWarp ? min(s.count[warp * kQueriesPerWarp + lane], kBufferCap) : 0;
    unsigned todo = __ballot_sync(kFullMask, mine > 0);
    while (todo) {
        const int i = __ffs(todo) - 1;
        todo &= todo - 1;
        const int q = warp * kQueriesPerWarp + i, n = __shfl_sync(kFullMask, mine, i);
        float list_d = s.list_d[lane * kBlockQueries + q];
        uint32_t list_id = s.list_id[lane * kBlockQueries + q];
        float buf_d = lane < n ? s.buf_d[lane * kBlockQueries + q] : INFINITY;
        uint32_t buf_id = lane < n ? s.buf_id[lane * kBlockQueries + q] : UINT32_MAX;
        if (n >= kSortMergeMin) {
            warp_bitonic_sort<kBufferCap>(buf_d, buf_id, lane);
            merge_sorted(list_d, list_id, buf_d, buf_id, n, lane);
        } else {
            for (int b = 0; b < n; ++b) {
                const float d = __shfl_sync(kFullMask, buf_d, b);
                const uint32_t id = __shfl_sync(kFullMask, buf_id, b);
                if (d < __shfl_sync(kFullMask, list_d, kList - 1))
                    list_insert(list_d, list_id, d, id, lane);
            }
        }
        s.list_d[lane * kBlockQueries + q] = list_d;
        s.list_id[lane * kBlockQueries + q] = list_id;
        if (lane == kList - 1)
            s.threshold[q] = list_d;
    }
    if (lane < kQueriesPerWarp)
        s.count[warp * kQueriesPerWarp + lane] = 0;
}

// Sets every list empty, every count 0 and every threshold to +inf (-inf for the queries whose norm is NaN, which
// are never screened in); by the block's threads, before a barrier.
__device__ __forceinline__ void lists_init(const candidate_lists &s, const float *__restrict__ block_norm2)
{
    for (int i = threadIdx.x; i < kList * kBlockQueries; i += blockDim.x) {
        s.list_d[i] = INFINITY;
        s.list_id[i] = UINT32_MAX;
    }
    for (int i = threadIdx.x; i < kBlockQueries; i += blockDim.x) {
        s.count[i] = 0;
        s.threshold[i] = isnan(block_norm2[i]) ? -INFINITY : INFINITY;
    }
}

// Writes the warp's queries' lists to the candidate arrays (kList per query, global query qb + q), and each list's
// last value to cand_bound: every row outside a full list is screened at least that (+inf: the list is not full).
__device__ __forceinline__ void lists_store(const candidate_lists &s, int warp, int lane, size_t qb,
                                            uint32_t *__restrict__ cand_id, float *__restrict__ cand_d,
                                            float *__restrict__ cand_bound)
{
    for (int i = 0; i < kQueriesPerWarp; ++i) {
        const int q = warp * kQueriesPerWarp + i;
        const float d = s.list_d[lane * kBlockQueries + q];
        cand_id[(qb + q) * kList + lane] = s.list_id[lane * kBlockQueries + q];
        cand_d[(qb + q) * kList + lane] = d;
        if (lane == kList - 1)
            cand_bound[qb + q] = d;
    }
}

} // namespace grip_screen

#endif
