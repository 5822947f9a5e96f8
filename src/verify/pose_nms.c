/* pose_nms.c -- see pose_nms.h. */
#include "verify/pose_nms.h"
#include "spatial/kdtree3d.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void grip_model_spread_compute(const float *xyz, size_t n, grip_model_spread *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; ++i) {
        const float *p = xyz + 3 * i;
        if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2])))
            continue;
        for (int a = 0; a < 3; ++a)
            out->mean[a] += p[a];
        ++out->n;
    }
    if (out->n == 0)
        return;
    for (int a = 0; a < 3; ++a)
        out->mean[a] /= (double)out->n;
    /* second pass about the mean: no cancellation for models far from the origin */
    for (size_t i = 0; i < n; ++i) {
        const float *p = xyz + 3 * i;
        if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2])))
            continue;
        const double r[3] = {p[0] - out->mean[0], p[1] - out->mean[1], p[2] - out->mean[2]};
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                out->covariance[3 * a + b] += r[a] * r[b];
    }
    for (int i = 0; i < 9; ++i)
        out->covariance[i] /= (double)out->n;
}

/* D = R_a - R_b and shift = D mean + t_a - t_b, where the two poses put the centre apart. */
static void pose_difference(const grip_model_spread *s, const double a[16], const double b[16], double D[9],
                            double shift[3])
{
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            D[3 * r + c] = a[4 * r + c] - b[4 * r + c];
    for (int r = 0; r < 3; ++r)
        shift[r] = a[4 * r + 3] - b[4 * r + 3] + D[3 * r] * s->mean[0] + D[3 * r + 1] * s->mean[1] +
                   D[3 * r + 2] * s->mean[2];
}

double grip_pose_center_distance(const grip_model_spread *s, const double a[16], const double b[16])
{
    double D[9], shift[3];
    pose_difference(s, a, b, D, shift);
    return sqrt(shift[0] * shift[0] + shift[1] * shift[1] + shift[2] * shift[2]);
}

double grip_pose_rms_displacement(const grip_model_spread *s, const double a[16], const double b[16])
{
    double D[9], shift[3];
    pose_difference(s, a, b, D, shift);
    double spread = 0.0; /* trace(D C D^T) */
    for (int r = 0; r < 3; ++r)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k)
                spread += D[3 * r + j] * s->covariance[3 * j + k] * D[3 * r + k];
    double msd = spread + shift[0] * shift[0] + shift[1] * shift[1] + shift[2] * shift[2];
    return sqrt(msd > 0.0 ? msd : 0.0);
}

typedef struct ranked {
    double score;
    size_t index;
} ranked;

