/* test_support_plane.c -- the support plane of a tabletop scene is found among clutter, turned toward the camera,
 * and a pose that sinks a model into it is measured; degenerate scenes give no plane, bad tolerances are refused. */
#include "test_support.h"
#include "verify/support_plane.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The table: height n . p + d = 0 with n pointing up toward the camera at the origin (the camera looks down at
 * it from 0.8 m). */
static const double TABLE_N[3] = {0.0, -0.8, -0.6}, TABLE_D = 0.8;

/* A scene of `n_table` table points (depth noise within +-1 mm along the normal), `n_clutter` points 2-12 cm above
 * it, and every 97th row NaN. xyz is malloc'd (n x 3); the caller frees it. */
static float *tabletop(size_t n_table, size_t n_clutter, size_t *n)
{
    uint64_t s = 17;
    *n = n_table + n_clutter;
    float *xyz = malloc(*n * 3 * sizeof *xyz);
    ck_assert_ptr_nonnull(xyz);
    /* two unit vectors in the plane */
    const double e1[3] = {1, 0, 0}, e2[3] = {0, -0.6, 0.8},
                 origin[3] = {-TABLE_D * TABLE_N[0], -TABLE_D * TABLE_N[1], -TABLE_D * TABLE_N[2]};
    for (size_t i = 0; i < *n; i++) {
        const double a = grip_test_uniform(&s, -0.5f, 0.5f), b = grip_test_uniform(&s, -0.4f, 0.4f);
        const double h = i < n_table ? grip_test_uniform(&s, -0.001f, 0.001f) : grip_test_uniform(&s, 0.02f, 0.12f);
        for (int k = 0; k < 3; k++)
            xyz[3 * i + k] = (float)(origin[k] + a * e1[k] + b * e2[k] + h * TABLE_N[k]);
        if (i % 97 == 5)
            xyz[3 * i] = NAN;
    }
    return xyz;
}

START_TEST(the_table_is_found_among_clutter)
{
    grip_ctx *ctx = grip_test_ctx();
    size_t n;
    float *xyz = tabletop(30000, 12000, &n);
    const float camera[3] = {0, 0, 0};
    grip_support_plane p, q;
    ck_assert_int_eq(grip_support_plane_fit(ctx, xyz, n, 0.005, camera, &p), GRIP_OK);
    ck_assert_int_eq(p.valid, 1);
    for (int k = 0; k < 3; k++)
        ck_assert_double_le(fabs(p.normal[k] - TABLE_N[k]), 2e-3); /* turned toward the camera */
    ck_assert_double_le(fabs(p.offset - TABLE_D), 1e-3);
    /* every finite table point is an inlier, no clutter point is */
    size_t finite_table = 0;
    for (size_t i = 0; i < 30000; i++)
        finite_table += isfinite(xyz[3 * i]);
    ck_assert_uint_le(p.inliers, finite_table);
    ck_assert_uint_ge(p.inliers, finite_table * 99 / 100);
    /* the same bits again: the draws come from a fixed seed */
    ck_assert_int_eq(grip_support_plane_fit(ctx, xyz, n, 0.005, camera, &q), GRIP_OK);
    ck_assert_mem_eq(&p, &q, sizeof p);
    /* and for any number of threads: the iterations are counted in parallel, the first best wins */
    for (uint32_t threads = 1; threads <= 7; threads += 3) {
        grip_ctx *tctx = grip_test_ctx_threads(threads);
        ck_assert_int_eq(grip_support_plane_fit(tctx, xyz, n, 0.005, camera, &q), GRIP_OK);
        ck_assert_mem_eq(&p, &q, sizeof p);
        grip_ctx_free(tctx);
    }
    /* seen from below the table, the normal turns the other way */
    const float below[3] = {(float)(-2 * TABLE_D * TABLE_N[0]), (float)(-2 * TABLE_D * TABLE_N[1]),
                            (float)(-2 * TABLE_D * TABLE_N[2])};
    ck_assert_int_eq(grip_support_plane_fit(ctx, xyz, n, 0.005, below, &q), GRIP_OK);
    for (int k = 0; k < 3; k++)
        ck_assert_double_eq(q.normal[k], -p.normal[k]);
    ck_assert_double_eq(q.offset, -p.offset);
    free(xyz);
    grip_ctx_free(ctx);
}
END_TEST

