/* test_knn_cuda.c (gpu) -- the CUDA backend of the `bruteforce` index against its CPU twin grip_bruteforce_search: ids
 * and squared distances identical bit for bit (memcmp) on uniform, clustered and duplicate-heavy data with negative
 * coordinates, NaN/inf rows and queries, D = 3, 33, 128, 352, k = 1, 2, 5, 32 (also k > n), sizes that are no
 * multiple of the kernel's tiles (64 queries x 128 rows), inclusive max_sqdist bounds; device-resident queries
 * and results; bad arguments; device out of memory leaves the context usable. Dimensions >= 32 with k <= 16 take
 * the tensor-core screened path (cuda/index/bruteforce_tensor.cu), also tested at its edges: rows far from the origin,
 * magnitudes
 * 1e-9 .. 1e15, near-duplicates beyond fp16's resolution, k = 16 against 17.
 * Streamed references (the rows kept in host memory, searched in batches, forced by
 * grip_bruteforce_cuda_ref_upload_batched with batches of 1, 7, 128 and 1000 rows): the same bit-for-bit comparison on
 * uniform, duplicate-heavy (ties across batch boundaries go to the lower row) and NaN/inf data, D = 3, 33, 352, k = 1,
 * 2, 5, 32; device-resident queries; queries cut into passes (grip_bruteforce_cuda_ref_limit_queries) for resident and
 * streamed handles; the handle's reports. With GRIP_TEST_FILL_DEVICE=1, the automatic fallback on a device really
 * filled up (run that case alone: it starves any GPU work beside it). Skips (77) without a usable device.
 * Every handle is uploaded with the options of the variant the first argument names (test_variants; the defaults
 * without one), each variant its own ctest test (tests/CMakeLists.txt); bad options are refused in every one. */
#include "test_support.h"
#include "core/cuda_bridge.h"
#include "index/bruteforce_cuda.h"
#include "index/bruteforce.h"

#ifdef GRIP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The screening's settings the suite runs under, test_options the chosen one's. On a Hopper GPU the defaults
 * screen with the wgmma kernel in int8; there the fp16 operands and the portable mma.sync kernel are tested too
 * (elsewhere those variants run the mma.sync kernel again). Real searches re-screen only a few queries: `rescreen`
 * re-screens every screened one (cuda/index/bruteforce_rescreen.cu), and `rescreen_overflow` with room for 4 rows a
 * query, so that many go on to the exact kernel. */
static const struct test_variant {
    const char *name;
    grip_bruteforce_cuda_options options;
} test_variants[] = {
    {"default", GRIP_BRUTEFORCE_CUDA_OPTIONS_DEFAULT},
    {"mma_sync",
     {GRIP_BRUTEFORCE_CUDA_INT8, GRIP_BRUTEFORCE_CUDA_KERNEL_MMA_SYNC, GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY, 0}},
    {"fp16", {GRIP_BRUTEFORCE_CUDA_FP16, GRIP_BRUTEFORCE_CUDA_KERNEL_AUTO, GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY, 0}},
    {"rescreen",
     {GRIP_BRUTEFORCE_CUDA_INT8, GRIP_BRUTEFORCE_CUDA_KERNEL_AUTO, GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY, 1}},
    {"rescreen_overflow", {GRIP_BRUTEFORCE_CUDA_INT8, GRIP_BRUTEFORCE_CUDA_KERNEL_AUTO, 4, 1}},
};
static grip_bruteforce_cuda_options test_options = GRIP_BRUTEFORCE_CUDA_OPTIONS_DEFAULT;

/* rows on the grid of halves in [-1, 1], half of them copies of `pool` rows shared by every call with the same
 * pool_seed: many exact duplicates, and every distance is a multiple of 1/4, so most distances tie exactly */
static float *make_duplicates(uint64_t *s, size_t rows, size_t dim, uint64_t pool_seed, size_t pool)
{
    float *a = malloc(rows * dim * sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (size_t i = 0; i < rows; ++i) {
        uint64_t ps = (pool_seed + (size_t)grip_test_uniform(s, 0.0f, (float)pool) % pool) * 0x9E3779B97F4A7C15ull;
        int copy = grip_test_uniform(s, 0.0f, 1.0f) < 0.5f;
        for (size_t d = 0; d < dim; ++d)
            a[i * dim + d] = 0.5f * (float)((int)grip_test_uniform(copy ? &ps : s, 0.0f, 5.0f) - 2);
    }
    return a;
}

/* spoils every `every`-th row (from `first`) with a NaN, or an inf every third time, at a random dimension */
static void spoil_rows(uint64_t *s, float *a, size_t rows, size_t dim, size_t first, size_t every)
{
    for (size_t i = first, t = 0; i < rows; i += every, ++t) {
        size_t d = (size_t)grip_test_uniform(s, 0.0f, (float)dim) % dim;
        a[i * dim + d] = t % 3 == 2 ? -INFINITY : NAN;
    }
}

typedef struct knn_result {
    uint32_t *ids;
    float *sqdist;
} knn_result;

static knn_result result_alloc(size_t m, uint32_t k)
{
    size_t cells = m * k > 0 ? m * k : 1;
    knn_result r = {malloc(cells * sizeof(uint32_t)), malloc(cells * sizeof(float))};
    ck_assert_ptr_nonnull(r.ids);
    ck_assert_ptr_nonnull(r.sqdist);
    memset(r.ids, 0xa5, cells * sizeof(uint32_t)); /* poison: every cell must be written */
    memset(r.sqdist, 0xa5, cells * sizeof(float));
    return r;
}

static void result_free(knn_result *r)
{
    free(r->ids);
    free(r->sqdist);
}

/* Neighbours listed over all queries (to prove a case is not vacuous). */
static size_t count_listed(const knn_result *r, size_t m, uint32_t k)
{
    size_t c = 0;
    for (size_t i = 0; i < m * k; ++i)
        c += r->ids[i] != UINT32_MAX;
    return c;
}

/* Asserts that two results are identical bit for bit, naming the first difference. */
static void assert_same(const knn_result *cpu, const knn_result *gpu, size_t n, size_t m, size_t dim, uint32_t k,
                        float max_sqdist, size_t batch_rows)
{
    for (size_t i = 0; i < m * k; ++i) {
        if (cpu->ids[i] != gpu->ids[i] || memcmp(&cpu->sqdist[i], &gpu->sqdist[i], sizeof(float)) != 0)
            ck_abort_msg("n=%zu m=%zu dim=%zu k=%u bound=%g batch=%zu: query %zu rank %zu: cpu (%u, %.9g) "
                         "gpu (%u, %.9g)", n, m, dim, k, (double)max_sqdist, batch_rows, i / k, i % k, cpu->ids[i],
                         (double)cpu->sqdist[i], gpu->ids[i], (double)gpu->sqdist[i]);
    }
}

/* Runs the CPU twin and the GPU on the same input, the reference streamed in batches of batch_rows rows (0: uploaded
 * as usual, resident); asserts identical bits. Returns the neighbours listed. */
static size_t compare_batched(const float *ref, size_t n, const float *queries, size_t m, size_t dim, uint32_t k,
                              float max_sqdist, size_t batch_rows)
{
    grip_ctx *ctx = grip_test_ctx();
    knn_result cpu = result_alloc(m, k), gpu = result_alloc(m, k);
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, n, queries, m, dim, k, max_sqdist, cpu.ids, cpu.sqdist), GRIP_OK);
    grip_bruteforce_cuda_ref *dev = NULL;
    if (batch_rows)
        ck_assert_int_eq(grip_bruteforce_cuda_ref_upload_batched(ctx, ref, n, dim, batch_rows, &test_options, &dev),
                         GRIP_OK);
    else
        ck_assert_int_eq(grip_bruteforce_cuda_ref_upload(ctx, ref, n, dim, &test_options, &dev), GRIP_OK);
    ck_assert_int_eq(grip_bruteforce_cuda_ref_is_streamed(dev), batch_rows > 0);
    ck_assert_int_eq(grip_bruteforce_cuda_search(ctx, dev, queries, m, k, max_sqdist, gpu.ids, gpu.sqdist), GRIP_OK);
    assert_same(&cpu, &gpu, n, m, dim, k, max_sqdist, batch_rows);
    size_t listed = count_listed(&gpu, m, k);
    grip_bruteforce_cuda_ref_free(dev);
    result_free(&cpu);
    result_free(&gpu);
    grip_ctx_free(ctx);
    return listed;
}

