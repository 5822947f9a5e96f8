/* test_kdtree_hd.c -- the descriptor kd-trees (src/index/kdtree_hd.c) and the kdtree / kdforest stages:
 * the tree's invariants (every finite row once per tree, leaves within node_size unless unsplittable, tight boxes,
 * splits that separate), the box distance as a lower bound, exact search identical to grip_bruteforce_search (uniform,
 * clustered and duplicate-heavy data with negative values and NaN rows; D = 3, 33, 128, 352; k = 1, 2, 8; single
 * trees and forests; with a bound), approximate search whose recall@1 rises with checks and trees and reaches 1
 * at a large bound, the brute-force finish, bad arguments, and both stages through plugin.h. */
#include "test_support.h"
#include "core/array.h"
#include "index/kdtree_hd.h"
#include "index/bruteforce.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static grip_kdtree_hd *build(grip_ctx *ctx, const float *rows, size_t n, uint32_t dim, uint32_t trees,
                             uint32_t top_spans, uint32_t node_size, uint64_t seed)
{
    grip_kdtree_hd_params p = {trees, top_spans, node_size, seed};
    grip_kdtree_hd *t = NULL;
    ck_assert_int_eq(grip_kdtree_hd_build(ctx, rows, n, dim, &p, &t), GRIP_OK);
    ck_assert_ptr_nonnull(t);
    return t;
}

static int finite_row(const float *r, uint32_t dim)
{
    for (uint32_t d = 0; d < dim; ++d)
        if (!isfinite(r[d]))
            return 0;
    return 1;
}

/* Every finite row once per tree, in leaves that hold at most node_size rows unless they cannot split; the
 * boxes are tight; each split sends <= split left and > split right; children follow their parents. (Violations
 * are counted and asserted once: an assertion per row would dominate the run time.) */
static void check_structure(const grip_kdtree_hd *t, const float *rows, size_t n, uint32_t node_size)
{
    size_t finite = 0, bad = 0;
    for (size_t i = 0; i < n; ++i)
        finite += (size_t)finite_row(rows + i * t->dim, t->dim);
    ck_assert_uint_eq(t->n_points, finite);
    uint8_t *seen = calloc(n ? n : 1, 1);
    ck_assert_ptr_nonnull(seen);
    for (uint32_t tr = 0; tr < t->n_trees; ++tr) {
        memset(seen, 0, n ? n : 1);
        uint32_t root = t->roots[tr], end = tr + 1 < t->n_trees ? t->roots[tr + 1] : t->n_nodes;
        size_t in_leaves = 0;
        for (uint32_t node = root; node < end; ++node) {
            const float *lo = t->box_min + (size_t)node * t->dim, *hi = t->box_max + (size_t)node * t->dim;
            for (uint32_t d = 0; d < t->dim; ++d) { /* tight: each bound attained by a row of the node */
                int lo_hit = 0, hi_hit = 0;
                for (uint32_t j = 0; j < t->count[node]; ++j) {
                    float v = rows[(size_t)t->perm[t->begin[node] + j] * t->dim + d];
                    bad += !(v >= lo[d] && v <= hi[d]);
                    lo_hit |= v == lo[d];
                    hi_hit |= v == hi[d];
                }
                bad += !(t->count[node] == 0 || (lo_hit && hi_hit));
            }
            if (t->child[node] == GRIP_KDTREE_HD_LEAF) {
                int spread = 0;
                for (uint32_t d = 0; d < t->dim; ++d)
                    spread |= hi[d] > lo[d];
                ck_assert(t->count[node] <= node_size || !spread || t->max_depth == GRIP_KDTREE_HD_MAX_DEPTH);
                for (uint32_t j = 0; j < t->count[node]; ++j) {
                    uint32_t row = t->perm[t->begin[node] + j];
                    bad += row >= n || seen[row];
                    if (row < n)
                        seen[row] = 1;
                    bad += j > 0 && t->perm[t->begin[node] + j - 1] >= row; /* stable: ascending */
                }
                in_leaves += t->count[node];
                continue;
            }
            uint32_t left = t->child[node];
            ck_assert(left > node && left + 1 < end);
            ck_assert_uint_eq(t->count[left] + t->count[left + 1], t->count[node]);
            ck_assert(t->count[left] > 0 && t->count[left + 1] > 0);
            ck_assert_uint_eq(t->begin[left], t->begin[node]);
            for (uint32_t side = 0; side < 2; ++side)
                for (uint32_t j = 0; j < t->count[left + side]; ++j) {
                    float v = rows[(size_t)t->perm[t->begin[left + side] + j] * t->dim + t->split_dim[node]];
                    bad += !(side == 0 ? v <= t->split_val[node] : v > t->split_val[node]);
                }
        }
        ck_assert_uint_eq(in_leaves, finite);
    }
    ck_assert_uint_eq(bad, 0);
    free(seen);
}

