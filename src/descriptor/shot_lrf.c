/* shot_lrf.c -- see shot_lrf.h. The arithmetic follows PCL's getLocalRF step by step (float offsets widened to
 * double, the same products and sums), so that frames agree with PCL's to float precision. */
#include "descriptor/shot_lrf.h"
#include "descriptor/shot_support.h"
#include "math/sym3_eigen.h"

#include <math.h>

/* PCL gives no frame to a keypoint with fewer support points than this. */
#define SHOT_LRF_MIN_SUPPORT 5
/* Neighbours around the median distance that break a tie in the sign votes. */
#define SHOT_LRF_TIE_VOTERS 5

typedef struct lrf_job {
    const float *surface;
    double radius;
    float *frames;
} lrf_job;

/* Offset of a surface point from the keypoint: subtracted in float, as PCL's Vector4f does, then widened. */
static void support_offset(const float *q, const float p[3], double v[3])
{
    for (int d = 0; d < 3; ++d)
        v[d] = (double)(q[d] - p[d]);
}

/* Dot product in Eigen's order for a double row of 4 with w = 0: (a0 b0 + a1 b1) + a2 b2. */
static double dot3(const double a[3], const double b[3])
{
    return (a[0] * b[0] + a[1] * b[1]) + a[2] * b[2];
}

/* Drops copies of the keypoint from the support (PCL skips them) and accumulates the lower triangle of the
 * weighted covariance as Eigen evaluates `cov += w * (v^T v)`, i.e. (w v_r) v_c. Returns the support left. */
static size_t weighted_covariance(const lrf_job *job, const float p[3], grip_neighbors *support, double cov[9],
                                  double *weight_sum)
{
    size_t valid = 0;
    *weight_sum = 0.0;
    for (int e = 0; e < 9; ++e)
        cov[e] = 0.0;
    for (size_t j = 0; j < support->count; ++j) {
        const float *q = job->surface + 3 * (size_t)support->idx[j];
        if (q[0] == p[0] && q[1] == p[1] && q[2] == p[2])
            continue;
        double v[3];
        support_offset(q, p, v);
        double w = job->radius - sqrt((double)support->sqdist[j]);
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c <= r; ++c)
                cov[r * 3 + c] += (w * v[r]) * v[c];
        *weight_sum += w;
        support->idx[valid++] = support->idx[j];
    }
    return valid;
}

/* Turns axis towards the majority of the offsets (a zero dot counts as positive); on a tie, towards the majority
 * of the SHOT_LRF_TIE_VOTERS offsets around the median (here a zero dot counts as negative), as PCL does. */
static void disambiguate(const lrf_job *job, const float p[3], const uint32_t *idx, size_t valid, double axis[3])
{
    double v[3];
    long balance = -(long)valid;
    for (size_t j = 0; j < valid; ++j) {
        support_offset(job->surface + 3 * (size_t)idx[j], p, v);
        if (dot3(v, axis) >= 0.0)
            balance += 2;
    }
    int flip = balance < 0;
    if (balance == 0) {
        size_t median = valid / 2;
        int positive = 0;
        for (size_t j = median - SHOT_LRF_TIE_VOTERS / 2; j <= median + SHOT_LRF_TIE_VOTERS / 2; ++j) {
            support_offset(job->surface + 3 * (size_t)idx[j], p, v);
            positive += dot3(v, axis) > 0.0;
        }
        flip = positive < SHOT_LRF_TIE_VOTERS / 2 + 1;
    }
    if (flip)
        for (int d = 0; d < 3; ++d)
            axis[d] = -axis[d];
}

static void set_nan_frame(float rf[9])
{
    for (int e = 0; e < 9; ++e)
        rf[e] = NAN;
}

static void lrf_one(size_t i, const float p[3], grip_neighbors *support, void *user)
{
    const lrf_job *job = user;
    float *rf = job->frames + 9 * i;
    double cov[9], weight_sum;
    size_t valid = weighted_covariance(job, p, support, cov, &weight_sum);
    if (valid < SHOT_LRF_MIN_SUPPORT) {
        set_nan_frame(rf);
        return;
    }
    /* Eigen's solver reads the lower triangle: mirror it into the upper one */
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c <= r; ++c)
            cov[c * 3 + r] = cov[r * 3 + c] /= weight_sum;
    double values[3], vecs[9];
    grip_sym3_eigen(cov, values, vecs);
    if (!isfinite(values[0]) || !isfinite(values[1]) || !isfinite(values[2])) {
        set_nan_frame(rf);
        return;
    }
    double x[3] = {vecs[2], vecs[5], vecs[8]}; /* largest eigenvalue */
    double z[3] = {vecs[0], vecs[3], vecs[6]}; /* smallest eigenvalue */
    disambiguate(job, p, support->idx, valid, x);
    disambiguate(job, p, support->idx, valid, z);
    for (int d = 0; d < 3; ++d) {
        rf[d] = (float)x[d];
        rf[6 + d] = (float)z[d];
    }
    /* y = z cross x, in float like PCL's Matrix3f rows */
    rf[3] = rf[7] * rf[2] - rf[8] * rf[1];
    rf[4] = rf[8] * rf[0] - rf[6] * rf[2];
    rf[5] = rf[6] * rf[1] - rf[7] * rf[0];
}

grip_status grip_shot_lrf(grip_ctx *ctx, const float *surface_xyz, size_t n, const grip_kdtree3d *tree,
                          const float *keypoint_xyz, size_t k, float radius, float *frames_out)
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
    return grip_shot_for_each_keypoint(ctx, "shot_lrf", tree, keypoint_xyz, k, radius, 0, lrf_one, &job);
}
