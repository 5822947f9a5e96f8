/* test_kdtree3d.c -- every kNN, radius and any-within query equals brute force (same indices, same float distances, same
 * order, ties to the lower index) on random clouds with duplicates, negative coordinates and NaN/Inf points,
 * on an integer grid full of exact distance ties, for k > n and radius 0, and from many threads at once.
 * The PCL-order searches return the same points in another order (radius), or choose differently among points
 * at the k-th distance only (kNN); that their order and choice are FLANN's is shown by test_normals, which
 * reproduces PCL's tutorial normals bit for bit, tie rows included. */
#include "test_support.h"
#include "spatial/kdtree3d.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pair {
    float d;
    uint32_t i;
} pair;

static int pair_cmp(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    return x->i < y->i ? -1 : (x->i > y->i ? 1 : 0);
}

static int finite3(const float *p) { return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]); }

/* Every finite point with its distance to q, sorted by (distance, index). Returns the count; caller frees. */
static size_t brute_sorted(const float *xyz, size_t n, const float q[3], pair **out)
{
    pair *all = malloc((n ? n : 1) * sizeof *all);
    ck_assert_ptr_nonnull(all);
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) {
        const float *p = xyz + i * 3;
        if (!finite3(p))
            continue;
        float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
        all[m].d = dx * dx + dy * dy + dz * dz;
        all[m].i = (uint32_t)i;
        ++m;
    }
    qsort(all, m, sizeof *all, pair_cmp);
    *out = all;
    return m;
}

static void check_knn(const grip_kdtree3d *t, const float *xyz, size_t n, const float q[3], size_t k)
{
    pair *ref;
    size_t m = brute_sorted(xyz, n, q, &ref);
    uint32_t *idx = malloc((k ? k : 1) * sizeof *idx);
    float *d = malloc((k ? k : 1) * sizeof *d);
    size_t got = grip_kdtree3d_knn(t, q, k, idx, d);
    ck_assert_uint_eq(got, k < m ? k : m);
    for (size_t j = 0; j < got; ++j) {
        ck_assert_uint_eq(idx[j], ref[j].i);
        ck_assert(d[j] == ref[j].d);
    }
    free(idx);
    free(d);
    free(ref);
}

/* grip_kdtree3d_knn_pcl: the same distances as brute force, each index a distinct finite point at its listed
 * distance (which of several tied points is PCL's business). */
static void check_knn_pcl(const grip_kdtree3d *t, const float *xyz, size_t n, const float q[3], size_t k)
{
    pair *ref;
    size_t m = brute_sorted(xyz, n, q, &ref);
    uint32_t *idx = malloc((k ? k : 1) * sizeof *idx);
    float *d = malloc((k ? k : 1) * sizeof *d);
    size_t got = grip_kdtree3d_knn_pcl(t, q, k, idx, d);
    ck_assert_uint_eq(got, k < m ? k : m);
    for (size_t j = 0; j < got; ++j) {
        ck_assert(d[j] == ref[j].d);
        ck_assert_uint_lt(idx[j], n);
        const float *p = xyz + (size_t)idx[j] * 3;
        ck_assert(finite3(p));
        float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
        ck_assert(dx * dx + dy * dy + dz * dz == d[j]);
        for (size_t i = 0; i < j; ++i)
            ck_assert_uint_ne(idx[i], idx[j]);
    }
    free(idx);
    free(d);
    free(ref);
}

/* grip_kdtree3d_radius_pcl: the same points and distances as grip_kdtree3d_radius, once sorted. */
static void check_radius_pcl(const grip_kdtree3d *t, const float q[3], float radius, grip_neighbors *nb)
{
    grip_neighbors sorted = {0};
    ck_assert_int_eq(grip_kdtree3d_radius(t, q, radius, &sorted), GRIP_OK);
    ck_assert_int_eq(grip_kdtree3d_radius_pcl(t, q, radius, nb), GRIP_OK);
    ck_assert_uint_eq(nb->count, sorted.count);
    pair *got = malloc((nb->count ? nb->count : 1) * sizeof *got);
    for (size_t j = 0; j < nb->count; ++j)
        got[j] = (pair){nb->sqdist[j], nb->idx[j]};
    qsort(got, nb->count, sizeof *got, pair_cmp);
    for (size_t j = 0; j < nb->count; ++j) {
        ck_assert_uint_eq(got[j].i, sorted.idx[j]);
        ck_assert(got[j].d == sorted.sqdist[j]);
    }
    free(got);
    grip_neighbors_free(&sorted);
}

