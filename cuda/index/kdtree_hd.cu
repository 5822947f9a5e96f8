// kdtree_hd.cu -- the descriptor kd-trees of src/index/kdtree_hd.h on the GPU: the build level by level over all
// nodes of a level at once, and the searches in rounds with per-leaf query buffers (P-BANNS). Contract:
// src/index/kdtree_hd_cuda.h. Every rule that decides a result is the CPU twin's (src/index/kdtree_hd.c), so that
// for the same tree and the same bound the GPU answers exactly what the CPU does:
//  - build: boxes are exact minima and maxima (order free; -0 is stored as +0 on both sides), the split choice
//    is the same serial code (thread 0 of the node's block), the children are numbered by an exclusive scan of
//    the level's split flags in node order, and each node's rows are partitioned stably by a block scan;
//  - box distances: lane j sums dimensions j, j+32, ... in order, then a __shfl_xor butterfly, lane 0's value
//    (grip_kdtree_hd_box_sqdist emulates exactly this); row distances: one lane per row, dimensions in order;
//    every product and sum with __fsub_rn/__fmul_rn/__fadd_rn (no FMA), as the CPU's float code;
//  - the frontier (stack or bounded queue) holds a set of (key, node) kept sorted by a total order, so the order
//    in which a round's candidates arrive does not matter; the top-k list is ordered by (distance, row) and skips
//    rows already listed, so the order in which a leaf's rows are offered does not matter either.
// A round: k_advance (a warp per active query: pop until a node is within the limit, descend to a leaf pushing
// the farther children), the (leaf, query) pairs sorted by leaf and run-length encoded, k_scan_leaves (a block per
// leaf: its rows staged window by window in shared memory, transposed, each buffered query's distances computed
// by a warp), k_retire (count the leaf; still active?) and a compaction of the active queries. Once fewer than
// finish_below are active, they are finished by the exact brute-force kernel (cuda/index/bruteforce.cu).
#include "cuda/core/device.cuh"
#include "cuda/index/bruteforce.cuh"
#include "cuda/index/bruteforce_screen.cuh"

extern "C" {
#include "index/kdtree_hd_cuda.h"
}

#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <math.h>
#include <stdlib.h>
#include <string.h>

namespace {

constexpr uint32_t kLeaf = GRIP_KDTREE_HD_LEAF;
constexpr uint32_t kNone = 0xffffffffu;
constexpr int kQueue = GRIP_KDTREE_HD_QUEUE;
constexpr unsigned kFull = 0xffffffffu;
constexpr int kThreads = 128;          // warps of 32: a query each (advance, start)
constexpr int kBuildThreads = 256;     // a node's block in the build
constexpr uint32_t kBoxChunk = 256;    // rows per block of the box reduction
constexpr int kWindow = 32;            // leaf rows staged at a time (a lane each)
constexpr int kWindowStride = kWindow + 1; // padded: conflict-free transposed stores

// ---- arithmetic shared with the CPU twin -------------------------------------------------------------------

__host__ __device__ inline uint32_t float_key(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return (b & 0x80000000u) ? ~b : b | 0x80000000u;
}

__device__ inline float key_float(uint32_t k)
{
    uint32_t b = (k & 0x80000000u) ? k & 0x7fffffffu : ~k;
    return __uint_as_float(b);
}

__host__ __device__ inline uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// grip_kdtree_hd_pick
__device__ inline uint32_t split_pick(uint64_t seed, uint32_t tree, uint32_t node, uint32_t choices)
{
    uint64_t h = splitmix64(seed ^ splitmix64(((uint64_t)tree << 32) | node));
    return choices > 1 ? (uint32_t)(h % choices) : 0;
}

__device__ inline bool span_before(float sa, uint32_t a, float sb, uint32_t b)
{
    return sa > sb || (sa == sb && a < b);
}

// split_dimension of kdtree_hd.c, line for line.
__device__ uint32_t split_dimension(const float *lo, const float *hi, uint32_t dim, uint32_t top_spans,
                                   uint64_t seed, uint32_t tree, uint32_t local_node)
{
    uint32_t nonzero = 0;
    for (uint32_t d = 0; d < dim; ++d)
        nonzero += __fsub_rn(hi[d], lo[d]) > 0.0f;
    if (nonzero == 0)
        return kNone;
    uint32_t choices = top_spans < nonzero ? top_spans : nonzero;
    uint32_t pick = split_pick(seed, tree, local_node, choices);
    uint32_t best = kNone;
    float best_span = 0.0f;
    for (uint32_t r = 0; r <= pick; ++r) {
        uint32_t prev = best;
        float prev_span = best_span;
        best = kNone;
        for (uint32_t d = 0; d < dim; ++d) {
            float s = __fsub_rn(hi[d], lo[d]);
            if (prev != kNone && !span_before(prev_span, prev, s, d))
                continue;
            if (best == kNone || span_before(s, d, best_span, best)) {
                best = d;
                best_span = s;
            }
        }
    }
    return best;
}

__device__ inline bool entry_before(float ka, uint32_t na, float kb, uint32_t nb)
{
    return ka < kb || (ka == kb && na < nb);
}

// grip_kdtree_hd_box_sqdist, as a warp computes it; every lane gets lane 0's value.
__device__ float box_sqdist_warp(const float *q, const float *lo, const float *hi, uint32_t dim, int lane)
{
    float part = 0.0f;
    for (uint32_t d = (uint32_t)lane; d < dim; d += 32) {
        const float below = __fsub_rn(lo[d], q[d]), above = __fsub_rn(q[d], hi[d]);
        const float gap = below > 0.0f ? below : (above > 0.0f ? above : 0.0f);
        part = __fadd_rn(part, __fmul_rn(gap, gap));
    }
    for (int off = 16; off > 0; off /= 2)
        part = __fadd_rn(part, __shfl_xor_sync(kFull, part, off));
    return __shfl_sync(kFull, part, 0);
}

// ---- build kernels -------------------------------------------------------------------------------------------

__global__ void k_finite_rows(const float *__restrict__ rows, uint32_t n, uint32_t dim, uint8_t *flags,
                              uint32_t *iota)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint8_t ok = 1;
    for (uint32_t d = 0; d < dim; ++d)
        ok &= isfinite(rows[(size_t)i * dim + d]) ? 1 : 0;
    flags[i] = ok;
    iota[i] = i;
}

__global__ void k_root(uint32_t *begin, uint32_t *count, uint32_t root, uint32_t first, uint32_t n)
{
    begin[root] = first;
    count[root] = n;
}

__global__ void k_box_init(uint32_t *lo_keys, uint32_t *hi_keys, size_t cells)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < cells) {
        lo_keys[i] = 0xffffffffu;
        hi_keys[i] = 0u;
    }
}

