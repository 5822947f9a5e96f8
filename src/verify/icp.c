/* icp.c -- see icp.h. */
#include "verify/icp.h"
#include "verify/icp_math.h"
#include "verify/voxel_thin.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    if (p->metric != GRIP_ICP_POINT_TO_POINT && p->metric != GRIP_ICP_POINT_TO_PLANE)
        return grip_fail(ctx, GRIP_ECONFIG, "verify.metric: unknown metric %u", p->metric);
    if (!(p->final_correspondence_distance >= 0.0 &&
          p->final_correspondence_distance <= p->max_correspondence_distance))
        return grip_fail(ctx, GRIP_ECONFIG,
                         "verify.final_correspondence_distance: must be 0 (off) or in (0, max_correspondence_distance "
                         "= %g], got %g", p->max_correspondence_distance, p->final_correspondence_distance);
    return GRIP_OK;
}

double grip_icp_correspondence_distance(const grip_icp_params *p, uint32_t iteration)
{
    const double m = p->max_correspondence_distance, f = p->final_correspondence_distance;
    if (!(f > 0.0) || f >= m)
        return m;
    if (p->max_iterations < 2 || iteration >= p->max_iterations - 1)
        return f; /* the last iteration (with one iteration, the only one, is the last) */
    return m * pow(f / m, (double)iteration / (double)(p->max_iterations - 1));
}

