/* bench_kdtree3d_cuda.c -- times the GPU kd-tree (src/spatial/kdtree3d_cuda.h) on 1e6 points: a uniform cube
 * ([-1, 1]^3) and a 2.5D surface (a height field sampled row by row, as a range scan). Build from device points
 * and from host points; exact k-nearest search (k = 1 and 10) of 1e6 queries that are other points (uniform in
 * the cube, or other samples of the surface), of the points themselves passed as queries, and of the tree's own
 * points (queries NULL, taken in tree order); queries and results in device memory. CUDA events around each call,
 * 2 warm-ups, the median of 20 runs. Every search's first 4096 rows are checked against the CPU twin
 * (grip_kdtree3d_knn, ids and distance bits). The floor of a search is the bytes it must move at least (the
 * points once, the queries once, the results once) over the device bandwidth measured by a 1 GiB
 * device-to-device copy. Prints one line per measurement (key=value words); exits 1 on a mismatch.
 * Usage: bench_kdtree3d_cuda [n] (default 1000000). Not a test. */
#define _POSIX_C_SOURCE 200809L
#include "core/ctx.h"
#include "core/cuda_bridge.h"
#include "spatial/kdtree3d.h"
#include "spatial/kdtree3d_cuda.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 20
#define WARMUPS 2
#define CHECKED_ROWS 4096

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

static float *cube_points(size_t n, uint64_t seed)
{
    float *p = malloc(n * 3 * sizeof *p);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; p && i < 3 * n; ++i)
        p[i] = rng_uniform(&x, -1.0f, 1.0f);
    return p;
}

/* The surface z = f(x, y) over [-1, 1]^2: smooth bumps plus 1 mm of noise. */
static float height(float x, float y, uint64_t *r)
{
    return 0.3f * sinf(2.5f * x) * cosf(1.5f * y) + 0.1f * sinf(7.0f * x + 3.0f * y) + rng_uniform(r, -1e-3f, 1e-3f);
}

/* n points of the surface in scan order: rows of a sqrt(n) x sqrt(n) grid, jittered within their pixel
 * (random = 1: uniform (x, y) in any order instead, for queries). */
static float *surface_points(size_t n, uint64_t seed, int random)
{
    float *p = malloc(n * 3 * sizeof *p);
    uint64_t r = seed * 0x9E3779B97F4A7C15ull + 1;
    size_t w = (size_t)ceil(sqrt((double)n));
    float pixel = 2.0f / (float)w;
    for (size_t i = 0; p && i < n; ++i) {
        float x = random ? rng_uniform(&r, -1.0f, 1.0f) : -1.0f + pixel * ((float)(i % w) + rng_uniform(&r, 0, 1));
        float y = random ? rng_uniform(&r, -1.0f, 1.0f) : -1.0f + pixel * ((float)(i / w) + rng_uniform(&r, 0, 1));
        p[3 * i] = x;
        p[3 * i + 1] = y;
        p[3 * i + 2] = height(x, y, &r);
    }
    return p;
}

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float median(float *ms, int n)
{
    qsort(ms, (size_t)n, sizeof *ms, compare_floats);
    return ms[n / 2];
}

/* Device bandwidth in GB/s: bytes read plus bytes written by a 1 GiB device-to-device copy (median of 5). */
static double device_bandwidth(void)
{
    size_t bytes = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess)
        return 0.0;
    cudaMemset(a, 1, bytes);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float ms[5];
    for (int r = -1; r < 5; ++r) {
        cudaEventRecord(e0, 0);
        cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        if (r >= 0)
            cudaEventElapsedTime(&ms[r], e0, e1);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return 2.0 * (double)bytes / (median(ms, 5) * 1e-3) * 1e-9;
}

typedef struct bench_cloud {
    const char *name;
    float *xyz, *queries; /* host: n x 3 each */
    void *dxyz, *dqueries;
    size_t n;
} bench_cloud;

static cudaEvent_t ev_start, ev_stop;

static float elapsed_ms(void)
{
    float t = 0.0f;
    cudaEventSynchronize(ev_stop);
    cudaEventElapsedTime(&t, ev_start, ev_stop);
    return t;
}