static void check_radius(const grip_kdtree3d *t, const float *xyz, size_t n, const float q[3], float radius,
                         grip_neighbors *nb)
{
    pair *ref;
    size_t m = brute_sorted(xyz, n, q, &ref);
    float r2 = (float)((double)radius * (double)radius);
    size_t want = 0;
    while (want < m && ref[want].d < r2)
        ++want;
    ck_assert_int_eq(grip_kdtree3d_radius(t, q, radius, nb), GRIP_OK);
    ck_assert_uint_eq(nb->count, want);
    for (size_t j = 0; j < want; ++j) {
        ck_assert_uint_eq(nb->idx[j], ref[j].i);
        ck_assert(nb->sqdist[j] == ref[j].d);
    }
    free(ref);
}

/* n points in [-2, 1)^3; every 7th is a copy of an earlier one; every 11th has a NaN or Inf coordinate. */
static float *random_cloud(uint64_t *rng, size_t n)
{
    float *xyz = malloc(n * 3 * sizeof *xyz);
    ck_assert_ptr_nonnull(xyz);
    for (size_t i = 0; i < n; ++i) {
        for (int a = 0; a < 3; ++a)
            xyz[i * 3 + a] = grip_test_uniform(rng, -2.0f, 1.0f);
        if (i % 7 == 6)
            memcpy(xyz + i * 3, xyz + (i / 2) * 3, 3 * sizeof(float));
        if (i % 11 == 10)
            xyz[i * 3 + i % 3] = (i % 2) ? NAN : INFINITY;
    }
    return xyz;
}

/* Queries: cloud points (exact zero distances and duplicates) and free points, some far outside. */
static void make_query(uint64_t *rng, const float *xyz, size_t n, int j, float q[3])
{
    if (j % 2 == 0 && n > 0) {
        size_t i = (size_t)(grip_test_uniform(rng, 0.0f, 1.0f) * (float)n) % n;
        memcpy(q, xyz + i * 3, 3 * sizeof(float));
        if (finite3(q))
            return;
    }
    float span = j % 5 == 0 ? 8.0f : 2.5f;
    for (int a = 0; a < 3; ++a)
        q[a] = grip_test_uniform(rng, -span, span);
}

/* any_within answers as the brute-force nearest does: at the nearest's own distance (an exact boundary), just
 * below it, and at the given radius squared. */
static void check_any_within(const grip_kdtree3d *t, const float *xyz, size_t n, const float q[3], float radius)
{
    pair *ref;
    size_t m = brute_sorted(xyz, n, q, &ref);
    const float limit = radius * radius;
    ck_assert_int_eq(grip_kdtree3d_any_within(t, q, limit), m > 0 && ref[0].d <= limit);
    if (m > 0) {
        ck_assert_int_eq(grip_kdtree3d_any_within(t, q, ref[0].d), 1);
        ck_assert_int_eq(grip_kdtree3d_any_within(t, q, nextafterf(ref[0].d, -1.0f)), 0);
    }
    free(ref);
}

