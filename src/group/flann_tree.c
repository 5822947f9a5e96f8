/* flann_tree.c -- see flann_tree.h. A transcription of the arithmetic of FLANN 1.9.2's KDTreeSingleIndex:
 * divideTree/middleSplit/planeSplit for the build, and searchLevel with its incremental box distances for the
 * search. All in float, as FLANN's L2<float>. */
#include "group/flann_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FLANN_LEAF_MAX_SIZE 15 /* PCL: KDTreeSingleIndexParams(15) */

typedef struct flann_interval {
    float low, high;
} flann_interval;

typedef struct flann_node {
    int child1, child2; /* -1 for a leaf */
    int left, right;    /* a leaf's points: pts[left .. right) */
    int divfeat;
    float divlow, divhigh;
} flann_node;

struct grip_flann_tree {
    float *pts;    /* the finite points in FLANN's reordered layout (data_) */
    uint32_t *ids; /* their indices in the caller's array */
    flann_node *nodes;
    size_t n_nodes, cap_nodes;
    int root;
    flann_interval root_box[3];
};

typedef struct flann_build {
    grip_flann_tree *tree;
    const float *data; /* the finite points in input order (dataset_) */
    int *vind;
    int failed;
} flann_build;

static float coord(const flann_build *b, int point, int dim)
{
    return b->data[(size_t)point * 3 + (size_t)dim];
}

static void min_max(const flann_build *b, const int *ind, int count, int dim, float *lo, float *hi)
{
    *lo = *hi = coord(b, ind[0], dim);
    for (int i = 1; i < count; ++i) {
        float v = coord(b, ind[i], dim);
        if (v < *lo)
            *lo = v;
        if (v > *hi)
            *hi = v;
    }
}

/* planeSplit: points below cutval first, then equal, then above; lim1/lim2 bound the equal run. */
static void plane_split(const flann_build *b, int *ind, int count, int cutfeat, float cutval, int *lim1, int *lim2)
{
    int left = 0, right = count - 1;
    for (;;) {
        while (left <= right && coord(b, ind[left], cutfeat) < cutval)
            ++left;
        while (left <= right && coord(b, ind[right], cutfeat) >= cutval)
            --right;
        if (left > right)
            break;
        int t = ind[left];
        ind[left++] = ind[right];
        ind[right--] = t;
    }
    *lim1 = left;
    right = count - 1;
    for (;;) {
        while (left <= right && coord(b, ind[left], cutfeat) <= cutval)
            ++left;
        while (left <= right && coord(b, ind[right], cutfeat) > cutval)
            --right;
        if (left > right)
            break;
        int t = ind[left];
        ind[left++] = ind[right];
        ind[right--] = t;
    }
    *lim2 = left;
}

/* middleSplit: the axis of the largest span of the (approximate) box, cut at the middle of the points' exact
 * extent along it, unless another axis whose box is wider turns out to be wider in the points too. */
static void middle_split(const flann_build *b, int *ind, int count, const flann_interval box[3], int *index,
                         int *cutfeat, float *cutval)
{
    float max_span = box[0].high - box[0].low;
    *cutfeat = 0;
    for (int i = 1; i < 3; ++i)
        if (box[i].high - box[i].low > max_span) {
            max_span = box[i].high - box[i].low;
            *cutfeat = i;
        }
    float lo, hi;
    min_max(b, ind, count, *cutfeat, &lo, &hi);
    *cutval = (lo + hi) / 2;
    max_span = hi - lo;
    int k = *cutfeat;
    for (int i = 0; i < 3; ++i) {
        if (i == k || !(box[i].high - box[i].low > max_span))
            continue;
        min_max(b, ind, count, i, &lo, &hi);
        if (hi - lo > max_span) {
            max_span = hi - lo;
            *cutfeat = i;
            *cutval = (lo + hi) / 2;
        }
    }
    int lim1, lim2;
    plane_split(b, ind, count, *cutfeat, *cutval, &lim1, &lim2);
    *index = lim1 > count / 2 ? lim1 : lim2 < count / 2 ? lim2 : count / 2;
}