// Block (x, y): rows [y * kBoxChunk, ...) of level node x; each thread reduces its dimensions over the chunk and
// merges them into the node's keys with one atomic per dimension.
__global__ void k_box_reduce(const float *__restrict__ rows, const uint32_t *__restrict__ perm,
                             const uint32_t *__restrict__ begin, const uint32_t *__restrict__ count,
                             uint32_t level_begin, uint32_t dim, uint32_t *lo_keys, uint32_t *hi_keys)
{
    const uint32_t node = level_begin + blockIdx.x, c = count[node], j0 = blockIdx.y * kBoxChunk;
    if (j0 >= c)
        return;
    const uint32_t j1 = c - j0 < kBoxChunk ? c : j0 + kBoxChunk;
    const uint32_t *p = perm + begin[node];
    for (uint32_t d = threadIdx.x; d < dim; d += blockDim.x) {
        uint32_t lo = 0xffffffffu, hi = 0u;
        for (uint32_t j = j0; j < j1; ++j) {
            const uint32_t key = float_key(__fadd_rn(rows[(size_t)p[j] * dim + d], 0.0f)); // -0 -> +0
            lo = key < lo ? key : lo;
            hi = key > hi ? key : hi;
        }
        atomicMin(&lo_keys[(size_t)blockIdx.x * dim + d], lo);
        atomicMax(&hi_keys[(size_t)blockIdx.x * dim + d], hi);
    }
}

struct build_params {
    uint32_t dim, node_size, top_spans, tree, root, depth;
    uint64_t seed;
};

// Block x: the box of level node x from its keys, then its split decision (node_decide of kdtree_hd.c).
__global__ void k_decide(const uint32_t *__restrict__ lo_keys, const uint32_t *__restrict__ hi_keys,
                         uint32_t level_begin, build_params bp, const uint32_t *__restrict__ count, float *box_min,
                         float *box_max, uint32_t *child, uint32_t *split_dim, float *split_val, uint32_t *splits)
{
    const uint32_t node = level_begin + blockIdx.x, c = count[node];
    float *lo = box_min + (size_t)node * bp.dim, *hi = box_max + (size_t)node * bp.dim;
    for (uint32_t d = threadIdx.x; d < bp.dim; d += blockDim.x) {
        lo[d] = c ? key_float(lo_keys[(size_t)blockIdx.x * bp.dim + d]) : INFINITY;
        hi[d] = c ? key_float(hi_keys[(size_t)blockIdx.x * bp.dim + d]) : -INFINITY;
    }
    __syncthreads();
    if (threadIdx.x != 0)
        return;
    child[node] = kLeaf;
    split_dim[node] = 0;
    split_val[node] = 0.0f;
    splits[blockIdx.x] = 0;
    if (c <= bp.node_size || bp.depth >= GRIP_KDTREE_HD_MAX_DEPTH)
        return;
    const uint32_t d = split_dimension(lo, hi, bp.dim, bp.top_spans, bp.seed, bp.tree, node - bp.root);
    if (d == kNone)
        return;
    const float mid = __fmul_rn(__fadd_rn(lo[d], hi[d]), 0.5f);
    split_dim[node] = d;
    split_val[node] = mid < hi[d] ? mid : lo[d];
    splits[blockIdx.x] = 1;
}

// Block x: if level node x splits, its children (numbered first_free + 2 * its rank among the level's splitting
// nodes) and the stable partition of its rows (<= split left), through scratch.
__global__ void k_partition(const float *__restrict__ rows, uint32_t dim, uint32_t level_begin, uint32_t first_free,
                            const uint32_t *__restrict__ splits, const uint32_t *__restrict__ ranks, uint32_t *child,
                            const uint32_t *__restrict__ split_dim, const float *__restrict__ split_val,
                            uint32_t *begin, uint32_t *count, uint32_t *perm, uint32_t *scratch)
{
    using block_scan = cub::BlockScan<uint32_t, kBuildThreads>;
    __shared__ typename block_scan::TempStorage scan_storage;
    __shared__ uint32_t n_left;
    if (!splits[blockIdx.x])
        return;
    const uint32_t node = level_begin + blockIdx.x, left = first_free + 2 * ranks[blockIdx.x];
    const uint32_t b = begin[node], c = count[node], sd = split_dim[node];
    const float sv = split_val[node];
    if (threadIdx.x == 0)
        n_left = 0;
    __syncthreads();
    uint32_t mine = 0;
    for (uint32_t j = threadIdx.x; j < c; j += kBuildThreads)
        mine += rows[(size_t)perm[b + j] * dim + sd] <= sv;
    atomicAdd(&n_left, mine);
    __syncthreads();
    const uint32_t total_left = n_left;
    uint32_t running = 0;
    for (uint32_t base = 0; base < c; base += kBuildThreads) {
        const uint32_t j = base + threadIdx.x;
        const uint32_t goes_left = j < c && rows[(size_t)perm[b + j] * dim + sd] <= sv;
        uint32_t before = 0, chunk_left = 0;
        block_scan(scan_storage).ExclusiveSum(goes_left, before, chunk_left);
        if (j < c) {
            const uint32_t lefts_before = running + before;
            scratch[b + (goes_left ? lefts_before : total_left + (j - lefts_before))] = perm[b + j];
        }
        running += chunk_left;
        __syncthreads(); // scan storage reused
    }
    for (uint32_t j = threadIdx.x; j < c; j += kBuildThreads)
        perm[b + j] = scratch[b + j];
    if (threadIdx.x == 0) {
        child[node] = left;
        begin[left] = b;
        count[left] = total_left;
        begin[left + 1] = b + total_left;
        count[left + 1] = c - total_left;
    }
}

// ---- search kernels -------------------------------------------------------------------------------------------

struct tree_view {
    const uint32_t *child, *split_dim, *roots;
    const float *split_val, *box_min, *box_max;
    const uint32_t *begin, *count, *perm;
    uint32_t dim, n_trees;
    float slack;
};

