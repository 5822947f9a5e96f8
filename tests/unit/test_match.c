/* test_match.c -- match policies on constructed cases: the strict squared-distance bound, Lowe's ratio test on
 * Euclidean distances, the mutual filter with its tie rule, k > 1 ordering and model ids, bad lists and
 * policies. (PCL's tutorial matching is in test_match_tutorial.c, which needs the shared data.) */
#include "test_support.h"
#include "core/array.h"
#include "index/bruteforce.h"
#include "match/match_mutual.h"
#include "match/match_select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_Q 16
#define MAX_K 4

/* Runs the search the policy asks for (grip_bruteforce_search), the reverse search when mutual, then the selection. */
static grip_status match(grip_ctx *ctx, const grip_match_policy *p, const float *ref, size_t n, const float *q,
                         size_t m, size_t dim, const uint32_t *model_ids, grip_correspondences *out)
{
    uint32_t ids[MAX_Q * MAX_K], nearest[MAX_Q];
    float d[MAX_Q * MAX_K];
    uint32_t k = grip_match_search_k(p);
    ck_assert_uint_le(k, MAX_K);
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, n, q, m, dim, k, grip_match_search_bound(p), ids, d), GRIP_OK);
    if (p->mutual)
        ck_assert_int_eq(grip_match_nearest_queries(ctx, ref, n, q, m, dim, nearest), GRIP_OK);
    return grip_match_select(ctx, p, ids, d, m, k, n, model_ids, p->mutual ? nearest : NULL, out);
}

static void expect_pairs(const grip_correspondences *c, size_t count, const uint32_t *query, const uint32_t *reference)
{
    ck_assert_uint_eq(c->count, count);
    for (size_t i = 0; i < count; ++i) {
        ck_assert_uint_eq(c->query[i], query[i]);
        ck_assert_uint_eq(c->reference[i], reference[i]);
    }
}

START_TEST(bound_is_strict)
{
    grip_ctx *ctx = grip_test_ctx();
    const float ref[] = {0.0f, 4.0f};
    const float q[] = {0.5f, 0.25f, 3.0f, NAN}; /* squared distances 0.25 (= bound), 0.0625, 1.0, none */
    grip_match_policy p = {1, 0.25f, 0.0f, 0};
    grip_correspondences c;
    ck_assert_int_eq(match(ctx, &p, ref, 2, q, 4, 1, NULL, &c), GRIP_OK);
    expect_pairs(&c, 1, (uint32_t[]){1}, (uint32_t[]){0});
    ck_assert(c.sqdist[0] == 0.0625f);
    ck_assert_uint_eq(c.model_id[0], 0);
    grip_correspondences_free(&c);
    p.max_sqdist = INFINITY;
    ck_assert_int_eq(match(ctx, &p, ref, 2, q, 4, 1, NULL, &c), GRIP_OK);
    expect_pairs(&c, 3, (uint32_t[]){0, 1, 2}, (uint32_t[]){0, 0, 1});
    grip_correspondences_free(&c);
    grip_ctx_free(ctx);
}
END_TEST

/* References at 0, 1 and 10 on a line. Euclidean ratios of the queries' two nearest: q 0.1 -> 0.1/0.9,
 * q 0.5 -> 1 (a tie), q 0.4 -> 0.4/0.6 = 0.667 (its squared ratio is 0.444), q 0.45 -> 0.818. */
