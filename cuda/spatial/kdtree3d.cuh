// kdtree3d.cuh -- the device side of the GPU 3D kd-tree (kdtree3d.cu builds it; src/spatial/kdtree3d_cuda.h is
// its contract): the node layout and the exact k-nearest descent, for kernels of other files that search a tree
// inside their own loops (the batched ICP, cuda/verify/icp.cu) instead of through grip_kdtree3d_cuda_knn.
// kdtree3d.cu's header comment explains the tree, the search order and why the search is exact.
#ifndef GRIP_CUDA_SPATIAL_KDTREE3D_CUH
#define GRIP_CUDA_SPATIAL_KDTREE3D_CUH

#include <stdint.h>

#include "cuda/spatial/grid3d.cuh"

extern "C" {
#include "spatial/kdtree3d_cuda.h"
}

namespace grip_kd {

constexpr int kStackMax = 96;
constexpr uint32_t kNoId = 0xffffffffu;     // an empty result entry

// A node of the radix tree: the boxes of its two children (lo xyz, hi xyz of the left, then of the right) and
// its run [first, last] of the sorted points, split after `split` (left child: [first, split], right child:
// [split + 1, last]). An internal child's index is split (left) or split + 1 (right), as in Karras' layout.
struct __align__(16) kd_node {
    float box[12];
    uint32_t first, split, last, pad;
};

// A node the search has still to visit: ref is a node index (count 0) or the first sorted point of a leaf of
// `count` points; bound is the squared distance from the query to its box.
struct __align__(16) kd_pending {
    uint32_t ref, count;
    float bound;
    uint32_t pad;
};

__device__ __forceinline__ bool finite3(float x, float y, float z)
{
    return isfinite(x) && isfinite(y) && isfinite(z);
}

// The CPU's kd_point_sqdist: dx*dx + dy*dy + dz*dz, dx = p - q, left to right, no FMA.
__device__ __forceinline__ float point_sqdist(float px, float py, float pz, float qx, float qy, float qz)
{
    const float dx = __fsub_rn(px, qx), dy = __fsub_rn(py, qy), dz = __fsub_rn(pz, qz);
    return __fadd_rn(__fadd_rn(__fmul_rn(dx, dx), __fmul_rn(dy, dy)), __fmul_rn(dz, dz));
}

// A lower bound of point_sqdist over the box lo..hi: per axis the gap (0 inside the slab), summed in the same
// order with the same roundings.
__device__ __forceinline__ float box_sqdist(const float *box, float qx, float qy, float qz)
{
    const float gx = fmaxf(fmaxf(__fsub_rn(box[0], qx), __fsub_rn(qx, box[3])), 0.0f);
    const float gy = fmaxf(fmaxf(__fsub_rn(box[1], qy), __fsub_rn(qy, box[4])), 0.0f);
    const float gz = fmaxf(fmaxf(__fsub_rn(box[2], qz), __fsub_rn(qz, box[5])), 0.0f);
    return __fadd_rn(__fadd_rn(__fmul_rn(gx, gx), __fmul_rn(gy, gy)), __fmul_rn(gz, gz));
}

// (d, id) comes before (e, jd): nearer, or as near with the lower index.
__device__ __forceinline__ bool pair_before(float d, uint32_t id, float e, uint32_t jd)
{
    return d < e || (d == e && id < jd);
}

// Inserts (d, id) into the sorted list ld/li of K entries (the last falls off); unrolled so that the list stays
// in registers.
template <int K>
__device__ __forceinline__ void list_insert(float (&ld)[K], uint32_t (&li)[K], float d, uint32_t id)
{
#pragma unroll
    for (int j = K - 1; j > 0; --j) {
        const bool shift = pair_before(d, id, ld[j - 1], li[j - 1]);
        const bool here = !shift && pair_before(d, id, ld[j], li[j]);
        ld[j] = shift ? ld[j - 1] : (here ? d : ld[j]);
        li[j] = shift ? li[j - 1] : (here ? id : li[j]);
    }
    if (pair_before(d, id, ld[0], li[0])) {
        ld[0] = d;
        li[0] = id;
    }
}

// The list's last entry is the k-th (see knn_kernel), so the pruning bound needs no indexing by k.
template <int K>
__device__ __forceinline__ void scan_leaf(const float4 *__restrict__ pts, uint32_t begin, uint32_t count, float qx,
                                          float qy, float qz, float (&ld)[K], uint32_t (&li)[K])
{
    for (uint32_t i = begin; i < begin + count; ++i) {
        const float4 p = __ldg(pts + i);
        const float d = point_sqdist(p.x, p.y, p.z, qx, qy, qz);
        const uint32_t id = __float_as_uint(p.w);
        if (pair_before(d, id, ld[K - 1], li[K - 1]))
            list_insert<K>(ld, li, d, id);
    }
}


__device__ __forceinline__ kd_node load_node(const kd_node *nodes, uint32_t i)
{
    const float4 *src = reinterpret_cast<const float4 *>(nodes + i);
    kd_node nd;
    float4 *dst = reinterpret_cast<float4 *>(&nd);
#pragma unroll
    for (int c = 0; c < 4; ++c)
        dst[c] = __ldg(src + c);
    return nd;
}

// What a search reads of a tree (device pointers; valid while the tree lives).
struct kd_view {
    const kd_node *nodes;    // count - 1 nodes, or NULL when the root is a leaf
    const float4 *pts;       // the tree's points in tree order (finite first), the row in the build's xyz in w
    uint32_t count;          // finite points: none, and every search finds nothing
    uint32_t root_count;     // the root as a leaf of that many points, or 0: the root is node 0
    uint32_t leaf_size;
};

// The k nearest (distance, index) pairs of the finite query (qx, qy, qz) merged into the sorted list ld/li, whose
// last entry bounds the search: start it at (+inf, kNoId) for an unbounded search, or at (r2, kNoId) to find only
// points with squared distance <= r2. a.count must be > 0.
template <int K>
__device__ __forceinline__ void knn_search(const kd_view &a, float qx, float qy, float qz, float (&ld)[K],
                                           uint32_t (&li)[K])
{
    kd_pending stack[kStackMax];
    int top = 0;
    stack[top++] = kd_pending{0u, a.root_count, 0.0f, 0u};
    while (top > 0) {
        const kd_pending p = stack[--top];
        const float wd = ld[K - 1]; // constant during one descent: no leaf is scanned
        if (p.bound > wd)
            continue;
        uint32_t ref = p.ref, count = p.count;
        bool reached = true;
        while (count == 0) { // walk down toward the nearer child, leaving the farther one on the stack
            const kd_node nd = load_node(a.nodes, ref);
            // a child of at most leaf_size points is a leaf (its run), else the internal node split (left) or
            // split + 1 (right): the right child's first point and its node index alike
            const uint32_t left_size = nd.split - nd.first + 1, right_size = nd.last - nd.split;
            const uint32_t left_ref = left_size <= a.leaf_size ? nd.first : nd.split;
            const uint32_t left_count = left_size <= a.leaf_size ? left_size : 0;
            const uint32_t right_ref = nd.split + 1, right_count = right_size <= a.leaf_size ? right_size : 0;
            const float bl = box_sqdist(nd.box, qx, qy, qz), br = box_sqdist(nd.box + 6, qx, qy, qz);
            const bool left_near = bl <= br;
            const float near_bound = left_near ? bl : br, far_bound = left_near ? br : bl;
            if (far_bound <= wd)
                stack[top++] = left_near ? kd_pending{right_ref, right_count, far_bound, 0u}
                                         : kd_pending{left_ref, left_count, far_bound, 0u};
            if (near_bound > wd) {
                reached = false;
                break;
            }
            ref = left_near ? left_ref : right_ref;
            count = left_near ? left_count : right_count;
        }
        if (reached)
            scan_leaf<K>(a.pts, ref, count, qx, qy, qz, ld, li);
    }
}

} // namespace grip_kd

// grip_kdtree3d_cuda_build over the n points xyz_dev (device memory of the context's device) whose finite points'
// box and count the caller has measured over those very points (a surface's bounds), without waiting: the kernels
// are queued on the calling thread's stream and may still run on return. Work queued after them on that stream
// sees the finished tree; a kernel's fault shows in the next call that waits.
grip_status grip_kdtree3d_cuda_build_queued(grip_ctx *ctx, const float *xyz_dev, uint32_t n,
                                            const grip_grid3d_bounds &box, uint32_t leaf_size,
                                            grip_kdtree3d_cuda **out);

// The device view of a tree built by grip_kdtree3d_cuda_build (a non-NULL tree; host side, no CUDA call).
grip_kd::kd_view grip_kdtree3d_cuda_view(const grip_kdtree3d_cuda *tree);

#endif