/* Runs the CPU twin and the GPU (resident reference) on the same input; asserts identical bits. Returns the
 * neighbours listed. */
static size_t compare_with_cpu(const float *ref, size_t n, const float *queries, size_t m, size_t dim, uint32_t k,
                               float max_sqdist)
{
    return compare_batched(ref, n, queries, m, dim, k, max_sqdist, 0);
}

static const uint32_t all_ks[] = {1, 2, 5, 32};
#define N_KS (sizeof all_ks / sizeof all_ks[0])

START_TEST(uniform_every_dim_and_k)
{
    static const size_t dims[] = {3, 33, 128, 352};
    uint64_t s = 101;
    for (size_t di = 0; di < 4; ++di) {
        const size_t dim = dims[di], n = dim > 100 ? 1001 : 3001, m = dim > 100 ? 201 : 333;
        float *ref = grip_test_uniform_rows(&s, n, dim, -1.0f, 1.0f);
        float *q = grip_test_uniform_rows(&s, m, dim, -1.0f, 1.0f);
        for (size_t ki = 0; ki < N_KS; ++ki)
            ck_assert_uint_eq(compare_with_cpu(ref, n, q, m, dim, all_ks[ki], INFINITY), m * all_ks[ki]);
        free(ref);
        free(q);
    }
}
END_TEST

START_TEST(clustered)
{
    uint64_t s = 102;
    const size_t n = 2049, m = 515, dim = 33;
    float *ref = grip_test_clustered_rows(&s, n, dim, 7), *q = grip_test_clustered_rows(&s, m, dim, 7);
    for (size_t ki = 0; ki < N_KS; ++ki)
        ck_assert_uint_eq(compare_with_cpu(ref, n, q, m, dim, all_ks[ki], INFINITY), m * all_ks[ki]);
    free(ref);
    free(q);
    /* SHOT-sized rows, clustered as descriptors of one object are */
    ref = grip_test_clustered_rows(&s, 700, 352, 5);
    q = grip_test_clustered_rows(&s, 150, 352, 5);
    ck_assert_uint_eq(compare_with_cpu(ref, 700, q, 150, 352, 2, INFINITY), 150 * 2);
    free(ref);
    free(q);
}
END_TEST

/* Exact ties everywhere (distances are multiples of 1/4): the tie order to the lower row is what is tested. */
START_TEST(duplicates_with_negative_coordinates)
{
    static const size_t dims[] = {3, 33};
    uint64_t s = 103;
    for (size_t di = 0; di < 2; ++di) {
        const size_t dim = dims[di], n = 3001, m = 700;
        float *ref = make_duplicates(&s, n, dim, 1000, 40), *q = make_duplicates(&s, m, dim, 1000, 40);
        for (size_t ki = 0; ki < N_KS; ++ki)
            ck_assert_uint_eq(compare_with_cpu(ref, n, q, m, dim, all_ks[ki], INFINITY), m * all_ks[ki]);
        /* bound 0: only exact duplicates, inclusive */
        ck_assert_uint_gt(compare_with_cpu(ref, n, q, m, dim, 32, 0.0f), 0);
        free(ref);
        free(q);
    }
}
END_TEST

START_TEST(non_finite_rows_and_queries)
{
    static const size_t dims[] = {3, 33, 352};
    uint64_t s = 104;
    for (size_t di = 0; di < 3; ++di) {
        const size_t dim = dims[di], n = 1500, m = 300;
        float *ref = grip_test_uniform_rows(&s, n, dim, -2.0f, 2.0f);
        float *q = grip_test_uniform_rows(&s, m, dim, -2.0f, 2.0f);
        spoil_rows(&s, ref, n, dim, 0, 7); /* row 0 too: the first candidate of every query is gone */
        spoil_rows(&s, q, m, dim, 3, 5);
        const size_t finite_queries = m - (m - 3 + 4) / 5;
        for (size_t ki = 0; ki < N_KS; ++ki)
            ck_assert_uint_eq(compare_with_cpu(ref, n, q, m, dim, all_ks[ki], INFINITY),
                              finite_queries * all_ks[ki]);
        free(ref);
        free(q);
    }
    /* every reference row spoiled: nothing is ever listed */
    float *ref = grip_test_uniform_rows(&s, 200, 3, -1.0f, 1.0f), *q = grip_test_uniform_rows(&s, 70, 3, -1.0f, 1.0f);
    spoil_rows(&s, ref, 200, 3, 0, 1);
    ck_assert_uint_eq(compare_with_cpu(ref, 200, q, 70, 3, 5, INFINITY), 0);
    free(ref);
    free(q);
}
END_TEST

