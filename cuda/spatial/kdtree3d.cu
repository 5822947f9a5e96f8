// kdtree3d.cu -- a kd-tree over 3D points built on the GPU and its exact k-nearest search: the GPU twin of
// grip_kdtree3d_knn (see src/spatial/kdtree3d_cuda.h for the contract).
//
// Why this tree. The build must be a few linear passes, not one pass per level: level-by-level builds (Hu 2017,
// Elstad & Granlund 2014, Wald's left-balanced trees) repeat a partition or a sort of all n points about
// log2(n) = 20 times for 1e6 points. Here the build is one radix sort of 64-bit keys and three linear kernels:
//   1. the bounding box and the number of finite points (grid3d's reduction, or the box a caller has measured);
//   2. each point's 63-bit Morton code over the cube around that box (non-finite points get the largest key,
//      so the sort places them after every finite point) and one cub radix sort of (code, index);
//   3. the binary radix tree over the sorted codes (Karras 2012: each internal node found in parallel from its
//      neighbours' common prefixes, ties of equal codes broken by position). A node's split is the first bit
//      where its codes differ: a cut through the middle of its Morton cell on one axis, the axes in turn. So it
//      is a kd-tree of middle splits (FLANN's rule, on the cell rather than the points' extent), with empty
//      splits skipped, and every subtree is a run of the sorted points;
//   4. tight boxes bottom-up (each point climbs; the second child to arrive at a node merges the two boxes).
// A subtree of at most leaf_size points is a leaf: the search scans its run. Each node keeps both children's
// boxes (64 bytes: the search reads both boxes with four 16-byte loads). The build is a handful of launches, no
// host round trip between levels (bench_kdtree3d_cuda and docs/performance.md give its times).
//
// Exactness. Distances are summed exactly as on the CPU (__fsub_rn/__fmul_rn/__fadd_rn: no FMA contraction).
// A node is skipped only when the squared distance from the query to its box exceeds the current k-th
// distance; that bound is computed with the same monotone float operations as a point's distance, so it never
// exceeds the distance of a point in the box, and a box at exactly the k-th distance is still visited (it may
// hold a point at that distance with a lower index). Whatever the tree's shape, the search returns the k
// smallest (distance, index) pairs: the CPU's answer, bit for bit.
//
// Search: one thread per query; the queries are taken in the order of their 30-bit Morton codes (one more radix
// sort) so that the threads of a warp walk the same part of the tree; a search of the tree's own points takes
// them in tree order and needs no sort. The k best are kept sorted in registers (k rounded up to a power of two
// for the kernel's template). The stack holds at most one pending node per level: a node's common prefix is
// longer than its parent's, and prefixes run over 64 code bits and 32 position bits, so no path is deeper
// than 96 nodes and the stack never holds more than kStackMax entries.
#include "cuda/core/device.cuh"
#include "cuda/spatial/grid3d.cuh"
#include "cuda/spatial/kdtree3d.cuh"

extern "C" {
#include "spatial/kdtree3d_cuda.h"
}

#include <cub/device/device_radix_sort.cuh>
#include <math.h>
#include <stdlib.h>
#include <string.h>

using namespace grip_kd;

