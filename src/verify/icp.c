/* icp.c -- see icp.h. */
#include "verify/icp.h"
#include "math/rigid_fit.h"
#include "verify/voxel_thin.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* PCL's DefaultConvergenceCriteria mse_threshold_absolute_ */
#define ICP_MSE_ABSOLUTE 1e-12
/* the fewest pairs a rigid fit is attempted with (PCL's min_number_correspondences_) */
#define ICP_MIN_PAIRS 3

grip_status grip_icp_params_check(grip_ctx *ctx, const grip_icp_params *p)
{
    if (!p)
        return grip_fail(ctx, GRIP_EINVAL, "verify: ICP parameters are NULL");
    if (!(p->max_correspondence_distance > 0.0) || !isfinite(p->max_correspondence_distance))
        return grip_fail(ctx, GRIP_ECONFIG, "verify.max_correspondence_distance: must be > 0, got %g",
                         p->max_correspondence_distance);
    if (!(p->transformation_epsilon >= 0.0))
        return grip_fail(ctx, GRIP_ECONFIG, "verify.transformation_epsilon: must be >= 0, got %g",
                         p->transformation_epsilon);
    if (!(p->rotation_epsilon >= 0.0 && p->rotation_epsilon <= 1.0))
        return grip_fail(ctx, GRIP_ECONFIG, "verify.rotation_epsilon: must be a cosine in [0, 1] (0 = off), got %g",
                         p->rotation_epsilon);
    if (!(p->euclidean_fitness_epsilon >= 0.0))
        return grip_fail(ctx, GRIP_ECONFIG, "verify.euclidean_fitness_epsilon: must be >= 0, got %g",
                         p->euclidean_fitness_epsilon);
    if (!(p->voxel_leaf >= 0.0) || !isfinite(p->voxel_leaf))
        return grip_fail(ctx, GRIP_ECONFIG, "verify.voxel_leaf: must be >= 0, got %g", p->voxel_leaf);
    if (!(p->inlier_distance > 0.0) || !isfinite(p->inlier_distance))
        return grip_fail(ctx, GRIP_ECONFIG, "verify.inlier_distance: must be > 0, got %g", p->inlier_distance);
    if (!(p->min_fitness >= 0.0 && p->min_fitness <= 1.0))
        return grip_fail(ctx, GRIP_ECONFIG, "verify.min_fitness: must be in [0, 1], got %g", p->min_fitness);
    if (!(p->max_rmse >= 0.0))
        return grip_fail(ctx, GRIP_ECONFIG, "verify.max_rmse: must be >= 0, got %g", p->max_rmse);
    return GRIP_OK;
}

/* out = a * b, row-major 4x4 (out may not alias a or b) */
static void pose_multiply(const double a[16], const double b[16], double out[16])
{
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) {
            double s = 0.0;
            for (int i = 0; i < 4; ++i)
                s += a[4 * r + i] * b[4 * i + c];
            out[4 * r + c] = s;
        }
}

