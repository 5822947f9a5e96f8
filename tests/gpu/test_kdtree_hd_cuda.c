/* test_kdtree_hd_cuda.c (gpu) -- the GPU descriptor kd-trees (src/index/kdtree_hd_cuda.h) against their CPU twin
 * (src/index/kdtree_hd.h): the device build gives the CPU's forest node for node (same splits, same leaf order,
 * same boxes); searches of the same trees with the same bounds give identical ids and bit-equal distances, exact
 * (then also equal to grip_bruteforce_search) and approximate (checks 1 .. 256, one tree and forests), with the
 * brute-force finish; on uniform, clustered and duplicate-heavy rows with negative values and NaN rows, D = 3, 33, 128,
 * 352, k = 1, 2, 8, 32; the stages on the device through plugin.h; bad arguments. Skips (77) without a device. */
#include "test_support.h"
#include "core/array.h"
#include "core/cuda_bridge.h"
#include "index/kdtree_hd.h"
#include "index/kdtree_hd_cuda.h"
#include "index/bruteforce.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Both forests have the same shape and content (floats compared as values: exact). */
static void expect_same_forest(const grip_kdtree_hd *a, const grip_kdtree_hd *b)
{
    ck_assert_uint_eq(a->n_nodes, b->n_nodes);
    ck_assert_uint_eq(a->n_points, b->n_points);
    ck_assert_uint_eq(a->max_depth, b->max_depth);
    ck_assert_mem_eq(a->roots, b->roots, a->n_trees * sizeof(uint32_t));
    ck_assert_mem_eq(a->child, b->child, a->n_nodes * sizeof(uint32_t));
    ck_assert_mem_eq(a->split_dim, b->split_dim, a->n_nodes * sizeof(uint32_t));
    ck_assert_mem_eq(a->begin, b->begin, a->n_nodes * sizeof(uint32_t));
    ck_assert_mem_eq(a->count, b->count, a->n_nodes * sizeof(uint32_t));
    ck_assert_mem_eq(a->perm, b->perm, (size_t)a->n_trees * a->n_points * sizeof(uint32_t));
    size_t differ = 0;
    for (size_t i = 0; i < a->n_nodes; ++i)
        differ += a->split_val[i] != b->split_val[i];
    for (size_t i = 0; i < (size_t)a->n_nodes * a->dim; ++i)
        differ += a->box_min[i] != b->box_min[i] || a->box_max[i] != b->box_max[i];
    ck_assert_uint_eq(differ, 0);
}

/* Runs the GPU search of tree (on the device as dt) on host queries; results into host arrays. */
static void gpu_search(grip_ctx *ctx, const grip_kdtree_hd_cuda *dt, const float *q, size_t m, uint32_t dim,
                       uint32_t k, uint32_t checks, uint32_t finish, float bound, uint32_t *ids, float *d)
{
    void *dq = NULL, *di = NULL, *dd = NULL;
    int device = -1;
    ck_assert_int_eq(grip_cuda_upload(ctx, q, m * dim * sizeof(float), &dq, &device), GRIP_OK);
    ck_assert_int_eq(grip_cuda_alloc(ctx, m * k * sizeof(uint32_t), &di), GRIP_OK);
    ck_assert_int_eq(grip_cuda_alloc(ctx, m * k * sizeof(float), &dd), GRIP_OK);
    ck_assert_msg(grip_kdtree_hd_cuda_search(ctx, dt, dq, m, k, checks, finish, bound, di, dd) == GRIP_OK,
                  "search: %s", ctx->last_error);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, ids, di, m * k * sizeof(uint32_t)), GRIP_OK);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, d, dd, m * k * sizeof(float)), GRIP_OK);
    grip_cuda_free(dq);
    grip_cuda_free(di);
    grip_cuda_free(dd);
}

