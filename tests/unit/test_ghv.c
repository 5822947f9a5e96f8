/* test_ghv.c -- global hypotheses verification's CPU twin (src/verify/ghv.h) on small hand-made clouds: a wavy
 * surface patch before a background plane as the scene, the patch as the model (tests/support/ghv_cases.h). The derived lengths; the
 * terms of the true pose and of a pose in empty space; of two overlapping hypotheses the better is kept; a duplicate
 * is not; visibility in an organized scene (a model hidden behind the surface, one floating in front of it); a
 * seeded annealing; no hypotheses; 10,000 hypotheses; and the stage itself through the ABI. */
#include "ghv_cases.h"
#include "stages/registry.h"
#include "stages/results.h"
#include "spatial/resolution.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    grip_ctx *ctx;
    float *scene_xyz, *model_xyz, *sampled;
    size_t n_scene, n_model, n_sampled;
    grip_ghv_scene scene;
    grip_ghv_model model;
} fixture;

static void fixture_open(fixture *f, const grip_ghv_params *p)
{
    memset(f, 0, sizeof *f);
    f->ctx = grip_test_ctx();
    f->scene_xyz = ghv_scene(&f->n_scene);
    f->model_xyz = ghv_model(f->scene_xyz, f->n_scene, &f->n_model);
    ck_assert_int_eq(grip_ghv_scene_prepare(f->ctx, f->scene_xyz, f->n_scene, (uint32_t)f->n_scene, 1, p, &f->scene),
                     GRIP_OK);
    ck_assert_int_eq(grip_ghv_model_sample(f->ctx, &f->scene, f->model_xyz, f->n_model, &f->sampled, &f->n_sampled),
                     GRIP_OK);
    f->model = (grip_ghv_model){f->sampled, f->n_sampled};
}

static void fixture_close(fixture *f)
{
    grip_ghv_scene_free(&f->scene);
    free(f->scene_xyz);
    free(f->model_xyz);
    free(f->sampled);
    grip_ctx_free(f->ctx);
}

/* terms and search of the hypotheses; accepted (caller's, h entries) */
static int64_t verify(fixture *f, const grip_ghv_params *p, const grip_ghv_hypothesis *hyps, size_t h,
                      uint32_t *accepted, grip_ghv_terms *terms_out)
{
    grip_ghv_terms t;
    ck_assert_int_eq(grip_ghv_terms_compute(f->ctx, &f->scene, &f->model, 1, hyps, h, &t), GRIP_OK);
    int64_t cost = 0;
    ck_assert_int_eq(grip_ghv_search(f->ctx, p, &f->scene, &t, accepted, &cost), GRIP_OK);
    if (terms_out)
        *terms_out = t;
    else
        grip_ghv_terms_free(&t);
    return cost;
}

START_TEST(derived_lengths_follow_the_resolution)
{
    grip_ghv_params p = ghv_default_params();
    fixture f;
    fixture_open(&f, &p);
    /* grid neighbours are 4 mm apart in x and y, a little more along the slopes */
    ck_assert_double_ge(f.scene.resolution, 0.004);
    ck_assert_double_le(f.scene.resolution, 0.0046);
    ck_assert_double_eq(f.scene.params.leaf, GRIP_GHV_LEAF_PER_RES * f.scene.resolution);
    ck_assert_double_eq(f.scene.params.inlier_threshold, GRIP_GHV_INLIER_PER_RES * f.scene.resolution);
    ck_assert_double_eq(f.scene.params.clutter_radius, GRIP_GHV_CLUTTER_PER_RES * f.scene.resolution);
    /* sampled at about 3 grid steps: roughly one point in 9 */
    ck_assert_uint_lt(f.scene.n, f.n_scene / 5);
    ck_assert_uint_gt(f.scene.n, f.n_scene / 20);
    ck_assert_uint_gt(f.n_sampled, 50);
    fixture_close(&f);

    /* a length given is kept; the same scene in millimetres derives the same lengths in millimetres */
    p.inlier_threshold = 0.01;
    fixture_open(&f, &p);
    ck_assert_double_eq(f.scene.params.inlier_threshold, 0.01);
    double r_m = f.scene.resolution;
    fixture_close(&f);
    p.inlier_threshold = 0;
    fixture_open(&f, &p);
    for (size_t i = 0; i < 3 * f.n_scene; i++)
        f.scene_xyz[i] *= 1000.0f;
    grip_ghv_scene mm;
    ck_assert_int_eq(grip_ghv_scene_prepare(f.ctx, f.scene_xyz, f.n_scene, (uint32_t)f.n_scene, 1, &p, &mm), GRIP_OK);
    ck_assert_double_eq_tol(mm.resolution, 1000.0 * r_m, 1e-3 * mm.resolution);
    ck_assert_uint_eq(mm.n, f.scene.n);
    grip_ghv_scene_free(&mm);
    fixture_close(&f);
}
END_TEST

