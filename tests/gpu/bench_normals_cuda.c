/* bench_normals_cuda.c -- times grip_normals_cuda (host cloud in, host normals out: upload, grid, search, PCA,
 * download) on the tutorial scene with the tutorial's k = 10: CUDA events around each call, 2 warm-ups, the median
 * of 20 runs; also the CPU twin grip_normals_compute once (wall clock, all OpenMP threads) and the largest
 * difference between the two. PCL 1.13's NormalEstimationOMP took 139 ms on 16 cores for the same cloud.
 * Usage: bench_normals_cuda [cloud.pcd] (default: $GRIP_DATA_DIR/pcl/milk_cartoon_all_small_clorox.pcd).
 * Not a test: prints a line and exits 1 on a failure. */
#define _POSIX_C_SOURCE 200809L
#include "cloud_io.h"
#include "core/ctx.h"
#include "descriptor/normals.h"
#include "descriptor/normals_cuda.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define REPS 20
#define K 10

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median milliseconds of REPS timed calls after 2 warm-ups, or a negative value when a call fails. */
static float time_gpu(grip_ctx *ctx, const host_cloud *c, float *out)
{
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    float ms[REPS];
    for (int r = -2; r < REPS; ++r) {
        cudaEventRecord(start, 0);
        grip_status st = grip_normals_cuda(ctx, c->xyz, c->n, K, c->viewpoint, out);
        cudaEventRecord(stop, 0);
        cudaEventSynchronize(stop);
        if (st != GRIP_OK) {
            fprintf(stderr, "grip_normals_cuda failed: %s\n", ctx->last_error);
            return -1.0f;
        }
        float t = 0.0f;
        cudaEventElapsedTime(&t, start, stop);
        if (r >= 0)
            ms[r] = t;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    qsort(ms, REPS, sizeof ms[0], compare_floats);
    return ms[REPS / 2];
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
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
    grip_ctx *ctx = NULL;
    float *gpu = malloc(c.n * 4 * sizeof *gpu), *cpu = malloc(c.n * 4 * sizeof *cpu);
    int rc = 1;
    if (gpu && cpu && grip_ctx_new(NULL, &ctx) == GRIP_OK) {
        float gpu_ms = time_gpu(ctx, &c, gpu);
        double t0 = now_ms();
        grip_status st = grip_normals_compute(ctx, c.xyz, c.n, NULL, K, 0.0f, c.viewpoint, cpu);
        double cpu_ms = now_ms() - t0;
        size_t differing = 0;
        float worst = 0.0f;
        for (size_t i = 0; st == GRIP_OK && i < 4 * c.n; ++i) {
            if (isnan(cpu[i]) != isnan(gpu[i]))
                ++differing;
            else if (!isnan(cpu[i]) && fabsf(cpu[i] - gpu[i]) > worst)
                worst = fabsf(cpu[i] - gpu[i]);
        }
        if (gpu_ms >= 0.0f && st == GRIP_OK) {
            printf("normals k=%d on %s (%zu points): GPU %.3f ms (median of %d), CPU twin %.1f ms, max |diff| %.3g, "
                   "NaN-pattern differences %zu (PCL NormalEstimationOMP, 16 cores: 139 ms)\n", K, path, c.n,
                   (double)gpu_ms, REPS, cpu_ms, (double)worst, differing);
            rc = 0;
        }
    }
    grip_ctx_free(ctx);
    free(gpu);
    free(cpu);
    host_cloud_free(&c);
    return rc;
}
