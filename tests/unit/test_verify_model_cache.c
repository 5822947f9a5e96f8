/* test_verify_model_cache.c -- the verify stages keep what they prepare from each model (icp: thinned points and
 * their normals; ghv: sampled points) across verify() calls (stages/verify_model_cache.h). Checked here: a stage's
 * later calls give, byte for byte, the verdicts a fresh stage gives for the same arguments -- when the models are
 * the same (and the cache is then reused: the stage's entry still holds the arrays of the first call), when the host
 * changed a model's points or normals in the same buffer, changed what its normals come from (none, given, flipped,
 * another viewpoint for computed ones), reordered or dropped models, or gave a scene of another resolution (ghv's
 * leaf) -- and after a call whose model preparation failed, on the data of tests/support/verify_cache_fixture.h. */
#include "test_support.h"
#include "verify_cache_fixture.h"
#include "core/array.h"
#include "stages/registry.h"
#include "stages/stage.h"
#include "stages/verify_model_cache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const grip_kv icp_kv[] = {{"device", "cpu"},
                                 {"model_leaf", "0.004"},
                                 {"max_iterations", "20"},
                                 {"max_correspondence_distance", "0.03"},
                                 {"inlier_distance", "0.002"},
                                 {"max_rmse", "0.002"}};
#define ICP_KV ((uint32_t)(sizeof icp_kv / sizeof icp_kv[0]))

/* Two calls with the same models reuse every model's points (the arrays of the first call) and give a fresh
 * stage's verdicts; so does a call on another scene. */
START_TEST(icp_same_models_reuse_the_cache)
{
    fixture f;
    fixture_make(&f, SCENE_POINTS, 0.1);
    grip_ctx *ctx = grip_test_ctx();
    grip_stage *st = stage_new(ctx, &grip_verify_icp, icp_kv, ICP_KV);
    grip_verdicts *first = verify_on(st, f.model_view, N_MODELS, &f);
    uint32_t accepted = 0;
    for (uint32_t i = 0; i < first->count; i++)
        accepted += first->items[i].accepted;
    ck_assert_msg(accepted >= 2 && !first->items[N_HYPOTHESES - 1].accepted, "%u accepted", accepted);
    const float *kept[N_MODELS];
    for (uint32_t m = 0; m < N_MODELS; m++)
        kept[m] = cached_points(st, m);
    assert_as_fresh(first, verify_fresh(&grip_verify_icp, icp_kv, ICP_KV, f.model_view, N_MODELS, &f), "call 1");
    grip_verdicts *second = verify_on(st, f.model_view, N_MODELS, &f);
    for (uint32_t m = 0; m < N_MODELS; m++)
        ck_assert_ptr_eq(cached_points(st, m), kept[m]);
    assert_as_fresh(second, verify_fresh(&grip_verify_icp, icp_kv, ICP_KV, f.model_view, N_MODELS, &f), "call 2");
    for (size_t i = 0; i < f.scene.n; i++) /* the next scene of the stream: the same buffer, other noise */
        f.scene.xyz[3 * i + 2] += (i % 3 == 0 ? 1e-4f : -1e-4f);
    grip_verdicts *third = verify_on(st, f.model_view, N_MODELS, &f);
    for (uint32_t m = 0; m < N_MODELS; m++)
        ck_assert_ptr_eq(cached_points(st, m), kept[m]);
    assert_as_fresh(third, verify_fresh(&grip_verify_icp, icp_kv, ICP_KV, f.model_view, N_MODELS, &f), "call 3");
    grip_verify_icp.destroy(st);
    grip_ctx_free(ctx);
    fixture_free(&f);
}
END_TEST

/* The host moves model 0's points in the same buffer (same pointer, same count): the stage prepares it again,
 * keeps model 1's, and gives a fresh stage's verdicts, which the move changed. */