namespace {

constexpr int kThreads = 256;
constexpr int kSearchThreads = 128;
constexpr uint64_t kNoKey = ~0ull;          // the key of a non-finite point: after every Morton code
constexpr uint32_t kMortonAxisMax = (1u << 21) - 1;
constexpr uint32_t kQueryAxisMax = (1u << 10) - 1;
constexpr size_t kSortQueriesMin = 1024;    // fewer queries are searched in the caller's order

// ---- small helpers ---------------------------------------------------------------------------------------

// Spreads the low 21 bits of v to every third bit of a 64-bit word.
__device__ __forceinline__ uint64_t spread21(uint32_t v)
{
    uint64_t x = v & 0x1fffffu;
    x = (x | x << 32) & 0x1f00000000ffffull;
    x = (x | x << 16) & 0x1f0000ff0000ffull;
    x = (x | x << 8) & 0x100f00f00f00f00full;
    x = (x | x << 4) & 0x10c30c30c30c30c3ull;
    x = (x | x << 2) & 0x1249249249249249ull;
    return x;
}

// Spreads the low 10 bits of v to every third bit of a 32-bit word.
__device__ __forceinline__ uint32_t spread10(uint32_t v)
{
    uint32_t x = v & 0x3ffu;
    x = (x | x << 16) & 0x30000ffu;
    x = (x | x << 8) & 0x300f00fu;
    x = (x | x << 4) & 0x30c30c3u;
    x = (x | x << 2) & 0x9249249u;
    return x;
}

// The cell coordinate of v on a grid of (axis_max + 1) cells per axis starting at lo, scale cells per unit.
__device__ __forceinline__ uint32_t grid_coord(float v, float lo, float scale, uint32_t axis_max)
{
    const float c = (v - lo) * scale;
    if (!(c > 0.0f)) // NaN too: inf * 0 when the span overflows
        return 0u;
    return c >= (float)axis_max ? axis_max : (uint32_t)c;
}

// The cube around the box: its corner and the scale that maps its side onto cells + 1 steps.
struct grid_frame {
    float lo[3];
    float scale;
};

grid_frame grid_frame_make(const float lo[3], const float hi[3], uint32_t axis_max)
{
    float side = fmaxf(fmaxf(hi[0] - lo[0], hi[1] - lo[1]), hi[2] - lo[2]);
    grid_frame g = {{lo[0], lo[1], lo[2]}, side > 0.0f ? (float)(axis_max + 1) / side : 0.0f};
    if (!isfinite(g.scale)) // a side below the smallest normal float: every point in one cell
        g.scale = 0.0f;
    return g;
}

// ---- build kernels ---------------------------------------------------------------------------------------

__global__ void morton_keys_kernel(const float *__restrict__ xyz, uint32_t n, grid_frame g, uint64_t *keys,
                                   uint32_t *ids)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float x = xyz[3 * (size_t)i], y = xyz[3 * (size_t)i + 1], z = xyz[3 * (size_t)i + 2];
    keys[i] = finite3(x, y, z) ? spread21(grid_coord(x, g.lo[0], g.scale, kMortonAxisMax)) << 2 |
                                     spread21(grid_coord(y, g.lo[1], g.scale, kMortonAxisMax)) << 1 |
                                     spread21(grid_coord(z, g.lo[2], g.scale, kMortonAxisMax))
                               : kNoKey;
    ids[i] = i;
}

// The points in key order, each with its row in the caller's xyz in w.
__global__ void gather_kernel(const float *__restrict__ xyz, const uint32_t *__restrict__ ids, uint32_t n,
                              float4 *pts)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint32_t id = ids[i];
    pts[i] = make_float4(xyz[3 * (size_t)id], xyz[3 * (size_t)id + 1], xyz[3 * (size_t)id + 2],
                         __uint_as_float(id));
}

// Length of the common prefix of sorted keys i and j (positions break ties of equal keys); -1 outside [0, n).
__device__ __forceinline__ int common_prefix(const uint64_t *__restrict__ keys, uint32_t n, int64_t i, int64_t j)
{
    if (j < 0 || j >= (int64_t)n)
        return -1;
    const uint64_t a = keys[i], b = keys[j];
    return a != b ? __clzll((long long)(a ^ b)) : 64 + __clz((int)((uint32_t)i ^ (uint32_t)j));
}

// Karras 2012, Fig. 4: internal node i of the radix tree over the n sorted keys (n >= 2 nodes... n - 1 nodes).
__global__ void radix_tree_kernel(const uint64_t *__restrict__ keys, uint32_t n, kd_node *nodes,
                                  uint32_t *node_parent, uint32_t *leaf_parent)
{
    const uint32_t idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx + 1 >= n)
        return;
    const int64_t i = idx;
    const int d = common_prefix(keys, n, i, i + 1) > common_prefix(keys, n, i, i - 1) ? 1 : -1;
    const int dmin = common_prefix(keys, n, i, i - d);
    int64_t lmax = 2;
    while (common_prefix(keys, n, i, i + lmax * d) > dmin)
        lmax *= 2;
    int64_t l = 0;
    for (int64_t t = lmax / 2; t >= 1; t /= 2)
        if (common_prefix(keys, n, i, i + (l + t) * d) > dmin)
            l += t;
    const int64_t j = i + l * d;
    const int dnode = common_prefix(keys, n, i, j);
    int64_t s = 0, t = l;
    do {
        t = (t + 1) / 2;
        if (common_prefix(keys, n, i, i + (s + t) * d) > dnode)
            s += t;
    } while (t > 1);
    const uint32_t split = (uint32_t)(i + s * d + (d < 0 ? -1 : 0));
    const uint32_t first = (uint32_t)(d > 0 ? i : j), last = (uint32_t)(d > 0 ? j : i);
    nodes[idx].first = first;
    nodes[idx].split = split;
    nodes[idx].last = last;
    if (first == split)
        leaf_parent[split] = idx;
    else
        node_parent[split] = idx;
    if (last == split + 1)
        leaf_parent[split + 1] = idx;
    else
        node_parent[split + 1] = idx;
}

