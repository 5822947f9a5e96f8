/* pr_curve.h -- recall against 1-precision, as descriptor-matching papers plot it (Mikolajczyk & Schmid 2005; the
 * SHOT paper, Tombari et al. 2010), and the area under the curve. For grip-host eval descriptors.
 *
 * Each query (a scene keypoint) has one match (its nearest model descriptor) with a score, smaller meaning more
 * confident (the nearest-neighbour distance, or its ratio to the second nearest), and whether that match is the
 * true one. Sweeping a threshold t over the scores, the matches with score <= t are accepted:
 *   recall(t)      = correct accepted / n_truth      (n_truth: queries that have a true counterpart)
 *   1-precision(t) = false accepted / accepted
 * One curve point per distinct score (tied scores enter together). The area under the curve is the integral of
 * recall over 1-precision along the path (0, 0) -> the points in threshold order -> (1, final recall): the last
 * segment extends the curve at its final recall (every match accepted) to 1-precision = 1, so a perfect matcher
 * has area 1 and one that never matches correctly has 0. The path may step back in 1-precision; its signed
 * trapezoids then subtract, which is the area under the path. */
#ifndef GRIP_HOST_EVAL_PR_CURVE_H
#define GRIP_HOST_EVAL_PR_CURVE_H

#include <stddef.h>

typedef struct pr_query {
    double score; /* smaller = more confident; NaN or +inf: no match (never accepted) */
    int correct;  /* the match is the true counterpart */
} pr_query;

typedef struct pr_point {
    double threshold;
    double recall;
    double false_rate; /* 1 - precision */
} pr_point;

typedef struct pr_curve {
    pr_point *points; /* n points in increasing threshold (malloc'd; free with pr_curve_free) */
    size_t n;
    size_t n_truth;  /* the recall's denominator */
    size_t accepted; /* matches with a finite score */
    size_t correct;  /* of them, correct */
    double auc;      /* area under the curve, see above; 0 when n_truth is 0 */
} pr_curve;

/* Builds the curve of q[0 .. n) (q is not changed) with n_truth queries having a true counterpart (n_truth >= the
 * correct matches). 0, or -1 when out of memory (*out then empty). */
int pr_curve_build(const pr_query *q, size_t n, size_t n_truth, pr_curve *out);
void pr_curve_free(pr_curve *c);

/* The area under the path (0, 0) -> p[0 .. n) -> (1, p[n-1].recall); 0 for n = 0. */
double pr_curve_area(const pr_point *p, size_t n);

#endif