/* Median build time from host (src_host) or device points; returns a negative value on failure. */
static float time_build(grip_ctx *ctx, const bench_cloud *c, int src_host, uint32_t leaf)
{
    float ms[REPS];
    for (int r = -WARMUPS; r < REPS; ++r) {
        grip_kdtree3d_cuda *t = NULL;
        cudaEventRecord(ev_start, 0);
        grip_status st = grip_kdtree3d_cuda_build(ctx, src_host ? c->xyz : c->dxyz, c->n,
                                                  src_host ? GRIP_MEM_HOST : GRIP_MEM_CUDA, leaf, &t);
        cudaEventRecord(ev_stop, 0);
        float e = elapsed_ms();
        grip_kdtree3d_cuda_free(t);
        if (st != GRIP_OK) {
            fprintf(stderr, "build failed: %s\n", ctx->last_error);
            return -1.0f;
        }
        if (r >= 0)
            ms[r] = e;
    }
    return median(ms, REPS);
}

/* The first CHECKED_ROWS rows of a search against the CPU twin; returns 1 when identical. */
static int check_rows(const grip_kdtree3d *cpu, const float *queries, size_t m, uint32_t k, const uint32_t *ids,
                      const float *d)
{
    uint32_t cids[GRIP_KDTREE3D_CUDA_MAX_K];
    float cd[GRIP_KDTREE3D_CUDA_MAX_K];
    for (size_t i = 0; i < m && i < CHECKED_ROWS; ++i) {
        size_t found = grip_kdtree3d_knn(cpu, queries + 3 * i, k, cids, cd);
        for (size_t j = 0; j < k; ++j) {
            uint32_t want = j < found ? cids[j] : UINT32_MAX;
            float wd = j < found ? cd[j] : INFINITY;
            if (ids[i * k + j] != want || memcmp(&d[i * k + j], &wd, sizeof wd) != 0)
                return 0;
        }
    }
    return 1;
}

/* Times one search mode: "others" (the cloud's query set), "points" (xyz passed as queries), "tree" (NULL). */
static int bench_search(grip_ctx *ctx, const bench_cloud *c, const grip_kdtree3d_cuda *t, const grip_kdtree3d *cpu,
                        const char *mode, uint32_t k, uint32_t leaf, double bandwidth)
{
    size_t m = c->n;
    const float *dq = strcmp(mode, "others") == 0 ? c->dqueries : strcmp(mode, "points") == 0 ? c->dxyz : NULL;
    const float *hq = strcmp(mode, "others") == 0 ? c->queries : c->xyz;
    void *dids = NULL, *dd = NULL;
    uint32_t *ids = malloc(m * k * sizeof *ids);
    float *d = malloc(m * k * sizeof *d), ms[REPS];
    int ok = ids && d && grip_cuda_alloc(ctx, m * k * sizeof(uint32_t), &dids) == GRIP_OK &&
             grip_cuda_alloc(ctx, m * k * sizeof(float), &dd) == GRIP_OK;
    for (int r = -WARMUPS; ok && r < REPS; ++r) {
        cudaEventRecord(ev_start, 0);
        grip_status st = grip_kdtree3d_cuda_knn(ctx, t, dq, m, GRIP_MEM_CUDA, k, dids, dd, GRIP_MEM_CUDA);
        cudaEventRecord(ev_stop, 0);
        float e = elapsed_ms();
        if (st != GRIP_OK) {
            fprintf(stderr, "knn failed: %s\n", ctx->last_error);
            ok = 0;
        }
        if (r >= 0)
            ms[r] = e;
    }
    ok = ok && grip_cuda_copy_to_host(ctx, ids, dids, m * k * sizeof(uint32_t)) == GRIP_OK &&
         grip_cuda_copy_to_host(ctx, d, dd, m * k * sizeof(float)) == GRIP_OK && check_rows(cpu, hq, m, k, ids, d);
    if (ok) {
        float med = median(ms, REPS);
        double bytes = 12.0 * (double)c->n + (dq ? 12.0 * (double)m : 0.0) + 8.0 * (double)m * k;
        double floor_ms = bytes / (bandwidth * 1e9) * 1e3;
        printf("kdtree3d_cuda op=knn cloud=%s n=%zu queries=%s m=%zu k=%u leaf=%u median_ms=%.4f runs=%d "
               "mqueries_per_s=%.1f floor_bytes=%.0f floor_ms=%.4f floor_fraction=%.4f cpu_check=identical\n",
               c->name, c->n, mode, m, k, leaf, (double)med, REPS, (double)m / med * 1e-3, bytes, floor_ms,
               floor_ms / med);
    } else {
        printf("kdtree3d_cuda op=knn cloud=%s n=%zu queries=%s k=%u leaf=%u FAILED (%s)\n", c->name, c->n, mode, k,
               leaf, ctx->last_error[0] ? ctx->last_error : "cpu check mismatch");
    }
    grip_cuda_free(dids);
    grip_cuda_free(dd);
    free(ids);
    free(d);
    return ok;
}