// Tight boxes bottom-up: each finite point climbs from its leaf; at each node the first child to arrive writes
// its box and stops, the second merges both and goes on (arrivals counted in `arrived`, zeroed beforehand).
__global__ void boxes_kernel(const float4 *__restrict__ pts, uint32_t n, kd_node *nodes,
                             const uint32_t *__restrict__ node_parent, const uint32_t *__restrict__ leaf_parent,
                             uint32_t *arrived)
{
    const uint32_t leaf = blockIdx.x * blockDim.x + threadIdx.x;
    if (leaf >= n)
        return;
    const float4 p = pts[leaf];
    float box[6] = {p.x, p.y, p.z, p.x, p.y, p.z};
    uint32_t child = leaf, node = leaf_parent[leaf];
    for (;;) {
        const int side = nodes[node].split == child ? 0 : 1;
        float *slot = nodes[node].box + 6 * side;
        for (int c = 0; c < 6; ++c)
            slot[c] = box[c];
        __threadfence();
        if (atomicAdd(&arrived[node], 1u) == 0)
            return;
        __threadfence();
        const float *other = nodes[node].box + 6 * (1 - side);
        for (int a = 0; a < 3; ++a) {
            box[a] = fminf(box[a], __ldcg(other + a));
            box[3 + a] = fmaxf(box[3 + a], __ldcg(other + 3 + a));
        }
        if (node == 0)
            return;
        child = node;
        node = node_parent[node];
    }
}

// ---- search ----------------------------------------------------------------------------------------------

struct knn_args {
    kd_view tree;
    const float *queries;    // m x 3, or NULL: the tree's own points in tree order
    const uint32_t *order;   // the queries' order, or NULL: their own
    uint32_t m, k;
    uint32_t *ids;
    float *sqdist;
};

template <int K>
__global__ void __launch_bounds__(kSearchThreads) knn_kernel(knn_args a)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= a.m)
        return;
    float qx, qy, qz;
    uint32_t row;
    if (!a.queries) {
        const float4 p = __ldg(a.tree.pts + t);
        qx = p.x;
        qy = p.y;
        qz = p.z;
        row = __float_as_uint(p.w);
    } else {
        row = a.order ? a.order[t] : t;
        qx = a.queries[3 * (size_t)row];
        qy = a.queries[3 * (size_t)row + 1];
        qz = a.queries[3 * (size_t)row + 2];
    }
    // The list holds K - k sentinels (-inf, which no pair comes before), then the k best so far (+inf and
    // kNoId while empty): its last entry is the k-th, at a fixed place, so the list stays in registers.
    const int skip = K - (int)a.k;
    float ld[K];
    uint32_t li[K];
#pragma unroll
    for (int j = 0; j < K; ++j) {
        ld[j] = j < skip ? -INFINITY : INFINITY;
        li[j] = j < skip ? 0u : kNoId;
    }
    if (a.tree.count > 0 && finite3(qx, qy, qz))
        knn_search<K>(a.tree, qx, qy, qz, ld, li);
    const size_t out = (size_t)row * a.k;
#pragma unroll
    for (int j = 0; j < K; ++j)
        if (j >= skip) {
            a.ids[out + (size_t)(j - skip)] = li[j];
            a.sqdist[out + (size_t)(j - skip)] = ld[j];
        }
}

// 30-bit Morton code of each query in the tree's frame (non-finite: last), and its row.
__global__ void query_keys_kernel(const float *__restrict__ q, uint32_t m, grid_frame g, uint32_t *keys,
                                  uint32_t *rows)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m)
        return;
    const float x = q[3 * (size_t)i], y = q[3 * (size_t)i + 1], z = q[3 * (size_t)i + 2];
    keys[i] = finite3(x, y, z) ? spread10(grid_coord(x, g.lo[0], g.scale, kQueryAxisMax)) << 2 |
                                     spread10(grid_coord(y, g.lo[1], g.scale, kQueryAxisMax)) << 1 |
                                     spread10(grid_coord(z, g.lo[2], g.scale, kQueryAxisMax))
                               : ~0u;
    rows[i] = i;
}