START_TEST(random_clouds_match_brute_force)
{
    uint64_t rng = 2024;
    const size_t sizes[] = {1, 2, 9, 10, 11, 57, 1000, 3000};
    const size_t ks[] = {1, 2, 5, 10, 11, 37};
    const float radii[] = {0.0f, 0.05f, 0.2f, 0.7f, 5.0f};
    grip_ctx *ctx = grip_test_ctx();
    grip_neighbors nb = {0};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        size_t n = sizes[s];
        float *xyz = random_cloud(&rng, n);
        grip_kdtree3d *t = NULL;
        ck_assert_int_eq(grip_kdtree3d_build(ctx, xyz, n, &t), GRIP_OK);
        size_t finite = 0;
        for (size_t i = 0; i < n; ++i)
            finite += finite3(xyz + i * 3);
        ck_assert_uint_eq(grip_kdtree3d_size(t), finite);
        for (int j = 0; j < 300; ++j) {
            float q[3];
            make_query(&rng, xyz, n, j, q);
            check_knn(t, xyz, n, q, ks[j % 6]);
            check_knn_pcl(t, xyz, n, q, ks[(j + 1) % 6]);
            check_radius(t, xyz, n, q, radii[j % 5], &nb);
            check_radius_pcl(t, q, radii[(j + 2) % 5], &nb);
            check_any_within(t, xyz, n, q, radii[(j + 3) % 5]);
        }
        float q0[3] = {0.1f, -0.2f, 0.3f};
        check_knn(t, xyz, n, q0, n + 5); /* k > n: every finite point */
        check_knn_pcl(t, xyz, n, q0, n + 5);
        grip_kdtree3d_free(t);
        free(xyz);
    }
    grip_neighbors_free(&nb);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(grid_ties_go_to_the_lower_index)
{
    /* a 12^3 integer grid at spacing 0.5 (exact in float), listed twice: every distance is tied many times */
    const int g = 12;
    size_t n = (size_t)2 * g * g * g;
    float *xyz = malloc(n * 3 * sizeof *xyz);
    for (size_t i = 0; i < n; ++i) {
        size_t c = i % (size_t)(g * g * g);
        xyz[i * 3 + 0] = 0.5f * (float)(c % g) - 3.0f;
        xyz[i * 3 + 1] = 0.5f * (float)((c / g) % g) - 3.0f;
        xyz[i * 3 + 2] = 0.5f * (float)(c / (g * g)) - 3.0f;
    }
    grip_ctx *ctx = grip_test_ctx();
    grip_kdtree3d *t = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, xyz, n, &t), GRIP_OK);
    grip_neighbors nb = {0};
    uint64_t rng = 99;
    for (int j = 0; j < 400; ++j) {
        float q[3];
        if (j % 2)
            memcpy(q, xyz + (size_t)(j * 37 % (int)n) * 3, sizeof q);
        else
            for (int a = 0; a < 3; ++a) /* on grid lines and half-way between them */
                q[a] = 0.25f * (float)(int)grip_test_uniform(&rng, -16.0f, 16.0f);
        check_knn(t, xyz, n, q, (size_t)(1 + j % 30));
        check_knn_pcl(t, xyz, n, q, (size_t)(1 + j % 30));
        check_radius(t, xyz, n, q, 0.5f * (float)(j % 4), &nb); /* radii equal to exact grid distances */
        check_radius_pcl(t, q, 0.5f * (float)(j % 4), &nb);
    }
    grip_neighbors_free(&nb);
    grip_kdtree3d_free(t);
    free(xyz);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(empty_and_invalid_inputs)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_kdtree3d *t = NULL;
    const float nan_pts[6] = {NAN, 0, 0, 0, INFINITY, 0};
    ck_assert_int_eq(grip_kdtree3d_build(ctx, nan_pts, 2, &t), GRIP_OK);
    ck_assert_uint_eq(grip_kdtree3d_size(t), 0);
    uint32_t idx[4];
    float d[4];
    const float q[3] = {0, 0, 0};
    ck_assert_uint_eq(grip_kdtree3d_knn(t, q, 4, idx, d), 0);
    ck_assert_uint_eq(grip_kdtree3d_knn_pcl(t, q, 4, idx, d), 0);
    ck_assert_int_eq(grip_kdtree3d_any_within(t, q, INFINITY), 0);
    grip_neighbors nb = {0};
    ck_assert_int_eq(grip_kdtree3d_radius(t, q, 1.0f, &nb), GRIP_OK);
    ck_assert_uint_eq(nb.count, 0);
    grip_kdtree3d_free(t);

    ck_assert_int_eq(grip_kdtree3d_build(ctx, NULL, 0, &t), GRIP_OK);
    ck_assert_uint_eq(grip_kdtree3d_size(t), 0);
    grip_kdtree3d_free(t);
    ck_assert_int_eq(grip_kdtree3d_build(ctx, NULL, 3, &t), GRIP_EINVAL);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "kdtree3d_build: xyz is NULL"));

    const float pts[6] = {1, 2, 3, 1, 2, 4};
    ck_assert_int_eq(grip_kdtree3d_build(ctx, pts, 2, &t), GRIP_OK);
    const float nan_q[3] = {NAN, 0, 0};
    ck_assert_uint_eq(grip_kdtree3d_knn(t, nan_q, 1, idx, d), 0);
    ck_assert_uint_eq(grip_kdtree3d_knn_pcl(t, nan_q, 1, idx, d), 0);
    ck_assert_int_eq(grip_kdtree3d_any_within(t, nan_q, INFINITY), 0);
    ck_assert_int_eq(grip_kdtree3d_any_within(NULL, q, INFINITY), 0);
    ck_assert_int_eq(grip_kdtree3d_radius(t, nan_q, 10.0f, &nb), GRIP_OK);
    ck_assert_uint_eq(nb.count, 0);
    ck_assert_int_eq(grip_kdtree3d_radius(t, q, -1.0f, &nb), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree3d_radius_pcl(t, q, -1.0f, &nb), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree3d_radius_pcl(t, nan_q, 10.0f, &nb), GRIP_OK);
    ck_assert_uint_eq(nb.count, 0);
    ck_assert_int_eq(grip_kdtree3d_radius(t, q, NAN, &nb), GRIP_EINVAL);
    ck_assert_uint_eq(grip_kdtree3d_knn(t, q, 0, idx, d), 0);
    const float on_point[3] = {1, 2, 3};
    ck_assert_int_eq(grip_kdtree3d_radius(t, on_point, 0.0f, &nb), GRIP_OK);
    ck_assert_uint_eq(nb.count, 0); /* strict: distance 0 is not < 0 */
    ck_assert_int_eq(grip_kdtree3d_radius(t, on_point, 1.0f, &nb), GRIP_OK);
    ck_assert_uint_eq(nb.count, 1); /* the point at distance exactly 1 is left out, as FLANN does */
    ck_assert_uint_eq(nb.idx[0], 0);
    ck_assert_int_eq(grip_kdtree3d_radius_pcl(t, on_point, 1.0f, &nb), GRIP_OK);
    ck_assert_uint_eq(nb.count, 1);
    grip_neighbors_free(&nb);
    grip_kdtree3d_free(t);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(concurrent_queries_agree_with_serial)
{
    uint64_t rng = 5;
    const size_t n = 20000, nq = 4000, k = 10;
    float *xyz = random_cloud(&rng, n);
    float *qs = malloc(nq * 3 * sizeof *qs);
    for (size_t j = 0; j < nq * 3; ++j)
        qs[j] = grip_test_uniform(&rng, -2.0f, 1.0f);
    grip_ctx *ctx = grip_test_ctx();
    grip_kdtree3d *t = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, xyz, n, &t), GRIP_OK);
    uint32_t *serial = malloc(nq * k * sizeof *serial), *par = malloc(nq * k * sizeof *par);
    uint32_t *serial_pcl = malloc(nq * k * sizeof *serial_pcl), *par_pcl = malloc(nq * k * sizeof *par_pcl);
    float *ds = malloc(nq * k * sizeof *ds), *dp = malloc(nq * k * sizeof *dp);
    size_t *rc_serial = calloc(nq, sizeof *rc_serial), *rc_par = calloc(nq, sizeof *rc_par);
    for (size_t j = 0; j < nq; ++j) {
        grip_kdtree3d_knn(t, qs + j * 3, k, serial + j * k, ds + j * k);
        grip_kdtree3d_knn_pcl(t, qs + j * 3, k, serial_pcl + j * k, ds + j * k);
        grip_neighbors nb = {0};
        ck_assert_int_eq(grip_kdtree3d_radius(t, qs + j * 3, 0.1f, &nb), GRIP_OK);
        rc_serial[j] = nb.count;
        grip_neighbors_free(&nb);
    }
    int failures = 0;
