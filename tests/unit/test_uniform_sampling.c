/* test_uniform_sampling.c -- one keypoint per occupied voxel, the one nearest the voxel centre (first index on
 * ties), NaN points skipped, negative coordinates floored, indices ascending, argument errors; and, with the
 * shared data, the keypoint sets of PCL 1.13's correspondence-grouping tutorial: exactly the same indices. */
#include "test_support.h"
#include "io/cloud_io.h"
#include "descriptor/uniform_sampling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_ascending(const uint32_t *idx, size_t count)
{
    for (size_t i = 1; i < count; ++i)
        ck_assert_uint_lt(idx[i - 1], idx[i]);
}

START_TEST(nearest_to_centre_wins_first_on_ties)
{
    grip_ctx *ctx = grip_test_ctx();
    /* leaf 1: voxel (0,0,0) has centre (0.5, 0.5, 0.5) */
    const float xyz[] = {
        0.1f,  0.1f,  0.1f,  /* 0: voxel (0,0,0), far from the centre */
        0.25f, 0.5f,  0.5f,  /* 1: 0.25 from the centre */
        0.75f, 0.5f,  0.5f,  /* 2: 0.25 from the centre too: a tie, 1 stays */
        NAN,   0.5f,  0.5f,  /* 3: skipped */
        -0.5f, 0.5f,  0.5f,  /* 4: voxel (-1,0,0), alone */
        -0.01f, -0.01f, 3.2f, /* 5: voxel (-1,-1,3) */
        -0.5f, -0.5f, 3.5f,  /* 6: voxel (-1,-1,3), at its centre */
        -0.5f, -0.5f, 3.5f,  /* 7: a duplicate of 6: 6 stays */
    };
    uint32_t *idx = NULL;
    size_t count = 0;
    ck_assert_int_eq(grip_uniform_sampling(ctx, xyz, 8, 1.0f, &idx, &count), GRIP_OK);
    ck_assert_uint_eq(count, 3);
    ck_assert_uint_eq(idx[0], 1);
    ck_assert_uint_eq(idx[1], 4);
    ck_assert_uint_eq(idx[2], 6);
    free(idx);
    grip_ctx_free(ctx);
}
END_TEST

/* Brute force in double: the voxel of each point and, per voxel, the first point nearest its centre. */
START_TEST(random_cloud_matches_brute_force)
{
    grip_ctx *ctx = grip_test_ctx();
    uint64_t rng = 77;
    const size_t n = 3000;
    const float leaf = 0.25f;
    float *xyz = malloc(n * 3 * sizeof *xyz);
    for (size_t i = 0; i < n * 3; ++i)
        xyz[i] = grip_test_uniform(&rng, -1.0f, 1.0f);
    for (size_t i = 0; i < n; i += 13)
        xyz[i * 3 + 1] = NAN;
    uint32_t *idx = NULL;
    size_t count = 0;
    ck_assert_int_eq(grip_uniform_sampling(ctx, xyz, n, leaf, &idx, &count), GRIP_OK);
    check_ascending(idx, count);

    int *voxel = malloc(n * 3 * sizeof *voxel);
    double *dist = malloc(n * sizeof *dist);
    for (size_t i = 0; i < n; ++i) {
        dist[i] = 0.0;
        for (int a = 0; a < 3; ++a) {
            const float x = xyz[i * 3 + a];
            voxel[i * 3 + a] = (int)floor((double)x / leaf);
            double c = (voxel[i * 3 + a] + 0.5) * leaf;
            dist[i] += (x - c) * (x - c);
        }
    }
    size_t want = 0;
    for (size_t i = 0; i < n; ++i) {
        if (isnan(xyz[i * 3 + 1]))
            continue;
        int kept = 1; /* i is its voxel's keypoint unless an earlier point is as near, or a later one nearer */
        for (size_t j = 0; j < n && kept; ++j) {
            if (j == i || isnan(xyz[j * 3 + 1]) || memcmp(voxel + i * 3, voxel + j * 3, 3 * sizeof(int)) != 0)
                continue;
            kept = j < i ? dist[j] > dist[i] : dist[j] >= dist[i];
        }
        if (kept) {
            ck_assert_uint_lt(want, count);
            ck_assert_uint_eq(idx[want], i);
            ++want;
        }
    }
    ck_assert_uint_eq(count, want);
    free(voxel);
    free(dist);
    free(idx);
    free(xyz);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(empty_clouds_and_bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    uint32_t *idx = (uint32_t *)&idx;
    size_t count = 99;
    ck_assert_int_eq(grip_uniform_sampling(ctx, NULL, 0, 0.1f, &idx, &count), GRIP_OK);
    ck_assert_uint_eq(count, 0);
    ck_assert_ptr_null(idx);
    const float all_nan[6] = {NAN, 0, 0, 0, INFINITY, 0};
    ck_assert_int_eq(grip_uniform_sampling(ctx, all_nan, 2, 0.1f, &idx, &count), GRIP_OK);
    ck_assert_uint_eq(count, 0);
    ck_assert_ptr_null(idx);

    const float pts[3] = {0.5f, 0.5f, 0.5f};
    const float bad_leaves[] = {0.0f, -1.0f, NAN, INFINITY, 1e-45f};
    for (size_t i = 0; i < sizeof bad_leaves / sizeof bad_leaves[0]; ++i) {
        ck_assert_int_eq(grip_uniform_sampling(ctx, pts, 1, bad_leaves[i], &idx, &count), GRIP_EINVAL);
        ck_assert_ptr_nonnull(strstr(ctx->last_error, "uniform_sampling: leaf must be finite and > 0"));
        ck_assert_ptr_null(idx);
        ck_assert_uint_eq(count, 0);
    }
    ck_assert_int_eq(grip_uniform_sampling(ctx, NULL, 3, 0.1f, &idx, &count), GRIP_EINVAL);
    ck_assert_int_eq(grip_uniform_sampling(ctx, pts, 1, 0.1f, NULL, &count), GRIP_EINVAL);
    const float far[6] = {0.0f, 0.0f, 0.0f, 1e30f, 0.0f, 0.0f};
    ck_assert_int_eq(grip_uniform_sampling(ctx, far, 2, 1e-3f, &idx, &count), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "point 1 "));
    ck_assert_ptr_null(idx);
    grip_ctx_free(ctx);
}
END_TEST

