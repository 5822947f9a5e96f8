/* bench_knn_cuda.c -- times the exact GPU brute force (grip_bruteforce_cuda_search_device: queries and results already
 * on the device): CUDA events around each call, 2 warm-ups, the median of up to 20 runs. Checks the first queries
 * of each case against the CPU twin (ids and distances bit for bit).
 * Data: uniform, shot or fpfh rows, as knn_bench_torch.py makes them (knn_bench_rows.h).
 * Usage: bench_knn_cuda [--fp16] [--mma-sync] [case ...], a case being DIMxNxMxK[:DATA] (n reference rows, m
 * queries, DATA one of the above, uniform by default), e.g. 352x100000x100000x2:shot; without cases it runs the
 * issue's sizes. --fp16 screens in fp16 where the default is int8, --mma-sync with the portable kernel where the
 * default is the wgmma one (the `bruteforce` index's screen_precision and screen_kernel), for columns side by side.
 * Each line also gives the memory: the device bytes per reference row the uploaded handle holds (rows and
 * screening: grip_bruteforce_cuda_ref_device_bytes / n), and the peak device memory of one more search beyond what was
 * allocated before it (sampled, see mem_watch).
 * bench_knn_cuda [--fp16] [--mma-sync] largest DIM ROWS QUERIES: the largest-set run. ROWS uniform rows (made on
 * every core) are uploaded with grip_bruteforce_cuda_ref_upload, which streams them from host memory in batches when
 * the device cannot hold them; it prints whether they were streamed, the device bytes, the upload's and two searches'
 * wall time (QUERIES uniform queries from host memory, k = 2), the searches' peak device memory, and checks the first
 * 8 queries against the CPU twin's arithmetic (a host brute force over all rows, on every core: grip_bruteforce_search
 * itself would pack a second copy of a set this large). The host needs about twice the rows' bytes while a streamed
 * handle copies them.
 * Not a test: it prints a table and exits 1 on a mismatch. */
#define _POSIX_C_SOURCE 200809L
#include "core/ctx.h"
#include "core/cuda_bridge.h"
#include "index/bruteforce_cuda.h"
#include "index/bruteforce.h"
#include "knn_bench_rows.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MAX_REPS 20
#define CHECKED_QUERIES 256

typedef struct bench_case {
    size_t dim, n, m;
    uint32_t k;
    char data[16]; /* uniform, shot or fpfh */
} bench_case;

/* The case's reference rows and queries (malloc'd), or 0 when out of memory. */
static int make_data(const bench_case *c, float **ref, float **q)
{
    return knn_bench_rows_make(c->data, c->dim, c->n, c->m, ref, q);
}

/* Peak device memory of a call, sampled: a thread polls cudaMemGetInfo while the call runs and keeps the least free
 * memory seen; the peak is the free memory before the call less that minimum. The library allocates a search's
 * buffers with cudaMalloc as well as from the stream-ordered pool, so the pool's cudaMemPoolAttrUsedMemHigh alone
 * would miss some; polling sees both, but may miss an allocation that lives shorter than one poll (microseconds).
 * The pool is trimmed first, so that blocks it caches are not counted as used before the call. */
typedef struct mem_watch {
    int device;
    atomic_int stop;
    size_t free_before, min_free;
    pthread_t thread;
} mem_watch;

