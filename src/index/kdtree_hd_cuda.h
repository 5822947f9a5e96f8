/* kdtree_hd_cuda.h -- the CUDA backend of the `kdtree` and `kdforest` indexes (cuda/index/kdtree_hd.cu): the trees of
 * src/index/kdtree_hd.h built on the device, and their searches, with the CPU twin's results for the same trees
 * and the same bounds (exact search: grip_bruteforce_search's, bit for bit).
 *
 * Build: breadth first, one pass per level over all the level's nodes at once (boxes by a segmented reduction,
 * split decisions, children numbered by a scan over the splitting nodes, a stable partition of every node's rows).
 * Search: in rounds; each round every active query pops and descends to its next leaf (one warp per query),
 * the queries are buffered per leaf and each leaf is scanned by one block for all its queries (the leaf's rows
 * staged in shared memory window by window, P-BANNS); once fewer than finish_below queries are active they are
 * finished by the exact brute-force kernel (cuda/index/bruteforce.cu). Every call is synchronous. A CPU-only build
 * links src/no_cuda.c, whose functions fail with GRIP_EUNSUPPORTED. */
#ifndef GRIP_INDEX_KDTREE_HD_CUDA_H
#define GRIP_INDEX_KDTREE_HD_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "index/kdtree_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest k the GPU search keeps (one list entry per lane); larger k: use the CPU twin. */
#define GRIP_KDTREE_HD_CUDA_MAX_K 32

/* A forest and its rows resident on the context's device; opaque. */
typedef struct grip_kdtree_hd_cuda grip_kdtree_hd_cuda;

/* Builds the forest of grip_kdtree_hd_build on the device over rows (n x dim, row-major), given in host memory
 * (on_device == 0) or in device memory of the context's device (on_device != 0); the handle keeps its own copy
 * of the rows. *out is allocated here and freed with grip_kdtree_hd_cuda_free; NULL after a failure.
 * GRIP_EINVAL as grip_kdtree_hd_build, GRIP_ENOMEM (host or device; the context stays usable), GRIP_ENODEV,
 * GRIP_ECUDA, GRIP_EUNSUPPORTED on a CPU-only build. */
grip_status grip_kdtree_hd_cuda_build(grip_ctx *ctx, const float *rows, int on_device, size_t n, uint32_t dim,
                                      const grip_kdtree_hd_params *params, grip_kdtree_hd_cuda **out);
/* A host copy of the device forest (allocated here, freed with grip_kdtree_hd_free). */
grip_status grip_kdtree_hd_cuda_download(grip_ctx *ctx, const grip_kdtree_hd_cuda *tree, grip_kdtree_hd **out);
/* The handle's rows (device memory, n x dim), valid until grip_kdtree_hd_cuda_free. */
const float *grip_kdtree_hd_cuda_rows(const grip_kdtree_hd_cuda *tree);
void grip_kdtree_hd_cuda_free(grip_kdtree_hd_cuda *tree);

/* grip_kdtree_hd_search on the device: queries (m x dim), ids and sqdist (m x k) in device memory of the tree's
 * device. GRIP_EUNSUPPORTED when k > GRIP_KDTREE_HD_CUDA_MAX_K; other errors as above. */
grip_status grip_kdtree_hd_cuda_search(grip_ctx *ctx, const grip_kdtree_hd_cuda *tree, const float *queries,
                                       size_t m, uint32_t k, uint32_t checks, uint32_t finish_below,
                                       float max_sqdist, uint32_t *ids, float *sqdist);

#ifdef __cplusplus
}
#endif
#endif