START_TEST(inclusive_bounds)
{
    uint64_t s = 105;
    const size_t n = 1001, m = 333;
    float *ref = grip_test_uniform_rows(&s, n, 3, -1.0f, 1.0f), *q = grip_test_uniform_rows(&s, m, 3, -1.0f, 1.0f);
    size_t some = compare_with_cpu(ref, n, q, m, 3, 5, 0.01f); /* many queries have fewer than 5 within 0.1 */
    ck_assert(some > 0 && some < m * 5);
    some = compare_with_cpu(ref, n, q, m, 3, 32, 0.05f);
    ck_assert(some > 0 && some < m * 32);
    /* a bound equal to a distance that occurs keeps that row: the 3rd distance of query 0 */
    grip_ctx *ctx = grip_test_ctx();
    knn_result cpu = result_alloc(1, 3);
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, n, q, 1, 3, 3, INFINITY, cpu.ids, cpu.sqdist), GRIP_OK);
    ck_assert_uint_ge(compare_with_cpu(ref, n, q, 1, 3, 32, cpu.sqdist[2]), 3);
    result_free(&cpu);
    grip_ctx_free(ctx);
    free(ref);
    free(q);
    /* D = 128 with a bound inside the distance range */
    ref = grip_test_uniform_rows(&s, 900, 128, 0.0f, 1.0f);
    q = grip_test_uniform_rows(&s, 100, 128, 0.0f, 1.0f);
    some = compare_with_cpu(ref, 900, q, 100, 128, 5, 15.5f); /* ~2.6 sigma under the mean */
    ck_assert(some > 0 && some < 100 * 5);
    free(ref);
    free(q);
}
END_TEST

START_TEST(small_and_empty_sets)
{
    uint64_t s = 106;
    float *ref = grip_test_uniform_rows(&s, 5, 33, -1.0f, 1.0f), *q = grip_test_uniform_rows(&s, 65, 33, -1.0f, 1.0f);
    ck_assert_uint_eq(compare_with_cpu(ref, 5, q, 65, 33, 32, INFINITY), 65 * 5); /* k > n: padded */
    ck_assert_uint_eq(compare_with_cpu(ref, 5, q, 1, 33, 2, INFINITY), 2);      /* one query */
    ck_assert_uint_eq(compare_with_cpu(ref, 1, q, 64, 33, 1, INFINITY), 64);    /* one row, one full block */
    ck_assert_uint_eq(compare_with_cpu(ref, 0, q, 65, 33, 5, INFINITY), 0);     /* no rows at all */
    free(ref);
    free(q);
}
END_TEST

/* A handful of queries (the screening's uncertified leftovers; cuda/index/bruteforce_few.cu): a full query group and
 * partial ones, rows split into ranges, each range split among warps; ties everywhere, negative coordinates, non-finite
 * rows and queries, dimensions with and without float4 rows, a bound. k = 32 keeps D = 33 and 352 off the
 * screening. */
START_TEST(few_queries_over_row_ranges)
{
    static const size_t dims[] = {3, 7, 33, 352};
    static const size_t ms[] = {1, 5, 13, 16};
    uint64_t s = 108;
    for (size_t di = 0; di < 4; ++di) {
        const size_t dim = dims[di], n = dim > 100 ? 6007 : 20011;
        float *ref = make_duplicates(&s, n, dim, 1000, 40), *q = make_duplicates(&s, 16, dim, 1000, 40);
        spoil_rows(&s, ref, n, dim, 5, 97);
        spoil_rows(&s, q, 16, dim, 11, 50); /* query 11 */
        for (size_t mi = 0; mi < 4; ++mi) {
            const size_t m = ms[mi], finite = m - (m > 11);
            ck_assert_uint_eq(compare_with_cpu(ref, n, q, m, dim, 32, INFINITY), finite * 32);
            if (dim < 32)
                ck_assert_uint_eq(compare_with_cpu(ref, n, q, m, dim, 1, INFINITY), finite);
        }
        ck_assert_uint_gt(compare_with_cpu(ref, n, q, 13, dim, 32, 0.0f), 0); /* exact duplicates only */
        free(ref);
        free(q);
    }
}
END_TEST

/* Many blocks and tiles: a tile boundary inside every block, queries and rows past the last full tile. */
START_TEST(many_tiles)
{
    uint64_t s = 107;
    const size_t n = 20000 + 77, m = 5000 + 13;
    float *ref = grip_test_uniform_rows(&s, n, 3, -1.0f, 1.0f), *q = grip_test_uniform_rows(&s, m, 3, -1.0f, 1.0f);
    ck_assert_uint_eq(compare_with_cpu(ref, n, q, m, 3, 32, INFINITY), m * 32);
    ck_assert_uint_eq(compare_with_cpu(ref, n, q, m, 3, 1, INFINITY), m);
    free(ref);
    free(q);
}
END_TEST

static void scale_rows(float *a, size_t first, size_t rows, size_t every, size_t dim, float factor)
{
    for (size_t i = first; i < rows; i += every)
        for (size_t d = 0; d < dim; ++d)
            a[i * dim + d] *= factor;
}

static const uint32_t screened_ks[] = {1, 2, 16, 17}; /* 16: the screened path's largest k; 17: the exact kernel */
#define N_SCREENED_KS (sizeof screened_ks / sizeof screened_ks[0])

static void compare_screened_ks(const float *ref, size_t n, const float *q, size_t m, size_t dim, size_t per_k)
{
    for (size_t ki = 0; ki < N_SCREENED_KS; ++ki)
        ck_assert_uint_eq(compare_with_cpu(ref, n, q, m, dim, screened_ks[ki], INFINITY), per_k * screened_ks[ki]);
}

