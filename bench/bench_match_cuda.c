/* bench_match_cuda.c -- times the `knn` match stage (k = 1) on the GPU with and without the mutual filter, whose
 * reverse search runs over the reference rows the lists name (src/match/match_mutual.c), beside the same reverse
 * search over every reference row (what a column minimum of the whole distance matrix costs: a CUDA search of all
 * n rows against the m queries), and the stage on the CPU where that stays inside a few seconds. Each figure is the
 * wall time of whole calls as a host sees them (host queries in, host matches out, selection included): a warm-up,
 * then the median of 5. The GPU's mutual correspondences are checked equal to the CPU's, bit for bit, where the
 * CPU runs. Rows: knn_bench_rows.h.
 * Usage: bench_match_cuda [DIMxNxM[:uniform|shot|fpfh] ...] (n reference rows, m queries); without arguments the
 * tutorial's size (352 x 686 model rows x 3,747 scene rows), 1e5 x 1e5 at D = 352 and 33, and 1e6 rows x 1e5
 * queries at D = 352. Not a test: it prints a table and exits 1 on a mismatch or failure. */
#define _POSIX_C_SOURCE 200809L
#include "core/array.h"
#include "core/ctx.h"
#include "index/bruteforce_cuda.h"
#include "knn_bench_rows.h"
#include "stages/registry.h"
#include "stages/stage.h"
#include "host_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 5
#define CPU_MAX_WORK 2e10 /* n x m x dim beyond which the CPU stage is not timed */

typedef struct match_case {
    size_t dim, n, m;
    char data[16];
} match_case;

static grip_stage *stage_new(grip_ctx *ctx, const grip_stage_impl *impl, const grip_kv *kv, uint32_t n_kv)
{
    grip_stage *st = NULL;
    if (grip_stage_create(impl, ctx, kv, n_kv, &st) != GRIP_OK)
        fprintf(stderr, "stage: %s\n", ctx->last_error);
    return st;
}

/* Median ms of match() calls; *kept gets the last call's matches (the caller releases them). Negative on failure. */
static double time_match(grip_ctx *ctx, const char *device, const char *mutual, grip_index *index,
                         const grip_array *queries, grip_matches **kept)
{
    const grip_kv kv[] = {{"device", device}, {"k", "1"}, {"mutual", mutual}};
    grip_stage *st = stage_new(ctx, &grip_match_knn, kv, 3);
    double ms[REPS];
    *kept = NULL;
    for (int r = -1; st && r < REPS; ++r) {
        if (*kept)
            (*kept)->release(*kept);
        *kept = NULL;
        const double t0 = host_now_ms();
        if (grip_match_knn.match(st, index, queries, GRIP_MEM_HOST, kept) != GRIP_OK) {
            fprintf(stderr, "match: %s\n", ctx->last_error);
            grip_stage_destroy(st);
            return -1;
        }
        if (r >= 0)
            ms[r] = host_now_ms() - t0;
    }
    grip_stage_destroy(st);
    if (!st)
        return -1;
    qsort(ms, REPS, sizeof ms[0], host_compare_doubles);
    return ms[REPS / 2];
}

/* Median ms of the reverse search over all n rows: the queries uploaded as a handle (the default options, as the
 * stage's default index has), every row searched (k = 1). */
static double time_reverse_all(grip_ctx *ctx, const float *ref, const float *q, const match_case *c)
{
    const grip_bruteforce_cuda_options options = GRIP_BRUTEFORCE_CUDA_OPTIONS_DEFAULT;
    uint32_t *ids = malloc(c->n * sizeof *ids);
    float *d = malloc(c->n * sizeof *d);
    double ms[REPS];
    int ok = ids && d;
    if (!ok)
        fprintf(stderr, "reverse search: out of host memory\n");
    for (int r = -1; ok && r < REPS; ++r) {
        const double t0 = host_now_ms();
        grip_bruteforce_cuda_ref *by_query = NULL;
        ok = grip_bruteforce_cuda_ref_upload(ctx, q, c->m, c->dim, &options, &by_query) == GRIP_OK &&
             grip_bruteforce_cuda_search(ctx, by_query, ref, c->n, 1, INFINITY, ids, d) == GRIP_OK;
        grip_bruteforce_cuda_ref_free(by_query);
        if (!ok)
            fprintf(stderr, "reverse search: %s\n", ctx->last_error);
        else if (r >= 0)
            ms[r] = host_now_ms() - t0;
    }
    free(ids);
    free(d);
    if (!ok)
        return -1;
    qsort(ms, REPS, sizeof ms[0], host_compare_doubles);
    return ms[REPS / 2];
}

