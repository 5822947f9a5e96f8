/* test_kdtree3d_cuda.c (gpu) -- the GPU kd-tree's k nearest (grip_kdtree3d_cuda_knn) against its CPU twin
 * grip_kdtree3d_knn: identical ids and bit-equal squared distances in every row, UINT32_MAX / +inf past the last
 * found, on uniform, clustered and duplicate-heavy clouds with negative coordinates and NaN/inf rows; k = 1, 2, 8,
 * 32; n = 1, 2, 1000, 200000; queries that are other points (NaN queries and queries outside the cloud among them)
 * or the cloud's own points (queries NULL); leaf sizes 1, the default and the largest; host and device arrays;
 * an empty cloud, a cloud without a finite point, k > n; the tutorial scene when the shared data is there; bad
 * arguments. Skips (77) without a usable device. */
#include "test_support.h"
#include "core/cuda_bridge.h"
#include "spatial/kdtree3d.h"
#include "spatial/kdtree3d_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct compare_stats {
    size_t listed;    /* neighbours the GPU listed over all rows */
    size_t tie_rows;  /* rows whose list holds two equal distances: the tie rule was exercised */
    size_t empty_rows;
} compare_stats;

/* Spoils every `every`-th row from `first` with a NaN, or an inf every third time, on a varying axis. */
static void spoil_rows(float *xyz, size_t n, size_t first, size_t every)
{
    for (size_t i = first, t = 0; i < n; i += every, ++t)
        xyz[3 * i + t % 3] = t % 3 == 2 ? -INFINITY : NAN;
}

/* n points on the grid of quarters in [-2, 2]^3, half of them copies of 40 pool points: exact duplicates, and
 * every squared distance a multiple of 1/16, so distances tie everywhere. */
static float *duplicate_cloud(uint64_t *s, size_t n)
{
    float pool[40 * 3];
    for (size_t i = 0; i < 40 * 3; ++i)
        pool[i] = 0.25f * (float)((int)grip_test_uniform(s, 0.0f, 17.0f) - 8);
    float *xyz = malloc((n ? n : 1) * 3 * sizeof *xyz);
    ck_assert_ptr_nonnull(xyz);
    for (size_t i = 0; i < n; ++i) {
        int copy = grip_test_uniform(s, 0.0f, 1.0f) < 0.5f;
        size_t from = (size_t)grip_test_uniform(s, 0.0f, 40.0f) % 40;
        for (int a = 0; a < 3; ++a)
            xyz[3 * i + a] = copy ? pool[3 * from + a] : 0.25f * (float)((int)grip_test_uniform(s, 0.0f, 17.0f) - 8);
    }
    return xyz;
}

/* Runs the GPU search: the tree built from xyz, queries and results in host memory, or all of it in device
 * memory (on_device). Returns the results in host arrays (m x k each, malloc'd). */
static void gpu_knn(grip_ctx *ctx, const float *xyz, size_t n, const float *queries, size_t m, uint32_t k,
                    uint32_t leaf, int on_device, uint32_t *ids, float *sqdist)
{
    grip_kdtree3d_cuda *tree = NULL;
    if (!on_device) {
        ck_assert_msg(grip_kdtree3d_cuda_build(ctx, xyz, n, GRIP_MEM_HOST, leaf, &tree) == GRIP_OK, "build: %s",
                      ctx->last_error);
        ck_assert_msg(grip_kdtree3d_cuda_knn(ctx, tree, queries, m, GRIP_MEM_HOST, k, ids, sqdist, GRIP_MEM_HOST) ==
                          GRIP_OK, "knn: %s", ctx->last_error);
        grip_kdtree3d_cuda_free(tree);
        return;
    }
    void *dxyz = NULL, *dq = NULL, *dids = NULL, *dd = NULL;
    int device = -1;
    ck_assert_int_eq(grip_cuda_upload(ctx, xyz, n * 3 * sizeof(float), &dxyz, &device), GRIP_OK);
    if (queries)
        ck_assert_int_eq(grip_cuda_upload(ctx, queries, m * 3 * sizeof(float), &dq, &device), GRIP_OK);
    ck_assert_int_eq(grip_cuda_alloc(ctx, m * k * sizeof(uint32_t), &dids), GRIP_OK);
    ck_assert_int_eq(grip_cuda_alloc(ctx, m * k * sizeof(float), &dd), GRIP_OK);
    ck_assert_msg(grip_kdtree3d_cuda_build(ctx, dxyz, n, GRIP_MEM_CUDA, leaf, &tree) == GRIP_OK, "build: %s",
                  ctx->last_error);
    grip_cuda_free(dxyz); /* the tree keeps its own copy */
    ck_assert_msg(grip_kdtree3d_cuda_knn(ctx, tree, dq, m, GRIP_MEM_CUDA, k, dids, dd, GRIP_MEM_CUDA) == GRIP_OK,
                  "knn: %s", ctx->last_error);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, ids, dids, m * k * sizeof(uint32_t)), GRIP_OK);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, sqdist, dd, m * k * sizeof(float)), GRIP_OK);
    grip_kdtree3d_cuda_free(tree);
    grip_cuda_free(dq);
    grip_cuda_free(dids);
    grip_cuda_free(dd);
}

