/* bench_fpfh_cuda.c -- times the GPU FPFH-33 and PFH-125 on a generated surface: a 1000 x 1000 grid (1e6 points,
 * 1 mm apart, jittered) on a wavy sheet with its exact normals, keypoints every 10th point (1e5, "large") or every
 * 100th (1e4, "small"), radius 8 mm (about 200 neighbours). Per measurement: CUDA events around the call, one
 * warm-up, the median of 5 runs (large) or 20 (small), one line each:
 *     bench <name> points=<n> keypoints=<k> radius=<r> neighbors=<mean list length> median_ms=<ms>
 *           desc_per_s=<k / median> runs=<runs>
 * Measured: grip_fpfh_cuda and grip_pfh_cuda_surface (lists included), the keypoint lists alone, and the PFH
 * kernel alone on lists made beforehand. Then the CPU twins once on the first 1,000 keypoints (wall clock, all
 * OpenMP threads) and the largest difference from the GPU's rows.
 * Not a test: prints a line and exits 1 on a failure. */
#define _POSIX_C_SOURCE 200809L
#include "core/ctx.h"
#include "core/cuda_bridge.h"
#include "descriptor/fpfh.h"
#include "descriptor/fpfh_cuda.h"
#include "descriptor/pfh.h"
#include "descriptor/pfh_cuda.h"
#include "spatial/kdtree3d.h"
#include "spatial/neighborhood_cuda.h"
#include "host_util.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIDE 1000
#define RADIUS 0.008f
#define CPU_KEYPOINTS 1000
#define PI_F 3.14159265f

typedef struct bench {
    grip_ctx *ctx;
    float *xyz, *normals; /* host n x 3, n x 4 */
    size_t n;
    grip_surface_cuda *surface;
    float *keys_dev;      /* every 10th point: 1e5 x 3; the small case uses every 10th of those */
    float *out_dev;       /* k x 125 */
    grip_neighborhoods_cuda lists; /* of the current keypoints, for the kernel-only measurement */
    uint32_t k;
    const float *keys;    /* device keypoints of the current case */
} bench;

typedef grip_status (*bench_step)(bench *b);

static grip_status step_fpfh(bench *b)
{
    return grip_fpfh_cuda(b->ctx, b->surface, b->keys, b->k, RADIUS, b->out_dev);
}

static grip_status step_pfh(bench *b)
{
    return grip_pfh_cuda_surface(b->ctx, b->surface, b->keys, b->k, RADIUS, b->out_dev);
}

static grip_status step_lists(bench *b)
{
    grip_neighborhoods_cuda nb = {0};
    grip_status st = grip_neighborhoods_cuda_radius(b->ctx, b->surface, b->keys, b->k, RADIUS, 0, &nb);
    grip_neighborhoods_cuda_free(&nb);
    return st;
}

static grip_status step_pfh_kernel(bench *b)
{
    return grip_pfh_cuda(b->ctx, &b->lists, b->keys, b->k, b->out_dev);
}

