/* shot.c -- see shot.h. The per-point arithmetic is shot_math.h's (shared with the CUDA kernel); here the votes
 * are added to the float histogram in support order, as PCL adds them. */
#include "descriptor/shot.h"
#include "descriptor/shot_math.h"
#include "descriptor/shot_support.h"

#include <math.h>
#include <string.h>

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
    return grip_shot_for_each_keypoint(ctx, "shot", tree, keypoint_xyz, k, radius, max_neighbors, shot_one, &job);
}
