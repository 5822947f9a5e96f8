/* bench_icp_cuda.c -- times the batched GPU ICP (src/verify/icp_cuda.h) against its CPU twin (icp.h) on the
 * synthetic terrain of the ICP tests (tests/support/icp_scene.h: random samples of a wavy height field, 0.3 mm
 * noise on the scene), each hypothesis started 10 deg and 2 cm off the truth (random axis and direction):
 *   single: 1 hypothesis, a 1e5-point model against a 1e5-point scene;
 *   batch:  100 hypotheses of a 1e4-point model against a 3e5-point scene;
 * point-to-point and point-to-plane, max_iterations 30 (the PCL stop rules may end a hypothesis earlier: the
 * mean iterations run are printed, and the time per 30 iterations of the slowest hypothesis' count). GPU: the
 * scene's preparation (kd-tree, uploads) timed apart from the refinement (grip_icp_cuda_refine: uploads of the
 * batch, every iteration, scoring, download), wall clock around the synchronous calls, 2 warm-ups, median of 11.
 * CPU twin: the median of 3 (1 for the batch), ctx threads = all cores. Exits 1 when the GPU's poses differ from
 * the CPU's by more than 1e-4. Prints one line per measurement (key=value words).
 * Usage: bench_icp_cuda [cpu] (cpu: the CPU twin only, e.g. on a machine without a device). Not a test. */
#define _POSIX_C_SOURCE 200809L
#include "core/ctx.h"
#include "icp_scene.h"
#include "spatial/kdtree3d.h"
#include "verify/icp.h"
#include "verify/icp_cuda.h"
#include "host_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GPU_REPS 11
#define WARMUPS 2

typedef struct bench_case {
    const char *name;
    size_t n_scene, n_model;
    uint32_t n_hyp;
    int cpu_reps;
} bench_case;

