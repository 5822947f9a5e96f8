/* test_fpfh_cuda.c (gpu) -- the GPU FPFH (grip_fpfh_cuda) against its CPU twin grip_fpfh_describe: the same NaN rows
 * and every value within 1e-4 (the rows are expected equal to the bit; the count of those is printed). Cases:
 * random clouds with NaN points, duplicates and NaN normals, keypoints on and off the cloud, a far and a NaN one;
 * a curved patch; the duplicate triplet (exact zeros and the duplicates' votes); PCL's bunny with its normals at
 * radius 0.05; the tutorial scene with PCL's normals on its 3,747 uniform-sampling keypoints at radius 0.02; bad
 * arguments. Skips (77) without a usable device; the data cases pass without checking anything when the data is
 * absent (they say so). */
#include "pfh_cuda_test_support.h"
#include "descriptor/fpfh.h"
#include "descriptor/fpfh_cuda.h"

static const pfh_cuda_twins fpfh = {GRIP_FPFH_DIM, grip_fpfh_describe, grip_fpfh_cuda};

START_TEST(random_clouds)
{
    uint64_t seed = 3301;
    const size_t n = 20000;
    float *xyz = NULL, *normals = NULL;
    pfh_cuda_random_cloud(&seed, n, &xyz, &normals);
    size_t k = 0;
    float *keys = pfh_cuda_keypoints(&seed, xyz, n, 7, 200, &k);
    pfh_cuda_stats st = pfh_cuda_compare(&fpfh, "random, ~40 neighbours", xyz, normals, n, keys, k, 0.08f);
    ck_assert_uint_ge(st.nan_rows, n / 7 / 37 + 2); /* the NaN keypoints of the cloud, the far and the NaN one */
    pfh_cuda_compare(&fpfh, "random, ~5 neighbours", xyz, normals, n, keys, k, 0.04f);
    pfh_cuda_compare(&fpfh, "random, every point", xyz, normals, n, xyz, n, 0.06f);
    free(keys);
    free(normals);
    free(xyz);
}
END_TEST

START_TEST(small_clouds)
{
    pfh_cuda_check_small_clouds(&fpfh, 17);
    float tri[3 * PFH_TEST_TRIPLET], tri_normals[4 * PFH_TEST_TRIPLET];
    pfh_test_triplet(tri, tri_normals);
    pfh_cuda_compare(&fpfh, "duplicate triplet, 5 mm", tri, tri_normals, PFH_TEST_TRIPLET, tri, PFH_TEST_TRIPLET,
                     0.005f);
}
END_TEST

START_TEST(pcl_bunny)
{
    pfh_cuda_check_bunny(&fpfh, 0.05f, 40);
}
END_TEST

START_TEST(tutorial_scene)
{
    /* small sizes (compute-sanitizer): every 24th keypoint over the whole scene; the same kernels */
    pfh_cuda_check_tutorial_scene(&fpfh, "tutorial scene", grip_test_size(1, 24), 0.02f);
}
END_TEST

START_TEST(bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    float tri[3 * PFH_TEST_TRIPLET], tri_normals[4 * PFH_TEST_TRIPLET];
    pfh_test_triplet(tri, tri_normals);
    grip_surface_cuda *s = pfh_cuda_surface(ctx, tri, tri_normals, PFH_TEST_TRIPLET), *bare = NULL;
    float *keys = pfh_cuda_upload(ctx, tri, sizeof tri), *out = NULL;
    ck_assert_int_eq(grip_cuda_alloc(ctx, PFH_TEST_TRIPLET * GRIP_FPFH_DIM * sizeof(float), (void **)&out), GRIP_OK);
    ck_assert_int_eq(grip_fpfh_cuda(ctx, s, keys, 3, 0.0f, out), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "fpfh (cuda): radius"));
    ck_assert_int_eq(grip_fpfh_cuda(ctx, s, keys, 3, NAN, out), GRIP_EINVAL);
    ck_assert_int_eq(grip_fpfh_cuda(ctx, s, NULL, 3, 0.02f, out), GRIP_EINVAL);
    ck_assert_int_eq(grip_fpfh_cuda(ctx, NULL, keys, 3, 0.02f, out), GRIP_EINVAL);
    ck_assert_int_eq(grip_fpfh_cuda(ctx, s, NULL, 0, 0.02f, NULL), GRIP_OK);
    ck_assert_int_eq(grip_surface_cuda_create(ctx, tri, PFH_TEST_TRIPLET, &bare), GRIP_OK);
    ck_assert_int_eq(grip_fpfh_cuda(ctx, bare, keys, 3, 0.02f, out), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "no normals"));
    ck_assert_int_eq(grip_fpfh_cuda(ctx, s, keys, 3, 0.02f, out), GRIP_OK);
    grip_surface_cuda_free(bare);
    grip_surface_cuda_free(s);
    grip_cuda_free(out);
    grip_cuda_free(keys);
    grip_ctx_free(ctx);
}
END_TEST

static Suite *fpfh_cuda_suite(void)
{
    Suite *s = suite_create("fpfh_cuda");
    grip_test_add_case(s, "random", random_clouds);
    grip_test_add_case(s, "small", small_clouds);
    grip_test_add_case(s, "bunny", pcl_bunny);
    grip_test_add_case(s, "scene", tutorial_scene);
    grip_test_add_case(s, "arguments", bad_arguments);
    return s;
}

int main(void)
{
    return grip_test_run_gpu(fpfh_cuda_suite());
}
