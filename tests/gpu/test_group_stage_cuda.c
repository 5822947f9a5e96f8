/* test_group_stage_cuda.c (gpu) -- the group stages' CUDA backend through the plugin, as a host runs it: PCL's
 * tutorial pair with configs/pcl_tutorial.conf (hough3d; BOARD frames with PCL's ties, computed on the CPU, and with
 * nearest-first ties, computed on the GPU) and pcl_tutorial_gc.conf, once with group.device=cpu and once with
 * group.device=cuda, everything else on the CPU (deterministic descriptors and verification). Both runs must give
 * the same hypotheses: count, correspondences, votes (the bits) and refined poses within 1e-4; and the tutorial's
 * one accepted instance; with three copies of the model, the same hypotheses model by model. Then everything on the
 * GPU (hough3d + icp, gc + ghv), the scene's features once in host memory and once left on the device with the
 * model's: the same hypotheses and verdicts, bit for bit; the scene's points uploaded by neither group nor verify, no
 * descriptor copied back, and the index built from the model's descriptors where they lie. Prints the group stage's
 * time of the runs. Skips (77) without a usable device; passes without checking anything when the data is absent
 * (it says so). */
#include "test_support.h"
#include "pipeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MODEL_REL "pcl/data_repo/correspondence_grouping/milk.pcd"
#define SCENE_REL "pcl/milk_cartoon_all_small_clorox.pcd"
#define SHOT_DIM 352

/* One run of config_name with the sets applied, against n_models copies of the model (each a model of its own);
 * scene_memory, when not -1, overrides where the runner asks for the scene's features (grip_pipeline.scene_memory). */
static void run_models(const char *config_name, const char *const *sets, int scene_memory, const host_cloud *model,
                       uint32_t n_models, const host_cloud *scene, pipeline_result *r)
{
    host_cloud models[3];
    ck_assert_uint_le(n_models, 3);
    for (uint32_t m = 0; m < n_models; ++m)
        models[m] = *model; /* read only: the copies share the points */
    char config[4096];
    snprintf(config, sizeof config, "%s/configs/%s", grip_test_source_dir(), config_name);
    grip_config cfg = {0};
    grip_diag diag = {0};
    grip_pipeline p;
    ck_assert_int_eq(grip_config_load(config, &cfg, &diag), 0);
    for (const char *const *s = sets; *s; ++s)
        ck_assert_int_eq(grip_config_set(&cfg, *s, &diag), 0);
    int opened = pipeline_open(&p, getenv("GRIP_PLUGIN"), &cfg, &diag);
    grip_diag_print(&diag, stderr);
    ck_assert_int_eq(opened, 0);
    if (scene_memory >= 0)
        p.scene_memory = (uint32_t)scene_memory;
    int ran = pipeline_run(&p, models, n_models, NULL, 0, scene, r, &diag);
    grip_diag_print(&diag, stderr);
    ck_assert_int_eq(ran, 0);
    pipeline_close(&p);
    grip_config_free(&cfg);
    grip_diag_free(&diag);
}

static void run(const char *config_name, const char *const *sets, int scene_memory, const host_cloud *model,
                const host_cloud *scene, pipeline_result *r)
{
    run_models(config_name, sets, scene_memory, model, 1, scene, r);
}

static void compare_backends(const char *config_name, const char *frame_ties)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, SCENE_REL) || !grip_test_data_path(path, sizeof path, MODEL_REL)) {
        fprintf(stderr, "the tutorial clouds are absent, nothing checked\n");
        return;
    }
    host_cloud model = grip_test_read_cloud(MODEL_REL), scene = grip_test_read_cloud(SCENE_REL);
    const char *cpu[] = {"descriptor.device=cpu",
                         "index.device=cpu",
                         "match.device=cpu",
                         "verify.device=cpu",
                         "group.device=cpu",
                         frame_ties,
                         NULL};
    const char *gpu[] = {"descriptor.device=cpu",
                         "index.device=cpu",
                         "match.device=cpu",
                         "verify.device=cpu",
                         "group.device=cuda",
                         frame_ties,
                         NULL};
    pipeline_result a, b;
    run(config_name, cpu, -1, &model, &scene, &a);
    run(config_name, gpu, -1, &model, &scene, &b);
    fprintf(stderr,
            "%s %s: %zu hypotheses (cpu) / %zu (cuda), %zu accepted; group stage %.2f ms (cpu), %.2f ms (cuda)\n",
            config_name, frame_ties ? frame_ties : "", a.n_hypotheses, b.n_hypotheses, pipeline_result_accepted(&a),
            a.timings_ms[3], b.timings_ms[3]);
    ck_assert_uint_eq(a.n_hypotheses, b.n_hypotheses);
    for (size_t i = 0; i < a.n_hypotheses; ++i) {
        const pipeline_instance *x = &a.hypotheses[i], *y = &b.hypotheses[i];
        ck_assert_uint_eq(x->model, y->model);
        ck_assert_uint_eq(x->correspondences, y->correspondences);
        /* Votes are interpolation weights of vectors rotated into the frames; with nearest ties the frames come
         * from the GPU, where cosf/sinf may differ from glibc's by 2 ulp (test_board_cuda allows 2e-6), so a bin's
         * sum may differ in its last bits. The members, and so the bins that passed, must be the same. */
        ck_assert_msg(fabs(x->votes - y->votes) <= 1e-5 * fabs(x->votes), "hypothesis %zu: votes %.9g vs %.9g", i,
                      x->votes, y->votes);
        ck_assert_int_eq(x->accepted, y->accepted);
        for (int k = 0; k < 16; ++k)
            ck_assert_double_le(fabs(x->pose[k] - y->pose[k]), 1e-4);
    }
    ck_assert_uint_eq(pipeline_result_accepted(&b), 1);
    pipeline_result_free(&a);
    pipeline_result_free(&b);
    host_cloud_free(&model);
    host_cloud_free(&scene);
}

