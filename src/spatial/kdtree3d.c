/* kdtree3d.c -- a kd-tree over 3D points with leaf buckets and per-node bounding boxes.
 *
 * Build: iterative; each node splits its points at the median of the widest axis of its bounding box
 * (three-way quickselect, so duplicates cost nothing), until at most KD_LEAF_MAX points remain. The points are
 * copied in tree order so that a leaf is one contiguous run in memory.
 *
 * Search: depth-first with an explicit stack, nearer child first; a node is skipped when the squared distance
 * from the query to its box exceeds the current k-th distance (kNN) or reaches radius^2 (radius search).
 * The box bound is computed with the same float operations, in the same order, as a point's distance, and
 * float rounding is monotone, so the bound never exceeds the distance of a point inside the box: the search is
 * exact. A node whose bound EQUALS the k-th distance is still visited, since it may hold a point at that same
 * distance with a lower index. */
#include "spatial/kdtree3d.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KD_LEAF_MAX 10
/* Depth-first search keeps at most one pending sibling per level; median splits bound the depth by
 * log2(2^32) + 1, so this never overflows. */
#define KD_STACK_MAX 96

typedef struct kd_node {
    float lo[3], hi[3]; /* bounding box of the node's points */
    uint32_t begin, end; /* the node's run in tree->pts / tree->ids */
    uint32_t child;      /* left child; the right one is child + 1; 0 for a leaf (the root is never a child) */
} kd_node;

struct grip_kdtree3d {
    size_t count;   /* finite points */
    float *pts;     /* count x 3, in tree order */
    uint32_t *ids;  /* index into the caller's xyz of each point in tree order */
    kd_node *nodes;
    size_t node_count;
};

typedef struct kd_pending {
    uint32_t node;
    float bound; /* squared distance from the query to the node's box */
} kd_pending;

/* ---- build ---------------------------------------------------------------------------------------------- */

static int point_is_finite(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

static void swap_ids(uint32_t *ids, size_t a, size_t b)
{
    uint32_t t = ids[a];
    ids[a] = ids[b];
    ids[b] = t;
}

/* Reorders ids[lo, hi) so that ids[nth] holds the point whose coordinate on `axis` would be there if sorted,
 * with no larger coordinate before it and no smaller one after it. */
static void select_nth(uint32_t *ids, size_t lo, size_t hi, size_t nth, const float *xyz, int axis)
{
    while (hi - lo > 1) {
        float a = xyz[(size_t)ids[lo] * 3 + axis], b = xyz[(size_t)ids[lo + (hi - lo) / 2] * 3 + axis];
        float c = xyz[(size_t)ids[hi - 1] * 3 + axis];
        float pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        /* three-way partition: [lo, lt) < pivot, [lt, i) == pivot, (gt, hi) > pivot */
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            float v = xyz[(size_t)ids[i] * 3 + axis];
            if (v < pivot)
                swap_ids(ids, lt++, i++);
            else if (v > pivot)
                swap_ids(ids, i, --gt);
            else
                ++i;
        }
        if (nth < lt)
            hi = lt;
        else if (nth >= gt)
            lo = gt;
        else
            return;
    }
}

static void node_bounds(kd_node *nd, const uint32_t *ids, const float *xyz)
{
    const float *p = xyz + (size_t)ids[nd->begin] * 3;
    for (int a = 0; a < 3; ++a)
        nd->lo[a] = nd->hi[a] = p[a];
    for (uint32_t i = nd->begin + 1; i < nd->end; ++i) {
        p = xyz + (size_t)ids[i] * 3;
        for (int a = 0; a < 3; ++a) {
            if (p[a] < nd->lo[a])
                nd->lo[a] = p[a];
            if (p[a] > nd->hi[a])
                nd->hi[a] = p[a];
        }
    }
}

static int widest_axis(const kd_node *nd)
{
    float ex = nd->hi[0] - nd->lo[0], ey = nd->hi[1] - nd->lo[1], ez = nd->hi[2] - nd->lo[2];
    return ex >= ey ? (ex >= ez ? 0 : 2) : (ey >= ez ? 1 : 2);
}

/* Splits every node with more than KD_LEAF_MAX points, breadth-first: nodes [0, node_count) are appended in
 * order, so the array itself is the work queue and no stack is needed. */
