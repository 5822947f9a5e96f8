/* test_units_mr.c -- lengths written as multiples of the scene's measured resolution ("20 mr"): grip-host measures
 * the scene with the plugin's cloud_resolution and hands the stages plain numbers. configs/pcl_tutorial_mr.conf
 * finds the same milk box on PCL's tutorial pair in metres and on the same pair scaled to millimetres in memory
 * (same keypoints, correspondences and instance; the pose's translation x1000); the resolution is the mean
 * nearest-neighbour distance; a wrong unit, mr on a key that is not a length, and mr without a measurable scene
 * are configuration errors naming file:line: section.key. */
#include "test_support.h"
#include "config.h"
#include "pipeline.h"
#include "common/param_value.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_REL "pcl/data_repo/correspondence_grouping/milk.pcd"
#define SCENE_REL "pcl/milk_cartoon_all_small_clorox.pcd"

/* An n x n grid of spacing h in the z = 1 plane: its resolution is h. */
static host_cloud grid_cloud(uint32_t n, float h)
{
    host_cloud c = {0};
    c.width = n * n;
    c.height = 1;
    c.n = (size_t)n * n;
    c.xyz = malloc(c.n * 3 * sizeof *c.xyz);
    ck_assert_ptr_nonnull(c.xyz);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            float *p = c.xyz + 3 * ((size_t)i * n + j);
            p[0] = (float)i * h;
            p[1] = (float)j * h;
            p[2] = 1.0f;
        }
    return c;
}

static void scale_cloud(host_cloud *c, float s)
{
    for (size_t i = 0; i < 3 * c->n; i++)
        c->xyz[i] *= s;
}

/* Opens the pipeline of the config text `text` (file name "t.conf") for `scene`; returns pipeline_open_for's
 * result and leaves the diagnostics in *diag. */
static int open_text(const char *text, const host_cloud *scene, grip_config *cfg, grip_pipeline *p, grip_diag *diag)
{
    ck_assert_int_eq(grip_config_load_mem("t.conf", text, strlen(text), cfg, diag), 0);
    return pipeline_open_for(p, getenv("GRIP_PLUGIN"), cfg, scene, diag);
}

static int diag_has(const grip_diag *d, const char *needle)
{
    for (size_t i = 0; i < d->count; i++)
        if (strstr(d->messages[i], needle))
            return 1;
    return 0;
}

START_TEST(resolution_is_the_mean_nearest_neighbour_distance)
{
    host_cloud scene = grid_cloud(20, 0.004f);
    grip_config cfg = {0};
    grip_diag diag = {0};
    grip_pipeline p;
    int opened = open_text("[descriptor]\nimpl = shot\nradius = 5 mr\n[pipeline]\ndevice = cpu\n", &scene, &cfg, &p,
                           &diag);
    grip_diag_print(&diag, stderr);
    ck_assert_int_eq(opened, 0);
    ck_assert_double_eq_tol(cfg.resolution, 0.004, 1e-7);
    const grip_config_entry *e = grip_config_find(&cfg, "descriptor", "radius");
    ck_assert_ptr_nonnull(e->resolved);
    ck_assert_double_eq_tol(strtod(e->resolved, NULL), 0.02, 1e-8);
    pipeline_result r = {0};
    ck_assert_int_eq(pipeline_result_set_units(&r, &cfg), 0);
    ck_assert_uint_eq(r.n_lengths, 1);
    const char *prefix = "descriptor.radius = 5 mr = ";
    ck_assert_int_eq(strncmp(r.lengths[0], prefix, strlen(prefix)), 0);
    ck_assert_str_eq(r.lengths[0] + strlen(prefix), e->resolved);
    pipeline_result_free(&r);
    pipeline_close(&p);
    grip_config_free(&cfg);
    grip_diag_free(&diag);
    host_cloud_free(&scene);
}
END_TEST