// Pushes (key, node) into the query's frontier (size is warp-uniform): a stack, or the queue sorted by descending
// (key, node) whose full state drops the farthest entry (frontier_push of kdtree_hd.c, done by the warp).
__device__ void frontier_push(float *keys, uint32_t *nodes, uint32_t &size, float key, uint32_t node, bool queue,
                              int lane)
{
    if (!queue) {
        if (lane == 0) {
            keys[size] = key;
            nodes[size] = node;
        }
        ++size;
        __syncwarp();
        return;
    }
    uint32_t worse = 0; // entries the new one ranks before: the prefix [0, worse)
    for (uint32_t base = 0; base < size; base += 32) {
        const uint32_t i = base + (uint32_t)lane;
        worse += __popc(__ballot_sync(kFull, i < size && entry_before(key, node, keys[i], nodes[i])));
    }
    if (size == (uint32_t)kQueue) {
        if (worse == 0)
            return; // not nearer than the farthest: dropped
        for (uint32_t lo = 1; lo < worse; lo += 32) { // drop entry 0: [1, worse) moves down one
            const uint32_t i = lo + (uint32_t)lane;
            float k = 0.0f;
            uint32_t n = 0;
            if (i < worse) {
                k = keys[i];
                n = nodes[i];
            }
            __syncwarp();
            if (i < worse) {
                keys[i - 1] = k;
                nodes[i - 1] = n;
            }
            __syncwarp();
        }
        if (lane == 0) {
            keys[worse - 1] = key;
            nodes[worse - 1] = node;
        }
        __syncwarp();
        return;
    }
    for (uint32_t hi = size; hi > worse; hi = hi > worse + 32 ? hi - 32 : worse) { // [worse, size) moves up one
        const uint32_t i = hi - 1 - (uint32_t)lane;
        const bool mine = (uint32_t)lane < hi - worse;
        float k = 0.0f;
        uint32_t n = 0;
        if (mine) {
            k = keys[i];
            n = nodes[i];
        }
        __syncwarp();
        if (mine) {
            keys[i + 1] = k;
            nodes[i + 1] = n;
        }
        __syncwarp();
    }
    if (lane == 0) {
        keys[worse] = key;
        nodes[worse] = node;
    }
    ++size;
    __syncwarp();
}

// A warp per query: empty list; the frontier gets tree 0's root (exact) or every root (queue); flags[q] = 1 when
// the query has something to search (it is finite).
__global__ void k_start(const float *__restrict__ queries, uint32_t m, uint32_t k, bool exact, tree_view t,
                        uint32_t *ids, float *sqdist, float *keys, uint32_t *nodes, uint32_t *size, uint32_t *leaves,
                        uint8_t *flags, uint32_t *iota)
{
    const uint32_t qi = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (qi >= m)
        return;
    if ((uint32_t)lane < k) {
        ids[(size_t)qi * k + lane] = kNone;
        sqdist[(size_t)qi * k + lane] = INFINITY;
    }
    const float *q = queries + (size_t)qi * t.dim;
    bool finite = true;
    for (uint32_t d = (uint32_t)lane; d < t.dim; d += 32)
        finite = finite && isfinite(q[d]);
    finite = __all_sync(kFull, finite);
    uint32_t s = 0;
    float *qk = keys + (size_t)qi * kQueue;
    uint32_t *qn = nodes + (size_t)qi * kQueue;
    for (uint32_t tr = 0; finite && tr < (exact ? 1u : t.n_trees); ++tr) {
        const uint32_t root = t.roots[tr];
        const float key = box_sqdist_warp(q, t.box_min + (size_t)root * t.dim, t.box_max + (size_t)root * t.dim,
                                          t.dim, lane);
        frontier_push(qk, qn, s, key, root, !exact, lane);
    }
    if (lane == 0) {
        size[qi] = s;
        leaves[qi] = 0;
        flags[qi] = s > 0;
        iota[qi] = qi;
    }
}

// A warp per active query: pops until a node lies within the limit, descends from it to a leaf pushing each
// farther child within the limit (search_step of kdtree_hd.c up to the leaf scan). pair_leaf[a] gets the leaf,
// kNone when the frontier ran out.
__global__ void k_advance(const uint32_t *__restrict__ active, uint32_t n_active, const float *__restrict__ queries,
                          uint32_t k, float max_sqdist, bool queue, tree_view t, const float *__restrict__ sqdist,
                          float *keys, uint32_t *nodes, uint32_t *size, uint32_t *pair_leaf, uint32_t *pair_query)
{
    const uint32_t a = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (a >= n_active)
        return;
    const uint32_t qi = active[a];
    const float *q = queries + (size_t)qi * t.dim;
    float *qk = keys + (size_t)qi * kQueue;
    uint32_t *qn = nodes + (size_t)qi * kQueue;
    uint32_t s = size[qi], leaf = kNone;
    const float limit = fminf(sqdist[(size_t)qi * k + k - 1], max_sqdist);
    while (s > 0) {
        --s;
        uint32_t node = qn[s];
        if (__fmul_rn(qk[s], t.slack) > limit)
            continue;
        while (t.child[node] != kLeaf) {
            const uint32_t left = t.child[node];
            const bool go_left = q[t.split_dim[node]] <= t.split_val[node];
            const uint32_t far = go_left ? left + 1 : left;
            const float key = box_sqdist_warp(q, t.box_min + (size_t)far * t.dim, t.box_max + (size_t)far * t.dim,
                                              t.dim, lane);
            if (__fmul_rn(key, t.slack) <= limit)
                frontier_push(qk, qn, s, key, far, queue, lane);
            node = go_left ? left : left + 1;
        }
        leaf = node;
        break;
    }
    if (lane == 0) {
        size[qi] = s;
        pair_leaf[a] = leaf;
        pair_query[a] = qi;
    }
}

// Offers the lanes' candidates (d, id; `valid`) to the list held one entry per lane (lanes < k), as list_offer of
// kdtree_hd.c: within the bound, not +inf, before the k-th entry by (distance, row), not listed yet.
__device__ void list_offer_warp(float &ld, uint32_t &lid, float d, uint32_t id, bool valid, uint32_t k,
                                float max_sqdist, int lane)
{
    float kd = __shfl_sync(kFull, ld, k - 1);
    uint32_t kid = __shfl_sync(kFull, lid, k - 1);
    unsigned cand = __ballot_sync(kFull, valid && d <= max_sqdist && d != INFINITY && entry_before(d, id, kd, kid));
    while (cand) {
        const int src = __ffs(cand) - 1;
        cand &= cand - 1;
        const float cd = __shfl_sync(kFull, d, src);
        const uint32_t cid = __shfl_sync(kFull, id, src);
        kd = __shfl_sync(kFull, ld, k - 1);
        kid = __shfl_sync(kFull, lid, k - 1);
        if (!entry_before(cd, cid, kd, kid))
            continue; // the list tightened since the ballot
        if (__ballot_sync(kFull, (uint32_t)lane < k && lid == cid))
            continue; // met already in another tree
        const int pos = __popc(__ballot_sync(kFull, (uint32_t)lane < k && entry_before(ld, lid, cd, cid)));
        grip_screen::list_put(ld, lid, pos, cd, cid, lane);
    }
}

