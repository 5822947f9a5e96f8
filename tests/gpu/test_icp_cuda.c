/* test_icp_cuda.c (gpu) -- the batched GPU ICP (grip_icp_cuda_refine) against its CPU twin grip_icp_refine_scene,
 * hypothesis by hypothesis: the same iterations, stop reason, scored points and accepted flag, inliers within one,
 * poses within 1e-4. A hypothesis whose CPU result moves by more than 1e-6 when its start moves by one ulp is
 * chaotic under rounding (a far start wandering over the terrain: seen to move 0.013 for one ulp), and no two
 * summation orders could agree on it: it is checked for a finite pose only, and such hypotheses must be few.
 * On a synthetic terrain (random samples, noise) with hypotheses near and far, point-to-point and point-to-plane,
 * with and without the distance schedule and visible fitness, two models of which one is empty;
 * on PCL's tutorial pair from PCL's Hough pose, perturbed, when the shared data is there. Bad input: a scene with no
 * point near the model, hypotheses that diverge, NaN rows, 10,000 hypotheses, bad arguments, and the context still
 * usable after each failure. The verify stage itself with device = cuda against device = cpu: the same verdicts. A
 * run repeats bit for bit, also with its scene built on a surface made first (a descriptor stage's kept surface,
 * whose box the tree takes) and with more iterations queued before the host first looks at the active count.
 * Skips (77) without a usable device. */
#include "test_support.h"
#include "icp_scene.h"
#include "descriptor/normals.h"
#include "spatial/kdtree3d.h"
#include "verify/icp.h"
#include "verify/icp_cuda.h"
#include "verify/icp_math.h"
#include "stages/registry.h"
#include "stages/stage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POSE_TOLERANCE 1e-4

/* A scene and the models of one comparison (host arrays the test owns). */
typedef struct icp_case {
    const float *scene_xyz, *scene_normals;
    size_t n_scene;
    double viewpoint[3];
    const float *model_xyz[2], *model_normals[2];
    size_t n_model[2];
    uint32_t n_models;
} icp_case;

static grip_icp_params base_params(uint32_t metric)
{
    grip_icp_params p;
    memset(&p, 0, sizeof p);
    p.max_iterations = 30;
    p.max_correspondence_distance = 0.02;
    p.transformation_epsilon = 1e-10;
    p.inlier_distance = 0.002;
    p.min_fitness = 0.5;
    p.max_rmse = 0.0015;
    p.metric = metric;
    return p;
}

static double pose_difference(const double a[16], const double b[16])
{
    double d = 0.0;
    for (int k = 0; k < 16; ++k)
        d = fmax(d, fabs(a[k] - b[k]));
    return d;
}

/* The CPU twin on every `every`-th hypothesis; stable[h] = its result stays within 1e-6 when the start's x
 * translation moves by one ulp. */
static void cpu_all(grip_ctx *ctx, const grip_icp_params *p, const icp_case *c, const uint32_t *model,
                    const double *poses, uint32_t n, uint32_t every, grip_icp_result *out, uint8_t *stable)
{
    grip_kdtree3d *tree = grip_test_kdtree(ctx, c->scene_xyz, c->n_scene);
    const grip_icp_scene sc = {
        tree, c->scene_xyz, c->scene_normals, 3, {c->viewpoint[0], c->viewpoint[1], c->viewpoint[2]}};
    for (uint32_t h = 0; h < n; h += every) {
        const uint32_t m = model[h];
        const grip_icp_model md = {c->model_xyz[m], c->n_model[m], c->model_normals[m], 3};
        grip_status st = grip_icp_refine_scene(ctx, p, &md, &sc, poses + 16 * (size_t)h, &out[h]);
        ck_assert_msg(st == GRIP_OK, "cpu hypothesis %u: %s", h, ctx->last_error);
        double nudged[16];
        grip_icp_result r;
        memcpy(nudged, poses + 16 * (size_t)h, sizeof nudged);
        nudged[3] = nextafter(nudged[3], INFINITY);
        ck_assert_int_eq(grip_icp_refine_scene(ctx, p, &md, &sc, nudged, &r), GRIP_OK);
        stable[h] = pose_difference(r.pose, out[h].pose) <= 1e-6;
    }
    grip_kdtree3d_free(tree);
}