/* Build times, then the searches, with leaf size `leaf`; the search modes only with `all_modes`. */
static int bench_cloud_leaf(grip_ctx *ctx, const bench_cloud *c, const grip_kdtree3d *cpu, uint32_t leaf,
                            int all_modes, double bandwidth)
{
    static const char *modes[] = {"others", "points", "tree"};
    float dev = time_build(ctx, c, 0, leaf), host = time_build(ctx, c, 1, leaf);
    if (dev < 0 || host < 0)
        return 0;
    printf("kdtree3d_cuda op=build cloud=%s n=%zu src=device leaf=%u median_ms=%.4f runs=%d\n", c->name, c->n, leaf,
           (double)dev, REPS);
    printf("kdtree3d_cuda op=build cloud=%s n=%zu src=host leaf=%u median_ms=%.4f runs=%d\n", c->name, c->n, leaf,
           (double)host, REPS);
    grip_kdtree3d_cuda *t = NULL;
    if (grip_kdtree3d_cuda_build(ctx, c->dxyz, c->n, GRIP_MEM_CUDA, leaf, &t) != GRIP_OK)
        return 0;
    int ok = 1;
    for (int mi = 0; mi < (all_modes ? 3 : 1); ++mi) {
        ok &= bench_search(ctx, c, t, cpu, modes[mi], 1, leaf, bandwidth);
        ok &= bench_search(ctx, c, t, cpu, modes[mi], 10, leaf, bandwidth);
    }
    grip_kdtree3d_cuda_free(t);
    return ok;
}

static int bench_one_cloud(grip_ctx *ctx, bench_cloud *c, double bandwidth)
{
    static const uint32_t leaves[] = {4, 8, 32};
    int device = -1, ok = 0;
    grip_kdtree3d *cpu = NULL;
    if (c->xyz && c->queries && grip_kdtree3d_build(ctx, c->xyz, c->n, &cpu) == GRIP_OK &&
        grip_cuda_upload(ctx, c->xyz, c->n * 3 * sizeof(float), &c->dxyz, &device) == GRIP_OK &&
        grip_cuda_upload(ctx, c->queries, c->n * 3 * sizeof(float), &c->dqueries, &device) == GRIP_OK) {
        ok = bench_cloud_leaf(ctx, c, cpu, GRIP_KDTREE3D_CUDA_LEAF_DEFAULT, 1, bandwidth);
        for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; ++i)
            ok &= bench_cloud_leaf(ctx, c, cpu, leaves[i], 0, bandwidth);
    } else {
        fprintf(stderr, "%s: set-up failed: %s\n", c->name, ctx->last_error);
    }
    grip_kdtree3d_free(cpu);
    grip_cuda_free(c->dxyz);
    grip_cuda_free(c->dqueries);
    free(c->xyz);
    free(c->queries);
    return ok;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1000000;
    grip_ctx *ctx = NULL;
    if (grip_ctx_new(NULL, &ctx) != GRIP_OK || grip_ctx_device_count(ctx) <= 0) {
        fprintf(stderr, "no usable CUDA device\n");
        return 77;
    }
    cudaEventCreate(&ev_start);
    cudaEventCreate(&ev_stop);
    double bandwidth = device_bandwidth();
    printf("kdtree3d_cuda op=bandwidth d2d_copy_gb_per_s=%.0f\n", bandwidth);
    bench_cloud cube = {"cube", cube_points(n, 1), cube_points(n, 2), NULL, NULL, n};
    bench_cloud surface = {"surface", surface_points(n, 3, 0), surface_points(n, 4, 1), NULL, NULL, n};
    int ok = bench_one_cloud(ctx, &cube, bandwidth);
    ok &= bench_one_cloud(ctx, &surface, bandwidth);
    cudaEventDestroy(ev_start);
    cudaEventDestroy(ev_stop);
    grip_ctx_free(ctx);
    return ok ? 0 : 1;
}