/* The screened path (dim >= 32, k <= 16) where its screening is hardest: rows far from the origin with a
 * tiny spread (the centring), magnitudes fp16 cannot hold unscaled (1e9, 1e-9) and past the screened range
 * (1e15: the exact kernel serves all), near-duplicates closer than fp16 tells apart (the per-query fallback), and
 * single queries past the screened range among screened ones. */
START_TEST(screened_path_edges)
{
    uint64_t s = 109;
    const size_t n = 2000, m = 300, dim = 64;
    float *ref = grip_test_uniform_rows(&s, n, dim, 1000.0f, 1000.5f);
    float *q = grip_test_uniform_rows(&s, m, dim, 1000.0f, 1000.5f);
    compare_screened_ks(ref, n, q, m, dim, m);
    free(ref);
    free(q);
    static const float factors[] = {1e9f, 1e-9f, 1e15f};
    for (size_t fi = 0; fi < 3; ++fi) {
        ref = grip_test_uniform_rows(&s, n, dim, -1.0f, 1.0f);
        q = grip_test_uniform_rows(&s, m, dim, -1.0f, 1.0f);
        scale_rows(ref, 0, n, 1, dim, factors[fi]);
        scale_rows(q, 0, m, 1, dim, factors[fi]);
        compare_screened_ks(ref, n, q, m, dim, m);
        free(ref);
        free(q);
    }
    /* four noisy copies (1e-5) of each base row, queried by another noisy copy */
    const size_t base = 500, nd = 128;
    float *rows = grip_test_uniform_rows(&s, base, nd, -1.0f, 1.0f);
    ref = malloc(4 * base * nd * sizeof *ref);
    q = malloc(base * nd * sizeof *q);
    ck_assert_ptr_nonnull(ref);
    ck_assert_ptr_nonnull(q);
    for (size_t i = 0; i < 4 * base * nd; ++i)
        ref[i] = rows[i % (base * nd)] + grip_test_uniform(&s, -1e-5f, 1e-5f);
    for (size_t i = 0; i < base * nd; ++i)
        q[i] = rows[i] + grip_test_uniform(&s, -1e-5f, 1e-5f);
    compare_screened_ks(ref, 4 * base, q, base, nd, base);
    /* every 7th query scaled past the screened range: those alone go to the exact kernel */
    scale_rows(q, 0, base, 7, nd, 1e15f);
    for (size_t ki = 0; ki < N_SCREENED_KS; ++ki)
        compare_with_cpu(ref, 4 * base, q, base, nd, screened_ks[ki], INFINITY);
    free(rows);
    free(ref);
    free(q);
}
END_TEST

/* SHOT-sized clustered rows at the screened path's k, and a bound inside the distance range. */
START_TEST(screened_clustered_shot)
{
    uint64_t s = 110;
    float *ref = grip_test_clustered_rows(&s, 3000, 352, 9), *q = grip_test_clustered_rows(&s, 400, 352, 9);
    compare_screened_ks(ref, 3000, q, 400, 352, 400);
    free(ref);
    free(q);
    ref = grip_test_uniform_rows(&s, 3000, 352, 0.0f, 1.0f);
    q = grip_test_uniform_rows(&s, 400, 352, 0.0f, 1.0f);
    size_t some = compare_with_cpu(ref, 3000, q, 400, 352, 16, 48.5f); /* ~3 sigma under the mean 58.7 */
    ck_assert(some > 0 && some < 400 * 16);
    free(ref);
    free(q);
}
END_TEST

/* Queries and results in device memory give what the host search gives. */
START_TEST(device_resident_queries_and_results)
{
    grip_ctx *ctx = grip_test_ctx();
    uint64_t s = 108;
    const size_t n = 1234, m = 321, dim = 33;
    const uint32_t k = 5;
    float *ref = grip_test_uniform_rows(&s, n, dim, -1.0f, 1.0f), *q = grip_test_uniform_rows(&s, m, dim, -1.0f, 1.0f);
    grip_bruteforce_cuda_ref *dev = NULL;
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload(ctx, ref, n, dim, &test_options, &dev), GRIP_OK);
    knn_result host = result_alloc(m, k), back = result_alloc(m, k);
    ck_assert_int_eq(grip_bruteforce_cuda_search(ctx, dev, q, m, k, INFINITY, host.ids, host.sqdist), GRIP_OK);
    void *dq = NULL, *dids = NULL, *ddist = NULL;
    int device = -1;
    ck_assert_int_eq(grip_cuda_upload(ctx, q, m * dim * sizeof(float), &dq, &device), GRIP_OK);
    ck_assert_int_eq(grip_cuda_upload(ctx, back.ids, m * k * sizeof(uint32_t), &dids, &device), GRIP_OK);
    ck_assert_int_eq(grip_cuda_upload(ctx, back.sqdist, m * k * sizeof(float), &ddist, &device), GRIP_OK);
    ck_assert_int_eq(grip_bruteforce_cuda_search_device(ctx, dev, dq, m, k, INFINITY, dids, ddist), GRIP_OK);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, back.ids, dids, m * k * sizeof(uint32_t)), GRIP_OK);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, back.sqdist, ddist, m * k * sizeof(float)), GRIP_OK);
    ck_assert_int_eq(memcmp(host.ids, back.ids, m * k * sizeof(uint32_t)), 0);
    ck_assert_int_eq(memcmp(host.sqdist, back.sqdist, m * k * sizeof(float)), 0);
    ck_assert_uint_eq(count_listed(&back, m, k), m * k);
    grip_cuda_free(dq);
    grip_cuda_free(dids);
    grip_cuda_free(ddist);
    grip_bruteforce_cuda_ref_free(dev);
    result_free(&host);
    result_free(&back);
    free(ref);
    free(q);
    grip_ctx_free(ctx);
}
END_TEST

/* ---- streamed references: the rows in host memory, searched batch by batch ---- */

static const size_t batch_sizes[] = {1, 7, 128, 1000};
#define N_BATCHES (sizeof batch_sizes / sizeof batch_sizes[0])