#pragma omp parallel for schedule(dynamic, 64) num_threads(4) reduction(+ : failures)
    for (long j = 0; j < (long)nq; ++j) {
        grip_kdtree3d_knn(t, qs + j * 3, k, par + j * k, dp + j * k);
        grip_kdtree3d_knn_pcl(t, qs + j * 3, k, par_pcl + j * k, dp + j * k);
        grip_neighbors nb = {0};
        failures += grip_kdtree3d_radius(t, qs + j * 3, 0.1f, &nb) != GRIP_OK;
        rc_par[j] = nb.count;
        grip_neighbors_free(&nb);
    }
    ck_assert_int_eq(failures, 0);
    ck_assert_mem_eq(serial, par, nq * k * sizeof *serial);
    ck_assert_mem_eq(serial_pcl, par_pcl, nq * k * sizeof *serial_pcl);
    ck_assert_mem_eq(ds, dp, nq * k * sizeof *ds);
    ck_assert_mem_eq(rc_serial, rc_par, nq * sizeof *rc_serial);
    free(serial);
    free(par);
    free(serial_pcl);
    free(par_pcl);
    free(ds);
    free(dp);
    free(rc_serial);
    free(rc_par);
    grip_kdtree3d_free(t);
    free(qs);
    free(xyz);
    grip_ctx_free(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kdtree3d");
    TCase *tc = tcase_create("search");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, random_clouds_match_brute_force);
    tcase_add_test(tc, grid_ties_go_to_the_lower_index);
    tcase_add_test(tc, empty_and_invalid_inputs);
    tcase_add_test(tc, concurrent_queries_agree_with_serial);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return grip_test_run(suite()); }