static int new_node(flann_build *b)
{
    grip_flann_tree *t = b->tree;
    if (t->n_nodes == t->cap_nodes) {
        size_t cap = t->cap_nodes ? t->cap_nodes * 2 : 64;
        flann_node *grown = realloc(t->nodes, cap * sizeof *grown);
        if (!grown) {
            b->failed = 1;
            return -1;
        }
        t->nodes = grown;
        t->cap_nodes = cap;
    }
    return (int)t->n_nodes++;
}

/* divideTree: box comes in as the parent's estimate and leaves as the exact box of the node's points. */
static int divide_tree(flann_build *b, int left, int right, flann_interval box[3])
{
    int id = new_node(b);
    if (id < 0)
        return -1;
    if (right - left <= FLANN_LEAF_MAX_SIZE) {
        flann_node leaf = {-1, -1, left, right, 0, 0.0f, 0.0f};
        b->tree->nodes[id] = leaf;
        for (int d = 0; d < 3; ++d)
            min_max(b, b->vind + left, right - left, d, &box[d].low, &box[d].high);
        return id;
    }
    int index, cutfeat;
    float cutval;
    middle_split(b, b->vind + left, right - left, box, &index, &cutfeat, &cutval);
    flann_interval left_box[3], right_box[3];
    memcpy(left_box, box, sizeof left_box);
    left_box[cutfeat].high = cutval;
    int child1 = divide_tree(b, left, left + index, left_box);
    memcpy(right_box, box, sizeof right_box);
    right_box[cutfeat].low = cutval;
    int child2 = divide_tree(b, left + index, right, right_box);
    if (b->failed)
        return -1;
    flann_node inner = {child1, child2, 0, 0, cutfeat, left_box[cutfeat].high, right_box[cutfeat].low};
    b->tree->nodes[id] = inner;
    for (int d = 0; d < 3; ++d) {
        box[d].low = fminf(left_box[d].low, right_box[d].low);
        box[d].high = fmaxf(left_box[d].high, right_box[d].high);
    }
    return id;
}

void grip_flann_tree_free(grip_flann_tree *tree)
{
    if (!tree)
        return;
    free(tree->pts);
    free(tree->ids);
    free(tree->nodes);
    free(tree);
}

