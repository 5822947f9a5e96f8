/* test_kdtree_hd_tutorial.c -- the descriptor kd-trees on PCL's own SHOT352 descriptors of the correspondence-
 * grouping tutorial (pcl_reference/tutorial): an exact kd-tree over the 686 model rows gives, for the 3,747 scene
 * rows, PCL's 1,797 correspondences (squared distance < 0.25) with bit-identical distances; and the recall@1 of
 * bounded searches of trees and forests on real SHOT rows, printed for a few bounds. */
#include "test_support.h"
#include "index/kdtree_hd.h"
#include "index/bruteforce.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHOT_DIM 352
#define TUTORIAL "pcl_reference/tutorial/"

static grip_kdtree_hd *build(grip_ctx *ctx, const float *rows, size_t n, uint32_t trees, uint32_t node_size)
{
    grip_kdtree_hd_params p = {trees, trees > 1 ? 5 : 1, node_size, 3};
    grip_kdtree_hd *t = NULL;
    ck_assert_int_eq(grip_kdtree_hd_build(ctx, rows, n, SHOT_DIM, &p, &t), GRIP_OK);
    return t;
}

START_TEST(exact_tree_gives_pcl_correspondences)
{
    size_t n_model, n_scene, n_pcl;
    float *model = grip_test_read_rows(TUTORIAL "model_shot.f32.gz", SHOT_DIM * sizeof(float), &n_model);
    float *scene = grip_test_read_rows(TUTORIAL "scene_shot.f32.gz", SHOT_DIM * sizeof(float), &n_scene);
    grip_corr *pcl = grip_test_read_correspondences(TUTORIAL "correspondences.tsv", &n_pcl);
    ck_assert_uint_eq(n_model, 686);
    ck_assert_uint_eq(n_scene, 3747);
    ck_assert_uint_eq(n_pcl, 1797);
    grip_ctx *ctx = grip_test_ctx();
    grip_kdtree_hd *t = build(ctx, model, n_model, 1, 64);
    uint32_t *ids = malloc(n_scene * sizeof *ids);
    float *d = malloc(n_scene * sizeof *d);
    ck_assert(ids && d);
    /* PCL's bound is strict (< 0.25): the largest float below it, inclusive */
    ck_assert_int_eq(grip_kdtree_hd_search(ctx, t, model, scene, n_scene, 1, 0, 0, nextafterf(0.25f, 0.0f), ids, d),
                     GRIP_OK);
    size_t c = 0, wrong = 0;
    for (size_t i = 0; i < n_scene; ++i) {
        if (ids[i] == UINT32_MAX)
            continue;
        wrong += c >= n_pcl || pcl[c].scene != i || pcl[c].model != ids[i] || pcl[c].sqdist != d[i];
        ++c;
    }
    ck_assert_uint_eq(c, n_pcl);
    ck_assert_uint_eq(wrong, 0);
    grip_kdtree_hd_free(t);
    free(ids);
    free(d);
    free(pcl);
    grip_ctx_free(ctx);
    free(model);
    free(scene);
}
END_TEST

/* recall@1 of the scene rows (finite ones) against the model rows: rises with checks. */
START_TEST(recall_on_shot)
{
    size_t n_model, n_scene;
    float *model = grip_test_read_rows(TUTORIAL "model_shot.f32.gz", SHOT_DIM * sizeof(float), &n_model);
    float *scene = grip_test_read_rows(TUTORIAL "scene_shot.f32.gz", SHOT_DIM * sizeof(float), &n_scene);
    for (size_t i = 0; i < n_scene / 4; ++i) /* every 4th scene row: enough queries, a quarter of the time */
        memcpy(scene + i * SHOT_DIM, scene + 4 * i * SHOT_DIM, SHOT_DIM * sizeof *scene);
    n_scene /= 4;
    grip_ctx *ctx = grip_test_ctx();
    uint32_t *want = malloc(n_scene * sizeof *want), *ids = malloc(n_scene * sizeof *ids);
    float *want_d = malloc(n_scene * sizeof *want_d), *d = malloc(n_scene * sizeof *d);
    ck_assert(want && ids && want_d && d);
    ck_assert_int_eq(grip_bruteforce_search(ctx, model, n_model, scene, n_scene, SHOT_DIM, 1, INFINITY, want, want_d),
                     GRIP_OK);
    size_t valid = 0;
    for (size_t i = 0; i < n_scene; ++i)
        valid += want[i] != UINT32_MAX;
    const uint32_t trees[] = {1, 4, 8}, checks[] = {1, 4, 16, 64};
    double last[3] = {0, 0, 0};
    for (int c = 0; c < 4; ++c) {
        printf("kdtree_hd tutorial SHOT352 (686 model rows, %zu of the scene rows as queries), node_size 8, checks "
               "%2u: recall@1",
               valid, checks[c]);
        for (int tr = 0; tr < 3; ++tr) {
            grip_kdtree_hd *t = build(ctx, model, n_model, trees[tr], 8);
            ck_assert_int_eq(grip_kdtree_hd_search(ctx, t, model, scene, n_scene, 1, checks[c], 0, INFINITY, ids, d),
                             GRIP_OK);
            size_t hits = 0;
            for (size_t i = 0; i < n_scene; ++i)
                hits += want[i] != UINT32_MAX && ids[i] == want[i];
            double r = (double)hits / (double)valid;
            printf(" %u tree%s %.3f", trees[tr], trees[tr] > 1 ? "s" : "", r);
            ck_assert_double_gt(r, last[tr]);
            last[tr] = r;
            grip_kdtree_hd_free(t);
        }
        printf("\n");
    }
    free(want);
    free(ids);
    free(want_d);
    free(d);
    grip_ctx_free(ctx);
    free(model);
    free(scene);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kdtree_hd_tutorial");
    TCase *exact = tcase_create("exact"), *recall = tcase_create("recall");
    tcase_set_timeout(exact, 120);
    tcase_set_timeout(recall, 120);
    tcase_add_test(exact, exact_tree_gives_pcl_correspondences);
    tcase_add_test(recall, recall_on_shot);
    suite_add_tcase(s, exact);
    suite_add_tcase(s, recall);
    return grip_test_run_with_data(s, TUTORIAL "model_shot.f32.gz");
}
