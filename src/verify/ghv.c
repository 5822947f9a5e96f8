/* ghv.c -- global hypotheses verification, the CPU twin (see ghv.h): the scene, the terms of each hypothesis and
 * the search over subsets. */
#include "verify/ghv.h"
#include "verify/ghv_math.h"
#include "descriptor/uniform_sampling.h"
#include "spatial/resolution.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define UNSET_BITS 0xFFFFFFFFu /* above the bits of every non-negative float: "no distance yet" for a minimum */

grip_status grip_ghv_params_check(grip_ctx *ctx, const grip_ghv_params *p)
{
    const struct {
        const char *key;
        double v;
    } nonneg[] = {{"leaf", p->leaf},
                  {"inlier_threshold", p->inlier_threshold},
                  {"clutter_radius", p->clutter_radius},
                  {"occlusion_threshold", p->occlusion_threshold},
                  {"regularizer", p->regularizer},
                  {"clutter_regularizer", p->clutter_regularizer},
                  {"initial_temperature", p->initial_temperature}};
    for (size_t i = 0; i < sizeof nonneg / sizeof nonneg[0]; i++)
        if (!(nonneg[i].v >= 0) || !isfinite(nonneg[i].v))
            return grip_fail(ctx, GRIP_ECONFIG, "verify.%s: must be a finite number >= 0 (got %g)", nonneg[i].key,
                             nonneg[i].v);
    if (p->search != GRIP_GHV_SEARCH_LOCAL && p->search != GRIP_GHV_SEARCH_ANNEALING)
        return grip_fail(ctx, GRIP_ECONFIG, "verify.search: unknown search %u", p->search);
    return GRIP_OK;
}

grip_status grip_ghv_scene_resolve(grip_ctx *ctx, const grip_ghv_params *p, grip_ghv_scene *s)
{
    double r = s->resolution;
    s->params = *p;
    grip_ghv_params *q = &s->params;
    if (q->leaf == 0)
        q->leaf = GRIP_GHV_LEAF_PER_RES * r;
    if (q->inlier_threshold == 0)
        q->inlier_threshold = GRIP_GHV_INLIER_PER_RES * r;
    if (q->clutter_radius == 0)
        q->clutter_radius = GRIP_GHV_CLUTTER_PER_RES * r;
    if (q->occlusion_threshold == 0)
        q->occlusion_threshold = GRIP_GHV_OCCLUSION_PER_RES * r;
    if (!(q->leaf > 0 && q->inlier_threshold > 0 && q->clutter_radius > 0 && q->occlusion_threshold > 0))
        return grip_fail(ctx, GRIP_EINVAL,
                         "verify: the scene has no two distinct finite points to measure its resolution; give "
                         "verify.leaf, inlier_threshold, clutter_radius and occlusion_threshold");
    s->leaf = (float)q->leaf;
    s->inlier2 = (float)(q->inlier_threshold * q->inlier_threshold);
    s->clutter2 = (float)(q->clutter_radius * q->clutter_radius);
    return GRIP_OK;
}

/* The rows idx[0..count) of xyz, gathered (malloc'd). */
static float *gather_xyz(const float *xyz, const uint32_t *idx, size_t count)
{
    float *out = malloc(count * 3 * sizeof *out + 1);
    for (size_t i = 0; out && i < count; i++)
        memcpy(out + 3 * i, xyz + 3 * (size_t)idx[i], 3 * sizeof *out);
    return out;
}

/* Each row's k nearest points of the tree, padded with UINT32_MAX / +inf as the GPU search pads them. */
static void knn_rows(const grip_kdtree3d *tree, const float *xyz, size_t n, size_t k, uint32_t *ids, float *sqdist)
{
#pragma omp parallel for schedule(dynamic, 256)
    for (size_t i = 0; i < n; i++) {
        size_t got = grip_kdtree3d_knn(tree, xyz + 3 * i, k, ids + i * k, sqdist + i * k);
        for (size_t j = got; j < k; j++) {
            ids[i * k + j] = UINT32_MAX;
            sqdist[i * k + j] = INFINITY;
        }
    }
}

