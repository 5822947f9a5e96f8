/* match_select.c -- see match_select.h. */
#include "match/match_select.h"
#include "index/bruteforce.h"

#include <math.h>
#include <stdlib.h>

grip_status grip_match_policy_check(grip_ctx *ctx, const grip_match_policy *policy)
{
    if (!policy)
        return grip_fail(ctx, GRIP_EINVAL, "match: policy is NULL");
    if (policy->k < 1)
        return grip_fail(ctx, GRIP_ECONFIG, "match.k: must be >= 1, got %u", policy->k);
    if (isnan(policy->max_sqdist) || policy->max_sqdist <= 0.0f)
        return grip_fail(ctx, GRIP_ECONFIG, "match.max_sqdist: must be > 0 (inf for no bound), got %g",
                         (double)policy->max_sqdist);
    if (!(policy->ratio >= 0.0f && policy->ratio <= 1.0f))
        return grip_fail(ctx, GRIP_ECONFIG, "match.ratio: must be 0 (off) or in (0, 1], got %g", (double)policy->ratio);
    return GRIP_OK;
}

uint32_t grip_match_search_k(const grip_match_policy *policy)
{
    return policy->ratio > 0.0f ? 2 : policy->k;
}

float grip_match_search_bound(const grip_match_policy *policy)
{
    return policy->ratio > 0.0f ? INFINITY : policy->max_sqdist;
}

void grip_correspondences_free(grip_correspondences *c)
{
    if (!c)
        return;
    free(c->query);
    free(c->reference);
    free(c->model_id);
    free(c->sqdist);
    c->query = c->reference = c->model_id = NULL;
    c->sqdist = NULL;
    c->count = 0;
}

/* Whether the best neighbour of a query survives Lowe's test; d1 and d2 are its two nearest squared distances
 * (d2 = +inf when it has no second neighbour). */
static int passes_ratio(float ratio, float d1, float d2)
{
    if (isinf(d2))
        return 1;
    return sqrt((double)d1) < (double)ratio * sqrt((double)d2);
}

typedef struct select_job {
    const grip_match_policy *policy;
    const uint32_t *ids;
    const float *sqdist;
    uint32_t list_k;
    const uint32_t *nearest_query;
} select_job;

/* Number of leading list entries of query q that may become correspondences (before the per-pair tests). */
static uint32_t candidates_of(const select_job *job, size_t q)
{
    const float *d = job->sqdist + q * job->list_k;
    if (job->policy->ratio > 0.0f) {
        float second = job->list_k > 1 && job->ids[q * job->list_k + 1] != UINT32_MAX ? d[1] : INFINITY;
        return passes_ratio(job->policy->ratio, d[0], second) ? 1 : 0;
    }
    return job->policy->k < job->list_k ? job->policy->k : job->list_k;
}

static int keeps_pair(const select_job *job, size_t q, uint32_t j)
{
    uint32_t r = job->ids[q * job->list_k + j];
    if (r == UINT32_MAX || !(job->sqdist[q * job->list_k + j] < job->policy->max_sqdist))
        return 0;
    return !job->policy->mutual || job->nearest_query[r] == q;
}

/* Counts the kept pairs when out->query is NULL, else writes them. */
static size_t visit_pairs(const select_job *job, size_t m, const uint32_t *model_ids, grip_correspondences *out)
{
    size_t count = 0;
    for (size_t q = 0; q < m; ++q) {
        uint32_t n = job->ids[q * job->list_k] == UINT32_MAX ? 0 : candidates_of(job, q);
        for (uint32_t j = 0; j < n; ++j) {
            if (!keeps_pair(job, q, j))
                continue;
            if (out->query) {
                uint32_t r = job->ids[q * job->list_k + j];
                out->query[count] = (uint32_t)q;
                out->reference[count] = r;
                out->model_id[count] = model_ids ? model_ids[r] : 0;
                out->sqdist[count] = job->sqdist[q * job->list_k + j];
            }
            ++count;
        }
    }
    return count;
}

static grip_status check_lists(grip_ctx *ctx, const select_job *job, size_t m, size_t n_reference)
{
    if (m > 0 && (!job->ids || !job->sqdist))
        return grip_fail(ctx, GRIP_EINVAL, "match: neighbour lists are NULL for %zu queries", m);
    if (job->list_k < grip_match_search_k(job->policy))
        return grip_fail(ctx, GRIP_EINVAL, "match: lists of %u neighbours, the policy needs %u", job->list_k,
                         grip_match_search_k(job->policy));
    if (job->policy->mutual && n_reference > 0 && !job->nearest_query)
        return grip_fail(ctx, GRIP_EINVAL, "match.mutual: the reference rows' nearest queries are missing");
    for (size_t i = 0; i < m * job->list_k; ++i)
        if (job->ids[i] != UINT32_MAX && job->ids[i] >= n_reference)
            return grip_fail(ctx, GRIP_EINVAL, "match: neighbour %u of query %zu is beyond the %zu reference rows",
                             job->ids[i], i / job->list_k, n_reference);
    return GRIP_OK;
}

grip_status grip_match_select(grip_ctx *ctx, const grip_match_policy *policy, const uint32_t *ids,
                              const float *sqdist, size_t m, uint32_t list_k, size_t n_reference,
                              const uint32_t *model_ids, const uint32_t *nearest_query, grip_correspondences *out)
{
    if (!out)
        return grip_fail(ctx, GRIP_EINVAL, "match: output is NULL");
    grip_status st = grip_match_policy_check(ctx, policy);
    if (st != GRIP_OK)
        return st;
    const select_job job = {policy, ids, sqdist, list_k, nearest_query};
    st = check_lists(ctx, &job, m, n_reference);
    if (st != GRIP_OK)
        return st;
    grip_correspondences result = {0, NULL, NULL, NULL, NULL};
    size_t count = visit_pairs(&job, m, model_ids, &result);
    if (count > 0) {
        result.query = malloc(count * sizeof *result.query);
        result.reference = malloc(count * sizeof *result.reference);
        result.model_id = malloc(count * sizeof *result.model_id);
        result.sqdist = malloc(count * sizeof *result.sqdist);
        if (!result.query || !result.reference || !result.model_id || !result.sqdist) {
            grip_correspondences_free(&result);
            return grip_fail(ctx, GRIP_ENOMEM, "match: cannot allocate %zu correspondences", count);
        }
        result.count = visit_pairs(&job, m, model_ids, &result);
    }
    *out = result;
    return GRIP_OK;
}

grip_status grip_match_nearest_queries(grip_ctx *ctx, const float *ref, size_t n, const float *queries, size_t m,
                                       size_t dim, uint32_t *nearest_query)
{
    if (n == 0)
        return GRIP_OK;
    if (!nearest_query)
        return grip_fail(ctx, GRIP_EINVAL, "match.mutual: nearest_query output is NULL");
    float *scratch = malloc(n * sizeof *scratch);
    if (!scratch)
        return grip_fail(ctx, GRIP_ENOMEM, "match.mutual: cannot allocate %zu distances", n);
    grip_status st = grip_bruteforce_search(ctx, queries, m, ref, n, dim, 1, INFINITY, nearest_query, scratch);
    free(scratch);
    return st;
}