static grip_index *index_build(grip_ctx *ctx, const char *device, const float *ref, const match_case *c)
{
    const grip_kv kv = {"device", device};
    grip_stage *st = stage_new(ctx, &grip_index_bruteforce, &kv, 1);
    grip_array rows = grip_array_host_view(GRIP_F32, c->n, c->dim, (void *)ref);
    grip_index *ix = NULL;
    if (st && grip_index_bruteforce.build(st, &rows, NULL, &ix) != GRIP_OK)
        fprintf(stderr, "index: %s\n", ctx->last_error);
    grip_stage_destroy(st);
    return ix;
}

static int same_matches(const grip_matches *a, const grip_matches *b)
{
    if (a->count != b->count)
        return 0;
    const grip_array *x[] = {&a->query, &a->reference, &a->sqdist}, *y[] = {&b->query, &b->reference, &b->sqdist};
    for (size_t i = 0; i < 3; ++i)
        if (a->count && memcmp(x[i]->data, y[i]->data, (size_t)a->count * 4) != 0)
            return 0;
    return 1;
}

/* One line of the table; returns 1 when everything ran and agreed. */
static int run_case(grip_ctx *ctx, const match_case *c)
{
    float *ref = NULL, *q = NULL;
    int ok = knn_bench_rows_make(c->data, c->dim, c->n, c->m, &ref, &q);
    grip_index *gpu_index = ok ? index_build(ctx, "cuda", ref, c) : NULL;
    grip_array queries = grip_array_host_view(GRIP_F32, c->m, c->dim, q);
    grip_matches *plain = NULL, *mutual = NULL, *cpu_mutual = NULL;
    double t_plain = -1, t_mutual = -1, t_all = -1, t_cpu = -1;
    if (gpu_index) {
        t_plain = time_match(ctx, "cuda", "false", gpu_index, &queries, &plain);
        t_mutual = time_match(ctx, "cuda", "true", gpu_index, &queries, &mutual);
        t_all = time_reverse_all(ctx, ref, q, c);
    }
    ok = t_plain >= 0 && t_mutual >= 0 && t_all >= 0;
    const char *agree = "not run";
    if (ok && (double)c->n * (double)c->m * (double)c->dim <= CPU_MAX_WORK) {
        grip_index *cpu_index = index_build(ctx, "cpu", ref, c);
        t_cpu = cpu_index ? time_match(ctx, "cpu", "true", cpu_index, &queries, &cpu_mutual) : -1;
        ok = t_cpu >= 0 && same_matches(cpu_mutual, mutual);
        agree = ok ? "identical" : "DIFFERENT";
        if (cpu_index)
            cpu_index->release(cpu_index);
    }
    printf("%4zu %8zu %8zu %-7s | %9.2f %9.2f %9.2f | %10.2f | %8llu %8llu | %s\n", c->dim, c->n, c->m, c->data,
           t_plain, t_mutual, t_all, t_cpu, plain ? (unsigned long long)plain->count : 0ull,
           mutual ? (unsigned long long)mutual->count : 0ull, agree);
    fflush(stdout);
    grip_matches *all[] = {plain, mutual, cpu_mutual};
    for (size_t i = 0; i < 3; ++i)
        if (all[i])
            all[i]->release(all[i]);
    if (gpu_index)
        gpu_index->release(gpu_index);
    free(ref);
    free(q);
    return ok;
}

int main(int argc, char **argv)
{
    static const match_case defaults[] = {
        {352, 686, 3747, "shot"},
        {352, 100000, 100000, "shot"},
        {33, 100000, 100000, "fpfh"},
        {352, 1000000, 100000, "shot"},
    };
    grip_ctx *ctx = NULL;
    if (grip_ctx_new(NULL, &ctx) != GRIP_OK || grip_ctx_device_count(ctx) <= 0) {
        fprintf(stderr, "no usable CUDA device\n");
        return 77;
    }
    printf(
        "   D        n        m data    |  GPU knn  +mutual  all rows |   CPU +mut |    pairs   mutual | GPU = CPU\n");
    int all_ok = 1;
    for (int i = 1; i < argc; ++i) {
        match_case c = {.data = "uniform"};
        int fields = sscanf(argv[i], "%zux%zux%zu:%15s", &c.dim, &c.n, &c.m, c.data);
        if (fields < 3 || !c.dim || !c.n || !c.m ||
            (strcmp(c.data, "uniform") && strcmp(c.data, "shot") && strcmp(c.data, "fpfh"))) {
            fprintf(stderr, "bad case '%s' (want DIMxNxM[:uniform|shot|fpfh])\n", argv[i]);
            grip_ctx_free(ctx);
            return 2;
        }
        all_ok &= run_case(ctx, &c);
    }
    for (size_t i = 0; argc == 1 && i < sizeof defaults / sizeof defaults[0]; ++i)
        all_ok &= run_case(ctx, &defaults[i]);
    grip_ctx_free(ctx);
    return all_ok ? 0 : 1;
}
