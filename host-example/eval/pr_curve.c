/* pr_curve.c -- see pr_curve.h. */
#include "eval/pr_curve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int by_score(const void *a, const void *b)
{
    double x = ((const pr_query *)a)->score, y = ((const pr_query *)b)->score;
    return (x > y) - (x < y);
}

int pr_curve_build(const pr_query *q, size_t n, size_t n_truth, pr_curve *out)
{
    memset(out, 0, sizeof *out);
    out->n_truth = n_truth;
    pr_query *sorted = malloc(n * sizeof *sorted + 1);
    out->points = malloc(n * sizeof *out->points + 1);
    if (!sorted || !out->points) {
        free(sorted);
        pr_curve_free(out);
        return -1;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(q[i].score))
            sorted[m++] = q[i];
    qsort(sorted, m, sizeof *sorted, by_score);
    size_t correct = 0;
    for (size_t i = 0; i < m; i++) {
        correct += sorted[i].correct != 0;
        if (i + 1 < m && sorted[i + 1].score == sorted[i].score)
            continue; /* a tie enters with the rest of its score */
        pr_point *p = &out->points[out->n++];
        p->threshold = sorted[i].score;
        p->recall = n_truth ? (double)correct / (double)n_truth : 0;
        p->false_rate = (double)(i + 1 - correct) / (double)(i + 1);
    }
    out->accepted = m;
    out->correct = correct;
    out->auc = pr_curve_area(out->points, out->n);
    free(sorted);
    return 0;
}

void pr_curve_free(pr_curve *c)
{
    free(c->points);
    memset(c, 0, sizeof *c);
}

double pr_curve_area(const pr_point *p, size_t n)
{
    if (n == 0)
        return 0;
    double area = 0, x = 0, y = 0;
    for (size_t i = 0; i <= n; i++) {
        double nx = i < n ? p[i].false_rate : 1, ny = i < n ? p[i].recall : p[n - 1].recall;
        area += (nx - x) * (y + ny) / 2;
        x = nx;
        y = ny;
    }
    return area;
}
