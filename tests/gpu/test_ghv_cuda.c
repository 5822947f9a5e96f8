/* test_ghv_cuda.c -- global hypotheses verification's GPU terms (src/verify/ghv_cuda.h) against the CPU twin
 * (src/verify/ghv.h), bit for bit: the prepared scene (resolution, sampled points), every term of every hypothesis
 * (counts, fixed-point sums, explained and clutter lists with their distances), and so the accepted subset. On the
 * hand-made patch (unorganized and organized), on a random cloud with 10,000 hypotheses (several batches on the
 * device), on PCL's tutorial pair when the shared data is there, and the stage itself on the tutorial, device cuda
 * against cpu. Skips (77) without a usable device. */
#include "ghv_cases.h"
#include "stages/registry.h"
#include "verify/ghv_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TUTORIAL_MODEL "pcl/data_repo/correspondence_grouping/milk.pcd"
#define TUTORIAL_SCENE "pcl/milk_cartoon_all_small_clorox.pcd"

/* Both backends on one input: the same scene, the same terms, the same subset. Returns how many were accepted. */
static size_t check_twins(const float *scene, size_t n, uint32_t width, uint32_t height, const float *model_xyz,
                          size_t n_model, const grip_ghv_hypothesis *hyps, size_t h, const grip_ghv_params *p)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_ghv_scene cpu;
    grip_ghv_scene_cuda *gpu = NULL;
    ck_assert_int_eq(grip_ghv_scene_prepare(ctx, scene, n, width, height, p, &cpu), GRIP_OK);
    ck_assert_msg(grip_ghv_scene_cuda_create(ctx, scene, NULL, NULL, n, width, height, p, &gpu) == GRIP_OK, "%s",
                  grip_ctx_error_text(ctx));
    const grip_ghv_scene *g = grip_ghv_scene_cuda_host(gpu);
    ck_assert_double_eq(g->resolution, cpu.resolution);
    ck_assert_mem_eq(&g->params, &cpu.params, sizeof cpu.params);
    ck_assert_uint_eq(g->n, cpu.n);
    ck_assert_mem_eq(g->rows, cpu.rows, cpu.n * sizeof *cpu.rows);
    ck_assert_mem_eq(g->xyz, cpu.xyz, cpu.n * 3 * sizeof *cpu.xyz);
    ck_assert_int_eq(g->camera.valid, cpu.camera.valid);

    float *sampled;
    size_t n_sampled;
    ck_assert_int_eq(grip_ghv_model_sample(ctx, &cpu, model_xyz, n_model, &sampled, &n_sampled), GRIP_OK);
    grip_ghv_model m = {sampled, n_sampled};
    grip_ghv_terms tc, tg;
    ck_assert_int_eq(grip_ghv_terms_compute(ctx, &cpu, &m, 1, hyps, h, &tc), GRIP_OK);
    ck_assert_msg(grip_ghv_terms_cuda(ctx, gpu, &m, 1, hyps, h, &tg) == GRIP_OK, "%s", grip_ctx_error_text(ctx));
    ck_assert_msg(grip_ghv_terms_equal(&tc, &tg), "GPU terms differ from the CPU twin's");
    uint32_t *ac = malloc(h * sizeof *ac + 1), *ag = malloc(h * sizeof *ag + 1);
    int64_t cc, cg;
    ck_assert_int_eq(grip_ghv_search(ctx, p, &cpu, &tc, ac, &cc), GRIP_OK);
    ck_assert_int_eq(grip_ghv_search(ctx, p, g, &tg, ag, &cg), GRIP_OK);
    ck_assert_int_eq(cc, cg);
    ck_assert_mem_eq(ac, ag, h * sizeof *ac);
    size_t k = 0;
    for (size_t i = 0; i < h; i++)
        k += ac[i];
    fprintf(stderr,
            "ghv twins: %zu scene points, %zu sampled, %zu model points, %zu hypotheses, %zu explained and "
            "%zu clutter entries, %zu accepted\n",
            n, cpu.n, n_sampled, h, (size_t)tc.explained_offsets[h], (size_t)tc.clutter_offsets[h], k);
    free(ac);
    free(ag);
    grip_ghv_terms_free(&tc);
    grip_ghv_terms_free(&tg);
    free(sampled);
    grip_ghv_scene_cuda_free(gpu);
    grip_ghv_scene_free(&cpu);
    grip_ctx_free(ctx);
    return k;
}