unsigned blocks_for(size_t n, int threads)
{
    return (unsigned)((n + (size_t)threads - 1) / (size_t)threads);
}

// Fails unless p is device (or managed) memory of CUDA device `device`.
grip_status check_device_array(grip_ctx *ctx, const void *p, int device, const char *what)
{
    cudaPointerAttributes attr;
    GRIP_CUDA_CHECK(ctx, cudaPointerGetAttributes(&attr, p));
    if ((attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged) || attr.device != device)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d (cuda): %s is not device memory of CUDA device %d", what,
                         device);
    return GRIP_OK;
}

} // namespace

struct grip_kdtree3d_cuda {
    uint32_t rows;          // points given
    uint32_t count;         // finite points
    uint32_t leaf_size;
    float lo[3], hi[3];     // box of the finite points
    float4 *pts;            // rows entries: the finite points in tree order, then the others; w = row in xyz
    kd_node *nodes;         // count - 1 radix-tree nodes when count > leaf_size, else NULL (the root is a leaf)
    int device;             // the CUDA ordinal its arrays live on
};

namespace {

// ---- build -----------------------------------------------------------------------------------------------

// Device memory of one build; whatever is set is freed by build_buffers_free.
struct build_buffers {
    float *xyz;             // the uploaded points (host input only)
    uint64_t *keys[2];
    uint32_t *ids[2];
    void *sort_tmp;
    size_t sort_bytes;
    uint32_t *node_parent, *leaf_parent, *arrived;
};

void build_buffers_free(build_buffers *b)
{
    grip_cuda_free(b->xyz);
    for (int t = 0; t < 2; ++t) {
        grip_cuda_free(b->keys[t]);
        grip_cuda_free(b->ids[t]);
    }
    grip_cuda_free(b->sort_tmp);
    grip_cuda_free(b->node_parent);
    grip_cuda_free(b->leaf_parent);
    grip_cuda_free(b->arrived);
}

// One device allocation of `bytes` into *p (typed).
template <typename T> grip_status alloc(grip_ctx *ctx, T **p, size_t bytes)
{
    void *v = NULL;
    grip_status st = grip_cuda_alloc(ctx, bytes, &v);
    *p = (T *)v;
    return st;
}

// The sort's and the tree's arrays of n points: the build's first allocations (the first chooses the device).
grip_status build_alloc_points(grip_ctx *ctx, build_buffers *b, uint32_t n, grip_kdtree3d_cuda *t)
{
    grip_status st = GRIP_OK;
    for (int i = 0; i < 2 && st == GRIP_OK; ++i) {
        st = alloc(ctx, &b->keys[i], (size_t)n * sizeof(uint64_t));
        if (st == GRIP_OK)
            st = alloc(ctx, &b->ids[i], (size_t)n * sizeof(uint32_t));
    }
    if (st == GRIP_OK)
        st = alloc(ctx, &t->pts, (size_t)n * sizeof(float4));
    if (st != GRIP_OK)
        return st;
    GRIP_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(NULL, b->sort_bytes, b->keys[0], b->keys[1], b->ids[0],
                                                         b->ids[1], (int)n));
    return alloc(ctx, &b->sort_tmp, b->sort_bytes);
}

// The nodes of a tree of t->count finite points (none when the root is a leaf).
grip_status build_alloc_nodes(grip_ctx *ctx, build_buffers *b, grip_kdtree3d_cuda *t)
{
    if (t->count <= t->leaf_size)
        return GRIP_OK;
    const size_t inner = (size_t)t->count - 1;
    grip_status st = alloc(ctx, &t->nodes, inner * sizeof(kd_node));
    if (st == GRIP_OK)
        st = alloc(ctx, &b->node_parent, inner * sizeof(uint32_t));
    if (st == GRIP_OK)
        st = alloc(ctx, &b->leaf_parent, (size_t)t->count * sizeof(uint32_t));
    if (st == GRIP_OK)
        st = alloc(ctx, &b->arrived, inner * sizeof(uint32_t));
    return st;
}

