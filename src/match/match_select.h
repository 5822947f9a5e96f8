/* match_select.h -- correspondences from k-nearest-neighbour lists, under a match policy: plain k-NN with a
 * squared-distance bound (PCL's correspondence-grouping tutorial), Lowe's ratio test, and the mutual
 * (cross-check) filter. The lists come from any index's search (ids m x k, sqdist m x k, as grip_index.search
 * and grip_bruteforce_search write them: sorted, padded with UINT32_MAX / +inf). */
#ifndef GRIP_MATCH_MATCH_SELECT_H
#define GRIP_MATCH_MATCH_SELECT_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

typedef struct grip_match_policy {
    /* Correspondences kept per query, at most (>= 1). The ratio test keeps only the best, whatever k is. */
    uint32_t k;
    /* A pair is kept only when its squared distance is strictly below this bound, as PCL's tutorial's
     * `if (found == 1 && sqr_dist < 0.25f)`. INFINITY: no bound. */
    float max_sqdist;
    /* Lowe's ratio test on Euclidean (not squared) distances, 0 = off, else in (0, 1]: a query's best pair is kept
     * only when sqrt(sqdist1) < ratio * sqrt(sqdist2), sqdist2 being its second nearest reference row. A query
     * with no second neighbour (a single valid reference row) passes. */
    float ratio;
    /* 1: keep (q, r) only when q is also r's nearest query (ties to the lower query row). */
    uint32_t mutual;
} grip_match_policy;

/* GRIP_ECONFIG naming the field ("match.k", "match.max_sqdist", "match.ratio") when the policy is out of range. */
grip_status grip_match_policy_check(grip_ctx *ctx, const grip_match_policy *policy);

/* What the neighbour search must return for the policy to see everything it needs: this many neighbours per
 * query (k; 2 for the ratio test), within this inclusive squared-distance bound (INFINITY for the ratio test,
 * whose second neighbour must not be cut by the bound). */
uint32_t grip_match_search_k(const grip_match_policy *policy);
float grip_match_search_bound(const grip_match_policy *policy);

/* Correspondences sorted by query, then by squared distance (ties to the lower reference row). The four arrays
 * hold `count` entries each (all NULL when count == 0); grip_match_select() allocates them and the caller frees
 * them with grip_correspondences_free(). */
typedef struct grip_correspondences {
    size_t count;
    uint32_t *query;     /* query row */
    uint32_t *reference; /* reference row */
    uint32_t *model_id;  /* model of the reference row */
    float *sqdist;       /* squared descriptor distance */
} grip_correspondences;

void grip_correspondences_free(grip_correspondences *c);

/* Applies the policy to the neighbour lists of m queries (ids, sqdist: m x list_k, list_k >=
 * grip_match_search_k(policy)) over n_reference reference rows. model_ids (n_reference entries) may be NULL: all
 * model 0. nearest_query (n_reference entries: each reference row's nearest query, UINT32_MAX for none, as
 * grip_match_nearest_queries() writes it) is needed only when policy->mutual, else ignored (may be NULL).
 * GRIP_EINVAL for a list id >= n_reference, too few list columns or a missing nearest_query; GRIP_ENOMEM.
 * *out is written only on success. */
grip_status grip_match_select(grip_ctx *ctx, const grip_match_policy *policy, const uint32_t *ids,
                              const float *sqdist, size_t m, uint32_t list_k, size_t n_reference,
                              const uint32_t *model_ids, const uint32_t *nearest_query, grip_correspondences *out);

/* For the mutual filter: writes nearest_query[r] (n entries, caller-allocated), the query row (of queries, m x dim)
 * nearest to reference row r (of ref, n x dim), ties to the lower query row; UINT32_MAX for a non-finite
 * reference row or when no query row is finite. Exact, by grip_bruteforce_search with the roles swapped. */
grip_status grip_match_nearest_queries(grip_ctx *ctx, const float *ref, size_t n, const float *queries, size_t m,
                                       size_t dim, uint32_t *nearest_query);

#endif
