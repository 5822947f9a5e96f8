/* test_kdtree_hd_sift.c -- the descriptor kd-trees on real SIFT descriptors (NGT's 5,000 x 128, see
 * sift_descriptors/README.md): exact search gives the published brute-force neighbours (100 per query), and the
 * recall@1 of bounded searches (rows 4500.. as queries against the first 4500) rises with checks and with trees. */
#include "test_support.h"
#include "index/kdtree_hd.h"
#include "index/bruteforce.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIFT_DIR "sift_descriptors/ngt_sift5k/"
#define SIFT_DIM 128

/* Reads `rows` rows of `cols` numbers (whitespace separated) from the text file, keeping the first SIFT_DIM of
 * each, after skipping lines starting with '#'. malloc'd (free()). */
static float *read_table(const char *rel, size_t rows, size_t cols)
{
    char path[4096];
    ck_assert(grip_test_data_path(path, sizeof path, rel));
    size_t bytes = 0;
    char *text = grip_test_read_file(path, &bytes), *p = text;
    ck_assert_ptr_nonnull(text);
    float *out = malloc(rows * cols * sizeof *out);
    ck_assert_ptr_nonnull(out);
    size_t got = 0;
    while (got < rows * cols) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            ++p;
        if (*p == '#') {
            p = strchr(p, '\n');
            ck_assert_ptr_nonnull(p);
            continue;
        }
        char *end = NULL;
        out[got++] = strtof(p, &end);
        ck_assert_ptr_ne(end, p);
        p = end;
    }
    free(text);
    return out;
}

/* The dataset's rows without their tag column. */
static float *read_sift(const char *rel, size_t rows)
{
    float *t = read_table(rel, rows, SIFT_DIM + (strstr(rel, "dataset") ? 1 : 0));
    size_t cols = SIFT_DIM + (strstr(rel, "dataset") ? 1 : 0);
    for (size_t i = 0; i < rows; ++i)
        memmove(t + i * SIFT_DIM, t + i * cols, SIFT_DIM * sizeof *t);
    return t;
}

static grip_kdtree_hd *build(grip_ctx *ctx, const float *rows, size_t n, uint32_t trees, uint32_t spans,
                             uint32_t node_size)
{
    grip_kdtree_hd_params p = {trees, spans, node_size, 1};
    grip_kdtree_hd *t = NULL;
    ck_assert_int_eq(grip_kdtree_hd_build(ctx, rows, n, SIFT_DIM, &p, &t), GRIP_OK);
    return t;
}

START_TEST(exact_gives_the_published_neighbours)
{
    float *base = read_sift(SIFT_DIR "sift-dataset-5k.tsv", 5000), *q = read_sift(SIFT_DIR "sift-query-3.tsv", 3);
    float *gt = read_table(SIFT_DIR "groundtruth_exact_L2_k100.tsv", 300, 4); /* query, rank, id (1-based), dist */
    grip_ctx *ctx = grip_test_ctx();
    const uint32_t sizes[] = {1, 16, 128};
    for (int s = 0; s < 3; ++s) {
        grip_kdtree_hd *t = build(ctx, base, 5000, 1, 1, sizes[s]);
        uint32_t ids[300];
        float d[300];
        ck_assert_int_eq(grip_kdtree_hd_search(ctx, t, base, q, 3, 100, 0, 0, INFINITY, ids, d), GRIP_OK);
        size_t wrong = 0;
        for (int i = 0; i < 300; ++i) {
            ck_assert_uint_eq((uint32_t)gt[i * 4] - 1, (uint32_t)i / 100);
            wrong += ids[i] + 1 != (uint32_t)gt[i * 4 + 2];
            wrong += fabsf(sqrtf(d[i]) - gt[i * 4 + 3]) > 5e-4f;
        }
        ck_assert_uint_eq(wrong, 0);
        grip_kdtree_hd_free(t);
    }
    grip_ctx_free(ctx);
    free(base);
    free(q);
    free(gt);
}
END_TEST

static double recall_at_1(grip_ctx *ctx, const grip_kdtree_hd *t, const float *rows, size_t n, const float *q,
                          size_t m, uint32_t checks, const uint32_t *want)
{
    uint32_t *ids = malloc(m * sizeof *ids);
    float *d = malloc(m * sizeof *d);
    ck_assert(ids && d);
    ck_assert_int_eq(grip_kdtree_hd_search(ctx, t, rows, q, m, 1, checks, 0, INFINITY, ids, d), GRIP_OK);
    size_t hits = 0;
    for (size_t i = 0; i < m; ++i)
        hits += ids[i] == want[i];
    (void)n;
    free(ids);
    free(d);
    return (double)hits / (double)m;
}

START_TEST(recall_rises_with_checks_and_trees)
{
    float *base = read_sift(SIFT_DIR "sift-dataset-5k.tsv", 5000);
    const size_t n = 4500, m = 500;
    const float *q = base + n * SIFT_DIM;
    grip_ctx *ctx = grip_test_ctx();
    uint32_t want[500];
    float want_d[500];
    ck_assert_int_eq(grip_bruteforce_search(ctx, base, n, q, m, SIFT_DIM, 1, INFINITY, want, want_d), GRIP_OK);
    grip_kdtree_hd *tree = build(ctx, base, n, 1, 1, 8), *forest = build(ctx, base, n, 8, 5, 8);
    const uint32_t checks[] = {1, 4, 16, 64, 256};
    double r_tree[5], r_forest[5];
    for (int i = 0; i < 5; ++i) {
        r_tree[i] = recall_at_1(ctx, tree, base, n, q, m, checks[i], want);
        r_forest[i] = recall_at_1(ctx, forest, base, n, q, m, checks[i], want);
        printf("kdtree_hd SIFT 4500 x 128, 500 queries, node_size 8, checks %3u: recall@1 tree %.3f, forest(8) %.3f\n",
               checks[i], r_tree[i], r_forest[i]);
    }
    for (int i = 1; i < 5; ++i) {
        ck_assert_double_gt(r_tree[i], r_tree[i - 1]);
        ck_assert_double_gt(r_forest[i], r_forest[i - 1]);
    }
    ck_assert_double_gt(r_forest[2], r_tree[2]);
    ck_assert_double_gt(r_forest[3], r_tree[3]);
    ck_assert_double_ge(r_forest[4], 0.9);
    ck_assert_double_eq(recall_at_1(ctx, tree, base, n, q, m, 0, want), 1.0);
    grip_kdtree_hd_free(tree);
    grip_kdtree_hd_free(forest);
    grip_ctx_free(ctx);
    free(base);
}
END_TEST

static Suite *sift_suite(void)
{
    Suite *s = suite_create("kdtree_hd_sift");
    TCase *tc = tcase_create("sift");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, exact_gives_the_published_neighbours);
    tcase_add_test(tc, recall_rises_with_checks_and_trees);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return grip_test_run_with_data(sift_suite(), SIFT_DIR "sift-dataset-5k.tsv");
}