/* The GPU batch of the case: the models' ICP points as the CPU twin takes them (grip_icp_model_points). The scene
 * is built from its host points, or on_surface on a surface of them made first (as a descriptor stage leaves one:
 * the tree then takes the surface's measured box, and its build is queued without a wait). */
static grip_status gpu_all(grip_ctx *ctx, const grip_icp_params *p, const icp_case *c, const uint32_t *model,
                           const double *poses, uint32_t n, int on_surface, uint32_t queued, grip_icp_result *out)
{
    float *xyz[2] = {NULL, NULL}, *nrm[2] = {NULL, NULL};
    size_t count[2] = {0, 0}, first[3] = {0, 0, 0};
    for (uint32_t m = 0; m < c->n_models; ++m) {
        const grip_icp_model md = {c->model_xyz[m], c->n_model[m], c->model_normals[m], 3};
        ck_assert_int_eq(grip_icp_model_points(ctx, p->voxel_leaf, &md, &xyz[m], &nrm[m], &count[m]), GRIP_OK);
        first[m + 1] = first[m] + count[m];
    }
    const size_t total = first[c->n_models];
    float *all = malloc((total + 1) * 3 * sizeof *all), *all_n = malloc((total + 1) * 3 * sizeof *all_n);
    ck_assert_ptr_nonnull(all);
    ck_assert_ptr_nonnull(all_n);
    int normals = 1;
    for (uint32_t m = 0; m < c->n_models; ++m) {
        memcpy(all + 3 * first[m], xyz[m], count[m] * 3 * sizeof *all);
        if (nrm[m])
            memcpy(all_n + 3 * first[m], nrm[m], count[m] * 3 * sizeof *all_n);
        normals = normals && c->model_normals[m];
        free(xyz[m]);
        free(nrm[m]);
    }
    grip_icp_cuda_scene *dev = NULL;
    grip_surface_cuda *surface = NULL;
    grip_status st = on_surface ? grip_surface_cuda_create(ctx, c->scene_xyz, c->n_scene, &surface) : GRIP_OK;
    if (st == GRIP_OK)
        st = grip_icp_cuda_scene_build(ctx, c->scene_xyz, NULL, surface, c->n_scene, c->scene_normals, 3,
                                       c->viewpoint, &dev);
    if (st == GRIP_OK) {
        const grip_icp_batch b = {all, normals ? all_n : NULL, first, c->n_models, n, model, poses};
        grip_icp_cuda_run *run = NULL; /* queued 0: the one call; else started with that many queued, then finished */
        st = queued == 0 ? grip_icp_cuda_refine(ctx, p, dev, &b, out)
                         : grip_icp_cuda_refine_start(ctx, p, dev, &b, queued, &run);
        if (st == GRIP_OK && queued > 0)
            st = grip_icp_cuda_refine_finish(ctx, run, out);
    }
    grip_icp_cuda_scene_free(dev);
    grip_surface_cuda_free(surface);
    free(all);
    free(all_n);
    return st;
}