grip_status grip_ghv_scene_tree(grip_ctx *ctx, grip_ghv_scene *s)
{
    return s->tree ? GRIP_OK : grip_kdtree3d_build(ctx, s->xyz, s->n, &s->tree);
}

grip_status grip_ghv_scene_prepare(grip_ctx *ctx, const float *xyz, size_t n, uint32_t width, uint32_t height,
                                   const grip_ghv_params *p, grip_ghv_scene *out)
{
    memset(out, 0, sizeof *out);
    grip_status st = grip_ghv_params_check(ctx, p);
    if (!st)
        st = grip_cloud_resolution_measure(ctx, xyz, n, &out->resolution);
    if (!st)
        st = grip_ghv_scene_resolve(ctx, p, out);
    if (!st)
        st = grip_uniform_sampling(ctx, xyz, n, out->leaf, &out->rows, &out->n);
    if (!st) {
        out->xyz = gather_xyz(xyz, out->rows, out->n);
        out->neighbors = malloc(out->n * GRIP_GHV_NEIGHBORS * sizeof *out->neighbors + 1);
        out->neighbor_sqdist = malloc(out->n * GRIP_GHV_NEIGHBORS * sizeof *out->neighbor_sqdist + 1);
        if (!out->xyz || !out->neighbors || !out->neighbor_sqdist)
            st = grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    }
    if (!st)
        st = grip_ghv_scene_tree(ctx, out);
    if (!st) {
        knn_rows(out->tree, out->xyz, out->n, GRIP_GHV_NEIGHBORS, out->neighbors, out->neighbor_sqdist);
        out->full_xyz = xyz;
        out->width = width;
        out->height = height;
        if (height > 1 && (size_t)width * height == n)
            grip_pinhole_estimate(xyz, width, height, grip_ctx_threads(ctx), &out->camera);
    }
    if (st)
        grip_ghv_scene_free(out);
    return st;
}

void grip_ghv_scene_free(grip_ghv_scene *s)
{
    if (!s)
        return;
    free(s->rows);
    free(s->xyz);
    free(s->neighbors);
    free(s->neighbor_sqdist);
    grip_kdtree3d_free(s->tree);
    memset(s, 0, sizeof *s);
}

grip_status grip_ghv_model_sample(grip_ctx *ctx, const grip_ghv_scene *s, const float *xyz, size_t n, float **out_xyz,
                                  size_t *count)
{
    uint32_t *idx = NULL;
    *out_xyz = NULL;
    *count = 0;
    grip_status st = grip_uniform_sampling(ctx, xyz, n, s->leaf, &idx, count);
    if (!st) {
        *out_xyz = gather_xyz(xyz, idx, *count);
        if (!*out_xyz) {
            *count = 0;
            st = grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
        }
    }
    free(idx);
    return st;
}

/* ---- terms ---- */

/* One hypothesis's terms, in growable lists (malloc'd). */
typedef struct hyp_lists {
    uint32_t visible, outliers;
    uint64_t inlier_sq;
    size_t n_explained, n_clutter;
    uint32_t *explained_ids, *clutter_ids;
    float *explained_sqdist, *clutter_sqdist;
} hyp_lists;