/* Searches with the tree and with grip_bruteforce_search; both must agree bit for bit. */
static void expect_exact(grip_ctx *ctx, const grip_kdtree_hd *t, const float *rows, size_t n, const float *q, size_t m,
                         uint32_t k, float max_sqdist)
{
    uint32_t *ids = malloc(m * k * sizeof *ids), *want_ids = malloc(m * k * sizeof *want_ids);
    float *d = malloc(m * k * sizeof *d), *want_d = malloc(m * k * sizeof *want_d);
    ck_assert(ids && want_ids && d && want_d);
    ck_assert_int_eq(grip_kdtree_hd_search(ctx, t, rows, q, m, k, 0, 0, max_sqdist, ids, d), GRIP_OK);
    ck_assert_int_eq(grip_bruteforce_search(ctx, rows, n, q, m, t->dim, k, max_sqdist, want_ids, want_d), GRIP_OK);
    ck_assert_mem_eq(ids, want_ids, m * k * sizeof *ids);
    ck_assert_mem_eq(d, want_d, m * k * sizeof *d); /* bit for bit */
    free(ids);
    free(want_ids);
    free(d);
    free(want_d);
}

/* Rows on a grid of halves in [-1, 1] (most rows duplicates, distances exact), with every 13th row NaN. */
static float *duplicate_rows(uint64_t *s, size_t n, uint32_t dim)
{
    float *a = malloc(n * dim * sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (size_t i = 0; i < n * dim; ++i)
        a[i] = 0.5f * (float)((int)grip_test_uniform(s, 0.0f, 5.0f) - 2);
    for (size_t i = 5; i < n; i += 13)
        a[i * dim + (i % dim)] = NAN;
    return a;
}

static void exact_case(const float *rows, size_t n, const float *q, size_t m, uint32_t dim)
{
    grip_ctx *ctx = grip_test_ctx();
    const uint32_t ks[] = {1, 2, 8}, sizes[] = {1, 8, 64};
    for (int s = dim >= 128 ? 1 : 0; s < 3; ++s) { /* single-row leaves in high dimensions: slow, nothing new */
        grip_kdtree_hd *t = build(ctx, rows, n, dim, 1, 1, sizes[s], 0);
        check_structure(t, rows, n, sizes[s]);
        for (int i = 0; i < 3; ++i)
            expect_exact(ctx, t, rows, n, q, m, ks[i], INFINITY);
        grip_kdtree_hd_free(t);
    }
    /* a randomized forest answers exactly too (from its first tree) */
    grip_kdtree_hd *f = build(ctx, rows, n, dim, 3, 5, 16, 7);
    check_structure(f, rows, n, 16);
    expect_exact(ctx, f, rows, n, q, m, 8, INFINITY);
    grip_kdtree_hd_free(f);
    grip_ctx_free(ctx);
}

START_TEST(exact_uniform)
{
    uint64_t s = 21;
    const uint32_t dims[] = {3, 33, 128, 352};
    for (int i = 0; i < 4; ++i) {
        size_t n = dims[i] >= 128 ? 1000 : 1500, m = dims[i] >= 128 ? 30 : 120; /* kd-trees barely prune there */
        float *rows = grip_test_uniform_rows(&s, n, dims[i], -1.0f, 1.0f);
        float *q = grip_test_uniform_rows(&s, m, dims[i], -1.0f, 1.0f);
        rows[7 * dims[i]] = NAN;
        rows[8 * dims[i] + dims[i] - 1] = INFINITY;
        q[3 * dims[i]] = NAN; /* gets nothing */
        exact_case(rows, n, q, m, dims[i]);
        free(rows);
        free(q);
    }
}
END_TEST

START_TEST(exact_clustered)
{
    uint64_t s = 22;
    const uint32_t dims[] = {3, 33, 128, 352};
    for (int i = 0; i < 4; ++i) {
        size_t n = dims[i] >= 128 ? 1000 : 1500, m = dims[i] >= 128 ? 30 : 120;
        float *rows = grip_test_clustered_rows(&s, n + m, dims[i], 9), *q = rows + n * dims[i]; /* same clusters */
        for (size_t r = 11; r < n; r += 97)
            rows[r * dims[i]] = NAN;
        exact_case(rows, n, q, m, dims[i]);
        free(rows);
    }
}
END_TEST

/* Duplicates make ties everywhere: the tree must list them as grip_bruteforce_search does (lower row first), and the
 * inclusive bound 1.0 is an attained distance. */
START_TEST(exact_duplicates_ties_and_bound)
{
    uint64_t s = 23;
    const uint32_t dims[] = {3, 33};
    for (int i = 0; i < 2; ++i) {
        size_t n = 800, m = 100;
        float *rows = duplicate_rows(&s, n, dims[i]), *q = duplicate_rows(&s, m, dims[i]);
        exact_case(rows, n, q, m, dims[i]);
        grip_ctx *ctx = grip_test_ctx();
        grip_kdtree_hd *t = build(ctx, rows, n, dims[i], 1, 1, 4, 0);
        expect_exact(ctx, t, rows, n, q, m, 8, dims[i] == 3 ? 1.0f : 6.0f);
        grip_kdtree_hd_free(t);
        grip_ctx_free(ctx);
        free(rows);
        free(q);
    }
}
END_TEST

/* All rows equal: nothing can split, one leaf holds them all; k larger than n pads. */
START_TEST(unsplittable_and_tiny)
{
    grip_ctx *ctx = grip_test_ctx();
    float rows[40 * 5], q[5] = {1, 2, 3, 4, 5};
    for (int i = 0; i < 40 * 5; ++i)
        rows[i] = -2.5f;
    grip_kdtree_hd *t = build(ctx, rows, 40, 5, 2, 3, 4, 1);
    ck_assert_uint_eq(t->n_nodes, 2);
    ck_assert_uint_eq(t->count[0], 40);
    check_structure(t, rows, 40, 4);
    expect_exact(ctx, t, rows, 40, q, 1, 8, INFINITY);
    grip_kdtree_hd_free(t);
    float one[3] = {1, 2, 3}, nan_row[3] = {NAN, 0, 0};
    t = build(ctx, one, 1, 3, 1, 1, 1, 0);
    expect_exact(ctx, t, one, 1, one, 1, 4, INFINITY);
    grip_kdtree_hd_free(t);
    t = build(ctx, nan_row, 1, 3, 1, 1, 1, 0); /* no finite row: an empty tree finds nothing */
    ck_assert_uint_eq(t->n_points, 0);
    expect_exact(ctx, t, nan_row, 1, one, 1, 2, INFINITY);
    grip_kdtree_hd_free(t);
    grip_ctx_free(ctx);
}
END_TEST

/* The box distance never exceeds a contained row's distance by more than the slack allows. */
START_TEST(box_distance_is_a_lower_bound)
{
    uint64_t s = 24;
    const uint32_t dim = 352;
    float *rows = grip_test_uniform_rows(&s, 400, dim, -1.0f, 1.0f), *q = grip_test_uniform_rows(&s, 50, dim, -1, 1);
    grip_ctx *ctx = grip_test_ctx();
    grip_kdtree_hd *t = build(ctx, rows, 400, dim, 1, 1, 8, 0);
    size_t above = 0;
    for (size_t i = 0; i < 50; ++i)
        for (uint32_t node = 0; node < t->n_nodes; ++node) {
            float lb = grip_kdtree_hd_box_sqdist(q + i * dim, t->box_min + (size_t)node * dim,
                                                 t->box_max + (size_t)node * dim, dim) * t->box_slack;
            for (uint32_t j = 0; j < t->count[node]; ++j) {
                const float *r = rows + (size_t)t->perm[t->begin[node] + j] * dim;
                float acc = 0.0f;
                for (uint32_t d = 0; d < dim; ++d) {
                    float diff = q[i * dim + d] - r[d];
                    acc += diff * diff;
                }
                above += lb > acc;
            }
        }
    ck_assert_uint_eq(above, 0);
    /* inside the box: 0; one dimension 3 below: 9; a corner row: its own distance, within the slack */
    float lo[352], hi[352];
    for (uint32_t d = 0; d < dim; ++d) {
        lo[d] = q[d] - 0.5f;
        hi[d] = q[d] + 0.25f;
    }
    ck_assert_float_eq(grip_kdtree_hd_box_sqdist(q, lo, hi, dim), 0.0f);
    lo[17] = q[17] + 3.0f;
    hi[17] = q[17] + 4.0f;
    ck_assert_float_eq(grip_kdtree_hd_box_sqdist(q, lo, hi, dim), 9.0f);
    float corner = 0.0f;
    for (uint32_t d = 0; d < dim; ++d) {
        float diff = q[d] - hi[d];
        corner += diff * diff;
        lo[d] = hi[d];
    }
    float box = grip_kdtree_hd_box_sqdist(q, lo, hi, dim);
    ck_assert_float_le(box * t->box_slack, corner);
    ck_assert_float_ge(box, corner * t->box_slack);
    grip_kdtree_hd_free(t);
    grip_ctx_free(ctx);
    free(rows);
    free(q);
}
END_TEST

/* recall@1 of the first neighbour against grip_bruteforce_search */
static double recall_at_1(grip_ctx *ctx, const grip_kdtree_hd *t, const float *rows, size_t n, const float *q, size_t m,
                          uint32_t checks, uint32_t finish_below)
{
    uint32_t *ids = malloc(m * sizeof *ids), *want = malloc(m * sizeof *want);
    float *d = malloc(m * sizeof *d), *want_d = malloc(m * sizeof *want_d);
    ck_assert(ids && want && d && want_d);
    ck_assert_int_eq(grip_kdtree_hd_search(ctx, t, rows, q, m, 1, checks, finish_below, INFINITY, ids, d), GRIP_OK);
    ck_assert_int_eq(grip_bruteforce_search(ctx, rows, n, q, m, t->dim, 1, INFINITY, want, want_d), GRIP_OK);
    size_t hits = 0, better = 0;
    for (size_t i = 0; i < m; ++i) {
        hits += ids[i] == want[i];
        better += d[i] < want_d[i]; /* never better than exact */
    }
    ck_assert_uint_eq(better, 0);
    free(ids);
    free(want);
    free(d);
    free(want_d);
    return (double)hits / (double)m;
}

/* Rows near an 8-dimensional subspace of R^64 (as descriptors are): rows + m queries from one distribution. */
static float *low_rank_rows(uint64_t *s, size_t rows, uint32_t dim)
{
    float *basis = grip_test_uniform_rows(s, 8, dim, -1.0f, 1.0f), *a = malloc(rows * dim * sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (size_t i = 0; i < rows; ++i) {
        float z[8];
        for (int j = 0; j < 8; ++j)
            z[j] = grip_test_uniform(s, -1.0f, 1.0f);
        for (uint32_t d = 0; d < dim; ++d) {
            float v = grip_test_uniform(s, -0.02f, 0.02f);
            for (int j = 0; j < 8; ++j)
                v += z[j] * basis[j * dim + d];
            a[i * dim + d] = v;
        }
    }
    free(basis);
    return a;
}

START_TEST(approximate_recall_rises)
{
    uint64_t s = 25;
    const size_t n = 4000, m = 300;
    const uint32_t dim = 64;
    float *rows = low_rank_rows(&s, n + m, dim), *q = rows + n * dim;
    grip_ctx *ctx = grip_test_ctx();
    grip_kdtree_hd *tree = build(ctx, rows, n, dim, 1, 1, 8, 0);
    grip_kdtree_hd *forest = build(ctx, rows, n, dim, 8, 5, 8, 3);
    const uint32_t checks[] = {1, 4, 16, 64};
    double r_tree[4], r_forest[4];
    for (int i = 0; i < 4; ++i) {
        r_tree[i] = recall_at_1(ctx, tree, rows, n, q, m, checks[i], 0);
        r_forest[i] = recall_at_1(ctx, forest, rows, n, q, m, checks[i], 0);
        printf("kdtree_hd recall@1, D=64 rank 8, n=4000, checks=%u: tree %.3f, forest(8) %.3f\n", checks[i],
               r_tree[i], r_forest[i]);
    }
    for (int i = 1; i < 4; ++i) {
        ck_assert_double_gt(r_tree[i], r_tree[i - 1]);
        ck_assert_double_gt(r_forest[i], r_forest[i - 1]);
    }
    ck_assert_double_gt(r_forest[1], r_tree[1]);
    ck_assert_double_gt(r_forest[2], r_tree[2]);
    /* every leaf allowed: recall 1 */
    ck_assert_double_eq(recall_at_1(ctx, tree, rows, n, q, m, tree->n_nodes, 0), 1.0);
    ck_assert_double_eq(recall_at_1(ctx, forest, rows, n, q, m, forest->n_nodes, 0), 1.0);
    /* P-BANNS finish: everyone still active at the start is brute-forced (exact); a moderate threshold helps */
    ck_assert_double_eq(recall_at_1(ctx, forest, rows, n, q, m, 2, (uint32_t)m + 1), 1.0);
    /* a query finished by brute force is never worse off than one left to its bound */
    uint32_t plain_id[300], finished_id[300];
    float plain_d[300], finished_d[300];
    ck_assert_int_eq(grip_kdtree_hd_search(ctx, tree, rows, q, m, 1, 64, 0, INFINITY, plain_id, plain_d), GRIP_OK);
    ck_assert_int_eq(grip_kdtree_hd_search(ctx, tree, rows, q, m, 1, 64, 300, INFINITY, finished_id, finished_d),
                     GRIP_OK);
    size_t worse = 0, improved = 0;
    for (size_t i = 0; i < m; ++i) {
        worse += finished_d[i] > plain_d[i];
        improved += finished_d[i] < plain_d[i];
    }
    ck_assert_uint_eq(worse, 0);
    printf("kdtree_hd tree, checks=64, brute force below 300 active: %zu of %zu queries improved\n", improved, m);
    ck_assert_uint_gt(improved, 0);
    grip_kdtree_hd_free(tree);
    grip_kdtree_hd_free(forest);
    grip_ctx_free(ctx);
    free(rows);
}
END_TEST

/* The same seed builds the same forest; another seed another one; top_spans 1 gives identical trees. */
START_TEST(randomized_trees_are_seeded)
{
    uint64_t s = 26;
    const size_t n = 600;
    const uint32_t dim = 16;
    float *rows = grip_test_uniform_rows(&s, n, dim, 0.0f, 1.0f);
    grip_ctx *ctx = grip_test_ctx();
    grip_kdtree_hd *a = build(ctx, rows, n, dim, 4, 5, 4, 99), *b = build(ctx, rows, n, dim, 4, 5, 4, 99);
    grip_kdtree_hd *c = build(ctx, rows, n, dim, 4, 5, 4, 100), *plain = build(ctx, rows, n, dim, 2, 1, 4, 5);
    check_structure(a, rows, n, 4);
    ck_assert_uint_eq(a->n_nodes, b->n_nodes);
    ck_assert_mem_eq(a->split_dim, b->split_dim, a->n_nodes * sizeof(uint32_t));
    ck_assert_mem_eq(a->perm, b->perm, (size_t)a->n_trees * a->n_points * sizeof(uint32_t));
    int differs = a->n_nodes != c->n_nodes;
    for (uint32_t i = 0; !differs && i < a->n_nodes; ++i)
        differs = a->split_dim[i] != c->split_dim[i];
    ck_assert(differs);
    /* randomized trees differ from one another */
    ck_assert(memcmp(a->split_dim, a->split_dim + a->roots[1], 8 * sizeof(uint32_t)) != 0);
    uint32_t half = plain->roots[1];
    ck_assert_uint_eq(plain->n_nodes, 2 * half);
    ck_assert_mem_eq(plain->split_dim, plain->split_dim + half, half * sizeof(uint32_t));
    for (uint32_t i = 0; i < 3; ++i) {
        grip_kdtree_hd *t = i == 0 ? a : i == 1 ? b : c;
        for (uint32_t node = 0; node < t->n_nodes; ++node)
            ck_assert(t->child[node] == GRIP_KDTREE_HD_LEAF || t->split_dim[node] < dim);
    }
    /* the pick is uniform enough: every choice of 5 occurs */
    int hit[5] = {0};
    for (uint32_t node = 0; node < 200; ++node)
        hit[grip_kdtree_hd_pick(99, 1, node, 5)] = 1;
    ck_assert(hit[0] && hit[1] && hit[2] && hit[3] && hit[4]);
    grip_kdtree_hd_free(a);
    grip_kdtree_hd_free(b);
    grip_kdtree_hd_free(c);
    grip_kdtree_hd_free(plain);
    grip_ctx_free(ctx);
    free(rows);
}
END_TEST

START_TEST(bad_arguments_refused)
{
    grip_ctx *ctx = grip_test_ctx();
    float rows[6] = {0, 1, 2, 3, 4, 5};
    grip_kdtree_hd_params p = {1, 1, 4, 0}, no_trees = {0, 1, 4, 0}, no_leaf = {1, 1, 0, 0};
    grip_kdtree_hd *t = NULL;
    ck_assert_int_eq(grip_kdtree_hd_build(ctx, NULL, 2, 3, &p, &t), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree_hd_build(ctx, rows, 2, 0, &p, &t), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree_hd_build(ctx, rows, 2, 3, &no_trees, &t), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree_hd_build(ctx, rows, 2, 3, &no_leaf, &t), GRIP_EINVAL);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "node_size"));
    ck_assert_int_eq(grip_kdtree_hd_build(ctx, rows, 2, 3, &p, &t), GRIP_OK);
    uint32_t ids[2];
    float d[2];
    ck_assert_int_eq(grip_kdtree_hd_search(ctx, t, rows, rows, 1, 2, 0, 0, NAN, ids, d), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree_hd_search(ctx, t, rows, NULL, 1, 2, 0, 0, INFINITY, ids, d), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree_hd_search(ctx, t, NULL, rows, 1, 2, 0, 0, INFINITY, ids, d), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree_hd_search(ctx, NULL, rows, rows, 1, 2, 0, 0, INFINITY, ids, d), GRIP_EINVAL);
    ck_assert_int_eq(grip_kdtree_hd_search(ctx, t, rows, rows, 1, 2, 0, 0, INFINITY, ids, d), GRIP_OK);
    ck_assert_uint_eq(ids[0], 0);
    ck_assert_uint_eq(ids[1], 1);
    ck_assert_float_eq(d[1], 27.0f);
    grip_kdtree_hd_free(t);
    grip_ctx_free(ctx);
}
END_TEST

