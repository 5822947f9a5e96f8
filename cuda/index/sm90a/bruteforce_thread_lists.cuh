// bruteforce_thread_lists.cuh -- the wgmma screening's candidate lists (cuda/index/sm90a/bruteforce_wgmma.cu): one
// short sorted list per thread and query, in the thread's registers.
//
// After a tile's products a thread holds 2 queries x 32 of the tile's 128 rows; the 4 threads of a query see disjoint
// quarters of the rows over the whole walk. Each keeps the best N (at most kThreadList) of its quarter, inserting on
// its own: no atomics, no buffers, no merges, no barriers, no shared memory until the store. Its threshold is its
// list's last value, or lower: after a tile with inserts the 4 threads take the least of theirs (bruteforce_wgmma.cu's
// keep_tile), so a row a thread leaves out is still at or above the bound below. (The shared lists of
// cuda/index/bruteforce_screen.cuh, which the mma.sync kernel keeps, fed through per-query buffers and warp merges: at
// D = 352 and
// 1e5 rows about half the screening's time went to them, most of it while the lists filled in the first tiles.)
//
// The 4 x N entries of a query (32 at N = kThreadList, padded to 32 at the store) are its candidates. They are not
// always its best rows, but every row left out is at or above some thread's last value, so at or above the least of the
// 4: that is the bound the re-rank's certificate uses for the rows outside the list. A kernel may keep fewer entries a
// thread (N, the folded kernel 6): fewer rows then enter the lists, the bound is lower, and the store pads the lists to
// 32.
#ifndef GRIP_CUDA_SM90A_KNN_THREAD_LISTS_CUH
#define GRIP_CUDA_SM90A_KNN_THREAD_LISTS_CUH

#include "cuda/index/bruteforce_screen.cuh"

namespace grip_screen {

constexpr int kThreadList = 8;    // entries per thread and query, at most (the store's 8 lanes a thread)
constexpr int kListThreads = 256; // threads of the block (the wgmma kernel's two warpgroups)
constexpr int kQueryThreads = 4;  // threads sharing a query (lane % 4), each over its own quarter of the rows
static_assert(kQueryThreads * kThreadList == kList, "a query's candidates fill the re-rank's warp");

// A thread's two lists of N entries (query h = 0: row0, 1: row0 + 8), ascending, in registers: every index is a
// constant once the callers' loops are unrolled. V is the screening's value type (float, or int for int8); `empty`
// stands for no entry and is above every value that may enter.
template <class V, int N = kThreadList> struct thread_best {
    static_assert(N >= 1 && N <= kThreadList, "the store's lanes");
    V d[2][N];
    uint32_t id[2][N];

    __device__ __forceinline__ void clear(V empty)
    {
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int e = 0; e < N; ++e) {
                d[h][e] = empty;
                id[h][e] = UINT32_MAX;
            }
    }
    __device__ __forceinline__ V last(int h) const { return d[h][N - 1]; }
    // Inserts (x, row) into list h after its equal values; x is below its last value, which drops out. A
    // compare an entry, then selects for the values and the rows: no memory.
    __device__ __forceinline__ void insert(int h, V x, uint32_t row)
    {
        bool stays[N];
#pragma unroll
        for (int e = 0; e < N; ++e)
            stays[e] = d[h][e] <= x;
#pragma unroll
        for (int e = N - 1; e >= 0; --e) {
            if (stays[e])
                continue;
            const bool here = e == 0 || stays[e - 1];
            d[h][e] = here ? x : d[h][e - 1];
            id[h][e] = here ? row : id[h][e - 1];
        }
    }
};

// The block's lists in shared memory, for their store: entry e of thread tid's list for query h is word
// (2 e + h) x kListThreads + tid, so a warp's writes touch 32 consecutive words (its store's reads conflict 8-way,
// once a walk).
struct thread_lists {
    float *d;
    uint32_t *id;
};

// The bytes of the block's lists (thread_lists_carve's two arrays): the wgmma kernel lays them over its ring.
constexpr size_t kThreadListsBytes = (size_t)kThreadList * 2 * kListThreads * (sizeof(float) + sizeof(uint32_t));

template <class Take> __host__ __device__ inline void thread_lists_carve(thread_lists *l, Take &&take)
{
    l->d = (float *)take((size_t)kThreadList * 2 * kListThreads * sizeof(float));
    l->id = (uint32_t *)take((size_t)kThreadList * 2 * kListThreads * sizeof(uint32_t));
}

__device__ __forceinline__ int thread_list_word(int e, int h, int tid)
{
    return (2 * e + h) * kListThreads + tid;
}

// Writes the thread's lists into the block's, their values turned into the floats of the candidate lists by listed().
template <class V, int N, class Listed>
__device__ __forceinline__ void thread_lists_put(const thread_lists &s, int tid, const thread_best<V, N> &best,
                                                 Listed &&listed)
{
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < N; ++e) {
            s.d[thread_list_word(e, h, tid)] = listed(best.d[h][e]);
            s.id[thread_list_word(e, h, tid)] = best.id[h][e];
        }
}

// Writes the warp's 16 queries' candidates, sorted, to cand_id / cand_x (kList per query, global query qb + q with
// q = 16 warp + i) and their bounds to cand_bound. Query i (i % 8 = lane / 4 of its threads, i / 8 = h) is gathered
// into the warp's lanes, lane L holding entry L % 8 of its thread L / 8 (no row, +inf, past the thread's N), then
// sorted across the warp. By the whole warp, after its threads' thread_lists_put (__syncwarp between).
template <int N>
__device__ __forceinline__ void thread_lists_store(const thread_lists &s, int warp, int lane, size_t qb,
                                                   uint32_t *__restrict__ cand_id, float *__restrict__ cand_x,
                                                   float *__restrict__ cand_bound)
{
    for (int i = 0; i < kQueriesPerWarp; ++i) {
        const int h = i / 8, tid = warp * 32 + 4 * (i % 8) + lane / kThreadList, e = lane % kThreadList;
        float d = e < N ? s.d[thread_list_word(e, h, tid)] : INFINITY;
        uint32_t id = e < N ? s.id[thread_list_word(e, h, tid)] : UINT32_MAX;
        float least_last = e == N - 1 ? d : INFINITY; // the least of the 4 threads' last values, in every lane
        for (int o = 16; o > 0; o >>= 1)
            least_last = fminf(least_last, __shfl_xor_sync(kFullMask, least_last, o));
        warp_bitonic_sort<32>(d, id, lane);
        const size_t q = qb + (size_t)(warp * kQueriesPerWarp + i);
        cand_id[q * kList + lane] = id;
        cand_x[q * kList + lane] = d;
        if (lane == 0)
            cand_bound[q] = least_last;
    }
}

} // namespace grip_screen

#endif
