/* verify_cache_fixture.h -- what the tests of the verify stages' model cache (stages/verify_model_cache.h) share,
 * on either backend (tests/unit/test_verify_model_cache.c, tests/gpu/test_verify_model_cache_cuda.c): two samples of
 * a wavy terrain patch (icp_scene.h) as models, a noisy sample of it moved by a pose as the scene, hypotheses near
 * the pose and one far off; verify() on a stage, the verdicts a fresh stage gives, and which arrays the stage's cache
 * holds. Every function asserts (Check) instead of returning an error. */
#ifndef GRIP_TESTS_VERIFY_CACHE_FIXTURE_H
#define GRIP_TESTS_VERIFY_CACHE_FIXTURE_H

#include "icp_scene.h"
#include "plugin.h"

#define N_MODELS 2
#define N_HYPOTHESES 6
#define MODEL_POINTS 3000
#define SCENE_POINTS 6000

typedef struct fixture {
    grip_icp_cloud model[N_MODELS], scene;
    double truth[16];
    grip_cloud model_cloud[N_MODELS], scene_cloud;
    grip_view model_view[N_MODELS], scene_view;
    grip_hypothesis items[N_HYPOTHESES];
    grip_hypotheses h;
} fixture;

/* The views point at f's own clouds: call after f has its final address. The scene: scene_points over the square
 * of half side scene_extent (the models': 0.06). Free with fixture_free. */
void fixture_make(fixture *f, size_t scene_points, double scene_extent);
void fixture_free(fixture *f);

/* A stage of impl made from kv on ctx (destroyed by the caller). */
grip_stage *stage_new(grip_ctx *ctx, const grip_stage_impl *impl, const grip_kv *kv, uint32_t n_kv);
/* verify() of st on views (n_models of them) and f's scene and hypotheses; must succeed. The caller releases. */
grip_verdicts *verify_on(grip_stage *st, const grip_view *views, uint32_t n_models, const fixture *f);
/* The verdicts a fresh stage of the same settings, on a fresh context, gives. The caller releases. */
grip_verdicts *verify_fresh(const grip_stage_impl *impl, const grip_kv *kv, uint32_t n_kv, const grip_view *views,
                            uint32_t n_models, const fixture *f);
/* 1 when a and b hold the same verdicts, byte for byte. */
int verdicts_equal(const grip_verdicts *a, const grip_verdicts *b);
/* The cached verdicts equal the fresh stage's, byte for byte (what names the call in the failure); both released. */
void assert_as_fresh(grip_verdicts *cached, grip_verdicts *fresh, const char *what);
/* Which points array the stage's cache holds for model slot m (NULL when the slot is empty). */
const float *cached_points(const grip_stage *st, uint32_t m);

#endif