/* Compares every `every`-th hypothesis; returns the number accepted. */
static uint32_t compare(const grip_icp_result *cpu, const grip_icp_result *gpu, const uint8_t *stable, uint32_t n,
                        uint32_t every, const char *what)
{
    uint32_t accepted = 0, chaotic = 0, compared = 0;
    double worst = 0.0;
    for (uint32_t h = 0; h < n; h += every) {
        const grip_icp_result *a = &cpu[h], *b = &gpu[h];
        ck_assert_msg(grip_icp_pose_finite(b->pose), "%s: hypothesis %u: GPU pose not finite", what, h);
        ++compared;
        if (!stable[h]) {
            ++chaotic;
            continue;
        }
        worst = fmax(worst, pose_difference(a->pose, b->pose));
        ck_assert_msg(a->iterations == b->iterations && a->stop == b->stop,
                      "%s: hypothesis %u: cpu %u iterations (stop %u), gpu %u (stop %u)", what, h, a->iterations,
                      a->stop, b->iterations, b->stop);
        ck_assert_msg(pose_difference(a->pose, b->pose) <= POSE_TOLERANCE, "%s: hypothesis %u: poses differ by %g",
                      what, h, pose_difference(a->pose, b->pose));
        ck_assert_msg(a->n_points == b->n_points, "%s: hypothesis %u: scored %zu vs %zu", what, h, a->n_points,
                      b->n_points);
        const size_t di = a->n_inliers > b->n_inliers ? a->n_inliers - b->n_inliers : b->n_inliers - a->n_inliers;
        ck_assert_msg(di <= 1, "%s: hypothesis %u: inliers %zu vs %zu", what, h, a->n_inliers, b->n_inliers);
        ck_assert_msg(a->accepted == b->accepted, "%s: hypothesis %u: accepted %u vs %u (fitness %g/%g rmse %g/%g)",
                      what, h, a->accepted, b->accepted, a->fitness, b->fitness, a->rmse, b->rmse);
        if (isfinite(a->rmse))
            ck_assert_double_eq_tol(a->rmse, b->rmse, 1e-6);
        accepted += a->accepted;
    }
    ck_assert_msg(chaotic * 10 <= compared, "%s: %u of %u hypotheses chaotic under rounding", what, chaotic, compared);
    fprintf(stderr, "%s: %u hypotheses compared, %u chaotic under rounding, largest pose difference %.3g\n", what,
            compared, chaotic, worst);
    return accepted;
}

static void identity(double T[16])
{
    memset(T, 0, 16 * sizeof *T);
    T[0] = T[5] = T[10] = T[15] = 1.0;
}

/* The terrain: the scene is a 0.1 m patch moved by `truth`, the model a 0.06 m patch sampled apart. */
typedef struct terrain_data {
    grip_icp_cloud scene, model;
    double truth[16];
} terrain_data;

static void terrain_make(uint64_t seed, size_t n_scene, size_t n_model, terrain_data *t)
{
    uint64_t s = seed;
    ck_assert(grip_icp_terrain(&s, n_scene, 0.1, 0.1, 0.0003, &t->scene));
    ck_assert(grip_icp_terrain(&s, n_model, 0.1, 0.06, 0.0, &t->model));
    double I[16];
    identity(I);
    const double origin[3] = {0, 0, 0};
    grip_icp_perturb(&s, I, origin, 40.0, 0.3, t->truth);
    grip_icp_cloud_transform(&t->scene, t->truth);
}

static void terrain_free(terrain_data *t)
{
    grip_icp_cloud_free(&t->scene);
    grip_icp_cloud_free(&t->model);
}

/* n hypotheses of model 0 around the truth (up to 12 deg, 2 cm), every fifth far off (60-120 deg, 10-30 cm), and
 * the last one of the empty model 1. */
static void hypotheses(uint64_t seed, const terrain_data *t, uint32_t n, uint32_t *model, double *poses)
{
    uint64_t s = seed;
    const double center[3] = {t->truth[3], t->truth[7], t->truth[11]};
    for (uint32_t h = 0; h < n; ++h) {
        const int far = h % 5 == 4;
        const double deg = far ? 60.0 + 60.0 * grip_icp_uniform(&s) : 12.0 * grip_icp_uniform(&s);
        const double m = far ? 0.1 + 0.2 * grip_icp_uniform(&s) : 0.02 * grip_icp_uniform(&s);
        grip_icp_perturb(&s, t->truth, center, deg, m, poses + 16 * (size_t)h);
        model[h] = h + 1 == n ? 1 : 0;
    }
}

