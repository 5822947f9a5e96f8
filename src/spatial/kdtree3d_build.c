/* kdtree3d_build.c -- builds grip_kdtree3d with exactly the shape of FLANN 1.9's KDTreeSingleIndex as PCL 1.13's
 * KdTreeFLANN builds it (flann/algorithms/kdtree_single_index.h: divideTree, middleSplit, planeSplit), so that
 * kdtree3d_pcl.c can replay FLANN's search order. Only the finite points enter, in cloud order, as in PCL.
 *
 * Each node with more than 15 points is split: on the axis of the widest span of its approximate box (the
 * parent's box cut at the parent's split value), re-checked against the exact spans; at the middle of the
 * points' exact extent; the points partitioned in place by FLANN's two-pass swap; the split index then pulled
 * toward the middle when points equal to the split value allow it. FLANN recurses; here a queue of nodes does
 * the same splits (each split touches only its own run of points, so the order of splits changes nothing),
 * and one backward pass then gives every node its exact bounding box. */
#include "spatial/kdtree3d_internal.h"

#include <stdlib.h>
#include <string.h>

/* Smallest and largest coordinate on `axis` of the points ids[0, count) (FLANN's computeMinMax). */
static void extent_on_axis(const float *xyz, const uint32_t *ids, uint32_t count, uint32_t axis, float *lo,
                           float *hi)
{
    *lo = *hi = xyz[(size_t)ids[0] * 3 + axis];
    for (uint32_t i = 1; i < count; ++i) {
        float v = xyz[(size_t)ids[i] * 3 + axis];
        if (v < *lo)
            *lo = v;
        if (v > *hi)
            *hi = v;
    }
}

/* FLANN's planeSplit: ids[0, lim1) < cut, ids[lim1, lim2) == cut, ids[lim2, count) > cut, by FLANN's swaps. */
static void plane_split(const float *xyz, uint32_t *ids, uint32_t count, uint32_t axis, float cut, uint32_t *lim1,
                        uint32_t *lim2)
{
    long left = 0, right = (long)count - 1;
    for (;;) {
        while (left <= right && xyz[(size_t)ids[left] * 3 + axis] < cut)
            ++left;
        while (left <= right && xyz[(size_t)ids[right] * 3 + axis] >= cut)
            --right;
        if (left > right)
            break;
        uint32_t t = ids[left];
        ids[left++] = ids[right];
        ids[right--] = t;
    }
    *lim1 = (uint32_t)left;
    right = (long)count - 1;
    for (;;) {
        while (left <= right && xyz[(size_t)ids[left] * 3 + axis] <= cut)
            ++left;
        while (left <= right && xyz[(size_t)ids[right] * 3 + axis] > cut)
            --right;
        if (left > right)
            break;
        uint32_t t = ids[left];
        ids[left++] = ids[right];
        ids[right--] = t;
    }
    *lim2 = (uint32_t)left;
}

/* FLANN's middleSplit on a node whose approximate box is nd->lo/hi: chooses the axis and split value,
 * partitions the node's points and returns how many go to the left child (between 1 and count - 1). */
static uint32_t middle_split(const float *xyz, uint32_t *ids, kd_node *nd, float *cut)
{
    uint32_t count = nd->end - nd->begin, axis = 0;
    float max_span = nd->hi[0] - nd->lo[0];
    for (uint32_t a = 1; a < 3; ++a)
        if (nd->hi[a] - nd->lo[a] > max_span) {
            max_span = nd->hi[a] - nd->lo[a];
            axis = a;
        }
    float lo, hi;
    extent_on_axis(xyz, ids, count, axis, &lo, &hi);
    *cut = (lo + hi) / 2;
    max_span = hi - lo;
    uint32_t first = axis;
    for (uint32_t a = 0; a < 3; ++a) {
        if (a == first || !(nd->hi[a] - nd->lo[a] > max_span))
            continue;
        extent_on_axis(xyz, ids, count, a, &lo, &hi);
        if (hi - lo > max_span) {
            max_span = hi - lo;
            axis = a;
            *cut = (lo + hi) / 2;
        }
    }
    nd->axis = axis;
    uint32_t lim1, lim2;
    plane_split(xyz, ids, count, axis, *cut, &lim1, &lim2);
    uint32_t index = lim1 > count / 2 ? lim1 : (lim2 < count / 2 ? lim2 : count / 2);
    /* FLANN asserts 0 < index < count; it can only fail for coordinates near FLT_MAX, where (lo + hi) / 2
     * overflows: keep both children non-empty there too */
    return index == 0 ? 1 : (index == count ? count - 1 : index);
}

static void exact_box(kd_node *nd, const float *xyz, const uint32_t *ids)
{
    for (uint32_t a = 0; a < 3; ++a)
        extent_on_axis(xyz, ids + nd->begin, nd->end - nd->begin, a, &nd->lo[a], &nd->hi[a]);
}

/* Appends two children to t->nodes, growing it when full. Returns the index of the left one, 0 on failure. */
static uint32_t append_children(grip_kdtree3d *t, size_t *capacity)
{
    if (t->node_count + 2 > *capacity) {
        size_t cap = 2 * *capacity;
        kd_node *bigger = realloc(t->nodes, cap * sizeof *bigger);
        if (!bigger)
            return 0;
        t->nodes = bigger;
        *capacity = cap;
    }
    t->node_count += 2;
    return (uint32_t)(t->node_count - 2);
}

