/* bench_normals_cuda.c -- times the descriptor front's GPU steps on the tutorial scene: making the device-resident
 * surface (upload and grid), its normals with the tutorial's k = 10 (grip_normals_cuda_surface: the kernel alone,
 * the cloud already on the device), the host-in/host-out grip_normals_cuda (upload, grid, normals, download), and
 * uniform sampling at the tutorial's scene leaf 0.03 on the surface. CUDA events around each call, 2 warm-ups, the
 * median of 20 runs, one line per measurement:
 *     bench <name> n=<points> median_ms=<ms> runs=20
 * then the CPU twin's normals once (wall clock, all OpenMP threads) and the largest difference between the two.
 * PCL 1.13's NormalEstimationOMP took 139 ms on 16 cores for the same cloud.
 * Usage: bench_normals_cuda [cloud.pcd] (default: $GRIP_DATA_DIR/pcl/milk_cartoon_all_small_clorox.pcd).
 * Not a test: prints a line and exits 1 on a failure. */
#define _POSIX_C_SOURCE 200809L
#include "io/cloud_io.h"
#include "core/ctx.h"
#include "core/cuda_bridge.h"
#include "descriptor/normals.h"
#include "descriptor/normals_cuda.h"
#include "descriptor/uniform_sampling_cuda.h"
#include "spatial/neighborhood_cuda.h"
#include "host_util.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define REPS 20
#define K 10
#define SCENE_LEAF 0.03f

typedef struct bench_case {
    grip_ctx *ctx;
    const host_cloud *cloud;
    grip_surface_cuda *surface; /* made once, for the steps that start from it */
    float *out;                 /* host n x 4 */
} bench_case;

typedef grip_status (*bench_step)(bench_case *b);

static grip_status step_surface(bench_case *b)
{
    grip_surface_cuda *s = NULL;
    grip_status st = grip_surface_cuda_create(b->ctx, b->cloud->xyz, b->cloud->n, &s);
    grip_surface_cuda_free(s);
    return st;
}

static grip_status step_surface_normals(bench_case *b)
{
    return grip_normals_cuda_surface(b->ctx, b->surface, K, 0.0f, b->cloud->viewpoint);
}

static grip_status step_host_normals(bench_case *b)
{
    return grip_normals_cuda(b->ctx, b->cloud->xyz, b->cloud->n, K, b->cloud->viewpoint, b->out);
}

static grip_status step_uniform_sampling(bench_case *b)
{
    uint32_t *idx = NULL;
    size_t count = 0;
    grip_status st = grip_uniform_sampling_cuda(b->ctx, b->surface, SCENE_LEAF, &idx, &count);
    grip_cuda_free(idx);
    return st;
}

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Prints the median milliseconds of REPS timed calls after 2 warm-ups; returns 0, or 1 when a call fails. */
static int time_step(bench_case *b, const char *name, bench_step step)
{
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    float ms[REPS];
    int rc = 0;
    for (int r = -2; r < REPS && rc == 0; ++r) {
        cudaEventRecord(start, 0);
        grip_status st = step(b);
        cudaEventRecord(stop, 0);
        cudaEventSynchronize(stop);
        if (st != GRIP_OK) {
            fprintf(stderr, "%s failed: %s\n", name, b->ctx->last_error);
            rc = 1;
        }
        float t = 0.0f;
        cudaEventElapsedTime(&t, start, stop);
        if (r >= 0)
            ms[r] = t;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (rc == 0) {
        qsort(ms, REPS, sizeof ms[0], compare_floats);
        printf("bench %s n=%zu median_ms=%.4f runs=%d\n", name, b->cloud->n, (double)ms[REPS / 2], REPS);
    }
    return rc;
}

/* The CPU twin once, and its largest difference from the GPU's normals in gpu (n x 4). */
static int compare_cpu(bench_case *b, const float *gpu)
{
    const host_cloud *c = b->cloud;
    float *cpu = malloc(c->n * 4 * sizeof *cpu);
    if (!cpu)
        return 1;
    double t0 = host_now_ms();
    grip_status st = grip_normals_compute(b->ctx, c->xyz, c->n, NULL, K, 0.0f, c->viewpoint, cpu);
    double cpu_ms = host_now_ms() - t0;
    size_t nan_pattern = 0;
    float worst = 0.0f;
    for (size_t i = 0; st == GRIP_OK && i < 4 * c->n; ++i) {
        if (isnan(cpu[i]) != isnan(gpu[i]))
            ++nan_pattern;
        else if (!isnan(cpu[i]) && fabsf(cpu[i] - gpu[i]) > worst)
            worst = fabsf(cpu[i] - gpu[i]);
    }
    if (st == GRIP_OK)
        printf("normals k=%d, CPU twin %.1f ms; GPU vs CPU: max |diff| %.3g, NaN-pattern differences %zu "
               "(PCL NormalEstimationOMP, 16 cores: 139 ms)\n", K, cpu_ms, (double)worst, nan_pattern);
    free(cpu);
    return st != GRIP_OK;
}

int main(int argc, char **argv)
{
    char path[4096], err[512];
    const char *dir = getenv("GRIP_DATA_DIR");
    snprintf(path, sizeof path, "%s", argc > 1 ? argv[1] : "");
    if (argc <= 1)
        snprintf(path, sizeof path, "%s/pcl/milk_cartoon_all_small_clorox.pcd", dir ? dir : ".data");
    host_cloud c = {0};
    if (cloud_read(path, &c, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("cloud %s: %zu points\n", path, c.n);
    bench_case b = {NULL, &c, NULL, malloc(c.n * 4 * sizeof(float))};
    int rc = 1;
    if (b.out && grip_ctx_new(NULL, &b.ctx) == GRIP_OK &&
        grip_surface_cuda_create(b.ctx, c.xyz, c.n, &b.surface) == GRIP_OK) {
        rc = time_step(&b, "surface_create", step_surface);
        rc = rc || time_step(&b, "normals_surface_k10", step_surface_normals);
        rc = rc || time_step(&b, "normals_host_in_out_k10", step_host_normals);
        rc = rc || time_step(&b, "uniform_sampling_leaf0.03", step_uniform_sampling);
        rc = rc || compare_cpu(&b, b.out);
    } else if (b.ctx) {
        fprintf(stderr, "setting up: %s\n", b.ctx->last_error);
    }
    grip_surface_cuda_free(b.surface);
    grip_ctx_free(b.ctx);
    free(b.out);
    host_cloud_free(&c);
    return rc;
}