static void run_terrain(uint32_t metric, double final_distance, int visible, double leaf, size_t n_scene,
                        size_t n_model)
{
    grip_ctx *ctx = grip_test_ctx();
    terrain_data t;
    terrain_make(7 + metric, n_scene, n_model, &t);
    enum { N = 40 };
    uint32_t model[N];
    double poses[N * 16];
    hypotheses(11, &t, N, model, poses);
    const float empty_model[3] = {NAN, NAN, NAN};
    icp_case c = {t.scene.xyz,
                  t.scene.normals,
                  t.scene.n,
                  {0, 0, 0},
                  {t.model.xyz, empty_model},
                  {visible ? t.model.normals : NULL, NULL},
                  {t.model.n, 1},
                  2};
    const double up[3] = {0.0, 0.0, 1.0}; /* the viewpoint, above the model's patch, in scene coordinates */
    for (int r = 0; r < 3; ++r)
        c.viewpoint[r] = t.truth[4 * r] * up[0] + t.truth[4 * r + 1] * up[1] + t.truth[4 * r + 2] * up[2] +
                         t.truth[4 * r + 3];
    if (visible)
        c.model_normals[1] = empty_model;
    grip_icp_params p = base_params(metric);
    p.final_correspondence_distance = final_distance;
    p.voxel_leaf = leaf;
    grip_icp_result cpu[N], gpu[N], again[N];
    uint8_t stable[N];
    cpu_all(ctx, &p, &c, model, poses, N, 1, cpu, stable);
    ck_assert_msg(gpu_all(ctx, &p, &c, model, poses, N, 0, 0, gpu) == GRIP_OK, "gpu: %s", ctx->last_error);
    char what[96];
    snprintf(what, sizeof what, "terrain metric %u schedule %g visible %d leaf %g", metric, final_distance, visible,
             leaf);
    uint32_t accepted = compare(cpu, gpu, stable, N, 1, what);
    ck_assert_msg(accepted >= N / 2, "%s: only %u of %d accepted", what, accepted, N);
    ck_assert_uint_eq(gpu[N - 1].stop, GRIP_ICP_STOP_FEW_CORRESPONDENCES); /* the empty model */
    ck_assert_uint_eq(gpu[N - 1].n_points, 0);
    ck_assert_uint_eq(gpu[N - 1].accepted, 0);
    /* deterministic, and the same on a kept surface and however many iterations are queued before the first look
     * (7: not a multiple of the look's period; every iteration): bit for bit */
    const uint32_t queued[] = {0, 7, p.max_iterations + 3};
    for (size_t q = 0; q < sizeof queued / sizeof *queued; ++q) {
        ck_assert_msg(gpu_all(ctx, &p, &c, model, poses, N, q == 0, queued[q], again) == GRIP_OK, "gpu again: %s",
                      ctx->last_error);
        for (uint32_t h = 0; h < N; ++h) {
            ck_assert_mem_eq(gpu[h].pose, again[h].pose, sizeof gpu[h].pose);
            ck_assert_uint_eq(gpu[h].iterations, again[h].iterations);
            ck_assert_uint_eq(gpu[h].stop, again[h].stop);
            ck_assert_uint_eq(gpu[h].n_points, again[h].n_points);
            ck_assert_uint_eq(gpu[h].n_inliers, again[h].n_inliers);
        }
    }
    terrain_free(&t);
    grip_ctx_free(ctx);
}

/* Small sizes (compute-sanitizer, grip_test_size): a fifth of the terrain, the same kernels. */
#define TERRAIN_SCENE grip_test_size(40000, 8000)
#define TERRAIN_MODEL grip_test_size(8000, 1600)

START_TEST(terrain_point_to_point)
{
    run_terrain(GRIP_ICP_POINT_TO_POINT, 0.0, 0, 0.0, TERRAIN_SCENE, TERRAIN_MODEL);
}
END_TEST

START_TEST(terrain_point_to_plane)
{
    run_terrain(GRIP_ICP_POINT_TO_PLANE, 0.0, 0, 0.0, TERRAIN_SCENE, TERRAIN_MODEL);
}
END_TEST

START_TEST(terrain_schedule_visible_thinned)
{
    run_terrain(GRIP_ICP_POINT_TO_POINT, 0.004, 1, 0.003, TERRAIN_SCENE, TERRAIN_MODEL);
    run_terrain(GRIP_ICP_POINT_TO_PLANE, 0.004, 1, 0.003, TERRAIN_SCENE, TERRAIN_MODEL);
}
END_TEST

/* Every kernel path on a small terrain (for the sanitizers): both metrics, schedule, visible fitness, thinning. */
START_TEST(small_terrain)
{
    run_terrain(GRIP_ICP_POINT_TO_POINT, 0.004, 1, 0.004, 4000, 1000);
    run_terrain(GRIP_ICP_POINT_TO_PLANE, 0.0, 0, 0.0, 4000, 1000);
}
END_TEST

/* PCL's tutorial pair (the model and scene of pcl_reference's dump): the milk model at PCL's Hough pose, and
 * perturbations of it. */