/* Reference rows for a batch size: every batch is a separate screening and search, so batches of 1 and 7 rows get
 * smaller sets (still 150 and 100 batches, many more than the k-lists hold); 1000 is no multiple of the tiles.
 * Small sizes (compute-sanitizer, grip_test_size): fewer batches of the same sizes, each launching the same kernels:
 * 40 and 13 batches (more than the k-lists hold), 5 and 2 of 128 and 1000 rows, the last batch short every time. */
static size_t rows_for_batch(size_t batch_rows, size_t dim)
{
    if (batch_rows == 1)
        return grip_test_size(150, 40);
    if (batch_rows == 7)
        return grip_test_size(701, 87);
    return grip_test_size(dim > 100 ? 1501 : 3001, batch_rows == 128 ? 601 : 1501);
}

START_TEST(streamed_uniform_every_dim_and_k)
{
    static const size_t dims[] = {3, 33, 352};
    uint64_t s = 201;
    for (size_t di = 0; di < 3; ++di) {
        const size_t dim = dims[di], m = dim > 100 ? 101 : 133;
        for (size_t bi = 0; bi < N_BATCHES; ++bi) {
            const size_t n = rows_for_batch(batch_sizes[bi], dim);
            float *ref = grip_test_uniform_rows(&s, n, dim, -1.0f, 1.0f);
            float *q = grip_test_uniform_rows(&s, m, dim, -1.0f, 1.0f);
            for (size_t ki = 0; ki < N_KS; ++ki) {
                const size_t per_query = all_ks[ki] < n ? all_ks[ki] : n;
                ck_assert_uint_eq(compare_batched(ref, n, q, m, dim, all_ks[ki], INFINITY, batch_sizes[bi]),
                                  m * per_query);
            }
            free(ref);
            free(q);
        }
    }
}
END_TEST

/* Exact ties everywhere, copies of the same rows in many batches: a tie across a batch boundary goes to the lower
 * row, as in one pass. */
START_TEST(streamed_duplicates_tie_to_the_lower_row)
{
    static const size_t dims[] = {3, 33};
    uint64_t s = 202;
    for (size_t di = 0; di < 2; ++di) {
        const size_t dim = dims[di], m = 200;
        for (size_t bi = 0; bi < N_BATCHES; ++bi) {
            const size_t n = rows_for_batch(batch_sizes[bi], dim);
            float *ref = make_duplicates(&s, n, dim, 2000, 40), *q = make_duplicates(&s, m, dim, 2000, 40);
            for (size_t ki = 0; ki < N_KS; ++ki) {
                const size_t per_query = all_ks[ki] < n ? all_ks[ki] : n;
                ck_assert_uint_eq(compare_batched(ref, n, q, m, dim, all_ks[ki], INFINITY, batch_sizes[bi]),
                                  m * per_query);
            }
            /* bound 0: only exact duplicates, inclusive */
            ck_assert_uint_gt(compare_batched(ref, n, q, m, dim, 32, 0.0f, batch_sizes[bi]), 0);
            free(ref);
            free(q);
        }
    }
}
END_TEST

/* NaN/inf rows in every batch (every 7th row, row 0 too; with batches of 1 row, batches of nothing but a NaN row),
 * NaN queries; then a set whose every row is spoiled. */
START_TEST(streamed_non_finite_rows_and_queries)
{
    static const size_t dims[] = {3, 33, 352};
    uint64_t s = 203;
    for (size_t di = 0; di < 3; ++di) {
        const size_t dim = dims[di], m = 120;
        for (size_t bi = 0; bi < N_BATCHES; ++bi) {
            const size_t n = rows_for_batch(batch_sizes[bi], dim);
            float *ref = grip_test_uniform_rows(&s, n, dim, -2.0f, 2.0f);
            float *q = grip_test_uniform_rows(&s, m, dim, -2.0f, 2.0f);
            spoil_rows(&s, ref, n, dim, 0, 7);
            spoil_rows(&s, q, m, dim, 3, 5);
            const size_t finite_queries = m - (m - 3 + 4) / 5;
            for (size_t ki = 0; ki < N_KS; ++ki)
                ck_assert_uint_eq(compare_batched(ref, n, q, m, dim, all_ks[ki], INFINITY, batch_sizes[bi]),
                                  finite_queries * all_ks[ki]);
            free(ref);
            free(q);
        }
    }
    float *ref = grip_test_uniform_rows(&s, 200, 33, -1.0f, 1.0f), *q = grip_test_uniform_rows(&s, 70, 33, -1.0f, 1.0f);
    spoil_rows(&s, ref, 200, 33, 0, 1);
    ck_assert_uint_eq(compare_batched(ref, 200, q, 70, 33, 5, INFINITY, 7), 0);
    free(ref);
    free(q);
}
END_TEST

/* A search with queries and results on the device, against a handle of either kind, cut into passes of `limit`
 * queries (0: one pass); asserts the CPU twin's bits. */
static void compare_device_io(grip_ctx *ctx, grip_bruteforce_cuda_ref *dev, const float *ref, size_t n, const float *q,
                              size_t m, size_t dim, uint32_t k, size_t limit)
{
    knn_result cpu = result_alloc(m, k), back = result_alloc(m, k);
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, n, q, m, dim, k, INFINITY, cpu.ids, cpu.sqdist), GRIP_OK);
    void *dq = NULL, *dids = NULL, *ddist = NULL;
    int device = -1;
    ck_assert_int_eq(grip_cuda_upload(ctx, q, m * dim * sizeof(float), &dq, &device), GRIP_OK);
    ck_assert_int_eq(grip_cuda_upload(ctx, back.ids, m * k * sizeof(uint32_t), &dids, &device), GRIP_OK);
    ck_assert_int_eq(grip_cuda_upload(ctx, back.sqdist, m * k * sizeof(float), &ddist, &device), GRIP_OK);
    grip_bruteforce_cuda_ref_limit_queries(dev, limit);
    ck_assert_int_eq(grip_bruteforce_cuda_search_device(ctx, dev, dq, m, k, INFINITY, dids, ddist), GRIP_OK);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, back.ids, dids, m * k * sizeof(uint32_t)), GRIP_OK);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, back.sqdist, ddist, m * k * sizeof(float)), GRIP_OK);
    assert_same(&cpu, &back, n, m, dim, k, INFINITY, limit);
    /* the same through host memory */
    knn_result host = result_alloc(m, k);
    ck_assert_int_eq(grip_bruteforce_cuda_search(ctx, dev, q, m, k, INFINITY, host.ids, host.sqdist), GRIP_OK);
    assert_same(&cpu, &host, n, m, dim, k, INFINITY, limit);
    grip_bruteforce_cuda_ref_limit_queries(dev, 0);
    grip_cuda_free(dq);
    grip_cuda_free(dids);
    grip_cuda_free(ddist);
    result_free(&cpu);
    result_free(&back);
    result_free(&host);
}

