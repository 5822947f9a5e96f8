/* test_knn.c -- grip_bruteforce_search against a naive brute force: in fp64 on uniform, clustered and NaN-holed data
 * (same neighbours, up to float rounding of near-ties), exactly on duplicate-heavy data with negative values
 * (where float and double agree exactly, so ids and tie order must match), and bit for bit against FLANN's
 * float sum in dimension order; k = 1, 2, 5, k > n, empty sets, the inclusive bound, threads, bad arguments. */
#include "test_support.h"
#include "index/bruteforce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* float accumulation over a row of up to 352 dims: relative error at most (D - 1) * 2^-24 ~ 2.1e-5 */
#define FLOAT_SUM_REL_TOL 2.1e-5

typedef struct candidate {
    double d;
    uint32_t id;
} candidate;

static int compare_candidates(const void *x, const void *y)
{
    const candidate *a = x, *b = y;
    if (a->d != b->d)
        return a->d < b->d ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int row_finite(const float *r, size_t dim)
{
    for (size_t d = 0; d < dim; ++d)
        if (!isfinite(r[d]))
            return 0;
    return 1;
}

static double sqdist64(const float *a, const float *b, size_t dim)
{
    double s = 0.0;
    for (size_t d = 0; d < dim; ++d) {
        double t = (double)a[d] - (double)b[d];
        s += t * t;
    }
    return s;
}

/* FLANN L2_Simple<float>: diff and sum in float, dimension order */
static float sqdist_flann(const float *a, const float *b, size_t dim)
{
    float s = 0.0f;
    for (size_t d = 0; d < dim; ++d) {
        float t = a[d] - b[d];
        s += t * t;
    }
    return s;
}

/* All finite reference rows of one query, sorted by fp64 distance then id; returns their count. */
static size_t naive_sorted(const float *ref, size_t n, const float *q, size_t dim, candidate *out)
{
    size_t c = 0;
    for (size_t i = 0; i < n; ++i)
        if (row_finite(ref + i * dim, dim)) {
            out[c].d = sqdist64(q, ref + i * dim, dim);
            out[c++].id = (uint32_t)i;
        }
    qsort(out, c, sizeof *out, compare_candidates);
    return c;
}

/* Checks the lists of every query against the fp64 brute force: each list holds as many entries as there are
 * finite rows within the bound (at most k), its ids are distinct finite rows, its distances are FLANN's float
 * sums of those rows, sorted with ties to the lower id, and the fp64 distance of its j-th row equals the
 * j-th smallest fp64 distance up to float rounding (the same neighbours, up to the order of near-ties). */
static void check_against_naive(const float *ref, size_t n, const float *queries, size_t m, size_t dim, uint32_t k,
                                float max_sqdist, const uint32_t *ids, const float *sqdist)
{
    candidate *all = malloc((n ? n : 1) * sizeof *all);
    ck_assert_ptr_nonnull(all);
    for (size_t q = 0; q < m; ++q) {
        const float *qr = queries + q * dim;
        const uint32_t *id = ids + q * k;
        const float *d = sqdist + q * k;
        size_t c = row_finite(qr, dim) ? naive_sorted(ref, n, qr, dim, all) : 0;
        /* rows within float rounding of the bound may be in or out */
        size_t surely = 0, maybe = 0;
        while (surely < c && all[surely].d <= max_sqdist * (1.0 - FLOAT_SUM_REL_TOL))
            ++surely;
        while (maybe < c && all[maybe].d <= max_sqdist * (1.0 + FLOAT_SUM_REL_TOL))
            ++maybe;
        size_t listed = 0;
        while (listed < k && id[listed] != UINT32_MAX)
            ++listed;
        ck_assert_uint_ge(listed, surely < k ? surely : k);
        ck_assert_uint_le(listed, maybe < k ? maybe : k);
        for (uint32_t j = 0; j < k; ++j) {
            if (j >= listed) {
                ck_assert_uint_eq(id[j], UINT32_MAX);
                ck_assert(isinf(d[j]) && d[j] > 0);
                continue;
            }
            ck_assert_uint_lt(id[j], n);
            const float *r = ref + (size_t)id[j] * dim;
            ck_assert(row_finite(r, dim));
            ck_assert(d[j] == sqdist_flann(qr, r, dim)); /* bit for bit */
            ck_assert_float_le(d[j], max_sqdist);
            /* the j-th smallest float sum is within t of the j-th smallest fp64 distance (order statistics are
             * monotone), and this row's fp64 distance within t of its float sum: 2t apart at most */
            double want = all[j].d, got = sqdist64(qr, r, dim);
            ck_assert_double_le(fabs(got - want), 2.0 * FLOAT_SUM_REL_TOL * want);
            for (uint32_t i = 0; i < j; ++i)
                ck_assert_uint_ne(id[i], id[j]);
            if (j > 0) {
                ck_assert_float_le(d[j - 1], d[j]);
                if (d[j - 1] == d[j])
                    ck_assert_uint_lt(id[j - 1], id[j]);
            }
        }
    }
    free(all);
}

static void run_and_check(const float *ref, size_t n, const float *queries, size_t m, size_t dim, uint32_t k,
                          float max_sqdist)
{
    grip_ctx *ctx = grip_test_ctx();
    const size_t cells = m * k > 0 ? m * k : 1;
    uint32_t *ids = malloc(cells * sizeof *ids);
    float *d = malloc(cells * sizeof *d);
    ck_assert_ptr_nonnull(ids);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, n, queries, m, dim, k, max_sqdist, ids, d), GRIP_OK);
    check_against_naive(ref, n, queries, m, dim, k, max_sqdist, ids, d);
    free(ids);
    free(d);
    grip_ctx_free(ctx);
}

