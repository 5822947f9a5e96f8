/* test_pfh_cuda.c (gpu) -- the GPU PFH (grip_pfh_cuda_surface, grip_pfh_cuda) against its CPU twin
 * grip_pfh_describe: the same NaN rows and every value within 1e-4 (the rows are expected equal to the bit; the
 * count of those is printed). Cases: random clouds with NaN points, duplicates and NaN normals, keypoints on and off
 * the cloud, a far and a NaN one; a curved patch; the duplicate triplet; PCL's bunny with its normals, also with
 * every point a neighbour (78,606 pairs a keypoint); every 10th of the tutorial scene's uniform-sampling keypoints
 * with PCL's normals at radius 0.015; lists given by the caller; the chunking of grip_pfh_for_each_chunk (a
 * callback short of memory above 7 queries sees every query once, in chunks of at most 7); bad arguments. Skips
 * (77) without a usable device; the data cases pass without checking anything when the data is absent. */
#include "pfh_cuda_test_support.h"
#include "descriptor/pfh.h"
#include "descriptor/pfh_chunks.h"
#include "descriptor/pfh_cuda.h"

static const pfh_cuda_twins pfh = {GRIP_PFH_DIM, grip_pfh_describe, grip_pfh_cuda_surface};

START_TEST(random_clouds)
{
    uint64_t seed = 4401;
    const size_t n = 20000;
    float *xyz = NULL, *normals = NULL;
    pfh_cuda_random_cloud(&seed, n, &xyz, &normals);
    size_t k = 0;
    float *keys = pfh_cuda_keypoints(&seed, xyz, n, 5, 200, &k);
    pfh_cuda_stats st = pfh_cuda_compare(&pfh, "random, ~40 neighbours", xyz, normals, n, keys, k, 0.08f);
    ck_assert_uint_ge(st.nan_rows, n / 5 / 37 + 2);
    pfh_cuda_compare(&pfh, "random, ~5 neighbours", xyz, normals, n, keys, k, 0.04f);
    free(keys);
    free(normals);
    free(xyz);
}
END_TEST

START_TEST(small_clouds)
{
    pfh_cuda_check_small_clouds(&pfh, 19);
}
END_TEST

START_TEST(pcl_bunny)
{
    pfh_cuda_check_bunny(&pfh, 0.03f, 50);
}
END_TEST

START_TEST(tutorial_scene)
{
    pfh_cuda_check_tutorial_scene(&pfh, "tutorial scene, every 10th keypoint", 10, 0.015f);
}
END_TEST

/* grip_pfh_cuda on lists the caller made equals the surface entry; lists of another count are refused. */
START_TEST(caller_lists)
{
    grip_ctx *ctx = grip_test_ctx();
    float patch[3 * PFH_TEST_PATCH], patch_normals[4 * PFH_TEST_PATCH];
    pfh_test_patch(23, patch, patch_normals);
    grip_surface_cuda *s = pfh_cuda_surface(ctx, patch, patch_normals, PFH_TEST_PATCH);
    float *keys = pfh_cuda_upload(ctx, patch, sizeof patch), *out = NULL;
    const size_t bytes = PFH_TEST_PATCH * GRIP_PFH_DIM * sizeof(float);
    ck_assert_int_eq(grip_cuda_alloc(ctx, 2 * bytes, (void **)&out), GRIP_OK);
    grip_neighborhoods_cuda nb = {0};
    ck_assert_int_eq(grip_neighborhoods_cuda_radius(ctx, s, keys, PFH_TEST_PATCH, 0.03f, 0, &nb), GRIP_OK);
    ck_assert_int_eq(grip_pfh_cuda(ctx, &nb, keys, PFH_TEST_PATCH, out), GRIP_OK);
    ck_assert_int_eq(grip_pfh_cuda_surface(ctx, s, keys, PFH_TEST_PATCH, 0.03f, out + bytes / sizeof(float)), GRIP_OK);
    float *host = malloc(2 * bytes);
    ck_assert_ptr_nonnull(host);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, host, out, 2 * bytes), GRIP_OK);
    ck_assert_int_eq(memcmp(host, host + bytes / sizeof(float), bytes), 0);
    ck_assert_int_eq(grip_pfh_cuda(ctx, &nb, keys, PFH_TEST_PATCH - 1, out), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "lists are of"));
    free(host);
    grip_neighborhoods_cuda_free(&nb);
    grip_cuda_free(out);
    grip_cuda_free(keys);
    grip_surface_cuda_free(s);
    grip_ctx_free(ctx);
}
END_TEST

typedef struct chunk_log {
    uint32_t seen[PFH_TEST_PATCH];
    uint32_t calls, refused, largest;
} chunk_log;