/* The wavy sheet z = 0.05 sin(2 pi x / 0.2) cos(2 pi y / 0.3) over [0, 1]^2, its upward unit normals. */
static int make_surface(bench *b)
{
    b->n = (size_t)SIDE * SIDE;
    b->xyz = malloc(b->n * 3 * sizeof *b->xyz);
    b->normals = malloc(b->n * 4 * sizeof *b->normals);
    if (!b->xyz || !b->normals)
        return 1;
    uint64_t seed = 12345;
    for (size_t i = 0; i < b->n; ++i) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        float jx = (float)(seed & 0xffff) / 65536.0f - 0.5f, jy = (float)((seed >> 16) & 0xffff) / 65536.0f - 0.5f;
        float x = ((float)(i % SIDE) + 0.2f * jx) / SIDE, y = ((float)(i / SIDE) + 0.2f * jy) / SIDE;
        float ax = 2 * PI_F / 0.2f, ay = 2 * PI_F / 0.3f;
        float z = 0.05f * sinf(ax * x) * cosf(ay * y);
        float gx = 0.05f * ax * cosf(ax * x) * cosf(ay * y), gy = -0.05f * ay * sinf(ax * x) * sinf(ay * y);
        float len = sqrtf(gx * gx + gy * gy + 1.0f);
        float *p = b->xyz + 3 * i, *nrm = b->normals + 4 * i;
        p[0] = x, p[1] = y, p[2] = z;
        nrm[0] = -gx / len, nrm[1] = -gy / len, nrm[2] = 1.0f / len, nrm[3] = 0.0f;
    }
    return 0;
}

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int time_step(bench *b, const char *name, bench_step step, int runs, double neighbors)
{
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    float ms[20];
    int rc = 0;
    for (int r = -1; r < runs && rc == 0; ++r) {
        cudaEventRecord(start, 0);
        grip_status st = step(b);
        cudaEventRecord(stop, 0);
        cudaEventSynchronize(stop);
        if (st != GRIP_OK) {
            printf("%s failed: %s\n", name, b->ctx->last_error);
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
        qsort(ms, (size_t)runs, sizeof ms[0], compare_floats);
        double median = ms[runs / 2];
        printf("bench %s points=%zu keypoints=%u radius=%g neighbors=%.1f median_ms=%.3f desc_per_s=%.4g runs=%d\n",
               name, b->n, b->k, (double)RADIUS, neighbors, median, b->k / (median * 1e-3), runs);
    }
    return rc;
}

/* The CPU twin once on the first CPU_KEYPOINTS keypoints of the current case (host keys, every `step`-th point)
 * against the GPU's rows of the same keypoints. */
static int cpu_case(bench *b, const grip_kdtree3d *tree, const char *name, size_t dim, size_t step, int fpfh)
{
    float *keys = malloc(CPU_KEYPOINTS * 3 * sizeof *keys), *cpu = malloc(CPU_KEYPOINTS * dim * sizeof *cpu);
    float *gpu = malloc(CPU_KEYPOINTS * dim * sizeof *gpu);
    if (!keys || !cpu || !gpu)
        return 1;
    for (size_t i = 0; i < CPU_KEYPOINTS; ++i)
        memcpy(keys + 3 * i, b->xyz + 3 * (i * step), 3 * sizeof(float));
    uint32_t k = b->k;
    b->k = CPU_KEYPOINTS;
    grip_status st = fpfh ? step_fpfh(b) : step_pfh(b);
    b->k = k;
    if (!st)
        st = grip_cuda_copy_to_host(b->ctx, gpu, b->out_dev, CPU_KEYPOINTS * dim * sizeof(float));
    double t0 = host_now_ms();
    if (!st)
        st = fpfh ? grip_fpfh_describe(b->ctx, b->xyz, b->normals, b->n, tree, keys, CPU_KEYPOINTS, RADIUS, cpu)
                  : grip_pfh_describe(b->ctx, b->xyz, b->normals, b->n, tree, keys, CPU_KEYPOINTS, RADIUS, cpu);
    double cpu_ms = host_now_ms() - t0;
    double worst = 0.0;
    for (size_t i = 0; i < CPU_KEYPOINTS * dim && !st; ++i)
        worst = fmax(worst, fabs((double)cpu[i] - gpu[i]));
    if (!st)
        printf("cpu %s keypoints=%d threads=%d ms=%.1f desc_per_s=%.4g max_diff_vs_gpu=%.3g\n", name, CPU_KEYPOINTS,
               grip_ctx_threads(b->ctx), cpu_ms, CPU_KEYPOINTS / (cpu_ms * 1e-3), worst);
    else
        printf("cpu %s failed: %s\n", name, b->ctx->last_error);
    free(gpu);
    free(cpu);
    free(keys);
    return st != GRIP_OK;
}

/* Mean list length of the current keypoints; makes b->lists. */
static int make_lists(bench *b, double *mean)
{
    grip_neighborhoods_cuda_free(&b->lists);
    if (grip_neighborhoods_cuda_radius(b->ctx, b->surface, b->keys, b->k, RADIUS, 0, &b->lists) != GRIP_OK) {
        printf("lists failed: %s\n", b->ctx->last_error);
        return 1;
    }
    *mean = (double)b->lists.entries / b->k;
    return 0;
}

int main(void)
{
    bench b;
    memset(&b, 0, sizeof b);
    if (grip_ctx_new(NULL, &b.ctx) != GRIP_OK || make_surface(&b)) {
        printf("bench_fpfh_cuda: out of host memory\n");
        return 1;
    }
    if (grip_ctx_device_count(b.ctx) <= 0) {
        printf("bench_fpfh_cuda: no CUDA device\n");
        return 1;
    }
    const uint32_t large = (uint32_t)(b.n / 10);
    float *keys = malloc((size_t)large * 3 * sizeof *keys);
    grip_kdtree3d *tree = NULL;
    int rc = keys == NULL;
    for (size_t i = 0; i < large && !rc; ++i)
        memcpy(keys + 3 * i, b.xyz + 3 * (i * 10), 3 * sizeof(float));
    float *small_keys = NULL;
    if (!rc)
        rc = grip_surface_cuda_create(b.ctx, b.xyz, b.n, &b.surface) ||
             grip_surface_cuda_set_normals(b.ctx, b.surface, b.normals, 4) ||
             grip_cuda_upload(b.ctx, keys, (size_t)large * 3 * sizeof(float), (void **)&b.keys_dev, &(int){0}) ||
             grip_cuda_alloc(b.ctx, (size_t)large * 125 * sizeof(float), (void **)&b.out_dev);
    /* the small case: every 10th of the large keypoints, gathered on the host */
    const uint32_t small = large / 10;
    if (!rc) {
        for (uint32_t i = 0; i < small; ++i)
            memmove(keys + 3 * (size_t)i, keys + 3 * (size_t)i * 10, 3 * sizeof(float));
        rc = grip_cuda_upload(b.ctx, keys, (size_t)small * 3 * sizeof(float), (void **)&small_keys, &(int){0});
    }
    if (rc)
        printf("set-up failed: %s\n", b.ctx->last_error);
    double mean = 0.0;
    const struct {
        const char *suffix;
        uint32_t k;
        float *keys;
        int runs;
    } cases[2] = {{"large", large, b.keys_dev, 5}, {"small", small, small_keys, 20}};
    for (int c = 0; c < 2 && !rc; ++c) {
        char name[64];
        b.k = cases[c].k;
        b.keys = cases[c].keys;
        rc = make_lists(&b, &mean);
        snprintf(name, sizeof name, "fpfh_cuda_%s", cases[c].suffix);
        rc = rc || time_step(&b, name, step_fpfh, cases[c].runs, mean);
        snprintf(name, sizeof name, "pfh_cuda_%s", cases[c].suffix);
        rc = rc || time_step(&b, name, step_pfh, cases[c].runs, mean);
        snprintf(name, sizeof name, "radius_lists_%s", cases[c].suffix);
        rc = rc || time_step(&b, name, step_lists, cases[c].runs, mean);
        snprintf(name, sizeof name, "pfh_kernel_%s", cases[c].suffix);
        rc = rc || time_step(&b, name, step_pfh_kernel, cases[c].runs, mean);
    }
    if (!rc)
        rc = grip_kdtree3d_build(b.ctx, b.xyz, b.n, &tree) != GRIP_OK;
    if (!rc) { /* the small case's keypoints: every 100th point */
        rc = cpu_case(&b, tree, "fpfh", GRIP_FPFH_DIM, 100, 1);
        rc = rc || cpu_case(&b, tree, "pfh", GRIP_PFH_DIM, 100, 0);
    }
    grip_kdtree3d_free(tree);
    grip_neighborhoods_cuda_free(&b.lists);
    grip_cuda_free(small_keys);
    grip_cuda_free(b.out_dev);
    grip_cuda_free(b.keys_dev);
    grip_surface_cuda_free(b.surface);
    free(keys);
    free(b.normals);
    free(b.xyz);
    grip_ctx_free(b.ctx);
    return rc;
}