/* Per-thread scratch: the minimum distance bits of every sampled scene point, and the points touched. */
typedef struct scratch {
    uint32_t *explained_bits, *clutter_bits;
    uint32_t *touched;
} scratch;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static float float_of_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t bits_of_float(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* The touched points of `bits` (count of them), ascending, moved into a new list; bits reset to UNSET_BITS. */
static int drain(uint32_t *bits, uint32_t *touched, size_t count, uint32_t **ids, float **sqdist)
{
    qsort(touched, count, sizeof *touched, cmp_u32);
    *ids = malloc(count * sizeof **ids + 1);
    *sqdist = malloc(count * sizeof **sqdist + 1);
    if (!*ids || !*sqdist)
        return -1;
    for (size_t i = 0; i < count; i++) {
        (*ids)[i] = touched[i];
        (*sqdist)[i] = float_of_bits(bits[touched[i]]);
        bits[touched[i]] = UNSET_BITS;
    }
    return 0;
}

static int hypothesis_terms(const grip_ghv_scene *s, const grip_ghv_model *m, const float pose[12], scratch *w,
                            hyp_lists *out)
{
    double cam[4] = {s->camera.fx, s->camera.fy, s->camera.cx, s->camera.cy};
    float occlusion = (float)s->params.occlusion_threshold;
    size_t touched = 0;
    for (size_t i = 0; i < m->n; i++) {
        float q[3];
        grip_ghv_transform(pose, m->xyz + 3 * i, q);
        if (s->camera.valid && !grip_ghv_visible(cam, s->full_xyz, s->width, s->height, q, occlusion))
            continue;
        out->visible++;
        uint32_t ids[GRIP_GHV_EXPLAIN_K];
        float d2[GRIP_GHV_EXPLAIN_K];
        size_t got = grip_kdtree3d_knn(s->tree, q, GRIP_GHV_EXPLAIN_K, ids, d2);
        if (got == 0 || !(d2[0] <= s->inlier2)) {
            out->outliers++;
            continue;
        }
        out->inlier_sq += grip_ghv_fixed_sq(d2[0], s->inlier2);
        for (size_t j = 0; j < got && d2[j] <= s->inlier2; j++) {
            uint32_t b = bits_of_float(d2[j]);
            if (w->explained_bits[ids[j]] == UNSET_BITS)
                w->touched[touched++] = ids[j];
            if (b < w->explained_bits[ids[j]])
                w->explained_bits[ids[j]] = b;
        }
    }
    /* clutter: the explained points' neighbours that this hypothesis does not explain */
    size_t n_clutter = 0;
    uint32_t *clutter_touched = w->touched + touched;
    for (size_t e = 0; e < touched; e++) {
        const uint32_t *nb = s->neighbors + (size_t)w->touched[e] * GRIP_GHV_NEIGHBORS;
        const float *nd = s->neighbor_sqdist + (size_t)w->touched[e] * GRIP_GHV_NEIGHBORS;
        for (size_t j = 0; j < GRIP_GHV_NEIGHBORS && nd[j] < s->clutter2; j++) {
            if (w->explained_bits[nb[j]] != UNSET_BITS)
                continue;
            uint32_t b = bits_of_float(nd[j]);
            if (w->clutter_bits[nb[j]] == UNSET_BITS)
                clutter_touched[n_clutter++] = nb[j];
            if (b < w->clutter_bits[nb[j]])
                w->clutter_bits[nb[j]] = b;
        }
    }
    out->n_explained = touched;
    out->n_clutter = n_clutter;
    /* clutter first: draining the explained points resets the bits the clutter pass reads */
    if (drain(w->clutter_bits, clutter_touched, n_clutter, &out->clutter_ids, &out->clutter_sqdist) ||
        drain(w->explained_bits, w->touched, touched, &out->explained_ids, &out->explained_sqdist))
        return -1;
    return 0;
}

void grip_ghv_terms_free(grip_ghv_terms *t)
{
    if (!t)
        return;
    free(t->visible);
    free(t->outliers);
    free(t->inlier_sq_fixed);
    free(t->explained_offsets);
    free(t->clutter_offsets);
    free(t->explained_ids);
    free(t->clutter_ids);
    free(t->explained_sqdist);
    free(t->clutter_sqdist);
    memset(t, 0, sizeof *t);
}

/* The lists of h hypotheses concatenated into *t (allocated here). */
static int terms_assemble(const hyp_lists *l, size_t h, grip_ghv_terms *t)
{
    t->count = h;
    t->visible = malloc(h * sizeof *t->visible + 1);
    t->outliers = malloc(h * sizeof *t->outliers + 1);
    t->inlier_sq_fixed = malloc(h * sizeof *t->inlier_sq_fixed + 1);
    t->explained_offsets = malloc((h + 1) * sizeof *t->explained_offsets);
    t->clutter_offsets = malloc((h + 1) * sizeof *t->clutter_offsets);
    if (!t->visible || !t->outliers || !t->inlier_sq_fixed || !t->explained_offsets || !t->clutter_offsets)
        return -1;
    t->explained_offsets[0] = t->clutter_offsets[0] = 0;
    for (size_t i = 0; i < h; i++) {
        t->visible[i] = l[i].visible;
        t->outliers[i] = l[i].outliers;
        t->inlier_sq_fixed[i] = l[i].inlier_sq;
        t->explained_offsets[i + 1] = t->explained_offsets[i] + l[i].n_explained;
        t->clutter_offsets[i + 1] = t->clutter_offsets[i] + l[i].n_clutter;
    }
    size_t ne = t->explained_offsets[h], nc = t->clutter_offsets[h];
    t->explained_ids = malloc(ne * sizeof *t->explained_ids + 1);
    t->explained_sqdist = malloc(ne * sizeof *t->explained_sqdist + 1);
    t->clutter_ids = malloc(nc * sizeof *t->clutter_ids + 1);
    t->clutter_sqdist = malloc(nc * sizeof *t->clutter_sqdist + 1);
    if (!t->explained_ids || !t->explained_sqdist || !t->clutter_ids || !t->clutter_sqdist)
        return -1;
    for (size_t i = 0; i < h; i++) {
        memcpy(t->explained_ids + t->explained_offsets[i], l[i].explained_ids, l[i].n_explained * sizeof(uint32_t));
        memcpy(t->explained_sqdist + t->explained_offsets[i], l[i].explained_sqdist, l[i].n_explained * sizeof(float));
        memcpy(t->clutter_ids + t->clutter_offsets[i], l[i].clutter_ids, l[i].n_clutter * sizeof(uint32_t));
        memcpy(t->clutter_sqdist + t->clutter_offsets[i], l[i].clutter_sqdist, l[i].n_clutter * sizeof(float));
    }
    return 0;
}

grip_status grip_ghv_terms_compute(grip_ctx *ctx, const grip_ghv_scene *s, const grip_ghv_model *models,
                                   uint32_t n_models, const grip_ghv_hypothesis *hyps, size_t h, grip_ghv_terms *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < h; i++)
        if (hyps[i].model >= n_models)
            return grip_fail(ctx, GRIP_EINVAL, "verify: hypothesis %zu names model %u of %u", i, hyps[i].model,
                             n_models);
    if (!s->tree)
        return grip_fail(ctx, GRIP_EINVAL, "verify: the GHV scene has no kd-tree");
    size_t max_model = 0;
    for (uint32_t m = 0; m < n_models; m++)
        max_model = models[m].n > max_model ? models[m].n : max_model;
    hyp_lists *lists = calloc(h + 1, sizeof *lists);
    int failed = lists == NULL;
#pragma omp parallel num_threads(grip_ctx_threads(ctx)) reduction(| : failed)
    {
        /* every explained point comes from a model point's GRIP_GHV_EXPLAIN_K nearest; clutter from their
         * neighbourhoods, each point once */
        size_t touch_cap = max_model * GRIP_GHV_EXPLAIN_K + s->n + 1;
        scratch w = {malloc(s->n * sizeof(uint32_t) + 1), malloc(s->n * sizeof(uint32_t) + 1),
                     malloc(touch_cap * sizeof(uint32_t))};
        int ok = !failed && lists && w.explained_bits && w.clutter_bits && w.touched;
        if (ok) {
            memset(w.explained_bits, 0xFF, s->n * sizeof(uint32_t));
            memset(w.clutter_bits, 0xFF, s->n * sizeof(uint32_t));
        }
#pragma omp for schedule(dynamic, 1)
        for (size_t i = 0; i < h; i++)
            if (ok && hypothesis_terms(s, &models[hyps[i].model], hyps[i].pose, &w, &lists[i]))
                ok = 0;
        failed |= !ok;
        free(w.explained_bits);
        free(w.clutter_bits);
        free(w.touched);
    }
    if (!failed && terms_assemble(lists, h, out))
        failed = 1;
    for (size_t i = 0; lists && i < h; i++) {
        free(lists[i].explained_ids);
        free(lists[i].explained_sqdist);
        free(lists[i].clutter_ids);
        free(lists[i].clutter_sqdist);
    }
    free(lists);
    if (failed) {
        grip_ghv_terms_free(out);
        return grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    }
    return GRIP_OK;
}