START_TEST(uniform_shot_sized)
{
    uint64_t s = 11;
    const size_t n = 700, m = 150, dim = 352;
    float *ref = grip_test_uniform_rows(&s, n, dim, 0.0f, 0.1f), *q = grip_test_uniform_rows(&s, m, dim, 0.0f, 0.1f);
    const uint32_t ks[] = {1, 2, 5};
    for (int i = 0; i < 3; ++i)
        run_and_check(ref, n, q, m, dim, ks[i], INFINITY);
    free(ref);
    free(q);
}
END_TEST

START_TEST(uniform_low_dim_with_bound)
{
    uint64_t s = 12;
    const size_t n = 1001, m = 333, dim = 3; /* n not a multiple of the panel width */
    float *ref = grip_test_uniform_rows(&s, n, dim, -1.0f, 1.0f), *q = grip_test_uniform_rows(&s, m, dim, -1.0f, 1.0f);
    run_and_check(ref, n, q, m, dim, 5, 0.01f); /* many queries have fewer than 5 rows within 0.1 */
    run_and_check(ref, n, q, m, dim, 2, INFINITY);
    free(ref);
    free(q);
}
END_TEST

START_TEST(clustered)
{
    uint64_t s = 13;
    const size_t n = 900, m = 200, dim = 33;
    float *ref = grip_test_clustered_rows(&s, n, dim, 7), *q = grip_test_clustered_rows(&s, m, dim, 7);
    run_and_check(ref, n, q, m, dim, 1, INFINITY);
    run_and_check(ref, n, q, m, dim, 5, INFINITY);
    free(ref);
    free(q);
}
END_TEST

/* Values on a grid of halves in [-1, 1]: every distance is a small multiple of 1/4, exact in float and double,
 * and most rows are duplicates, so the tie order is fully tested against the naive (dist, id) order. */