/* ---- parity with PCL ---------------------------------------------------------------------------------- */

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void compare_tutorial_keypoints(const char *cloud_rel, const char *ref_rel, float leaf, size_t want)
{
    host_cloud cloud = grip_test_read_cloud(cloud_rel);
    size_t ref_count = 0;
    uint32_t *ref = grip_test_read_rows(ref_rel, sizeof *ref, &ref_count);
    ck_assert_uint_eq(ref_count, want);
    qsort(ref, ref_count, sizeof *ref, compare_u32); /* PCL's order is its hash map's: compare as sets */

    grip_ctx *ctx = grip_test_ctx();
    uint32_t *idx = NULL;
    size_t count = 0;
    ck_assert_int_eq(grip_uniform_sampling(ctx, cloud.xyz, cloud.n, leaf, &idx, &count), GRIP_OK);
    ck_assert_uint_eq(count, ref_count);
    for (size_t i = 0; i < count; ++i)
        ck_assert_msg(idx[i] == ref[i], "keypoint %zu: %u, PCL has %u", i, idx[i], ref[i]);
    printf("%s, leaf %g: the same %zu keypoints as PCL\n", cloud_rel, (double)leaf, count);
    free(idx);
    grip_ctx_free(ctx);
    free(ref);
    host_cloud_free(&cloud);
}

START_TEST(tutorial_model_keypoints_match_pcl)
{
    compare_tutorial_keypoints("pcl/data_repo/correspondence_grouping/milk.pcd",
                               "pcl_reference/tutorial/model_keypoints.u32.gz", 0.01f, 686);
}
END_TEST

START_TEST(tutorial_scene_keypoints_match_pcl)
{
    compare_tutorial_keypoints("pcl/milk_cartoon_all_small_clorox.pcd", "pcl_reference/tutorial/scene_keypoints.u32.gz",
                               0.03f, 3747);
}
END_TEST

static Suite *suite(int with_data)
{
    Suite *s = suite_create("uniform_sampling");
    TCase *tc = tcase_create("voxels");
    tcase_add_test(tc, nearest_to_centre_wins_first_on_ties);
    tcase_add_test(tc, random_cloud_matches_brute_force);
    tcase_add_test(tc, empty_clouds_and_bad_arguments);
    suite_add_tcase(s, tc);
    if (with_data) {
        TCase *pcl = tcase_create("pcl");
        tcase_set_timeout(pcl, 120);
        tcase_add_test(pcl, tutorial_model_keypoints_match_pcl);
        tcase_add_test(pcl, tutorial_scene_keypoints_match_pcl);
        suite_add_tcase(s, pcl);
    }
    return s;
}

int main(void)
{
    char path[4096];
    int with_data = grip_test_data_path(path, sizeof path, "pcl_reference/tutorial/scene_keypoints.u32.gz");
    if (!with_data)
        fprintf(stderr, "PCL parity cases skipped: shared data absent (set GRIP_DATA)\n");
    return grip_test_run(suite(with_data));
}