/* ---- the stages, through plugin.h ---- */

static const grip_stage_impl *stage_named(const char *name)
{
    const grip_plugin *pl = grip_plugin_get(GRIP_ABI_MAJOR, GRIP_ABI_MINOR);
    ck_assert_ptr_nonnull(pl);
    for (uint32_t i = 0; i < pl->n_stages; ++i)
        if (strcmp(pl->stages[i]->name, name) == 0) {
            ck_assert_uint_eq(pl->stages[i]->kind, GRIP_STAGE_INDEX);
            return pl->stages[i];
        }
    ck_abort_msg("no stage %s", name);
    return NULL;
}

/* Builds the stage's index over rows (two models), searches it and compares with grip_bruteforce_search: equal when the
 * index says it is exact, else only as good at best. Returns the recall@1. */
static double stage_search(const char *name, const grip_kv *kv, uint32_t n_kv, const float *rows, size_t n,
                           const float *q, size_t m, uint32_t dim, uint32_t k, uint32_t want_exact)
{
    grip_ctx *ctx = grip_test_ctx();
    const grip_stage_impl *impl = stage_named(name);
    grip_stage *st = NULL;
    ck_assert_int_eq(impl->create(ctx, kv, n_kv, &st), GRIP_OK);
    uint32_t *model = malloc(n * sizeof *model), *ids = malloc(m * k * sizeof *ids), *want = malloc(m * k * 4);
    float *d = malloc(m * k * sizeof *d), *want_d = malloc(m * k * sizeof *want_d);
    ck_assert(model && ids && want && d && want_d);
    for (size_t i = 0; i < n; ++i)
        model[i] = i < n / 3 ? 0 : 1;
    grip_array ref = grip_array_host_view(GRIP_F32, n, dim, (void *)rows);
    grip_array mid = grip_array_host_view(GRIP_U32, n, 1, model);
    grip_array qa = grip_array_host_view(GRIP_F32, m, dim, (void *)q);
    grip_array ia = grip_array_host_view(GRIP_U32, m, k, ids), da = grip_array_host_view(GRIP_F32, m, k, d);
    grip_index *ix = NULL;
    ck_assert_int_eq(impl->build(st, &ref, &mid, &ix), GRIP_OK);
    ck_assert_uint_eq(ix->rows, n);
    ck_assert_uint_eq(ix->dim, dim);
    ck_assert_uint_eq(ix->n_models, 2);
    ck_assert_uint_eq(ix->exact, want_exact);
    ck_assert_uint_eq(ix->reference.rows, n);
    ck_assert_int_eq(ix->search(ix, &qa, k, INFINITY, &ia, &da), GRIP_OK);
    ck_assert_int_eq(grip_bruteforce_search(ctx, rows, n, q, m, dim, k, INFINITY, want, want_d), GRIP_OK);
    size_t hits = 0, better = 0;
    for (size_t i = 0; i < m; ++i) {
        hits += ids[i * k] == want[i * k];
        better += d[i * k] < want_d[i * k];
    }
    ck_assert_uint_eq(better, 0);
    if (want_exact) {
        ck_assert_mem_eq(ids, want, m * k * sizeof *ids);
        ck_assert_mem_eq(d, want_d, m * k * sizeof *d);
    }
    /* wrong query width: refused, naming the queries */
    grip_array narrow = grip_array_host_view(GRIP_F32, m, dim - 1, (void *)q);
    ck_assert_int_eq(ix->search(ix, &narrow, k, INFINITY, &ia, &da), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "queries"));
    ix->release(ix);
    impl->destroy(st);
    free(model);
    free(ids);
    free(want);
    free(d);
    free(want_d);
    grip_ctx_free(ctx);
    return (double)hits / (double)m;
}

