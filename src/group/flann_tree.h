/* flann_tree.h -- a kd-tree built and searched exactly as FLANN 1.9's KDTreeSingleIndex (leaf size 15, the
 * index PCL's KdTreeFLANN builds), so that radius search returns the neighbours in the order FLANN visits them.
 *
 * PCL's features search unsorted (pcl::search::KdTree(false)), and where they pick the first of equal values
 * (BOARD's most different normal, its sector edges) that order decides. grip_kdtree3d finds the same neighbours,
 * sorted; use this tree only where PCL's visiting order matters. Points with a non-finite coordinate are left
 * out, as PCL does. */
#ifndef GRIP_GROUP_FLANN_TREE_H
#define GRIP_GROUP_FLANN_TREE_H

#include <stddef.h>
#include "core/ctx.h"
#include "spatial/kdtree3d.h"

typedef struct grip_flann_tree grip_flann_tree;

/* Builds the tree over xyz (n x 3, n <= INT32_MAX); the tree keeps its own copy of the finite points. Free with
 * grip_flann_tree_free() (NULL is allowed). */
grip_status grip_flann_tree_build(grip_ctx *ctx, const float *xyz, size_t n, grip_flann_tree **out);
void grip_flann_tree_free(grip_flann_tree *tree);

/* All points strictly within radius of q (squared distance < (float)(radius^2 in double), in FLANN's float
 * arithmetic), in FLANN's visiting order, with their squared distances. A non-finite q finds nothing. Thread-safe
 * on a const tree. GRIP_EINVAL for a NULL argument or a negative or NaN radius, GRIP_ENOMEM if out cannot grow
 * (out->count is then 0). */
grip_status grip_flann_tree_radius(const grip_flann_tree *tree, const float q[3], float radius, grip_neighbors *out);

#endif
