/* match_knn.c -- the `knn` match stage: k nearest reference rows per query under a squared-distance bound, with
 * Lowe's ratio test and the mutual filter as options (src/match/match_select.c). Works with any plugin's index:
 * it only calls index->search (and reads index->reference for the mutual filter, and the GPU search options of this
 * plugin's own `bruteforce` index). The lists are selected on the CPU; on a CUDA stage the mutual filter's reverse
 * search runs on the GPU. */
#include "stages/stage.h"
#include "stages/index_bruteforce.h"
#include "stages/index_common.h"
#include "stages/registry.h"
#include "stages/results.h"
#include "match/match_mutual.h"
#include "match/match_select.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const grip_param_info knn_params[] = {
    GRIP_PARAM_DEVICE,
    GRIP_PARAM_FALLBACK,
    {sizeof(grip_param_info), GRIP_PARAM_INT, "k", "1", 1, 1000, NULL, "correspondences kept per query, best first"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "max_sqdist", "0", 0, 1e30, NULL,
     "keep a pair only when its squared descriptor distance is below this (0: no bound)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "ratio", "0", 0, 1, NULL,
     "Lowe's ratio test on distances, best < ratio * second (0: off)"},
    {sizeof(grip_param_info), GRIP_PARAM_BOOL, "mutual", "false", 0, 0, NULL,
     "keep (q, r) only when q is also r's nearest query"},
};

static grip_match_policy policy_of(const grip_stage *st)
{
    grip_match_policy p;
    memset(&p, 0, sizeof p);
    p.k = (uint32_t)grip_stage_integer(st, "k");
    double bound = grip_stage_number(st, "max_sqdist");
    p.max_sqdist = bound > 0 ? (float)bound : INFINITY;
    p.ratio = (float)grip_stage_number(st, "ratio");
    p.mutual = (uint32_t)grip_stage_bool(st, "mutual");
    return p;
}

/* A failed search, told in the match stage's context: the index's own text when it is this plugin's (it reports in
 * the context it was built in, maybe another one), else the status. */
static grip_status search_failed(grip_ctx *ctx, const grip_index *index, grip_status s)
{
    const grip_index_head *head = grip_index_own(index);
    if (head && head->ctx == ctx)
        return s; /* the search said why in this very context */
    char cause[GRIP_ERROR_TEXT_MAX / 2];
    snprintf(cause, sizeof cause, "%s",
             head ? grip_ctx_error_text(grip_ctx_is_live(head->ctx) ? head->ctx : NULL) : grip_status_str(s));
    return grip_fail(ctx, s, "match: index.search failed: %s", cause);
}

/* Neighbour lists of every query from the index, in host memory. */
static grip_status search_lists(grip_ctx *ctx, grip_index *index, const grip_array *queries,
                                const grip_match_policy *p, grip_array *ids, grip_array *sqdist)
{
    uint32_t k = grip_match_search_k(p);
    grip_status s = grip_array_alloc_host(ctx, ids, GRIP_U32, queries->rows, k);
    if (!s)
        s = grip_array_alloc_host(ctx, sqdist, GRIP_F32, queries->rows, k);
    if (!s && queries->rows > 0) {
        s = index->search(index, queries, k, grip_match_search_bound(p), ids, sqdist);
        if (s)
            s = search_failed(ctx, index, s);
    }
    return s;
}

/* For the mutual filter: the nearest query of each reference row the lists name (match_mutual.h), on the GPU when
 * the stage runs there, with the GPU search options of the index when it is this plugin's `bruteforce` (the choice
 * made for the index holds for the matching's every GPU search), else the defaults. *nearest is malloc'd (caller
 * frees). */
static grip_status nearest_queries(grip_stage *st, grip_index *index, const grip_array *queries,
                                   const grip_array *ids, uint32_t **nearest)
{
    grip_ctx *ctx = st->ctx;
    *nearest = NULL;
    if (index->struct_size < offsetof(grip_index, reference) + sizeof index->reference || index->reference.rows == 0)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "match.mutual: this index keeps no copy of its reference rows");
    grip_status s = grip_array_check(ctx, &index->reference, GRIP_F32, index->dim, "match: index reference");
    if (!s && index->reference.rows != index->rows) /* nearest[] has index->rows entries */
        s = grip_fail(ctx, GRIP_EINVAL, "match: the index keeps %llu reference rows but says it has %llu",
                      (unsigned long long)index->reference.rows, (unsigned long long)index->rows);
    if (s)
        return s;
    *nearest = malloc((size_t)index->rows * sizeof **nearest + 1);
    if (!*nearest)
        return grip_fail(ctx, GRIP_ENOMEM, "match: out of memory");
    static const grip_bruteforce_cuda_options defaults = GRIP_BRUTEFORCE_CUDA_OPTIONS_DEFAULT;
    const grip_bruteforce_cuda_options *own = grip_index_bruteforce_options(index);
    return grip_match_nearest_queries_listed(ctx, st->use_cuda, own ? own : &defaults, &index->reference, queries,
                                             ids->data, (uint32_t)ids->cols, *nearest);
}

/* The index as match() reads it (it may come from another plugin, and be malformed): a usable grip_index whose
 * model_ids cover its rows in host memory, ascending, each below n_models. */
