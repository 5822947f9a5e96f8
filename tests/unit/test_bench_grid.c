/* test_bench_grid.c -- what `grip-host bench` measures on the host is right: the grid's support counts and
 * nearest-neighbour distances equal a brute-force search's, uniform sampling keeps exactly the point nearest each
 * occupied cell's centre, and the generated surface has unit normals, the asked-for area (so the density that
 * sizes the benchmark's support) and the same points for the same seed. */
#include "test_support.h"
#include "bench/bench_common.h" /* BENCH_TARGET_SUPPORT */
#include "bench/grid.h"
#include "bench/surface.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

static double dist2(const float *a, const float *b)
{
    double dx = (double)a[0] - b[0], dy = (double)a[1] - b[1], dz = (double)a[2] - b[2];
    return dx * dx + dy * dy + dz * dz;
}

/* n uniform points in [0, 1)^3 with exact duplicates and a few NaN rows, to exercise the edge cases. */
static float *random_cloud(size_t n)
{
    uint64_t rng = 7;
    float *xyz = grip_test_uniform_rows(&rng, n, 3, 0.0f, 1.0f);
    ck_assert_ptr_nonnull(xyz);
    for (size_t i = 5; i + 1 < n; i += 101)
        memcpy(xyz + 3 * (i + 1), xyz + 3 * i, 3 * sizeof *xyz);
    for (size_t i = 0; i < n; i += 97)
        xyz[3 * i + 1] = NAN;
    return xyz;
}

START_TEST(counts_match_brute_force)
{
    const size_t n = 3000;
    float *xyz = random_cloud(n);
    bench_grid g;
    ck_assert_int_eq(bench_grid_build(&g, xyz, n, 0.05), 0);
    ck_assert_uint_eq(g.count, n - (n + 96) / 97); /* every 97th row is NaN */
    const double radii[] = {0.02, 0.05, 0.13}; /* smaller than, equal to and larger than a cell */
    for (size_t r = 0; r < 3; r++)
        for (size_t i = 1; i < n; i += 7) {
            size_t brute = 0;
            for (size_t j = 0; j < n; j++)
                brute += dist2(xyz + 3 * i, xyz + 3 * j) <= radii[r] * radii[r];
            if (isnan(xyz[3 * i + 1]))
                continue;
            ck_assert_uint_eq(bench_grid_count_within(&g, xyz + 3 * i, radii[r]), brute);
        }
    bench_grid_free(&g);
    free(xyz);
}
END_TEST

START_TEST(nearest_matches_brute_force)
{
    const size_t n = 2000;
    float *xyz = random_cloud(n);
    const double cells[] = {0.01, 0.08, 0.5}; /* several rings needed, one, the whole cloud in a few cells */
    for (size_t c = 0; c < 3; c++) {
        bench_grid g;
        ck_assert_int_eq(bench_grid_build(&g, xyz, n, cells[c]), 0);
        for (size_t i = 1; i < n; i += 3) {
            if (isnan(xyz[3 * i + 1]))
                continue;
            double best = INFINITY;
            for (size_t j = 0; j < n; j++)
                if (j != i && !isnan(xyz[3 * j + 1]))
                    best = fmin(best, dist2(xyz + 3 * i, xyz + 3 * j));
            ck_assert_double_eq_tol(bench_grid_nearest(&g, i), sqrt(best), 1e-12);
        }
        bench_grid_free(&g);
    }
    free(xyz);
}
END_TEST

START_TEST(sampling_keeps_the_point_nearest_each_centre)
{
    const size_t n = 4000;
    const double leaf = 0.1;
    float *xyz = random_cloud(n);
    bench_grid g;
    uint32_t *idx = NULL;
    size_t count = 0;
    ck_assert_int_eq(bench_grid_build(&g, xyz, n, leaf), 0);
    ck_assert_int_eq(bench_grid_sample(&g, &idx, &count), 0);
    size_t occupied = 1;
    for (size_t i = 1; i < g.count; i++)
        occupied += g.keys[i] != g.keys[i - 1];
    ck_assert_uint_eq(count, occupied);
    for (size_t s = 0; s < count; s++) {
        const float *p = xyz + 3 * (size_t)idx[s];
        float centre[3];
        for (int a = 0; a < 3; a++)
            centre[a] = (float)((floor(p[a] / leaf) + 0.5) * leaf);
        for (size_t j = 0; j < n; j++) { /* no point of the same cell is nearer the centre */
            const float *q = xyz + 3 * j;
            int same = !isnan(q[1]);
            for (int a = 0; a < 3 && same; a++)
                same = floor(q[a] / leaf) == floor(p[a] / leaf);
            if (same)
                ck_assert(dist2(q, centre) >= dist2(p, centre));
        }
    }
    free(idx);
    bench_grid_free(&g);
    free(xyz);
}
END_TEST

START_TEST(no_finite_point_builds_no_grid)
{
    float xyz[6] = {NAN, 0, 0, 0, NAN, 0};
    bench_grid g;
    ck_assert_int_eq(bench_grid_build(&g, xyz, 2, 0.1), -1);
    ck_assert_ptr_null(g.keys);
}
END_TEST

START_TEST(surface_has_unit_normals_and_the_asked_density)
{
    const size_t n = 50000;
    const double r = 0.02, area = n * PI * r * r / BENCH_TARGET_SUPPORT;
    float *xyz = NULL, *normals = NULL, *again = NULL, *again_normals = NULL;
    ck_assert_int_eq(bench_surface_sample(n, area, 3, &xyz, &normals), 0);
    ck_assert_int_eq(bench_surface_sample(n, area, 3, &again, &again_normals), 0);
    ck_assert_int_eq(memcmp(xyz, again, 3 * n * sizeof *xyz), 0);
    for (size_t i = 0; i < n; i++) {
        double len = sqrt(dist2(normals + 3 * i, (const float[3]){0, 0, 0}));
        ck_assert_double_eq_tol(len, 1.0, 1e-5);
    }
    /* points within r/4 of a point: 1 + n * pi (r/4)^2 / area on a surface that is flat at that scale; the mean
     * over 2000 points has a standard error near 0.07 */
    bench_grid g;
    ck_assert_int_eq(bench_grid_build(&g, xyz, n, r / 4), 0);
    double sum = 0;
    for (size_t i = 0; i < n; i += n / 2000)
        sum += (double)bench_grid_count_within(&g, xyz + 3 * i, r / 4);
    double expected = 1 + BENCH_TARGET_SUPPORT / 16.0;
    ck_assert_double_eq_tol(sum / 2000, expected, 0.4);
    bench_grid_free(&g);
    free(xyz);
    free(normals);
    free(again);
    free(again_normals);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("bench_grid");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, counts_match_brute_force);
    tcase_add_test(tc, nearest_matches_brute_force);
    tcase_add_test(tc, sampling_keeps_the_point_nearest_each_centre);
    tcase_add_test(tc, no_finite_point_builds_no_grid);
    tcase_add_test(tc, surface_has_unit_normals_and_the_asked_density);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return grip_test_run(suite()); }