// Queues the build's kernels; waits for them when `wait`.
grip_status build_run(grip_ctx *ctx, build_buffers *b, const float *xyz, uint32_t n, bool wait, grip_kdtree3d_cuda *t)
{
    const grid_frame g = grid_frame_make(t->lo, t->hi, kMortonAxisMax);
    morton_keys_kernel<<<blocks_for(n, kThreads), kThreads>>>(xyz, n, g, b->keys[0], b->ids[0]);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceRadixSort::SortPairs(b->sort_tmp, b->sort_bytes, b->keys[0], b->keys[1],
                                                                b->ids[0], b->ids[1], (int)n));
    gather_kernel<<<blocks_for(n, kThreads), kThreads>>>(xyz, b->ids[1], n, t->pts);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    if (t->nodes) {
        const uint32_t nf = t->count;
        radix_tree_kernel<<<blocks_for(nf - 1, kThreads), kThreads>>>(b->keys[1], nf, t->nodes, b->node_parent,
                                                                      b->leaf_parent);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
        GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(b->arrived, 0, (size_t)(nf - 1) * sizeof(uint32_t), 0));
        boxes_kernel<<<blocks_for(nf, kThreads), kThreads>>>(t->pts, nf, t->nodes, b->node_parent, b->leaf_parent,
                                                             b->arrived);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
    }
    if (wait)
        GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

// The build proper, with its buffers owned by the caller (freed there on every path; the frees are
// stream-ordered, so a build that does not wait may free them while its kernels are still queued). known: the
// finite points' box and count, or NULL to measure them (which waits on the device).
grip_status build_tree(grip_ctx *ctx, build_buffers *b, const float *xyz, grip_memory xyz_mem, uint32_t n,
                       const grip_grid3d_bounds *known, bool wait, grip_kdtree3d_cuda *t)
{
    grip_status st = build_alloc_points(ctx, b, n, t);
    if (st != GRIP_OK)
        return st;
    t->device = ctx->device; // chosen by the first allocation
    if (xyz_mem == GRIP_MEM_HOST) {
        int device = -1;
        void *dev = NULL;
        st = grip_cuda_upload(ctx, xyz, (size_t)n * 3 * sizeof(float), &dev, &device);
        b->xyz = (float *)dev;
        if (st != GRIP_OK)
            return st;
        xyz = b->xyz;
    } else if ((st = check_device_array(ctx, xyz, t->device, "xyz")) != GRIP_OK) {
        return st;
    }
    grip_grid3d_bounds box;
    if (known)
        box = *known;
    else if ((st = grip_grid3d_measure(ctx, xyz, n, &box)) != GRIP_OK)
        return st;
    t->count = box.finite;
    for (int a = 0; a < 3; ++a) {
        t->lo[a] = t->count ? box.lo[a] : 0.0f;
        t->hi[a] = t->count ? box.hi[a] : 0.0f;
    }
    if ((st = build_alloc_nodes(ctx, b, t)) != GRIP_OK)
        return st;
    return build_run(ctx, b, xyz, n, wait, t);
}

// ---- search ----------------------------------------------------------------------------------------------

// Device memory of one search; whatever is set is freed by knn_buffers_free.
struct knn_buffers {
    float *queries;          // uploaded queries (host input only)
    uint32_t *keys[2], *rows[2];
    void *sort_tmp;
    size_t sort_bytes;
    uint32_t *ids;           // results on the device (host output only)
    float *sqdist;
};

void knn_buffers_free(knn_buffers *b)
{
    grip_cuda_free(b->queries);
    for (int t = 0; t < 2; ++t) {
        grip_cuda_free(b->keys[t]);
        grip_cuda_free(b->rows[t]);
    }
    grip_cuda_free(b->sort_tmp);
    grip_cuda_free(b->ids);
    grip_cuda_free(b->sqdist);
}

// Puts the m queries in Morton order: b->rows[1] lists their rows in that order.
grip_status knn_sort_queries(grip_ctx *ctx, knn_buffers *b, const grip_kdtree3d_cuda *t, const float *queries,
                             uint32_t m)
{
    grip_status st = GRIP_OK;
    for (int i = 0; i < 2 && st == GRIP_OK; ++i) {
        st = alloc(ctx, &b->keys[i], (size_t)m * sizeof(uint32_t));
        if (st == GRIP_OK)
            st = alloc(ctx, &b->rows[i], (size_t)m * sizeof(uint32_t));
    }
    if (st != GRIP_OK)
        return st;
    GRIP_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(NULL, b->sort_bytes, b->keys[0], b->keys[1], b->rows[0],
                                                         b->rows[1], (int)m));
    if ((st = alloc(ctx, &b->sort_tmp, b->sort_bytes)) != GRIP_OK)
        return st;
    const grid_frame g = grid_frame_make(t->lo, t->hi, kQueryAxisMax);
    query_keys_kernel<<<blocks_for(m, kThreads), kThreads>>>(queries, m, g, b->keys[0], b->rows[0]);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceRadixSort::SortPairs(b->sort_tmp, b->sort_bytes, b->keys[0], b->keys[1],
                                                                b->rows[0], b->rows[1], (int)m));
    return GRIP_OK;
}