START_TEST(tutorial_pair)
{
    size_t n_model = 0, n_scene = 0, bytes = 0;
    float *model = grip_test_read_xyz("pcl/data_repo/correspondence_grouping/milk.pcd", &n_model);
    float *scene = grip_test_read_xyz("pcl/milk_cartoon_all_small_clorox.pcd", &n_scene);
    char path[4096];
    ck_assert(grip_test_data_path(path, sizeof path, "pcl_reference/tutorial/instances.txt"));
    char *text = grip_test_read_file(path, &bytes);
    ck_assert_ptr_nonnull(text);
    const char *at = strstr(text, "pose ");
    ck_assert_ptr_nonnull(at);
    at += 5;
    double hough[16];
    for (int k = 0; k < 16; ++k) {
        char *end = NULL;
        hough[k] = strtod(at, &end);
        ck_assert_ptr_ne(end, at);
        at = end;
    }
    free(text);
    grip_ctx *ctx = grip_test_ctx();
    float *normals4 = malloc(n_scene * 4 * sizeof *normals4), *normals = malloc(n_scene * 3 * sizeof *normals);
    ck_assert_ptr_nonnull(normals4);
    ck_assert_ptr_nonnull(normals);
    ck_assert_int_eq(grip_normals_compute(ctx, scene, n_scene, NULL, 10, 0.0f, NULL, normals4), GRIP_OK);
    for (size_t i = 0; i < n_scene; ++i)
        memcpy(normals + 3 * i, normals4 + 4 * i, 3 * sizeof *normals);
    free(normals4);
    enum { N = 24 };
    uint32_t ids[N] = {0};
    double poses[N * 16];
    uint64_t s = 99;
    double center[3] = {hough[3], hough[7], hough[11]};
    memcpy(poses, hough, sizeof hough);
    for (uint32_t h = 1; h < N; ++h)
        grip_icp_perturb(&s, hough, center, 8.0 * grip_icp_uniform(&s), 0.02 * grip_icp_uniform(&s),
                         poses + 16 * (size_t)h);
    const icp_case c = {scene, normals, n_scene, {0, 0, 0}, {model, NULL}, {NULL, NULL}, {n_model, 0}, 1};
    for (uint32_t metric = 0; metric < 2; ++metric) {
        grip_icp_params p = base_params(metric);
        p.max_correspondence_distance = 0.01;
        p.voxel_leaf = 0.002;
        p.inlier_distance = 0.005;
        p.max_rmse = 0.0025;
        p.min_fitness = 0.3;
        grip_icp_result cpu[N], gpu[N];
        uint8_t stable[N];
        cpu_all(ctx, &p, &c, ids, poses, N, 1, cpu, stable);
        ck_assert_msg(gpu_all(ctx, &p, &c, ids, poses, N, 0, 0, gpu) == GRIP_OK, "gpu: %s", ctx->last_error);
        const uint32_t accepted = compare(cpu, gpu, stable, N, 1,
                                          metric ? "tutorial point-to-plane" : "tutorial point-to-point");
        ck_assert_uint_eq(gpu[0].accepted, 1); /* PCL's Hough pose is the true milk instance */
        ck_assert_uint_ge(accepted, 1);
    }
    free(model);
    free(scene);
    free(normals);
    grip_ctx_free(ctx);
}
END_TEST

/* A scene far from every model point, hypotheses that diverge (a huge bound over a sparse scene) and NaN rows:
 * finite poses, no pair found where none is near, and the same answers as the CPU. */
