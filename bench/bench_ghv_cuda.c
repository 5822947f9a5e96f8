/* bench_ghv_cuda.c -- times global hypotheses verification (src/verify/ghv.h, ghv_cuda.h) on a real range scan:
 * PCL's tutorial scene (640 x 480 = 307,200 points, 241,407 finite) and its milk-box model, with H hypotheses
 * (default 100): PCL's two geometric-consistency poses, the others those poses moved by up to 2 cm and turned by
 * up to 0.2 rad about a random axis, seeded. Measured, each the median of REPS runs after WARMUPS:
 *   scene_gpu   grip_ghv_scene_cuda_create: upload, resolution, sampling, kd-tree, neighbourhoods (once per scene)
 *   terms_gpu   grip_ghv_terms_cuda of the H hypotheses (model already sampled; transfers included)
 *   search      grip_ghv_search on the host (greedy + local search)
 *   ghv_gpu     terms_gpu + search: the per-call cost of GHV once the scene is prepared
 *   scene_cpu, terms_cpu  the CPU twin (CPU_REPS runs)
 * ICP refinement, which the stage runs before GHV (icp_iterations), is not part of these numbers. The GPU terms
 * are checked against the CPU twin's, bit for bit. Prints key=value lines; exits 1 on a mismatch.
 * Usage: bench_ghv_cuda MODEL.pcd SCENE.pcd [H [POSES_OUT]]. POSES_OUT, when given, receives the H poses (one
 * row-major 4x4 a line) so that another implementation (PCL's GHV) can be timed on the same input. Not a test. */
#define _POSIX_C_SOURCE 200809L
#include "core/ctx.h"
#include "io/cloud_io.h"
#include "verify/ghv.h"
#include "verify/ghv_cuda.h"
#include "host_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 20
#define WARMUPS 2
#define CPU_REPS 3

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static float rng_uniform(uint64_t *x, float lo, float hi)
{
    return lo + (hi - lo) * (float)((rng_next(x) >> 40) / (double)(1ull << 24));
}

static const float gc_poses[2][12] = {
    {0.965666711f, -0.114299081f, 0.233288601f, -0.145519063f, -0.11097829f, -0.993446231f, -0.0273564756f,
     -0.21436362f, 0.234886512f, 0.000527267111f, -0.972022653f, 0.0418824442f},
    {0.133581191f, -0.829175949f, -0.542792141f, -0.306372166f, 0.698853195f, -0.309526205f, 0.644823849f, 0.411577016f,
     -0.702680826f, -0.465468347f, 0.538125396f, 1.0687151f}};

/* pose = perturbation o base: R = Rp Rb, t = Rp tb + tp (Rodrigues rotation of angle a about unit axis k). */
static void perturbed(const float *base, uint64_t *rng, float *pose)
{
    float k[3] = {rng_uniform(rng, -1, 1), rng_uniform(rng, -1, 1), rng_uniform(rng, -1, 1)};
    float norm = sqrtf(k[0] * k[0] + k[1] * k[1] + k[2] * k[2]) + 1e-12f, a = rng_uniform(rng, -0.2f, 0.2f);
    for (int i = 0; i < 3; i++)
        k[i] /= norm;
    float c = cosf(a), s = sinf(a), rp[9];
    float kx[9] = {0, -k[2], k[1], k[2], 0, -k[0], -k[1], k[0], 0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            rp[3 * i + j] = (i == j ? c : 0) + s * kx[3 * i + j] + (1 - c) * k[i] * k[j];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 4; j++) {
            float v = 0;
            for (int m = 0; m < 3; m++)
                v += rp[3 * i + m] * base[4 * m + j];
            pose[4 * i + j] = v;
        }
        pose[4 * i + 3] += rng_uniform(rng, -0.02f, 0.02f);
    }
}