START_TEST(terms_of_the_true_pose_and_of_empty_space)
{
    grip_ghv_params p = ghv_default_params();
    fixture f;
    fixture_open(&f, &p);
    grip_ghv_hypothesis h[2] = {ghv_hypothesis(0, 0, 0, 0, 0), ghv_hypothesis(0, 0, 10, 10, 10)};
    uint32_t accepted[2];
    grip_ghv_terms t;
    verify(&f, &p, h, 2, accepted, &t);
    /* the true pose: every model point visible (unorganized scene) and supported, its points explained, clutter
     * beside it (the strip) */
    ck_assert_uint_eq(t.visible[0], f.n_sampled);
    ck_assert_uint_eq(t.outliers[0], 0);
    uint64_t ne = t.explained_offsets[1] - t.explained_offsets[0], nc = t.clutter_offsets[1] - t.clutter_offsets[0];
    ck_assert_uint_ge(ne, f.n_sampled / 2);
    ck_assert_uint_gt(nc, 0);
    for (uint64_t e = t.explained_offsets[0]; e < t.explained_offsets[1]; e++) {
        ck_assert_float_le(t.explained_sqdist[e], f.scene.inlier2);
        if (e > t.explained_offsets[0])
            ck_assert_uint_lt(t.explained_ids[e - 1], t.explained_ids[e]);
    }
    for (uint64_t c = t.clutter_offsets[0]; c < t.clutter_offsets[1]; c++) {
        ck_assert_float_lt(t.clutter_sqdist[c], f.scene.clutter2);
        for (uint64_t e = t.explained_offsets[0]; e < t.explained_offsets[1]; e++)
            ck_assert_uint_ne(t.clutter_ids[c], t.explained_ids[e]);
    }
    /* empty space: all outliers, nothing explained, no clutter */
    ck_assert_uint_eq(t.visible[1], f.n_sampled);
    ck_assert_uint_eq(t.outliers[1], f.n_sampled);
    ck_assert_uint_eq(t.explained_offsets[2], t.explained_offsets[1]);
    ck_assert_uint_eq(t.clutter_offsets[2], t.clutter_offsets[1]);
    ck_assert_uint_eq(accepted[0], 1);
    ck_assert_uint_eq(accepted[1], 0);
    grip_ghv_terms_free(&t);

    /* alone, the hypothesis in empty space is rejected: the empty set costs 0 */
    ck_assert_int_eq(verify(&f, &p, &h[1], 1, accepted, NULL), 0);
    ck_assert_uint_eq(accepted[0], 0);
    fixture_close(&f);
}
END_TEST

START_TEST(the_better_of_two_overlapping_hypotheses_wins)
{
    grip_ghv_params p = ghv_default_params();
    fixture f;
    fixture_open(&f, &p);
    /* shifted by 1.2 cm (a fifth of the surface's wavelength) or turned by 10 degrees: overlapping the truth */
    grip_ghv_hypothesis truth = ghv_hypothesis(0, 0, 0, 0, 0);
    grip_ghv_hypothesis wrong[2] = {ghv_hypothesis(0, 0, 0.012f, 0, 0), ghv_hypothesis(0, 0.1745f, 0, 0, 0)};
    for (int w = 0; w < 2; w++) {
        grip_ghv_hypothesis h[2] = {wrong[w], truth};
        uint32_t accepted[2];
        verify(&f, &p, h, 2, accepted, NULL);
        ck_assert_msg(accepted[0] == 0 && accepted[1] == 1, "wrong %d: accepted %u %u", w, accepted[0], accepted[1]);
        h[0] = truth;
        h[1] = wrong[w];
        verify(&f, &p, h, 2, accepted, NULL);
        ck_assert_msg(accepted[0] == 1 && accepted[1] == 0, "wrong %d first: accepted %u %u", w, accepted[0],
                      accepted[1]);
    }
    /* the same pose twice explains nothing new: one of them, the first, is kept */
    grip_ghv_hypothesis twice[2] = {truth, truth};
    uint32_t accepted[2];
    verify(&f, &p, twice, 2, accepted, NULL);
    ck_assert_uint_eq(accepted[0], 1);
    ck_assert_uint_eq(accepted[1], 0);
    fixture_close(&f);
}
END_TEST