START_TEST(bad_units_are_config_errors_naming_the_key)
{
    host_cloud scene = grid_cloud(10, 0.01f);
    grip_config cfg = {0};
    grip_diag diag = {0};
    grip_pipeline p;
    int opened = open_text("[descriptor]\nimpl = shot\nradius = 20 mx\nnormals_k = 3 mr\n[group]\nimpl = hough3d\n"
                           "threshold = 5 mr\nbin_size = 2mr\n",
                           &scene, &cfg, &p, &diag);
    grip_diag_print(&diag, stderr);
    ck_assert_int_eq(opened, -1);
    ck_assert(diag_has(&diag, "t.conf:3: descriptor.radius: '20 mx': unknown unit 'mx'"));
    ck_assert(diag_has(&diag, "t.conf:4: descriptor.normals_k: '3 mr': mr (multiples of the cloud's resolution) "
                              "is for lengths only"));
    ck_assert(diag_has(&diag, "t.conf:7: group.threshold: '5 mr': mr (multiples of the cloud's resolution) is for "
                              "lengths only"));
    ck_assert(!diag_has(&diag, "bin_size")); /* "2mr": no blank needed */
    ck_assert_uint_eq(diag.count, 3);
    grip_config_free(&cfg);
    grip_diag_free(&diag);
    host_cloud_free(&scene);
}
END_TEST

/* A stage itself only takes numbers: "20 mr" that reaches the parser unresolved says who resolves it. */
START_TEST(the_stage_parser_refuses_unresolved_mr)
{
    const grip_param_info length = {sizeof length, GRIP_PARAM_FLOAT,      "radius", "0.02", 0, 100, NULL,
                                    "r",           GRIP_PARAM_FLAG_LENGTH};
    grip_param_value v;
    char why[256];
    ck_assert_int_eq(grip_param_parse(&length, "20 mr", &v, why, sizeof why), -1);
    ck_assert_ptr_nonnull(strstr(why, "must be resolved to a number by the host"));
    ck_assert_int_eq(grip_param_parse(&length, "20 mx", &v, why, sizeof why), -1);
    ck_assert_str_eq(why, "'20 mx': unknown unit 'mx' (a length is a number in the cloud's unit, or a multiple of the "
                          "cloud's resolution as 'N mr')");
    ck_assert_int_eq(grip_param_parse(&length, "0.5", &v, why, sizeof why), 0);
    ck_assert_double_eq(v.number, 0.5);
    double m = 0;
    ck_assert_int_eq(grip_param_split_mr("2.5mr", &m), 1);
    ck_assert_double_eq(m, 2.5);
    ck_assert_int_eq(grip_param_split_mr("2.5 mrr", &m), 0);
    ck_assert_int_eq(grip_param_split_mr("mr", &m), 0);
}
END_TEST

START_TEST(mr_without_a_measurable_scene_fails)
{
    host_cloud one = grid_cloud(1, 0.01f); /* a single point: no nearest other point */
    const char *text = "[group]\nimpl = hough3d\nbin_size = 4 mr\n";
    grip_config cfg = {0};
    grip_diag diag = {0};
    grip_pipeline p;
    ck_assert_int_eq(open_text(text, &one, &cfg, &p, &diag), -1);
    grip_diag_print(&diag, stderr);
    ck_assert(diag_has(&diag, "has no two distinct finite points"));
    ck_assert(diag_has(&diag, "t.conf:3: group.bin_size: '4 mr' needs the scene's measured resolution"));
    grip_config_free(&cfg);
    grip_diag_free(&diag);
    /* no scene at all (pipeline_open): the same key error */
    ck_assert_int_eq(grip_config_load_mem("t.conf", text, strlen(text), &cfg, &diag), 0);
    ck_assert_int_eq(pipeline_open(&p, getenv("GRIP_PLUGIN"), &cfg, &diag), -1);
    ck_assert(diag_has(&diag, "t.conf:3: group.bin_size: '4 mr' needs the scene's measured resolution"));
    grip_config_free(&cfg);
    grip_diag_free(&diag);
    host_cloud_free(&one);
}
END_TEST