START_TEST(ratio_on_euclidean_distances)
{
    grip_ctx *ctx = grip_test_ctx();
    const float ref[] = {0.0f, 1.0f, 10.0f};
    const float q[] = {0.1f, 0.5f, 0.4f, 0.45f};
    grip_match_policy p = {1, INFINITY, 0.5f, 0};
    ck_assert_uint_eq(grip_match_search_k(&p), 2);
    ck_assert(isinf(grip_match_search_bound(&p)));
    grip_correspondences c;
    ck_assert_int_eq(match(ctx, &p, ref, 3, q, 4, 1, NULL, &c), GRIP_OK);
    expect_pairs(&c, 1, (uint32_t[]){0}, (uint32_t[]){0}); /* 0.667 >= 0.5: on squared distances it would pass */
    grip_correspondences_free(&c);
    p.ratio = 0.8f;
    ck_assert_int_eq(match(ctx, &p, ref, 3, q, 4, 1, NULL, &c), GRIP_OK);
    expect_pairs(&c, 2, (uint32_t[]){0, 2}, (uint32_t[]){0, 0});
    grip_correspondences_free(&c);
    p.ratio = 0.85f;
    p.k = 3; /* the ratio test keeps the best only */
    ck_assert_int_eq(match(ctx, &p, ref, 3, q, 4, 1, NULL, &c), GRIP_OK);
    expect_pairs(&c, 3, (uint32_t[]){0, 2, 3}, (uint32_t[]){0, 0, 0});
    grip_correspondences_free(&c);
    p.ratio = 1.0f; /* an exact tie never passes */
    ck_assert_int_eq(match(ctx, &p, ref, 3, q + 1, 1, 1, NULL, &c), GRIP_OK);
    ck_assert_uint_eq(c.count, 0);
    ck_assert_ptr_null(c.query);
    /* the bound still applies after the test: q 0.4 passes the ratio but 0.16 is not < 0.1 */
    p.max_sqdist = 0.1f;
    ck_assert_int_eq(match(ctx, &p, ref, 3, q, 4, 1, NULL, &c), GRIP_OK);
    expect_pairs(&c, 1, (uint32_t[]){0}, (uint32_t[]){0});
    grip_correspondences_free(&c);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(ratio_with_a_single_reference_row)
{
    grip_ctx *ctx = grip_test_ctx();
    const float ref[] = {0.0f, NAN}, q[] = {3.0f};
    grip_match_policy p = {1, INFINITY, 0.8f, 0};
    grip_correspondences c;
    ck_assert_int_eq(match(ctx, &p, ref, 2, q, 1, 1, NULL, &c), GRIP_OK);
    expect_pairs(&c, 1, (uint32_t[]){0}, (uint32_t[]){0});
    grip_correspondences_free(&c);
    grip_ctx_free(ctx);
}
END_TEST

/* References at 0 and 10; queries 1, 0.5, 9, -0.5. Row 0's nearest queries are 0.5 (q1) and -0.5 (q3) at equal
 * distance: the lower, q1, wins. q0 and q3 pick row 0 but are not its nearest query. */
START_TEST(mutual_filter)
{
    grip_ctx *ctx = grip_test_ctx();
    const float ref[] = {0.0f, 10.0f};
    const float q[] = {1.0f, 0.5f, 9.0f, -0.5f};
    uint32_t nearest[2];
    ck_assert_int_eq(grip_match_nearest_queries(ctx, ref, 2, q, 4, 1, nearest), GRIP_OK);
    ck_assert_uint_eq(nearest[0], 1);
    ck_assert_uint_eq(nearest[1], 2);
    grip_match_policy p = {1, INFINITY, 0.0f, 1};
    grip_correspondences c;
    ck_assert_int_eq(match(ctx, &p, ref, 2, q, 4, 1, NULL, &c), GRIP_OK);
    expect_pairs(&c, 2, (uint32_t[]){1, 2}, (uint32_t[]){0, 1});
    grip_correspondences_free(&c);
    /* with k = 2, a query keeps each listed row whose nearest query it is */
    p.k = 2;
    ck_assert_int_eq(match(ctx, &p, ref, 2, q, 4, 1, NULL, &c), GRIP_OK);
    expect_pairs(&c, 2, (uint32_t[]){1, 2}, (uint32_t[]){0, 1});
    grip_correspondences_free(&c);
    /* q2 moved to 12 stays row 1's nearest; row 1 is also q2's only list entry within the bound */
    const float q2[] = {1.0f, 0.5f, 12.0f, -0.5f};
    p.max_sqdist = 5.0f;
    ck_assert_int_eq(match(ctx, &p, ref, 2, q2, 4, 1, NULL, &c), GRIP_OK);
    expect_pairs(&c, 2, (uint32_t[]){1, 2}, (uint32_t[]){0, 1});
    grip_correspondences_free(&c);
    /* a non-finite reference row has no nearest query */
    const float ref_nan[] = {NAN, 10.0f};
    ck_assert_int_eq(grip_match_nearest_queries(ctx, ref_nan, 2, q, 4, 1, nearest), GRIP_OK);
    ck_assert_uint_eq(nearest[0], UINT32_MAX);
    ck_assert_uint_eq(nearest[1], 2);
    grip_ctx_free(ctx);
}
END_TEST

/* The reverse search over the listed rows only (match_mutual.h) gives each listed row the nearest query the full
 * reverse search gives it, and UINT32_MAX to every other row: on clustered rows with exact duplicates (ties among
 * queries), negative coordinates and non-finite rows among both sets. */
START_TEST(mutual_over_listed_rows_equals_the_full_reverse_search)
{
    grip_ctx *ctx = grip_test_ctx();
    uint64_t state = 4242;
    const size_t n = 700, m = 120, dim = 9;
    const uint32_t k = 3;
    float *ref = grip_test_clustered_rows(&state, n, dim, 20), *q = grip_test_clustered_rows(&state, m, dim, 20);
    for (size_t i = 0; i + 1 < m; i += 7) /* twins: the lower query must win */
        memcpy(q + (i + 1) * dim, q + i * dim, dim * sizeof *q);
    ref[5 * dim + 2] = NAN;
    ref[17 * dim] = INFINITY;
    q[3 * dim + 4] = NAN;
    uint32_t *ids = malloc(m * k * sizeof *ids), *full = malloc(n * sizeof *full), *listed = malloc(n * sizeof *listed);
    float *d = malloc(m * k * sizeof *d);
    ck_assert(ids && full && listed && d);
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, n, q, m, dim, k, INFINITY, ids, d), GRIP_OK);
    ids[0] = 5; /* a non-finite row listed: it has no nearest query */
    ck_assert_int_eq(grip_match_nearest_queries(ctx, ref, n, q, m, dim, full), GRIP_OK);
    grip_array ref_a = grip_array_host_view(GRIP_F32, n, dim, ref), q_a = grip_array_host_view(GRIP_F32, m, dim, q);
    ck_assert_int_eq(grip_match_nearest_queries_listed(ctx, 0, NULL, &ref_a, &q_a, ids, k, listed), GRIP_OK);
    size_t n_listed = 0;
    for (size_t r = 0; r < n; ++r) {
        int is_listed = 0;
        for (size_t i = 0; i < m * k; ++i)
            is_listed |= ids[i] == r;
        n_listed += is_listed;
        ck_assert_uint_eq(listed[r], is_listed ? full[r] : UINT32_MAX);
    }
    ck_assert_uint_eq(listed[5], UINT32_MAX);
    ck_assert_uint_gt(n_listed, 50);
    ck_assert_uint_lt(n_listed, n); /* the search really was restricted */
    /* lists of padding only, and no queries at all: every row UINT32_MAX, nothing searched */
    for (size_t i = 0; i < m * k; ++i)
        ids[i] = UINT32_MAX;
    ck_assert_int_eq(grip_match_nearest_queries_listed(ctx, 0, NULL, &ref_a, &q_a, ids, k, listed), GRIP_OK);
    for (size_t r = 0; r < n; ++r)
        ck_assert_uint_eq(listed[r], UINT32_MAX);
    grip_array no_q = grip_array_host_view(GRIP_F32, 0, dim, NULL);
    listed[0] = 7;
    ck_assert_int_eq(grip_match_nearest_queries_listed(ctx, 0, NULL, &ref_a, &no_q, NULL, k, listed), GRIP_OK);
    ck_assert_uint_eq(listed[0], UINT32_MAX);
    ck_assert_int_eq(grip_match_nearest_queries_listed(ctx, 0, NULL, &ref_a, &q_a, ids, k, NULL), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "match.mutual"));
    free(ids);
    free(full);
    free(listed);
    free(d);
    free(ref);
    free(q);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(k_lists_sorted_with_model_ids)
{
    grip_ctx *ctx = grip_test_ctx();
    /* 2D rows; rows 0-2 belong to model 0, rows 3-5 to model 1; rows 1 and 4 are twins (a tie) */
    const float ref[] = {0, 0, 1, 0, 5, 5, -1, -1, 1, 0, 9, 9};
    const uint32_t model_ids[] = {0, 0, 0, 1, 1, 1};
    const float q[] = {0.9f, 0.1f, 8, 8};
    grip_match_policy p = {3, 20.0f, 0.0f, 0};
    grip_correspondences c;
    ck_assert_int_eq(match(ctx, &p, ref, 6, q, 2, 2, model_ids, &c), GRIP_OK);
    /* q0: rows 1 and 4 at 0.02 (tie: 1 first), then row 0 at 0.82; q1: row 5 at 2, row 2 at 18 */
    expect_pairs(&c, 5, (uint32_t[]){0, 0, 0, 1, 1}, (uint32_t[]){1, 4, 0, 5, 2});
    const uint32_t models[] = {0, 1, 0, 1, 0};
    for (size_t i = 0; i < c.count; ++i) {
        ck_assert_uint_eq(c.model_id[i], models[i]);
        if (i > 0 && c.query[i] == c.query[i - 1])
            ck_assert_float_le(c.sqdist[i - 1], c.sqdist[i]);
    }
    grip_correspondences_free(&c);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(bad_policies_and_lists_refused)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_correspondences c = {0, NULL, NULL, NULL, NULL};
    const uint32_t ids[] = {0, 5};
    const float d[] = {0.1f, 0.2f};
    grip_match_policy p = {0, INFINITY, 0.0f, 0};
    ck_assert_int_eq(grip_match_select(ctx, &p, ids, d, 1, 2, 6, NULL, NULL, &c), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "match.k"));
    p = (grip_match_policy){1, INFINITY, 1.5f, 0};
    ck_assert_int_eq(grip_match_select(ctx, &p, ids, d, 1, 2, 6, NULL, NULL, &c), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "match.ratio"));
    p = (grip_match_policy){1, NAN, 0.0f, 0};
    ck_assert_int_eq(grip_match_select(ctx, &p, ids, d, 1, 2, 6, NULL, NULL, &c), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "match.max_sqdist"));
    p = (grip_match_policy){1, INFINITY, 0.8f, 0};
    ck_assert_int_eq(grip_match_select(ctx, &p, ids, d, 2, 1, 6, NULL, NULL, &c), GRIP_EINVAL); /* 1 column */
    p = (grip_match_policy){2, INFINITY, 0.0f, 0};
    ck_assert_int_eq(grip_match_select(ctx, &p, ids, d, 1, 2, 5, NULL, NULL, &c), GRIP_EINVAL); /* id 5 of 5 */
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "beyond"));
    p = (grip_match_policy){1, INFINITY, 0.0f, 1};
    ck_assert_int_eq(grip_match_select(ctx, &p, ids, d, 1, 2, 6, NULL, NULL, &c), GRIP_EINVAL); /* no nearest */
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "match.mutual"));
    ck_assert_uint_eq(c.count, 0);
    ck_assert_ptr_null(c.query);
    grip_ctx_free(ctx);
}
END_TEST

static Suite *match_suite(void)
{
    Suite *s = suite_create("match_select");
    TCase *tc = tcase_create("policies");
    tcase_add_test(tc, bound_is_strict);
    tcase_add_test(tc, ratio_on_euclidean_distances);
    tcase_add_test(tc, ratio_with_a_single_reference_row);
    tcase_add_test(tc, mutual_filter);
    tcase_add_test(tc, mutual_over_listed_rows_equals_the_full_reverse_search);
    tcase_add_test(tc, k_lists_sorted_with_model_ids);
    tcase_add_test(tc, bad_policies_and_lists_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return grip_test_run(match_suite());
}