START_TEST(icp_points_changed_in_place)
{
    fixture f;
    fixture_make(&f, SCENE_POINTS, 0.1);
    grip_ctx *ctx = grip_test_ctx();
    grip_stage *st = stage_new(ctx, &grip_verify_icp, icp_kv, ICP_KV);
    grip_verdicts *first = verify_on(st, f.model_view, N_MODELS, &f);
    const float *kept0 = cached_points(st, 0), *kept1 = cached_points(st, 1);
    for (size_t i = 0; i < f.model[0].n; i++)
        f.model[0].xyz[3 * i] += 0.0015f; /* within ICP's reach: the refined poses move by it */
    grip_verdicts *second = verify_on(st, f.model_view, N_MODELS, &f);
    ck_assert_ptr_ne(cached_points(st, 0), kept0);
    ck_assert_ptr_eq(cached_points(st, 1), kept1);
    ck_assert_msg(!verdicts_equal(first, second), "moving model 0 changed no verdict: the test checks nothing");
    first->release(first);
    assert_as_fresh(second, verify_fresh(&grip_verify_icp, icp_kv, ICP_KV, f.model_view, N_MODELS, &f), "moved");
    /* a single point changed, one bit of one coordinate */
    f.model[1].xyz[3 * (MODEL_POINTS / 2) + 1] = nextafterf(f.model[1].xyz[3 * (MODEL_POINTS / 2) + 1], INFINITY);
    grip_verdicts *third = verify_on(st, f.model_view, N_MODELS, &f);
    ck_assert_ptr_ne(cached_points(st, 1), kept1);
    assert_as_fresh(third, verify_fresh(&grip_verify_icp, icp_kv, ICP_KV, f.model_view, N_MODELS, &f), "one bit");
    grip_verify_icp.destroy(st);
    grip_ctx_free(ctx);
    fixture_free(&f);
}
END_TEST

/* What a model's normals come from changes between calls: computed (none given), given up, given flipped in place
 * (every point then faces away: fitness 0), computed again, computed toward another viewpoint. Each call gives a
 * fresh stage's verdicts. */
START_TEST(icp_normals_source_changes)
{
    fixture f;
    fixture_make(&f, SCENE_POINTS, 0.1);
    grip_ctx *ctx = grip_test_ctx();
    grip_stage *st = stage_new(ctx, &grip_verify_icp, icp_kv, ICP_KV);
    grip_cloud *c0 = &f.model_cloud[0];
    float fitness[5];
    for (int step = 0; step < 5; step++) {
        if (step == 1) /* given: the terrain's exact normals */
            c0->normals = grip_array_host_view(GRIP_F32, f.model[0].n, 3, f.model[0].normals);
        if (step == 2) /* the same buffer, flipped */
            for (size_t i = 0; i < 3 * f.model[0].n; i++)
                f.model[0].normals[i] = -f.model[0].normals[i];
        if (step == 3) /* none given again: computed, as in step 0 */
            memset(&c0->normals, 0, sizeof c0->normals);
        if (step == 4) /* computed toward a viewpoint below the patch: they point down */
            c0->viewpoint[2] = -1.0f;
        grip_verdicts *v = verify_on(st, f.model_view, N_MODELS, &f);
        fitness[step] = v->items[0].fitness;
        char what[32];
        snprintf(what, sizeof what, "normals step %d", step);
        assert_as_fresh(v, verify_fresh(&grip_verify_icp, icp_kv, ICP_KV, f.model_view, N_MODELS, &f), what);
    }
    ck_assert_float_gt(fitness[0], 0.5f);
    ck_assert_float_gt(fitness[1], 0.5f);
    ck_assert_float_eq(fitness[2], 0.0f); /* flipped: nothing faces the scene's sensor */
    ck_assert_float_eq(fitness[3], fitness[0]);
    ck_assert_float_eq(fitness[4], 0.0f);
    grip_verify_icp.destroy(st);
    grip_ctx_free(ctx);
    fixture_free(&f);
}
END_TEST

/* The models come in another order, then fewer of them, then both again: a slot is a position in verify()'s
 * models, so each call gives a fresh stage's verdicts. */
START_TEST(icp_models_reordered_and_dropped)
{
    fixture f;
    fixture_make(&f, SCENE_POINTS, 0.1);
    for (size_t i = 0; i < f.model[1].n; i++) /* model 1 now differs from model 0 in shape */
        f.model[1].xyz[3 * i + 2] *= 1.2f;
    grip_ctx *ctx = grip_test_ctx();
    grip_stage *st = stage_new(ctx, &grip_verify_icp, icp_kv, ICP_KV);
    grip_verdicts *v = verify_on(st, f.model_view, N_MODELS, &f);
    assert_as_fresh(v, verify_fresh(&grip_verify_icp, icp_kv, ICP_KV, f.model_view, N_MODELS, &f), "in order");
    const grip_view swapped[N_MODELS] = {f.model_view[1], f.model_view[0]};
    v = verify_on(st, swapped, N_MODELS, &f);
    assert_as_fresh(v, verify_fresh(&grip_verify_icp, icp_kv, ICP_KV, swapped, N_MODELS, &f), "swapped");
    for (uint32_t i = 0; i < N_HYPOTHESES; i++)
        f.items[i].model_id = 0;
    v = verify_on(st, swapped, 1, &f);
    assert_as_fresh(v, verify_fresh(&grip_verify_icp, icp_kv, ICP_KV, swapped, 1, &f), "model 1 alone");
    ck_assert_uint_eq(((const grip_model_cache *)st->state)->n_slots, 1);
    v = verify_on(st, f.model_view, N_MODELS, &f);
    assert_as_fresh(v, verify_fresh(&grip_verify_icp, icp_kv, ICP_KV, f.model_view, N_MODELS, &f), "both again");
    grip_verify_icp.destroy(st);
    grip_ctx_free(ctx);
    fixture_free(&f);
}
END_TEST

