/* kdtree3d_cuda.h -- a kd-tree over 3D points built on the GPU, and exact k-nearest search on the GPU: the twin of
 * grip_kdtree3d_knn (src/spatial/kdtree3d.h), with its results bit for bit:
 *   - squared distances in float as dx*dx + dy*dy + dz*dz with dx = p.x - q.x, summed left to right, no fused
 *     multiply-add;
 *   - each query's list sorted by squared distance, ties to the lower point index (the row in the caller's xyz);
 *   - points with a non-finite coordinate are left out of the tree; a query with one finds nothing.
 * The tree's shape differs from the CPU's (which copies FLANN's), and its search order too, but an exact search
 * under the same total order (distance, index) has one answer, which both return.
 *
 * The tree (cuda/spatial/kdtree3d.cu says why this one): the finite points sorted by a 63-bit Morton code (21 bits per
 * axis over the cube around their bounding box) and the binary radix tree over those codes (Karras 2012), in
 * which every node splits its cell at the middle of one axis, the axes in turn: a kd-tree of middle splits. Its
 * subtrees of at most `leaf_size` points are the leaves, each a run of the sorted points; every node keeps the
 * tight boxes of its two children. The search walks it depth-first (one thread per query, nearer child first,
 * a node skipped when its box is farther than the k-th distance), queries taken in Morton order for coherence.
 *
 * Ownership: grip_kdtree3d_cuda_build allocates the tree (host handle and device arrays); the caller frees it
 * with grip_kdtree3d_cuda_free. Inputs are only read during a call; outputs are the caller's. Every call is
 * synchronous with respect to the host (results are ready on return) and runs on the context's device; device
 * arrays must live on that device. A CPU-only build links src/no_cuda.c, whose functions fail with
 * GRIP_EUNSUPPORTED. */
#ifndef GRIP_SPATIAL_KDTREE3D_CUDA_H
#define GRIP_SPATIAL_KDTREE3D_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest k the GPU search keeps; larger k fails with GRIP_EUNSUPPORTED (use the CPU twin). */
#define GRIP_KDTREE3D_CUDA_MAX_K 32
/* Points per leaf: the default (leaf_size 0) and the largest accepted. Leaves of 16 came within 5 % of the best of
 * 4, 8, 16 and 32 in every case of bench_kdtree3d_cuda (1e6 points, cube and surface, k = 1 and 10; 8: 10 %). */
#define GRIP_KDTREE3D_CUDA_LEAF_DEFAULT 16
#define GRIP_KDTREE3D_CUDA_LEAF_MAX 64

typedef struct grip_kdtree3d_cuda grip_kdtree3d_cuda;

/* Builds a tree over xyz (n x 3 floats, row-major; NaN or inf rows allowed and left out; n < 2^31), which
 * lives in host memory (xyz_mem GRIP_MEM_HOST) or in device memory of the context's device (GRIP_MEM_CUDA).
 * leaf_size: at most that many points per leaf, 0 for GRIP_KDTREE3D_CUDA_LEAF_DEFAULT. The tree keeps its own
 * device copy of the finite points. *out is allocated here (NULL after a failure); free it with
 * grip_kdtree3d_cuda_free. Errors: GRIP_EINVAL (NULL out, NULL xyz with n > 0, n too large, leaf_size above
 * GRIP_KDTREE3D_CUDA_LEAF_MAX, a device xyz not on the context's device), GRIP_ENOMEM (host or device memory
 * short; the context stays usable), GRIP_ENODEV, GRIP_ECUDA, GRIP_EUNSUPPORTED (CPU-only build). An empty cloud,
 * or one without a finite point, gives a tree in which every search finds nothing. */
grip_status grip_kdtree3d_cuda_build(grip_ctx *ctx, const float *xyz, size_t n, grip_memory xyz_mem,
                                     uint32_t leaf_size, grip_kdtree3d_cuda **out);

/* Frees the tree's device arrays and its handle; NULL is allowed. */
void grip_kdtree3d_cuda_free(grip_kdtree3d_cuda *tree);

/* Rows given to the build (finite or not), and finite points in the tree. */
size_t grip_kdtree3d_cuda_rows(const grip_kdtree3d_cuda *tree);
size_t grip_kdtree3d_cuda_size(const grip_kdtree3d_cuda *tree);

/* The k nearest points (1 <= k <= GRIP_KDTREE3D_CUDA_MAX_K) of each of the m queries (m x 3 floats, in
 * queries_mem), written to ids and sqdist (m x k each, row-major, caller's arrays in out_mem): row q holds, as
 * grip_kdtree3d_knn writes them, the indices into the build's xyz and the squared distances, sorted, ties to the
 * lower index; entries past the last found (k above the tree's size, or a non-finite query: all k) hold
 * UINT32_MAX and +inf. queries NULL searches the tree's own points: m must equal the build's n, row i is xyz row
 * i's neighbours (itself among them) and a non-finite row finds nothing (then queries_mem is ignored). Nothing is
 * done when m is 0. Errors: GRIP_EINVAL (NULL tree, ids or sqdist; k == 0; m >= 2^31 or, for
 * queries NULL, m != n; a device array not on the context's device), GRIP_EUNSUPPORTED (k above the maximum, or
 * a CPU-only build), GRIP_ENOMEM (the device cannot hold the queries and results; the context stays usable and
 * the outputs are untouched), GRIP_ECUDA. */
grip_status grip_kdtree3d_cuda_knn(grip_ctx *ctx, const grip_kdtree3d_cuda *tree, const float *queries, size_t m,
                                   grip_memory queries_mem, uint32_t k, uint32_t *ids, float *sqdist,
                                   grip_memory out_mem);

#ifdef __cplusplus
}
#endif
#endif
