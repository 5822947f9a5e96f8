/* judge.c -- see judge.h. */
#include "judge/judge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define JUDGE_PI 3.14159265358979323846

void judge_compare(const host_cloud *points, const double a[16], const double b[16], judge_error *out)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; points && i < points->n; i++) {
        const float *p = points->xyz + 3 * i;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
            continue;
        double d2 = 0;
        for (int r = 0; r < 3; r++) {
            double pa = a[4 * r + 3], pb = b[4 * r + 3];
            for (int c = 0; c < 3; c++) {
                pa += a[4 * r + c] * p[c];
                pb += b[4 * r + c] * p[c];
            }
            d2 += (pa - pb) * (pa - pb);
        }
        sum += sqrt(d2);
        n++;
    }
    out->distance = n ? sum / (double)n : 0;
    /* trace(R_a^T R_b) = sum over the 3x3 blocks' entries of a_ij * b_ij */
    double trace = 0, t2 = 0;
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            trace += a[4 * r + c] * b[4 * r + c];
        t2 += (a[4 * r + 3] - b[4 * r + 3]) * (a[4 * r + 3] - b[4 * r + 3]);
    }
    double cosine = fmax(-1.0, fmin(1.0, 0.5 * (trace - 1)));
    out->angle_deg = acos(cosine) * 180 / JUDGE_PI;
    out->translation = sqrt(t2);
}

static const judge_error no_error = {INFINITY, INFINITY, INFINITY};

static int within(const judge_truth *t, const judge_error *e)
{
    return e->distance <= t->max_distance && e->angle_deg <= t->max_angle_deg;
}

/* One candidate pairing. */
typedef struct pairing {
    size_t instance, truth;
    double distance;
} pairing;

static int by_distance(const void *a, const void *b)
{
    const pairing *x = a, *y = b;
    if (x->distance != y->distance)
        return x->distance < y->distance ? -1 : 1;
    if (x->instance != y->instance) /* ties: the earlier instance, then the earlier object */
        return x->instance < y->instance ? -1 : 1;
    return (x->truth > y->truth) - (x->truth < y->truth);
}

static int alloc_result(judge_result *j, size_t n_truth, size_t n_hyp)
{
    memset(j, 0, sizeof *j);
    j->n_truth = n_truth;
    j->n_hypotheses = n_hyp;
    j->instance_of_truth = malloc((n_truth + 1) * sizeof *j->instance_of_truth);
    j->rejected_of_truth = malloc((n_truth + 1) * sizeof *j->rejected_of_truth);
    j->truth_error = malloc((n_truth + 1) * sizeof *j->truth_error);
    j->truth_of_instance = malloc((n_hyp + 1) * sizeof *j->truth_of_instance);
    j->verdict = malloc((n_hyp + 1) * sizeof *j->verdict);
    j->instance_error = malloc((n_hyp + 1) * sizeof *j->instance_error);
    if (!j->instance_of_truth || !j->rejected_of_truth || !j->truth_error || !j->truth_of_instance || !j->verdict ||
        !j->instance_error) {
        judge_result_free(j);
        return -1;
    }
    for (size_t t = 0; t < n_truth; t++) {
        j->instance_of_truth[t] = -1;
        j->rejected_of_truth[t] = -1;
        j->truth_error[t] = no_error;
    }
    for (size_t h = 0; h < n_hyp; h++) {
        j->truth_of_instance[h] = -1;
        j->verdict[h] = JUDGE_WRONG;
        j->instance_error[h] = no_error;
    }
    return 0;
}

/* For each object, the closest rejected hypothesis of its model within its tolerances. */
static void find_rejected(const pipeline_result *r, const judge_truth *truth, size_t n_truth, judge_result *out)
{
    for (size_t t = 0; t < n_truth; t++) {
        double best = INFINITY;
        for (size_t h = 0; h < r->n_hypotheses; h++) {
            const pipeline_instance *in = &r->hypotheses[h];
            if (in->accepted || in->model != truth[t].model)
                continue;
            judge_error e;
            judge_compare(truth[t].points, truth[t].pose, in->pose, &e);
            if (within(&truth[t], &e) && e.distance < best) {
                best = e.distance;
                out->rejected_of_truth[t] = (int)h;
            }
        }
    }
}

int judge_recognition(const pipeline_result *r, const judge_truth *truth, size_t n_truth, judge_result *out)
{
    size_t n_hyp = r->n_hypotheses;
    if (alloc_result(out, n_truth, n_hyp) != 0)
        return -1;
    judge_error *err = malloc((n_hyp * n_truth + 1) * sizeof *err);
    pairing *pairs = malloc((n_hyp * n_truth + 1) * sizeof *pairs);
    if (!err || !pairs) {
        free(err);
        free(pairs);
        judge_result_free(out);
        return -1;
    }
    size_t n_pairs = 0;
    for (size_t h = 0; h < n_hyp; h++) {
        const pipeline_instance *in = &r->hypotheses[h];
        for (size_t t = 0; t < n_truth && in->accepted; t++) {
            if (truth[t].model != in->model)
                continue;
            judge_error *e = &err[h * n_truth + t];
            judge_compare(truth[t].points, truth[t].pose, in->pose, e);
            if (e->distance < out->instance_error[h].distance)
                out->instance_error[h] = *e;
            if (e->distance < out->truth_error[t].distance)
                out->truth_error[t] = *e;
            if (within(&truth[t], e))
                pairs[n_pairs++] = (pairing){h, t, e->distance};
        }
    }
    find_rejected(r, truth, n_truth, out);
    qsort(pairs, n_pairs, sizeof *pairs, by_distance);
    for (size_t i = 0; i < n_pairs; i++) {
        size_t h = pairs[i].instance, t = pairs[i].truth;
        if (out->truth_of_instance[h] >= 0)
            continue;
        if (out->instance_of_truth[t] >= 0) {
            out->verdict[h] = JUDGE_DUPLICATE; /* stays so unless a later pairing finds it a free object */
            continue;
        }
        out->instance_of_truth[t] = (int)h;
        out->truth_of_instance[h] = (int)t;
        out->verdict[h] = JUDGE_CORRECT;
        out->truth_error[t] = err[h * n_truth + t];
        out->instance_error[h] = err[h * n_truth + t];
        out->found++;
    }
    for (size_t h = 0; h < n_hyp; h++)
        if (r->hypotheses[h].accepted && out->truth_of_instance[h] < 0) {
            out->false_instances++;
            out->duplicates += out->verdict[h] == JUDGE_DUPLICATE;
        }
    free(err);
    free(pairs);
    return 0;
}

void judge_result_free(judge_result *j)
{
    if (!j)
        return;
    free(j->instance_of_truth);
    free(j->rejected_of_truth);
    free(j->truth_error);
    free(j->truth_of_instance);
    free(j->verdict);
    free(j->instance_error);
    memset(j, 0, sizeof *j);
}