START_TEST(visibility_in_an_organized_scene)
{
    grip_ctx *ctx = grip_test_ctx();
    const uint32_t side = 120;
    float *scene_xyz = ghv_scene_organized(side, 300.0f);
    size_t n = (size_t)side * side, n_model;
    float *model_xyz = ghv_model(scene_xyz, n, &n_model);
    grip_ghv_params p = ghv_default_params();
    grip_ghv_scene s;
    ck_assert_int_eq(grip_ghv_scene_prepare(ctx, scene_xyz, n, side, side, &p, &s), GRIP_OK);
    ck_assert_int_eq(s.camera.valid, 1);
    float *sampled;
    size_t n_sampled;
    ck_assert_int_eq(grip_ghv_model_sample(ctx, &s, model_xyz, n_model, &sampled, &n_sampled), GRIP_OK);
    grip_ghv_model m = {sampled, n_sampled};
    /* in place; 5 cm behind the surface (hidden: no outliers, nothing explained); 5 cm in front (floating) */
    grip_ghv_hypothesis h[3] = {ghv_hypothesis(0, 0, 0, 0, 0), ghv_hypothesis(0, 0, 0, 0, 0.05f),
                                ghv_hypothesis(0, 0, 0, 0, -0.05f)};
    grip_ghv_terms t;
    ck_assert_int_eq(grip_ghv_terms_compute(ctx, &s, &m, 1, h, 3, &t), GRIP_OK);
    ck_assert_uint_ge(t.visible[0], n_sampled * 9 / 10);
    ck_assert_uint_le(t.outliers[0], t.visible[0] / 20);
    ck_assert_uint_eq(t.visible[1], 0);
    ck_assert_uint_eq(t.explained_offsets[2], t.explained_offsets[1]);
    ck_assert_uint_ge(t.visible[2], n_sampled * 9 / 10);
    ck_assert_uint_eq(t.outliers[2], t.visible[2]);
    uint32_t accepted[3];
    ck_assert_int_eq(grip_ghv_search(ctx, &p, &s, &t, accepted, NULL), GRIP_OK);
    ck_assert_uint_eq(accepted[0], 1);
    ck_assert_uint_eq(accepted[1], 0);
    ck_assert_uint_eq(accepted[2], 0);
    grip_ghv_terms_free(&t);
    grip_ghv_scene_free(&s);
    free(sampled);
    free(model_xyz);
    free(scene_xyz);
    grip_ctx_free(ctx);
}
END_TEST

/* Hypotheses around the truth and elsewhere, seeded. */
static grip_ghv_hypothesis *scattered(size_t h, uint64_t seed)
{
    grip_ghv_hypothesis *hy = malloc(h * sizeof *hy);
    ck_assert_ptr_nonnull(hy);
    for (size_t i = 0; i < h; i++) {
        float a = grip_test_uniform(&seed, -0.3f, 0.3f), x = grip_test_uniform(&seed, -0.05f, 0.05f),
              y = grip_test_uniform(&seed, -0.05f, 0.05f), z = grip_test_uniform(&seed, -0.01f, 0.01f);
        hy[i] = ghv_hypothesis(0, i % 7 ? a : 0, i % 7 ? x : 0, i % 7 ? y : 0, i % 7 ? z : 0);
    }
    return hy;
}

