/* test_explain.c -- the host's explanations (host-example/explain.h): the reason read from a verdict of either ABI
 * minor, the key each reason names, the text of a rejection, and the likely cause of a run without
 * correspondences. */
#include "test_support.h"
#include "explain.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* grip_verdict as ABI 1.0 published it: what a plugin or host built before `reason` writes or reads */
typedef struct verdict_1_0 {
    uint32_t struct_size, hypothesis;
    float pose[16];
    float fitness, rmse;
    uint32_t iterations, accepted;
    float violation;
} verdict_1_0;

START_TEST(an_older_verdict_reads_unspecified)
{
    /* the 1.0 fields keep their places: a 1.0 host reads a 1.1 verdict unchanged */
    ck_assert_uint_eq(offsetof(grip_verdict, violation), offsetof(verdict_1_0, violation));
    ck_assert_uint_eq(offsetof(grip_verdict, accepted), offsetof(verdict_1_0, accepted));
    ck_assert_uint_eq(offsetof(grip_verdict, reason), sizeof(verdict_1_0));
    grip_verdict v;
    memset(&v, 0, sizeof v);
    v.struct_size = sizeof(verdict_1_0); /* from a 1.0 plugin: whatever lies past it is not read */
    v.reason = GRIP_VERDICT_DRIFT;
    ck_assert_uint_eq(explain_verdict_reason(&v), GRIP_VERDICT_UNSPECIFIED);
    v.accepted = 1;
    ck_assert_uint_eq(explain_verdict_reason(&v), GRIP_VERDICT_ACCEPTED);
    v.struct_size = sizeof v;
    v.accepted = 0;
    ck_assert_uint_eq(explain_verdict_reason(&v), GRIP_VERDICT_DRIFT);
    v.reason = GRIP_VERDICT_ACCEPTED; /* a rejection that claims acceptance */
    ck_assert_uint_eq(explain_verdict_reason(&v), GRIP_VERDICT_UNSPECIFIED);
    v.reason = 1000; /* from a later minor this host does not know */
    ck_assert_uint_eq(explain_verdict_reason(&v), GRIP_VERDICT_UNSPECIFIED);
    ck_assert_str_eq(explain_reason_key(1000), "unspecified");
}
END_TEST

START_TEST(each_reason_names_its_key)
{
    static const char *const keys[EXPLAIN_REASONS] = {
        "",         "unspecified", "max_hypotheses", "max_correspondence_distance", "min_fitness",
        "max_rmse", "max_drift",   "max_violation",  "duplicate_distance",          "ghv",
        "max_sunk"};
    for (uint32_t r = 0; r < EXPLAIN_REASONS; r++)
        ck_assert_str_eq(explain_reason_key(r), keys[r]);
    explain_settings s;
    memset(&s, 0, sizeof s);
    snprintf(s.value[GRIP_VERDICT_FITNESS], EXPLAIN_VALUE_SIZE, "0.5");
    snprintf(s.value[GRIP_VERDICT_DRIFT], EXPLAIN_VALUE_SIZE, "0.02");
    char buf[256];
    explain_rejection(buf, sizeof buf, GRIP_VERDICT_FITNESS, 0.33f, 0.001f, 0.0f, &s);
    ck_assert_str_eq(buf, "fitness 0.330 < min_fitness 0.5");
    explain_rejection(buf, sizeof buf, GRIP_VERDICT_DRIFT, 0.9f, 0.001f, 0.0f, &s);
    ck_assert_str_eq(buf, "ICP moved it farther than max_drift 0.02 from the grouped pose");
    explain_rejection(buf, sizeof buf, GRIP_VERDICT_RMSE, 0.9f, 0.004f, 0.0f, &s); /* the stage has no value */
    ck_assert_str_eq(buf, "RMSE 0.004 > max_rmse");
    explain_rejection(buf, 8, GRIP_VERDICT_FITNESS, 0.33f, 0.001f, 0.0f, &s); /* cut, terminated */
    ck_assert_str_eq(buf, "fitness");
}
END_TEST

/* A side x side grid of points `spacing` apart in the z = 0 plane. */
static host_cloud grid(uint32_t side, float spacing)
{
    host_cloud c;
    memset(&c, 0, sizeof c);
    c.width = side * side;
    c.height = 1;
    c.n = c.width;
    c.xyz = malloc(c.n * 3 * sizeof *c.xyz);
    ck_assert_ptr_nonnull(c.xyz);
    for (size_t i = 0; i < c.n; i++) {
        c.xyz[3 * i] = spacing * (float)(i % side);
        c.xyz[3 * i + 1] = spacing * (float)(i / side);
        c.xyz[3 * i + 2] = 0.0f;
    }
    return c;
}

START_TEST(an_empty_run_names_its_likely_cause)
{
    explain_settings s;
    memset(&s, 0, sizeof s);
    snprintf(s.descriptor_radius, EXPLAIN_VALUE_SIZE, "0.02");
    host_cloud model_mm = grid(20, 2.0f), scene_mm = grid(40, 2.0f), model_m = grid(20, 0.002f);
    ck_assert_double_eq_tol(explain_cloud_resolution(&scene_mm), 2.0, 1e-6);
    char buf[512];
    /* clouds in millimetres, a radius in metres */
    ck_assert_int_eq(explain_empty_run(buf, sizeof buf, 100, 0, 0, &model_mm, 1, &scene_mm, &s), 1);
    ck_assert_msg(strstr(buf, "no correspondence") &&
                      strstr(buf, "descriptor.radius 0.02 is 0.01 x the scene's resolution 2") &&
                      strstr(buf, "millimetres"),
                  "%s", buf);
    /* a model in metres, a scene in millimetres */
    ck_assert_int_eq(explain_empty_run(buf, sizeof buf, 100, 5, 0, &model_m, 1, &scene_mm, &s), 1);
    ck_assert_msg(strstr(buf, "5 correspondences but no hypothesis") && strstr(buf, "same units"), "%s", buf);
    /* units and radius in order, correspondences but no hypothesis: the group stage's settings */
    snprintf(s.descriptor_radius, EXPLAIN_VALUE_SIZE, "10");
    ck_assert_int_eq(explain_empty_run(buf, sizeof buf, 100, 5, 0, &model_mm, 1, &scene_mm, &s), 1);
    ck_assert_msg(strstr(buf, "descriptor.radius 10: check the group stage's vote threshold"), "%s", buf);
    /* a run with hypotheses needs no explanation */
    ck_assert_int_eq(explain_empty_run(buf, sizeof buf, 100, 5, 1, &model_mm, 1, &scene_mm, &s), 0);
    ck_assert_str_eq(buf, "");
    free(model_mm.xyz);
    free(scene_mm.xyz);
    free(model_m.xyz);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("explain");
    TCase *tc = tcase_create("explain");
    tcase_add_test(tc, an_older_verdict_reads_unspecified);
    tcase_add_test(tc, each_reason_names_its_key);
    tcase_add_test(tc, an_empty_run_names_its_likely_cause);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