START_TEST(duplicates_negative_exact_ties)
{
    uint64_t s = 14;
    const size_t n = 300, m = 120, dim = 4;
    const uint32_t k = 7;
    float *ref = malloc(n * dim * sizeof *ref), *q = malloc(m * dim * sizeof *q);
    ck_assert_ptr_nonnull(ref);
    ck_assert_ptr_nonnull(q);
    for (size_t i = 0; i < n * dim; ++i)
        ref[i] = 0.5f * (float)((int)grip_test_uniform(&s, 0.0f, 5.0f) - 2);
    for (size_t i = 0; i < m * dim; ++i)
        q[i] = 0.5f * (float)((int)grip_test_uniform(&s, 0.0f, 5.0f) - 2);
    grip_ctx *ctx = grip_test_ctx();
    uint32_t ids[120 * 7];
    float d[120 * 7];
    candidate all[300];
    /* the bound 1.0 is an attained distance: inclusive */
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, n, q, m, dim, k, 1.0f, ids, d), GRIP_OK);
    size_t at_bound = 0;
    for (size_t i = 0; i < m; ++i) {
        size_t c = naive_sorted(ref, n, q + i * dim, dim, all);
        for (uint32_t j = 0; j < k; ++j) {
            if (j < c && all[j].d <= 1.0) {
                ck_assert_uint_eq(ids[i * k + j], all[j].id);
                ck_assert(d[i * k + j] == (float)all[j].d);
                at_bound += all[j].d == 1.0;
            } else {
                ck_assert_uint_eq(ids[i * k + j], UINT32_MAX);
                ck_assert(isinf(d[i * k + j]));
            }
        }
    }
    ck_assert_uint_gt(at_bound, 0);
    free(ref);
    free(q);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(non_finite_rows_skipped)
{
    uint64_t s = 15;
    const size_t n = 97, m = 40, dim = 16;
    float *ref = grip_test_uniform_rows(&s, n, dim, -1.0f, 1.0f), *q = grip_test_uniform_rows(&s, m, dim, -1.0f, 1.0f);
    for (size_t i = 0; i < n; i += 3) /* NaN or inf anywhere in the row */
        ref[i * dim + i % dim] = i % 2 ? NAN : INFINITY;
    memcpy(ref + 1 * dim, q + 5 * dim, dim * sizeof(float)); /* query 5 has an exact twin: row 1, distance 0 */
    for (size_t i = 0; i < m; i += 4)
        q[i * dim + (i * 7) % dim] = NAN;
    run_and_check(ref, n, q, m, dim, 5, INFINITY);
    grip_ctx *ctx = grip_test_ctx();
    uint32_t ids[40 * 2];
    float d[40 * 2];
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, n, q, m, dim, 2, INFINITY, ids, d), GRIP_OK);
    for (size_t i = 0; i < m; ++i) {
        if (i % 4 == 0) {
            ck_assert_uint_eq(ids[2 * i], UINT32_MAX);
            ck_assert_uint_eq(ids[2 * i + 1], UINT32_MAX);
        } else {
            ck_assert_uint_ne(ids[2 * i] % 3, 0);
        }
    }
    ck_assert_uint_eq(ids[10], 1);
    ck_assert(d[10] == 0.0f);
    free(ref);
    free(q);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(k_exceeds_n_and_empty_sets)
{
    grip_ctx *ctx = grip_test_ctx();
    const float ref[] = {0, 0, 3, 4, NAN, 1, -1, 0};
    const float q[] = {0, 0.1f};
    uint32_t ids[5];
    float d[5];
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, 4, q, 1, 2, 5, INFINITY, ids, d), GRIP_OK);
    ck_assert_uint_eq(ids[0], 0);
    ck_assert_uint_eq(ids[1], 3);
    ck_assert_uint_eq(ids[2], 1);
    ck_assert_uint_eq(ids[3], UINT32_MAX);
    ck_assert_uint_eq(ids[4], UINT32_MAX);
    ck_assert(isinf(d[3]) && isinf(d[4]));
    ck_assert(d[0] == 0.1f * 0.1f);
    /* no reference rows: everything padded */
    ck_assert_int_eq(grip_bruteforce_search(ctx, NULL, 0, q, 1, 2, 2, INFINITY, ids, d), GRIP_OK);
    ck_assert_uint_eq(ids[0], UINT32_MAX);
    ck_assert_uint_eq(ids[1], UINT32_MAX);
    ck_assert(isinf(d[0]) && isinf(d[1]));
    /* no queries, or k == 0: nothing written */
    ids[0] = 42;
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, 4, NULL, 0, 2, 3, INFINITY, NULL, NULL), GRIP_OK);
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, 4, q, 1, 2, 0, INFINITY, ids, d), GRIP_OK);
    ck_assert_uint_eq(ids[0], 42);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(threads_agree)
{
    uint64_t s = 16;
    const size_t n = 500, m = 300, dim = 24;
    const uint32_t k = 3;
    float *ref = grip_test_clustered_rows(&s, n, dim, 5), *q = grip_test_clustered_rows(&s, m, dim, 5);
    grip_ctx_options one = {sizeof one, -1, 1}, two = {sizeof two, -1, 2};
    grip_ctx *c1 = NULL, *c2 = NULL;
    ck_assert_int_eq(grip_ctx_new(&one, &c1), GRIP_OK);
    ck_assert_int_eq(grip_ctx_new(&two, &c2), GRIP_OK);
    uint32_t *i1 = malloc(m * k * sizeof *i1), *i2 = malloc(m * k * sizeof *i2);
    float *d1 = malloc(m * k * sizeof *d1), *d2 = malloc(m * k * sizeof *d2);
    ck_assert_int_eq(grip_bruteforce_search(c1, ref, n, q, m, dim, k, INFINITY, i1, d1), GRIP_OK);
    ck_assert_int_eq(grip_bruteforce_search(c2, ref, n, q, m, dim, k, INFINITY, i2, d2), GRIP_OK);
    ck_assert_mem_eq(i1, i2, m * k * sizeof *i1);
    ck_assert_mem_eq(d1, d2, m * k * sizeof *d1);
    free(i1);
    free(i2);
    free(d1);
    free(d2);
    free(ref);
    free(q);
    grip_ctx_free(c1);
    grip_ctx_free(c2);
}
END_TEST

START_TEST(bad_arguments_refused)
{
    grip_ctx *ctx = grip_test_ctx();
    const float ref[] = {0, 1}, q[] = {0, 1};
    uint32_t ids[1] = {7};
    float d[1] = {7};
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, 1, q, 1, 0, 1, INFINITY, ids, d), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "dim"));
    ck_assert_int_eq(grip_bruteforce_search(ctx, NULL, 1, q, 1, 2, 1, INFINITY, ids, d), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "reference"));
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, 1, NULL, 1, 2, 1, INFINITY, ids, d), GRIP_EINVAL);
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, 1, q, 1, 2, 1, INFINITY, NULL, d), GRIP_EINVAL);
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, 1, q, 1, 2, 1, NAN, ids, d), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "max_sqdist"));
    ck_assert_uint_eq(ids[0], 7); /* untouched on failure */
    grip_ctx_free(ctx);
}
END_TEST

static Suite *knn_suite(void)
{
    Suite *s = suite_create("knn_exact");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, uniform_shot_sized);
    tcase_add_test(tc, uniform_low_dim_with_bound);
    tcase_add_test(tc, clustered);
    tcase_add_test(tc, duplicates_negative_exact_ties);
    tcase_add_test(tc, non_finite_rows_skipped);
    tcase_add_test(tc, k_exceeds_n_and_empty_sets);
    tcase_add_test(tc, threads_agree);
    tcase_add_test(tc, bad_arguments_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return grip_test_run(knn_suite());
}