/* A 10 x 10 x 10 cm grid of points (a model, origin at its bottom centre) stood on the plane, then lowered into it:
 * the fraction sunk is the fraction of its layers below the margin, counted here directly. */
START_TEST(a_sunk_pose_is_measured)
{
    enum { L = 11 };
    float model[L * L * L * 3];
    for (int i = 0; i < L; i++)
        for (int j = 0; j < L; j++)
            for (int k = 0; k < L; k++) {
                float *p = model + 3 * ((i * L + j) * L + k);
                p[0] = (float)(0.01 * (i - 5));
                p[1] = (float)(0.01 * (j - 5));
                p[2] = (float)(0.01 * k + 0.0005); /* layer k at 0.5 mm + k cm above the base */
            }
    model[0] = NAN; /* skipped, not counted */
    const grip_support_plane plane = {{0, 0, 1}, 0.0, 100, 1};
    const double margin = 0.01;
    for (int lowered = 0; lowered <= 6; lowered++) {
        const double pose[16] = {1, 0, 0, 0.3, 0, 1, 0, -0.2, 0, 0, 1, -0.01 * lowered, 0, 0, 0, 1};
        /* layer k's height: 0.0005 + 0.01 (k - lowered); sunk when below -margin, i.e. k < lowered - 1 */
        const int sunk_layers = lowered > 1 ? lowered - 1 : 0;
        const size_t finite = L * L * L - 1, sunk = (size_t)sunk_layers * L * L - (sunk_layers > 0);
        ck_assert_double_eq_tol(grip_support_sunk_fraction(&plane, model, L * L * L, pose, margin),
                                (double)sunk / (double)finite, 1e-12);
    }
    grip_support_plane none = plane;
    none.valid = 0;
    const double deep[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, -1, 0, 0, 0, 1};
    ck_assert_double_eq(grip_support_sunk_fraction(&none, model, L * L * L, deep, margin), 0.0);
}
END_TEST

START_TEST(no_plane_without_one_and_bad_tolerances_refused)
{
    grip_ctx *ctx = grip_test_ctx();
    const float camera[3] = {0, 0, 0};
    grip_support_plane p;
    float nan_rows[6 * 3], line[6 * 3];
    for (int i = 0; i < 18; i++)
        nan_rows[i] = NAN;
    for (int i = 0; i < 6; i++) { /* collinear: no plane through any three */
        line[3 * i] = 0.1f * (float)i;
        line[3 * i + 1] = 0.2f * (float)i;
        line[3 * i + 2] = 1.0f;
    }
    ck_assert_int_eq(grip_support_plane_fit(ctx, nan_rows, 6, 0.005, camera, &p), GRIP_OK);
    ck_assert_int_eq(p.valid, 0);
    ck_assert_int_eq(grip_support_plane_fit(ctx, line, 6, 0.005, camera, &p), GRIP_OK);
    ck_assert_int_eq(p.valid, 0);
    ck_assert_int_eq(grip_support_plane_fit(ctx, line, 0, 0.005, camera, &p), GRIP_OK);
    ck_assert_int_eq(p.valid, 0);
    ck_assert_int_eq(grip_support_plane_fit(ctx, line, 6, 0.0, camera, &p), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "verify.support_margin"));
    ck_assert_int_eq(grip_support_plane_fit(ctx, line, 6, NAN, camera, &p), GRIP_EINVAL);
    ck_assert_int_eq(p.valid, 0);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("support_plane");
    TCase *tc = tcase_create("tabletop");
    tcase_add_test(tc, the_table_is_found_among_clutter);
    tcase_add_test(tc, a_sunk_pose_is_measured);
    tcase_add_test(tc, no_plane_without_one_and_bad_tolerances_refused);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
