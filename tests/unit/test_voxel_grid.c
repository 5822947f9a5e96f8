/* test_voxel_grid.c -- the voxel grid's CPU twin (descriptor/voxel_grid.h) against brute force: the occupied voxels
 * in (i, j, k) order, each voxel's points in cloud order, centroids summed in double in that order, mean normals,
 * each point's voxel and row; a leaf larger than the cloud; empty and all-NaN clouds; bad leaves and a point too
 * far out, named. */
#include "test_support.h"
#include "descriptor/voxel_grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_RANDOM 4000

/* The voxel of p as the header defines it, written out here: floor(x * (1 / leaf)) in float per axis. */
static void brute_voxel(const float *p, float leaf, int32_t ijk[3])
{
    float inv = 1.0f / leaf;
    for (int a = 0; a < 3; ++a)
        ijk[a] = (int32_t)floorf(p[a] * inv);
}

static int finite3(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

static int lex_less(const int32_t a[3], const int32_t b[3])
{
    for (int i = 0; i < 3; ++i)
        if (a[i] != b[i])
            return a[i] < b[i];
    return 0;
}

/* Brute force over the voxels: the distinct voxels of the finite points, smallest first, found by repeated
 * minimum search; for each, its points by a scan in cloud order. Checks every output of the grid. */
static void check_against_brute_force(const grip_voxel_grid *g, const float *xyz, const float *normals, size_t n,
                                      float leaf)
{
    float *centroids = malloc((g->voxels ? g->voxels : 1) * 3 * sizeof *centroids);
    float *means = malloc((g->voxels ? g->voxels : 1) * 4 * sizeof *means);
    float *spread = malloc((n ? n : 1) * 4 * sizeof *spread);
    grip_voxel_grid_centroids(g, xyz, centroids);
    grip_voxel_grid_mean_normals(g, normals, means);
    grip_voxel_grid_spread(g, means, spread);
    int32_t prev[3] = {0, 0, 0};
    size_t voxels = 0, finite = 0;
    for (;;) {
        int found = 0;
        int32_t best[3] = {0, 0, 0}, ijk[3];
        for (size_t i = 0; i < n; ++i) {
            if (!finite3(xyz + 3 * i))
                continue;
            brute_voxel(xyz + 3 * i, leaf, ijk);
            if ((voxels == 0 || lex_less(prev, ijk)) && (!found || lex_less(ijk, best))) {
                memcpy(best, ijk, sizeof best);
                found = 1;
            }
        }
        if (!found)
            break;
        ck_assert_uint_lt(voxels, g->voxels);
        double sum[3] = {0, 0, 0}, nsum[3] = {0, 0, 0}, curv = 0;
        size_t count = 0, used = 0, e = g->start[voxels];
        for (size_t i = 0; i < n; ++i) {
            if (!finite3(xyz + 3 * i))
                continue;
            brute_voxel(xyz + 3 * i, leaf, ijk);
            if (memcmp(ijk, best, sizeof ijk) != 0)
                continue;
            ck_assert_uint_eq(g->order[e++], i); /* the voxel's points, in cloud order */
            ck_assert_uint_eq(g->voxel_of[i], voxels);
            for (int a = 0; a < 3; ++a)
                sum[a] += xyz[3 * i + a];
            const float *nrm = normals + 4 * i;
            if (finite3(nrm)) {
                for (int a = 0; a < 3; ++a)
                    nsum[a] += nrm[a];
                curv += nrm[3];
                ++used;
            }
            ++count;
        }
        ck_assert_uint_eq(e, g->start[voxels + 1]);
        for (int a = 0; a < 3; ++a)
            ck_assert_uint_eq(grip_test_float_bits(centroids[3 * voxels + a]),
                              grip_test_float_bits((float)(sum[a] / (double)count)));
        double norm = sqrt(nsum[0] * nsum[0] + nsum[1] * nsum[1] + nsum[2] * nsum[2]);
        if (used == 0 || !(norm > 0)) {
            ck_assert(grip_test_row_is_nan(means + 4 * voxels, 4));
        } else {
            for (int a = 0; a < 3; ++a)
                ck_assert_uint_eq(grip_test_float_bits(means[4 * voxels + a]),
                                  grip_test_float_bits((float)(nsum[a] / norm)));
            ck_assert_uint_eq(grip_test_float_bits(means[4 * voxels + 3]),
                              grip_test_float_bits((float)(curv / (double)used)));
        }
        memcpy(prev, best, sizeof prev);
        finite += count;
        ++voxels;
    }
    ck_assert_uint_eq(voxels, g->voxels);
    ck_assert_uint_eq(finite, g->finite);
    ck_assert_uint_eq(g->start[0], 0);
    for (size_t i = 0; i < n; ++i) {
        if (!finite3(xyz + 3 * i)) {
            ck_assert_uint_eq(g->voxel_of[i], GRIP_VOXEL_NONE);
            ck_assert(grip_test_row_is_nan(spread + 4 * i, 4));
        } else {
            ck_assert_int_eq(memcmp(spread + 4 * i, means + 4 * (size_t)g->voxel_of[i], 4 * sizeof(float)), 0);
        }
    }
    free(centroids);
    free(means);
    free(spread);
}

/* N_RANDOM points in [-1, 1]^3 with a NaN row every 13 and an infinite one every 29; normals of random direction
 * and length (a NaN one every 7), curvature in [0, 0.1]. */
static void random_cloud(uint64_t seed, float *xyz, float *normals)
{
    for (size_t i = 0; i < N_RANDOM; ++i) {
        for (int a = 0; a < 3; ++a) {
            xyz[3 * i + a] = grip_test_uniform(&seed, -1.0f, 1.0f);
            normals[4 * i + a] = grip_test_uniform(&seed, -1.0f, 1.0f);
        }
        normals[4 * i + 3] = grip_test_uniform(&seed, 0.0f, 0.1f);
        if (i % 13 == 4)
            xyz[3 * i + 1] = NAN;
        if (i % 29 == 3)
            xyz[3 * i + 2] = INFINITY;
        if (i % 7 == 2)
            normals[4 * i] = NAN;
    }
}

START_TEST(random_cloud_matches_brute_force)
{
    static float xyz[3 * N_RANDOM], normals[4 * N_RANDOM];
    random_cloud(2511, xyz, normals);
    grip_ctx *ctx = grip_test_ctx();
    const float leaves[] = {0.05f, 0.3f, 0.7f};
    for (size_t l = 0; l < sizeof leaves / sizeof leaves[0]; ++l) {
        grip_voxel_grid g;
        ck_assert_msg(grip_voxel_grid_build(ctx, "test", xyz, N_RANDOM, leaves[l], &g) == GRIP_OK, "%s",
                      ctx->last_error);
        ck_assert_uint_eq(g.n, N_RANDOM);
        ck_assert_uint_gt(g.voxels, 1);
        check_against_brute_force(&g, xyz, normals, N_RANDOM, leaves[l]);
        grip_voxel_grid_free(&g);
        ck_assert_ptr_null(g.order);
    }
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(voxels_split_at_zero_and_order_x_first)
{
    /* leaf 1: (-0.5, 0, 0) is voxel (-1, 0, 0), before (0.5, 2, 0)'s (0, 2, 0) and (0.2, 0.1, 0.9)'s (0, 0, 0) */
    const float xyz[] = {0.5f, 2.5f, 0.5f, 0.2f, 0.1f, 0.9f, -0.5f, 0.0f, 0.0f, 0.4f, 0.3f, 0.1f};
    const float normals[16] = {0};
    grip_ctx *ctx = grip_test_ctx();
    grip_voxel_grid g;
    ck_assert_int_eq(grip_voxel_grid_build(ctx, "test", xyz, 4, 1.0f, &g), GRIP_OK);
    ck_assert_uint_eq(g.voxels, 3);
    const uint32_t order[] = {2, 1, 3, 0}, voxel_of[] = {2, 1, 0, 1};
    ck_assert_int_eq(memcmp(g.order, order, sizeof order), 0);
    ck_assert_int_eq(memcmp(g.voxel_of, voxel_of, sizeof voxel_of), 0);
    float c[9];
    grip_voxel_grid_centroids(&g, xyz, c);
    ck_assert_float_eq(c[3], (float)(((double)0.2f + (double)0.4f) / 2)); /* x of voxel (0, 0, 0): (0.2f + 0.4f) / 2 */
    check_against_brute_force(&g, xyz, normals, 4, 1.0f);                 /* all-zero normals: NaN means */
    grip_voxel_grid_free(&g);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(leaf_larger_than_the_cloud_gives_one_point)
{
    static float xyz[3 * N_RANDOM], normals[4 * N_RANDOM];
    random_cloud(77, xyz, normals);
    for (size_t i = 0; i < 3 * N_RANDOM; ++i)
        if (isfinite(xyz[i]))
            xyz[i] = 0.5f + 0.4f * xyz[i]; /* inside [0.1, 0.9]^3: one voxel of leaf 10 */
    grip_ctx *ctx = grip_test_ctx();
    grip_voxel_grid g;
    ck_assert_int_eq(grip_voxel_grid_build(ctx, "test", xyz, N_RANDOM, 10.0f, &g), GRIP_OK);
    ck_assert_uint_eq(g.voxels, 1);
    check_against_brute_force(&g, xyz, normals, N_RANDOM, 10.0f);
    grip_voxel_grid_free(&g);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(empty_and_non_finite_clouds)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_voxel_grid g;
    ck_assert_int_eq(grip_voxel_grid_build(ctx, "test", NULL, 0, 0.1f, &g), GRIP_OK);
    ck_assert_uint_eq(g.voxels, 0);
    ck_assert_uint_eq(g.start[0], 0);
    grip_voxel_grid_free(&g);
    const float nan3[] = {NAN, 0, 0, 0, INFINITY, 0};
    ck_assert_int_eq(grip_voxel_grid_build(ctx, "test", nan3, 2, 0.1f, &g), GRIP_OK);
    ck_assert_uint_eq(g.voxels, 0);
    ck_assert_uint_eq(g.finite, 0);
    ck_assert_uint_eq(g.voxel_of[0], GRIP_VOXEL_NONE);
    ck_assert_uint_eq(g.voxel_of[1], GRIP_VOXEL_NONE);
    grip_voxel_grid_free(&g);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(bad_leaves_and_far_points_are_named)
{
    grip_ctx *ctx = grip_test_ctx();
    const float xyz[] = {0, 0, 0, 1, 1, 1, 3e9f, 0, 0};
    const float bad[] = {0.0f, -0.1f, NAN, INFINITY, 1e-45f};
    grip_voxel_grid g;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        ck_assert_int_eq(grip_voxel_grid_build(ctx, "descriptor.support_leaf", xyz, 2, bad[i], &g), GRIP_EINVAL);
        ck_assert_ptr_nonnull(strstr(ctx->last_error, "descriptor.support_leaf: leaf must be finite and > 0"));
        ck_assert_ptr_null(g.order);
    }
    /* 3e9 / 1 does not fit in an int: point 2 is named */
    ck_assert_int_eq(grip_voxel_grid_build(ctx, "descriptor.support_leaf", xyz, 3, 1.0f, &g), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "descriptor.support_leaf: point 2 "));
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "its voxel coordinate does not fit in an int"));
    ck_assert_ptr_null(g.voxel_of);
    /* ... and so does 1 / 1e-12 for a point at 1: a leaf too small for the cloud */
    ck_assert_int_eq(grip_voxel_grid_build(ctx, "descriptor.support_leaf", xyz, 2, 1e-12f, &g), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "point 1 "));
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("voxel_grid");
    TCase *tc = tcase_create("cpu");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, random_cloud_matches_brute_force);
    tcase_add_test(tc, voxels_split_at_zero_and_order_x_first);
    tcase_add_test(tc, leaf_larger_than_the_cloud_gives_one_point);
    tcase_add_test(tc, empty_and_non_finite_clouds);
    tcase_add_test(tc, bad_leaves_and_far_points_are_named);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
