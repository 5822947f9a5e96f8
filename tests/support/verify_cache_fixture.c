/* verify_cache_fixture.c -- see verify_cache_fixture.h. */
#include "verify_cache_fixture.h"
#include "test_support.h"
#include "core/array.h"
#include "stages/stage.h"
#include "stages/verify_model_cache.h"

#include <string.h>

static grip_cloud cloud_of(const grip_icp_cloud *c)
{
    grip_cloud g;
    memset(&g, 0, sizeof g);
    g.struct_size = sizeof g;
    g.xyz = grip_array_host_view(GRIP_F32, c->n, 3, c->xyz);
    g.width = (uint32_t)c->n;
    g.height = 1;
    return g;
}

static void identity(double T[16])
{
    memset(T, 0, 16 * sizeof *T);
    T[0] = T[5] = T[10] = T[15] = 1.0;
}

void fixture_make(fixture *f, size_t scene_points, double scene_extent)
{
    memset(f, 0, sizeof *f);
    uint64_t s = 2305;
    for (int m = 0; m < N_MODELS; m++)
        ck_assert(grip_icp_terrain(&s, MODEL_POINTS, 0.1, 0.06, 0.0, &f->model[m]));
    ck_assert(grip_icp_terrain(&s, scene_points, 0.1, scene_extent, 0.0003, &f->scene));
    double I[16];
    identity(I);
    const double origin[3] = {0, 0, 0};
    grip_icp_perturb(&s, I, origin, 30.0, 0.2, f->truth);
    grip_icp_cloud_transform(&f->scene, f->truth);
    for (int m = 0; m < N_MODELS; m++) {
        f->model_cloud[m] = cloud_of(&f->model[m]);
        f->model_cloud[m].viewpoint[2] = 1.0f; /* above the patch: computed normals point up, as the scene's side */
        f->model_view[m] = (grip_view){sizeof(grip_view), &f->model_cloud[m], NULL};
    }
    f->scene_cloud = cloud_of(&f->scene);
    for (int a = 0; a < 3; a++) /* the scene's sensor: 1 above the patch, where the pose moved it */
        f->scene_cloud.viewpoint[a] = (float)(f->truth[4 * a + 2] + f->truth[4 * a + 3]);
    f->scene_view = (grip_view){sizeof(grip_view), &f->scene_cloud, NULL};
    const double center[3] = {f->truth[3], f->truth[7], f->truth[11]};
    for (uint32_t i = 0; i < N_HYPOTHESES; i++) {
        const int far = i == N_HYPOTHESES - 1;
        double pose[16];
        grip_icp_perturb(&s, f->truth, center, far ? 90.0 : 6.0 * grip_icp_uniform(&s),
                         far ? 0.2 : 0.01 * grip_icp_uniform(&s), pose);
        f->items[i].struct_size = sizeof f->items[i];
        f->items[i].model_id = i % N_MODELS;
        f->items[i].votes = (float)(N_HYPOTHESES - i);
        for (int k = 0; k < 16; k++)
            f->items[i].pose[k] = (float)pose[k];
    }
    f->h = (grip_hypotheses){sizeof f->h, N_HYPOTHESES, sizeof(grip_hypothesis), f->items, NULL};
}

void fixture_free(fixture *f)
{
    for (int m = 0; m < N_MODELS; m++)
        grip_icp_cloud_free(&f->model[m]);
    grip_icp_cloud_free(&f->scene);
}

grip_verdicts *verify_on(grip_stage *st, const grip_view *views, uint32_t n_models, const fixture *f)
{
    grip_verdicts *v = NULL;
    grip_status s = st->impl->verify(st, views, n_models, &f->scene_view, &f->h, &v);
    ck_assert_msg(s == GRIP_OK, "%s", grip_ctx_error_text(st->ctx));
    ck_assert_uint_eq(v->count, f->h.count);
    return v;
}

grip_stage *stage_new(grip_ctx *ctx, const grip_stage_impl *impl, const grip_kv *kv, uint32_t n_kv)
{
    grip_stage *st = NULL;
    ck_assert_msg(impl->create(ctx, kv, n_kv, &st) == GRIP_OK, "%s", grip_ctx_error_text(ctx));
    return st;
}

grip_verdicts *verify_fresh(const grip_stage_impl *impl, const grip_kv *kv, uint32_t n_kv, const grip_view *views,
                            uint32_t n_models, const fixture *f)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_stage *st = stage_new(ctx, impl, kv, n_kv);
    grip_verdicts *v = verify_on(st, views, n_models, f);
    impl->destroy(st);
    grip_ctx_free(ctx);
    return v;
}

int verdicts_equal(const grip_verdicts *a, const grip_verdicts *b)
{
    return a->count == b->count && memcmp(a->items, b->items, a->count * sizeof *a->items) == 0;
}

void assert_as_fresh(grip_verdicts *cached, grip_verdicts *fresh, const char *what)
{
    ck_assert_msg(verdicts_equal(cached, fresh), "%s: the stage's verdicts differ from a fresh stage's", what);
    cached->release(cached);
    fresh->release(fresh);
}

const float *cached_points(const grip_stage *st, uint32_t m)
{
    const grip_model_cache *c = st->state;
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_gt(c->n_slots, m);
    return c->entries[m].model.xyz;
}