/* The tutorial through configs/pcl_tutorial_mr.conf on the CPU, the clouds scaled by `scale` in memory. */
static void run_tutorial_scaled(float scale, pipeline_result *r, double *resolution)
{
    char config[4096];
    snprintf(config, sizeof config, "%s/configs/pcl_tutorial_mr.conf", grip_test_source_dir());
    host_cloud model = grip_test_read_cloud(MODEL_REL), scene = grip_test_read_cloud(SCENE_REL);
    scale_cloud(&model, scale);
    scale_cloud(&scene, scale);
    grip_config cfg = {0};
    grip_diag diag = {0};
    grip_pipeline p;
    ck_assert_int_eq(grip_config_load(config, &cfg, &diag), 0);
    ck_assert_int_eq(grip_config_set(&cfg, "pipeline.device=cpu", &diag), 0);
    int opened = pipeline_open_for(&p, getenv("GRIP_PLUGIN"), &cfg, &scene, &diag);
    grip_diag_print(&diag, stderr);
    ck_assert_int_eq(opened, 0);
    int ran = pipeline_run(&p, &model, 1, NULL, 0, &scene, r, &diag);
    grip_diag_print(&diag, stderr);
    ck_assert_int_eq(ran, 0);
    ck_assert_int_eq(pipeline_result_set_units(r, &cfg), 0);
    pipeline_result_print_text(stderr, r, (const char *const[]){"milk"});
    *resolution = cfg.resolution;
    pipeline_close(&p);
    grip_config_free(&cfg);
    grip_diag_free(&diag);
    host_cloud_free(&model);
    host_cloud_free(&scene);
}

static const pipeline_instance *only_accepted(const pipeline_result *r)
{
    ck_assert_uint_eq(pipeline_result_accepted(r), 1);
    for (size_t i = 0; i < r->n_hypotheses; i++)
        if (r->hypotheses[i].accepted)
            return &r->hypotheses[i];
    return NULL;
}

START_TEST(one_config_recognises_the_tutorial_in_metres_and_millimetres)
{
    pipeline_result m = {0}, mm = {0};
    double res_m, res_mm;
    run_tutorial_scaled(1.0f, &m, &res_m);
    run_tutorial_scaled(1000.0f, &mm, &res_mm);
    ck_assert_double_eq_tol(res_mm / res_m, 1000.0, 1e-3);
    ck_assert_uint_eq(m.n_lengths, 12);
    ck_assert_uint_eq(mm.n_lengths, 12);
    ck_assert_uint_eq(mm.model_keypoints[0], m.model_keypoints[0]);
    ck_assert_uint_eq(mm.scene_keypoints, m.scene_keypoints);
    /* the scaled coordinates are rounded to float again, which moves a few SHOT distances across the match gate:
     * the correspondences agree within 1 %, the instance's within 2 */
    ck_assert_double_le(fabs((double)mm.correspondences - (double)m.correspondences), 0.01 * (double)m.correspondences);
    const pipeline_instance *a = only_accepted(&m), *b = only_accepted(&mm);
    ck_assert_uint_eq(a->model, b->model);
    ck_assert_int_le(abs((int)a->correspondences - (int)b->correspondences), 2);
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            ck_assert_double_eq_tol(b->pose[4 * r + c], a->pose[4 * r + c], 1e-4);
        /* translation in mm: within 0.01 mm of 1000 x the one in metres */
        ck_assert_double_eq_tol(b->pose[4 * r + 3], 1000.0 * a->pose[4 * r + 3], 1e-2);
    }
    /* the model is cut from the scene: both fit to a small fraction of the resolution */
    ck_assert_double_le(a->rmse, 0.1 * res_m);
    ck_assert_double_le(b->rmse, 0.1 * res_mm);
    pipeline_result_free(&m);
    pipeline_result_free(&mm);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("units_mr");
    TCase *tc = tcase_create("units");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, resolution_is_the_mean_nearest_neighbour_distance);
    tcase_add_test(tc, bad_units_are_config_errors_naming_the_key);
    tcase_add_test(tc, the_stage_parser_refuses_unresolved_mr);
    tcase_add_test(tc, mr_without_a_measurable_scene_fails);
    char path[4096];
    if (grip_test_data_path(path, sizeof path, SCENE_REL) && grip_test_data_path(path, sizeof path, MODEL_REL))
        tcase_add_test(tc, one_config_recognises_the_tutorial_in_metres_and_millimetres);
    else
        fprintf(stderr, "units_mr: %s absent: the metres/millimetres tutorial case is skipped\n", SCENE_REL);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