// Block r: the r-th run of the sorted (leaf, query) pairs. The leaf's rows are staged kWindow at a time,
// transposed (s[d * kWindowStride + j]); each warp takes the run's queries in turn, lane j computing the
// distance to staged row j, and merges them into the query's list.
__global__ void k_scan_leaves(const uint32_t *__restrict__ n_runs, const uint32_t *__restrict__ run_leaf,
                              const uint32_t *__restrict__ run_count, const uint32_t *__restrict__ run_offset,
                              const uint32_t *__restrict__ sorted_query, const float *__restrict__ rows,
                              const float *__restrict__ queries, uint32_t k, float max_sqdist, tree_view t,
                              uint32_t *ids, float *sqdist)
{
    extern __shared__ float staged[];
    const uint32_t r = blockIdx.x;
    if (r >= *n_runs || run_leaf[r] == kNone)
        return;
    const uint32_t leaf = run_leaf[r], nq = run_count[r], off = run_offset[r];
    const uint32_t b = t.begin[leaf], c = t.count[leaf], dim = t.dim;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    for (uint32_t w = 0; w < c; w += kWindow) {
        const uint32_t in_window = c - w < (uint32_t)kWindow ? c - w : (uint32_t)kWindow;
        __syncthreads(); // the previous window is done with
        for (uint32_t e = threadIdx.x; e < in_window * dim; e += blockDim.x) {
            const uint32_t j = e / dim, d = e % dim;
            staged[(size_t)d * kWindowStride + j] = rows[(size_t)t.perm[b + w + j] * dim + d];
        }
        __syncthreads();
        const bool mine = (uint32_t)lane < in_window;
        const uint32_t row = mine ? t.perm[b + w + lane] : kNone;
        for (uint32_t qq = (uint32_t)warp; qq < nq; qq += (uint32_t)warps) {
            const uint32_t qi = sorted_query[off + qq];
            const float *q = queries + (size_t)qi * dim;
            float acc = 0.0f;
            if (mine)
                for (uint32_t d = 0; d < dim; ++d)
                    acc = grip_screen::add_squared_diff(acc, q[d], staged[(size_t)d * kWindowStride + lane]);
            const size_t at = (size_t)qi * k + (size_t)lane;
            float ld = (uint32_t)lane < k ? sqdist[at] : INFINITY;
            uint32_t lid = (uint32_t)lane < k ? ids[at] : kNone;
            list_offer_warp(ld, lid, acc, row, mine, k, max_sqdist, lane);
            if ((uint32_t)lane < k) {
                sqdist[at] = ld;
                ids[at] = lid;
            }
        }
    }
}

// A thread per active query: counts the scanned leaf; still active when a leaf was scanned, the bound is not
// reached and the frontier is not empty.
__global__ void k_retire(const uint32_t *__restrict__ active, uint32_t n_active, const uint32_t *__restrict__ pair_leaf,
                         uint32_t checks, const uint32_t *__restrict__ size, uint32_t *leaves, uint8_t *flags)
{
    const uint32_t a = blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= n_active)
        return;
    const uint32_t qi = active[a];
    bool on = pair_leaf[a] != kNone;
    if (on)
        on = (checks == 0 || ++leaves[qi] < checks) && size[qi] > 0;
    flags[a] = on;
}

__global__ void k_gather(const uint32_t *__restrict__ active, uint32_t n_active, const float *__restrict__ queries,
                         uint32_t dim, float *out)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < (size_t)n_active * dim)
        out[e] = queries[(size_t)active[e / dim] * dim + e % dim];
}

__global__ void k_scatter(const uint32_t *__restrict__ active, uint32_t n_active, uint32_t k,
                          const uint32_t *__restrict__ in_ids, const float *__restrict__ in_d, uint32_t *ids,
                          float *sqdist)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < (size_t)n_active * k) {
        const size_t at = (size_t)active[e / k] * k + e % k;
        ids[at] = in_ids[e];
        sqdist[at] = in_d[e];
    }
}

inline unsigned blocks_for(size_t items, int per_block)
{
    return (unsigned)((items + (size_t)per_block - 1) / (size_t)per_block);
}

} // namespace

// ---- the device forest ---------------------------------------------------------------------------------------

struct grip_kdtree_hd_cuda {
    int device;
    uint32_t dim, n_rows, n_points, n_trees, n_nodes, max_depth;
    float box_slack;
    size_t capacity;     // nodes the arrays hold
    float *rows;         // n_rows x dim
    uint32_t *perm;      // n_trees x n_points
    uint32_t *roots;     // n_trees, device
    uint32_t *roots_host;
    uint32_t *child, *split_dim, *begin, *count;
    float *split_val, *box_min, *box_max;
};

extern "C" void grip_kdtree_hd_cuda_free(grip_kdtree_hd_cuda *h)
{
    if (!h)
        return;
    grip_cuda_free(h->rows);
    grip_cuda_free(h->perm);
    grip_cuda_free(h->roots);
    grip_cuda_free(h->child);
    grip_cuda_free(h->split_dim);
    grip_cuda_free(h->begin);
    grip_cuda_free(h->count);
    grip_cuda_free(h->split_val);
    grip_cuda_free(h->box_min);
    grip_cuda_free(h->box_max);
    free(h->roots_host);
    free(h);
}

extern "C" const float *grip_kdtree_hd_cuda_rows(const grip_kdtree_hd_cuda *h)
{
    return h ? h->rows : NULL;
}

// One node array grown to `cap` entries of `width` elements, keeping the first `keep` entries.
template <typename T>
static grip_status grow_array(grip_ctx *ctx, T **arr, size_t keep, size_t cap, size_t width)
{
    void *fresh = NULL;
    grip_status st = grip_cuda_alloc(ctx, cap * width * sizeof(T), &fresh);
    if (st != GRIP_OK)
        return st;
    if (keep > 0) {
        cudaError_t err = GRIP_CUDA_COPY(cudaMemcpy(fresh, *arr, keep * width * sizeof(T), cudaMemcpyDeviceToDevice));
        if (err != cudaSuccess) {
            grip_cuda_free(fresh);
            return grip_cuda_status(ctx, err, "cudaMemcpy", __FILE__, __LINE__);
        }
    }
    grip_cuda_free(*arr);
    *arr = (T *)fresh;
    return GRIP_OK;
}