/* Builds on both sides (checking the device forest equals the CPU's), then compares the searches for each bound. */
static void twin_case(const float *rows, size_t n, const float *q, size_t m, uint32_t dim, uint32_t trees,
                      uint32_t spans, uint32_t node_size, uint32_t k)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_kdtree_hd_params p = {trees, spans, node_size, 11};
    grip_kdtree_hd *cpu = NULL, *back = NULL;
    grip_kdtree_hd_cuda *dev = NULL;
    ck_assert_int_eq(grip_kdtree_hd_build(ctx, rows, n, dim, &p, &cpu), GRIP_OK);
    ck_assert_msg(grip_kdtree_hd_cuda_build(ctx, rows, 0, n, dim, &p, &dev) == GRIP_OK, "build: %s", ctx->last_error);
    ck_assert_int_eq(grip_kdtree_hd_cuda_download(ctx, dev, &back), GRIP_OK);
    expect_same_forest(cpu, back);
    uint32_t *ids = malloc(m * k * sizeof *ids), *want = malloc(m * k * sizeof *want);
    float *d = malloc(m * k * sizeof *d), *want_d = malloc(m * k * sizeof *want_d);
    ck_assert(ids && want && d && want_d);
    const uint32_t checks[] = {0, 1, 4, 16, 256};
    const uint32_t finish[] = {0, 0, (uint32_t)m / 2, 0, (uint32_t)m};
    for (int c = 0; c < 5; ++c) {
        gpu_search(ctx, dev, q, m, dim, k, checks[c], finish[c], INFINITY, ids, d);
        ck_assert_int_eq(grip_kdtree_hd_search(ctx, cpu, rows, q, m, k, checks[c], finish[c], INFINITY, want, want_d),
                         GRIP_OK);
        ck_assert_mem_eq(ids, want, m * k * sizeof *ids);
        ck_assert_mem_eq(d, want_d, m * k * sizeof *d);
    }
    gpu_search(ctx, dev, q, m, dim, k, 0, 0, INFINITY, ids, d); /* exact: grip_bruteforce_search's answer */
    ck_assert_int_eq(grip_bruteforce_search(ctx, rows, n, q, m, dim, k, INFINITY, want, want_d), GRIP_OK);
    ck_assert_mem_eq(ids, want, m * k * sizeof *ids);
    ck_assert_mem_eq(d, want_d, m * k * sizeof *d);
    free(ids);
    free(want);
    free(d);
    free(want_d);
    grip_kdtree_hd_free(cpu);
    grip_kdtree_hd_free(back);
    grip_kdtree_hd_cuda_free(dev);
    grip_ctx_free(ctx);
}

