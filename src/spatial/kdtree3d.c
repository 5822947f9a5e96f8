/* kdtree3d.c -- exact k-nearest and radius search on grip_kdtree3d (built in kdtree3d_build.c).
 *
 * Depth-first with an explicit stack, walking down the nearer child and leaving the farther one on the stack;
 * a node is skipped when the squared distance from the query to its bounding box exceeds the current k-th
 * distance (kNN) or reaches radius^2 (radius search). The box bound is computed with the same float
 * operations, in the same order, as a point's distance, and float rounding is monotone, so the bound never
 * exceeds the distance of a point inside the box: the search is exact. A node whose bound EQUALS the k-th
 * distance is still visited, since it may hold a point at that same distance with a lower index. */
#include "spatial/kdtree3d_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct kd_pending {
    uint32_t node;
    float bound; /* squared distance from the query to the node's box */
} kd_pending;

/* ---- k nearest ------------------------------------------------------------------------------------------ */

/* A lower bound of kd_point_sqdist over the box: per axis the gap (0 inside the slab), summed in the same order. */
static float box_sqdist(const kd_node *nd, const float q[3])
{
    float g[3];
    for (int a = 0; a < 3; ++a) {
        float below = nd->lo[a] - q[a], above = q[a] - nd->hi[a];
        float gap = below > above ? below : above;
        g[a] = gap > 0.0f ? gap : 0.0f;
    }
    return g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
}

/* Orders (distance, index) pairs: nearer first, the lower index first among equal distances. */
static int pair_before(float da, uint32_t ia, float db, uint32_t ib)
{
    return da < db || (da == db && ia < ib);
}

/* Walks down from node toward the nearer child while its bound is <= limit, pushing each farther child whose
 * bound is <= limit. Returns the leaf reached, or NULL when the nearer child was out of reach. */
static const kd_node *descend(const grip_kdtree3d *t, uint32_t node, const float q[3], float limit,
                              kd_pending *stack, size_t *top)
{
    const kd_node *nd = &t->nodes[node];
    while (nd->child != 0) {
        uint32_t c = nd->child;
        float bl = box_sqdist(&t->nodes[c], q), br = box_sqdist(&t->nodes[c + 1], q);
        int left_first = bl <= br;
        float near_bound = left_first ? bl : br, far_bound = left_first ? br : bl;
        if (far_bound <= limit)
            stack[(*top)++] = (kd_pending){left_first ? c + 1 : c, far_bound};
        if (near_bound > limit)
            return NULL;
        nd = &t->nodes[left_first ? c : c + 1];
    }
    return nd;
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
        float d = kd_point_sqdist(t->pts + (size_t)i * 3, q);
        uint32_t id = t->ids[i];
        if (*found < k || pair_before(d, id, sqdist[k - 1], idx[k - 1]))
            *found = knn_insert(idx, sqdist, *found, k, d, id);
    }
}

static float knn_worst(const float *sqdist, size_t found, size_t k)
{
    return found < k ? INFINITY : sqdist[k - 1];
}

size_t grip_kdtree3d_knn(const grip_kdtree3d *tree, const float q[3], size_t k, uint32_t *idx, float *sqdist)
{
    if (!tree || tree->count == 0 || k == 0 || !q || !idx || !sqdist || !kd_point_is_finite(q))
        return 0;
    if (k > tree->count)
        k = tree->count;
    kd_pending stack[KD_STACK_MAX];
    size_t top = 0, found = 0;
    stack[top++] = (kd_pending){0, 0.0f};
    while (top > 0) {
        kd_pending p = stack[--top];
        float worst = knn_worst(sqdist, found, k); /* constant during one descent: no leaf is scanned */
        if (p.bound > worst)
            continue;
        const kd_node *leaf = descend(tree, p.node, q, worst, stack, &top);
        if (leaf)
            knn_scan_leaf(tree, leaf, q, k, idx, sqdist, &found);
    }
    return found;
}

int grip_kdtree3d_any_within(const grip_kdtree3d *tree, const float q[3], float limit)
{
    if (!tree || tree->count == 0 || !q || !kd_point_is_finite(q))
        return 0;
    kd_pending stack[KD_STACK_MAX];
    size_t top = 0;
    stack[top++] = (kd_pending){0, 0.0f};
    while (top > 0) {
        kd_pending p = stack[--top];
        if (p.bound > limit)
            continue;
        const kd_node *leaf = descend(tree, p.node, q, limit, stack, &top);
        if (!leaf)
            continue;
        for (uint32_t i = leaf->begin; i < leaf->end; ++i)
            if (kd_point_sqdist(tree->pts + (size_t)i * 3, q) <= limit)
                return 1;
    }
    return 0;
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

grip_status kd_neighbors_push(grip_neighbors *nb, uint32_t id, float d)
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
        float d = kd_point_sqdist(t->pts + (size_t)i * 3, q);
        if (d < r2 && kd_neighbors_push(out, t->ids[i], d) != GRIP_OK)
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
    if (tree->count == 0 || !kd_point_is_finite(q))
        return GRIP_OK;
    /* as PCL: the radius is squared in double, then rounded to float */
    float r2 = (float)((double)radius * (double)radius);
    float limit = nextafterf(r2, -INFINITY); /* bound <= limit  <=>  bound < r2 */
    kd_pending stack[KD_STACK_MAX];
    size_t top = 0;
    if (box_sqdist(&tree->nodes[0], q) <= limit)
        stack[top++] = (kd_pending){0, 0.0f};
    while (top > 0) {
        const kd_node *leaf = descend(tree, stack[--top].node, q, limit, stack, &top);
        if (leaf && radius_scan_leaf(tree, leaf, q, r2, out) != GRIP_OK) {
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