static void build_nodes(grip_kdtree3d *t, const float *xyz)
{
    t->nodes[0].begin = 0;
    t->nodes[0].end = (uint32_t)t->count;
    t->node_count = 1;
    for (size_t n = 0; n < t->node_count; ++n) {
        kd_node *nd = &t->nodes[n];
        node_bounds(nd, t->ids, xyz);
        nd->child = 0;
        if (nd->end - nd->begin <= KD_LEAF_MAX)
            continue;
        uint32_t mid = nd->begin + (nd->end - nd->begin) / 2;
        select_nth(t->ids, nd->begin, nd->end, mid, xyz, widest_axis(nd));
        nd->child = (uint32_t)t->node_count;
        kd_node *left = &t->nodes[t->node_count++], *right = &t->nodes[t->node_count++];
        left->begin = nd->begin;
        left->end = right->begin = mid;
        right->end = nd->end;
    }
}

/* A node of c > KD_LEAF_MAX points splits into halves of at least (KD_LEAF_MAX + 1) / 2 points, so a tree
 * of c points has at most c / ((KD_LEAF_MAX + 1) / 2) + 1 leaves, and twice as many nodes. */
static size_t node_capacity(size_t count)
{
    return 2 * (count / ((KD_LEAF_MAX + 1) / 2) + 1);
}