START_TEST(annealing_is_seeded)
{
    grip_ghv_params p = ghv_default_params();
    p.search = GRIP_GHV_SEARCH_ANNEALING;
    p.seed = 7;
    fixture f;
    fixture_open(&f, &p);
    grip_ghv_hypothesis *h = scattered(40, 3);
    uint32_t a[40], b[40], local[40];
    int64_t ca = verify(&f, &p, h, 40, a, NULL), cb = verify(&f, &p, h, 40, b, NULL);
    ck_assert_int_eq(ca, cb);
    ck_assert_mem_eq(a, b, sizeof a);
    /* annealing ends with local search from the best set it saw: it does no worse than the plain search here */
    p.search = GRIP_GHV_SEARCH_LOCAL;
    int64_t cl = verify(&f, &p, h, 40, local, NULL);
    ck_assert_int_le(ca, cl);
    /* the accepted set's cost is what the search reports: recompute it with the accepted ones only */
    size_t k = 0;
    grip_ghv_hypothesis kept[40];
    for (size_t i = 0; i < 40; i++)
        if (local[i])
            kept[k++] = h[i];
    ck_assert_uint_gt(k, 0);
    uint32_t again[40];
    ck_assert_int_eq(verify(&f, &p, kept, k, again, NULL), cl);
    free(h);
    fixture_close(&f);
}
END_TEST

START_TEST(no_hypotheses_and_ten_thousand)
{
    grip_ghv_params p = ghv_default_params();
    fixture f;
    fixture_open(&f, &p);
    uint32_t none[1];
    ck_assert_int_eq(verify(&f, &p, NULL, 0, none, NULL), 0);
    size_t h = 10000;
    grip_ghv_hypothesis *hy = scattered(h, 11);
    uint32_t *accepted = malloc(h * sizeof *accepted);
    int64_t cost = verify(&f, &p, hy, h, accepted, NULL);
    size_t k = 0;
    for (size_t i = 0; i < h; i++)
        k += accepted[i];
    /* about one in 7 is the truth itself, duplicates of one another: a handful of poses explain the patch */
    ck_assert_uint_ge(k, 1);
    ck_assert_uint_le(k, 10);
    ck_assert_int_lt(cost, 0);
    free(accepted);
    free(hy);
    fixture_close(&f);
}
END_TEST

START_TEST(bad_parameters_refused)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_ghv_params p = ghv_default_params();
    p.regularizer = -1;
    ck_assert_int_eq(grip_ghv_params_check(ctx, &p), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(grip_ctx_error_text(ctx), "verify.regularizer"));
    p = ghv_default_params();
    p.clutter_radius = NAN;
    ck_assert_int_eq(grip_ghv_params_check(ctx, &p), GRIP_ECONFIG);
    p = ghv_default_params();
    p.search = 9;
    ck_assert_int_eq(grip_ghv_params_check(ctx, &p), GRIP_ECONFIG);
    /* a scene of one point has no resolution: the lengths must be given */
    float one[3] = {0, 0, 1};
    grip_ghv_scene s;
    p = ghv_default_params();
    ck_assert_int_eq(grip_ghv_scene_prepare(ctx, one, 1, 1, 1, &p, &s), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(grip_ctx_error_text(ctx), "verify.leaf"));
    p.leaf = p.inlier_threshold = p.clutter_radius = p.occlusion_threshold = 0.01;
    ck_assert_int_eq(grip_ghv_scene_prepare(ctx, one, 1, 1, 1, &p, &s), GRIP_OK);
    ck_assert_uint_eq(s.n, 1);
    grip_ghv_scene_free(&s);
    grip_ctx_free(ctx);
}
END_TEST