/* Row i of the GPU result against grip_kdtree3d_knn: returns 1 when equal (ids, distance bits, padding). */
static int row_matches(const grip_kdtree3d *cpu, const float *q, uint32_t k, const uint32_t *ids, const float *d,
                       uint32_t *cids, float *cd, size_t *found, int *tie)
{
    *found = grip_kdtree3d_knn(cpu, q, k, cids, cd);
    *tie = 0;
    for (size_t j = 1; j < *found; ++j)
        *tie |= cd[j] == cd[j - 1];
    for (size_t j = 0; j < k; ++j) {
        uint32_t want_id = j < *found ? cids[j] : UINT32_MAX;
        float want_d = j < *found ? cd[j] : INFINITY;
        if (ids[j] != want_id || grip_test_float_bits(d[j]) != grip_test_float_bits(want_d))
            return 0;
    }
    return 1;
}

static compare_stats compare_with_cpu(const char *name, const float *xyz, size_t n, const float *queries, size_t m,
                                      uint32_t k, uint32_t leaf, int on_device)
{
    grip_ctx *ctx = grip_test_ctx();
    size_t cells = m * k > 0 ? m * k : 1;
    uint32_t *ids = malloc(cells * sizeof *ids);
    float *sqdist = malloc(cells * sizeof *sqdist);
    ck_assert_ptr_nonnull(ids);
    ck_assert_ptr_nonnull(sqdist);
    memset(ids, 0xa5, cells * sizeof *ids); /* poison: every cell must be written */
    memset(sqdist, 0xa5, cells * sizeof *sqdist);
    gpu_knn(ctx, xyz, n, queries, m, k, leaf, on_device, ids, sqdist);
    grip_kdtree3d *cpu = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, xyz, n, &cpu), GRIP_OK);
    size_t bad = 0, first_bad = SIZE_MAX, listed = 0, ties = 0, empty = 0;
#pragma omp parallel reduction(+ : bad, listed, ties, empty) reduction(min : first_bad)
    {
        uint32_t cids[GRIP_KDTREE3D_CUDA_MAX_K];
        float cd[GRIP_KDTREE3D_CUDA_MAX_K];
#pragma omp for schedule(static)
        for (size_t i = 0; i < m; ++i) {
            const float *q = (queries ? queries : xyz) + 3 * i;
            size_t found;
            int tie;
            if (!row_matches(cpu, q, k, ids + i * k, sqdist + i * k, cids, cd, &found, &tie)) {
                ++bad;
                first_bad = i < first_bad ? i : first_bad;
            }
            listed += found;
            ties += (size_t)tie;
            empty += found == 0;
        }
    }
    if (bad) {
        const float *q = (queries ? queries : xyz) + 3 * first_bad;
        uint32_t cids[GRIP_KDTREE3D_CUDA_MAX_K];
        float cd[GRIP_KDTREE3D_CUDA_MAX_K];
        size_t found = grip_kdtree3d_knn(cpu, q, k, cids, cd);
        fprintf(stderr, "%s: row %zu (%g %g %g) differs; cpu found %zu:", name, first_bad, (double)q[0],
                (double)q[1], (double)q[2], found);
        for (size_t j = 0; j < k; ++j)
            fprintf(stderr, " [%u %.9g | gpu %u %.9g]", j < found ? cids[j] : UINT32_MAX,
                    j < found ? (double)cd[j] : INFINITY, ids[first_bad * k + j], (double)sqdist[first_bad * k + j]);
        fprintf(stderr, "\n");
    }
    printf("%s: n=%zu m=%zu k=%u leaf=%u %s: %zu rows differ, %zu neighbours, %zu tie rows, %zu empty rows\n", name,
           n, m, k, leaf, on_device ? "device arrays" : "host arrays", bad, listed, ties, empty);
    ck_assert_uint_eq(bad, 0);
    grip_kdtree3d_free(cpu);
    free(ids);
    free(sqdist);
    grip_ctx_free(ctx);
    return (compare_stats){listed, ties, empty};
}