// Grows every node array to hold `need` nodes (doubling). An array already grown keeps its larger size.
static grip_status nodes_reserve(grip_ctx *ctx, grip_kdtree_hd_cuda *h, size_t need)
{
    if (need <= h->capacity)
        return GRIP_OK;
    if (need >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd (cuda): more than %u nodes", UINT32_MAX - 1);
    size_t cap = h->capacity ? h->capacity : 64;
    while (cap < need)
        cap *= 2;
    const size_t keep = h->n_nodes;
    grip_status st = grow_array(ctx, &h->child, keep, cap, 1);
    if (st == GRIP_OK)
        st = grow_array(ctx, &h->split_dim, keep, cap, 1);
    if (st == GRIP_OK)
        st = grow_array(ctx, &h->begin, keep, cap, 1);
    if (st == GRIP_OK)
        st = grow_array(ctx, &h->count, keep, cap, 1);
    if (st == GRIP_OK)
        st = grow_array(ctx, &h->split_val, keep, cap, 1);
    if (st == GRIP_OK)
        st = grow_array(ctx, &h->box_min, keep, cap, h->dim);
    if (st == GRIP_OK)
        st = grow_array(ctx, &h->box_max, keep, cap, h->dim);
    if (st == GRIP_OK)
        h->capacity = cap;
    return st;
}

// Device scratch of a build: the finite flags and row numbers, per-level keys, split flags and ranks, the
// partition's scratch and cub's temporary storage.
struct build_scratch {
    uint8_t *finite;
    uint32_t *iota, *n_selected, *lo_keys, *hi_keys, *splits, *ranks, *scratch, *max_count;
    void *temp;
    size_t temp_bytes, level_cap; // level_cap: nodes a level's arrays hold
};

static void build_scratch_free(build_scratch *s)
{
    grip_cuda_free(s->finite);
    grip_cuda_free(s->iota);
    grip_cuda_free(s->n_selected);
    grip_cuda_free(s->lo_keys);
    grip_cuda_free(s->hi_keys);
    grip_cuda_free(s->splits);
    grip_cuda_free(s->ranks);
    grip_cuda_free(s->scratch);
    grip_cuda_free(s->max_count);
    grip_cuda_free(s->temp);
    memset(s, 0, sizeof *s);
}

static grip_status build_scratch_alloc(grip_ctx *ctx, build_scratch *s, size_t n, uint32_t dim, size_t slots)
{
    memset(s, 0, sizeof *s);
    const size_t level_cap = n + 1; // a level holds at most one node per finite row (every node is non-empty)
    size_t select_bytes = 0, scan_bytes = 0, max_bytes = 0;
    GRIP_CUDA_CHECK(ctx, cub::DeviceSelect::Flagged(NULL, select_bytes, (uint32_t *)NULL, (uint8_t *)NULL,
                                                     (uint32_t *)NULL, (uint32_t *)NULL, (int64_t)n));
    GRIP_CUDA_CHECK(ctx, cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (uint32_t *)NULL, (uint32_t *)NULL,
                                                       (int64_t)level_cap));
    GRIP_CUDA_CHECK(ctx, cub::DeviceReduce::Max(NULL, max_bytes, (uint32_t *)NULL, (uint32_t *)NULL,
                                                (int64_t)(2 * level_cap)));
    s->temp_bytes = select_bytes > scan_bytes ? select_bytes : scan_bytes;
    s->temp_bytes = s->temp_bytes > max_bytes ? s->temp_bytes : max_bytes;
    s->level_cap = level_cap;
    grip_status st = grip_cuda_alloc(ctx, n, (void **)&s->finite);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, n * sizeof(uint32_t), (void **)&s->iota);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, sizeof(uint32_t), (void **)&s->n_selected);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, sizeof(uint32_t), (void **)&s->max_count);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, level_cap * sizeof(uint32_t), (void **)&s->splits);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, level_cap * sizeof(uint32_t), (void **)&s->ranks);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, slots * sizeof(uint32_t), (void **)&s->scratch);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, s->temp_bytes, &s->temp);
    (void)dim;
    return st;
}

// The per-level box keys, grown to `cells` (level nodes x dim).
static grip_status level_keys_reserve(grip_ctx *ctx, build_scratch *s, size_t cells, size_t *have)
{
    if (cells <= *have)
        return GRIP_OK;
    grip_cuda_free(s->lo_keys);
    grip_cuda_free(s->hi_keys);
    s->lo_keys = s->hi_keys = NULL;
    *have = 0;
    grip_status st = grip_cuda_alloc(ctx, cells * sizeof(uint32_t), (void **)&s->lo_keys);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, cells * sizeof(uint32_t), (void **)&s->hi_keys);
    if (st == GRIP_OK)
        *have = cells;
    return st;
}

// One level of one tree: boxes, decisions, numbering, partitions. *level_end grows by the children made;
// *max_count becomes the largest child's row count.
static grip_status build_level(grip_ctx *ctx, grip_kdtree_hd_cuda *h, build_scratch *s, size_t *keys_have,
                               const build_params &bp, uint32_t level_begin, uint32_t *level_end,
                               uint32_t *max_count)
{
    const uint32_t width = *level_end - level_begin, dim = h->dim;
    grip_status st = level_keys_reserve(ctx, s, (size_t)width * dim, keys_have);
    if (st != GRIP_OK)
        return st;
    k_box_init<<<blocks_for((size_t)width * dim, 256), 256>>>(s->lo_keys, s->hi_keys, (size_t)width * dim);
    const dim3 reduce_grid(width, *max_count ? blocks_for(*max_count, (int)kBoxChunk) : 1);
    k_box_reduce<<<reduce_grid, kBuildThreads>>>(h->rows, h->perm, h->begin, h->count, level_begin, dim, s->lo_keys,
                                                 s->hi_keys);
    k_decide<<<width, kBuildThreads>>>(s->lo_keys, s->hi_keys, level_begin, bp, h->count, h->box_min, h->box_max,
                                       h->child, h->split_dim, h->split_val, s->splits);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx,
                           cub::DeviceScan::ExclusiveSum(s->temp, s->temp_bytes, s->splits, s->ranks, (int64_t)width));
    uint32_t last[2];
    GRIP_CUDA_CHECK(ctx,
                    grip_cuda_memcpy(ctx, &last[0], s->ranks + width - 1, sizeof(uint32_t), cudaMemcpyDeviceToHost));
    GRIP_CUDA_CHECK(ctx,
                    grip_cuda_memcpy(ctx, &last[1], s->splits + width - 1, sizeof(uint32_t), cudaMemcpyDeviceToHost));
    const uint32_t n_split = last[0] + last[1];
    if (n_split == 0)
        return GRIP_OK;
    const uint32_t first_free = h->n_nodes;
    if ((st = nodes_reserve(ctx, h, (size_t)first_free + 2 * (size_t)n_split)) != GRIP_OK)
        return st;
    k_partition<<<width, kBuildThreads>>>(h->rows, dim, level_begin, first_free, s->splits, s->ranks, h->child,
                                          h->split_dim, h->split_val, h->begin, h->count, h->perm, s->scratch);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    h->n_nodes = first_free + 2 * n_split;
    *level_end = h->n_nodes;
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceReduce::Max(s->temp, s->temp_bytes, h->count + first_free, s->max_count,
                                                       (int64_t)(2 * n_split)));
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, max_count, s->max_count, sizeof(uint32_t), cudaMemcpyDeviceToHost));
    return GRIP_OK;
}