int grip_ghv_terms_equal(const grip_ghv_terms *a, const grip_ghv_terms *b)
{
    size_t h = a->count;
    if (b->count != h)
        return 0;
    if (memcmp(a->visible, b->visible, h * sizeof(uint32_t)) ||
        memcmp(a->outliers, b->outliers, h * sizeof(uint32_t)) ||
        memcmp(a->inlier_sq_fixed, b->inlier_sq_fixed, h * sizeof(uint64_t)) ||
        memcmp(a->explained_offsets, b->explained_offsets, (h + 1) * sizeof(uint64_t)) ||
        memcmp(a->clutter_offsets, b->clutter_offsets, (h + 1) * sizeof(uint64_t)))
        return 0;
    size_t ne = a->explained_offsets[h], nc = a->clutter_offsets[h];
    return !memcmp(a->explained_ids, b->explained_ids, ne * sizeof(uint32_t)) &&
           !memcmp(a->explained_sqdist, b->explained_sqdist, ne * sizeof(float)) &&
           !memcmp(a->clutter_ids, b->clutter_ids, nc * sizeof(uint32_t)) &&
           !memcmp(a->clutter_sqdist, b->clutter_sqdist, nc * sizeof(float));
}

/* ---- search ---- */

/* The search's state: the terms as fixed-point weights, and per sampled scene point how many active hypotheses
 * explain it and the clutter weight the active ones give it. */