static int compare_ranked(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Every score a number, every model id one of the n_models. */
static grip_status check_hypotheses(grip_ctx *ctx, uint32_t n_models, const uint32_t *model_id, const double *scores,
                                    size_t h)
{
    for (size_t i = 0; i < h; ++i) {
        if (isnan(scores[i]))
            return grip_fail(ctx, GRIP_EINVAL, "verify: hypothesis %zu has a NaN score", i);
        if (model_id[i] >= n_models)
            return grip_fail(ctx, GRIP_EINVAL, "verify: hypothesis %zu has model id %u of %u models", i, model_id[i],
                             n_models);
    }
    return GRIP_OK;
}

static grip_status check_arguments(grip_ctx *ctx, const grip_model_spread *spreads, uint32_t n_models,
                                   const uint32_t *model_id, const double *poses, const double *scores, size_t h,
                                   double duplicate_distance, double center_distance, const uint32_t *accepted)
{
    if (h > 0 && (!spreads || !model_id || !poses || !scores || !accepted))
        return grip_fail(ctx, GRIP_EINVAL, "verify: duplicate suppression got a NULL array");
    if (!(duplicate_distance >= 0.0))
        return grip_fail(ctx, GRIP_EINVAL, "verify.duplicate_distance: must be >= 0, got %g", duplicate_distance);
    if (!(center_distance >= 0.0))
        return grip_fail(ctx, GRIP_EINVAL, "verify.duplicate_center_distance: must be >= 0, got %g", center_distance);
    return check_hypotheses(ctx, n_models, model_id, scores, h);
}

grip_status grip_suppress_duplicates(grip_ctx *ctx, const grip_model_spread *spreads, uint32_t n_models,
                                     const uint32_t *model_id, const double *poses, const double *scores, size_t h,
                                     double duplicate_distance, double center_distance, uint32_t *accepted,
                                     uint32_t *duplicate_of)
{
    grip_status st = check_arguments(ctx, spreads, n_models, model_id, poses, scores, h, duplicate_distance,
                                     center_distance, accepted);
    if (st != GRIP_OK || h == 0)
        return st;
    ranked *order = malloc(h * sizeof *order);
    size_t *kept = malloc(h * sizeof *kept);
    if (!order || !kept) {
        free(order);
        free(kept);
        return grip_fail(ctx, GRIP_ENOMEM, "verify: cannot allocate the ranking of %zu hypotheses", h);
    }
    for (size_t i = 0; i < h; ++i) {
        order[i].score = scores[i];
        order[i].index = i;
        if (duplicate_of)
            duplicate_of[i] = UINT32_MAX;
    }
    qsort(order, h, sizeof *order, compare_ranked);
    size_t n_kept = 0;
    for (size_t o = 0; o < h; ++o) {
        size_t i = order[o].index;
        if (!accepted[i])
            continue;
        size_t j = 0;
        for (; j < n_kept; ++j) {
            const grip_model_spread *spread = &spreads[model_id[i]];
            const double *a = poses + 16 * i, *b = poses + 16 * kept[j];
            if (model_id[kept[j]] == model_id[i] &&
                (grip_pose_rms_displacement(spread, a, b) <= duplicate_distance ||
                 (center_distance > 0.0 && grip_pose_center_distance(spread, a, b) <= center_distance)))
                break;
        }
        if (j < n_kept) {
            accepted[i] = 0;
            if (duplicate_of)
                duplicate_of[i] = (uint32_t)kept[j];
        } else {
            kept[n_kept++] = i;
        }
    }
    free(order);
    free(kept);
    return GRIP_OK;
}

/* An accepted hypothesis of the overlap test: its model's finite points where its pose puts them, and the sphere that
 * holds them. */
typedef struct placed {
    float *xyz; /* n x 3 (malloc'd) */
    size_t n;
    double centre[3], radius;
} placed;

static void placed_free(placed *p)
{
    free(p->xyz);
    memset(p, 0, sizeof *p);
}

static grip_status place(grip_error_note *err, const grip_model_points *m, const double pose[16], placed *out)
{
    memset(out, 0, sizeof *out);
    out->xyz = malloc((m->n ? m->n : 1) * 3 * sizeof *out->xyz);
    if (!out->xyz)
        return grip_note_fail(err, GRIP_ENOMEM, "verify: out of memory for %zu model points", m->n);
    double sum[3] = {0, 0, 0};
    for (size_t i = 0; i < m->n; ++i) {
        const float *p = m->xyz + 3 * i;
        if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2])))
            continue;
        float *q = out->xyz + 3 * out->n++;
        for (int r = 0; r < 3; ++r) {
            q[r] = (float)(pose[4 * r] * p[0] + pose[4 * r + 1] * p[1] + pose[4 * r + 2] * p[2] + pose[4 * r + 3]);
            sum[r] += q[r];
        }
    }
    for (int r = 0; r < 3; ++r)
        out->centre[r] = out->n ? sum[r] / (double)out->n : 0.0;
    for (size_t i = 0; i < out->n; ++i) {
        const float *q = out->xyz + 3 * i;
        const double d[3] = {q[0] - out->centre[0], q[1] - out->centre[1], q[2] - out->centre[2]};
        out->radius = fmax(out->radius, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    }
    return GRIP_OK;
}

/* The trees of the overlap test, one a model: the caller's (points[m].tree), or built here, on the context's threads,
 * for each model of an accepted hypothesis that came without one (own[m], freed by the caller). */