/* h hypotheses: every 7th the identity, the others turned and moved at random (some far off). */
static grip_ghv_hypothesis *scattered(size_t h, uint64_t seed, float spread)
{
    grip_ghv_hypothesis *hy = malloc(h * sizeof *hy);
    ck_assert_ptr_nonnull(hy);
    for (size_t i = 0; i < h; i++) {
        float a = grip_test_uniform(&seed, -0.5f, 0.5f), x = grip_test_uniform(&seed, -spread, spread),
              y = grip_test_uniform(&seed, -spread, spread), z = grip_test_uniform(&seed, -spread, spread);
        hy[i] = i % 7 ? ghv_hypothesis(0, a, x, y, z) : ghv_hypothesis(0, 0, 0, 0, 0);
    }
    return hy;
}

START_TEST(patch_unorganized_and_organized)
{
    grip_ghv_params p = ghv_default_params();
    size_t n, n_model;
    float *scene = ghv_scene(&n);
    float *model = ghv_model(scene, n, &n_model);
    grip_ghv_hypothesis *h = scattered(300, 5, 0.05f);
    ck_assert_uint_ge(check_twins(scene, n, (uint32_t)n, 1, model, n_model, h, 300, &p), 1);
    p.search = GRIP_GHV_SEARCH_ANNEALING;
    check_twins(scene, n, (uint32_t)n, 1, model, n_model, h, 300, &p);
    free(model);
    free(scene);

    const uint32_t side = 120;
    scene = ghv_scene_organized(side, 300.0f);
    model = ghv_model(scene, (size_t)side * side, &n_model);
    p = ghv_default_params();
    ck_assert_uint_ge(check_twins(scene, (size_t)side * side, side, side, model, n_model, h, 300, &p), 1);
    free(h);
    free(model);
    free(scene);
}
END_TEST

START_TEST(random_cloud_ten_thousand_hypotheses)
{
    uint64_t seed = 42;
    size_t n = 200000;
    float *scene = grip_test_uniform_rows(&seed, n, 3, -0.2f, 0.2f);
    for (size_t i = 0; i < n; i += 97) /* some missing points */
        scene[3 * i + 1] = NAN;
    size_t n_model = 3000;
    float *model = grip_test_uniform_rows(&seed, n_model, 3, -0.03f, 0.03f);
    for (size_t i = 0; i < 3 * n_model; i += 3)
        model[i + 2] += GHV_DEPTH;
    grip_ghv_params p = ghv_default_params();
    grip_ghv_hypothesis *h = scattered(10000, 9, 0.15f);
    for (size_t i = 0; i < 10000; i++)
        h[i].pose[11] -= GHV_DEPTH; /* the model's centre to the cloud's */
    check_twins(scene, n, (uint32_t)n, 1, model, n_model, h, 10000, &p);
    free(h);
    free(model);
    free(scene);
}
END_TEST

/* PCL's geometric-consistency poses of the tutorial (instances.txt), each also perturbed a few ways. */
static const float tutorial_gc_poses[2][12] = {
    {0.965666711f, -0.114299081f, 0.233288601f, -0.145519063f, -0.11097829f, -0.993446231f, -0.0273564756f,
     -0.21436362f, 0.234886512f, 0.000527267111f, -0.972022653f, 0.0418824442f},
    {0.133581191f, -0.829175949f, -0.542792141f, -0.306372166f, 0.698853195f, -0.309526205f, 0.644823849f, 0.411577016f,
     -0.702680826f, -0.465468347f, 0.538125396f, 1.0687151f}};

START_TEST(tutorial_pair)
{
    host_cloud model = grip_test_read_cloud(TUTORIAL_MODEL), scene = grip_test_read_cloud(TUTORIAL_SCENE);
    size_t h = 60;
    grip_ghv_hypothesis *hy = malloc(h * sizeof *hy);
    uint64_t seed = 3;
    for (size_t i = 0; i < h; i++) {
        hy[i].model = 0;
        memcpy(hy[i].pose, tutorial_gc_poses[i % 2], sizeof hy[i].pose);
        if (i >= 2)
            for (int r = 0; r < 3; r++)
                hy[i].pose[4 * r + 3] += grip_test_uniform(&seed, -0.01f, 0.01f);
    }
    grip_ghv_params p = ghv_default_params();
    size_t k = check_twins(scene.xyz, scene.n, scene.width, scene.height, model.xyz, model.n, hy, h, &p);
    ck_assert_uint_ge(k, 1);
    free(hy);
    host_cloud_free(&model);
    host_cloud_free(&scene);
}
END_TEST