static grip_status build_tree(grip_ctx *ctx, grip_kdtree_hd_cuda *h, build_scratch *s, size_t *keys_have,
                              const grip_kdtree_hd_params *p, uint32_t tree)
{
    const uint32_t root = h->n_nodes;
    grip_status st = nodes_reserve(ctx, h, (size_t)root + 1);
    if (st != GRIP_OK)
        return st;
    h->roots_host[tree] = root;
    k_root<<<1, 1>>>(h->begin, h->count, root, tree * h->n_points, h->n_points);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    h->n_nodes = root + 1;
    uint32_t level_begin = root, level_end = root + 1, max_count = h->n_points;
    for (uint32_t depth = 0; level_begin < level_end; ++depth) {
        const build_params bp = {h->dim, p->node_size, p->top_spans, tree, root, depth, p->seed};
        if (depth > h->max_depth)
            h->max_depth = depth;
        const uint32_t this_end = level_end;
        if ((st = build_level(ctx, h, s, keys_have, bp, level_begin, &level_end, &max_count)) != GRIP_OK)
            return st;
        level_begin = this_end;
    }
    return GRIP_OK;
}

// Every tree over the finite rows of h->rows.
static grip_status build_forest(grip_ctx *ctx, grip_kdtree_hd_cuda *h, build_scratch *s,
                                const grip_kdtree_hd_params *p)
{
    const size_t n = h->n_rows;
    if (n > 0) {
        k_finite_rows<<<blocks_for(n, 256), 256>>>(h->rows, (uint32_t)n, h->dim, s->finite, s->iota);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
        GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceSelect::Flagged(s->temp, s->temp_bytes, s->iota, s->finite, h->perm,
                                                               s->n_selected, (int64_t)n));
        GRIP_CUDA_CHECK(ctx,
                        grip_cuda_memcpy(ctx, &h->n_points, s->n_selected, sizeof(uint32_t), cudaMemcpyDeviceToHost));
    }
    for (uint32_t tr = 1; tr < h->n_trees && h->n_points > 0; ++tr)
        GRIP_CUDA_CHECK_COPY(ctx, cudaMemcpy(h->perm + (size_t)tr * h->n_points, h->perm,
                                             (size_t)h->n_points * sizeof(uint32_t), cudaMemcpyDeviceToDevice));
    size_t keys_have = 0;
    for (uint32_t tr = 0; tr < h->n_trees; ++tr) {
        grip_status st = build_tree(ctx, h, s, &keys_have, p, tr);
        if (st != GRIP_OK)
            return st;
    }
    GRIP_CUDA_CHECK(
        ctx, grip_cuda_memcpy(ctx, h->roots, h->roots_host, h->n_trees * sizeof(uint32_t), cudaMemcpyHostToDevice));
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

// A handle with its rows (copied from host or device memory) and its fixed-size arrays.
static grip_status handle_make(grip_ctx *ctx, const float *rows, cudaMemcpyKind kind, size_t n, uint32_t dim,
                               uint32_t trees, grip_kdtree_hd_cuda **out)
{
    grip_kdtree_hd_cuda *h = (grip_kdtree_hd_cuda *)calloc(1, sizeof *h);
    if (!h)
        return grip_fail(ctx, GRIP_ENOMEM, "kdtree_hd (cuda): out of host memory");
    h->dim = dim;
    h->n_rows = (uint32_t)n;
    h->n_trees = trees;
    h->box_slack = 1.0f - (float)(2.0 * dim + 64.0) * 0x1p-24f;
    h->roots_host = (uint32_t *)calloc(trees, sizeof(uint32_t));
    grip_status st = h->roots_host ? GRIP_OK : grip_fail(ctx, GRIP_ENOMEM, "kdtree_hd (cuda): out of host memory");
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, n * dim * sizeof(float), (void **)&h->rows);
    if (st == GRIP_OK)
        h->device = ctx->device;
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, (size_t)trees * n * sizeof(uint32_t), (void **)&h->perm);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, trees * sizeof(uint32_t), (void **)&h->roots);
    if (st == GRIP_OK && n > 0)
        st = grip_cuda_status(ctx, grip_cuda_memcpy(ctx, h->rows, rows, n * dim * sizeof(float), kind), "cudaMemcpy",
                              __FILE__, __LINE__);
    if (st != GRIP_OK) {
        grip_kdtree_hd_cuda_free(h);
        return st;
    }
    *out = h;
    return GRIP_OK;
}

static grip_status check_build(grip_ctx *ctx, const float *rows, size_t n, uint32_t dim,
                               const grip_kdtree_hd_params *p, grip_kdtree_hd_cuda **out)
{
    if (!out || !p)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd (cuda): NULL output or parameters");
    *out = NULL;
    if (dim == 0)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd (cuda): dim must be >= 1");
    if (n > 0 && !rows)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd (cuda): rows is NULL with %zu rows", n);
    if (n >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd (cuda): %zu rows exceed the 32-bit ids", n);
    if (p->trees == 0 || p->node_size == 0 || p->top_spans == 0)
        return grip_fail(ctx, GRIP_EINVAL,
                         "kdtree_hd (cuda): trees (%u), node_size (%u) and top_spans (%u) must be >= 1", p->trees,
                         p->node_size, p->top_spans);
    if ((uint64_t)p->trees * n >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd (cuda): %u trees of %zu rows exceed the 32-bit positions",
                         p->trees, n);
    return GRIP_OK;
}

extern "C" grip_status grip_kdtree_hd_cuda_build(grip_ctx *ctx, const float *rows, int on_device, size_t n,
                                                 uint32_t dim, const grip_kdtree_hd_params *p,
                                                 grip_kdtree_hd_cuda **out)
{
    grip_status st = check_build(ctx, rows, n, dim, p, out);
    if (st != GRIP_OK)
        return st;
    grip_kdtree_hd_cuda *h = NULL;
    st = handle_make(ctx, rows, on_device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice, n, dim, p->trees, &h);
    if (st != GRIP_OK)
        return st;
    build_scratch s;
    st = build_scratch_alloc(ctx, &s, n, dim, (size_t)p->trees * n);
    if (st == GRIP_OK)
        st = build_forest(ctx, h, &s, p);
    build_scratch_free(&s);
    if (st != GRIP_OK) {
        grip_fail_append(ctx, "kdtree_hd (cuda): building %u trees over %zu rows of %u dims", p->trees, n, dim);
        grip_kdtree_hd_cuda_free(h);
        return st;
    }
    *out = h;
    return GRIP_OK;
}

// Copies `count` elements of a device array into a new host array (*dst, malloc'd).
template <typename T>
static grip_status download_array(grip_ctx *ctx, T **dst, const T *src, size_t count)
{
    *dst = (T *)malloc((count ? count : 1) * sizeof(T));
    if (!*dst)
        return grip_fail(ctx, GRIP_ENOMEM, "kdtree_hd (cuda): out of host memory downloading the tree");
    if (count > 0)
        GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, *dst, src, count * sizeof(T), cudaMemcpyDeviceToHost));
    return GRIP_OK;
}

