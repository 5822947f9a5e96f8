/* kdtree_hd.c -- see kdtree_hd.h. The build (level by level, stable partitions) and the search (a step = one
 * leaf) are written the way the GPU runs them, so that cuda/index/kdtree_hd.cu can be checked against them exactly. */
#include "index/kdtree_hd.h"
#include "index/bruteforce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------------------
 * Shared arithmetic (mirrored by the CUDA code)
 * ---------------------------------------------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint32_t grip_kdtree_hd_pick(uint64_t seed, uint32_t tree, uint32_t node, uint32_t choices)
{
    uint64_t h = splitmix64(seed ^ splitmix64(((uint64_t)tree << 32) | node));
    return choices > 1 ? (uint32_t)(h % choices) : 0;
}

float grip_kdtree_hd_box_sqdist(const float *q, const float *lo, const float *hi, uint32_t dim)
{
    enum { LANES = GRIP_KDTREE_HD_BOX_LANES };
    float part[LANES] = {0};
    for (uint32_t base = 0; base < dim; base += LANES) {
        const uint32_t n = dim - base < LANES ? dim - base : LANES;
        /* lane l sums dimensions l, l + 32, ... in order; the gap is lo - q when q < lo (then > 0), q - hi when
         * q > hi, else 0, written branch-free for SIMD */
#pragma omp simd
        for (uint32_t l = 0; l < n; ++l) {
            const float below = lo[base + l] - q[base + l], above = q[base + l] - hi[base + l];
            const float gap = below > 0.0f ? below : (above > 0.0f ? above : 0.0f);
            part[l] += gap * gap;
        }
    }
    /* the butterfly of __shfl_xor_sync with offsets 16, 8, 4, 2, 1; lane 0's value */
    for (int off = LANES / 2; off > 0; off /= 2) {
        float next[LANES];
        for (int l = 0; l < LANES; ++l)
            next[l] = part[l] + part[l ^ off];
        memcpy(part, next, sizeof part);
    }
    return part[0];
}

static float row_sqdist(const float *q, const float *r, uint32_t dim)
{
    float acc = 0.0f;
    for (uint32_t d = 0; d < dim; ++d) {
        const float diff = q[d] - r[d];
        acc += diff * diff;
    }
    return acc;
}

static int row_is_finite(const float *row, uint32_t dim)
{
    for (uint32_t d = 0; d < dim; ++d)
        if (!isfinite(row[d]))
            return 0;
    return 1;
}

/* ------------------------------------------------------------------------------------------------------------
 * Build
 * ---------------------------------------------------------------------------------------------------------- */

void grip_kdtree_hd_free(grip_kdtree_hd *t)
{
    if (!t)
        return;
    free(t->roots);
    free(t->child);
    free(t->split_dim);
    free(t->split_val);
    free(t->begin);
    free(t->count);
    free(t->box_min);
    free(t->box_max);
    free(t->perm);
    free(t);
}