template <int K> grip_status knn_launch(grip_ctx *ctx, const knn_args &a)
{
    knn_kernel<K><<<blocks_for(a.m, kSearchThreads), kSearchThreads>>>(a);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}

grip_status knn_dispatch(grip_ctx *ctx, const knn_args &a)
{
    if (a.k <= 1)
        return knn_launch<1>(ctx, a);
    if (a.k <= 2)
        return knn_launch<2>(ctx, a);
    if (a.k <= 4)
        return knn_launch<4>(ctx, a);
    if (a.k <= 8)
        return knn_launch<8>(ctx, a);
    if (a.k <= 16)
        return knn_launch<16>(ctx, a);
    return knn_launch<32>(ctx, a);
}

// The search proper, with its buffers owned by the caller (freed there on every path).
grip_status knn_run(grip_ctx *ctx, knn_buffers *b, const grip_kdtree3d_cuda *t, const float *queries, uint32_t m,
                    grip_memory queries_mem, uint32_t k, uint32_t *ids, float *sqdist, grip_memory out_mem)
{
    grip_status st = GRIP_OK;
    const size_t cells = (size_t)m * k;
    if (queries && queries_mem == GRIP_MEM_HOST) {
        int device = -1;
        void *dev = NULL;
        st = grip_cuda_upload(ctx, queries, (size_t)m * 3 * sizeof(float), &dev, &device);
        b->queries = (float *)dev;
        if (st != GRIP_OK)
            return st;
    } else if (queries && (st = check_device_array(ctx, queries, t->device, "queries")) != GRIP_OK) {
        return st;
    }
    const float *dq = b->queries ? b->queries : queries;
    if (out_mem == GRIP_MEM_HOST) {
        if ((st = alloc(ctx, &b->ids, cells * sizeof(uint32_t))) != GRIP_OK ||
            (st = alloc(ctx, &b->sqdist, cells * sizeof(float))) != GRIP_OK)
            return st;
    } else if ((st = check_device_array(ctx, ids, t->device, "ids")) != GRIP_OK ||
               (st = check_device_array(ctx, sqdist, t->device, "sqdist")) != GRIP_OK) {
        return st;
    }
    if (dq && m >= kSortQueriesMin && t->count > 0 && (st = knn_sort_queries(ctx, b, t, dq, m)) != GRIP_OK)
        return st;
    knn_args a;
    a.tree = grip_kdtree3d_cuda_view(t);
    a.queries = dq;
    a.order = b->rows[1];
    a.m = m;
    a.k = k;
    a.ids = b->ids ? b->ids : ids;
    a.sqdist = b->sqdist ? b->sqdist : sqdist;
    if ((st = knn_dispatch(ctx, a)) != GRIP_OK)
        return st;
    if (out_mem == GRIP_MEM_HOST) {
        GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, ids, b->ids, cells * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, sqdist, b->sqdist, cells * sizeof(float), cudaMemcpyDeviceToHost));
    }
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

bool memory_kind_valid(grip_memory mem)
{
    return mem == GRIP_MEM_HOST || mem == GRIP_MEM_CUDA;
}

} // namespace