extern "C" grip_status grip_kdtree_hd_cuda_download(grip_ctx *ctx, const grip_kdtree_hd_cuda *h, grip_kdtree_hd **out)
{
    if (!out || !h)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd (cuda): NULL tree or output");
    *out = NULL;
    grip_kdtree_hd *t = (grip_kdtree_hd *)calloc(1, sizeof *t);
    if (!t)
        return grip_fail(ctx, GRIP_ENOMEM, "kdtree_hd (cuda): out of host memory");
    t->dim = h->dim;
    t->n_trees = h->n_trees;
    t->n_nodes = h->n_nodes;
    t->n_rows = h->n_rows;
    t->n_points = h->n_points;
    t->max_depth = h->max_depth;
    t->box_slack = h->box_slack;
    const size_t nn = h->n_nodes;
    grip_status st = download_array(ctx, &t->roots, h->roots, h->n_trees);
    if (st == GRIP_OK)
        st = download_array(ctx, &t->child, h->child, nn);
    if (st == GRIP_OK)
        st = download_array(ctx, &t->split_dim, h->split_dim, nn);
    if (st == GRIP_OK)
        st = download_array(ctx, &t->split_val, h->split_val, nn);
    if (st == GRIP_OK)
        st = download_array(ctx, &t->begin, h->begin, nn);
    if (st == GRIP_OK)
        st = download_array(ctx, &t->count, h->count, nn);
    if (st == GRIP_OK)
        st = download_array(ctx, &t->box_min, h->box_min, nn * h->dim);
    if (st == GRIP_OK)
        st = download_array(ctx, &t->box_max, h->box_max, nn * h->dim);
    if (st == GRIP_OK)
        st = download_array(ctx, &t->perm, h->perm, (size_t)h->n_trees * h->n_points);
    if (st != GRIP_OK) {
        grip_kdtree_hd_free(t);
        return st;
    }
    *out = t;
    return GRIP_OK;
}

// ---- search ----------------------------------------------------------------------------------------------------

// Device state of one search: the frontiers (kQueue entries per query), counters, the active queries, the round's
// (leaf, query) pairs sorted and run-length encoded, cub's temporary storage, and the brute-force finish buffers.
struct search_space {
    float *keys;
    uint32_t *nodes, *size, *leaves;
    uint8_t *flags;
    uint32_t *active, *active_next, *n_selected;
    uint32_t *pair_leaf, *pair_query, *sorted_leaf, *sorted_query, *run_leaf, *run_count, *run_offset, *n_runs;
    void *temp;
    size_t temp_bytes;
};

static void search_space_free(search_space *s)
{
    void *all[] = {s->keys, s->nodes, s->size, s->leaves, s->flags, s->active, s->active_next, s->n_selected,
                   s->pair_leaf, s->pair_query, s->sorted_leaf, s->sorted_query, s->run_leaf, s->run_count,
                   s->run_offset, s->n_runs, s->temp};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        grip_cuda_free(all[i]);
    memset(s, 0, sizeof *s);
}

static grip_status search_space_alloc(grip_ctx *ctx, search_space *s, size_t m)
{
    memset(s, 0, sizeof *s);
    size_t b_select = 0, b_sort = 0, b_rle = 0, b_scan = 0;
    GRIP_CUDA_CHECK(ctx, cub::DeviceSelect::Flagged(NULL, b_select, (uint32_t *)NULL, (uint8_t *)NULL,
                                                     (uint32_t *)NULL, (uint32_t *)NULL, (int64_t)m));
    GRIP_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(NULL, b_sort, (uint32_t *)NULL, (uint32_t *)NULL,
                                                          (uint32_t *)NULL, (uint32_t *)NULL, (int64_t)m));
    GRIP_CUDA_CHECK(ctx, cub::DeviceRunLengthEncode::Encode(NULL, b_rle, (uint32_t *)NULL, (uint32_t *)NULL,
                                                             (uint32_t *)NULL, (uint32_t *)NULL, (int64_t)m));
    GRIP_CUDA_CHECK(ctx, cub::DeviceScan::ExclusiveSum(NULL, b_scan, (uint32_t *)NULL, (uint32_t *)NULL, (int64_t)m));
    size_t bytes = b_select;
    bytes = b_sort > bytes ? b_sort : bytes;
    bytes = b_rle > bytes ? b_rle : bytes;
    s->temp_bytes = b_scan > bytes ? b_scan : bytes;
    const size_t u = sizeof(uint32_t);
    struct {
        void **p;
        size_t bytes;
    } want[] = {{(void **)&s->keys, m * kQueue * sizeof(float)}, {(void **)&s->nodes, m * kQueue * u},
                {(void **)&s->size, m * u},         {(void **)&s->leaves, m * u},
                {(void **)&s->flags, m},            {(void **)&s->active, m * u},
                {(void **)&s->active_next, m * u},  {(void **)&s->n_selected, u},
                {(void **)&s->pair_leaf, m * u},    {(void **)&s->pair_query, m * u},
                {(void **)&s->sorted_leaf, m * u},  {(void **)&s->sorted_query, m * u},
                {(void **)&s->run_leaf, m * u},     {(void **)&s->run_count, m * u},
                {(void **)&s->run_offset, m * u},   {(void **)&s->n_runs, u},
                {&s->temp, s->temp_bytes}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) {
        grip_status st = grip_cuda_alloc(ctx, want[i].bytes, want[i].p);
        if (st != GRIP_OK)
            return st;
    }
    return GRIP_OK;
}

static tree_view view_of(const grip_kdtree_hd_cuda *h)
{
    tree_view t;
    t.child = h->child;
    t.split_dim = h->split_dim;
    t.roots = h->roots;
    t.split_val = h->split_val;
    t.box_min = h->box_min;
    t.box_max = h->box_max;
    t.begin = h->begin;
    t.count = h->count;
    t.perm = h->perm;
    t.dim = h->dim;
    t.n_trees = h->n_trees;
    t.slack = h->box_slack;
    return t;
}

struct search_job {
    const float *queries;
    uint32_t m, k, checks, finish_below;
    float max_sqdist;
    uint32_t *ids;
    float *sqdist;
};