/* A call whose preparation of model 1 fails (its extent too large for the voxel leaf, after model 0 was prepared
 * again) fails naming the key; the stage stays usable: the next calls give a fresh stage's verdicts. */
START_TEST(icp_failed_preparation_leaves_the_stage_usable)
{
    fixture f;
    fixture_make(&f, SCENE_POINTS, 0.1);
    grip_ctx *ctx = grip_test_ctx();
    grip_stage *st = stage_new(ctx, &grip_verify_icp, icp_kv, ICP_KV);
    grip_verdicts *v = verify_on(st, f.model_view, N_MODELS, &f);
    v->release(v);
    float *saved = malloc(f.model[1].n * 3 * sizeof *saved);
    ck_assert_ptr_nonnull(saved);
    memcpy(saved, f.model[1].xyz, f.model[1].n * 3 * sizeof *saved);
    for (size_t i = 0; i < f.model[0].n; i++)
        f.model[0].xyz[3 * i] += 0.0015f;
    for (size_t i = 0; i < 3 * f.model[1].n; i++)
        f.model[1].xyz[i] *= 1e7f; /* 2^62 voxels of 4 mm do not cover it */
    v = NULL;
    ck_assert_int_eq(grip_verify_icp.verify(st, f.model_view, N_MODELS, &f.scene_view, &f.h, &v), GRIP_EINVAL);
    ck_assert_ptr_null(v);
    ck_assert_msg(strstr(grip_ctx_error_text(ctx), "voxel_leaf") != NULL, "%s", grip_ctx_error_text(ctx));
    memcpy(f.model[1].xyz, saved, f.model[1].n * 3 * sizeof *saved);
    v = verify_on(st, f.model_view, N_MODELS, &f);
    assert_as_fresh(v, verify_fresh(&grip_verify_icp, icp_kv, ICP_KV, f.model_view, N_MODELS, &f), "after failure");
    for (size_t i = 0; i < f.model[0].n; i++)
        f.model[0].xyz[3 * i] -= 0.0015f;
    v = verify_on(st, f.model_view, N_MODELS, &f);
    assert_as_fresh(v, verify_fresh(&grip_verify_icp, icp_kv, ICP_KV, f.model_view, N_MODELS, &f), "restored");
    free(saved);
    grip_verify_icp.destroy(st);
    grip_ctx_free(ctx);
    fixture_free(&f);
}
END_TEST

static const grip_kv ghv_kv[] = {{"device", "cpu"}, {"icp_iterations", "5"}};
#define GHV_KV ((uint32_t)(sizeof ghv_kv / sizeof ghv_kv[0]))

/* ghv: the same models reuse their samples; a model changed in place, and a scene of another resolution (so
 * another derived leaf), are sampled again; every call gives a fresh stage's verdicts. */
