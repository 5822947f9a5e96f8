/* test_pool_steady.c (gpu) -- the steady state of a recognition run on the GPU: descriptor -> index -> match -> group
 * -> verify with device = cuda (configs/pcl_tutorial_ghv.conf), run twice in one pipeline (one context), through
 * grip-host's runner and the plugin's ctx_stats (ABI 1.2). The first run grows the context's memory pool; the second
 * allocates every block from what the pool keeps, so the pool grows zero times and reserves no more memory. The
 * byte counters are plausible: each run uploads at least the scene's and the model's points, downloads something,
 * and the host's per-stage accounting adds up to the context's counters; the scene's features stay on the device
 * between the stages. On PCL's tutorial pair (when the shared data is there) and on a generated scene. Skips (77)
 * without a usable device. */
#include "test_support.h"
#include "pipeline.h"
#include "synth/synth.h"

#include <stdio.h>
#include <stdlib.h>

#define MODEL_REL "pcl/data_repo/correspondence_grouping/milk.pcd"
#define SCENE_REL "pcl/milk_cartoon_all_small_clorox.pcd"

static grip_ctx_stats stats_now(const grip_pipeline *p)
{
    const grip_plugin *t = &p->plugins[0].table;
    ck_assert_ptr_nonnull(t->ctx_stats);
    grip_ctx_stats s = {.struct_size = sizeof s};
    ck_assert_msg(t->ctx_stats(p->ctxs[0], &s) == GRIP_OK, "ctx_stats: %s", t->ctx_last_error(p->ctxs[0]));
    return s;
}

static uint64_t accounted(const pipeline_accounting *a, int h2d)
{
    uint64_t sum = 0;
    for (int s = 0; s < PIPELINE_STAGES; s++)
        sum += h2d ? a->stage[s].h2d_bytes : a->stage[s].d2h_bytes;
    return sum;
}

/* One run in p; checks the bytes it moved against `floor` (the points it must upload) and returns its stats after. */
static grip_ctx_stats run_once(grip_pipeline *p, const host_cloud *models, uint32_t n_models, const host_cloud *scene,
                               uint64_t floor, const grip_ctx_stats *before, pipeline_result *r)
{
    grip_diag diag = {0};
    int ran = pipeline_run(p, models, n_models, NULL, 0, scene, r, &diag);
    grip_diag_print(&diag, stderr);
    grip_diag_free(&diag);
    ck_assert_int_eq(ran, 0);
    grip_ctx_stats after = stats_now(p);
    const uint64_t h2d = after.h2d_bytes - before->h2d_bytes, d2h = after.d2h_bytes - before->d2h_bytes;
    printf("run: %zu scene keypoints, %zu correspondences, %zu hypotheses; host->device %llu bytes in %llu copies, "
           "device->host %llu bytes in %llu copies (points: %llu bytes); pool grew %llu times, reserves %llu bytes\n",
           r->scene_keypoints, r->correspondences, r->n_hypotheses, (unsigned long long)h2d,
           (unsigned long long)(after.h2d_copies - before->h2d_copies), (unsigned long long)d2h,
           (unsigned long long)(after.d2h_copies - before->d2h_copies), (unsigned long long)floor,
           (unsigned long long)(after.pool_grows - before->pool_grows),
           (unsigned long long)after.pool_reserved_bytes);
    ck_assert_int_ge(after.device, 0);
    ck_assert_uint_ge(h2d, floor);
    ck_assert_uint_gt(d2h, 0);
    ck_assert_uint_gt(after.h2d_copies, before->h2d_copies);
    ck_assert_uint_gt(after.d2h_copies, before->d2h_copies);
    ck_assert_uint_ge(after.pool_reserved_bytes, after.pool_used_bytes);
    ck_assert_uint_ge(after.pool_reserved_high_bytes, after.pool_reserved_bytes);
    /* the host's per-stage accounting reads the same counters */
    ck_assert(r->accounting.available);
    ck_assert_uint_eq(accounted(&r->accounting, 1), h2d);
    ck_assert_uint_eq(accounted(&r->accounting, 0), d2h);
    ck_assert_uint_eq(r->accounting.pool_grows, after.pool_grows - before->pool_grows);
    return after;
}

static void run_twice(const host_cloud *models, uint32_t n_models, const host_cloud *scene)
{
    char config[4096];
    snprintf(config, sizeof config, "%s/configs/pcl_tutorial_ghv.conf", grip_test_source_dir());
    grip_config cfg = {0};
    grip_diag diag = {0};
    grip_pipeline p;
    ck_assert_int_eq(grip_config_load(config, &cfg, &diag), 0);
    ck_assert_int_eq(grip_config_set(&cfg, "pipeline.device=cuda", &diag), 0);
    int opened = pipeline_open(&p, getenv("GRIP_PLUGIN"), &cfg, &diag);
    grip_diag_print(&diag, stderr);
    ck_assert_int_eq(opened, 0);

    uint64_t floor = scene->n * 3 * sizeof(float);
    for (uint32_t m = 0; m < n_models; m++)
        floor += models[m].n * 3 * sizeof(float);
    const grip_ctx_stats fresh = stats_now(&p);

    pipeline_result first, second;
    const grip_ctx_stats after_first = run_once(&p, models, n_models, scene, floor, &fresh, &first);
    ck_assert_uint_gt(after_first.pool_grows, 0); /* the first run filled the pool */
    const grip_ctx_stats after_second = run_once(&p, models, n_models, scene, floor, &after_first, &second);
    /* the steady state: no new device memory */
    ck_assert_uint_eq(after_second.pool_grows, after_first.pool_grows);
    ck_assert_uint_eq(second.accounting.pool_grows, 0);
    ck_assert_uint_le(after_second.pool_reserved_bytes, after_first.pool_reserved_bytes);
    ck_assert_uint_eq(after_second.pool_reserved_high_bytes, after_first.pool_reserved_high_bytes);
    /* one plugin runs every stage on the GPU: the scene's features stay on the device between them */
    ck_assert_int_eq(first.scene_features_on_device, 1);
    ck_assert_int_eq(second.scene_features_on_device, 1);
    /* the same work both times */
    ck_assert_uint_eq(second.scene_keypoints, first.scene_keypoints);
    ck_assert_uint_eq(second.model_keypoints[0], first.model_keypoints[0]);

    pipeline_result_free(&first);
    pipeline_result_free(&second);
    pipeline_close(&p);
    grip_diag_free(&diag);
    grip_config_free(&cfg);
}

START_TEST(tutorial_second_run_allocates_nothing)
{
    host_cloud model = grip_test_read_cloud(MODEL_REL), scene = grip_test_read_cloud(SCENE_REL);
    run_twice(&model, 1, &scene);
    host_cloud_free(&model);
    host_cloud_free(&scene);
}
END_TEST

START_TEST(generated_scene_second_run_allocates_nothing)
{
    synth_params sp;
    synth_params_default(&sp);
    sp.n_objects = 2;
    synth_scene s;
    char err[256] = "";
    ck_assert_msg(synth_generate(&sp, &s, err, sizeof err) == 0, "%s", err);
    run_twice(s.models, s.n_models, &s.scene);
    synth_scene_free(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pool_steady");
    grip_test_add_case(s, "generated", generated_scene_second_run_allocates_nothing);
    char path[4096];
    if (grip_test_data_path(path, sizeof path, MODEL_REL) && grip_test_data_path(path, sizeof path, SCENE_REL))
        grip_test_add_case(s, "tutorial", tutorial_second_run_allocates_nothing);
    else
        fprintf(stderr, "tutorial case skipped: shared data absent\n");
    return grip_test_run_gpu(s);
}