static size_t count_finite(const float *xyz, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; ++i)
        c += isfinite(xyz[3 * i]) && isfinite(xyz[3 * i + 1]) && isfinite(xyz[3 * i + 2]);
    return c;
}

/* m queries: uniform in [-1.5, 1.5]^3 (partly outside the clouds), every 29th spoiled. */
static float *make_queries(uint64_t *s, size_t m)
{
    float *q = grip_test_uniform_rows(s, m, 3, -1.5f, 1.5f);
    spoil_rows(q, m, 3, 29);
    return q;
}

START_TEST(uniform_clustered_and_duplicates)
{
    static const uint32_t ks[] = {1, 2, 8, 32};
    /* small sizes (compute-sanitizer): the largest cloud and the queries of the two large ones stay above
     * kSortQueriesMin (1024), so that the queries are still Morton-sorted */
    const size_t sizes[] = {1, 2, 1000, grip_test_size(200000, 4000)};
    uint64_t s = 4401;
    for (size_t si = 0; si < 4; ++si) {
        size_t n = sizes[si], m = n < 1000 ? 50 : grip_test_size(20000, 1100);
        float *uniform = grip_test_uniform_rows(&s, n, 3, -1.0f, 1.0f);
        float *clustered = grip_test_clustered_rows(&s, n, 3, 7);
        float *dups = duplicate_cloud(&s, n);
        if (n >= 1000) {
            spoil_rows(uniform, n, 5, 37);
            spoil_rows(clustered, n, 2, 101);
            spoil_rows(dups, n, 7, 53);
        }
        float *q = make_queries(&s, m);
        const size_t finite = count_finite(uniform, n), finite_queries = count_finite(q, m);
        for (size_t ki = 0; ki < 4; ++ki) {
            uint32_t k = ks[ki];
            compare_stats u = compare_with_cpu("uniform", uniform, n, q, m, k, 0, 0);
            ck_assert_uint_eq(u.listed, finite_queries * (k < finite ? k : finite));
            compare_with_cpu("uniform, own points", uniform, n, NULL, n, k, 0, 0);
            compare_with_cpu("clustered", clustered, n, q, m, k, 0, 0);
            compare_with_cpu("clustered, own points", clustered, n, NULL, n, k, 0, 0);
            compare_with_cpu("duplicates", dups, n, q, m, k, 0, 0);
            compare_stats d = compare_with_cpu("duplicates, own points", dups, n, NULL, n, k, 0, 0);
            if (n >= 1000 && k > 1)
                ck_assert_uint_gt(d.tie_rows, n / 4); /* every copy ties with its copies: the tie rule decides */
        }
        free(uniform);
        free(clustered);
        free(dups);
        free(q);
    }
}
END_TEST

START_TEST(leaf_sizes_and_device_arrays)
{
    uint64_t s = 4402;
    const size_t n = grip_test_size(30000, 3000), m = grip_test_size(5000, 1100); /* m > kSortQueriesMin */
    float *xyz = grip_test_clustered_rows(&s, n, 3, 3);
    spoil_rows(xyz, n, 0, 41);
    float *dups = duplicate_cloud(&s, n);
    float *q = make_queries(&s, m);
    static const uint32_t leaves[] = {1, 0, 5, GRIP_KDTREE3D_CUDA_LEAF_MAX};
    for (size_t li = 0; li < 4; ++li) {
        compare_with_cpu("clustered", xyz, n, q, m, 8, leaves[li], li % 2);
        compare_with_cpu("clustered, own points", xyz, n, NULL, n, 3, leaves[li], 1 - li % 2);
        compare_with_cpu("duplicates", dups, n, q, m, 32, leaves[li], li % 2);
        compare_with_cpu("duplicates, own points", dups, n, NULL, n, 1, leaves[li], 1 - li % 2);
    }
    /* fewer queries than the Morton sort starts at, on device */
    compare_with_cpu("few queries", xyz, n, q, 100, 5, 0, 1);
    free(xyz);
    free(dups);
    free(q);
}
END_TEST

