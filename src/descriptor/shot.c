/* shot.c -- see shot.h. The per-point and per-keypoint arithmetic is shot_math.h's (shared with the CUDA kernel);
 * here the frame's covariance terms are summed, and the descriptor's votes added to the float histogram, in support
 * order, as PCL does. */
#include "descriptor/shot.h"
#include "descriptor/shot_math.h"
#include "descriptor/keypoint_support.h"

#include <math.h>
#include <string.h>

/* ---- the local reference frame ---- */

typedef struct lrf_job {
    const float *surface;
    double radius;
    float *frames;
} lrf_job;

/* Drops copies of the keypoint from the support (PCL skips them) and sums the weighted covariance.
 * Returns the support left. */
static size_t weighted_covariance(const lrf_job *job, const float p[3], grip_neighbors *support,
                                  double sums[GRIP_SHOT_LRF_SUMS])
{
    size_t valid = 0;
    for (int e = 0; e < GRIP_SHOT_LRF_SUMS; ++e)
        sums[e] = 0.0;
    for (size_t j = 0; j < support->count; ++j) {
        const float *q = job->surface + 3 * (size_t)support->idx[j];
        if (grip_shot_lrf_is_copy(q, p))
            continue;
        double terms[GRIP_SHOT_LRF_SUMS];
        grip_shot_lrf_terms(q, p, support->sqdist[j], job->radius, terms);
        for (int e = 0; e < GRIP_SHOT_LRF_SUMS; ++e)
            sums[e] += terms[e];
        support->idx[valid++] = support->idx[j];
    }
    return valid;
}

/* 1 when the offset of support point idx has a dot product with axis >= 0 (strict: > 0). */
static int dot_sign(const lrf_job *job, const float p[3], uint32_t idx, const double axis[3], int strict)
{
    double v[3];
    grip_shot_lrf_offset(job->surface + 3 * (size_t)idx, p, v);
    double dot = grip_shot_lrf_dot(v, axis);
    return strict ? dot > 0.0 : dot >= 0.0;
}

/* Turns axis towards the majority of the offsets, as grip_shot_lrf_must_flip decides. */
static void disambiguate(const lrf_job *job, const float p[3], const uint32_t *idx, size_t valid, double axis[3])
{
    long balance = -(long)valid;
    for (size_t j = 0; j < valid; ++j)
        balance += 2 * dot_sign(job, p, idx[j], axis, 0);
    int tie_positive = 0;
    if (balance == 0) {
        size_t first = (size_t)grip_shot_lrf_first_tie_voter((long)valid);
        for (size_t j = first; j < first + GRIP_SHOT_LRF_TIE_VOTERS; ++j)
            tie_positive += dot_sign(job, p, idx[j], axis, 1);
    }
    if (grip_shot_lrf_must_flip(balance, tie_positive))
        for (int d = 0; d < 3; ++d)
            axis[d] = -axis[d];
}

static void lrf_one(size_t i, const float p[3], grip_neighbors *support, void *user)
{
    const lrf_job *job = user;
    float *rf = job->frames + 9 * i;
    double sums[GRIP_SHOT_LRF_SUMS], x[3], z[3];
    size_t valid = weighted_covariance(job, p, support, sums);
    if (valid < GRIP_SHOT_LRF_MIN_SUPPORT || !grip_shot_lrf_axes(sums, x, z)) {
        grip_shot_lrf_store_nan(rf);
        return;
    }
    disambiguate(job, p, support->idx, valid, x);
    disambiguate(job, p, support->idx, valid, z);
    grip_shot_lrf_store(x, z, rf);
}

grip_status grip_shot_lrf(grip_ctx *ctx, const float *surface_xyz, size_t n, const grip_kdtree3d *tree,
                          const float *keypoint_xyz, size_t k, float radius, uint32_t max_neighbors,
                          float *frames_out)
{
    if (k == 0)
        return GRIP_OK;
    if (!surface_xyz || !tree || !keypoint_xyz || !frames_out)
        return grip_fail(ctx, GRIP_EINVAL, "shot_lrf: surface, tree, keypoints and frames must not be NULL");
    if (grip_kdtree3d_size(tree) > n)
        return grip_fail(ctx, GRIP_EINVAL, "shot_lrf: the tree holds %zu points but the surface has only %zu",
                         grip_kdtree3d_size(tree), n);
    if (!(radius > 0.0f) || !isfinite(radius))
        return grip_fail(ctx, GRIP_EINVAL, "shot_lrf: radius must be finite and > 0 (got %g)", (double)radius);
    lrf_job job = {surface_xyz, (double)radius, frames_out};
    return grip_keypoint_support_for_each(ctx, "shot_lrf", tree, keypoint_xyz, k, radius, max_neighbors, lrf_one,
                                       &job);
}

/* ---- the descriptor ---- */

typedef struct shot_job {
    const float *surface, *normals, *frames;
    grip_shot_shells shells;
    float *out;
} shot_job;

static void normalize(float *hist)
{
    double sum = 0;
    for (int j = 0; j < GRIP_SHOT_DIM; ++j)
        sum += grip_shot_norm_term(hist[j]);
    float norm = grip_shot_norm(sum);
    for (int j = 0; j < GRIP_SHOT_DIM; ++j)
        hist[j] /= norm;
}

static void shot_one(size_t i, const float p[3], grip_neighbors *support, void *user)
{
    const shot_job *job = user;
    const float *rf = job->frames + 9 * i;
    float *hist = job->out + (size_t)GRIP_SHOT_DIM * i;
    if (!grip_shot_keypoint_valid(rf, support->count)) {
        for (int j = 0; j < GRIP_SHOT_DIM; ++j)
            hist[j] = NAN;
        return;
    }
    memset(hist, 0, GRIP_SHOT_DIM * sizeof *hist);
    for (size_t j = 0; j < support->count; ++j) {
        size_t point = support->idx[j];
        grip_shot_vote vote;
        if (!grip_shot_vote_compute(&job->shells, p, rf, job->surface + 3 * point, job->normals + 4 * point,
                                    support->sqdist[j], &vote))
            continue;
        for (int s = 0; s < GRIP_SHOT_VOTE_BINS; ++s)
            if (vote.bin[s] >= 0)
                hist[vote.bin[s]] += vote.value[s];
    }
    normalize(hist);
}

grip_status grip_shot_describe(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                               const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, const float *frames,
                               float radius, uint32_t max_neighbors, float *descriptors_out)
{
    if (k == 0)
        return GRIP_OK;
    if (!surface_xyz || !surface_normals || !tree || !keypoint_xyz || !frames || !descriptors_out)
        return grip_fail(ctx, GRIP_EINVAL,
                         "shot: surface, normals, tree, keypoints, frames and descriptors must not be NULL");
    if (grip_kdtree3d_size(tree) > n)
        return grip_fail(ctx, GRIP_EINVAL, "shot: the tree holds %zu points but the surface has only %zu",
                         grip_kdtree3d_size(tree), n);
    if (!(radius > 0.0f) || !isfinite(radius))
        return grip_fail(ctx, GRIP_EINVAL, "shot: radius must be finite and > 0 (got %g)", (double)radius);
    shot_job job = {surface_xyz, surface_normals, frames, grip_shot_shells_make(radius), descriptors_out};
    return grip_keypoint_support_for_each(ctx, "shot", tree, keypoint_xyz, k, radius, max_neighbors, shot_one, &job);
}