static grip_status check_index(grip_ctx *ctx, const grip_index *index)
{
    grip_status s = grip_index_check(ctx, index, "match: index");
    if (!s)
        s = grip_array_check(ctx, &index->model_ids, GRIP_U32, 1, "match: index.model_ids");
    if (!s && (index->model_ids.rows != index->rows || (index->rows && index->model_ids.memory != GRIP_MEM_HOST)))
        s = grip_fail(ctx, GRIP_EINVAL, "match: index.model_ids must cover the index's %llu rows in host memory",
                      (unsigned long long)index->rows);
    const uint32_t *ids = s ? NULL : index->model_ids.data;
    for (uint64_t r = 0; !s && r < index->rows; r++) {
        if (ids[r] >= index->n_models)
            s = grip_fail(ctx, GRIP_EINVAL, "match: index row %llu names model %u of %u", (unsigned long long)r, ids[r],
                          index->n_models);
        else if (r > 0 && ids[r] < ids[r - 1])
            s = grip_fail(ctx, GRIP_EINVAL, "match: index.model_ids must ascend (row %llu has model %u after %u)",
                          (unsigned long long)r, ids[r], ids[r - 1]);
    }
    return s;
}

/* The first row of model m among the index's ascending model ids. */
static uint64_t first_row_of(const grip_index *index, uint32_t m)
{
    const uint32_t *ids = index->model_ids.data;
    uint64_t lo = 0, hi = index->rows;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < m)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Packs correspondences into a grip_matches, with reference rows counted within their model. */
static grip_status pack_matches(grip_ctx *ctx, const grip_index *index, const grip_correspondences *c,
                                uint32_t out_memory, grip_matches **out)
{
    grip_matches *m = NULL;
    grip_status s = grip_matches_new(ctx, &m);
    if (s)
        return s;
    m->count = c->count;
    s = grip_array_alloc_host(ctx, &m->query, GRIP_U32, c->count, 1);
    if (!s)
        s = grip_array_alloc_host(ctx, &m->reference, GRIP_U32, c->count, 1);
    if (!s)
        s = grip_array_alloc_host(ctx, &m->model_id, GRIP_U32, c->count, 1);
    if (!s)
        s = grip_array_alloc_host(ctx, &m->sqdist, GRIP_F32, c->count, 1);
    if (!s && c->count > 0) { /* with no pair, the correspondences' arrays are NULL */
        uint32_t *ref = m->reference.data;
        for (size_t i = 0; i < c->count; i++)
            ref[i] = (uint32_t)(c->reference[i] - first_row_of(index, c->model_id[i]));
        memcpy(m->query.data, c->query, c->count * sizeof(uint32_t));
        memcpy(m->model_id.data, c->model_id, c->count * sizeof(uint32_t));
        memcpy(m->sqdist.data, c->sqdist, c->count * sizeof(float));
    }
    grip_array *arrays[] = {&m->query, &m->reference, &m->model_id, &m->sqdist};
    for (size_t i = 0; i < 4 && !s; i++)
        s = grip_result_array_place(ctx, arrays[i], out_memory);
    if (s) {
        m->release(m);
        return s;
    }
    *out = m;
    return GRIP_OK;
}

/* One match() where st->use_cuda says, once the call is checked. */
static grip_status match_once(grip_stage *st, grip_index *index, const grip_array *queries, uint32_t out_memory,
                              grip_matches **out)
{
    grip_ctx *ctx = st->ctx;
    grip_status s = check_index(ctx, index);
    if (s)
        return s;
    s = grip_array_check(ctx, queries, GRIP_F32, 0, "match: queries");
    if (s)
        return s;
    if (queries->rows && queries->cols != index->dim)
        return grip_fail(ctx, GRIP_EINVAL, "match: queries have %llu dimensions, the index %u",
                         (unsigned long long)queries->cols, index->dim);
    grip_match_policy p = policy_of(st);
    s = grip_match_policy_check(ctx, &p);
    grip_array ids = {0}, sqdist = {0};
    uint32_t *nearest = NULL;
    grip_correspondences c = {0};
    if (!s)
        s = search_lists(ctx, index, queries, &p, &ids, &sqdist);
    if (!s && p.mutual)
        s = nearest_queries(st, index, queries, &ids, &nearest);
    if (!s)
        s = grip_match_select(ctx, &p, ids.data, sqdist.data, (size_t)queries->rows, (uint32_t)ids.cols,
                              (size_t)index->rows, index->model_ids.data, nearest, &c);
    if (!s)
        s = pack_matches(ctx, index, &c, out_memory, out);
    grip_correspondences_free(&c);
    free(nearest);
    grip_array_free_host(&ids);
    grip_array_free_host(&sqdist);
    return s;
}

static grip_status knn_match(grip_stage *st, grip_index *index, const grip_array *queries, uint32_t out_memory,
                             grip_matches **out)
{
    grip_status s = grip_stage_check_call(&grip_match_knn, st, out, out_memory);
    if (!s)
        GRIP_STAGE_CALL(st, s, match_once(st, index, queries, out_memory, out));
    return s;
}

static grip_status knn_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_match_knn = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_MATCH,
    .name = "knn",
    .summary = "k nearest reference descriptors per query, squared-distance bound, ratio test, mutual filter",
#ifdef GRIP_HAVE_CUDA
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
#else
    .backends = GRIP_BACKEND_CPU,
#endif
    .n_params = sizeof knn_params / sizeof knn_params[0],
    .params = knn_params,
    .create = knn_create,
    .destroy = grip_stage_destroy,
    .match = knn_match,
};

static grip_status knn_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_match_knn, ctx, kv, n_kv, out);
}