START_TEST(bad_scenes)
{
    grip_ctx *ctx = grip_test_ctx();
    terrain_data t;
    terrain_make(5, 3000, 2000, &t);
    for (size_t i = 0; i < t.scene.n; i += 97)
        t.scene.xyz[3 * i + i % 3] = NAN;
    for (size_t i = 0; i < t.model.n; i += 89)
        t.model.xyz[3 * i + 1] = INFINITY;
    enum { N = 30 };
    uint32_t model[N];
    double poses[N * 16];
    hypotheses(3, &t, N, model, poses);
    for (uint32_t h = 0; h < N; ++h)
        model[h] = 0;
    icp_case c = {t.scene.xyz,         t.scene.normals, t.scene.n,      {0, 0, 0},
                  {t.model.xyz, NULL}, {NULL, NULL},    {t.model.n, 0}, 1};
    grip_icp_params p = base_params(GRIP_ICP_POINT_TO_PLANE);
    p.max_correspondence_distance = 5.0; /* every point pairs with anything: poses wander */
    grip_icp_result cpu[N], gpu[N];
    uint8_t stable[N];
    cpu_all(ctx, &p, &c, model, poses, N, 1, cpu, stable);
    ck_assert_msg(gpu_all(ctx, &p, &c, model, poses, N, 0, 0, gpu) == GRIP_OK, "%s", ctx->last_error);
    compare(cpu, gpu, stable, N, 1, "diverging");
    /* the scene 10 m away: nothing within reach */
    double away[16];
    identity(away);
    away[3] = 10.0;
    grip_icp_cloud_transform(&t.scene, away);
    p = base_params(GRIP_ICP_POINT_TO_POINT);
    ck_assert_msg(gpu_all(ctx, &p, &c, model, poses, N, 0, 0, gpu) == GRIP_OK, "%s", ctx->last_error);
    for (uint32_t h = 0; h < N; ++h) {
        ck_assert_uint_eq(gpu[h].stop, GRIP_ICP_STOP_FEW_CORRESPONDENCES);
        ck_assert_uint_eq(gpu[h].iterations, 0);
        ck_assert_mem_eq(gpu[h].pose, poses + 16 * h, sizeof gpu[h].pose);
        ck_assert_uint_eq(gpu[h].n_inliers, 0);
        ck_assert(isinf(gpu[h].rmse));
        ck_assert_uint_eq(gpu[h].accepted, 0);
    }
    terrain_free(&t);
    grip_ctx_free(ctx);
}
END_TEST

/* 10,000 hypotheses of a small model in one batch (1,000 at small sizes: still many blocks of the same kernels);
 * every 250th checked against the CPU. */
START_TEST(ten_thousand_hypotheses)
{
    grip_ctx *ctx = grip_test_ctx();
    terrain_data t;
    terrain_make(9, 20000, 300, &t);
    const uint32_t N = (uint32_t)grip_test_size(10000, 1000);
    uint32_t *model = malloc((size_t)N * sizeof *model);
    double *poses = malloc((size_t)N * 16 * sizeof *poses);
    grip_icp_result *cpu = calloc(N, sizeof *cpu), *gpu = calloc(N, sizeof *gpu);
    uint8_t *stable = calloc(N, 1);
    ck_assert(model && poses && cpu && gpu && stable);
    hypotheses(17, &t, N, model, poses);
    for (uint32_t h = 0; h < N; ++h)
        model[h] = 0;
    const icp_case c = {t.scene.xyz, NULL, t.scene.n, {0, 0, 0}, {t.model.xyz, NULL}, {NULL, NULL}, {t.model.n, 0}, 1};
    const grip_icp_params p = base_params(GRIP_ICP_POINT_TO_POINT);
    ck_assert_msg(gpu_all(ctx, &p, &c, model, poses, N, 0, 0, gpu) == GRIP_OK, "%s", ctx->last_error);
    cpu_all(ctx, &p, &c, model, poses, N, 250, cpu, stable);
    compare(cpu, gpu, stable, N, 250, "10,000 hypotheses");
    for (uint32_t h = 0; h < N; ++h)
        ck_assert(grip_icp_pose_finite(gpu[h].pose));
    free(model);
    free(poses);
    free(cpu);
    free(gpu);
    free(stable);
    terrain_free(&t);
    grip_ctx_free(ctx);
}
END_TEST