static int run_case(grip_ctx *ctx, const bench_case *bc, uint32_t metric, int gpu)
{
    uint64_t seed = 2024;
    grip_icp_cloud scene, model;
    if (!grip_icp_terrain(&seed, bc->n_scene, 0.1, 0.1, 0.0003, &scene) ||
        !grip_icp_terrain(&seed, bc->n_model, 0.1, 0.06, 0.0, &model)) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    double truth[16] = {1, 0, 0, 0.2, 0, 1, 0, -0.1, 0, 0, 1, 0.5, 0, 0, 0, 1};
    grip_icp_cloud_transform(&scene, truth);
    uint32_t *ids = calloc(bc->n_hyp, sizeof *ids);
    double *poses = malloc((size_t)bc->n_hyp * 16 * sizeof *poses);
    grip_icp_result *cpu = calloc(bc->n_hyp, sizeof *cpu), *dev = calloc(bc->n_hyp, sizeof *dev);
    const double center[3] = {truth[3], truth[7], truth[11]};
    for (uint32_t h = 0; h < bc->n_hyp; ++h)
        grip_icp_perturb(&seed, truth, center, 10.0, 0.02, poses + 16 * (size_t)h);
    grip_icp_params p;
    memset(&p, 0, sizeof p);
    p.max_iterations = 30;
    p.max_correspondence_distance = 0.05;
    p.transformation_epsilon = 1e-12;
    p.inlier_distance = 0.002;
    p.min_fitness = 0.5;
    p.max_rmse = 0.0015;
    p.metric = metric;
    const char *mname = metric == GRIP_ICP_POINT_TO_PLANE ? "point_to_plane" : "point_to_point";
    int bad = 0;

    /* CPU twin */
    grip_kdtree3d *tree = NULL;
    double t0 = host_now_ms();
    if (grip_kdtree3d_build(ctx, scene.xyz, scene.n, &tree) != GRIP_OK) {
        fprintf(stderr, "cpu tree: %s\n", ctx->last_error);
        return 1;
    }
    const double cpu_tree_ms = host_now_ms() - t0;
    const grip_icp_scene sc = {tree, scene.xyz, scene.normals, 3, {0, 0, 0}};
    const grip_icp_model md = {model.xyz, model.n, NULL, 0};
    double cpu_ms[3];
    for (int r = 0; r < bc->cpu_reps; ++r) {
        t0 = host_now_ms();
        for (uint32_t h = 0; h < bc->n_hyp; ++h)
            if (grip_icp_refine_scene(ctx, &p, &md, &sc, poses + 16 * (size_t)h, &cpu[h]) != GRIP_OK) {
                fprintf(stderr, "cpu: %s\n", ctx->last_error);
                return 1;
            }
        cpu_ms[r] = host_now_ms() - t0;
    }
    grip_kdtree3d_free(tree);
    double iters = 0, accepted = 0;
    uint32_t most = 0;
    for (uint32_t h = 0; h < bc->n_hyp; ++h) {
        iters += cpu[h].iterations;
        accepted += cpu[h].accepted;
        most = cpu[h].iterations > most ? cpu[h].iterations : most;
    }
    const double cpu_med = host_median(cpu_ms, (size_t)bc->cpu_reps);
    printf("bench=icp case=%s metric=%s backend=cpu threads=%d scene=%zu model=%zu hypotheses=%u tree_ms=%.2f "
           "refine_ms=%.2f mean_iterations=%.1f accepted=%.0f per30_ms=%.2f\n",
           bc->name, mname, grip_ctx_threads(ctx), bc->n_scene, bc->n_model, bc->n_hyp, cpu_tree_ms, cpu_med,
           iters / bc->n_hyp, accepted, most ? cpu_med * 30.0 / most : 0.0);

    if (gpu) {
        double build_ms[GPU_REPS], refine_ms[GPU_REPS];
        const size_t first[2] = {0, model.n};
        const grip_icp_batch b = {model.xyz, NULL, first, 1, bc->n_hyp, ids, poses};
        for (int r = -WARMUPS; r < GPU_REPS; ++r) {
            grip_icp_cuda_scene *ds = NULL;
            t0 = host_now_ms();
            grip_status st =
                grip_icp_cuda_scene_build(ctx, scene.xyz, NULL, NULL, scene.n, scene.normals, 3, NULL, &ds);
            const double t1 = host_now_ms();
            if (st == GRIP_OK)
                st = grip_icp_cuda_refine(ctx, &p, ds, &b, dev);
            const double t2 = host_now_ms();
            grip_icp_cuda_scene_free(ds);
            if (st != GRIP_OK) {
                fprintf(stderr, "gpu: %s\n", ctx->last_error);
                return 1;
            }
            if (r >= 0) {
                build_ms[r] = t1 - t0;
                refine_ms[r] = t2 - t1;
            }
        }
        double worst = 0;
        uint32_t same_iterations = 0;
        for (uint32_t h = 0; h < bc->n_hyp; ++h) {
            for (int k = 0; k < 16; ++k)
                worst = fmax(worst, fabs(dev[h].pose[k] - cpu[h].pose[k]));
            same_iterations += dev[h].iterations == cpu[h].iterations;
        }
        bad = !(worst <= 1e-4);
        const double gpu_med = host_median(refine_ms, GPU_REPS);
        printf("bench=icp case=%s metric=%s backend=cuda scene=%zu model=%zu hypotheses=%u scene_build_ms=%.3f "
               "refine_ms=%.3f per30_ms=%.3f speedup=%.1f max_pose_diff=%.2e same_iterations=%u/%u\n",
               bc->name, mname, bc->n_scene, bc->n_model, bc->n_hyp, host_median(build_ms, GPU_REPS), gpu_med,
               most ? gpu_med * 30.0 / most : 0.0, cpu_med / gpu_med, worst, same_iterations, bc->n_hyp);
    }
    free(ids);
    free(poses);
    free(cpu);
    free(dev);
    grip_icp_cloud_free(&scene);
    grip_icp_cloud_free(&model);
    return bad;
}

int main(int argc, char **argv)
{
    const int gpu = !(argc > 1 && strcmp(argv[1], "cpu") == 0);
    grip_ctx *ctx = NULL;
    if (grip_ctx_new(NULL, &ctx) != GRIP_OK)
        return 1;
    if (gpu && grip_ctx_device_count(ctx) <= 0) {
        fprintf(stderr, "no usable CUDA device (run with `cpu` for the CPU twin only)\n");
        grip_ctx_free(ctx);
        return 1;
    }
    const bench_case cases[] = {{"single", 100000, 100000, 1, 3}, {"batch", 300000, 10000, 100, 1}};
    int bad = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
        for (uint32_t metric = 0; metric < 2; ++metric)
            bad |= run_case(ctx, &cases[c], metric, gpu);
    grip_ctx_free(ctx);
    return bad;
}