static grip_status model_trees(grip_ctx *ctx, const grip_model_points *points, uint32_t n_models,
                               const uint32_t *model_id, const uint32_t *accepted, size_t h, const grip_kdtree3d **tree,
                               grip_kdtree3d **own)
{
    unsigned char *wanted = calloc((size_t)n_models + 1, 1);
    grip_error_note *notes = calloc((size_t)n_models + 1, sizeof *notes);
    if (!wanted || !notes) {
        free(wanted);
        free(notes);
        return grip_fail(ctx, GRIP_ENOMEM, "verify: cannot allocate the overlap test of %u models", n_models);
    }
    for (size_t i = 0; i < h; ++i)
        if (accepted[i])
            wanted[model_id[i]] = 1;
#pragma omp parallel for schedule(dynamic, 1) num_threads(grip_ctx_threads(ctx))
    for (uint32_t m = 0; m < n_models; ++m) {
        tree[m] = points[m].tree;
        if (wanted[m] && !tree[m] && points[m].n > 0 &&
            grip_kdtree3d_build_noted(&notes[m], points[m].xyz, points[m].n, &own[m]) == GRIP_OK)
            tree[m] = own[m];
    }
    grip_status st = GRIP_OK;
    for (uint32_t m = 0; m < n_models && !st; ++m)
        st = grip_note_report(ctx, &notes[m]);
    free(wanted);
    free(notes);
    return st;
}

/* Places every accepted hypothesis (accepted[i]), on the context's threads: each is independent of the greedy
 * choices, so all are placed up front. A failure is reported as the one loop over `order` would meet first. */
static grip_status place_all(grip_ctx *ctx, const grip_model_points *points, const uint32_t *model_id,
                             const double *poses, const uint32_t *accepted, const ranked *order, size_t h, placed *all)
{
    grip_error_note *notes = calloc(h ? h : 1, sizeof *notes);
    if (!notes)
        return grip_fail(ctx, GRIP_ENOMEM, "verify: cannot allocate the overlap test of %zu hypotheses", h);
#pragma omp parallel for schedule(dynamic, 1) num_threads(grip_ctx_threads(ctx))
    for (size_t i = 0; i < h; ++i)
        if (accepted[i])
            place(&notes[i], &points[model_id[i]], poses + 16 * i, &all[i]);
    grip_status st = GRIP_OK;
    for (size_t o = 0; o < h && !st; ++o)
        st = grip_note_report(ctx, &notes[order[o].index]);
    free(notes);
    return st;
}

/* How many of cand's points lie within distance of the points of a kept hypothesis, whose pose is kept_pose and whose
 * model's tree, in the model's frame, is tree; near[i] is set for each. A point is brought into the model's frame
 * (the inverse of the rigid pose: R^T (p - t)), where the distance is the same. The points are independent (each sets
 * its own flag and the count is an integer sum), so they run on the context's threads. */
static size_t shared_points(const placed *cand, const placed *kept, const double kept_pose[16],
                            const grip_kdtree3d *tree, double distance, int threads, unsigned char *near)
{
    const double reach = cand->radius + kept->radius + distance;
    const double d[3] = {cand->centre[0] - kept->centre[0], cand->centre[1] - kept->centre[1],
                         cand->centre[2] - kept->centre[2]};
    if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > reach * reach)
        return 0;
    /* a float squared distance d is <= distance^2 (in double) exactly when d <= the largest float not above it */
    const double limit2 = distance * distance;
    float limit = (float)limit2;
    if ((double)limit > limit2)
        limit = nextafterf(limit, 0.0f);
    const double *T = kept_pose;
    size_t shared = 0;
#pragma omp parallel for schedule(static) reduction(+ : shared) num_threads(threads)
    for (size_t i = 0; i < cand->n; ++i) {
        const float *p = cand->xyz + 3 * i;
        const double v[3] = {p[0] - T[3], p[1] - T[7], p[2] - T[11]};
        float q[3];
        for (int c = 0; c < 3; ++c)
            q[c] = (float)(T[c] * v[0] + T[4 + c] * v[1] + T[8 + c] * v[2]);
        if (grip_kdtree3d_any_within(tree, q, limit)) {
            near[i] = 1;
            ++shared;
        }
    }
    return shared;
}

