/* bench_knn_cuda.c -- times the exact GPU brute force (grip_knn_cuda_search_device: queries and results already
 * on the device): CUDA events around each call, 2 warm-ups, the median of up to 20 runs. Checks the first queries
 * of each case against the CPU twin (ids and distances bit for bit).
 * Data, after ../shared/tools/knn_bench_torch.py's make_desc() so that the two are compared on alike rows:
 *  - uniform: rows uniform in [-1, 1], queries drawn alike (no structure: the hardest case for a screening);
 *  - shot: SHOT-like rows u^4 / |u^4| (u uniform in [0, 1)), queries noisy copies of random rows (Gaussian noise
 *    of 0.25 x the rows' standard deviation, clamped at 0, renormalised);
 *  - fpfh: FPFH-like rows, 3 histograms of 11 bins of -log(u) each scaled to sum 100, queries noisy copies
 *    (same noise, clamped at 0).
 * Usage: bench_knn_cuda [case ...], a case being DIMxNxMxK[:DATA] (n reference rows, m queries, DATA one of the
 * above, uniform by default), e.g. 352x100000x100000x2:shot; without arguments it runs the sizes.
 * Not a test: it prints a table and exits 1 on a mismatch. */
#define _POSIX_C_SOURCE 200809L
#include "core/ctx.h"
#include "core/cuda_bridge.h"
#include "index/knn_cuda.h"
#include "index/knn_exact.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPS 20
#define CHECKED_QUERIES 256

typedef struct bench_case {
    size_t dim, n, m;
    uint32_t k;
    char data[16]; /* uniform, shot or fpfh */
} bench_case;

/* xorshift64: a uniform float in [0, 1) */
static float next_uniform(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (float)((*x >> 40) / (double)(1ull << 24));
}

static float next_gaussian(uint64_t *x)
{
    double u = 1.0 - next_uniform(x), v = next_uniform(x);
    return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

static float *uniform_rows(size_t rows, size_t dim, uint64_t seed)
{
    float *a = malloc(rows * dim * sizeof *a);
    if (!a)
        return NULL;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < rows * dim; ++i)
        a[i] = -1.0f + 2.0f * next_uniform(&x);
    return a;
}

static void normalise(float *row, size_t dim)
{
    double s = 0;
    for (size_t d = 0; d < dim; ++d)
        s += (double)row[d] * row[d];
    const float inv = s > 0 ? (float)(1.0 / sqrt(s)) : 0.0f;
    for (size_t d = 0; d < dim; ++d)
        row[d] *= inv;
}

/* Descriptor-like reference rows (shot: u^4 normalised; fpfh: 11-bin groups of -log u summing to 100). */
static float *descriptor_rows(const char *kind, size_t rows, size_t dim, uint64_t *x)
{
    float *a = malloc(rows * dim * sizeof *a);
    if (!a)
        return NULL;
    const int shot = strcmp(kind, "shot") == 0;
    for (size_t i = 0; i < rows; ++i) {
        float *r = a + i * dim;
        for (size_t d = 0; d < dim; ++d) {
            const float u = next_uniform(x);
            r[d] = shot ? u * u * u * u : -logf(u > 1e-12f ? u : 1e-12f);
        }
        if (shot) {
            normalise(r, dim);
            continue;
        }
        for (size_t d0 = 0; d0 < dim; d0 += 11) {
            double sum = 0;
            for (size_t d = d0; d < d0 + 11 && d < dim; ++d)
                sum += r[d];
            for (size_t d = d0; d < d0 + 11 && d < dim; ++d)
                r[d] = (float)(100.0 * r[d] / sum);
        }
    }
    return a;
}

