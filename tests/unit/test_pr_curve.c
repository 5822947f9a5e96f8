/* test_pr_curve.c -- the recall / 1-precision curve and its area (host-example/eval/pr_curve.h) on hand-made
 * matches whose curves are worked out by hand: perfect and hopeless matchers, a curve that steps back in
 * 1-precision, ties entering together, and queries without a match counting only in the recall's denominator. */
#include "test_support.h"
#include "eval/pr_curve.h"

#include <math.h>

#define TOL 1e-12

START_TEST(perfect_matcher_has_area_one)
{
    pr_query q[3] = {{0.3, 1}, {0.1, 1}, {0.2, 1}};
    pr_curve c;
    ck_assert_int_eq(pr_curve_build(q, 3, 3, &c), 0);
    ck_assert_uint_eq(c.n, 3);
    ck_assert_double_eq_tol(c.points[0].threshold, 0.1, TOL);
    ck_assert_double_eq_tol(c.points[2].recall, 1, TOL);
    for (size_t i = 0; i < c.n; i++)
        ck_assert_double_eq_tol(c.points[i].false_rate, 0, TOL);
    ck_assert_double_eq_tol(c.auc, 1, TOL);
    pr_curve_free(&c);
}
END_TEST

START_TEST(hopeless_matcher_has_area_zero)
{
    pr_query q[2] = {{1, 0}, {2, 0}};
    pr_curve c;
    ck_assert_int_eq(pr_curve_build(q, 2, 2, &c), 0);
    ck_assert_double_eq_tol(c.points[1].false_rate, 1, TOL);
    ck_assert_double_eq_tol(c.points[1].recall, 0, TOL);
    ck_assert_double_eq_tol(c.auc, 0, TOL);
    pr_curve_free(&c);
}
END_TEST

/* Scores 1 (right), 2 (wrong), 3 (right), 4 (wrong): points (0, 1/4), (1/2, 1/4), (1/3, 1/2), (1/2, 1/2), so the
 * area is 1/2 * 1/4 - 1/6 * 3/8 + 1/6 * 1/2 + 1/2 * 1/2 = 19/48 (the step back from 1/2 to 1/3 subtracts). */
START_TEST(curve_stepping_back_integrates_the_path)
{
    pr_query q[4] = {{4, 0}, {2, 0}, {1, 1}, {3, 1}};
    pr_curve c;
    ck_assert_int_eq(pr_curve_build(q, 4, 4, &c), 0);
    ck_assert_uint_eq(c.n, 4);
    const double x[4] = {0, 0.5, 1.0 / 3, 0.5}, y[4] = {0.25, 0.25, 0.5, 0.5};
    for (int i = 0; i < 4; i++) {
        ck_assert_double_eq_tol(c.points[i].threshold, i + 1, TOL);
        ck_assert_double_eq_tol(c.points[i].false_rate, x[i], TOL);
        ck_assert_double_eq_tol(c.points[i].recall, y[i], TOL);
    }
    ck_assert_double_eq_tol(c.auc, 19.0 / 48, TOL);
    ck_assert_uint_eq(c.accepted, 4);
    ck_assert_uint_eq(c.correct, 2);
    pr_curve_free(&c);
}
END_TEST

/* A tie of a right and a wrong match is one point at 1/2, 1/2; the unmatched queries (NaN and +inf) and a
 * true counterpart that no query found (n_truth 5) only lower the recall: (0, 1/5), then (1/3, 2/5), area
 * 1/3 * 3/10 + 2/3 * 2/5 = 11/30. */
START_TEST(ties_enter_together_and_unmatched_queries_lower_recall)
{
    pr_query q[5] = {{0.5, 1}, {0.7, 1}, {0.7, 0}, {NAN, 0}, {INFINITY, 1}};
    pr_curve c;
    ck_assert_int_eq(pr_curve_build(q, 5, 5, &c), 0);
    ck_assert_uint_eq(c.n, 2);
    ck_assert_uint_eq(c.accepted, 3);
    ck_assert_double_eq_tol(c.points[0].recall, 0.2, TOL);
    ck_assert_double_eq_tol(c.points[1].threshold, 0.7, TOL);
    ck_assert_double_eq_tol(c.points[1].false_rate, 1.0 / 3, TOL);
    ck_assert_double_eq_tol(c.points[1].recall, 0.4, TOL);
    ck_assert_double_eq_tol(c.auc, 11.0 / 30, TOL);
    pr_curve_free(&c);
}
END_TEST

START_TEST(no_match_gives_an_empty_curve)
{
    pr_query q[1] = {{NAN, 1}};
    pr_curve c;
    ck_assert_int_eq(pr_curve_build(q, 1, 1, &c), 0);
    ck_assert_uint_eq(c.n, 0);
    ck_assert_double_eq_tol(c.auc, 0, TOL);
    pr_curve_free(&c);
    ck_assert_int_eq(pr_curve_build(NULL, 0, 0, &c), 0);
    ck_assert_uint_eq(c.n, 0);
    pr_curve_free(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pr_curve");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, perfect_matcher_has_area_one);
    tcase_add_test(tc, hopeless_matcher_has_area_zero);
    tcase_add_test(tc, curve_stepping_back_integrates_the_path);
    tcase_add_test(tc, ties_enter_together_and_unmatched_queries_lower_recall);
    tcase_add_test(tc, no_match_gives_an_empty_curve);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return grip_test_run(suite());
}