START_TEST(hough3d_pcl_ties_same_on_both_backends)
{
    compare_backends("pcl_tutorial.conf", "group.frame_ties=pcl");
}
END_TEST

START_TEST(hough3d_nearest_ties_same_on_both_backends)
{
    compare_backends("pcl_tutorial.conf", "group.frame_ties=nearest");
}
END_TEST

START_TEST(gc_same_on_both_backends)
{
    compare_backends("pcl_tutorial_gc.conf", NULL);
}
END_TEST

/* Three models (copies of the tutorial's, each scene keypoint matched to all three: match.k=3): on the GPU the
 * group stage votes for the models at once, each on a worker context of its own (stages/stage_workers.h), then
 * runs their RANSAC in turn. The hypotheses must be the CPU twin's, model by model, as with one model. */
START_TEST(hough3d_three_models_same_on_both_backends)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, SCENE_REL) || !grip_test_data_path(path, sizeof path, MODEL_REL)) {
        fprintf(stderr, "the tutorial clouds are absent, nothing checked\n");
        return;
    }
    host_cloud model = grip_test_read_cloud(MODEL_REL), scene = grip_test_read_cloud(SCENE_REL);
    const char *cpu[] = {"pipeline.device=cpu", "group.frame_ties=nearest", "match.k=3", NULL};
    const char *gpu[] = {"pipeline.device=cpu", "group.device=cuda", "group.frame_ties=nearest", "match.k=3", NULL};
    pipeline_result a, b;
    run_models("pcl_tutorial.conf", cpu, -1, &model, 3, &scene, &a);
    run_models("pcl_tutorial.conf", gpu, -1, &model, 3, &scene, &b);
    fprintf(stderr, "three models: %zu hypotheses (cpu) / %zu (cuda); group stage %.2f ms (cpu), %.2f ms (cuda)\n",
            a.n_hypotheses, b.n_hypotheses, a.timings_ms[3], b.timings_ms[3]);
    ck_assert_uint_eq(a.n_hypotheses, b.n_hypotheses);
    unsigned seen = 0;
    for (size_t i = 0; i < a.n_hypotheses; ++i) {
        const pipeline_instance *x = &a.hypotheses[i], *y = &b.hypotheses[i];
        ck_assert_uint_eq(x->model, y->model);
        seen |= 1u << x->model;
        ck_assert_uint_eq(x->correspondences, y->correspondences);
        ck_assert_msg(fabs(x->votes - y->votes) <= 1e-5 * fabs(x->votes), "hypothesis %zu: votes %.9g vs %.9g", i,
                      x->votes, y->votes); /* as in compare_backends */
        for (int k = 0; k < 16; ++k)
            ck_assert_double_le(fabs(x->pose[k] - y->pose[k]), 1e-4);
    }
    ck_assert_uint_eq(seen, 7u); /* every model voted: the three ran at once */
    pipeline_result_free(&a);
    pipeline_result_free(&b);
    host_cloud_free(&model);
    host_cloud_free(&scene);
}
END_TEST

/* Every stage on the GPU: the scene's features left on the device (the runner's choice there) give the hypotheses
 * and verdicts that the same features in host memory give, bit for bit: the group stage's BOARD frames read the
 * descriptor's normals where they are, and the values are the same. Left on the device, the features also carry the
 * scene's points (grip_features.xyz, ABI 1.3), and the group and verify stages read them there: neither uploads the
 * scene's points again, which each does from host features. */
