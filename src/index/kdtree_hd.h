/* kdtree_hd.h -- kd-trees over D-dimensional descriptor rows (SHOT 352, FPFH 33, SIFT 128) on the CPU: Hu 2017's
 * tree (ch. 3-4) and a forest of randomized trees (ch. 5), searched exactly or with a bound on the leaves visited
 * (P-ANNS), optionally finishing the last active queries by brute force (P-BANNS). It is the CPU twin of
 * cuda/index/kdtree_hd.cu, which builds the same trees and returns the same results for the same bound.
 *
 * The tree (every choice is deterministic, so that the GPU can reproduce it node for node):
 *  - Rows with a non-finite value are left out (never returned). Points live only in leaves.
 *  - Built breadth first, level by level. A node splits when it holds more than node_size points, lies less than
 *    GRIP_KDTREE_HD_MAX_DEPTH levels deep and has a non-zero span; its two children get the next two free node
 *    numbers in the order of the splitting nodes of the level (child[i] = left, right = left + 1). Each tree's
 *    nodes are contiguous; tree t's root is roots[t].
 *  - Split dimension: the widest span (max - min over the node's points; ties to the lower dimension). With
 *    top_spans = F > 1 (randomized trees) it is drawn among the F widest non-zero spans by a hash of
 *    (seed, tree, node number within the tree), ranked by span, ties to the lower dimension.
 *  - Split value: the midpoint of the extremes in that dimension, (lo + hi) * 0.5f (Hu's "mean of the extreme
 *    points"; lo when rounding places the midpoint at hi). Points with value <= split go left. The partition is
 *    stable: in each node the rows keep their ascending order.
 *  - Every node keeps its tight box (min and max of its points per dimension).
 *
 * Distances: a point's squared distance is summed in float dimension after dimension (diff = q - r), as
 * grip_bruteforce_search does, so exact results are identical to it (ties to the lower row). A box's squared distance
 * is summed as a warp sums it (32 partial sums, lane j over dimensions j, j+32, ...; then a butterfly reduction,
 * lane 0's value), see grip_kdtree_hd_box_sqdist. Because the two sums round differently, a node is pruned only
 * when box * slack exceeds the current k-th distance (slack = 1 - (2 dim + 64) 2^-24), which keeps exact search
 * exact.
 *
 * Search of one query (k-th distance and bound: limit = min(k-th distance, max_sqdist)):
 *  - exact (checks == 0): depth first from the root of tree 0, nearer child first (q[dim] <= split: left), the
 *    farther child pushed on a stack with its box distance; a popped node whose lower bound exceeds the limit is
 *    skipped. The stack never holds more than GRIP_KDTREE_HD_MAX_DEPTH entries. Equal to grip_bruteforce_search.
 *  - approximate (checks > 0), best bin first with one priority queue shared by all trees (FLANN's forest
 *    search): the queue starts with every root; each step pops the nearest entry (ties to the lower node),
 *    stops when its lower bound exceeds the limit, else descends from it to a leaf pushing each farther child,
 *    and scans the leaf. The search stops after `checks` leaves (Hu's backtrack bound) or when the queue is empty.
 *    The queue keeps the GRIP_KDTREE_HD_QUEUE nearest entries (a push into a full queue drops the farthest);
 *    entries above the limit are not pushed. A row met again in another tree is not listed twice.
 *  - P-BANNS finish (finish_below > 0): the approximate search runs in rounds (one leaf per active query per
 *    round, as the GPU's leaf-buffered kernels do); once fewer than finish_below queries are still active, these
 *    are finished by exact brute force (grip_bruteforce_search). A query's result then depends on the batch. */
#ifndef GRIP_INDEX_KDTREE_HD_H
#define GRIP_INDEX_KDTREE_HD_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GRIP_KDTREE_HD_MAX_DEPTH 64 /* nodes this deep are leaves, whatever they hold */
/* capacity of the best-bin-first priority queue. Hu keeps it "slightly larger than the tree height"; so small a
 * queue loses the nodes a large bound needs (NGT SIFT, 4500 x 128, one tree, 1024 checks: recall@1 0.76 with 64
 * entries, 0.98 with 256) */