namespace {

// grip_kdtree3d_cuda_build, with the box of the finite points when the caller knows it, waiting or not.
grip_status build_checked(grip_ctx *ctx, const float *xyz, size_t n, grip_memory xyz_mem, uint32_t leaf_size,
                          const grip_grid3d_bounds *known, bool wait, grip_kdtree3d_cuda **out)
{
    if (!out)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d (cuda) build: out is NULL");
    *out = NULL;
    if (!xyz && n > 0)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d (cuda) build: xyz is NULL with %zu points", n);
    if (n > INT32_MAX) // cub's sorts count items in an int
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d (cuda) build: %zu points, more than the tree indexes", n);
    if (leaf_size > GRIP_KDTREE3D_CUDA_LEAF_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d (cuda) build: leaf_size = %u is above %d", leaf_size,
                         GRIP_KDTREE3D_CUDA_LEAF_MAX);
    if (!memory_kind_valid(xyz_mem))
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d (cuda) build: xyz memory kind %d is unknown", (int)xyz_mem);
    grip_kdtree3d_cuda *t = (grip_kdtree3d_cuda *)calloc(1, sizeof *t);
    if (!t)
        return grip_fail(ctx, GRIP_ENOMEM, "kdtree3d (cuda) build: out of host memory for the tree");
    t->device = ctx->device;
    t->rows = (uint32_t)n;
    t->leaf_size = leaf_size ? leaf_size : GRIP_KDTREE3D_CUDA_LEAF_DEFAULT;
    grip_status st = GRIP_OK;
    if (n > 0) {
        build_buffers b = {};
        st = build_tree(ctx, &b, xyz, xyz_mem, (uint32_t)n, known, wait, t);
        build_buffers_free(&b);
    }
    if (st != GRIP_OK) {
        grip_kdtree3d_cuda_free(t);
        return st;
    }
    *out = t;
    return GRIP_OK;
}

} // namespace

extern "C" grip_status grip_kdtree3d_cuda_build(grip_ctx *ctx, const float *xyz, size_t n, grip_memory xyz_mem,
                                                uint32_t leaf_size, grip_kdtree3d_cuda **out)
{
    return build_checked(ctx, xyz, n, xyz_mem, leaf_size, NULL, true, out);
}

grip_status grip_kdtree3d_cuda_build_queued(grip_ctx *ctx, const float *xyz_dev, uint32_t n,
                                            const grip_grid3d_bounds &box, uint32_t leaf_size,
                                            grip_kdtree3d_cuda **out)
{
    return build_checked(ctx, xyz_dev, n, GRIP_MEM_CUDA, leaf_size, &box, false, out);
}

grip_kd::kd_view grip_kdtree3d_cuda_view(const grip_kdtree3d_cuda *t)
{
    grip_kd::kd_view v;
    v.nodes = t->nodes;
    v.pts = t->pts;
    v.count = t->count;
    v.root_count = t->nodes ? 0 : t->count;
    v.leaf_size = t->leaf_size;
    return v;
}

extern "C" void grip_kdtree3d_cuda_free(grip_kdtree3d_cuda *tree)
{
    if (!tree)
        return;
    grip_cuda_free(tree->pts);
    grip_cuda_free(tree->nodes);
    free(tree);
}

extern "C" size_t grip_kdtree3d_cuda_rows(const grip_kdtree3d_cuda *tree)
{
    return tree ? tree->rows : 0;
}

extern "C" size_t grip_kdtree3d_cuda_size(const grip_kdtree3d_cuda *tree)
{
    return tree ? tree->count : 0;
}

extern "C" grip_status grip_kdtree3d_cuda_knn(grip_ctx *ctx, const grip_kdtree3d_cuda *tree, const float *queries,
                                              size_t m, grip_memory queries_mem, uint32_t k, uint32_t *ids,
                                              float *sqdist, grip_memory out_mem)
{
    if (!tree || !ids || !sqdist)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d (cuda) knn: %s is NULL",
                         !tree ? "tree" : (!ids ? "ids" : "sqdist"));
    if (k == 0)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d (cuda) knn: k = 0");
    if (k > GRIP_KDTREE3D_CUDA_MAX_K)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "kdtree3d (cuda) knn: k = %u is more than the GPU keeps (%d)", k,
                         GRIP_KDTREE3D_CUDA_MAX_K);
    if (m > INT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d (cuda) knn: %zu queries, more than the search indexes", m);
    if (!queries && m != tree->rows)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d (cuda) knn: queries NULL (the tree's own points) with m = %zu, "
                         "but the tree was built from %u rows", m, tree->rows);
    if (!memory_kind_valid(queries_mem) || !memory_kind_valid(out_mem))
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d (cuda) knn: %s memory kind %d is unknown",
                         memory_kind_valid(out_mem) ? "queries" : "ids/sqdist",
                         memory_kind_valid(out_mem) ? (int)queries_mem : (int)out_mem);
    if (m == 0)
        return GRIP_OK;
    knn_buffers b = {};
    grip_status st = knn_run(ctx, &b, tree, queries, (uint32_t)m, queries_mem, k, ids, sqdist, out_mem);
    knn_buffers_free(&b);
    return st;
}