grip_status grip_suppress_overlaps(grip_ctx *ctx, const grip_model_points *points, uint32_t n_models,
                                   const uint32_t *model_id, const double *poses, const double *scores, size_t h,
                                   double distance, double max_overlap, uint32_t *accepted, uint32_t *overlap_of)
{
    if (h > 0 && (!points || !model_id || !poses || !scores || !accepted))
        return grip_fail(ctx, GRIP_EINVAL, "verify: overlap suppression got a NULL array");
    if (!(distance > 0.0) || !isfinite(distance))
        return grip_fail(ctx, GRIP_EINVAL, "verify.overlap_distance: must be finite and > 0, got %g", distance);
    if (!(max_overlap >= 0.0 && max_overlap <= 1.0))
        return grip_fail(ctx, GRIP_EINVAL, "verify.max_overlap: must be in [0, 1], got %g", max_overlap);
    grip_status st = check_hypotheses(ctx, n_models, model_id, scores, h);
    if (st != GRIP_OK)
        return st;
    ranked *order = malloc((h ? h : 1) * sizeof *order);
    placed *all = calloc(h ? h : 1, sizeof *all);      /* every accepted hypothesis placed, by hypothesis */
    size_t *kept = malloc((h ? h : 1) * sizeof *kept); /* the hypotheses kept, in the order kept */
    uint32_t *of = malloc((h ? h : 1) * sizeof *of);
    const grip_kdtree3d **tree = calloc((size_t)n_models + 1, sizeof *tree); /* by model */
    grip_kdtree3d **own = calloc((size_t)n_models + 1, sizeof *own);         /* the trees built here */
    st = order && all && kept && of && tree && own
             ? GRIP_OK
             : grip_fail(ctx, GRIP_ENOMEM, "verify: cannot allocate the overlap test of %zu hypotheses", h);
    size_t n_kept = 0;
    for (size_t i = 0; i < h && !st; ++i) {
        order[i].score = scores[i];
        order[i].index = i;
        of[i] = UINT32_MAX;
    }
    if (!st)
        qsort(order, h, sizeof *order, compare_ranked);
    if (!st && max_overlap < 1.0)
        st = place_all(ctx, points, model_id, poses, accepted, order, h, all);
    if (!st && max_overlap < 1.0)
        st = model_trees(ctx, points, n_models, model_id, accepted, h, tree, own);
    for (size_t o = 0; o < h && !st && max_overlap < 1.0; ++o) {
        const size_t i = order[o].index;
        const placed *cand = &all[i];
        if (!accepted[i] || cand->n == 0) /* no point: it fills no space */
            continue;
        unsigned char *near = calloc(cand->n + 1, 1);
        if (!near) {
            st = grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory for %zu model points", cand->n);
            break;
        }
        size_t most = 0;
        for (size_t j = 0; j < n_kept; ++j) {
            const size_t k = kept[j];
            const size_t shared = shared_points(cand, &all[k], poses + 16 * k, tree[model_id[k]], distance,
                                                grip_ctx_threads(ctx), near);
            if (shared > most) {
                most = shared;
                of[i] = (uint32_t)kept[j];
            }
        }
        size_t in_kept_space = 0;
        for (size_t p = 0; p < cand->n; ++p)
            in_kept_space += near[p];
        free(near);
        if ((double)in_kept_space > max_overlap * (double)cand->n)
            continue; /* rejected: of[i] names the kept one it shares most with */
        of[i] = UINT32_MAX;
        kept[n_kept++] = i;
    }
    if (!st)
        for (size_t i = 0; i < h; ++i) {
            if (of[i] != UINT32_MAX)
                accepted[i] = 0;
            if (overlap_of)
                overlap_of[i] = of[i];
        }
    for (size_t i = 0; all && i < h; ++i)
        placed_free(&all[i]);
    for (uint32_t m = 0; own && m < n_models; ++m)
        grip_kdtree3d_free(own[m]);
    free(tree);
    free(own);
    free(order);
    free(all);
    free(kept);
    free(of);
    return st;
}