static void *mem_watch_poll(void *arg)
{
    mem_watch *w = arg;
    cudaSetDevice(w->device);
    while (!atomic_load(&w->stop)) {
        size_t free_bytes = 0, total = 0;
        if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes < w->min_free)
            w->min_free = free_bytes;
        struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

/* 0 on success; the caller then runs the call and mem_watch_end(). */
static int mem_watch_begin(mem_watch *w, int device)
{
    cudaMemPool_t pool;
    size_t total = 0;
    w->device = device;
    atomic_init(&w->stop, 0);
    if (cudaDeviceSynchronize() != cudaSuccess || cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess ||
        cudaMemPoolTrimTo(pool, 0) != cudaSuccess || cudaMemGetInfo(&w->free_before, &total) != cudaSuccess)
        return -1;
    w->min_free = w->free_before;
    return pthread_create(&w->thread, NULL, mem_watch_poll, w);
}

/* The peak bytes the call took beyond what was allocated before it (0 when the free memory only grew). */
static size_t mem_watch_end(mem_watch *w)
{
    atomic_store(&w->stop, 1);
    pthread_join(w->thread, NULL);
    return w->free_before > w->min_free ? w->free_before - w->min_free : 0;
}

static double mib(size_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median milliseconds of the timed runs, or a negative value when a call fails. */
static float time_search(grip_ctx *ctx, const grip_bruteforce_cuda_ref *ref, const float *dq, const bench_case *c,
                         void *dids, void *ddist, int *reps_out)
{
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    float ms[MAX_REPS];
    int reps = MAX_REPS;
    for (int r = -2; r < reps; ++r) {
        cudaEventRecord(start, 0);
        grip_status st = grip_bruteforce_cuda_search_device(ctx, ref, dq, c->m, c->k, INFINITY, dids, ddist);
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
               grip_bruteforce_search(ctx, ref, c->n, q, mq, c->dim, c->k, INFINITY, cids, cd) == GRIP_OK &&
               memcmp(cids, ids, mq * c->k * sizeof *cids) == 0 && memcmp(cd, dist, mq * c->k * sizeof *cd) == 0;
    free(cids);
    free(cd);
    return same;
}

static int run_case(grip_ctx *ctx, const bench_case *c, const grip_bruteforce_cuda_options *options)
{
    float *ref = NULL, *q = NULL;
    (void)make_data(c, &ref, &q);
    uint32_t *ids = calloc(c->m * c->k, sizeof *ids);
    float *dist = calloc(c->m * c->k, sizeof *dist);
    grip_bruteforce_cuda_ref *dref = NULL;
    void *dq = NULL, *dids = NULL, *ddist = NULL;
    int device = -1, ok = 0, reps = 0;
    if (ref && q && ids && dist && grip_bruteforce_cuda_ref_upload(ctx, ref, c->n, c->dim, options, &dref) == GRIP_OK &&
        grip_cuda_upload(ctx, q, c->m * c->dim * sizeof(float), &dq, &device) == GRIP_OK &&
        grip_cuda_upload(ctx, ids, c->m * c->k * sizeof(uint32_t), &dids, &device) == GRIP_OK &&
        grip_cuda_upload(ctx, dist, c->m * c->k * sizeof(float), &ddist, &device) == GRIP_OK) {
        float ms = time_search(ctx, dref, dq, c, dids, ddist, &reps);
        size_t peak = 0;
        mem_watch w;
        if (ms >= 0 && mem_watch_begin(&w, device) == 0) { /* one more search, untimed, for its memory */
            if (grip_bruteforce_cuda_search_device(ctx, dref, dq, c->m, c->k, INFINITY, dids, ddist) != GRIP_OK)
                ms = -1.0f;
            peak = mem_watch_end(&w);
        }
        if (ms >= 0 && grip_cuda_copy_to_host(ctx, ids, dids, c->m * c->k * sizeof(uint32_t)) == GRIP_OK &&
            grip_cuda_copy_to_host(ctx, dist, ddist, c->m * c->k * sizeof(float)) == GRIP_OK) {
            ok = check_prefix(ctx, ref, q, c, ids, dist);
            double pairs = (double)c->n * (double)c->m;
            /* 2 flops (multiply, add) per dimension and pair, as GEMM-based k-NN counts them */
            printf("D=%-4zu n=%-8zu m=%-8zu k=%-2u %-8s median %9.3f ms (%2d runs)  %8.1f Gpairs/s  %6.2f Tflop/s  "
                   "%6.0f B/row%s  search peak %8.1f MiB  cpu check of %d queries: %s\n",
                   c->dim, c->n, c->m, c->k, c->data, ms, reps, pairs / ms * 1e-6,
                   2.0 * pairs * (double)c->dim / ms * 1e-9,
                   (double)grip_bruteforce_cuda_ref_device_bytes(dref) / (double)(c->n ? c->n : 1),
                   grip_bruteforce_cuda_ref_is_streamed(dref) ? " (streamed)" : "", mib(peak), (int)checked_queries(c),
                   ok ? "identical" : "MISMATCH");
        }
    }
    if (!reps)
        fprintf(stderr, "D=%zu n=%zu m=%zu k=%u failed: %s\n", c->dim, c->n, c->m, c->k, ctx->last_error);
    grip_cuda_free(dq);
    grip_cuda_free(dids);
    grip_cuda_free(ddist);
    grip_bruteforce_cuda_ref_free(dref);
    free(ref);
    free(q);
    free(ids);
    free(dist);
    return ok;
}

/* ---- bench_knn_cuda largest DIM ROWS QUERIES ---- */

#define LARGEST_K 2
#define LARGEST_CHECKED 8
#define GEN_BLOCK_ROWS 65536

/* rows x dim floats uniform in [-1, 1), made on every core: each block of rows draws from its own xorshift stream,
 * so the rows do not depend on the number of threads. */
static float *uniform_rows_parallel(size_t rows, size_t dim, uint64_t seed)
{
    float *a = malloc(rows * dim * sizeof *a);
    if (!a)
        return NULL;
    const ptrdiff_t blocks = (ptrdiff_t)((rows + GEN_BLOCK_ROWS - 1) / GEN_BLOCK_ROWS);
#pragma omp parallel for schedule(dynamic, 1)
    for (ptrdiff_t b = 0; b < blocks; ++b) {
        uint64_t x = (seed + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)b + 1) * 0xD1B54A32D192ED03ull;
        x = x ? x : 1;
        for (int warm = 0; warm < 8; ++warm)
            (void)knn_bench_next_uniform(&x);
        const size_t r0 = (size_t)b * GEN_BLOCK_ROWS, r1 = r0 + GEN_BLOCK_ROWS < rows ? r0 + GEN_BLOCK_ROWS : rows;
        for (size_t i = r0 * dim; i < r1 * dim; ++i)
            a[i] = -1.0f + 2.0f * knn_bench_next_uniform(&x);
    }
    return a;
}

static void lists_pad(uint32_t *ids, float *dist, size_t cells)
{
    for (size_t i = 0; i < cells; ++i) {
        ids[i] = UINT32_MAX;
        dist[i] = INFINITY;
    }
}

/* One thread's share of host_knn_prefix: rows [r0, r1) against the LARGEST_CHECKED queries (transposed, qt[d * 8 +
 * j], so that the 8 sums of a row vectorise while each stays a float sum over the dimensions in order). A row or
 * query with a non-finite value gives a NaN or +inf distance, which never passes `d < last`: as on the CPU twin. */
static void host_knn_range(const float *ref, size_t r0, size_t r1, const float *qt, size_t dim, uint32_t *ids,
                           float *dist)
{
    lists_pad(ids, dist, LARGEST_CHECKED * LARGEST_K);
    for (size_t i = r0; i < r1; ++i) {
        const float *r = ref + i * dim;
        float acc[LARGEST_CHECKED] = {0};
        for (size_t d = 0; d < dim; ++d) {
            const float rd = r[d];
            for (int j = 0; j < LARGEST_CHECKED; ++j) {
                const float diff = qt[d * LARGEST_CHECKED + j] - rd;
                acc[j] += diff * diff;
            }
        }
        for (int j = 0; j < LARGEST_CHECKED; ++j)
            if (acc[j] < dist[j * LARGEST_K + LARGEST_K - 1])
                grip_knn_list_insert(ids + j * LARGEST_K, dist + j * LARGEST_K, LARGEST_K, (uint32_t)i, acc[j]);
    }
}

/* The CPU twin's lists (k = LARGEST_K, no bound) of the first LARGEST_CHECKED queries, by brute force over row ranges
 * on every core, the ranges' lists merged in row order (ties to the lower row). Returns 0 when out of memory. */
static int host_knn_prefix(const float *ref, size_t n, const float *q, size_t dim, uint32_t *ids, float *dist)
{
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    const size_t per_thread = LARGEST_CHECKED * LARGEST_K;
    float *qt = malloc(dim * LARGEST_CHECKED * sizeof *qt);
    uint32_t *tids = malloc((size_t)threads * per_thread * sizeof *tids);
    float *td = malloc((size_t)threads * per_thread * sizeof *td);
    int ok = qt && tids && td;
    if (ok) {
        for (size_t d = 0; d < dim; ++d)
            for (int j = 0; j < LARGEST_CHECKED; ++j)
                qt[d * LARGEST_CHECKED + j] = q[(size_t)j * dim + d];
#pragma omp parallel for schedule(static, 1) num_threads(threads)
        for (int t = 0; t < threads; ++t)
            host_knn_range(ref, n * (size_t)t / (size_t)threads, n * (size_t)(t + 1) / (size_t)threads, qt, dim,
                           tids + (size_t)t * per_thread, td + (size_t)t * per_thread);
        lists_pad(ids, dist, per_thread);
        for (int t = 0; t < threads; ++t)
            for (size_t e = 0; e < per_thread; ++e) {
                const size_t j = e / LARGEST_K, at = (size_t)t * per_thread + e;
                if (td[at] < dist[j * LARGEST_K + LARGEST_K - 1])
                    grip_knn_list_insert(ids + j * LARGEST_K, dist + j * LARGEST_K, LARGEST_K, tids[at], td[at]);
            }
    }
    free(qt);
    free(tids);
    free(td);
    return ok;
}

/* Two timed searches of the handle, host queries and results; returns the peak device memory seen, or sets
 * *failed. */
static size_t time_largest(grip_ctx *ctx, const grip_bruteforce_cuda_ref *dref, const float *q, size_t m, uint32_t *ids,
                           float *dist, double seconds[2], int *failed)
{
    size_t peak = 0;
    for (int r = 0; r < 2 && !*failed; ++r) {
        mem_watch w;
        const int watching = mem_watch_begin(&w, ctx->device) == 0;
        const double t0 = now_seconds();
        *failed = grip_bruteforce_cuda_search(ctx, dref, q, m, LARGEST_K, INFINITY, ids, dist) != GRIP_OK;
        seconds[r] = now_seconds() - t0;
        const size_t p = watching ? mem_watch_end(&w) : 0;
        peak = p > peak ? p : peak;
        fprintf(stderr, "largest: search %d: %.3f s\n", r + 1, seconds[r]);
    }
    return peak;
}

/* Uploads the rows, times two searches and checks the first queries; prints the line. A streamed handle keeps its
 * own host copy: *ref is then freed (and NULLed) to give the host its memory back, and the check reads the copy. */
static int largest_upload_search_check(grip_ctx *ctx, const grip_bruteforce_cuda_options *options, float **ref,
                                       const float *q, size_t dim, size_t n, size_t m, uint32_t *ids, float *dist)
{
    grip_bruteforce_cuda_ref *dref = NULL;
    const double t_up = now_seconds();
    if (grip_bruteforce_cuda_ref_upload(ctx, *ref, n, dim, options, &dref) != GRIP_OK) {
        fprintf(stderr, "largest: upload failed: %s\n", ctx->last_error);
        return 0;
    }
    const double up_seconds = now_seconds() - t_up;
    const int streamed = grip_bruteforce_cuda_ref_is_streamed(dref);
    if (streamed) {
        free(*ref);
        *ref = NULL;
    }
    const float *check_rows = streamed ? grip_bruteforce_cuda_ref_host_rows(dref) : *ref;
    fprintf(stderr, "largest: uploaded in %.1f s (%s); searching\n", up_seconds, streamed ? "streamed" : "resident");
    double seconds[2] = {0, 0};
    int failed = 0, ok = 0;
    const size_t peak = time_largest(ctx, dref, q, m, ids, dist, seconds, &failed);
    if (failed) {
        fprintf(stderr, "largest: search failed: %s\n", ctx->last_error);
    } else {
        uint32_t cids[LARGEST_CHECKED * LARGEST_K];
        float cd[LARGEST_CHECKED * LARGEST_K];
        ok = host_knn_prefix(check_rows, n, q, dim, cids, cd) && memcmp(cids, ids, sizeof cids) == 0 &&
             memcmp(cd, dist, sizeof cd) == 0;
        const size_t bytes = grip_bruteforce_cuda_ref_device_bytes(dref);
        printf("largest D=%-4zu n=%-10zu m=%-8zu k=%d  %-8s device %9.1f MiB (%6.0f B/row)  upload %7.2f s  "
               "search %8.3f s, again %8.3f s  search peak %9.1f MiB  cpu check of %d queries: %s\n",
               dim, n, m, LARGEST_K, streamed ? "streamed" : "resident", mib(bytes), (double)bytes / (double)n,
               up_seconds, seconds[0], seconds[1], mib(peak), LARGEST_CHECKED, ok ? "identical" : "MISMATCH");
    }
    grip_bruteforce_cuda_ref_free(dref);
    return ok;
}

/* The largest-set run (see the header); returns 1 when the checked queries are identical. */
static int run_largest(grip_ctx *ctx, const grip_bruteforce_cuda_options *options, size_t dim, size_t n, size_t m)
{
    const double t_make = now_seconds();
    float *ref = uniform_rows_parallel(n, dim, 1), *q = knn_bench_uniform_rows(m, dim, 2);
    uint32_t *ids = malloc(m * LARGEST_K * sizeof *ids);
    float *dist = malloc(m * LARGEST_K * sizeof *dist);
    int ok = 0;
    if (ref && q && ids && dist) {
        fprintf(stderr, "largest: %.1f GB of rows made in %.1f s; uploading\n", 4e-9 * (double)n * (double)dim,
                now_seconds() - t_make);
        ok = largest_upload_search_check(ctx, options, &ref, q, dim, n, m, ids, dist);
    } else {
        fprintf(stderr, "largest: out of host memory for %zu rows of %zu dims\n", n, dim);
    }
    free(ref);
    free(q);
    free(ids);
    free(dist);
    return ok;
}

/* bench_knn_cuda largest DIM ROWS QUERIES (argv[1] is "largest"): 2 when the arguments are bad, else 0 or 1 as main
 * returns. */
static int largest_main(grip_ctx *ctx, const grip_bruteforce_cuda_options *options, int argc, char **argv)
{
    char *end[3];
    const unsigned long long dim = argc == 5 ? strtoull(argv[2], &end[0], 10) : 0;
    const unsigned long long rows = argc == 5 ? strtoull(argv[3], &end[1], 10) : 0;
    const unsigned long long queries = argc == 5 ? strtoull(argv[4], &end[2], 10) : 0;
    if (argc != 5 || *end[0] || *end[1] || *end[2] || dim == 0 || rows == 0 || rows >= UINT32_MAX ||
        queries < LARGEST_CHECKED) {
        fprintf(stderr, "usage: bench_knn_cuda largest DIM ROWS QUERIES (ROWS < 2^32, QUERIES >= %d)\n",
                LARGEST_CHECKED);
        return 2;
    }
    return run_largest(ctx, options, (size_t)dim, (size_t)rows, (size_t)queries) ? 0 : 1;
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
    grip_bruteforce_cuda_options options = GRIP_BRUTEFORCE_CUDA_OPTIONS_DEFAULT;
    for (; argc > 1 && strncmp(argv[1], "--", 2) == 0; --argc, ++argv) {
        if (strcmp(argv[1], "--fp16") == 0) {
            options.precision = GRIP_BRUTEFORCE_CUDA_FP16;
        } else if (strcmp(argv[1], "--mma-sync") == 0) {
            options.kernel = GRIP_BRUTEFORCE_CUDA_KERNEL_MMA_SYNC;
        } else {
            fprintf(stderr, "unknown option '%s' (want --fp16 or --mma-sync)\n", argv[1]);
            grip_ctx_free(ctx);
            return 2;
        }
    }
    int all_ok = 1;
    if (argc > 1 && strcmp(argv[1], "largest") == 0) {
        const int rc = largest_main(ctx, &options, argc, argv);
        grip_ctx_free(ctx);
        return rc;
    }
    if (argc > 1) {
        for (int i = 1; i < argc; ++i) {
            bench_case c = {.data = "uniform"};
            int fields = sscanf(argv[i], "%zux%zux%zux%u:%15s", &c.dim, &c.n, &c.m, &c.k, c.data);
            if (fields < 4 || (strcmp(c.data, "uniform") && strcmp(c.data, "shot") && strcmp(c.data, "fpfh"))) {
                fprintf(stderr, "bad case '%s' (want DIMxNxMxK[:uniform|shot|fpfh])\n", argv[i]);
                return 2;
            }
            all_ok &= run_case(ctx, &c, &options);
        }
    } else {
        for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; ++i)
            all_ok &= run_case(ctx, &defaults[i], &options);
    }
    grip_ctx_free(ctx);
    return all_ok ? 0 : 1;
}