START_TEST(ghv_samples_cached_while_unchanged)
{
    fixture f, dense;
    fixture_make(&f, SCENE_POINTS, 0.06); /* no scene beyond the models: clutter would reject them all */
    fixture_make(&dense, 4 * SCENE_POINTS, 0.06);
    grip_ctx *ctx = grip_test_ctx();
    grip_stage *st = stage_new(ctx, &grip_verify_ghv, ghv_kv, GHV_KV);
    grip_verdicts *first = verify_on(st, f.model_view, N_MODELS, &f);
    uint32_t accepted = 0;
    for (uint32_t i = 0; i < first->count; i++)
        accepted += first->items[i].accepted;
    ck_assert_uint_ge(accepted, 1); /* GHV picks one of the overlapping hypotheses of the two models */
    const float *kept0 = cached_points(st, 0), *kept1 = cached_points(st, 1);
    grip_verdicts *v = verify_on(st, f.model_view, N_MODELS, &f);
    ck_assert_ptr_eq(cached_points(st, 0), kept0);
    ck_assert_ptr_eq(cached_points(st, 1), kept1);
    assert_as_fresh(v, verify_fresh(&grip_verify_ghv, ghv_kv, GHV_KV, f.model_view, N_MODELS, &f), "same models");
    for (size_t i = 0; i < f.model[0].n; i++)
        f.model[0].xyz[3 * i] += 0.004f;
    v = verify_on(st, f.model_view, N_MODELS, &f);
    ck_assert_ptr_ne(cached_points(st, 0), kept0);
    ck_assert_ptr_eq(cached_points(st, 1), kept1);
    ck_assert_msg(!verdicts_equal(first, v), "moving model 0 changed no verdict: the test checks nothing");
    first->release(first);
    assert_as_fresh(v, verify_fresh(&grip_verify_ghv, ghv_kv, GHV_KV, f.model_view, N_MODELS, &f), "moved");
    /* the same models against the denser scene: a finer derived leaf */
    v = verify_on(st, f.model_view, N_MODELS, &dense);
    ck_assert_ptr_ne(cached_points(st, 1), kept1);
    assert_as_fresh(v, verify_fresh(&grip_verify_ghv, ghv_kv, GHV_KV, f.model_view, N_MODELS, &dense), "dense");
    grip_verify_ghv.destroy(st);
    grip_ctx_free(ctx);
    fixture_free(&f);
    fixture_free(&dense);
}
END_TEST

/* The cache itself: a key equal byte for byte finds the entry; one differing in a byte of any part, or in size,
 * does not; a store replaces the slot; shrinking drops the slots past the new count, growing adds empty ones. */
START_TEST(cache_compares_every_byte)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_model_cache c;
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(grip_model_cache_reserve(ctx, &c, 3), GRIP_OK);
    unsigned char header[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    float points[6] = {1, 2, 3, 4, 5, 6};
    const grip_model_key_part parts[] = {{header, sizeof header}, {points, sizeof points}};
    grip_prepared_model made = {malloc(3 * sizeof(float)), NULL, 1};
    ck_assert_ptr_nonnull(made.xyz);
    const float *xyz = made.xyz;
    const grip_prepared_model *out = NULL;
    ck_assert_ptr_null(grip_model_cache_find(&c, 1, parts, 2));
    ck_assert_int_eq(grip_model_cache_store(ctx, &c, 1, parts, 2, &made, &out), GRIP_OK);
    ck_assert_ptr_null(made.xyz); /* moved into the cache */
    ck_assert_ptr_eq(out->xyz, xyz);
    ck_assert_ptr_eq(grip_model_cache_find(&c, 1, parts, 2), out);
    ck_assert_ptr_null(grip_model_cache_find(&c, 0, parts, 2)); /* another slot */
    points[5] = nextafterf(points[5], 0.0f);
    ck_assert_ptr_null(grip_model_cache_find(&c, 1, parts, 2));
    points[5] = 6;
    header[0] = 0;
    ck_assert_ptr_null(grip_model_cache_find(&c, 1, parts, 2));
    header[0] = 1;
    ck_assert_ptr_null(grip_model_cache_find(&c, 1, parts, 1)); /* a shorter key */
    const grip_model_key_part moved[] = {{header, 4}, {header + 4, 4}, {points, sizeof points}};
    ck_assert_ptr_eq(grip_model_cache_find(&c, 1, moved, 3), out); /* the same bytes, split otherwise */
    ck_assert_int_eq(grip_model_cache_reserve(ctx, &c, 1), GRIP_OK);
    ck_assert_ptr_null(grip_model_cache_find(&c, 1, parts, 2));
    ck_assert_int_eq(grip_model_cache_reserve(ctx, &c, 4), GRIP_OK);
    ck_assert_ptr_null(grip_model_cache_find(&c, 1, parts, 2)); /* dropped by the shrink, empty now */
    ck_assert_ptr_null(c.entries[3].key);
    grip_model_cache_reserve(ctx, &c, 0);
    free(c.entries);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("verify_model_cache");
    TCase *tc = tcase_create("cache");
    tcase_add_test(tc, cache_compares_every_byte);
    tcase_add_test(tc, icp_same_models_reuse_the_cache);
    tcase_add_test(tc, icp_points_changed_in_place);
    tcase_add_test(tc, icp_normals_source_changes);
    tcase_add_test(tc, icp_models_reordered_and_dropped);
    tcase_add_test(tc, icp_failed_preparation_leaves_the_stage_usable);
    tcase_add_test(tc, ghv_samples_cached_while_unchanged);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