/* Device-resident queries and results against a streamed reference, and queries cut into passes (50 queries a
 * pass: 7 passes, the last one short) for both kinds of handle, on the screened path (k = 5) and the exact one. */
START_TEST(streamed_device_queries_and_query_passes)
{
    grip_ctx *ctx = grip_test_ctx();
    uint64_t s = 204;
    /* small sizes: 3 batches of up to 300 rows, 3 passes of up to 50 queries (121 of one query), the last ones short */
    const size_t n = grip_test_size(1234, 634), m = grip_test_size(321, 121), dim = 33;
    float *ref = make_duplicates(&s, n, dim, 3000, 40), *q = make_duplicates(&s, m, dim, 3000, 40);
    grip_bruteforce_cuda_ref *streamed = NULL, *resident = NULL;
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload_batched(ctx, ref, n, dim, 300, &test_options, &streamed), GRIP_OK);
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload(ctx, ref, n, dim, &test_options, &resident), GRIP_OK);
    static const uint32_t ks[] = {5, 32};
    for (size_t ki = 0; ki < 2; ++ki) {
        compare_device_io(ctx, streamed, ref, n, q, m, dim, ks[ki], 0);
        compare_device_io(ctx, streamed, ref, n, q, m, dim, ks[ki], 50);
        compare_device_io(ctx, resident, ref, n, q, m, dim, ks[ki], 50);
        compare_device_io(ctx, resident, ref, n, q, m, dim, ks[ki], 1);
    }
    grip_bruteforce_cuda_ref_free(streamed);
    grip_bruteforce_cuda_ref_free(resident);
    free(ref);
    free(q);
    grip_ctx_free(ctx);
}
END_TEST

/* What a handle says about itself, batches larger than the set, an empty streamed set, bad batch sizes. */
START_TEST(streamed_handle_reports)
{
    grip_ctx *ctx = grip_test_ctx();
    uint64_t s = 205;
    const size_t n = 1000, m = 77, dim = 33;
    float *ref = grip_test_uniform_rows(&s, n, dim, -1.0f, 1.0f), *q = grip_test_uniform_rows(&s, m, dim, -1.0f, 1.0f);
    grip_bruteforce_cuda_ref *streamed = NULL, *resident = NULL;
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload_batched(ctx, ref, n, dim, 128, &test_options, &streamed), GRIP_OK);
    ck_assert_int_eq(grip_bruteforce_cuda_ref_is_streamed(streamed), 1);
    ck_assert_ptr_null(grip_bruteforce_cuda_ref_rows(streamed));
    ck_assert_ptr_nonnull(grip_bruteforce_cuda_ref_host_rows(streamed));
    ck_assert_int_eq(memcmp(grip_bruteforce_cuda_ref_host_rows(streamed), ref, n * dim * sizeof(float)), 0);
    const size_t streamed_bytes = grip_bruteforce_cuda_ref_device_bytes(streamed);
    ck_assert_uint_ge(streamed_bytes, 128 * dim * sizeof(float));
    ck_assert_uint_lt(streamed_bytes, n * dim * sizeof(float));
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload(ctx, ref, n, dim, &test_options, &resident), GRIP_OK);
    ck_assert_int_eq(grip_bruteforce_cuda_ref_is_streamed(resident), 0);
    ck_assert_ptr_nonnull(grip_bruteforce_cuda_ref_rows(resident));
    ck_assert_ptr_null(grip_bruteforce_cuda_ref_host_rows(resident));
    /* the rows and their screening: dim 33 is screened, 20 bytes and at least 64 bytes a row (the wgmma kernel's
     * rows are padded to 64 int8 or 48 fp16 dimensions, the mma.sync kernel's to 64 fp16) */
    ck_assert_uint_ge(grip_bruteforce_cuda_ref_device_bytes(resident), n * (dim * sizeof(float) + 64 + 20));
    ck_assert_uint_eq(grip_bruteforce_cuda_ref_device_bytes(NULL), 0);
    ck_assert_int_eq(grip_bruteforce_cuda_ref_is_streamed(NULL), 0);
    grip_bruteforce_cuda_ref_free(streamed);
    grip_bruteforce_cuda_ref_free(resident);
    /* one batch larger than the set */
    ck_assert_uint_eq(compare_batched(ref, n, q, m, dim, 5, INFINITY, 5000), m * 5);
    /* no rows at all: padding only */
    ck_assert_uint_eq(compare_batched(ref, 0, q, m, dim, 5, INFINITY, 7), 0);
    /* batches of no rows: refused, and *out reset */
    grip_bruteforce_cuda_ref *dev = (grip_bruteforce_cuda_ref *)ref;
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload_batched(ctx, ref, n, dim, 0, &test_options, &dev), GRIP_EINVAL);
    ck_assert_ptr_null(dev);
    free(ref);
    free(q);
    grip_ctx_free(ctx);
}
END_TEST

#ifdef GRIP_HAVE_CUDA
/* Takes all but `leave` bytes of the device's free memory (cudaMalloc, outside grip's pool), or NULL. */
static void *fill_device(size_t leave)
{
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess || free_bytes <= leave)
        return NULL;
    void *filler = NULL;
    for (size_t take = free_bytes - leave; take > leave; take -= (size_t)64 << 20) {
        if (cudaMalloc(&filler, take) == cudaSuccess)
            return filler;
        (void)cudaGetLastError();
    }
    return NULL;
}
#endif