/* Refusals leave the context usable: a good batch runs right after each. */
START_TEST(bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    terrain_data t;
    terrain_make(4, 2000, 500, &t);
    uint32_t model[2] = {0, 0};
    double poses[32];
    hypotheses(1, &t, 2, model, poses);
    model[1] = 0;
    const icp_case c = {t.scene.xyz, NULL, t.scene.n, {0, 0, 0}, {t.model.xyz, NULL}, {NULL, NULL}, {t.model.n, 0}, 1};
    grip_icp_result out[2];
    grip_icp_params p = base_params(GRIP_ICP_POINT_TO_PLANE); /* the scene has no normals */
    ck_assert_int_eq(gpu_all(ctx, &p, &c, model, poses, 2, 0, 0, out), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "verify.metric"));
    p = base_params(GRIP_ICP_POINT_TO_POINT);
    p.final_correspondence_distance = 1.0; /* above max_correspondence_distance */
    ck_assert_int_eq(gpu_all(ctx, &p, &c, model, poses, 2, 0, 0, out), GRIP_ECONFIG);
    p = base_params(GRIP_ICP_POINT_TO_POINT);
    model[1] = 3;
    ck_assert_int_eq(gpu_all(ctx, &p, &c, model, poses, 2, 0, 0, out), GRIP_EINVAL);
    model[1] = 0;
    poses[16 + 3] = NAN;
    ck_assert_int_eq(gpu_all(ctx, &p, &c, model, poses, 2, 0, 0, out), GRIP_EINVAL);
    poses[16 + 3] = poses[3];
    ck_assert_int_eq(grip_icp_cuda_scene_build(ctx, NULL, NULL, NULL, 5, NULL, 0, NULL, NULL), GRIP_EINVAL);
    ck_assert_int_eq(grip_icp_cuda_refine_finish(ctx, NULL, out), GRIP_EINVAL);
    { /* a run started and freed unfinished: nothing leaks (memcheck's leak check), nothing is written */
        grip_icp_cuda_scene *dev = NULL;
        ck_assert_int_eq(grip_icp_cuda_scene_build(ctx, c.scene_xyz, NULL, NULL, c.n_scene, NULL, 0, NULL, &dev),
                         GRIP_OK);
        const size_t first[2] = {0, c.n_model[0]};
        const grip_icp_batch b = {c.model_xyz[0], NULL, first, 1, 2, model, poses};
        grip_icp_cuda_run *run = NULL;
        ck_assert_int_eq(grip_icp_cuda_refine_start(ctx, &p, dev, &b, 0, &run), GRIP_OK);
        ck_assert_ptr_nonnull(run);
        grip_icp_cuda_run_free(run);
        grip_icp_cuda_scene_free(dev);
    }
    ck_assert_msg(gpu_all(ctx, &p, &c, model, poses, 2, 0, 0, out) == GRIP_OK, "%s", ctx->last_error);
    ck_assert(grip_icp_pose_finite(out[0].pose));
    terrain_free(&t);
    grip_ctx_free(ctx);
}
END_TEST

static grip_cloud cloud_of(const grip_icp_cloud *c)
{
    grip_cloud g;
    memset(&g, 0, sizeof g);
    g.struct_size = sizeof g;
    g.width = (uint32_t)c->n;
    g.height = 1;
    const grip_array xyz = {sizeof(grip_array), GRIP_F32, GRIP_MEM_HOST, -1, c->n, 3, c->xyz};
    const grip_array normals = {sizeof(grip_array), GRIP_F32, GRIP_MEM_HOST, -1, c->n, 3, c->normals};
    g.xyz = xyz;
    g.normals = normals;
    return g;
}

static grip_verdicts *stage_verify(grip_ctx *ctx, const char *device, const grip_cloud *model, const grip_cloud *scene,
                                   const grip_hypotheses *h)
{
    const grip_kv kv[] = {{"device", device},
                          {"metric", "point_to_plane"},
                          {"max_hypotheses", "24"},
                          {"max_iterations", "30"},
                          {"max_correspondence_distance", "0.02"},
                          {"final_correspondence_distance", "0.004"},
                          {"model_leaf", "0.003"},
                          {"inlier_distance", "0.002"},
                          {"min_fitness", "0.5"},
                          {"max_rmse", "0.0015"},
                          {"max_drift", "0.05"},
                          {"duplicate_distance", "0.001"}};
    grip_stage *st = NULL;
    ck_assert_msg(grip_stage_create(&grip_verify_icp, ctx, kv, sizeof kv / sizeof kv[0], &st) == GRIP_OK, "%s",
                  ctx->last_error);
    const grip_view mv = {sizeof(grip_view), model, NULL}, sv = {sizeof(grip_view), scene, NULL};
    grip_verdicts *v = NULL;
    ck_assert_msg(grip_verify_icp.verify(st, &mv, 1, &sv, h, &v) == GRIP_OK, "%s: %s", device, ctx->last_error);
    grip_stage_destroy(st);
    return v;
}