static grip_status short_of_memory_above_7(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *queries,
                                           uint32_t first, uint32_t count, void *user)
{
    chunk_log *log = user;
    (void)queries;
    ck_assert_uint_eq(nb->m, count);
    if (count > 7) {
        ++log->refused;
        return grip_fail(ctx, GRIP_ENOMEM, "test: pretend the device is full");
    }
    ++log->calls;
    log->largest = count > log->largest ? count : log->largest;
    for (uint32_t i = 0; i < count; ++i)
        ++log->seen[first + i];
    return GRIP_OK;
}

START_TEST(chunks_halve_on_enomem)
{
    grip_ctx *ctx = grip_test_ctx();
    float patch[3 * PFH_TEST_PATCH], patch_normals[4 * PFH_TEST_PATCH];
    pfh_test_patch(29, patch, patch_normals);
    grip_surface_cuda *s = pfh_cuda_surface(ctx, patch, patch_normals, PFH_TEST_PATCH);
    float *keys = pfh_cuda_upload(ctx, patch, sizeof patch);
    chunk_log log;
    memset(&log, 0, sizeof log);
    ck_assert_int_eq(grip_pfh_for_each_chunk(ctx, s, keys, PFH_TEST_PATCH, 0.03f, short_of_memory_above_7, &log),
                     GRIP_OK);
    for (size_t i = 0; i < PFH_TEST_PATCH; ++i)
        ck_assert_uint_eq(log.seen[i], 1);
    ck_assert_uint_le(log.largest, 7);
    ck_assert_uint_gt(log.refused, 0);
    printf("chunks: %u calls, %u refused, largest %u\n", log.calls, log.refused, log.largest);
    grip_cuda_free(keys);
    grip_surface_cuda_free(s);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    float tri[3 * PFH_TEST_TRIPLET], tri_normals[4 * PFH_TEST_TRIPLET];
    pfh_test_triplet(tri, tri_normals);
    grip_surface_cuda *s = pfh_cuda_surface(ctx, tri, tri_normals, PFH_TEST_TRIPLET), *bare = NULL;
    float *keys = pfh_cuda_upload(ctx, tri, sizeof tri), *out = NULL;
    ck_assert_int_eq(grip_cuda_alloc(ctx, PFH_TEST_TRIPLET * GRIP_PFH_DIM * sizeof(float), (void **)&out), GRIP_OK);
    ck_assert_int_eq(grip_pfh_cuda_surface(ctx, s, keys, 3, -1.0f, out), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "pfh (cuda): radius"));
    ck_assert_int_eq(grip_pfh_cuda_surface(ctx, s, keys, 3, INFINITY, out), GRIP_EINVAL);
    ck_assert_int_eq(grip_pfh_cuda_surface(ctx, s, keys, 3, 0.02f, NULL), GRIP_EINVAL);
    ck_assert_int_eq(grip_pfh_cuda(ctx, NULL, keys, 3, out), GRIP_EINVAL);
    ck_assert_int_eq(grip_pfh_cuda(ctx, NULL, NULL, 0, NULL), GRIP_OK);
    ck_assert_int_eq(grip_surface_cuda_create(ctx, tri, PFH_TEST_TRIPLET, &bare), GRIP_OK);
    ck_assert_int_eq(grip_pfh_cuda_surface(ctx, bare, keys, 3, 0.02f, out), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "no normals"));
    grip_neighborhoods_cuda nb = {0};
    ck_assert_int_eq(grip_neighborhoods_cuda_radius(ctx, bare, keys, 3, 0.02f, 0, &nb), GRIP_OK);
    ck_assert_int_eq(grip_pfh_cuda(ctx, &nb, keys, 3, out), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "no normals"));
    grip_neighborhoods_cuda_free(&nb);
    grip_surface_cuda_free(bare);
    grip_surface_cuda_free(s);
    grip_cuda_free(out);
    grip_cuda_free(keys);
    grip_ctx_free(ctx);
}
END_TEST

static Suite *pfh_cuda_suite(void)
{
    Suite *s = suite_create("pfh_cuda");
    TCase *tc = tcase_create("pfh_cuda");
    tcase_add_test(tc, random_clouds);
    tcase_add_test(tc, small_clouds);
    tcase_add_test(tc, pcl_bunny);
    tcase_add_test(tc, tutorial_scene);
    tcase_add_test(tc, caller_lists);
    tcase_add_test(tc, chunks_halve_on_enomem);
    tcase_add_test(tc, bad_arguments);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return grip_test_run_gpu(pfh_cuda_suite());
}