START_TEST(stages_through_the_plugin)
{
    uint64_t s = 27;
    const size_t n = 2000, m = 200;
    const uint32_t dim = 33;
    float *rows = low_rank_rows(&s, n + m, dim), *q = rows + n * dim;
    rows[10 * dim] = NAN;
    const grip_kv exact_tree[] = {{"device", "cpu"}, {"node_size", "4"}};
    stage_search("kdtree", exact_tree, 2, rows, n, q, m, dim, 8, 1);
    stage_search("kdtree", NULL, 0, rows, n, q, m, dim, 2, 1); /* defaults: exact */
    const grip_kv exact_forest[] = {{"device", "cpu"}, {"trees", "3"}, {"checks", "0"}};
    stage_search("kdforest", exact_forest, 3, rows, n, q, m, dim, 4, 1);
    const grip_kv bounded_tree[] = {{"device", "cpu"}, {"node_size", "8"}, {"checks", "2"}};
    double r_tree = stage_search("kdtree", bounded_tree, 3, rows, n, q, m, dim, 1, 0);
    const grip_kv forest[] = {{"device", "cpu"}, {"trees", "8"}, {"node_size", "8"}, {"checks", "16"}, {"seed", "5"}};
    double r_forest = stage_search("kdforest", forest, 5, rows, n, q, m, dim, 1, 0);
    ck_assert_double_lt(r_tree, r_forest);
    const grip_kv finish[] = {{"device", "cpu"}, {"checks", "1"}, {"finish_below", "1000"}};
    ck_assert_double_eq(stage_search("kdforest", finish, 3, rows, n, q, m, dim, 1, 0), 1.0);
    free(rows);
}
END_TEST