/* The automatic fallback on a device really filled up: 2e6 rows of 33 dims (264 MB) uploaded from host memory, and
 * copied from device memory, with only ~200 MB left free: both handles come out streamed, with the CPU twin's
 * answers. Runs only with GRIP_TEST_FILL_DEVICE=1: while it runs, any other GPU work would find no memory. */
START_TEST(streamed_when_the_device_is_full)
{
#ifdef GRIP_HAVE_CUDA
    if (!getenv("GRIP_TEST_FILL_DEVICE")) {
        fprintf(stderr, "streamed_when_the_device_is_full: skipped (set GRIP_TEST_FILL_DEVICE=1, run it alone)\n");
        return;
    }
    grip_ctx *ctx = grip_test_ctx();
    uint64_t s = 206;
    const size_t n = 2000000, m = 64, dim = 33;
    const uint32_t k = 5;
    float *ref = grip_test_uniform_rows(&s, n, dim, -1.0f, 1.0f), *q = grip_test_uniform_rows(&s, m, dim, -1.0f, 1.0f);
    void *dref = NULL;
    int device = -1;
    ck_assert_int_eq(grip_cuda_upload(ctx, ref, n * dim * sizeof(float), &dref, &device), GRIP_OK);
    knn_result cpu = result_alloc(m, k), gpu = result_alloc(m, k);
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, n, q, m, dim, k, INFINITY, cpu.ids, cpu.sqdist), GRIP_OK);
    void *filler = fill_device((size_t)200 << 20);
    ck_assert_ptr_nonnull(filler);
    grip_bruteforce_cuda_ref *from_host = NULL, *from_device = NULL;
    grip_status up_host = grip_bruteforce_cuda_ref_upload(ctx, ref, n, dim, &test_options, &from_host);
    grip_status up_device = grip_bruteforce_cuda_ref_copy_device(ctx, dref, n, dim, &test_options, &from_device);
    grip_status search_host = from_host
                                  ? grip_bruteforce_cuda_search(ctx, from_host, q, m, k, INFINITY, gpu.ids, gpu.sqdist)
                                  : GRIP_EINVAL;
    const int same_host = search_host == GRIP_OK && memcmp(cpu.ids, gpu.ids, m * k * sizeof(uint32_t)) == 0 &&
                          memcmp(cpu.sqdist, gpu.sqdist, m * k * sizeof(float)) == 0;
    memset(gpu.ids, 0xa5, m * k * sizeof(uint32_t));
    grip_status search_device = from_device ? grip_bruteforce_cuda_search(ctx, from_device, q, m, k, INFINITY, gpu.ids,
                                                                          gpu.sqdist)
                                            : GRIP_EINVAL;
    (void)cudaFree(filler); /* before any assertion, so that a failure leaves the device usable */
    ck_assert_msg(up_host == GRIP_OK && up_device == GRIP_OK, "uploads: %d %d: %s", up_host, up_device,
                  ctx->last_error);
    ck_assert_int_eq(grip_bruteforce_cuda_ref_is_streamed(from_host), 1);
    ck_assert_int_eq(grip_bruteforce_cuda_ref_is_streamed(from_device), 1);
    ck_assert_msg(search_host == GRIP_OK && search_device == GRIP_OK, "searches: %d %d: %s", search_host, search_device,
                  ctx->last_error);
    ck_assert(same_host);
    assert_same(&cpu, &gpu, n, m, dim, k, INFINITY, 0);
    grip_bruteforce_cuda_ref_free(from_host);
    grip_bruteforce_cuda_ref_free(from_device);
    grip_cuda_free(dref);
    result_free(&cpu);
    result_free(&gpu);
    free(ref);
    free(q);
    grip_ctx_free(ctx);
#endif
}
END_TEST

START_TEST(bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    float rows[6] = {0, 1, 2, 3, 4, 5};
    uint32_t ids[2 * 33];
    float d[2 * 33];
    grip_bruteforce_cuda_ref *dev = (grip_bruteforce_cuda_ref *)rows; /* must be reset to NULL on failure */
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload(ctx, rows, 2, 0, &test_options, &dev), GRIP_EINVAL);
    ck_assert_ptr_null(dev);
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload(ctx, NULL, 2, 3, &test_options, &dev), GRIP_EINVAL);
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload(ctx, rows, (size_t)UINT32_MAX, 3, &test_options, &dev),
                     GRIP_EINVAL);
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload(ctx, rows, 2, 3, &test_options, &dev), GRIP_OK);
    ck_assert_int_eq(grip_bruteforce_cuda_search(ctx, NULL, rows, 2, 1, INFINITY, ids, d), GRIP_EINVAL);
    ck_assert_int_eq(grip_bruteforce_cuda_search(ctx, dev, rows, 2, 33, INFINITY, ids, d), GRIP_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "k = 33"));
    ck_assert_int_eq(grip_bruteforce_cuda_search(ctx, dev, rows, 2, 1, NAN, ids, d), GRIP_EINVAL);
    ck_assert_int_eq(grip_bruteforce_cuda_search(ctx, dev, NULL, 2, 1, INFINITY, ids, d), GRIP_EINVAL);
    ck_assert_int_eq(grip_bruteforce_cuda_search(ctx, dev, rows, 2, 1, INFINITY, NULL, d), GRIP_EINVAL);
    /* nothing to do: the outputs stay untouched */
    ids[0] = 7;
    ck_assert_int_eq(grip_bruteforce_cuda_search(ctx, dev, rows, 0, 1, INFINITY, ids, d), GRIP_OK);
    ck_assert_int_eq(grip_bruteforce_cuda_search(ctx, dev, rows, 2, 0, INFINITY, ids, d), GRIP_OK);
    ck_assert_uint_eq(ids[0], 7);
    grip_bruteforce_cuda_ref_free(dev);
    grip_bruteforce_cuda_ref_free(NULL);
    grip_ctx_free(ctx);
}
END_TEST