/* Grows the node arrays to hold `need` nodes (doubling). */
static grip_status nodes_reserve(grip_ctx *ctx, grip_kdtree_hd *t, size_t *cap, size_t need)
{
    if (need <= *cap)
        return GRIP_OK;
    if (need >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd: more than %u nodes", UINT32_MAX - 1);
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    if (c > SIZE_MAX / sizeof(float) / t->dim)
        return grip_fail(ctx, GRIP_ENOMEM, "kdtree_hd: %zu nodes of %u dims are too many", c, t->dim);
#define GROW(field)                                                                                                \
    do {                                                                                                           \
        void *p_ = realloc(t->field, c * sizeof *t->field);                                                        \
        if (!p_)                                                                                                   \
            return grip_fail(ctx, GRIP_ENOMEM, "kdtree_hd: out of memory growing the nodes to %zu", c);            \
        t->field = p_;                                                                                             \
    } while (0)
    GROW(child);
    GROW(split_dim);
    GROW(split_val);
    GROW(begin);
    GROW(count);
#undef GROW
    float *lo = realloc(t->box_min, c * t->dim * sizeof(float));
    if (lo)
        t->box_min = lo;
    float *hi = lo ? realloc(t->box_max, c * t->dim * sizeof(float)) : NULL;
    if (hi)
        t->box_max = hi;
    if (!lo || !hi)
        return grip_fail(ctx, GRIP_ENOMEM, "kdtree_hd: out of memory for the boxes of %zu nodes x %u dims", c, t->dim);
    *cap = c;
    return GRIP_OK;
}

/* The tight box of a node's rows. */
static void node_box(grip_kdtree_hd *t, const float *rows, uint32_t node)
{
    float *lo = t->box_min + (size_t)node * t->dim, *hi = t->box_max + (size_t)node * t->dim;
    for (uint32_t d = 0; d < t->dim; ++d) {
        lo[d] = INFINITY;
        hi[d] = -INFINITY;
    }
    const uint32_t *perm = t->perm + t->begin[node];
    for (uint32_t j = 0; j < t->count[node]; ++j) {
        const float *r = rows + (size_t)perm[j] * t->dim;
        for (uint32_t d = 0; d < t->dim; ++d) {
            lo[d] = r[d] < lo[d] ? r[d] : lo[d];
            hi[d] = r[d] > hi[d] ? r[d] : hi[d];
        }
    }
    for (uint32_t d = 0; d < t->dim; ++d) { /* -0 as +0: the GPU's order-preserving keys tell them apart */
        lo[d] += 0.0f;
        hi[d] += 0.0f;
    }
}

/* Whether (span a, dim a) ranks before (span b, dim b): wider first, ties to the lower dimension. */
static int span_before(float sa, uint32_t a, float sb, uint32_t b)
{
    return sa > sb || (sa == sb && a < b);
}

/* The split dimension of a node with box [lo, hi]: the pick-th widest non-zero span (pick drawn when
 * top_spans > 1); UINT32_MAX when every span is zero. */
static uint32_t split_dimension(const float *lo, const float *hi, uint32_t dim, const grip_kdtree_hd_params *p,
                                uint32_t tree, uint32_t local_node)
{
    uint32_t nonzero = 0;
    for (uint32_t d = 0; d < dim; ++d)
        nonzero += hi[d] - lo[d] > 0.0f;
    if (nonzero == 0)
        return UINT32_MAX;
    uint32_t choices = p->top_spans < nonzero ? p->top_spans : nonzero;
    uint32_t pick = grip_kdtree_hd_pick(p->seed, tree, local_node, choices);
    uint32_t best = UINT32_MAX;
    float best_span = 0.0f;
    for (uint32_t r = 0; r <= pick; ++r) {
        uint32_t prev = best;
        float prev_span = best_span;
        best = UINT32_MAX;
        for (uint32_t d = 0; d < dim; ++d) {
            float s = hi[d] - lo[d];
            if (prev != UINT32_MAX && !span_before(prev_span, prev, s, d))
                continue; /* ranked at or before the previous pick */
            if (best == UINT32_MAX || span_before(s, d, best_span, best)) {
                best = d;
                best_span = s;
            }
        }
    }
    return best;
}

/* Decides whether a node splits, and where. Returns 1 when it does. */
static int node_decide(grip_kdtree_hd *t, const grip_kdtree_hd_params *p, uint32_t tree, uint32_t node,
                       uint32_t depth)
{
    t->child[node] = GRIP_KDTREE_HD_LEAF;
    t->split_dim[node] = 0;
    t->split_val[node] = 0.0f;
    if (t->count[node] <= p->node_size || depth >= GRIP_KDTREE_HD_MAX_DEPTH)
        return 0;
    const float *lo = t->box_min + (size_t)node * t->dim, *hi = t->box_max + (size_t)node * t->dim;
    uint32_t d = split_dimension(lo, hi, t->dim, p, tree, node - t->roots[tree]);
    if (d == UINT32_MAX)
        return 0;
    float mid = (lo[d] + hi[d]) * 0.5f;
    t->split_dim[node] = d;
    t->split_val[node] = mid < hi[d] ? mid : lo[d]; /* both children non-empty */
    return 1;
}

/* Stable partition of a split node's rows into its two children (scratch: one slot per point). */
static void node_partition(grip_kdtree_hd *t, const float *rows, uint32_t node, uint32_t *scratch)
{
    const uint32_t b = t->begin[node], c = t->count[node], d = t->split_dim[node];
    const float split = t->split_val[node];
    uint32_t *perm = t->perm + b, *out = scratch + b, nl = 0;
    for (uint32_t j = 0; j < c; ++j)
        if (rows[(size_t)perm[j] * t->dim + d] <= split)
            out[nl++] = perm[j];
    uint32_t nr = nl;
    for (uint32_t j = 0; j < c; ++j)
        if (!(rows[(size_t)perm[j] * t->dim + d] <= split))
            out[nr++] = perm[j];
    memcpy(perm, out, c * sizeof *perm);
    uint32_t left = t->child[node];
    t->begin[left] = b;
    t->count[left] = nl;
    t->begin[left + 1] = b + nl;
    t->count[left + 1] = c - nl;
}

/* One tree, breadth first: boxes and decisions of a level in parallel, then children numbered in node order. */
static grip_status build_tree(grip_ctx *ctx, grip_kdtree_hd *t, const float *rows, const grip_kdtree_hd_params *p,
                              uint32_t tree, size_t *cap, uint32_t *scratch, uint8_t *splits)
{
    uint32_t root = t->n_nodes;
    grip_status s = nodes_reserve(ctx, t, cap, (size_t)root + 1);
    if (s)
        return s;
    t->roots[tree] = root;
    t->begin[root] = tree * t->n_points;
    t->count[root] = t->n_points;
    t->n_nodes = root + 1;
    uint32_t level_begin = root, level_end = root + 1;
    for (uint32_t depth = 0; level_begin < level_end; ++depth) {
        const ptrdiff_t width = (ptrdiff_t)(level_end - level_begin);
#pragma omp parallel for schedule(dynamic, 1) num_threads(grip_ctx_threads(ctx))
        for (ptrdiff_t i = 0; i < width; ++i) {
            uint32_t node = level_begin + (uint32_t)i;
            node_box(t, rows, node);
            splits[i] = (uint8_t)node_decide(t, p, tree, node, depth);
        }
        if (depth > t->max_depth)
            t->max_depth = depth;
        size_t next = t->n_nodes;
        for (ptrdiff_t i = 0; i < width; ++i)
            next += splits[i] ? 2 : 0;
        if ((s = nodes_reserve(ctx, t, cap, next)) != GRIP_OK)
            return s;
        uint32_t free_node = t->n_nodes;
        for (ptrdiff_t i = 0; i < width; ++i)
            if (splits[i]) {
                t->child[level_begin + (uint32_t)i] = free_node;
                free_node += 2;
            }
#pragma omp parallel for schedule(dynamic, 1) num_threads(grip_ctx_threads(ctx))
        for (ptrdiff_t i = 0; i < width; ++i)
            if (splits[i])
                node_partition(t, rows, level_begin + (uint32_t)i, scratch);
        level_begin = level_end;
        level_end = free_node;
        t->n_nodes = free_node;
    }
    return GRIP_OK;
}

static grip_status check_build(grip_ctx *ctx, const float *rows, size_t n, uint32_t dim,
                               const grip_kdtree_hd_params *p, grip_kdtree_hd **out)
{
    if (!out || !p)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd: NULL output or parameters");
    *out = NULL;
    if (dim == 0)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd: dim must be >= 1");
    if (n > 0 && !rows)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd: rows is NULL with %zu rows", n);
    if (n >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd: %zu rows exceed the 32-bit ids", n);
    if (p->trees == 0 || p->node_size == 0 || p->top_spans == 0)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd: trees (%u), node_size (%u) and top_spans (%u) must be >= 1",
                         p->trees, p->node_size, p->top_spans);
    if ((uint64_t)p->trees * n >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd: %u trees of %zu rows exceed the 32-bit positions", p->trees, n);
    return GRIP_OK;
}

grip_status grip_kdtree_hd_build(grip_ctx *ctx, const float *rows, size_t n, uint32_t dim,
                                 const grip_kdtree_hd_params *p, grip_kdtree_hd **out)
{
    grip_status s = check_build(ctx, rows, n, dim, p, out);
    if (s)
        return s;
    grip_kdtree_hd *t = calloc(1, sizeof *t);
    if (!t)
        return grip_fail(ctx, GRIP_ENOMEM, "kdtree_hd: out of memory");
    t->dim = dim;
    t->n_trees = p->trees;
    t->n_rows = (uint32_t)n;
    t->box_slack = 1.0f - (float)(2.0 * dim + 64.0) * 0x1p-24f;
    size_t n_points = 0;
    for (size_t i = 0; i < n; ++i)
        n_points += (size_t)row_is_finite(rows + i * dim, dim);
    t->n_points = (uint32_t)n_points;
    size_t slots = (size_t)p->trees * n_points;
    t->roots = malloc(p->trees * sizeof *t->roots);
    t->perm = malloc((slots ? slots : 1) * sizeof *t->perm);
    uint32_t *scratch = malloc((slots ? slots : 1) * sizeof *scratch);
    uint8_t *splits = malloc(n_points + 1); /* a level holds at most n_points nodes */
    if (!t->roots || !t->perm || !scratch || !splits)
        s = grip_fail(ctx, GRIP_ENOMEM, "kdtree_hd: out of memory for %zu row positions", slots);
    for (uint32_t tr = 0; !s && tr < p->trees; ++tr) {
        size_t j = (size_t)tr * n_points;
        for (size_t i = 0; i < n; ++i)
            if (row_is_finite(rows + i * dim, dim))
                t->perm[j++] = (uint32_t)i;
    }
    size_t cap = 0;
    for (uint32_t tr = 0; !s && tr < p->trees; ++tr)
        s = build_tree(ctx, t, rows, p, tr, &cap, scratch, splits);
    free(scratch);
    free(splits);
    if (s) {
        grip_kdtree_hd_free(t);
        return s;
    }
    *out = t;
    return GRIP_OK;
}

/* ------------------------------------------------------------------------------------------------------------
 * Search
 * ---------------------------------------------------------------------------------------------------------- */

/* A query's top-k list, ascending by (distance, row); starts full of (+inf, UINT32_MAX). */
typedef struct knn_list {
    uint32_t *ids;
    float *d;
    uint32_t k;
} knn_list;

static void list_reset(knn_list *l)
{
    for (uint32_t j = 0; j < l->k; ++j) {
        l->ids[j] = UINT32_MAX;
        l->d[j] = INFINITY;
    }
}

/* Lists row `id` at distance d when it ranks before the k-th entry, lies within the bound and is not listed yet
 * (a forest meets a row once per tree). */
static void list_offer(knn_list *l, uint32_t id, float d, float max_sqdist)
{
    const uint32_t last = l->k - 1;
    if (!(d <= max_sqdist) || d == INFINITY || d > l->d[last] || (d == l->d[last] && id >= l->ids[last]))
        return;
    for (uint32_t j = 0; j < l->k && l->d[j] <= d; ++j)
        if (l->ids[j] == id)
            return;
    uint32_t pos = last;
    while (pos > 0 && (l->d[pos - 1] > d || (l->d[pos - 1] == d && l->ids[pos - 1] > id))) {
        l->ids[pos] = l->ids[pos - 1];
        l->d[pos] = l->d[pos - 1];
        --pos;
    }
    l->ids[pos] = id;
    l->d[pos] = d;
}

static float list_limit(const knn_list *l, float max_sqdist)
{
    return l->d[l->k - 1] < max_sqdist ? l->d[l->k - 1] : max_sqdist;
}

/* The nodes still to visit, the best at the end: a stack (exact search) or a bounded priority queue kept sorted
 * by descending (box distance, node), so that the nearest, ties to the lower node, is popped first. */
typedef struct frontier {
    float key[GRIP_KDTREE_HD_QUEUE];
    uint32_t node[GRIP_KDTREE_HD_QUEUE];
    uint32_t size;
    int is_queue;
} frontier;

static int entry_before(float ka, uint32_t na, float kb, uint32_t nb)
{
    return ka < kb || (ka == kb && na < nb);
}

static void frontier_push(frontier *f, float key, uint32_t node)
{
    if (!f->is_queue) { /* a depth-first stack never holds more than one entry per level */
        f->key[f->size] = key;
        f->node[f->size++] = node;
        return;
    }
    uint32_t pos = f->size;
    if (f->size == GRIP_KDTREE_HD_QUEUE) { /* full: drop the farthest, the new entry if it is that */
        if (!entry_before(key, node, f->key[0], f->node[0]))
            return;
        memmove(f->key, f->key + 1, (f->size - 1) * sizeof *f->key);
        memmove(f->node, f->node + 1, (f->size - 1) * sizeof *f->node);
        pos = --f->size;
    }
    while (pos > 0 && entry_before(f->key[pos - 1], f->node[pos - 1], key, node)) {
        f->key[pos] = f->key[pos - 1];
        f->node[pos] = f->node[pos - 1];
        --pos;
    }
    f->key[pos] = key;
    f->node[pos] = node;
    f->size++;
}

typedef struct search_ctx {
    const grip_kdtree_hd *t;
    const float *rows;
    float max_sqdist;
} search_ctx;

static float node_sqdist(const search_ctx *sc, const float *q, uint32_t node)
{
    const size_t off = (size_t)node * sc->t->dim;
    return grip_kdtree_hd_box_sqdist(q, sc->t->box_min + off, sc->t->box_max + off, sc->t->dim);
}

/* One step: pops nodes until one is within the limit, descends from it to a leaf (pushing each farther child
 * within the limit) and scans the leaf. Returns 1 when a leaf was scanned, 0 when the frontier ran out. */
static int search_step(const search_ctx *sc, const float *q, frontier *f, knn_list *l)
{
    const grip_kdtree_hd *t = sc->t;
    while (f->size > 0) {
        --f->size;
        uint32_t node = f->node[f->size];
        if (f->key[f->size] * t->box_slack > list_limit(l, sc->max_sqdist))
            continue;
        while (t->child[node] != GRIP_KDTREE_HD_LEAF) {
            uint32_t left = t->child[node];
            int go_left = q[t->split_dim[node]] <= t->split_val[node];
            uint32_t far = go_left ? left + 1 : left;
            float key = node_sqdist(sc, q, far);
            if (key * t->box_slack <= list_limit(l, sc->max_sqdist))
                frontier_push(f, key, far);
            node = go_left ? left : left + 1;
        }
        const uint32_t *perm = t->perm + t->begin[node];
        for (uint32_t j = 0; j < t->count[node]; ++j)
            list_offer(l, perm[j], row_sqdist(q, sc->rows + (size_t)perm[j] * t->dim, t->dim), sc->max_sqdist);
        return 1;
    }
    return 0;
}

/* A query's search state: exact (a stack from tree 0's root) or best bin first (a queue of every root). */
static void search_start(const search_ctx *sc, const float *q, int exact, frontier *f, knn_list *l)
{
    list_reset(l);
    f->size = 0;
    f->is_queue = !exact;
    if (!row_is_finite(q, sc->t->dim))
        return;
    for (uint32_t tr = 0; tr < (exact ? 1 : sc->t->n_trees); ++tr)
        frontier_push(f, node_sqdist(sc, q, sc->t->roots[tr]), sc->t->roots[tr]);
}

/* Searches of queries [0, m) run to their end, independently (OpenMP over queries). */
static grip_status search_independent(grip_ctx *ctx, const search_ctx *sc, const float *queries, size_t m,
                                      uint32_t k, uint32_t checks, uint32_t *ids, float *sqdist)
{
    int out_of_memory = 0;
#pragma omp parallel num_threads(grip_ctx_threads(ctx))
    {
        frontier *f = malloc(sizeof *f);
        if (!f) {
#pragma omp atomic write
            out_of_memory = 1;
        }
#pragma omp for schedule(dynamic, 16)
        for (ptrdiff_t i = 0; i < (ptrdiff_t)m; ++i) {
            if (!f)
                continue;
            const float *q = queries + (size_t)i * sc->t->dim;
            knn_list l = {ids + (size_t)i * k, sqdist + (size_t)i * k, k};
            search_start(sc, q, checks == 0, f, &l);
            for (uint32_t leaves = 0; (checks == 0 || leaves < checks) && search_step(sc, q, f, &l); ++leaves)
                ;
        }
        free(f);
    }
    return out_of_memory ? grip_fail(ctx, GRIP_ENOMEM, "kdtree_hd: out of memory for a search queue") : GRIP_OK;
}

/* Searches in rounds of one leaf per active query; once fewer than finish_below stay active, those are finished
 * by exact brute force. */
static grip_status search_rounds(grip_ctx *ctx, const search_ctx *sc, const float *queries, size_t m, uint32_t k,
                                 uint32_t checks, uint32_t finish_below, uint32_t *ids, float *sqdist)
{
    const uint32_t dim = sc->t->dim;
    frontier *f = malloc(m * sizeof *f);
    uint32_t *leaves = calloc(m, sizeof *leaves);
    size_t *active = malloc(m * sizeof *active);
    if (!f || !leaves || !active) {
        free(f);
        free(leaves);
        free(active);
        return grip_fail(ctx, GRIP_ENOMEM, "kdtree_hd: out of memory for the states of %zu queries", m);
    }
    size_t n_active = 0;
    for (size_t i = 0; i < m; ++i) {
        knn_list l = {ids + i * k, sqdist + i * k, k};
        search_start(sc, queries + i * dim, 0, &f[i], &l);
        if (f[i].size > 0)
            active[n_active++] = i;
    }
    while (n_active >= finish_below && n_active > 0) {
#pragma omp parallel for schedule(dynamic, 16) num_threads(grip_ctx_threads(ctx))
        for (ptrdiff_t a = 0; a < (ptrdiff_t)n_active; ++a) {
            size_t i = active[a];
            knn_list l = {ids + i * k, sqdist + i * k, k};
            if (search_step(sc, queries + i * dim, &f[i], &l))
                leaves[i]++;
            else
                f[i].size = 0;
        }
        size_t kept = 0; /* still active: a leaf scanned this round, bound not reached, frontier not empty */
        for (size_t a = 0; a < n_active; ++a)
            if (leaves[active[a]] < checks && f[active[a]].size > 0)
                active[kept++] = active[a];
        n_active = kept;
    }
    grip_status s = GRIP_OK;
    float *rest = n_active ? malloc(n_active * dim * sizeof *rest) : NULL;
    uint32_t *rest_ids = n_active ? malloc(n_active * k * sizeof *rest_ids) : NULL;
    float *rest_d = n_active ? malloc(n_active * k * sizeof *rest_d) : NULL;
    if (n_active && (!rest || !rest_ids || !rest_d))
        s = grip_fail(ctx, GRIP_ENOMEM, "kdtree_hd: out of memory finishing %zu queries", n_active);
    for (size_t a = 0; !s && a < n_active; ++a)
        memcpy(rest + a * dim, queries + active[a] * dim, dim * sizeof *rest);
    if (!s && n_active)
        s = grip_bruteforce_search(ctx, sc->rows, sc->t->n_rows, rest, n_active, dim, k, sc->max_sqdist, rest_ids,
                                   rest_d);
    for (size_t a = 0; !s && a < n_active; ++a) {
        memcpy(ids + active[a] * k, rest_ids + a * k, k * sizeof *ids);
        memcpy(sqdist + active[a] * k, rest_d + a * k, k * sizeof *sqdist);
    }
    free(rest);
    free(rest_ids);
    free(rest_d);
    free(f);
    free(leaves);
    free(active);
    return s;
}

grip_status grip_kdtree_hd_search(grip_ctx *ctx, const grip_kdtree_hd *tree, const float *rows, const float *queries,
                                  size_t m, uint32_t k, uint32_t checks, uint32_t finish_below, float max_sqdist,
                                  uint32_t *ids, float *sqdist)
{
    if (!tree)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd.search: no tree");
    if (tree->n_points > 0 && !rows)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd.search: rows is NULL");
    if (m > 0 && !queries)
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd.search: queries is NULL with %zu rows", m);
    if (m > 0 && k > 0 && (!ids || !sqdist))
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd.search: output ids or sqdist is NULL");
    if (isnan(max_sqdist))
        return grip_fail(ctx, GRIP_EINVAL, "kdtree_hd.search: max_sqdist is NaN");
    if (m == 0 || k == 0)
        return GRIP_OK;
    const search_ctx sc = {tree, rows, max_sqdist};
    if (checks == 0 || finish_below == 0)
        return search_independent(ctx, &sc, queries, m, k, checks, ids, sqdist);
    return search_rounds(ctx, &sc, queries, m, k, checks, finish_below, ids, sqdist);
}