static int check(grip_ctx *ctx, grip_status s, const char *what)
{
    if (s != GRIP_OK)
        fprintf(stderr, "%s failed: %s\n", what, grip_ctx_error_text(ctx));
    return s != GRIP_OK;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL.pcd SCENE.pcd [H [POSES_OUT]]\n", argv[0]);
        return 2;
    }
    size_t h = argc > 3 ? (size_t)strtoul(argv[3], NULL, 10) : 100;
    host_cloud model, scene;
    char err[512];
    if (cloud_read(argv[1], &model, err, sizeof err) || cloud_read(argv[2], &scene, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    grip_ctx *ctx = NULL;
    if (grip_ctx_new(NULL, &ctx) != GRIP_OK || grip_ctx_device_count(ctx) <= 0) {
        fprintf(stderr, "no usable CUDA device\n");
        return 77;
    }
    grip_ghv_params p;
    memset(&p, 0, sizeof p);
    p.regularizer = 3;
    p.clutter_regularizer = 5;
    grip_ghv_hypothesis *hyps = malloc(h * sizeof *hyps);
    uint64_t rng = 12345;
    for (size_t i = 0; i < h; i++) {
        hyps[i].model = 0;
        if (i < 2)
            memcpy(hyps[i].pose, gc_poses[i], sizeof hyps[i].pose);
        else
            perturbed(gc_poses[i % 2], &rng, hyps[i].pose);
    }
    if (argc > 4) {
        FILE *f = fopen(argv[4], "w");
        if (!f) {
            perror(argv[4]);
            return 2;
        }
        for (size_t i = 0; i < h; i++)
            for (int j = 0; j < 12; j++)
                fprintf(f, "%.9g%s", hyps[i].pose[j], j == 11 ? " 0 0 0 1\n" : " ");
        fclose(f);
    }

    double t_scene[REPS], t_terms[REPS], t_search[REPS], t_ghv[REPS], t_scene_cpu[CPU_REPS], t_terms_cpu[CPU_REPS];
    grip_ghv_scene_cuda *gpu = NULL;
    int bad = 0;
    for (int r = -WARMUPS; r < REPS && !bad; r++) {
        grip_ghv_scene_cuda_free(gpu);
        gpu = NULL;
        double t0 = host_now_ms();
        bad = check(ctx,
                    grip_ghv_scene_cuda_create(ctx, scene.xyz, NULL, NULL, scene.n, scene.width, scene.height, &p,
                                               &gpu),
                    "scene (gpu)");
        if (r >= 0)
            t_scene[r] = host_now_ms() - t0;
    }
    grip_ghv_scene *host = bad ? NULL : grip_ghv_scene_cuda_host(gpu);
    float *sampled = NULL;
    size_t n_sampled = 0;
    if (!bad)
        bad = check(ctx, grip_ghv_model_sample(ctx, host, model.xyz, model.n, &sampled, &n_sampled), "model");
    grip_ghv_model m = {sampled, n_sampled};
    uint32_t *accepted = calloc(h + 1, sizeof *accepted);
    grip_ghv_terms tg;
    memset(&tg, 0, sizeof tg);
    for (int r = -WARMUPS; r < REPS && !bad; r++) {
        grip_ghv_terms_free(&tg);
        double t0 = host_now_ms();
        bad = check(ctx, grip_ghv_terms_cuda(ctx, gpu, &m, 1, hyps, h, &tg), "terms (gpu)");
        double t1 = host_now_ms();
        bad = bad || check(ctx, grip_ghv_search(ctx, &p, host, &tg, accepted, NULL), "search");
        double t2 = host_now_ms();
        if (r >= 0) {
            t_terms[r] = t1 - t0;
            t_search[r] = t2 - t1;
            t_ghv[r] = t2 - t0;
        }
    }
    grip_ghv_scene cpu;
    memset(&cpu, 0, sizeof cpu);
    grip_ghv_terms tc;
    memset(&tc, 0, sizeof tc);
    for (int r = 0; r < CPU_REPS && !bad; r++) {
        grip_ghv_scene_free(&cpu);
        grip_ghv_terms_free(&tc);
        double t0 = host_now_ms();
        bad = check(ctx, grip_ghv_scene_prepare(ctx, scene.xyz, scene.n, scene.width, scene.height, &p, &cpu),
                    "scene (cpu)");
        double t1 = host_now_ms();
        bad = bad || check(ctx, grip_ghv_terms_compute(ctx, &cpu, &m, 1, hyps, h, &tc), "terms (cpu)");
        t_scene_cpu[r] = t1 - t0;
        t_terms_cpu[r] = host_now_ms() - t1;
    }
    int same = !bad && grip_ghv_terms_equal(&tc, &tg);
    size_t k = 0;
    for (size_t i = 0; i < h; i++)
        k += accepted[i];
    if (!bad) {
        printf("ghv scene_points=%zu sampled=%zu resolution_mm=%.3f model_points=%zu hypotheses=%zu "
               "explained_entries=%llu clutter_entries=%llu accepted=%zu cpu_threads=%d\n",
               scene.n, host->n, host->resolution * 1e3, n_sampled, h, (unsigned long long)tg.explained_offsets[h],
               (unsigned long long)tg.clutter_offsets[h], k, grip_ctx_threads(ctx));
        printf("ghv median_ms scene_gpu=%.3f terms_gpu=%.3f search=%.3f ghv_gpu=%.3f scene_cpu=%.1f terms_cpu=%.1f "
               "terms_equal=%d\n",
               host_median(t_scene, REPS), host_median(t_terms, REPS), host_median(t_search, REPS),
               host_median(t_ghv, REPS), host_median(t_scene_cpu, CPU_REPS), host_median(t_terms_cpu, CPU_REPS), same);
    }
    grip_ghv_terms_free(&tg);
    grip_ghv_terms_free(&tc);
    grip_ghv_scene_free(&cpu);
    grip_ghv_scene_cuda_free(gpu);
    free(sampled);
    free(accepted);
    free(hyps);
    host_cloud_free(&model);
    host_cloud_free(&scene);
    grip_ctx_free(ctx);
    return bad || !same;
}