// One round over the n_active queries in s->active; *n_active becomes the number still active (s->active).
static grip_status search_round(grip_ctx *ctx, const grip_kdtree_hd_cuda *h, search_space *s, const search_job &j,
                                uint32_t *n_active, size_t shared_bytes)
{
    const tree_view t = view_of(h);
    const uint32_t n = *n_active;
    k_advance<<<blocks_for((size_t)n * 32, kThreads), kThreads>>>(s->active, n, j.queries, j.k, j.max_sqdist,
                                                                   j.checks != 0, t, j.sqdist, s->keys, s->nodes,
                                                                   s->size, s->pair_leaf, s->pair_query);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceRadixSort::SortPairs(s->temp, s->temp_bytes, s->pair_leaf, s->sorted_leaf,
                                                                s->pair_query, s->sorted_query, (int64_t)n));
    // Encode writes the first n_runs of the n counts (n_runs is a device value), the scan below reads all n: the rest
    // are zeroed first, so that the scan reads no uninitialised memory (compute-sanitizer's initcheck), though
    // k_scan_leaves only reads the first n_runs of its results
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(s->run_count, 0, (size_t)n * sizeof(uint32_t)));
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceRunLengthEncode::Encode(s->temp, s->temp_bytes, s->sorted_leaf, s->run_leaf,
                                                                   s->run_count, s->n_runs, (int64_t)n));
    GRIP_CUDA_CHECK_LAUNCH(
        ctx, cub::DeviceScan::ExclusiveSum(s->temp, s->temp_bytes, s->run_count, s->run_offset, (int64_t)n));
    k_scan_leaves<<<n, kThreads, shared_bytes>>>(s->n_runs, s->run_leaf, s->run_count, s->run_offset,
                                                  s->sorted_query, h->rows, j.queries, j.k, j.max_sqdist, t, j.ids,
                                                  j.sqdist);
    k_retire<<<blocks_for(n, 256), 256>>>(s->active, n, s->pair_leaf, j.checks, s->size, s->leaves, s->flags);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceSelect::Flagged(s->temp, s->temp_bytes, s->active, s->flags, s->active_next,
                                                           s->n_selected, (int64_t)n));
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, n_active, s->n_selected, sizeof(uint32_t), cudaMemcpyDeviceToHost));
    uint32_t *swap = s->active;
    s->active = s->active_next;
    s->active_next = swap;
    return GRIP_OK;
}

// The queries still active, finished by the exact brute-force kernel over all rows.
static grip_status finish_by_brute_force(grip_ctx *ctx, const grip_kdtree_hd_cuda *h, const search_space *s,
                                         const search_job &j, uint32_t n_active)
{
    void *q = NULL, *ids = NULL, *d = NULL;
    grip_status st = grip_cuda_alloc(ctx, (size_t)n_active * h->dim * sizeof(float), &q);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, (size_t)n_active * j.k * sizeof(uint32_t), &ids);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, (size_t)n_active * j.k * sizeof(float), &d);
    if (st == GRIP_OK) {
        k_gather<<<blocks_for((size_t)n_active * h->dim, 256), 256>>>(s->active, n_active, j.queries, h->dim,
                                                                       (float *)q);
        st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "k_gather", __FILE__, __LINE__);
    }
    if (st == GRIP_OK)
        st = grip_bruteforce_cuda_launch(ctx, h->rows, h->n_rows, (const float *)q, n_active, h->dim, j.k, j.max_sqdist,
                                         (uint32_t *)ids, (float *)d);
    if (st == GRIP_OK) {
        k_scatter<<<blocks_for((size_t)n_active * j.k, 256), 256>>>(s->active, n_active, j.k, (const uint32_t *)ids,
                                                                     (const float *)d, j.ids, j.sqdist);
        st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "k_scatter", __FILE__, __LINE__);
    }
    if (st == GRIP_OK)
        st = grip_cuda_status(ctx, cudaStreamSynchronize(0), "cudaStreamSynchronize", __FILE__, __LINE__);
    grip_cuda_free(q);
    grip_cuda_free(ids);
    grip_cuda_free(d);
    return st;
}

static grip_status search_run(grip_ctx *ctx, const grip_kdtree_hd_cuda *h, search_space *s, const search_job &j)
{
    const size_t shared_bytes = (size_t)h->dim * kWindowStride * sizeof(float);
    int optin = 0;
    GRIP_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, h->device));
    if (shared_bytes > (size_t)optin)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "kdtree_hd (cuda): %u dimensions need %zu bytes of shared memory",
                         h->dim, shared_bytes);
    GRIP_CUDA_CHECK(ctx, cudaFuncSetAttribute(k_scan_leaves, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)shared_bytes));
    const tree_view t = view_of(h);
    k_start<<<blocks_for((size_t)j.m * 32, kThreads), kThreads>>>(j.queries, j.m, j.k, j.checks == 0, t, j.ids,
                                                                   j.sqdist, s->keys, s->nodes, s->size, s->leaves,
                                                                   s->flags, s->active_next);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceSelect::Flagged(s->temp, s->temp_bytes, s->active_next, s->flags, s->active,
                                                           s->n_selected, (int64_t)j.m));
    uint32_t n_active = 0;
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, &n_active, s->n_selected, sizeof(uint32_t), cudaMemcpyDeviceToHost));
    const uint32_t finish_below = j.checks == 0 ? 0 : j.finish_below;
    while (n_active > 0 && n_active >= finish_below) {
        grip_status st = search_round(ctx, h, s, j, &n_active, shared_bytes);
        if (st != GRIP_OK)
            return st;
    }
    if (n_active > 0)
        return finish_by_brute_force(ctx, h, s, j, n_active);
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

extern "C" grip_status grip_kdtree_hd_cuda_search(grip_ctx *ctx, const grip_kdtree_hd_cuda *h, const float *queries,
                                                  size_t m, uint32_t k, uint32_t checks, uint32_t finish_below,
                                                  float max_sqdist, uint32_t *ids, float *sqdist)
{
    if (!h)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd (cuda): no tree");
    if (k > GRIP_KDTREE_HD_CUDA_MAX_K)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "kdtree_hd (cuda): k = %u exceeds the GPU's %d", k,
                         GRIP_KDTREE_HD_CUDA_MAX_K);
    if (m > 0 && !queries)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd (cuda): queries is NULL with %zu rows", m);
    if (m > 0 && k > 0 && (!ids || !sqdist))
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd (cuda): output ids or sqdist is NULL");
    if (isnan(max_sqdist))
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd (cuda): max_sqdist is NaN");
    if (m >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd (cuda): %zu queries exceed the 32-bit ids", m);
    if (m == 0 || k == 0)
        return GRIP_OK;
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(h->device));
    search_space s;
    grip_status st = search_space_alloc(ctx, &s, m);
    const search_job j = {queries, (uint32_t)m, k, checks, finish_below, max_sqdist, ids, sqdist};
    if (st == GRIP_OK)
        st = search_run(ctx, h, &s, j);
    search_space_free(&s);
    return st;
}