static float *duplicate_rows(uint64_t *s, size_t n, uint32_t dim)
{
    float *a = malloc(n * dim * sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (size_t i = 0; i < n * dim; ++i)
        a[i] = 0.5f * (float)((int)grip_test_uniform(s, 0.0f, 5.0f) - 2);
    return a;
}

/* The twins on one dimension's rows: dims[which] of the stream below. Each dimension is its own Check case, so that
 * compute-sanitizer's slow tools run them in parallel; the rows of the dimensions before it are drawn and dropped,
 * so that every case sees the rows it saw when the four ran in one. */
static void twins_agree_on(int which)
{
    uint64_t s = 41;
    const uint32_t dims[] = {3, 33, 128, 352}, ks[] = {1, 2, 8, 32};
    for (int i = 0; i <= which; ++i) {
        /* small sizes (compute-sanitizer): trees a few levels shallower, the same kernels; the brute-force finish
         * (m / 2 and m queries left) still runs, and 600 rows still fill the 256-entry queue (duplicates, D = 128
         * and 352, checks = 256: counted on the CPU twin; 300 rows never do) */
        const size_t n = grip_test_size(3000, 600), m = grip_test_size(400, 40);
        float *uni = grip_test_uniform_rows(&s, n + m, dims[i], -1.0f, 1.0f);
        float *clu = grip_test_clustered_rows(&s, n + m, dims[i], 12);
        float *dup = duplicate_rows(&s, n + m, dims[i]);
        for (size_t r = 3; r < n; r += 41) {
            uni[r * dims[i]] = NAN;
            clu[r * dims[i] + dims[i] - 1] = -INFINITY;
            dup[r * dims[i]] = NAN;
        }
        uni[(n + 5) * dims[i]] = NAN; /* a query that gets nothing */
        if (i == which) {
            twin_case(uni, n, uni + n * dims[i], m, dims[i], 1, 1, 8, ks[i]);
            twin_case(clu, n, clu + n * dims[i], m, dims[i], 4, 5, 16, ks[3 - i]);
            twin_case(dup, n, dup + n * dims[i], m, dims[i], 2, 3, 1, ks[i]);
        }
        free(uni);
        free(clu);
        free(dup);
    }
}

START_TEST(twins_d3)
{
    twins_agree_on(0);
}
END_TEST

START_TEST(twins_d33)
{
    twins_agree_on(1);
}
END_TEST

START_TEST(twins_d128)
{
    twins_agree_on(2);
}
END_TEST

START_TEST(twins_d352)
{
    twins_agree_on(3);
}
END_TEST

/* The stages on the device through plugin.h give what their CPU twins give. */
START_TEST(stages_on_the_device)
{
    uint64_t s = 42;
    const size_t n = grip_test_size(5000, 1200), m = grip_test_size(700, 150); /* small: as in twins_agree_on */
    const uint32_t dim = 352, k = 2;
    float *rows = grip_test_clustered_rows(&s, n + m, dim, 30), *q = rows + n * dim;
    const grip_plugin *pl = grip_plugin_get(GRIP_ABI_MAJOR, GRIP_ABI_MINOR);
    const char *names[] = {"kdtree", "kdforest"};
    uint32_t *ids[2], *ref_ids = malloc(m * k * 4);
    float *d[2], *ref_d = malloc(m * k * 4);
    for (int dev = 0; dev < 2; ++dev) {
        ids[dev] = malloc(m * k * 4);
        d[dev] = malloc(m * k * 4);
    }
    grip_ctx *ref_ctx = grip_test_ctx();
    ck_assert_int_eq(grip_bruteforce_search(ref_ctx, rows, n, q, m, dim, k, INFINITY, ref_ids, ref_d), GRIP_OK);
    grip_ctx_free(ref_ctx);
    for (int i = 0; i < 2; ++i) {
        const grip_stage_impl *impl = NULL;
        for (uint32_t j = 0; j < pl->n_stages; ++j)
            if (strcmp(pl->stages[j]->name, names[i]) == 0)
                impl = pl->stages[j];
        ck_assert_ptr_nonnull(impl);
        for (int dev = 0; dev < 2; ++dev) {
            grip_ctx *ctx = grip_test_ctx();
            const grip_kv kv[] = {{"device", dev ? "cuda" : "cpu"}, {"checks", i ? "32" : "0"}};
            grip_stage *st = NULL;
            ck_assert_int_eq(impl->create(ctx, kv, 2, &st), GRIP_OK);
            grip_array ra = grip_array_host_view(GRIP_F32, n, dim, rows),
                       qa = grip_array_host_view(GRIP_F32, m, dim, q);
            grip_array ia = grip_array_host_view(GRIP_U32, m, k, ids[dev]),
                       da = grip_array_host_view(GRIP_F32, m, k, d[dev]);
            grip_index *ix = NULL;
            ck_assert_msg(impl->build(st, &ra, NULL, &ix) == GRIP_OK, "build: %s", ctx->last_error);
            ck_assert_uint_eq(ix->reference.memory, dev ? GRIP_MEM_CUDA : GRIP_MEM_HOST);
            ck_assert_msg(ix->search(ix, &qa, k, INFINITY, &ia, &da) == GRIP_OK, "search: %s", ctx->last_error);
            ix->release(ix);
            impl->destroy(st);
            grip_ctx_free(ctx);
        }
        ck_assert_mem_eq(ids[0], ids[1], m * k * 4);
        ck_assert_mem_eq(d[0], d[1], m * k * 4);
        if (i == 0) { /* the exact kdtree */
            ck_assert_mem_eq(ids[1], ref_ids, m * k * 4);
            ck_assert_mem_eq(d[1], ref_d, m * k * 4);
        }
    }
    for (int dev = 0; dev < 2; ++dev) {
        free(ids[dev]);
        free(d[dev]);
    }
    free(ref_ids);
    free(ref_d);
    free(rows);
}
END_TEST

START_TEST(bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    float rows[6] = {0, 1, 2, 3, 4, 5};
    grip_kdtree_hd_params p = {1, 1, 4, 0}, bad = {1, 1, 0, 0};
    grip_kdtree_hd_cuda *dev = NULL;
    ck_assert_int_eq(grip_kdtree_hd_cuda_build(ctx, rows, 0, 2, 3, &bad, &dev), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree_hd_cuda_build(ctx, NULL, 0, 2, 3, &p, &dev), GRIP_EINVAL);
    ck_assert_ptr_null(dev);
    ck_assert_int_eq(grip_kdtree_hd_cuda_build(ctx, rows, 0, 2, 3, &p, &dev), GRIP_OK);
    uint32_t ids[40];
    float d[40];
    ck_assert_int_eq(grip_kdtree_hd_cuda_search(ctx, dev, rows, 1, 33, 0, 0, INFINITY, (uint32_t *)ids, d),
                     GRIP_EUNSUPPORTED);
    ck_assert_int_eq(grip_kdtree_hd_cuda_search(ctx, dev, rows, 1, 2, 0, 0, NAN, (uint32_t *)ids, d), GRIP_EINVAL);
    gpu_search(ctx, dev, rows + 3, 1, 3, 4, 0, 0, INFINITY, ids, d); /* k > n pads */
    ck_assert_uint_eq(ids[0], 1);
    ck_assert_uint_eq(ids[1], 0);
    ck_assert_uint_eq(ids[2], UINT32_MAX);
    ck_assert(isinf(d[3]));
    grip_kdtree_hd_cuda_free(dev);
    grip_kdtree_hd_cuda_free(NULL);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kdtree_hd_cuda");
    grip_test_add_case(s, "twins_d3", twins_d3);
    grip_test_add_case(s, "twins_d33", twins_d33);
    grip_test_add_case(s, "twins_d128", twins_d128);
    grip_test_add_case(s, "twins_d352", twins_d352);
    grip_test_add_case(s, "stages", stages_on_the_device);
    grip_test_add_case(s, "arguments", bad_arguments);
    return grip_test_run_gpu(s);
}