/* Splits every node of more than KD_LEAF_MAX points, breadth-first (the node array is the queue), with the
 * approximate boxes FLANN passes down; counts the levels into *depth. Returns 0, or -1 on out-of-memory. */
static int split_nodes(grip_kdtree3d *t, const float *xyz, size_t capacity, size_t *depth)
{
    size_t level_end = 1;
    *depth = 0;
    for (size_t n = 0; n < t->node_count; ++n) {
        if (n == level_end) { /* every node of the previous level is split: the next level is complete */
            ++*depth;
            level_end = t->node_count;
        }
        kd_node *nd = &t->nodes[n];
        nd->child = 0;
        if (nd->end - nd->begin <= KD_LEAF_MAX)
            continue;
        float cut;
        uint32_t mid = nd->begin + middle_split(xyz, t->ids + nd->begin, nd, &cut);
        uint32_t c = append_children(t, &capacity);
        if (c == 0)
            return -1;
        nd = &t->nodes[n]; /* the array may have moved */
        nd->child = c;
        kd_node *left = &t->nodes[c], *right = &t->nodes[c + 1];
        *left = *right = *nd;
        left->end = right->begin = mid;
        left->hi[nd->axis] = cut;
        right->lo[nd->axis] = cut;
    }
    return 0;
}

/* Backward over the nodes (children follow their parents): exact boxes, as FLANN's divideTree leaves them,
 * and each split's div_low / div_high. */
static void finish_boxes(grip_kdtree3d *t, const float *xyz)
{
    for (size_t n = t->node_count; n-- > 0;) {
        kd_node *nd = &t->nodes[n];
        if (nd->child == 0) {
            exact_box(nd, xyz, t->ids);
            continue;
        }
        const kd_node *l = &t->nodes[nd->child], *r = &t->nodes[nd->child + 1];
        for (int a = 0; a < 3; ++a) {
            nd->lo[a] = l->lo[a] < r->lo[a] ? l->lo[a] : r->lo[a];
            nd->hi[a] = l->hi[a] > r->hi[a] ? l->hi[a] : r->hi[a];
        }
        nd->div_low = l->hi[nd->axis];
        nd->div_high = r->lo[nd->axis];
    }
}

grip_status grip_kdtree3d_build_noted(grip_error_note *err, const float *xyz, size_t n, grip_kdtree3d **out)
{
    if (!out)
        return grip_note_fail(err, GRIP_EINVAL, "kdtree3d_build: out is NULL");
    *out = NULL;
    if (!xyz && n > 0)
        return grip_note_fail(err, GRIP_EINVAL, "kdtree3d_build: xyz is NULL with %zu points", n);
    if (n > UINT32_MAX)
        return grip_note_fail(err, GRIP_EINVAL, "kdtree3d_build: %zu points exceed the 32-bit index range", n);

    grip_kdtree3d *t = calloc(1, sizeof *t);
    if (!t)
        return grip_note_fail(err, GRIP_ENOMEM, "kdtree3d_build: out of memory for the tree");
    for (size_t i = 0; i < n; ++i)
        t->count += kd_point_is_finite(xyz + i * 3);
    if (t->count == 0) {
        *out = t;
        return GRIP_OK;
    }
    size_t capacity = t->count / 4 + 16;
    t->ids = malloc(t->count * sizeof *t->ids);
    t->pts = malloc(t->count * 3 * sizeof *t->pts);
    t->nodes = malloc(capacity * sizeof *t->nodes);
    size_t depth = 0;
    int failed = !t->ids || !t->pts || !t->nodes;
    if (!failed) {
        size_t k = 0;
        for (size_t i = 0; i < n; ++i)
            if (kd_point_is_finite(xyz + i * 3))
                t->ids[k++] = (uint32_t)i;
        t->node_count = 1;
        t->nodes[0].begin = 0;
        t->nodes[0].end = (uint32_t)t->count;
        exact_box(&t->nodes[0], xyz, t->ids); /* FLANN's computeBoundingBox */
        failed = split_nodes(t, xyz, capacity, &depth) != 0;
    }
    if (failed) {
        size_t count = t->count;
        grip_kdtree3d_free(t);
        return grip_note_fail(err, GRIP_ENOMEM, "kdtree3d_build: out of memory for %zu points", count);
    }
    if (depth + 2 > KD_STACK_MAX) {
        grip_kdtree3d_free(t);
        return grip_note_fail(err, GRIP_EUNSUPPORTED,
                              "kdtree3d_build: the tree is %zu levels deep, more than %d", depth, KD_STACK_MAX - 2);
    }
    finish_boxes(t, xyz);
    for (size_t i = 0; i < t->count; ++i)
        memcpy(t->pts + i * 3, xyz + (size_t)t->ids[i] * 3, 3 * sizeof(float));
    *out = t;
    return GRIP_OK;
}

grip_status grip_kdtree3d_build(grip_ctx *ctx, const float *xyz, size_t n, grip_kdtree3d **out)
{
    grip_error_note err = {GRIP_OK};
    grip_kdtree3d_build_noted(&err, xyz, n, out);
    return grip_note_report(ctx, &err);
}

void grip_kdtree3d_free(grip_kdtree3d *tree)
{
    if (!tree)
        return;
    free(tree->ids);
    free(tree->pts);
    free(tree->nodes);
    free(tree);
}

size_t grip_kdtree3d_size(const grip_kdtree3d *tree)
{
    return tree ? tree->count : 0;
}