typedef struct search_state {
    const grip_ghv_terms *t;
    int64_t *explained_w, *clutter_w, *outlier_cost;
    int32_t *n_explained;
    int64_t *clutter_sum;
    uint8_t *active;
    int64_t cost;
} search_state;

/* The change of cost when inactive hypothesis h is added. */
static int64_t delta_on(const search_state *st, size_t h)
{
    const grip_ghv_terms *t = st->t;
    int64_t d = st->outlier_cost[h] + GRIP_GHV_UNIT;
    for (uint64_t e = t->explained_offsets[h]; e < t->explained_offsets[h + 1]; e++) {
        uint32_t p = t->explained_ids[e];
        int32_t n = st->n_explained[p];
        d -= st->explained_w[e];
        d += n == 0 ? -st->clutter_sum[p] : n == 1 ? 2 * GRIP_GHV_UNIT : GRIP_GHV_UNIT;
    }
    for (uint64_t c = t->clutter_offsets[h]; c < t->clutter_offsets[h + 1]; c++)
        if (st->n_explained[t->clutter_ids[c]] == 0)
            d += st->clutter_w[c];
    return d;
}

/* Adds (sign 1) or removes (sign -1) hypothesis h; the cost moves by `delta`. */
static void apply(search_state *st, size_t h, int sign, int64_t delta)
{
    const grip_ghv_terms *t = st->t;
    for (uint64_t e = t->explained_offsets[h]; e < t->explained_offsets[h + 1]; e++)
        st->n_explained[t->explained_ids[e]] += sign;
    for (uint64_t c = t->clutter_offsets[h]; c < t->clutter_offsets[h + 1]; c++)
        st->clutter_sum[t->clutter_ids[c]] += sign * st->clutter_w[c];
    st->active[h] = sign > 0;
    st->cost += delta;
}

/* The change of cost of flipping h, without flipping it. */
static int64_t flip_delta(search_state *st, size_t h)
{
    if (!st->active[h])
        return delta_on(st, h);
    apply(st, h, -1, 0);
    int64_t d = -delta_on(st, h);
    apply(st, h, 1, 0);
    return d;
}

static void flip(search_state *st, size_t h, int64_t delta)
{
    apply(st, h, st->active[h] ? -1 : 1, delta);
}