START_TEST(degenerate_clouds)
{
    uint64_t s = 4403;
    float *q = make_queries(&s, 64);
    /* empty cloud: every row empty */
    compare_stats st = compare_with_cpu("empty", NULL, 0, q, 64, 4, 0, 0);
    ck_assert_uint_eq(st.listed, 0);
    ck_assert_uint_eq(st.empty_rows, 64);
    compare_with_cpu("empty, own points", NULL, 0, NULL, 0, 4, 0, 0);
    /* no finite point */
    float nan_cloud[5 * 3];
    for (size_t i = 0; i < 15; ++i)
        nan_cloud[i] = i % 2 ? NAN : INFINITY;
    st = compare_with_cpu("no finite point", nan_cloud, 5, q, 64, 3, 0, 1);
    ck_assert_uint_eq(st.listed, 0);
    st = compare_with_cpu("no finite point, own points", nan_cloud, 5, NULL, 5, 3, 0, 0);
    ck_assert_uint_eq(st.empty_rows, 5);
    /* k > n: two points, k = 8 and 32 */
    float two[6] = {-0.5f, 0.25f, -1.0f, 0.5f, -0.25f, 1.0f};
    st = compare_with_cpu("two points", two, 2, q, 64, 8, 0, 0);
    ck_assert_uint_eq(st.listed, 2 * (64 - 3)); /* 3 of the 64 queries are NaN */
    compare_with_cpu("two points, own points", two, 2, NULL, 2, 32, 0, 1);
    /* one point ten times, and one point with NaN rows around it */
    float same[10 * 3];
    for (size_t i = 0; i < 30; ++i)
        same[i] = (float)(i % 3) * -0.5f + 0.25f;
    compare_with_cpu("one point ten times", same, 10, q, 64, 32, 1, 0);
    st = compare_with_cpu("one point ten times, own points", same, 10, NULL, 10, 4, 0, 0);
    ck_assert_uint_eq(st.listed, 40);
    same[0] = NAN;
    same[3 * 9 + 1] = NAN;
    compare_with_cpu("eight copies and NaN rows, own points", same, 10, NULL, 10, 8, 1, 1);
    /* points spread over the float range (the Morton grid's cube spans ~1e38, most codes collide) */
    float wide[6 * 3] = {-3e38f, 1.0f, 0.0f, 3e38f, -1e-30f, 2.0f, 1e-30f, 1e-30f, 1e-30f,
                         0.0f, 0.0f, 0.0f, -0.0f, 5.0f, -7.0f, 1.0f, 2.0f, 3.0f};
    compare_with_cpu("wide range", wide, 6, q, 64, 4, 1, 0);
    compare_with_cpu("wide range, own points", wide, 6, NULL, 6, 6, 2, 0);
    free(q);
}
END_TEST

START_TEST(tutorial_scene)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, "pcl/milk_cartoon_all_small_clorox.pcd")) {
        printf("tutorial scene: data absent, not checked\n");
        return;
    }
    host_cloud c = grip_test_read_cloud("pcl/milk_cartoon_all_small_clorox.pcd");
    grip_test_sanitizer_crop(&c, 48); /* small sizes: 48 of the 480 rows, holes and ties kept */
    compare_stats st = compare_with_cpu("tutorial scene, own points", c.xyz, c.n, NULL, c.n, 10, 0, 0);
    ck_assert_uint_eq(st.empty_rows, c.n - host_cloud_count_finite(&c)); /* exactly the NaN points find nothing */
    ck_assert_uint_gt(st.tie_rows, 0);
    compare_with_cpu("tutorial scene, own points", c.xyz, c.n, NULL, c.n, 1, 0, 1);
    host_cloud_free(&c);
}
END_TEST

