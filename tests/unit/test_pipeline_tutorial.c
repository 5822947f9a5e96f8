/* test_pipeline_tutorial.c -- the whole pipeline, loaded through grip-host's loader from libgrip.so, on PCL's
 * correspondence-grouping tutorial pair with configs/pcl_tutorial.conf (Hough 3D), pcl_tutorial_gc.conf and
 * pcl_tutorial_ghv.conf (geometric consistency, then global hypotheses verification with default settings):
 * PCL's keypoint and correspondence counts within 2 %, exactly one verified instance, its pose within 10 mm mean
 * model-point distance of PCL's Hough pose, RMSE <= 2.5 mm. */
#include "test_support.h"
#include "pipeline.h"
#include "judge/judge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MODEL_REL "pcl/data_repo/correspondence_grouping/milk.pcd"
#define SCENE_REL "pcl/milk_cartoon_all_small_clorox.pcd"

/* PCL 1.13's Hough pose of the milk box in the tutorial scene (../shared/data/pcl_reference/tutorial/instances.txt) */
static const double pcl_pose[16] = {0.976443648, -0.110384993, 0.185399324, -0.182774827,
                                    -0.11556752, -0.993148088, 0.0173491985, -0.178923473,
                                    0.182213888, -0.038366653, -0.98251009, 0.0424822979,
                                    0, 0, 0, 1};


static int within_percent(size_t got, size_t want, double percent)
{
    return fabs((double)got - (double)want) <= percent / 100.0 * (double)want;
}

static void run_tutorial(const char *config_name)
{
    char config[4096];
    snprintf(config, sizeof config, "%s/configs/%s", grip_test_source_dir(), config_name);
    host_cloud model = grip_test_read_cloud(MODEL_REL), scene = grip_test_read_cloud(SCENE_REL);

    grip_config cfg = {0};
    grip_diag diag = {0};
    grip_pipeline p;
    ck_assert_int_eq(grip_config_load(config, &cfg, &diag), 0);
    int opened = pipeline_open(&p, getenv("GRIP_PLUGIN"), &cfg, &diag);
    grip_diag_print(&diag, stderr);
    ck_assert_int_eq(opened, 0);
    pipeline_result r;
    int ran = pipeline_run(&p, &model, 1, NULL, 0, &scene, &r, &diag);
    grip_diag_print(&diag, stderr);
    ck_assert_int_eq(ran, 0);
    pipeline_result_print_text(stderr, &r, (const char *const[]){"milk"});

    ck_assert_msg(within_percent(r.model_keypoints[0], 686, 2), "model keypoints %zu", r.model_keypoints[0]);
    ck_assert_msg(within_percent(r.scene_keypoints, 3747, 2), "scene keypoints %zu", r.scene_keypoints);
    ck_assert_msg(within_percent(r.correspondences, 1797, 2), "correspondences %zu", r.correspondences);
    ck_assert_uint_eq(pipeline_result_accepted(&r), 1);
    for (size_t i = 0; i < r.n_hypotheses; i++) {
        if (!r.hypotheses[i].accepted)
            continue;
        judge_error err;
        judge_compare(&model, r.hypotheses[i].pose, pcl_pose, &err);
        double d = err.distance;
        fprintf(stderr, "%s: accepted pose is %.2f mm (mean model-point distance) from PCL's; RMSE %.2f mm\n",
                config_name, d * 1e3, r.hypotheses[i].rmse * 1e3);
        ck_assert_double_le(d, 0.010);
        ck_assert_double_le(r.hypotheses[i].rmse, 0.0025);
    }
    pipeline_result_free(&r);
    pipeline_close(&p);
    grip_config_free(&cfg);
    grip_diag_free(&diag);
    host_cloud_free(&model);
    host_cloud_free(&scene);
}

START_TEST(hough3d_finds_the_milk_box)
{
    run_tutorial("pcl_tutorial.conf");
}
END_TEST

START_TEST(geometric_consistency_verified_keeps_one_instance)
{
    run_tutorial("pcl_tutorial_gc.conf");
}
END_TEST

/* gc's two instances (the milk box and a 5-correspondence false one), ICP and GHV with its default settings */
START_TEST(geometric_consistency_with_ghv_keeps_one_instance)
{
    run_tutorial("pcl_tutorial_ghv.conf");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pipeline_tutorial");
    TCase *tc = tcase_create("tutorial");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, hough3d_finds_the_milk_box);
    tcase_add_test(tc, geometric_consistency_verified_keeps_one_instance);
    tcase_add_test(tc, geometric_consistency_with_ghv_keeps_one_instance);
    suite_add_tcase(s, tc);
    return grip_test_run_with_data(s, SCENE_REL);
}