static void device_features_same_as_host_features(const char *config_name, const char *frame_ties, int frames_on_gpu)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, SCENE_REL) || !grip_test_data_path(path, sizeof path, MODEL_REL)) {
        fprintf(stderr, "the tutorial clouds are absent, nothing checked\n");
        return;
    }
    host_cloud model = grip_test_read_cloud(MODEL_REL), scene = grip_test_read_cloud(SCENE_REL);
    const char *all_gpu[] = {"pipeline.device=cuda", frame_ties, NULL};
    pipeline_result h, d;
    run(config_name, all_gpu, GRIP_MEM_HOST, &model, &scene, &h);
    run(config_name, all_gpu, GRIP_MEM_CUDA, &model, &scene, &d);
    const uint64_t points = (uint64_t)scene.n * 3 * sizeof(float);
    const pipeline_transfer *hg = &h.accounting.stage[3], *hv = &h.accounting.stage[4], *dg = &d.accounting.stage[3],
                            *dv = &d.accounting.stage[4];
    fprintf(stderr,
            "%s: scene features in host memory: %zu hypotheses, group %.2f ms, uploading %llu bytes, verify %.2f ms, "
            "%llu bytes; on the device: %zu, group %.2f ms, %llu bytes, verify %.2f ms, %llu bytes (the scene's "
            "points: %llu bytes)\n",
            config_name, h.n_hypotheses, h.timings_ms[3], (unsigned long long)hg->h2d_bytes, h.timings_ms[4],
            (unsigned long long)hv->h2d_bytes, d.n_hypotheses, d.timings_ms[3], (unsigned long long)dg->h2d_bytes,
            d.timings_ms[4], (unsigned long long)dv->h2d_bytes, (unsigned long long)points);
    ck_assert_int_eq(h.scene_features_on_device, 0);
    ck_assert_int_eq(d.scene_features_on_device, 1);
    ck_assert_int_eq(h.model_features_on_device, 0);
    ck_assert_int_eq(d.model_features_on_device, 1);
    ck_assert_uint_eq(h.correspondences, d.correspondences);
    ck_assert_uint_eq(h.n_hypotheses, d.n_hypotheses);
    for (size_t i = 0; i < h.n_hypotheses; ++i) {
        ck_assert_uint_eq(h.hypotheses[i].correspondences, d.hypotheses[i].correspondences);
        ck_assert_mem_eq(&h.hypotheses[i].votes, &d.hypotheses[i].votes, sizeof h.hypotheses[i].votes);
        ck_assert_mem_eq(h.hypotheses[i].pose, d.hypotheses[i].pose, sizeof h.hypotheses[i].pose);
        ck_assert_int_eq(h.hypotheses[i].accepted, d.hypotheses[i].accepted);
    }
    ck_assert_uint_eq(pipeline_result_accepted(&d), 1);
    ck_assert(h.accounting.available && d.accounting.available);
    /* the model's features held on the device: neither its descriptors nor the scene's come back to the host, and
     * the index builds from the model's where they lie */
    const pipeline_transfer *hd = &h.accounting.stage[0], *dd = &d.accounting.stage[0], *di = &d.accounting.stage[1];
    const uint64_t model_rows = (uint64_t)d.model_keypoints[0] * SHOT_DIM * sizeof(float),
                   scene_rows = (uint64_t)d.scene_keypoints * SHOT_DIM * sizeof(float);
    ck_assert_uint_ge(hd->d2h_bytes, dd->d2h_bytes + model_rows + scene_rows);
    ck_assert_uint_lt(di->h2d_bytes, model_rows);
    if (frames_on_gpu) { /* the GPU's BOARD frames need both clouds' points: on the device, the descriptor's */
        ck_assert_uint_ge(hg->h2d_bytes, points);
        ck_assert_uint_ge(hg->h2d_bytes - dg->h2d_bytes, points + (uint64_t)model.n * 3 * sizeof(float));
    }
    ck_assert_uint_ge(hv->h2d_bytes, points);
    ck_assert_uint_lt(dv->h2d_bytes, points);
    pipeline_result_free(&h);
    pipeline_result_free(&d);
    host_cloud_free(&model);
    host_cloud_free(&scene);
}

START_TEST(hough3d_icp_device_features_same_as_host_features)
{
    device_features_same_as_host_features("pcl_tutorial.conf", "group.frame_ties=nearest", 1);
}
END_TEST

START_TEST(gc_ghv_device_features_same_as_host_features)
{
    device_features_same_as_host_features("pcl_tutorial_ghv.conf", NULL, 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("group_stage_cuda");
    TCase *tc = tcase_create("group_stage_cuda");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, hough3d_pcl_ties_same_on_both_backends);
    tcase_add_test(tc, hough3d_nearest_ties_same_on_both_backends);
    tcase_add_test(tc, gc_same_on_both_backends);
    tcase_add_test(tc, hough3d_three_models_same_on_both_backends);
    tcase_add_test(tc, hough3d_icp_device_features_same_as_host_features);
    tcase_add_test(tc, gc_ghv_device_features_same_as_host_features);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return grip_test_run_gpu(suite());
}