static int point_is_finite(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

grip_status grip_icp_model_points(grip_ctx *ctx, double leaf, const grip_icp_model *model, float **xyz_out,
                                  float **normals_out, size_t *n_out)
{
    *xyz_out = *normals_out = NULL;
    *n_out = 0;
    uint32_t *thin = NULL;
    size_t count = 0;
    if (leaf > 0.0) {
        grip_status st = grip_voxel_thin(ctx, model->xyz, model->n, leaf, &thin, &count);
        if (st != GRIP_OK)
            return st;
    } else {
        for (size_t i = 0; i < model->n; ++i)
            count += point_is_finite(model->xyz + 3 * i);
    }
    float *p = malloc((count ? count : 1) * 3 * sizeof *p);
    float *nr = model->normals ? malloc((count ? count : 1) * 3 * sizeof *nr) : NULL;
    if (!p || (model->normals && !nr)) {
        free(thin);
        free(p);
        free(nr);
        return grip_fail(ctx, GRIP_ENOMEM, "verify: cannot allocate %zu model points", count);
    }
    for (size_t i = 0, k = 0; k < count; ++i) {
        const size_t row = thin ? (size_t)thin[k] : i;
        if (!thin && !point_is_finite(model->xyz + 3 * row))
            continue;
        memcpy(p + 3 * k, model->xyz + 3 * row, 3 * sizeof *p);
        if (nr)
            memcpy(nr + 3 * k, model->normals + model->normal_stride * row, 3 * sizeof *nr);
        ++k;
    }
    free(thin);
    *xyz_out = p;
    *normals_out = nr;
    *n_out = count;
    return GRIP_OK;
}

/* Work space of one refinement: the model points (and normals), where the pose places them, and their nearest
 * scene points. */
typedef struct icp_work {
    const grip_icp_scene *scene;
    double *points;       /* n x 3, model coordinates */
    const float *normals; /* n x 3 model normals, or NULL (borrowed from the ICP points) */
    double *moved;    /* n x 3, under the current pose */
    uint32_t *nearest;
    float *sqdist;
    size_t n;
} icp_work;

static void icp_work_free(icp_work *w)
{
    free(w->points);
    free(w->moved);
    free(w->nearest);
    free(w->sqdist);
}

static grip_status icp_work_alloc(grip_ctx *ctx, const grip_icp_points *pts, icp_work *w)
{
    w->n = pts->count;
    w->normals = pts->normals;
    size_t n = w->n ? w->n : 1;
    w->points = malloc(n * 3 * sizeof(double));
    w->moved = malloc(n * 3 * sizeof(double));
    w->nearest = malloc(n * sizeof(uint32_t));
    w->sqdist = malloc(n * sizeof(float));
    if (!w->points || !w->moved || !w->nearest || !w->sqdist)
        return grip_fail(ctx, GRIP_ENOMEM, "verify: cannot allocate ICP work space for %zu points", w->n);
    for (size_t i = 0; i < 3 * w->n; ++i)
        w->points[i] = pts->xyz[i];
    return GRIP_OK;
}

/* Moves every model point by pose and finds its nearest scene point (UINT32_MAX / +inf when the scene is empty). */
static void find_nearest(grip_ctx *ctx, icp_work *w, const double pose[16])
{
    const ptrdiff_t n = (ptrdiff_t)w->n;
#pragma omp parallel for schedule(static) num_threads(grip_ctx_threads(ctx))
    for (ptrdiff_t i = 0; i < n; ++i) {
        double *m = w->moved + 3 * i;
        grip_icp_apply(pose, w->points + 3 * i, m);
        const float q[3] = {(float)m[0], (float)m[1], (float)m[2]};
        if (grip_kdtree3d_knn(w->scene->tree, q, 1, &w->nearest[i], &w->sqdist[i]) == 0) {
            w->nearest[i] = UINT32_MAX;
            w->sqdist[i] = INFINITY;
        }
    }
}

/* The scene normal of row `row` when the metric needs one, else a dummy; NULL when it is needed and not finite. */
static const float *scene_normal(const grip_icp_scene *sc, uint32_t metric, uint32_t row)
{
    static const float none[3] = {0.0f, 0.0f, 0.0f};
    if (metric != GRIP_ICP_POINT_TO_PLANE)
        return none;
    const float *n = sc->normals + sc->normal_stride * (size_t)row;
    return point_is_finite(n) ? n : NULL;
}

/* The terms of point i (zeros when it has no pair), for ordered_sum. */
typedef void (*point_terms_fn)(const void *arg, size_t i, double *t);

/* sum[0 .. nt) of the n points' terms in icp_math.h's order (the GPU's block sums, replayed). */
static void ordered_sum(size_t n, uint32_t nt, point_terms_fn terms, const void *arg, double *sum)
{
    for (uint32_t k = 0; k < nt; ++k)
        sum[k] = 0.0;
    for (size_t start = 0; start < n; start += GRIP_ICP_CHUNK) {
        double chunk[GRIP_ICP_TERMS_MAX];
        for (size_t w = 0; w < GRIP_ICP_CHUNK / GRIP_ICP_WARP; ++w) {
            double v[GRIP_ICP_WARP][GRIP_ICP_TERMS_MAX];
            for (size_t l = 0; l < GRIP_ICP_WARP; ++l) {
                const size_t i = start + w * GRIP_ICP_WARP + l;
                if (i < n)
                    terms(arg, i, v[l]);
                else
                    for (uint32_t k = 0; k < nt; ++k)
                        v[l][k] = 0.0;
            }
            for (size_t off = GRIP_ICP_WARP / 2; off > 0; off >>= 1)
                for (size_t l = 0; l < off; ++l)
                    for (uint32_t k = 0; k < nt; ++k)
                        v[l][k] += v[l + off][k];
            for (uint32_t k = 0; k < nt; ++k)
                chunk[k] = w == 0 ? v[0][k] : chunk[k] + v[0][k];
        }
        for (uint32_t k = 0; k < nt; ++k)
            sum[k] += chunk[k];
    }
}

typedef struct pair_args {
    const icp_work *w;
    uint32_t metric;
    double max_sqdist;
} pair_args;

static void pair_terms_of(const void *arg, size_t i, double *t)
{
    const pair_args *a = arg;
    const icp_work *w = a->w;
    const float *nrm = NULL;
    if (w->nearest[i] != UINT32_MAX && (double)w->sqdist[i] <= a->max_sqdist)
        nrm = scene_normal(w->scene, a->metric, w->nearest[i]);
    if (!nrm) {
        for (uint32_t k = 0; k < grip_icp_terms(a->metric); ++k)
            t[k] = 0.0;
        return;
    }
    grip_icp_pair_terms(a->metric, w->moved + 3 * i, w->scene->xyz + 3 * (size_t)w->nearest[i], nrm, w->sqdist[i], t);
}

/* Sums the terms of the pairs within max_sqdist into sum[0 .. grip_icp_terms(metric)). */
static void sum_pairs(const icp_work *w, uint32_t metric, double max_sqdist, double *sum)
{
    const pair_args a = {w, metric, max_sqdist};
    ordered_sum(w->n, grip_icp_terms(metric), pair_terms_of, &a, sum);
}

static void refine(grip_ctx *ctx, const grip_icp_params *p, icp_work *w, grip_icp_result *r)
{
    const double rotation_threshold = p->rotation_epsilon > 0.0 ? p->rotation_epsilon : 1.0 - p->transformation_epsilon;
    double previous_mse = DBL_MAX;
    r->iterations = 0;
    r->stop = GRIP_ICP_STOP_ITERATIONS;
    while (r->iterations < p->max_iterations) {
        const double bound = grip_icp_correspondence_distance(p, r->iterations);
        find_nearest(ctx, w, r->pose);
        double sum[GRIP_ICP_TERMS_MAX];
        sum_pairs(w, p->metric, bound * bound, sum);
        if (sum[0] < ICP_MIN_PAIRS) {
            r->stop = GRIP_ICP_STOP_FEW_CORRESPONDENCES;
            return;
        }
        double delta[16], pose[16];
        if (p->metric == GRIP_ICP_POINT_TO_PLANE)
            grip_icp_solve_p2l(sum, delta);
        else
            grip_icp_solve_p2p(sum, delta);
        grip_icp_compose(delta, r->pose, pose);
        if (!grip_icp_pose_finite(pose)) {
            r->stop = GRIP_ICP_STOP_DEGENERATE;
            return;
        }
        memcpy(r->pose, pose, sizeof pose);
        ++r->iterations;
        const int stop = grip_icp_converged(p->max_iterations, p->transformation_epsilon, rotation_threshold,
                                            p->euclidean_fitness_epsilon, r->iterations, delta, sum[1] / sum[0],
                                            &previous_mse);
        if (stop >= 0) {
            r->stop = (uint32_t)stop;
            return;
        }
    }
}

typedef struct score_args {
    const icp_work *w;
    const double *pose;
    double inlier_sqdist;
} score_args;

/* Point i's score terms: facing the viewpoint, an inlier among those, its squared distance then. */
static void score_terms_of(const void *arg, size_t i, double *t)
{
    static const float no_normal[3] = {NAN, NAN, NAN};
    const score_args *a = arg;
    const icp_work *w = a->w;
    t[0] = t[1] = t[2] = 0.0;
    if (!grip_icp_faces_viewpoint(a->pose, w->moved + 3 * i, w->normals ? w->normals + 3 * i : no_normal,
                                  w->scene->viewpoint))
        return;
    t[0] = 1.0;
    if ((double)w->sqdist[i] <= a->inlier_sqdist) {
        t[1] = 1.0;
        t[2] = (double)w->sqdist[i];
    }
}

static void score(grip_ctx *ctx, const grip_icp_params *p, icp_work *w, grip_icp_result *r)
{
    find_nearest(ctx, w, r->pose);
    const score_args a = {w, r->pose, p->inlier_distance * p->inlier_distance};
    double sum[3];
    ordered_sum(w->n, 3, score_terms_of, &a, sum);
    r->n_points = (size_t)sum[0];
    r->n_inliers = (size_t)sum[1];
    r->fitness = r->n_points ? (double)r->n_inliers / (double)r->n_points : 0.0;
    r->rmse = r->n_inliers ? sqrt(sum[2] / (double)r->n_inliers) : INFINITY;
    r->accepted = r->fitness >= p->min_fitness && r->rmse <= p->max_rmse;
}

/* The arguments of a refinement: parameters, the model's points (a NULL model when `model` is NULL) and normals,
 * scene, pose, output. */
static grip_status check_arguments(grip_ctx *ctx, const grip_icp_params *p, const void *model, const float *xyz,
                                   size_t n, const float *normals, size_t normal_stride, const grip_icp_scene *scene,
                                   const double init_pose[16], const grip_icp_result *out)
{
    grip_status st = grip_icp_params_check(ctx, p);
    if (st != GRIP_OK)
        return st;
    if (!model || !scene || !scene->tree || !scene->xyz || !init_pose || !out || (n > 0 && !xyz))
        return grip_fail(ctx, GRIP_EINVAL, "verify: ICP got a NULL model, scene, tree, pose or output");
    if ((normals && normal_stride < 3) || (scene->normals && scene->normal_stride < 3))
        return grip_fail(ctx, GRIP_EINVAL, "verify: ICP normals need a stride of 3 floats at least");
    if (p->metric == GRIP_ICP_POINT_TO_PLANE && !scene->normals)
        return grip_fail(ctx, GRIP_ECONFIG, "verify.metric: point_to_plane needs scene normals, and the scene has none");
    for (int i = 0; i < 16; ++i)
        if (!isfinite(init_pose[i]))
            return grip_fail(ctx, GRIP_EINVAL, "verify: initial pose element %d is not finite", i);
    return GRIP_OK;
}

/* Refinement and score of checked arguments. */
static grip_status refine_checked(grip_ctx *ctx, const grip_icp_params *params, const grip_icp_points *points,
                                  const grip_icp_scene *scene, const double init_pose[16], grip_icp_result *out)
{
    icp_work w;
    memset(&w, 0, sizeof w);
    w.scene = scene;
    grip_status st = icp_work_alloc(ctx, points, &w);
    if (st == GRIP_OK) {
        grip_icp_result r;
        memset(&r, 0, sizeof r);
        memcpy(r.pose, init_pose, sizeof r.pose);
        refine(ctx, params, &w, &r);
        score(ctx, params, &w, &r);
        *out = r;
    }
    icp_work_free(&w);
    return st;
}

grip_status grip_icp_refine_points(grip_ctx *ctx, const grip_icp_params *params, const grip_icp_points *points,
                                   const grip_icp_scene *scene, const double init_pose[16], grip_icp_result *out)
{
    grip_status st = check_arguments(ctx, params, points, points ? points->xyz : NULL, points ? points->count : 0, NULL,
                                     3, scene, init_pose, out);
    return st != GRIP_OK ? st : refine_checked(ctx, params, points, scene, init_pose, out);
}

grip_status grip_icp_refine_scene(grip_ctx *ctx, const grip_icp_params *params, const grip_icp_model *model,
                                  const grip_icp_scene *scene, const double init_pose[16], grip_icp_result *out)
{
    grip_status st = check_arguments(ctx, params, model, model ? model->xyz : NULL, model ? model->n : 0,
                                     model ? model->normals : NULL, model ? model->normal_stride : 3, scene, init_pose,
                                     out);
    if (st != GRIP_OK)
        return st;
    float *xyz = NULL, *normals = NULL;
    size_t count = 0;
    st = grip_icp_model_points(ctx, params->voxel_leaf, model, &xyz, &normals, &count);
    if (st == GRIP_OK) {
        const grip_icp_points points = {xyz, normals, count};
        st = refine_checked(ctx, params, &points, scene, init_pose, out);
    }
    free(xyz);
    free(normals);
    return st;
}

grip_status grip_icp_refine(grip_ctx *ctx, const grip_icp_params *params, const float *model_xyz, size_t n_model,
                            const grip_kdtree3d *scene_tree, const float *scene_xyz, const double init_pose[16],
                            grip_icp_result *out)
{
    const grip_icp_model model = {model_xyz, n_model, NULL, 0};
    const grip_icp_scene scene = {scene_tree, scene_xyz, NULL, 0, {0.0, 0.0, 0.0}};
    return grip_icp_refine_scene(ctx, params, &model, &scene, init_pose, out);
}
