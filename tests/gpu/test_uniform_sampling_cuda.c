/* test_uniform_sampling_cuda.c (gpu) -- grip_uniform_sampling_cuda against its CPU twin grip_uniform_sampling: the
 * very same index sets, in the same (ascending) order, on random clouds with NaN and infinite points, negative
 * coordinates and exact duplicates, on points built to tie in score (the first in cloud order must win), on
 * degenerate clouds, and on PCL's tutorial pair (model leaf 0.01, scene leaf 0.03: 686 and 3,747 keypoints, as
 * PCL). Bad leaves and voxel coordinates beyond an int fail as on the CPU. Skips (77) without a usable device. */
#include "test_support.h"
#include "core/cuda_bridge.h"
#include "descriptor/uniform_sampling.h"
#include "descriptor/uniform_sampling_cuda.h"
#include "spatial/neighborhood_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The GPU's sample of xyz (downloaded, malloc'd) and its status. */
static grip_status sample_on_gpu(grip_ctx *ctx, const float *xyz, size_t n, float leaf, uint32_t **idx,
                                 size_t *count)
{
    grip_surface_cuda *s = NULL;
    uint32_t *dev = NULL;
    *idx = NULL;
    *count = 0;
    ck_assert_msg(grip_surface_cuda_create(ctx, xyz, n, &s) == GRIP_OK, "%s", ctx->last_error);
    grip_status st = grip_uniform_sampling_cuda(ctx, s, leaf, &dev, count);
    if (st == GRIP_OK) {
        ck_assert_ptr_nonnull(dev);
        *idx = malloc(*count * sizeof **idx + 1);
        ck_assert_ptr_nonnull(*idx);
        ck_assert_int_eq(grip_cuda_copy_to_host(ctx, *idx, dev, *count * sizeof **idx), GRIP_OK);
    } else {
        ck_assert_ptr_null(dev);
        ck_assert_uint_eq(*count, 0);
    }
    grip_cuda_free(dev);
    grip_surface_cuda_free(s);
    return st;
}

/* Both samples of xyz are identical; returns their size. */
static size_t compare_with_cpu(const char *name, const float *xyz, size_t n, float leaf)
{
    grip_ctx *ctx = grip_test_ctx();
    uint32_t *cpu = NULL, *gpu = NULL;
    size_t nc = 0, ng = 0;
    ck_assert_int_eq(grip_uniform_sampling(ctx, xyz, n, leaf, &cpu, &nc), GRIP_OK);
    ck_assert_msg(sample_on_gpu(ctx, xyz, n, leaf, &gpu, &ng) == GRIP_OK, "%s: %s", name, ctx->last_error);
    printf("%s n=%zu leaf=%g: %zu keypoints on the CPU, %zu on the GPU\n", name, n, (double)leaf, nc, ng);
    ck_assert_uint_eq(nc, ng);
    for (size_t i = 0; i < nc; ++i)
        ck_assert_msg(cpu[i] == gpu[i], "%s: keypoint %zu is point %u on the CPU, %u on the GPU", name, i, cpu[i],
                      gpu[i]);
    free(cpu);
    free(gpu);
    grip_ctx_free(ctx);
    return nc;
}

/* n points uniform in [lo, hi)^3; every 29th NaN (an inf every third time), every 13th a copy of an earlier one. */
static float *random_cloud(uint64_t *s, size_t n, float lo, float hi)
{
    float *xyz = grip_test_uniform_rows(s, n, 3, lo, hi);
    for (size_t i = 1; i < n; ++i)
        if (i % 13 == 0) {
            size_t from = (size_t)grip_test_uniform(s, 0.0f, (float)i) % i;
            memcpy(xyz + 3 * i, xyz + 3 * from, 3 * sizeof *xyz);
        }
    for (size_t i = 3, t = 0; i < n; i += 29, ++t)
        xyz[3 * i + t % 3] = t % 3 == 2 ? -INFINITY : NAN;
    return xyz;
}

START_TEST(random_clouds)
{
    uint64_t s = 501;
    const size_t n = 60000;
    float *xyz = random_cloud(&s, n, -1.0f, 1.0f);
    static const float leaves[] = {0.02f, 0.05f, 0.1f, 0.3f, 5.0f};
    for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; ++i)
        ck_assert_uint_gt(compare_with_cpu("uniform [-1, 1)", xyz, n, leaves[i]), 0);
    free(xyz);
    /* far from the origin, a tiny leaf: large voxel coordinates of both signs */
    xyz = random_cloud(&s, n, -3000.0f, 3000.0f);
    ck_assert_uint_gt(compare_with_cpu("uniform [-3000, 3000)", xyz, n, 0.75f), 0);
    free(xyz);
    /* dense blobs: many points a voxel */
    xyz = grip_test_clustered_rows(&s, 40000, 3, 5);
    ck_assert_uint_gt(compare_with_cpu("clustered", xyz, 40000, 0.004f), 0);
    free(xyz);
}
END_TEST