static int finite3(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

/* The finite points in input order, with their original indices. */
static size_t gather_finite(const float *xyz, size_t n, float *data, uint32_t *ids)
{
    size_t m = 0;
    for (size_t i = 0; i < n; ++i)
        if (finite3(xyz + i * 3)) {
            memcpy(data + m * 3, xyz + i * 3, 3 * sizeof *data);
            ids[m++] = (uint32_t)i;
        }
    return m;
}

grip_status grip_flann_tree_build(grip_ctx *ctx, const float *xyz, size_t n, grip_flann_tree **out)
{
    if (!out || (n > 0 && !xyz))
        return grip_fail(ctx, GRIP_EINVAL, "flann_tree: xyz and out must not be NULL");
    *out = NULL;
    if (n > INT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "flann_tree: %zu points are more than 2^31-1", n);
    grip_flann_tree *t = calloc(1, sizeof *t);
    float *data = malloc((n ? n : 1) * 3 * sizeof *data);
    uint32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    int *vind = malloc((n ? n : 1) * sizeof *vind);
    if (t)
        t->root = -1;
    grip_status st = GRIP_OK;
    if (!t || !data || !ids || !vind) {
        st = grip_fail(ctx, GRIP_ENOMEM, "flann_tree: out of memory for %zu points", n);
    } else {
        size_t m = gather_finite(xyz, n, data, ids);
        flann_build b = {t, data, vind, 0};
        for (size_t i = 0; i < m; ++i)
            vind[i] = (int)i;
        if (m > 0) {
            for (int d = 0; d < 3; ++d)
                min_max(&b, vind, (int)m, d, &t->root_box[d].low, &t->root_box[d].high);
            flann_interval box[3];
            memcpy(box, t->root_box, sizeof box);
            t->root = divide_tree(&b, 0, (int)m, box);
        }
        t->pts = malloc((m ? m : 1) * 3 * sizeof *t->pts);
        t->ids = malloc((m ? m : 1) * sizeof *t->ids);
        if (b.failed || !t->pts || !t->ids) {
            st = grip_fail(ctx, GRIP_ENOMEM, "flann_tree: out of memory for the tree of %zu points", m);
        } else {
            for (size_t i = 0; i < m; ++i) { /* FLANN's reorder: leaves read their points contiguously */
                memcpy(t->pts + i * 3, data + (size_t)vind[i] * 3, 3 * sizeof *t->pts);
                t->ids[i] = ids[vind[i]];
            }
        }
    }
    free(data);
    free(ids);
    free(vind);
    if (st != GRIP_OK) {
        grip_flann_tree_free(t);
        return st;
    }
    *out = t;
    return GRIP_OK;
}

typedef struct flann_search {
    const grip_flann_tree *tree;
    const float *q;
    float r2;
    float dists[3]; /* per axis, the squared gap to the current cell (FLANN's dists vector) */
    grip_neighbors *out;
    int failed;
} flann_search;

static void push_neighbor(flann_search *s, uint32_t id, float d)
{
    grip_neighbors *nb = s->out;
    if (nb->count == nb->capacity) {
        size_t cap = nb->capacity ? nb->capacity * 2 : 64;
        uint32_t *idx = realloc(nb->idx, cap * sizeof *idx);
        if (idx)
            nb->idx = idx;
        float *sq = idx ? realloc(nb->sqdist, cap * sizeof *sq) : NULL;
        if (sq)
            nb->sqdist = sq;
        if (!idx || !sq) {
            s->failed = 1;
            return;
        }
        nb->capacity = cap;
    }
    nb->idx[nb->count] = id;
    nb->sqdist[nb->count++] = d;
}

static float accum_dist(float a, float b)
{
    return (a - b) * (a - b);
}

/* searchLevel */
static void search_level(flann_search *s, int node_id, float mindistsq)
{
    const flann_node *node = &s->tree->nodes[node_id];
    if (node->child1 < 0) {
        for (int i = node->left; i < node->right && !s->failed; ++i) {
            const float *p = s->tree->pts + (size_t)i * 3;
            float d = 0.0f;
            for (int k = 0; k < 3; ++k) {
                float diff = s->q[k] - p[k];
                d += diff * diff;
            }
            if (d < s->r2)
                push_neighbor(s, s->tree->ids[i], d);
        }
        return;
    }
    int idx = node->divfeat;
    float val = s->q[idx];
    float diff1 = val - node->divlow, diff2 = val - node->divhigh;
    int best, other;
    float cut_dist;
    if (diff1 + diff2 < 0) {
        best = node->child1;
        other = node->child2;
        cut_dist = accum_dist(val, node->divhigh);
    } else {
        best = node->child2;
        other = node->child1;
        cut_dist = accum_dist(val, node->divlow);
    }
    search_level(s, best, mindistsq);
    float dst = s->dists[idx];
    mindistsq = mindistsq + cut_dist - dst;
    s->dists[idx] = cut_dist;
    if (mindistsq <= s->r2)
        search_level(s, other, mindistsq);
    s->dists[idx] = dst;
}

grip_status grip_flann_tree_radius(const grip_flann_tree *tree, const float q[3], float radius, grip_neighbors *out)
{
    if (!out)
        return GRIP_EINVAL;
    out->count = 0;
    if (!tree || !q || !(radius >= 0.0f))
        return GRIP_EINVAL;
    if (tree->root < 0 || !finite3(q))
        return GRIP_OK;
    flann_search s = {tree, q, (float)((double)radius * (double)radius), {0.0f, 0.0f, 0.0f}, out, 0};
    float distsq = 0.0f; /* computeInitialDistances */
    for (int k = 0; k < 3; ++k) {
        if (q[k] < tree->root_box[k].low) {
            s.dists[k] = accum_dist(q[k], tree->root_box[k].low);
            distsq += s.dists[k];
        }
        if (q[k] > tree->root_box[k].high) {
            s.dists[k] = accum_dist(q[k], tree->root_box[k].high);
            distsq += s.dists[k];
        }
    }
    search_level(&s, tree->root, distsq);
    if (s.failed) {
        out->count = 0;
        return GRIP_ENOMEM;
    }
    return GRIP_OK;
}