grip_status grip_kdtree3d_build(grip_ctx *ctx, const float *xyz, size_t n, grip_kdtree3d **out)
{
    if (!out)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d_build: out is NULL");
    *out = NULL;
    if (!xyz && n > 0)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d_build: xyz is NULL with %zu points", n);
    if (n > UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree3d_build: %zu points exceed the 32-bit index range", n);

    grip_kdtree3d *t = calloc(1, sizeof *t);
    if (!t)
        return grip_fail(ctx, GRIP_ENOMEM, "kdtree3d_build: out of memory for the tree");
    for (size_t i = 0; i < n; ++i)
        t->count += point_is_finite(xyz + i * 3);
    if (t->count == 0) {
        *out = t;
        return GRIP_OK;
    }
    t->ids = malloc(t->count * sizeof *t->ids);
    t->pts = malloc(t->count * 3 * sizeof *t->pts);
    t->nodes = malloc(node_capacity(t->count) * sizeof *t->nodes);
    if (!t->ids || !t->pts || !t->nodes) {
        size_t count = t->count;
        grip_kdtree3d_free(t);
        return grip_fail(ctx, GRIP_ENOMEM, "kdtree3d_build: out of memory for %zu points", count);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
        if (point_is_finite(xyz + i * 3))
            t->ids[k++] = (uint32_t)i;
    build_nodes(t, xyz);
    for (size_t i = 0; i < t->count; ++i)
        memcpy(t->pts + i * 3, xyz + (size_t)t->ids[i] * 3, 3 * sizeof(float));
    *out = t;
    return GRIP_OK;
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

/* ---- search --------------------------------------------------------------------------------------------- */

/* Squared distance as PCL's FLANN computes it (L2_Simple: dx*dx + dy*dy + dz*dz, left to right, in float). */
static float point_sqdist(const float *p, const float q[3])
{
    float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    return dx * dx + dy * dy + dz * dz;
}

/* A lower bound of point_sqdist over the box: per axis the gap (0 inside the slab), summed in the same order. */
static float box_sqdist(const kd_node *nd, const float q[3])
{
    float g[3];
    for (int a = 0; a < 3; ++a)
        g[a] = q[a] < nd->lo[a] ? nd->lo[a] - q[a] : (q[a] > nd->hi[a] ? q[a] - nd->hi[a] : 0.0f);
    return g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
}

/* Orders (distance, index) pairs: nearer first, the lower index first among equal distances. */
static int pair_before(float da, uint32_t ia, float db, uint32_t ib)
{
    return da < db || (da == db && ia < ib);
}

/* Pushes the children of an internal node, nearer last so that it is popped first; `limit` rejects a child
 * whose bound is past it (strictly greater when `inclusive`, else greater or equal). */
static size_t push_children(const grip_kdtree3d *t, const kd_node *nd, const float q[3], kd_pending *stack,
                            size_t top, float limit, int inclusive)
{
    uint32_t c = nd->child;
    float bl = box_sqdist(&t->nodes[c], q), br = box_sqdist(&t->nodes[c + 1], q);
    kd_pending near = {c, bl}, far = {c + 1, br};
    if (br < bl) {
        near = far;
        far = (kd_pending){c, bl};
    }
    if (inclusive ? far.bound <= limit : far.bound < limit)
        stack[top++] = far;
    if (inclusive ? near.bound <= limit : near.bound < limit)
        stack[top++] = near;
    return top;
}

/* Inserts (d, id) into the sorted list idx/sqdist of `found` entries (capacity k), dropping the last when
 * full. The caller has checked that the pair belongs in the list. */
static size_t knn_insert(uint32_t *idx, float *sqdist, size_t found, size_t k, float d, uint32_t id)
{
    size_t j = found < k ? found : k - 1;
    while (j > 0 && pair_before(d, id, sqdist[j - 1], idx[j - 1])) {
        sqdist[j] = sqdist[j - 1];
        idx[j] = idx[j - 1];
        --j;
    }
    sqdist[j] = d;
    idx[j] = id;
    return found < k ? found + 1 : k;
}

static void knn_scan_leaf(const grip_kdtree3d *t, const kd_node *nd, const float q[3], size_t k, uint32_t *idx,
                          float *sqdist, size_t *found)
{
    for (uint32_t i = nd->begin; i < nd->end; ++i) {
        float d = point_sqdist(t->pts + (size_t)i * 3, q);
        uint32_t id = t->ids[i];
        if (*found < k || pair_before(d, id, sqdist[k - 1], idx[k - 1]))
            *found = knn_insert(idx, sqdist, *found, k, d, id);
    }
}

size_t grip_kdtree3d_knn(const grip_kdtree3d *tree, const float q[3], size_t k, uint32_t *idx, float *sqdist)
{
    if (!tree || tree->count == 0 || k == 0 || !q || !idx || !sqdist || !point_is_finite(q))
        return 0;
    if (k > tree->count)
        k = tree->count;
    kd_pending stack[KD_STACK_MAX];
    size_t top = 0, found = 0;
    stack[top++] = (kd_pending){0, box_sqdist(&tree->nodes[0], q)};
    while (top > 0) {
        kd_pending p = stack[--top];
        float worst = found < k ? INFINITY : sqdist[k - 1];
        if (p.bound > worst)
            continue;
        const kd_node *nd = &tree->nodes[p.node];
        if (nd->child == 0)
            knn_scan_leaf(tree, nd, q, k, idx, sqdist, &found);
        else
            top = push_children(tree, nd, q, stack, top, worst, 1);
    }
    return found;
}

/* ---- radius search -------------------------------------------------------------------------------------- */

void grip_neighbors_free(grip_neighbors *nb)
{
    if (!nb)
        return;
    free(nb->idx);
    free(nb->sqdist);
    nb->idx = NULL;
    nb->sqdist = NULL;
    nb->count = nb->capacity = 0;
}

static grip_status neighbors_push(grip_neighbors *nb, uint32_t id, float d)
{
    if (nb->count == nb->capacity) {
        size_t cap = nb->capacity ? 2 * nb->capacity : 64;
        uint32_t *ids = realloc(nb->idx, cap * sizeof *ids);
        if (!ids)
            return GRIP_ENOMEM;
        nb->idx = ids;
        float *ds = realloc(nb->sqdist, cap * sizeof *ds);
        if (!ds)
            return GRIP_ENOMEM;
        nb->sqdist = ds;
        nb->capacity = cap;
    }
    nb->idx[nb->count] = id;
    nb->sqdist[nb->count] = d;
    nb->count++;
    return GRIP_OK;
}

static void swap_keys(uint64_t *keys, size_t a, size_t b)
{
    uint64_t t = keys[a];
    keys[a] = keys[b];
    keys[b] = t;
}

static void insertion_sort(uint64_t *keys, size_t n)
{
    for (size_t i = 1; i < n; ++i) {
        uint64_t key = keys[i];
        size_t j = i;
        for (; j > 0 && key < keys[j - 1]; --j)
            keys[j] = keys[j - 1];
        keys[j] = key;
    }
}

static void sift_down(uint64_t *keys, size_t root, size_t n)
{
    for (size_t child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && keys[child] < keys[child + 1])
            ++child;
        if (keys[root] >= keys[child])
            return;
        swap_keys(keys, root, child);
    }
}

static void heap_sort(uint64_t *keys, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(keys, i, n);
    for (size_t end = n - 1; end > 0; --end) {
        swap_keys(keys, 0, end);
        sift_down(keys, 0, end);
    }
}

/* Partitions keys[0, n) (unique keys) around the median of three; returns the pivot's final place. */
static size_t partition(uint64_t *keys, size_t n)
{
    size_t mid = n / 2, last = n - 1;
    if (keys[mid] < keys[0])
        swap_keys(keys, mid, 0);
    if (keys[last] < keys[0])
        swap_keys(keys, last, 0);
    if (keys[last] < keys[mid])
        swap_keys(keys, last, mid);
    swap_keys(keys, 0, mid);
    uint64_t pivot = keys[0];
    size_t store = 0;
    for (size_t i = 1; i < n; ++i)
        if (keys[i] < pivot)
            swap_keys(keys, ++store, i);
    swap_keys(keys, 0, store);
    return store;
}

/* Introsort: quicksort recursing on the smaller part (stack depth O(log n)), heapsort once `budget`
 * partitions are spent (O(n log n) at worst), insertion sort for short runs. */
static void sort_keys(uint64_t *keys, size_t n, int budget)
{
    while (n > 16) {
        if (budget-- == 0) {
            heap_sort(keys, n);
            return;
        }
        size_t p = partition(keys, n);
        if (p < n - p - 1) {
            sort_keys(keys, p, budget);
            keys += p + 1;
            n -= p + 1;
        } else {
            sort_keys(keys + p + 1, n - p - 1, budget);
            n = p;
        }
    }
    insertion_sort(keys, n);
}

/* Sorts the result by (distance, index). Squared distances are >= +0, whose float bits order as unsigned
 * integers, so one 64-bit key (distance bits, index) per entry sorts both arrays at once. Results of up to
 * NB_SORT_LOCAL entries (almost all) sort on the stack; longer ones need a temporary array. */
#define NB_SORT_LOCAL 512
static grip_status neighbors_sort(grip_neighbors *nb)
{
    uint64_t local[NB_SORT_LOCAL];
    size_t n = nb->count;
    uint64_t *keys = n <= NB_SORT_LOCAL ? local : malloc(n * sizeof *keys);
    if (!keys)
        return GRIP_ENOMEM;
    for (size_t j = 0; j < n; ++j) {
        uint32_t bits;
        memcpy(&bits, &nb->sqdist[j], sizeof bits);
        keys[j] = (uint64_t)bits << 32 | nb->idx[j];
    }
    int budget = 0;
    for (size_t m = n; m > 1; m >>= 1)
        budget += 2;
    sort_keys(keys, n, budget);
    for (size_t j = 0; j < n; ++j) {
        uint32_t bits = (uint32_t)(keys[j] >> 32);
        memcpy(&nb->sqdist[j], &bits, sizeof bits);
        nb->idx[j] = (uint32_t)keys[j];
    }
    if (keys != local)
        free(keys);
    return GRIP_OK;
}

static grip_status radius_scan_leaf(const grip_kdtree3d *t, const kd_node *nd, const float q[3], float r2,
                                    grip_neighbors *out)
{
    for (uint32_t i = nd->begin; i < nd->end; ++i) {
        float d = point_sqdist(t->pts + (size_t)i * 3, q);
        if (d < r2 && neighbors_push(out, t->ids[i], d) != GRIP_OK)
            return GRIP_ENOMEM;
    }
    return GRIP_OK;
}

grip_status grip_kdtree3d_radius(const grip_kdtree3d *tree, const float q[3], float radius, grip_neighbors *out)
{
    if (!out)
        return GRIP_EINVAL;
    out->count = 0;
    if (!tree || !q || !(radius >= 0.0f))
        return GRIP_EINVAL;
    if (tree->count == 0 || !point_is_finite(q))
        return GRIP_OK;
    /* as PCL: the radius is squared in double, then rounded to float */
    float r2 = (float)((double)radius * (double)radius);
    kd_pending stack[KD_STACK_MAX];
    size_t top = 0;
    stack[top++] = (kd_pending){0, box_sqdist(&tree->nodes[0], q)};
    while (top > 0) {
        kd_pending p = stack[--top];
        if (!(p.bound < r2))
            continue;
        const kd_node *nd = &tree->nodes[p.node];
        if (nd->child != 0)
            top = push_children(tree, nd, q, stack, top, r2, 0);
        else if (radius_scan_leaf(tree, nd, q, r2, out) != GRIP_OK) {
            out->count = 0;
            return GRIP_ENOMEM;
        }
    }
    if (neighbors_sort(out) != GRIP_OK) {
        out->count = 0;
        return GRIP_ENOMEM;
    }
    return GRIP_OK;
}