/* The stage through its grip_stage_impl: no hypotheses, and a hypothesis far from every scene point. */
START_TEST(stage_verdicts)
{
    grip_ctx *ctx = grip_test_ctx();
    size_t n;
    float *xyz = ghv_scene(&n);
    grip_array a = {sizeof(grip_array), GRIP_F32, GRIP_MEM_HOST, -1, n, 3, xyz};
    grip_cloud cloud;
    memset(&cloud, 0, sizeof cloud);
    cloud.struct_size = sizeof cloud;
    cloud.xyz = a;
    cloud.width = (uint32_t)n;
    cloud.height = 1;
    grip_view view = {sizeof view, &cloud, NULL};
    grip_kv kv[] = {{"device", "cpu"}};
    grip_stage *st = NULL;
    ck_assert_int_eq(grip_verify_ghv.create(ctx, kv, 1, &st), GRIP_OK);
    grip_hypothesis hy[2];
    memset(hy, 0, sizeof hy);
    for (int i = 0; i < 2; i++) {
        hy[i].struct_size = sizeof hy[i];
        for (int k = 0; k < 4; k++)
            hy[i].pose[5 * k] = 1.0f;
        hy[i].votes = (float)(10 - i);
    }
    hy[1].pose[3] = 5.0f; /* 5 m away along x */
    grip_hypotheses hs = {sizeof hs, 0, sizeof hy[0], hy, NULL};
    grip_verdicts *v = NULL;
    ck_assert_int_eq(grip_verify_ghv.verify(st, &view, 1, &view, &hs, &v), GRIP_OK);
    ck_assert_uint_eq(v->count, 0);
    v->release(v);
    hs.count = 2;
    ck_assert_msg(grip_verify_ghv.verify(st, &view, 1, &view, &hs, &v) == GRIP_OK, "%s", grip_ctx_error_text(ctx));
    ck_assert_uint_eq(v->count, 2);
    ck_assert_uint_eq(v->items[0].accepted, 1);
    ck_assert_uint_eq(v->items[1].accepted, 0);
    ck_assert_float_eq(v->items[1].fitness, 0.0f);
    ck_assert_uint_eq(v->items[0].reason, GRIP_VERDICT_ACCEPTED);
    ck_assert_uint_eq(v->items[1].reason, GRIP_VERDICT_GHV); /* verified, but left out of the subset */
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 16; k++)
            ck_assert(isfinite(v->items[i].pose[k]));
    v->release(v);
    grip_verify_ghv.destroy(st);
    /* capped to the one with the most votes: the other is not verified, and says so */
    grip_kv capped[] = {{"device", "cpu"}, {"max_hypotheses", "1"}};
    ck_assert_int_eq(grip_verify_ghv.create(ctx, capped, 2, &st), GRIP_OK);
    ck_assert_int_eq(grip_verify_ghv.verify(st, &view, 1, &view, &hs, &v), GRIP_OK);
    ck_assert_uint_eq(v->items[0].reason, GRIP_VERDICT_ACCEPTED);
    ck_assert_uint_eq(v->items[1].accepted, 0);
    ck_assert_uint_eq(v->items[1].reason, GRIP_VERDICT_CAP);
    ck_assert_uint_eq(v->items[1].iterations, 0);
    v->release(v);
    grip_verify_ghv.destroy(st);
    free(xyz);
    grip_ctx_free(ctx);
}
END_TEST

/* The resolution's sum runs in fixed blocks of rows: any thread count gives the same bits (the GPU scene sums the
 * device's lists with it, the CPU twin its own), with infinite rows skipped and fewer rows than blocks. */
START_TEST(mean_spacing_is_the_same_on_any_thread_count)
{
    uint64_t seed = 5;
    const size_t rows[] = {100003, 17};
    for (int r = 0; r < 2; r++) {
        float *d2 = grip_test_uniform_rows(&seed, rows[r], 2, 0.0f, 1e-4f);
        for (size_t i = 3; i < rows[r]; i += 10)
            d2[2 * i + 1] = INFINITY;
        double one = grip_mean_spacing(d2, rows[r], 2, 1), three = grip_mean_spacing(d2, rows[r], 2, 3),
               many = grip_mean_spacing(d2, rows[r], 2, 16);
        ck_assert_mem_eq(&one, &three, sizeof one);
        ck_assert_mem_eq(&one, &many, sizeof one);
        ck_assert_double_gt(one, 0.0);
        ck_assert_double_lt(one, 0.01);
        free(d2);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ghv");
    TCase *tc = tcase_create("ghv");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, derived_lengths_follow_the_resolution);
    tcase_add_test(tc, mean_spacing_is_the_same_on_any_thread_count);
    tcase_add_test(tc, terms_of_the_true_pose_and_of_empty_space);
    tcase_add_test(tc, the_better_of_two_overlapping_hypotheses_wins);
    tcase_add_test(tc, visibility_in_an_organized_scene);
    tcase_add_test(tc, annealing_is_seeded);
    tcase_add_test(tc, no_hypotheses_and_ten_thousand);
    tcase_add_test(tc, bad_parameters_refused);
    tcase_add_test(tc, stage_verdicts);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