/* The verify stage with device = cuda and with device = cpu: the same verdicts (cap, metric, schedule, visible
 * fitness from the clouds' normals, drift and duplicates on the host). */
START_TEST(stage_cuda_matches_cpu)
{
    grip_ctx *ctx = grip_test_ctx();
    terrain_data t;
    terrain_make(21, 20000, 4000, &t);
    enum { N = 30 };
    uint32_t model[N];
    double poses[N * 16];
    hypotheses(23, &t, N, model, poses);
    grip_hypothesis items[N];
    uint64_t s = 5;
    for (uint32_t h = 0; h < N; ++h) {
        memset(&items[h], 0, sizeof items[h]);
        items[h].struct_size = sizeof items[h];
        items[h].votes = (float)(grip_icp_uniform(&s) * 100.0);
        for (int k = 0; k < 16; ++k)
            items[h].pose[k] = (float)poses[16 * h + k];
    }
    grip_hypotheses hy = {sizeof hy, N, sizeof(grip_hypothesis), items, NULL};
    grip_cloud mc = cloud_of(&t.model), sc = cloud_of(&t.scene);
    for (int r = 0; r < 3; ++r) /* the sensor above the patch */
        sc.viewpoint[r] = (float)(t.truth[4 * r + 2] + t.truth[4 * r + 3]);
    grip_verdicts *gpu = stage_verify(ctx, "cuda", &mc, &sc, &hy), *cpu = stage_verify(ctx, "cpu", &mc, &sc, &hy);
    uint32_t accepted = 0;
    for (uint32_t h = 0; h < N; ++h) {
        const grip_verdict *a = &cpu->items[h], *b = &gpu->items[h];
        ck_assert_msg(a->accepted == b->accepted, "hypothesis %u: accepted cpu %u gpu %u", h, a->accepted, b->accepted);
        for (int k = 0; k < 16; ++k)
            ck_assert(isfinite(b->pose[k]));
        if (!a->accepted)
            continue;
        ++accepted;
        ck_assert_uint_eq(a->iterations, b->iterations);
        for (int k = 0; k < 16; ++k)
            ck_assert_msg(fabsf(a->pose[k] - b->pose[k]) <= POSE_TOLERANCE, "hypothesis %u: pose[%d] %g vs %g", h, k,
                          a->pose[k], b->pose[k]);
        ck_assert_float_eq_tol(a->fitness, b->fitness, 1e-3);
    }
    ck_assert_uint_ge(accepted, 1);
    cpu->release(cpu);
    gpu->release(gpu);
    terrain_free(&t);
    grip_ctx_free(ctx);
}
END_TEST

static Suite *icp_cuda_suite(void)
{
    Suite *s = suite_create("icp_cuda");
    /* the small cases apart, so that a sanitizer pass can run them alone (CK_RUN_CASE=small) */
    TCase *small = tcase_create("small");
    tcase_set_timeout(small, 600);
    tcase_add_test(small, small_terrain);
    tcase_add_test(small, bad_scenes);
    tcase_add_test(small, bad_arguments);
    suite_add_tcase(s, small);
    TCase *large = tcase_create("large");
    tcase_set_timeout(large, 600);
    tcase_add_test(large, terrain_point_to_point);
    tcase_add_test(large, terrain_point_to_plane);
    tcase_add_test(large, terrain_schedule_visible_thinned);
    tcase_add_test(large, ten_thousand_hypotheses);
    tcase_add_test(large, stage_cuda_matches_cpu);
    char path[4096];
    if (grip_test_data_path(path, sizeof path, "pcl_reference/tutorial/instances.txt") &&
        grip_test_data_path(path, sizeof path, "pcl/milk_cartoon_all_small_clorox.pcd") &&
        grip_test_data_path(path, sizeof path, "pcl/data_repo/correspondence_grouping/milk.pcd"))
        tcase_add_test(large, tutorial_pair);
    else
        fprintf(stderr, "tutorial_pair skipped: shared data absent\n");
    suite_add_tcase(s, large);
    return s;
}

int main(void)
{
    return grip_test_run_gpu(icp_cuda_suite());
}