static int point_is_finite(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

static void copy_point(const float *src, double *dst)
{
    dst[0] = src[0];
    dst[1] = src[1];
    dst[2] = src[2];
}

/* The model points ICP works on, in double: the finite points, or one per voxel of side leaf. */
static grip_status model_points(grip_ctx *ctx, const float *xyz, size_t n, double leaf, double **out, size_t *n_out)
{
    uint32_t *thin = NULL;
    size_t count = 0;
    if (leaf > 0.0) {
        grip_status st = grip_voxel_thin(ctx, xyz, n, leaf, &thin, &count);
        if (st != GRIP_OK)
            return st;
    } else {
        for (size_t i = 0; i < n; ++i)
            count += point_is_finite(xyz + 3 * i);
    }
    double *p = count ? malloc(count * 3 * sizeof *p) : NULL;
    if (count && !p) {
        free(thin);
        return grip_fail(ctx, GRIP_ENOMEM, "verify: cannot allocate %zu model points", count);
    }
    if (leaf > 0.0) {
        for (size_t k = 0; k < count; ++k)
            copy_point(xyz + 3 * (size_t)thin[k], p + 3 * k);
    } else {
        for (size_t i = 0, k = 0; i < n; ++i)
            if (point_is_finite(xyz + 3 * i))
                copy_point(xyz + 3 * i, p + 3 * k++);
    }
    free(thin);
    *out = p;
    *n_out = count;
    return GRIP_OK;
}

/* Work space of one refinement: the model points, where the pose places them, and their nearest scene points. */
typedef struct icp_work {
    const grip_kdtree3d *tree;
    const float *scene;
    double *points;   /* n x 3, model coordinates */
    double *moved;    /* n x 3, under the current pose */
    double *targets;  /* n x 3, the paired scene points (pairs packed at the front) */
    double *sources;  /* n x 3, the paired moved model points (packed likewise) */
    uint32_t *nearest;
    float *sqdist;
    size_t n;
} icp_work;

static void icp_work_free(icp_work *w)
{
    free(w->points);
    free(w->moved);
    free(w->targets);
    free(w->sources);
    free(w->nearest);
    free(w->sqdist);
}

static grip_status icp_work_alloc(grip_ctx *ctx, icp_work *w)
{
    size_t n = w->n ? w->n : 1;
    w->moved = malloc(n * 3 * sizeof(double));
    w->targets = malloc(n * 3 * sizeof(double));
    w->sources = malloc(n * 3 * sizeof(double));
    w->nearest = malloc(n * sizeof(uint32_t));
    w->sqdist = malloc(n * sizeof(float));
    if (!w->moved || !w->targets || !w->sources || !w->nearest || !w->sqdist)
        return grip_fail(ctx, GRIP_ENOMEM, "verify: cannot allocate ICP work space for %zu points", w->n);
    return GRIP_OK;
}

/* Moves every model point by pose and finds its nearest scene point (UINT32_MAX / +inf when the scene is empty). */
static void find_nearest(grip_ctx *ctx, icp_work *w, const double pose[16])
{
    const ptrdiff_t n = (ptrdiff_t)w->n;
#pragma omp parallel for schedule(static) num_threads(grip_ctx_threads(ctx))
    for (ptrdiff_t i = 0; i < n; ++i) {
        double *m = w->moved + 3 * i;
        grip_pose_apply(pose, w->points + 3 * i, m);
        const float q[3] = {(float)m[0], (float)m[1], (float)m[2]};
        if (grip_kdtree3d_knn(w->tree, q, 1, &w->nearest[i], &w->sqdist[i]) == 0) {
            w->nearest[i] = UINT32_MAX;
            w->sqdist[i] = INFINITY;
        }
    }
}

/* Packs the pairs within max_sqdist into sources/targets; returns their count and their mean squared distance. */
static size_t pack_pairs(icp_work *w, double max_sqdist, double *mse)
{
    size_t count = 0;
    double sum = 0.0;
    for (size_t i = 0; i < w->n; ++i) {
        if (w->nearest[i] == UINT32_MAX || (double)w->sqdist[i] > max_sqdist)
            continue;
        const float *s = w->scene + 3 * (size_t)w->nearest[i];
        for (int a = 0; a < 3; ++a) {
            w->sources[3 * count + a] = w->moved[3 * i + a];
            w->targets[3 * count + a] = s[a];
        }
        sum += w->sqdist[i];
        ++count;
    }
    *mse = count ? sum / (double)count : 0.0;
    return count;
}

/* DefaultConvergenceCriteria::hasConverged after an update; returns 1 and sets *stop when it says stop. */
static int has_converged(const grip_icp_params *p, uint32_t iterations, const double delta[16], double mse,
                         double *previous_mse, uint32_t *stop)
{
    const double cos_angle = 0.5 * (delta[0] + delta[5] + delta[10] - 1.0);
    const double translation_sqr = delta[3] * delta[3] + delta[7] * delta[7] + delta[11] * delta[11];
    const double rotation_threshold = p->rotation_epsilon > 0.0 ? p->rotation_epsilon : 1.0 - p->transformation_epsilon;
    if (iterations >= p->max_iterations)
        *stop = GRIP_ICP_STOP_ITERATIONS;
    else if (cos_angle >= rotation_threshold && translation_sqr <= p->transformation_epsilon)
        *stop = GRIP_ICP_STOP_TRANSFORM;
    else if (fabs(mse - *previous_mse) < ICP_MSE_ABSOLUTE)
        *stop = GRIP_ICP_STOP_ABSOLUTE_MSE;
    else if (fabs(mse - *previous_mse) / *previous_mse < p->euclidean_fitness_epsilon)
        *stop = GRIP_ICP_STOP_RELATIVE_MSE;
    else {
        *previous_mse = mse;
        return 0;
    }
    return 1;
}

static grip_status refine(grip_ctx *ctx, const grip_icp_params *p, icp_work *w, grip_icp_result *r)
{
    const double max_sqdist = p->max_correspondence_distance * p->max_correspondence_distance;
    double previous_mse = DBL_MAX;
    r->iterations = 0;
    r->stop = GRIP_ICP_STOP_ITERATIONS;
    while (r->iterations < p->max_iterations) {
        find_nearest(ctx, w, r->pose);
        double mse;
        size_t pairs = pack_pairs(w, max_sqdist, &mse);
        if (pairs < ICP_MIN_PAIRS) {
            r->stop = GRIP_ICP_STOP_FEW_CORRESPONDENCES;
            return GRIP_OK;
        }
        double delta[16], pose[16];
        grip_status st = grip_rigid_fit(ctx, w->sources, w->targets, pairs, delta);
        if (st != GRIP_OK)
            return st;
        pose_multiply(delta, r->pose, pose);
        memcpy(r->pose, pose, sizeof pose);
        ++r->iterations;
        if (has_converged(p, r->iterations, delta, mse, &previous_mse, &r->stop))
            break;
    }
    return GRIP_OK;
}

static void score(grip_ctx *ctx, const grip_icp_params *p, icp_work *w, grip_icp_result *r)
{
    find_nearest(ctx, w, r->pose);
    const double inlier_sqdist = p->inlier_distance * p->inlier_distance;
    double sum = 0.0;
    r->n_inliers = 0;
    for (size_t i = 0; i < w->n; ++i)
        if ((double)w->sqdist[i] <= inlier_sqdist) {
            sum += w->sqdist[i];
            ++r->n_inliers;
        }
    r->n_points = w->n;
    r->fitness = w->n ? (double)r->n_inliers / (double)w->n : 0.0;
    r->rmse = r->n_inliers ? sqrt(sum / (double)r->n_inliers) : INFINITY;
    r->accepted = r->fitness >= p->min_fitness && r->rmse <= p->max_rmse;
}

static grip_status check_arguments(grip_ctx *ctx, const grip_icp_params *p, const float *model_xyz, size_t n_model,
                                   const grip_kdtree3d *tree, const float *scene_xyz, const double init_pose[16],
                                   const grip_icp_result *out)
{
    grip_status st = grip_icp_params_check(ctx, p);
    if (st != GRIP_OK)
        return st;
    if (!tree || !scene_xyz || !init_pose || !out || (n_model > 0 && !model_xyz))
        return grip_fail(ctx, GRIP_EINVAL, "verify: ICP got a NULL model, scene, tree, pose or output");
    for (int i = 0; i < 16; ++i)
        if (!isfinite(init_pose[i]))
            return grip_fail(ctx, GRIP_EINVAL, "verify: initial pose element %d is not finite", i);
    return GRIP_OK;
}

grip_status grip_icp_refine(grip_ctx *ctx, const grip_icp_params *params, const float *model_xyz, size_t n_model,
                            const grip_kdtree3d *scene_tree, const float *scene_xyz, const double init_pose[16],
                            grip_icp_result *out)
{
    grip_status st = check_arguments(ctx, params, model_xyz, n_model, scene_tree, scene_xyz, init_pose, out);
    if (st != GRIP_OK)
        return st;
    icp_work w;
    memset(&w, 0, sizeof w);
    w.tree = scene_tree;
    w.scene = scene_xyz;
    st = model_points(ctx, model_xyz, n_model, params->voxel_leaf, &w.points, &w.n);
    if (st == GRIP_OK)
        st = icp_work_alloc(ctx, &w);
    grip_icp_result r;
    memset(&r, 0, sizeof r);
    memcpy(r.pose, init_pose, sizeof r.pose);
    if (st == GRIP_OK)
        st = refine(ctx, params, &w, &r);
    if (st == GRIP_OK) {
        score(ctx, params, &w, &r);
        *out = r;
    }
    icp_work_free(&w);
    return st;
}