/* The stage, device cuda against cpu, on PCL's two GC poses of the tutorial: the same verdicts. */
static grip_verdicts *stage_verdicts(grip_ctx *ctx, const char *device, const grip_view *model, const grip_view *scene,
                                     const grip_hypotheses *hs)
{
    grip_kv kv[] = {{"device", device}};
    grip_stage *st = NULL;
    ck_assert_int_eq(grip_verify_ghv.create(ctx, kv, 1, &st), GRIP_OK);
    grip_verdicts *v = NULL;
    ck_assert_msg(grip_verify_ghv.verify(st, model, 1, scene, hs, &v) == GRIP_OK, "%s", grip_ctx_error_text(ctx));
    grip_verify_ghv.destroy(st);
    return v;
}

static grip_cloud cloud_of(const host_cloud *c)
{
    grip_cloud g;
    memset(&g, 0, sizeof g);
    g.struct_size = sizeof g;
    g.width = c->width;
    g.height = c->height;
    g.xyz = (grip_array){sizeof(grip_array), GRIP_F32, GRIP_MEM_HOST, -1, c->n, 3, c->xyz};
    return g;
}

START_TEST(stage_cuda_equals_cpu_on_the_tutorial)
{
    host_cloud model = grip_test_read_cloud(TUTORIAL_MODEL), scene = grip_test_read_cloud(TUTORIAL_SCENE);
    grip_cloud mc = cloud_of(&model), sc = cloud_of(&scene);
    grip_view mv = {sizeof mv, &mc, NULL}, sv = {sizeof sv, &sc, NULL};
    grip_hypothesis hy[2];
    memset(hy, 0, sizeof hy);
    for (int i = 0; i < 2; i++) {
        hy[i].struct_size = sizeof hy[i];
        memcpy(hy[i].pose, tutorial_gc_poses[i], 12 * sizeof(float));
        hy[i].pose[15] = 1.0f;
        hy[i].votes = i ? 5.0f : 31.0f;
    }
    grip_hypotheses hs = {sizeof hs, 2, sizeof hy[0], hy, NULL};
    grip_ctx *ctx = grip_test_ctx();
    grip_verdicts *vc = stage_verdicts(ctx, "cpu", &mv, &sv, &hs), *vg = stage_verdicts(ctx, "cuda", &mv, &sv, &hs);
    ck_assert_uint_eq(vg->count, 2);
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(vg->items[i].accepted, vc->items[i].accepted);
        ck_assert_mem_eq(vg->items[i].pose, vc->items[i].pose, sizeof vc->items[i].pose);
        ck_assert_uint_eq(grip_test_float_bits(vg->items[i].fitness), grip_test_float_bits(vc->items[i].fitness));
    }
    ck_assert_uint_eq(vg->items[0].accepted, 1);
    ck_assert_uint_eq(vg->items[1].accepted, 0);
    vc->release(vc);
    vg->release(vg);
    grip_ctx_free(ctx);
    host_cloud_free(&model);
    host_cloud_free(&scene);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ghv_cuda");
    /* two cases, so that a slow tool (racecheck) can run the small one alone: CK_RUN_CASE=twins */
    TCase *tc = tcase_create("twins"), *large = tcase_create("large");
    tcase_set_timeout(tc, 600);
    tcase_set_timeout(large, 600);
    tcase_add_test(tc, patch_unorganized_and_organized);
    tcase_add_test(large, random_cloud_ten_thousand_hypotheses);
    suite_add_tcase(s, large);
    char path[4096];
    if (grip_test_data_path(path, sizeof path, TUTORIAL_SCENE) &&
        grip_test_data_path(path, sizeof path, TUTORIAL_MODEL)) {
        tcase_add_test(tc, tutorial_pair);
        tcase_add_test(tc, stage_cuda_equals_cpu_on_the_tutorial);
    } else {
        fprintf(stderr, "tutorial cases skipped: shared data absent\n");
    }
    suite_add_tcase(s, tc);
    return grip_test_run_gpu(s);
}