/* A small case of each stage (the one valgrind runs). */
START_TEST(stages_small)
{
    uint64_t s = 28;
    const size_t n = 300, m = 40;
    const uint32_t dim = 8;
    float *rows = low_rank_rows(&s, n + m, dim), *q = rows + n * dim;
    rows[7 * dim + 3] = NAN;
    const grip_kv tree[] = {{"device", "cpu"}, {"node_size", "2"}};
    stage_search("kdtree", tree, 2, rows, n, q, m, dim, 3, 1);
    const grip_kv forest[] = {{"device", "cpu"}, {"trees", "3"}, {"checks", "4"}, {"finish_below", "20"}};
    stage_search("kdforest", forest, 4, rows, n, q, m, dim, 2, 0);
    const grip_kv finish[] = {{"device", "cpu"}, {"checks", "4"}, {"finish_below", "41"}}; /* all brute-forced */
    ck_assert_double_eq(stage_search("kdforest", finish, 3, rows, n, q, m, dim, 2, 0), 1.0);
    free(rows);
}
END_TEST

START_TEST(stage_config_refused)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_stage *st = NULL;
    const grip_kv bad[] = {{"node_size", "0"}, {"trees", "2"}};
    ck_assert_int_eq(stage_named("kdtree")->create(ctx, bad, 2, &st), GRIP_ECONFIG);
    ck_assert_ptr_null(st);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "node_size"));
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "trees")); /* unknown to kdtree */
    const grip_kv bad_forest[] = {{"trees", "0"}, {"top_spans", "x"}};
    ck_assert_int_eq(stage_named("kdforest")->create(ctx, bad_forest, 2, &st), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "trees"));
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "top_spans"));
    grip_ctx_free(ctx);
}
END_TEST

static Suite *kdtree_hd_suite(void)
{
    Suite *s = suite_create("kdtree_hd");
    TCase *small = tcase_create("small"); /* quick: the case run under valgrind */
    tcase_add_test(small, unsplittable_and_tiny);
    tcase_add_test(small, randomized_trees_are_seeded);
    tcase_add_test(small, bad_arguments_refused);
    tcase_add_test(small, stage_config_refused);
    tcase_add_test(small, stages_small);
    suite_add_tcase(s, small);
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, exact_uniform);
    tcase_add_test(tc, exact_clustered);
    tcase_add_test(tc, exact_duplicates_ties_and_bound);
    tcase_add_test(tc, box_distance_is_a_lower_bound);
    tcase_add_test(tc, approximate_recall_rises);
    tcase_add_test(tc, stages_through_the_plugin);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return grip_test_run(kdtree_hd_suite());
}