/* Options out of their ranges, or none, are refused at upload with the field named, and *out reset. */
START_TEST(bad_options)
{
    grip_ctx *ctx = grip_test_ctx();
    float rows[6] = {0, 1, 2, 3, 4, 5};
    grip_bruteforce_cuda_ref *dev = (grip_bruteforce_cuda_ref *)rows;
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload(ctx, rows, 2, 3, NULL, &dev), GRIP_EINVAL);
    ck_assert_ptr_null(dev);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "options"));
    static const struct {
        grip_bruteforce_cuda_options options;
        const char *field;
    } bad[] = {
        {{GRIP_BRUTEFORCE_CUDA_INT8, GRIP_BRUTEFORCE_CUDA_KERNEL_AUTO, 0, 0}, "rescreen_capacity"},
        {{GRIP_BRUTEFORCE_CUDA_INT8, GRIP_BRUTEFORCE_CUDA_KERNEL_AUTO, GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY + 1, 0},
         "rescreen_capacity"},
        {{(grip_bruteforce_cuda_precision)2, GRIP_BRUTEFORCE_CUDA_KERNEL_AUTO, GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY,
          0},
         "precision"},
        {{GRIP_BRUTEFORCE_CUDA_INT8, (grip_bruteforce_cuda_kernel)2, GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY, 0},
         "kernel"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        dev = (grip_bruteforce_cuda_ref *)rows;
        ck_assert_int_eq(grip_bruteforce_cuda_ref_upload(ctx, rows, 2, 3, &bad[i].options, &dev), GRIP_EINVAL);
        ck_assert_ptr_null(dev);
        ck_assert_ptr_nonnull(strstr(ctx->last_error, bad[i].field));
        dev = (grip_bruteforce_cuda_ref *)rows;
        ck_assert_int_eq(grip_bruteforce_cuda_ref_copy_device(ctx, rows, 2, 3, &bad[i].options, &dev), GRIP_EINVAL);
        ck_assert_ptr_null(dev);
        dev = (grip_bruteforce_cuda_ref *)rows;
        ck_assert_int_eq(grip_bruteforce_cuda_ref_upload_batched(ctx, rows, 2, 3, 1, &bad[i].options, &dev),
                         GRIP_EINVAL);
        ck_assert_ptr_null(dev);
    }
    grip_ctx_free(ctx);
}
END_TEST

/* A set neither the device nor the host can hold fails with GRIP_ENOMEM before any byte is copied (so the small
 * host buffer here is never read past its end): the device cannot hold it, then the host refuses the copy to stream
 * from (pinned, then pageable). The next upload and search on the same context work. (Queries the device cannot
 * hold are cut into passes, tested with grip_bruteforce_cuda_ref_limit_queries above, not refused.) */
START_TEST(out_of_device_memory_leaves_the_context_usable)
{
    grip_ctx *ctx = grip_test_ctx();
    float rows[4 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    grip_bruteforce_cuda_ref *dev = NULL;
    /* 2^30 rows x 2^20 dims = 4 PiB */
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload(ctx, rows, (size_t)1 << 30, (size_t)1 << 20, &test_options, &dev),
                     GRIP_ENOMEM);
    ck_assert_ptr_null(dev);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "device"));
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "host memory"));
    ck_assert_int_eq(
        grip_bruteforce_cuda_ref_upload_batched(ctx, rows, (size_t)1 << 30, (size_t)1 << 20, 128, &test_options, &dev),
        GRIP_ENOMEM);
    ck_assert_ptr_null(dev);
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload(ctx, rows, 4, 3, &test_options, &dev), GRIP_OK);
    uint32_t ids[4 * 2];
    float d[4 * 2];
    ck_assert_int_eq(grip_bruteforce_cuda_search(ctx, dev, rows, 4, 2, INFINITY, ids, d), GRIP_OK);
    for (uint32_t i = 0; i < 4; ++i) {
        ck_assert_uint_eq(ids[2 * i], i); /* each row is its own nearest, at distance 0 */
        ck_assert(d[2 * i] == 0.0f);
        ck_assert_uint_eq(ids[2 * i + 1], i == 0 ? 1 : 0); /* the origin is 1 from each axis point, and they 2 apart */
        ck_assert(d[2 * i + 1] == 1.0f);
    }
    grip_bruteforce_cuda_ref_free(dev);
    grip_ctx_free(ctx);
}
END_TEST

int main(int argc, char **argv)
{
    const size_t n_variants = sizeof test_variants / sizeof test_variants[0];
    size_t v = 0;
    while (argc > 1 && v < n_variants && strcmp(argv[1], test_variants[v].name) != 0)
        ++v;
    if (argc > 2 || v == n_variants) {
        fprintf(stderr, "usage: test_knn_cuda [default|mma_sync|fp16|rescreen|rescreen_overflow]\n");
        return 2;
    }
    test_options = test_variants[v].options;
    Suite *s = suite_create("knn_cuda");
    /* a case each, so that the sanitizer runs (CK_RUN_CASE) take them in parallel */
    grip_test_add_case(s, "uniform", uniform_every_dim_and_k);
    grip_test_add_case(s, "clustered", clustered);
    grip_test_add_case(s, "duplicates", duplicates_with_negative_coordinates);
    grip_test_add_case(s, "non_finite", non_finite_rows_and_queries);
    grip_test_add_case(s, "bounds", inclusive_bounds);
    grip_test_add_case(s, "small_sets", small_and_empty_sets);
    grip_test_add_case(s, "device_resident", device_resident_queries_and_results);
    grip_test_add_case(s, "screened_edges", screened_path_edges);
    grip_test_add_case(s, "screened_shot", screened_clustered_shot);
    grip_test_add_case(s, "many_tiles", many_tiles);
    grip_test_add_case(s, "few_queries", few_queries_over_row_ranges);
    grip_test_add_case(s, "streamed_uniform", streamed_uniform_every_dim_and_k);
    grip_test_add_case(s, "streamed_duplicates", streamed_duplicates_tie_to_the_lower_row);
    grip_test_add_case(s, "streamed_non_finite", streamed_non_finite_rows_and_queries);
    grip_test_add_case(s, "streamed_device_queries", streamed_device_queries_and_query_passes);
    grip_test_add_case(s, "streamed_reports", streamed_handle_reports);
    grip_test_add_case(s, "streamed_device_full", streamed_when_the_device_is_full);
    grip_test_add_case(s, "arguments", bad_arguments);
    grip_test_add_case(s, "options", bad_options);
    grip_test_add_case(s, "enomem", out_of_device_memory_leaves_the_context_usable);
    return grip_test_run_gpu(s);
}