START_TEST(bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0}, d[96];
    uint32_t ids[96];
    grip_kdtree3d_cuda *tree = (grip_kdtree3d_cuda *)&ctx; /* must come back NULL on failure */
    ck_assert_int_eq(grip_kdtree3d_cuda_build(ctx, NULL, 3, GRIP_MEM_HOST, 0, &tree), GRIP_EINVAL);
    ck_assert_ptr_null(tree);
    ck_assert_int_eq(grip_kdtree3d_cuda_build(ctx, xyz, 3, GRIP_MEM_HOST, 0, NULL), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree3d_cuda_build(ctx, xyz, 3, GRIP_MEM_HOST, GRIP_KDTREE3D_CUDA_LEAF_MAX + 1, &tree),
                     GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "leaf_size"));
    /* host memory said to be device memory */
    ck_assert_int_eq(grip_kdtree3d_cuda_build(ctx, xyz, 3, GRIP_MEM_CUDA, 0, &tree), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "xyz"));
    ck_assert_ptr_null(tree);
    ck_assert_int_eq(grip_kdtree3d_cuda_build(ctx, xyz, 3, GRIP_MEM_HOST, 0, &tree), GRIP_OK);
    ck_assert_uint_eq(grip_kdtree3d_cuda_size(tree), 3);
    ck_assert_uint_eq(grip_kdtree3d_cuda_rows(tree), 3);
    ck_assert_int_eq(grip_kdtree3d_cuda_knn(ctx, tree, xyz, 3, GRIP_MEM_HOST, 0, ids, d, GRIP_MEM_HOST), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree3d_cuda_knn(ctx, tree, xyz, 3, GRIP_MEM_HOST, 33, ids, d, GRIP_MEM_HOST),
                     GRIP_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "k = 33"));
    ck_assert_int_eq(grip_kdtree3d_cuda_knn(ctx, NULL, xyz, 3, GRIP_MEM_HOST, 1, ids, d, GRIP_MEM_HOST), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree3d_cuda_knn(ctx, tree, xyz, 3, GRIP_MEM_HOST, 1, NULL, d, GRIP_MEM_HOST), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree3d_cuda_knn(ctx, tree, NULL, 2, GRIP_MEM_HOST, 1, ids, d, GRIP_MEM_HOST), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "3 rows"));
    ck_assert_int_eq(grip_kdtree3d_cuda_knn(ctx, tree, xyz, 3, GRIP_MEM_HOST, 1, ids, d, GRIP_MEM_CUDA), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "ids"));
    ck_assert_int_eq(grip_kdtree3d_cuda_knn(ctx, tree, xyz, 3, GRIP_MEM_CUDA, 1, ids, d, GRIP_MEM_HOST), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "queries"));
    /* the context stays usable: a valid search still works, and m = 0 does nothing */
    ck_assert_int_eq(grip_kdtree3d_cuda_knn(ctx, tree, xyz, 0, GRIP_MEM_HOST, 1, ids, d, GRIP_MEM_HOST), GRIP_OK);
    ck_assert_int_eq(grip_kdtree3d_cuda_knn(ctx, tree, NULL, 3, GRIP_MEM_HOST, 32, ids, d, GRIP_MEM_HOST), GRIP_OK);
    ck_assert_uint_eq(ids[0], 0);
    ck_assert_uint_eq(ids[1], 1); /* (1,0,0) and (0,1,0) tie at 1 from the origin: the lower index first */
    ck_assert_uint_eq(ids[2], 2);
    ck_assert_uint_eq(ids[3], UINT32_MAX);
    grip_kdtree3d_cuda_free(tree);
    grip_kdtree3d_cuda_free(NULL);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kdtree3d_cuda");
    grip_test_add_case(s, "uniform", uniform_clustered_and_duplicates);
    grip_test_add_case(s, "leaf_sizes", leaf_sizes_and_device_arrays);
    grip_test_add_case(s, "degenerate", degenerate_clouds);
    grip_test_add_case(s, "scene", tutorial_scene);
    grip_test_add_case(s, "arguments", bad_arguments);
    return grip_test_run_gpu(s);
}