static void local_search(search_state *st)
{
    size_t h = st->t->count;
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < h; i++) {
            int64_t d = flip_delta(st, i);
            if (d < 0) {
                flip(st, i, d);
                changed = 1;
            }
        }
    }
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Metropolis flips under a temperature cooled linearly to 0; the state ends on the best set seen. */
static int anneal(search_state *st, const grip_ghv_params *p)
{
    size_t h = st->t->count;
    uint8_t *best = malloc(h + 1);
    if (!best)
        return -1;
    memcpy(best, st->active, h);
    int64_t best_cost = st->cost;
    uint64_t rng = p->seed;
    for (uint32_t it = 0; it < p->annealing_iterations && h; it++) {
        double temperature = p->initial_temperature * (1.0 - (double)it / p->annealing_iterations);
        size_t i = (size_t)(splitmix64(&rng) % h);
        int64_t d = flip_delta(st, i);
        double u = (double)(splitmix64(&rng) >> 11) / 9007199254740992.0;
        if (d < 0 || (temperature > 0 && u < exp(-(double)d / GRIP_GHV_UNIT / temperature))) {
            flip(st, i, d);
            if (st->cost < best_cost) {
                best_cost = st->cost;
                memcpy(best, st->active, h);
            }
        }
    }
    for (size_t i = 0; i < h; i++)
        if (st->active[i] != best[i])
            flip(st, i, flip_delta(st, i));
    free(best);
    return 0;
}

typedef struct ranked {
    int64_t cost;
    size_t h;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? -1 : 1;
    return (x->h > y->h) - (x->h < y->h);
}

static int64_t fixed(double v)
{
    return (int64_t)llround(v * GRIP_GHV_UNIT);
}

grip_status grip_ghv_search(grip_ctx *ctx, const grip_ghv_params *p, const grip_ghv_scene *s, const grip_ghv_terms *t,
                            uint32_t *accepted, int64_t *cost)
{
    size_t h = t->count, ne = t->explained_offsets ? t->explained_offsets[h] : 0,
           nc = t->clutter_offsets ? t->clutter_offsets[h] : 0;
    search_state st = {t,
                       malloc(ne * sizeof(int64_t) + 1),
                       malloc(nc * sizeof(int64_t) + 1),
                       malloc(h * sizeof(int64_t) + 1),
                       calloc(s->n + 1, sizeof(int32_t)),
                       calloc(s->n + 1, sizeof(int64_t)),
                       calloc(h + 1, 1),
                       0};
    ranked *order = malloc(h * sizeof *order + 1);
    grip_status status = GRIP_OK;
    if (!st.explained_w || !st.clutter_w || !st.outlier_cost || !st.n_explained || !st.clutter_sum || !st.active ||
        !order) {
        status = grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
        goto done;
    }
    double inlier2 = s->inlier2, clutter2 = s->clutter2;
    for (size_t e = 0; e < ne; e++)
        st.explained_w[e] = fixed(1.0 - (double)t->explained_sqdist[e] / inlier2);
    for (size_t c = 0; c < nc; c++)
        st.clutter_w[c] = fixed(p->clutter_regularizer * (1.0 - (double)t->clutter_sqdist[c] / clutter2));
    for (size_t i = 0; i < h; i++) {
        st.outlier_cost[i] = fixed(p->regularizer) * (int64_t)t->outliers[i];
        order[i].cost = delta_on(&st, i);
        order[i].h = i;
    }
    qsort(order, h, sizeof *order, cmp_ranked);
    for (size_t k = 0; k < h; k++) {
        int64_t d = delta_on(&st, order[k].h);
        if (d < 0)
            flip(&st, order[k].h, d);
    }
    if (p->search == GRIP_GHV_SEARCH_ANNEALING && anneal(&st, p)) {
        status = grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
        goto done;
    }
    local_search(&st);
    for (size_t i = 0; i < h; i++)
        accepted[i] = st.active[i];
    if (cost)
        *cost = st.cost;
done:
    free(st.explained_w);
    free(st.clutter_w);
    free(st.outlier_cost);
    free(st.n_explained);
    free(st.clutter_sum);
    free(st.active);
    free(order);
    return status;
}
