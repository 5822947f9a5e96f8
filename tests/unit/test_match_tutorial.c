/* test_match_tutorial.c -- PCL's correspondence-grouping tutorial matching, reproduced from PCL's own SHOT352
 * descriptors (pcl_reference/tutorial): scene rows whose first value is NaN are skipped, the rest get their
 * nearest model row, kept when the squared distance is < 0.25. The result must be PCL's correspondences.tsv:
 * the same 1,797 pairs, with bit-identical distances (FLANN's float sum in dimension order). */
#include "test_support.h"
#include "host_util.h"
#include "index/bruteforce.h"
#include "match/match_select.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define SHOT_DIM 352
#define TUTORIAL "pcl_reference/tutorial/"

/* PCL's SHOT352 rows of one cloud. malloc'd. */
static float *read_shot(const char *rel, size_t *rows)
{
    return grip_test_read_rows(rel, SHOT_DIM * sizeof(float), rows);
}

START_TEST(tutorial_correspondences_equal_pcl)
{
    size_t n_model, n_scene, n_pcl;
    float *model = read_shot(TUTORIAL "model_shot.f32.gz", &n_model);
    float *scene = read_shot(TUTORIAL "scene_shot.f32.gz", &n_scene);
    grip_corr *pcl = grip_test_read_correspondences(TUTORIAL "correspondences.tsv", &n_pcl);
    ck_assert_uint_eq(n_model, 686);
    ck_assert_uint_eq(n_scene, 3747);
    ck_assert_uint_eq(n_pcl, 1797);

    grip_ctx *ctx = grip_test_ctx();
    const grip_match_policy policy = {1, 0.25f, 0.0f, 0};
    const uint32_t k = grip_match_search_k(&policy);
    uint32_t *ids = malloc(n_scene * k * sizeof *ids);
    float *d = malloc(n_scene * k * sizeof *d);
    ck_assert_ptr_nonnull(ids);
    ck_assert_ptr_nonnull(d);
    double best = INFINITY;
    for (int run = 0; run < 5; ++run) {
        double t0 = host_now_ms();
        ck_assert_int_eq(grip_bruteforce_search(ctx, model, n_model, scene, n_scene, SHOT_DIM, k,
                                                grip_match_search_bound(&policy), ids, d),
                         GRIP_OK);
        double t = host_now_ms() - t0;
        best = t < best ? t : best;
    }
    fprintf(stderr, "tutorial 1-NN, %zu x %zu x %d: best of 5 %.1f ms\n", n_scene, n_model, SHOT_DIM, best);

    size_t invalid = 0; /* PCL's invalid (NaN) descriptors: skipped by the tutorial, given no neighbour here */
    for (size_t i = 0; i < n_scene; ++i)
        if (isnan(scene[i * SHOT_DIM])) {
            ck_assert_uint_eq(ids[i * k], UINT32_MAX);
            ++invalid;
        }
    ck_assert_uint_gt(invalid, 0);

    grip_correspondences c;
    ck_assert_int_eq(grip_match_select(ctx, &policy, ids, d, n_scene, k, n_model, NULL, NULL, &c), GRIP_OK);
    ck_assert_uint_eq(c.count, n_pcl);
    for (size_t i = 0; i < n_pcl; ++i) {
        ck_assert_uint_eq(c.query[i], pcl[i].scene);
        ck_assert_uint_eq(c.reference[i], pcl[i].model);
        ck_assert(c.sqdist[i] == pcl[i].sqdist); /* %.9g round-trips a float exactly */
        ck_assert(isfinite(scene[(size_t)c.query[i] * SHOT_DIM]));
    }
    grip_correspondences_free(&c);
    free(ids);
    free(d);
    free(model);
    free(scene);
    free(pcl);
    grip_ctx_free(ctx);
}
END_TEST

static Suite *tutorial_suite(void)
{
    Suite *s = suite_create("match_tutorial");
    TCase *tc = tcase_create("pcl");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tutorial_correspondences_equal_pcl);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return grip_test_run_with_data(tutorial_suite(), TUTORIAL "correspondences.tsv");
}