/* Points placed symmetrically about their voxel's centre score the same: the first in cloud order is kept. */
START_TEST(equal_scores_keep_the_first_point)
{
    /* leaf 1: voxel (0,0,0) has centre (0.5,0.5,0.5); voxel (2,0,0) has centre (2.5,0.5,0.5) */
    float xyz[] = {0.75f, 0.5f, 0.5f,  /* 0: score 0.0625 + 1 */
                   0.25f, 0.5f, 0.5f,  /* 1: the same score, later: not kept */
                   2.25f, 0.5f, 0.5f,  /* 2: ties with 3 */
                   2.5f, 0.75f, 0.5f,  /* 3: same score as 2 (dy^2 instead of dx^2), later */
                   NAN, 0.0f, 0.0f,    /* 4 */
                   2.5f, 0.5f, 0.25f}; /* 5: same score again */
    grip_ctx *ctx = grip_test_ctx();
    uint32_t *gpu = NULL;
    size_t count = 0;
    ck_assert_int_eq(sample_on_gpu(ctx, xyz, 6, 1.0f, &gpu, &count), GRIP_OK);
    ck_assert_uint_eq(count, 2);
    ck_assert_uint_eq(gpu[0], 0);
    ck_assert_uint_eq(gpu[1], 2);
    free(gpu);
    grip_ctx_free(ctx);
    compare_with_cpu("ties", xyz, 6, 1.0f);
    /* a flat grid of points exactly on voxel borders and centres: many equal scores */
    float *grid = malloc(30 * 30 * 3 * sizeof *grid);
    ck_assert_ptr_nonnull(grid);
    for (size_t i = 0; i < 900; ++i) {
        grid[3 * i] = 0.125f * (float)(i % 30) - 1.0f;
        grid[3 * i + 1] = 0.125f * (float)(i / 30) - 2.0f;
        grid[3 * i + 2] = 0.5f;
    }
    ck_assert_uint_gt(compare_with_cpu("flat grid", grid, 900, 0.5f), 0);
    free(grid);
}
END_TEST

START_TEST(degenerate_clouds)
{
    float one[3] = {0.1f, 0.2f, 0.3f};
    ck_assert_uint_eq(compare_with_cpu("one point", one, 1, 0.01f), 1);
    float nan3[9] = {NAN, 0, 0, 0, INFINITY, 0, 0, 0, NAN};
    ck_assert_uint_eq(compare_with_cpu("all NaN", nan3, 3, 0.01f), 0);
    float same[30];
    for (size_t i = 0; i < 30; ++i)
        same[i] = (float)(i % 3) * 0.25f;
    ck_assert_uint_eq(compare_with_cpu("one point ten times", same, 10, 0.1f), 1);
}
END_TEST

START_TEST(bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    float xyz[6] = {0, 0, 0, 1e4f, 0, 0};
    uint32_t *idx = NULL;
    size_t count = 0;
    static const float bad_leaves[] = {0.0f, -1.0f, NAN, INFINITY, 1e-45f /* 1 / leaf overflows */};
    for (size_t i = 0; i < sizeof bad_leaves / sizeof bad_leaves[0]; ++i)
        ck_assert_int_eq(sample_on_gpu(ctx, xyz, 2, bad_leaves[i], &idx, &count), GRIP_EINVAL);
    /* 1e4 / 1e-6 = 1e10 does not fit in an int: the CPU and the GPU both refuse, naming point 1 */
    ck_assert_int_eq(sample_on_gpu(ctx, xyz, 2, 1e-6f, &idx, &count), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "point 1 "));
    ck_assert_int_eq(grip_uniform_sampling(ctx, xyz, 2, 1e-6f, &idx, &count), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "point 1 "));
    ck_assert_int_eq(grip_uniform_sampling_cuda(ctx, NULL, 0.1f, &idx, &count), GRIP_EINVAL);
    ck_assert_ptr_null(idx);
    /* the context still works */
    ck_assert_int_eq(sample_on_gpu(ctx, xyz, 2, 1.0f, &idx, &count), GRIP_OK);
    ck_assert_uint_eq(count, 2);
    free(idx);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(tutorial_pair)
{
    static const struct {
        const char *rel;
        float leaf;
        size_t pcl_count;
    } clouds[] = {{"pcl/data_repo/correspondence_grouping/milk.pcd", 0.01f, 686},
                  {"pcl/milk_cartoon_all_small_clorox.pcd", 0.03f, 3747}};
    for (size_t c = 0; c < 2; ++c) {
        char path[4096];
        if (!grip_test_data_path(path, sizeof path, clouds[c].rel)) {
            printf("%s: data absent, not checked\n", clouds[c].rel);
            continue;
        }
        host_cloud cloud = grip_test_read_cloud(clouds[c].rel);
        ck_assert_uint_eq(compare_with_cpu(clouds[c].rel, cloud.xyz, cloud.n, clouds[c].leaf), clouds[c].pcl_count);
        host_cloud_free(&cloud);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("uniform_sampling_cuda");
    TCase *tc = tcase_create("twin");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, random_clouds);
    tcase_add_test(tc, equal_scores_keep_the_first_point);
    tcase_add_test(tc, degenerate_clouds);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, tutorial_pair);
    suite_add_tcase(s, tc);
    return grip_test_run_gpu(s);
}
