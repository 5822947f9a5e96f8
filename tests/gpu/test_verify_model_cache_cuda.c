/* test_verify_model_cache_cuda.c -- the verify stages' model cache (stages/verify_model_cache.h) on the GPU backend:
 * the icp stage's models get normals computed on the device and go to ICP in one batch, the ghv stage's samples go
 * to the GPU terms; a stage's later calls give, byte for byte, the verdicts a fresh CUDA stage gives -- the same
 * models (the cache reused), a model moved in the same buffer, its normals given then flipped in place -- on the
 * data of tests/support/verify_cache_fixture.h. tests/unit/test_verify_model_cache.c checks the CPU twin. */
#include "test_support.h"
#include "verify_cache_fixture.h"
#include "core/array.h"
#include "stages/registry.h"

#include <stdio.h>
#include <string.h>

static const grip_kv icp_kv[] = {{"device", "cuda"},           {"model_leaf", "0.004"},
                                 {"max_iterations", "20"},     {"max_correspondence_distance", "0.03"},
                                 {"inlier_distance", "0.002"}, {"max_rmse", "0.002"}};
#define ICP_KV ((uint32_t)(sizeof icp_kv / sizeof icp_kv[0]))

static const grip_kv ghv_kv[] = {{"device", "cuda"}, {"icp_iterations", "5"}};
#define GHV_KV ((uint32_t)(sizeof ghv_kv / sizeof ghv_kv[0]))

/* One stage of impl over the steps: 0 as made, 1 the same again (reused), 2 model 0 moved in place, 3 model 0's
 * normals given, 4 flipped in place. Each step's verdicts equal a fresh stage's. */
static void check_stage(const grip_stage_impl *impl, const grip_kv *kv, uint32_t n_kv, double scene_extent)
{
    fixture f;
    fixture_make(&f, SCENE_POINTS, scene_extent);
    grip_ctx *ctx = grip_test_ctx();
    grip_stage *st = stage_new(ctx, impl, kv, n_kv);
    const float *kept0 = NULL, *kept1 = NULL;
    for (int step = 0; step < 5; step++) {
        if (step == 2)
            for (size_t i = 0; i < f.model[0].n; i++)
                f.model[0].xyz[3 * i] += 0.0015f;
        if (step == 3)
            f.model_cloud[0].normals = grip_array_host_view(GRIP_F32, f.model[0].n, 3, f.model[0].normals);
        if (step == 4)
            for (size_t i = 0; i < 3 * f.model[0].n; i++)
                f.model[0].normals[i] = -f.model[0].normals[i];
        grip_verdicts *v = verify_on(st, f.model_view, N_MODELS, &f);
        if (step == 1) {
            ck_assert_ptr_eq(cached_points(st, 0), kept0);
            ck_assert_ptr_eq(cached_points(st, 1), kept1);
        }
        if (step == 2)
            ck_assert_ptr_ne(cached_points(st, 0), kept0);
        if (step >= 1)
            ck_assert_ptr_eq(cached_points(st, 1), kept1); /* model 1 never changes */
        kept0 = cached_points(st, 0);
        kept1 = cached_points(st, 1);
        char what[48];
        snprintf(what, sizeof what, "%s step %d", impl->name, step);
        assert_as_fresh(v, verify_fresh(impl, kv, n_kv, f.model_view, N_MODELS, &f), what);
    }
    impl->destroy(st);
    grip_ctx_free(ctx);
    fixture_free(&f);
}

START_TEST(icp_cuda_cache_equals_fresh)
{
    check_stage(&grip_verify_icp, icp_kv, ICP_KV, 0.1);
}
END_TEST

START_TEST(ghv_cuda_cache_equals_fresh)
{
    check_stage(&grip_verify_ghv, ghv_kv, GHV_KV, 0.06);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("verify_model_cache_cuda");
    TCase *tc = tcase_create("cache");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, icp_cuda_cache_equals_fresh);
    tcase_add_test(tc, ghv_cuda_cache_equals_fresh);
    suite_add_tcase(s, tc);
    return grip_test_run_gpu(s);
}