#define GRIP_KDTREE_HD_QUEUE 256
#define GRIP_KDTREE_HD_LEAF UINT32_MAX /* child[] of a leaf */
#define GRIP_KDTREE_HD_BOX_LANES 32 /* partial sums of a box distance (a warp's lanes) */

typedef struct grip_kdtree_hd_params {
    uint32_t trees;     /* >= 1 */
    uint32_t top_spans; /* 1: the widest span; F > 1: drawn among the F widest */
    uint32_t node_size; /* leaf capacity, >= 1 */
    uint64_t seed;      /* for top_spans > 1 */
} grip_kdtree_hd_params;

/* A forest (one tree when trees == 1). The arrays are host memory owned by the forest. */
typedef struct grip_kdtree_hd {
    uint32_t dim;
    uint32_t n_trees;
    uint32_t n_nodes;    /* over all trees */
    uint32_t n_rows;     /* rows given to the build, non-finite ones included */
    uint32_t n_points;   /* finite rows; every tree indexes all of them */
    uint32_t max_depth;  /* deepest leaf (root: 0) */
    float box_slack;     /* 1 - (2 dim + 64) 2^-24: lower bound = box distance * box_slack */
    uint32_t *roots;     /* n_trees */
    uint32_t *child;     /* n_nodes: left child, right = left + 1; GRIP_KDTREE_HD_LEAF for a leaf */
    uint32_t *split_dim; /* n_nodes (0 for a leaf) */
    float *split_val;    /* n_nodes (0 for a leaf) */
    uint32_t *begin;     /* n_nodes: first position of the node's rows in perm */
    uint32_t *count;     /* n_nodes: how many */
    float *box_min;      /* n_nodes x dim (+inf for an empty root) */
    float *box_max;      /* n_nodes x dim (-inf for an empty root) */
    uint32_t *perm;      /* n_trees x n_points: the row numbers, tree t's in leaf order at t * n_points */
} grip_kdtree_hd;

/* Builds the forest over rows (n x dim, row-major, host memory; only read during the call). *out is allocated
 * here, freed with grip_kdtree_hd_free (NULL allowed). GRIP_EINVAL for NULL rows with n > 0, dim == 0,
 * n >= UINT32_MAX or parameters out of range (trees, node_size or top_spans 0); GRIP_ENOMEM. */
grip_status grip_kdtree_hd_build(grip_ctx *ctx, const float *rows, size_t n, uint32_t dim,
                                 const grip_kdtree_hd_params *params, grip_kdtree_hd **out);
void grip_kdtree_hd_free(grip_kdtree_hd *tree);

/* The squared distance of q to the box [lo, hi] (dim values each), summed as described above. */
float grip_kdtree_hd_box_sqdist(const float *q, const float *lo, const float *hi, uint32_t dim);

/* The node split hash: which of the top spans node `node` (numbered within its tree) of tree `tree` splits on. */
uint32_t grip_kdtree_hd_pick(uint64_t seed, uint32_t tree, uint32_t node, uint32_t choices);

/* The k nearest rows of each query (m x dim, host), as grip_bruteforce_search writes them (ids and sqdist m x k,
 * caller-allocated; ascending, ties to the lower row, only sqdist <= max_sqdist, padding UINT32_MAX / +inf,
 * queries with a non-finite value get nothing). rows must be those the tree was built on. checks == 0: exact;
 * checks > 0: at most that many leaves per query; finish_below: see above (ignored when checks == 0).
 * GRIP_EINVAL for NULL arrays or a NaN max_sqdist; GRIP_ENOMEM. */
grip_status grip_kdtree_hd_search(grip_ctx *ctx, const grip_kdtree_hd *tree, const float *rows, const float *queries,
                                  size_t m, uint32_t k, uint32_t checks, uint32_t finish_below, float max_sqdist,
                                  uint32_t *ids, float *sqdist);

#ifdef __cplusplus
}
#endif
#endif
