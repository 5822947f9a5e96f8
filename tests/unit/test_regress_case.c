/* test_regress_case.c -- grip-host regress's case files (regress/case.h) and the judge they are scored by
 * (judge/judge.h): a valid case reads back field by field, every problem of a bad one is reported as
 * "file:line: section.key: message" (all at once), a case whose data is absent is marked for skipping, and the
 * judge pairs instances with objects by tolerance, telling correct, duplicate and wrong ones apart. */
#include "test_support.h"
#include "judge/judge.h"
#include "regress/case.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int diag_has(const grip_diag *d, const char *needle)
{
    for (size_t i = 0; i < d->count; i++)
        if (strstr(d->messages[i], needle))
            return 1;
    return 0;
}

static void print_diag(const grip_diag *d)
{
    for (size_t i = 0; i < d->count; i++)
        fprintf(stderr, "  %s\n", d->messages[i]);
}

START_TEST(a_file_case_reads_back)
{
    grip_test_tmp_dir_make();
    grip_test_write_text("model.pcd", "x");
    grip_test_write_text("pipe.conf", "[descriptor]\n");
    const char *path = grip_test_write_text("good.case", "# a comment\n"
                                                         "[case]\n"
                                                         "config = pipe.conf\n"
                                                         "[set]\n"
                                                         "group.threshold = 7\n"
                                                         "[models]\n"
                                                         "milk = model.pcd\n"
                                                         "box = model.pcd\n"
                                                         "[scene]\n"
                                                         "file = model.pcd\n"
                                                         "[expect]\n"
                                                         "max_distance = 0.02\n"
                                                         "max_false = 2\n"
                                                         "[instance first]\n"
                                                         "model = box\n"
                                                         "pose = 1 0 0 0.5  0 1 0 0  0 0 1 0  0 0 0 1\n"
                                                         "max_angle_deg = 3\n"
                                                         "[instance milk]\n"
                                                         "pose = 1 0 0 0  0 1 0 0  0 0 1 0  0 0 0 1\n");
    regress_case c;
    grip_diag d = {0};
    int rc = regress_case_load(path, NULL, &c, &d);
    print_diag(&d);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(c.name, "good");
    ck_assert_ptr_nonnull(strstr(c.config, "/pipe.conf"));
    ck_assert_int_eq(c.n_sets, 1);
    ck_assert_str_eq(c.sets[0], "group.threshold=7");
    ck_assert_uint_eq(c.n_models, 2);
    ck_assert_str_eq(c.model_labels[1], "box");
    ck_assert_int_eq(c.synth, 0);
    ck_assert_uint_eq(c.max_false, 2);
    ck_assert_uint_eq(c.n_instances, 2);
    ck_assert_uint_eq(c.instances[0].model, 1);
    ck_assert_double_eq(c.instances[0].pose[3], 0.5);
    ck_assert_double_eq(c.instances[0].max_distance, 0.02); /* from [expect] */
    ck_assert_double_eq(c.instances[0].max_angle_deg, 3);   /* its own */
    ck_assert_uint_eq(c.instances[1].model, 0);             /* named after the model */
    ck_assert_double_eq(c.instances[1].max_angle_deg, 10);  /* the default */
    ck_assert_ptr_null(c.missing_data);
    regress_case_free(&c);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(a_synth_case_takes_its_parameters)
{
    grip_test_tmp_dir_make();
    const char *path = grip_test_write_text("s.case", "[case]\nname = clutter\n[scene]\nseed = 9\nobjects = 5\n"
                                                      "noise_sigma = 0.002\n[expect]\nmax_angle_deg = 12\n");
    regress_case c;
    grip_diag d = {0};
    int rc = regress_case_load(path, NULL, &c, &d);
    print_diag(&d);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(c.name, "clutter");
    ck_assert_int_eq(c.synth, 1);
    ck_assert_ptr_null(c.config);
    ck_assert_uint_eq(c.synth_params.seed, 9);
    ck_assert_uint_eq(c.synth_params.n_objects, 5);
    ck_assert_double_eq(c.synth_params.noise_sigma, 0.002);
    ck_assert_uint_eq(c.synth_params.model_views, 8);
    ck_assert_double_eq(c.max_angle_deg, 12);
    regress_case_free(&c);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(every_problem_names_file_line_and_key)
{
    grip_test_tmp_dir_make();
    grip_test_write_text("m.pcd", "x");
    const char *path = grip_test_write_text("bad.case", "[case]\n"              /* 1 */
                                                        "colour = red\n"        /* 2: unknown key */
                                                        "[models]\n"            /* 3 */
                                                        "milk = m.pcd\n"        /* 4 */
                                                        "cup = nowhere.pcd\n"   /* 5: unreadable */
                                                        "[scene]\n"             /* 6 */
                                                        "file = m.pcd\n"        /* 7 */
                                                        "[expect]\n"            /* 8 */
                                                        "max_angle_deg = 400\n" /* 9: out of range */
                                                        "max_false = -1\n"      /* 10: negative */
                                                        "[set]\n"               /* 11 */
                                                        "threshold = 5\n"       /* 12: no section */
                                                        "[instance a]\n"        /* 13 */
                                                        "model = tea\n"         /* 14: no such label */
                                                        "pose = 1 0 0\n"        /* 15: too short */
                                                        "[expcet]\n"            /* 16: unknown section */
                                                        "x = 1\n");
    regress_case c;
    grip_diag d = {0};
    ck_assert_int_eq(regress_case_load(path, NULL, &c, &d), -1);
    print_diag(&d);
    char want[4200];
    const struct {
        int line;
        const char *rest;
    } expected[] = {{2, ": case.colour: unknown key"},
                    {5, ": models.cup: cannot read"},
                    {9, ": expect.max_angle_deg: '400'"},
                    {10, ": expect.max_false: '-1'"},
                    {12, ": set.threshold: expected section.key"},
                    {14, ": instance a.model: 'tea'"},
                    {15, ": instance a.pose: expected 16"},
                    {16, ": expcet: unknown section"}};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        snprintf(want, sizeof want, "%s:%d%s", path, expected[i].line, expected[i].rest);
        ck_assert_msg(diag_has(&d, want), "no message '%s'", want);
    }
    ck_assert_msg(diag_has(&d, "did you mean 'expect'?"), "no hint for the misspelt section");
    ck_assert_ptr_null(c.path); /* freed on failure */
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(whole_case_problems_are_reported)
{
    grip_test_tmp_dir_make();
    grip_test_write_text("x.pcd", "x");
    regress_case c;
    grip_diag d = {0};
    /* each file written just before it is read: grip_test_write_text's paths last two calls */
    const char *path = grip_test_write_text("both.case", "[scene]\nfile = x.pcd\nseed = 3\n");
    ck_assert_int_eq(regress_case_load(path, NULL, &c, &d), -1);
    ck_assert(diag_has(&d, "both.case:3: scene.seed: a scene is either a file"));
    grip_diag_free(&d);
    path = grip_test_write_text("none.case", "[case]\nname = n\n");
    ck_assert_int_eq(regress_case_load(path, NULL, &c, &d), -1);
    ck_assert(diag_has(&d, "none.case: scene: missing"));
    grip_diag_free(&d);
    path = grip_test_write_text("mod.case", "[models]\na = x.pcd\n[scene]\nseed = 1\n");
    ck_assert_int_eq(regress_case_load(path, NULL, &c, &d), -1);
    print_diag(&d);
    ck_assert(diag_has(&d, "a generated scene brings its own models"));
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(absent_data_marks_the_case_skipped)
{
    grip_test_tmp_dir_make();
    grip_test_write_text("p.conf", "");
    const char *path = grip_test_write_text("d.case", "[case]\nconfig = p.conf\n[models]\nm = data:no/such.pcd\n"
                                                      "[scene]\nfile = data:no/scene.pcd\n");
    regress_case c;
    grip_diag d = {0};
    ck_assert_int_eq(regress_case_load(path, NULL, &c, &d), 0);
    ck_assert_ptr_nonnull(c.missing_data);
    regress_case_free(&c);
    ck_assert_int_eq(regress_case_load(path, grip_test_tmp_dir(), &c, &d), 0);
    ck_assert_ptr_nonnull(strstr(c.missing_data, "/no/such.pcd"));
    ck_assert_uint_eq(d.count, 0);
    regress_case_free(&c);
    grip_test_tmp_dir_remove();
}
END_TEST

/* ---- the judge ----------------------------------------------------------------------------------------------- */

static void translation(double pose[16], double x, double y, double z)
{
    memset(pose, 0, 16 * sizeof *pose);
    pose[0] = pose[5] = pose[10] = pose[15] = 1;
    pose[3] = x, pose[7] = y, pose[11] = z;
}

START_TEST(judge_pairs_by_tolerance)
{
    float xyz[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    host_cloud points = {4, 1, 4, xyz, NULL, NULL, NULL, {0, 0, 0}};
    judge_truth truth[2];
    memset(truth, 0, sizeof truth);
    for (int t = 0; t < 2; t++) {
        truth[t].model = 0;
        truth[t].points = &points;
        truth[t].max_distance = 0.01;
        truth[t].max_angle_deg = 5;
    }
    translation(truth[0].pose, 0, 0, 0);
    translation(truth[1].pose, 1, 0, 0);
    pipeline_instance in[5];
    memset(in, 0, sizeof in);
    translation(in[0].pose, 1.008, 0, 0); /* object 1, but a closer instance comes later */
    translation(in[1].pose, 0.003, 0, 0); /* object 0 */
    translation(in[2].pose, 1.002, 0, 0); /* object 1, the closest */
    translation(in[3].pose, 0, 0, 0.5);   /* near nothing: wrong */
    translation(in[4].pose, 0, 0, 0);     /* exactly object 0, but rejected by verification */
    /* a 90 degree turn about z at object 0's place: within no angle tolerance */
    for (int k = 0; k < 4; k++)
        in[k].accepted = 1;
    pipeline_result r = {0};
    r.n_hypotheses = 5;
    r.hypotheses = in;
    judge_result j;
    ck_assert_int_eq(judge_recognition(&r, truth, 2, &j), 0);
    ck_assert_uint_eq(j.found, 2);
    ck_assert_int_eq(j.instance_of_truth[0], 1);
    ck_assert_int_eq(j.instance_of_truth[1], 2);
    ck_assert_int_eq(j.verdict[0], JUDGE_DUPLICATE);
    ck_assert_int_eq(j.verdict[3], JUDGE_WRONG);
    ck_assert_int_eq(j.truth_of_instance[4], -1);
    ck_assert_int_eq(j.rejected_of_truth[0], 4); /* the rejected hypothesis at object 0 is named */
    ck_assert_int_eq(j.rejected_of_truth[1], -1);
    ck_assert_uint_eq(j.false_instances, 2);
    ck_assert_uint_eq(j.duplicates, 1);
    ck_assert_double_eq_tol(j.truth_error[1].distance, 0.002, 1e-9);
    judge_result_free(&j);

    /* the same place turned by 90 degrees about z: within the distance of a huge tolerance, not the angle */
    double turn[16] = {0, -1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    memcpy(in[1].pose, turn, sizeof turn);
    truth[0].max_distance = 10;
    ck_assert_int_eq(judge_recognition(&r, truth, 1, &j), 0);
    ck_assert_int_eq(j.truth_of_instance[1], -1);
    ck_assert_double_eq_tol(j.instance_error[1].angle_deg, 90, 1e-9);
    ck_assert_double_eq_tol(j.instance_error[1].translation, 0, 1e-12);
    judge_result_free(&j);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("regress_case");
    TCase *tc = tcase_create("case");
    tcase_add_test(tc, a_file_case_reads_back);
    tcase_add_test(tc, a_synth_case_takes_its_parameters);
    tcase_add_test(tc, every_problem_names_file_line_and_key);
    tcase_add_test(tc, whole_case_problems_are_reported);
    tcase_add_test(tc, absent_data_marks_the_case_skipped);
    tcase_add_test(tc, judge_pairs_by_tolerance);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