/* Queries: noisy copies of random reference rows, as knn_bench_torch.py's make_desc(). */
static float *noisy_queries(const char *kind, const float *ref, size_t n, size_t m, size_t dim, uint64_t *x)
{
    float *q = malloc(m * dim * sizeof *q);
    if (!q)
        return NULL;
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n * dim; ++i) {
        s += ref[i];
        s2 += (double)ref[i] * ref[i];
    }
    const double mean = s / (double)(n * dim);
    const float sigma = (float)(0.25 * sqrt(s2 / (double)(n * dim) - mean * mean));
    for (size_t i = 0; i < m; ++i) {
        const float *src = ref + (size_t)(next_uniform(x) * (float)n) % n * dim;
        for (size_t d = 0; d < dim; ++d) {
            const float v = src[d] + sigma * next_gaussian(x);
            q[i * dim + d] = v > 0.0f ? v : 0.0f;
        }
        if (strcmp(kind, "shot") == 0)
            normalise(q + i * dim, dim);
    }
    return q;
}

/* The case's reference rows and queries (malloc'd), or 0 when out of memory. */
static int make_data(const bench_case *c, float **ref, float **q)
{
    if (strcmp(c->data, "uniform") == 0) {
        *ref = uniform_rows(c->n, c->dim, 1);
        *q = uniform_rows(c->m, c->dim, 2);
    } else {
        uint64_t x = 0x9E3779B97F4A7C15ull * (c->n + c->dim);
        *ref = descriptor_rows(c->data, c->n, c->dim, &x);
        *q = *ref ? noisy_queries(c->data, *ref, c->n, c->m, c->dim, &x) : NULL;
    }
    return *ref && *q;
}

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median milliseconds of the timed runs, or a negative value when a call fails. */
static float time_search(grip_ctx *ctx, const grip_knn_cuda_ref *ref, const float *dq, const bench_case *c,
                         void *dids, void *ddist, int *reps_out)
{
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    float ms[MAX_REPS];
    int reps = MAX_REPS;
    for (int r = -2; r < reps; ++r) {
        cudaEventRecord(start, 0);
        grip_status st = grip_knn_cuda_search_device(ctx, ref, dq, c->m, c->k, INFINITY, dids, ddist);
        cudaEventRecord(stop, 0);
        cudaEventSynchronize(stop);
        if (st != GRIP_OK) {
            fprintf(stderr, "search failed: %s\n", ctx->last_error);
            return -1.0f;
        }
        float t = 0;
        cudaEventElapsedTime(&t, start, stop);
        if (r == -1 && t > 1000.0f)
            reps = 5; /* keep slow cases inside the device lease */
        if (r >= 0)
            ms[r] = t;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    qsort(ms, (size_t)reps, sizeof ms[0], compare_floats);
    *reps_out = reps;
    return ms[reps / 2];
}

/* How many queries check_prefix compares: fewer on a large reference set, to keep the CPU's share inside the lease. */
static size_t checked_queries(const bench_case *c)
{
    size_t mq = c->m < CHECKED_QUERIES ? c->m : CHECKED_QUERIES;
    return c->n > 100000 && mq > 32 ? 32 : mq;
}

/* The first checked_queries() queries' lists against the CPU twin; returns 1 when equal bit for bit. */
static int check_prefix(grip_ctx *ctx, const float *ref, const float *q, const bench_case *c, const uint32_t *ids,
                        const float *dist)
{
    size_t mq = checked_queries(c);
    uint32_t *cids = malloc(mq * c->k * sizeof *cids);
    float *cd = malloc(mq * c->k * sizeof *cd);
    int same = cids && cd &&
               grip_knn_exact(ctx, ref, c->n, q, mq, c->dim, c->k, INFINITY, cids, cd) == GRIP_OK &&
               memcmp(cids, ids, mq * c->k * sizeof *cids) == 0 && memcmp(cd, dist, mq * c->k * sizeof *cd) == 0;
    free(cids);
    free(cd);
    return same;
}

static int run_case(grip_ctx *ctx, const bench_case *c)
{
    float *ref = NULL, *q = NULL;
    (void)make_data(c, &ref, &q);
    uint32_t *ids = calloc(c->m * c->k, sizeof *ids);
    float *dist = calloc(c->m * c->k, sizeof *dist);
    grip_knn_cuda_ref *dref = NULL;
    void *dq = NULL, *dids = NULL, *ddist = NULL;
    int device = -1, ok = 0, reps = 0;
    if (ref && q && ids && dist && grip_knn_cuda_ref_upload(ctx, ref, c->n, c->dim, &dref) == GRIP_OK &&
        grip_cuda_upload(ctx, q, c->m * c->dim * sizeof(float), &dq, &device) == GRIP_OK &&
        grip_cuda_upload(ctx, ids, c->m * c->k * sizeof(uint32_t), &dids, &device) == GRIP_OK &&
        grip_cuda_upload(ctx, dist, c->m * c->k * sizeof(float), &ddist, &device) == GRIP_OK) {
        float ms = time_search(ctx, dref, dq, c, dids, ddist, &reps);
        if (ms >= 0 && grip_cuda_copy_to_host(ctx, ids, dids, c->m * c->k * sizeof(uint32_t)) == GRIP_OK &&
            grip_cuda_copy_to_host(ctx, dist, ddist, c->m * c->k * sizeof(float)) == GRIP_OK) {
            ok = check_prefix(ctx, ref, q, c, ids, dist);
            double pairs = (double)c->n * (double)c->m;
            /* 2 flops (multiply, add) per dimension and pair, as GEMM-based k-NN counts them */
            printf("D=%-4zu n=%-8zu m=%-8zu k=%-2u %-8s median %9.3f ms (%2d runs)  %8.1f Gpairs/s  %6.2f Tflop/s  "
                   "cpu check of %d queries: %s\n",
                   c->dim, c->n, c->m, c->k, c->data, ms, reps, pairs / ms * 1e-6,
                   2.0 * pairs * (double)c->dim / ms * 1e-9, (int)checked_queries(c), ok ? "identical" : "MISMATCH");
        }
    }
    if (!reps)
        fprintf(stderr, "D=%zu n=%zu m=%zu k=%u failed: %s\n", c->dim, c->n, c->m, c->k, ctx->last_error);
    grip_cuda_free(dq);
    grip_cuda_free(dids);
    grip_cuda_free(ddist);
    grip_knn_cuda_ref_free(dref);
    free(ref);
    free(q);
    free(ids);
    free(dist);
    return ok;
}

int main(int argc, char **argv)
{
    static const bench_case defaults[] = {
        {352, 686, 3747, 1, "uniform"},        /* the tutorial's matching size: scene SHOTs against the model's */
        {352, 100000, 100000, 2, "shot"},      /* the 1e5 x 1e5, on knn_bench_torch.py's kind of rows */
        {352, 100000, 100000, 2, "uniform"},
        {33, 100000, 100000, 2, "fpfh"},
        {33, 100000, 100000, 2, "uniform"},
        {352, 1000000, 1000000, 2, "shot"},    /* the 1e6 x 1e6 */
        {33, 1000000, 1000000, 2, "fpfh"},
        {3, 1000000, 1000000, 1, "uniform"},   /* 3D points, 1e6 x 1e6 */
    };
    grip_ctx *ctx = NULL;
    if (grip_ctx_new(NULL, &ctx) != GRIP_OK || grip_ctx_device_count(ctx) <= 0) {
        fprintf(stderr, "no usable CUDA device\n");
        return 77;
    }
    int all_ok = 1;
    if (argc > 1) {
        for (int i = 1; i < argc; ++i) {
            bench_case c = {.data = "uniform"};
            int fields = sscanf(argv[i], "%zux%zux%zux%u:%15s", &c.dim, &c.n, &c.m, &c.k, c.data);
            if (fields < 4 || (strcmp(c.data, "uniform") && strcmp(c.data, "shot") && strcmp(c.data, "fpfh"))) {
                fprintf(stderr, "bad case '%s' (want DIMxNxMxK[:uniform|shot|fpfh])\n", argv[i]);
                return 2;
            }
            all_ok &= run_case(ctx, &c);
        }
    } else {
        for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; ++i)
            all_ok &= run_case(ctx, &defaults[i]);
    }
    grip_ctx_free(ctx);
    return all_ok ? 0 : 1;
}
