/* bench_knn_cuda.c -- times the exact GPU brute force (grip_knn_cuda_search_device: queries and results already
 * on the device) on uniform random rows in [-1, 1]: CUDA events around each call, 2 warm-ups, the median of up
 * to 20 runs. Checks the first queries of each case against the CPU twin (ids and distances bit for bit).
 * Usage: bench_knn_cuda [case ...], a case being DIMxNxMxK (n reference rows, m queries), e.g. 352x100000x100000x2;
 * without arguments it runs the sizes. Not a test: it prints a table and exits 1 on a mismatch. */
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
} bench_case;

static float *uniform_rows(size_t rows, size_t dim, uint64_t seed)
{
    float *a = malloc(rows * dim * sizeof *a);
    if (!a)
        return NULL;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < rows * dim; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        a[i] = -1.0f + 2.0f * (float)((x >> 40) / (double)(1ull << 24));
    }
    return a;
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

/* The first CHECKED_QUERIES queries' lists against the CPU twin; returns 1 when equal bit for bit. */
static int check_prefix(grip_ctx *ctx, const float *ref, const float *q, const bench_case *c, const uint32_t *ids,
                        const float *dist)
{
    size_t mq = c->m < CHECKED_QUERIES ? c->m : CHECKED_QUERIES;
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
    float *ref = uniform_rows(c->n, c->dim, 1), *q = uniform_rows(c->m, c->dim, 2);
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
            /* 3 float ops (sub, mul, add) per dimension and pair: the exact kernel's arithmetic */
            printf("D=%-4zu n=%-8zu m=%-8zu k=%-2u  median %9.3f ms (%2d runs)  %8.1f Gpairs/s  %6.2f Tflop/s  "
                   "cpu check of %d queries: %s\n",
                   c->dim, c->n, c->m, c->k, ms, reps, pairs / ms * 1e-6, 3.0 * pairs * (double)c->dim / ms * 1e-9,
                   CHECKED_QUERIES, ok ? "identical" : "MISMATCH");
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
        {352, 686, 3747, 1},        /* the tutorial's matching: scene SHOTs against model SHOTs */
        {352, 100000, 100000, 2},   /* SHOT-sized, the 1e5 x 1e5 */
        {33, 100000, 100000, 2},    /* FPFH-sized */
        {3, 1000000, 1000000, 1},   /* 3D points, 1e6 x 1e6 */
    };
    grip_ctx *ctx = NULL;
    if (grip_ctx_new(NULL, &ctx) != GRIP_OK || grip_ctx_device_count(ctx) <= 0) {
        fprintf(stderr, "no usable CUDA device\n");
        return 77;
    }
    int all_ok = 1;
    if (argc > 1) {
        for (int i = 1; i < argc; ++i) {
            bench_case c;
            if (sscanf(argv[i], "%zux%zux%zux%u", &c.dim, &c.n, &c.m, &c.k) != 4) {
                fprintf(stderr, "bad case '%s' (want DIMxNxMxK)\n", argv[i]);
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
