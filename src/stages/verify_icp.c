/* verify_icp.c -- the `icp` verify stage: the hypotheses are ranked by votes and the best max_hypotheses kept (the
 * rest rejected); each kept one is refined by ICP (point-to-point or point-to-plane) against the scene -- all of
 * them in one batch on the GPU (icp_cuda.h), one by one on the CPU twin (icp.h) -- and accepted when enough of the
 * model's visible side lands on scene points (fitness) closely enough (RMSE), unless ICP moved it far from the
 * grouped pose, it floats in space an organized scene's camera saw through, or (support_margin) it is sunk into
 * the scene's supporting plane (verify/support_plane.h); then accepted hypotheses that put a model where a better
 * one of it already is (by pose or centre), or fill the space a better one of any model fills (max_overlap), are
 * rejected as duplicates (verify/pose_nms.h). These checks run on the host on both backends: they read each model
 * once per hypothesis, a small part of the time ICP takes (docs/performance.md). Each rejection records the first
 * test it failed, in that order: cap, ICP failure, fitness, RMSE, drift, free space, support, duplicate
 * (grip_verdict.reason). Each model's ICP points (thinned, with their normals) are made once and kept by the stage
 * for its later calls while the model is unchanged (stages/verify_model_cache.h): a stream of scenes against the
 * same models pays for them once. */
#include "stages/stage.h"
#include "stages/cloud_input.h"
#include "stages/normals_choice.h"
#include "stages/normals_orientation.h"
#include "stages/registry.h"
#include "stages/results.h"
#include "stages/verify_common.h"
#include "stages/verify_model_cache.h"
#include "spatial/kdtree3d.h"
#include "verify/free_space.h"
#include "verify/free_space_cuda.h"
#include "verify/support_plane.h"
#include "verify/icp.h"
#include "verify/icp_cuda.h"
#include "verify/pose_nms.h"

#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const grip_param_info icp_params[] = {
    GRIP_PARAM_DEVICE,
    GRIP_PARAM_FALLBACK,
    {sizeof(grip_param_info), GRIP_PARAM_INT, "max_hypotheses", "100", 0, 1000000, NULL,
     "only the hypotheses with the most votes are refined, at most this many; the rest are rejected (0: all)"},
    {sizeof(grip_param_info), GRIP_PARAM_ENUM, "metric", "point_to_point", 0, 0, "point_to_point|point_to_plane",
     "ICP's error: point distances, or distances to the scene's tangent planes (needs scene normals: the cloud's, "
     "the descriptor's, or computed)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "max_iterations", "50", 0, 10000, NULL, "ICP iterations at most"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "max_correspondence_distance", "0.01", 1e-9, 1e9, NULL,
     "ICP pairs farther apart than this are dropped (cloud units); the first iteration's bound with a schedule",
     GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "final_correspondence_distance", "0", 0, 1e9, NULL,
     "when > 0: the bound shrinks geometrically from max_correspondence_distance to this at the last iteration",
     GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "transformation_epsilon", "1e-10", 0, 1, NULL,
     "ICP stops when the update's squared translation is below this (and its rotation is as small)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "euclidean_fitness_epsilon", "0", 0, 1, NULL,
     "ICP stops when the mean squared pair distance changes by less than this fraction (0: off)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "model_leaf", "0.002", 0, 100, NULL,
     "models are thinned to voxel centroids of this size for ICP and scoring (0: every point)", GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "inlier_distance", "0.005", 1e-9, 1e9, NULL,
     "a model point is explained when a scene point lies within this distance (cloud units)", GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_BOOL, "visible_fitness", "true", 0, 0, NULL,
     "fitness counts only the model points whose normal faces the scene's viewpoint under the pose (normals "
     "pointing out of the object, as a scan's oriented to its sensor do)"},
    GRIP_PARAM_NORMALS,
    {sizeof(grip_param_info), GRIP_PARAM_INT, "normals_k", "10", 3, 32, NULL,
     "neighbours for the normals computed when a cloud and its features carry none"},
    {sizeof(grip_param_info), GRIP_PARAM_ENUM, "model_normals", "viewpoint", 0, 0, GRIP_MODEL_NORMALS_CHOICES,
     "orientation of the normals computed for model clouds (scenes keep the viewpoint), as the descriptor stages' "
     "key: " GRIP_MODEL_NORMALS_HELP},
    GRIP_PARAM_PROPAGATE_K,
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "min_fitness", "0.3", 0, 1, NULL,
     "accept when at least this fraction of the model (of its visible side) is explained ..."},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "max_rmse", "0.0025", 0, 1e9, NULL,
     "... and the explained points' RMSE is at most this (cloud units)", GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "max_drift", "0.02", 0, 1e9, NULL,
     "reject when ICP moved the model more than this RMS distance from the grouped pose (0: no limit)",
     GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "free_space_tolerance", "0.01", 1e-9, 1e9, NULL,
     "a model point floats in seen-through space when the scene surface lies farther than this behind it",
     GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "max_violation", "0.1", 0, 1, NULL,
     "reject when more than this fraction of the model points the camera should see are seen through "
     "(organized scenes only)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "duplicate_distance", "0.01", 0, 1e9, NULL,
     "an accepted pose within this RMS point displacement of a better one of the same model is a duplicate",
     GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "support_margin", "0", 0, 1e9, NULL,
     "tabletop scenes: the scene's dominant plane (points within half this of it) is the surface the objects stand "
     "on, above it the side of the cloud's viewpoint, and a model point more than this beneath it is sunk into it "
     "(0: off)",
     GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "max_sunk", "0.1", 0, 1, NULL,
     "reject when more than this fraction of the model's points is sunk into the support (with support_margin)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "max_overlap", "1", 0, 1, NULL,
     "an accepted pose with more than this fraction of its model points within overlap_distance of a fitter "
     "accepted pose's points (any model) is a duplicate: two objects cannot fill one space (1: off)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "overlap_distance", "0.005", 1e-9, 1e9, NULL,
     "how near two poses' model points must lie to share space (max_overlap)", GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "duplicate_center_distance", "0", 0, 1e9, NULL,
     "an accepted pose that puts the model's centre within this distance of where a better one of the same model "
     "puts it is a duplicate, however it is turned (two objects cannot stand in one place; 0: off)",
     GRIP_PARAM_FLAG_LENGTH},
};

static grip_icp_params icp_params_of(const grip_stage *st)
{
    grip_icp_params p;
    memset(&p, 0, sizeof p);
    p.max_iterations = (uint32_t)grip_stage_integer(st, "max_iterations");
    p.max_correspondence_distance = grip_stage_number(st, "max_correspondence_distance");
    p.transformation_epsilon = grip_stage_number(st, "transformation_epsilon");
    p.euclidean_fitness_epsilon = grip_stage_number(st, "euclidean_fitness_epsilon");
    p.voxel_leaf = grip_stage_number(st, "model_leaf");
    p.inlier_distance = grip_stage_number(st, "inlier_distance");
    p.min_fitness = grip_stage_number(st, "min_fitness");
    p.max_rmse = grip_stage_number(st, "max_rmse");
    p.metric = grip_stage_choice(st, "metric") == 1 ? GRIP_ICP_POINT_TO_PLANE : GRIP_ICP_POINT_TO_POINT;
    p.final_correspondence_distance = grip_stage_number(st, "final_correspondence_distance");
    return p;
}

/* A cloud's normals as rows of host floats: the cloud's own at unit length when the `normals` key takes them
 * (stages/normals_choice.h), else its features' (one row per cloud point), else computed from its normals_k nearest
 * (on the stage's backend) and oriented as `orientation` (grip_model_normals: a model's model_normals, a scene's
 * viewpoint) says, by the step the descriptor front uses (stages/normals_orientation.h). */
typedef struct view_normals {
    const float *rows;
    size_t stride;
    float *computed;
    grip_array host;
    int own_host;
} view_normals;

static void view_normals_close(view_normals *vn)
{
    free(vn->computed);
    if (vn->own_host)
        grip_array_free_host(&vn->host);
    memset(vn, 0, sizeof *vn);
}

static int features_have_normals(const grip_view *view, size_t n)
{
    const grip_features *f = view->features;
    return f && f->struct_size >= offsetof(grip_features, frames) && f->normals.data && f->normals.rows == n &&
           f->normals.cols >= 3 && f->normals.dtype == GRIP_F32;
}

/* The normals of view_normals_open that are given: the cloud's own (under the `normals` key) or its features';
 * vn->rows stays NULL when they are to be computed (view_normals_compute). */
static grip_status view_normals_given(grip_stage *st, const grip_view *view, const grip_cloud_input *in,
                                      const char *what, view_normals *vn)
{
    memset(vn, 0, sizeof *vn);
    vn->computed = malloc((in->n ? in->n : 1) * 4 * sizeof *vn->computed);
    if (!vn->computed)
        return grip_fail(st->ctx, GRIP_ENOMEM, "%s: out of memory for %zu normals", what, in->n);
    uint32_t source;
    grip_status s = grip_normals_choose(st, in, "verify.normals", vn->computed, &source);
    if (s || source == GRIP_NORMALS_CLOUD || source == GRIP_NORMALS_CLOUD_RESCALED) {
        vn->rows = vn->computed;
        vn->stride = 4;
        return s;
    }
    if (features_have_normals(view, in->n)) {
        s = grip_array_to_host(st->ctx, &view->features->normals, &vn->host, &vn->own_host, what);
        vn->rows = vn->host.data;
        vn->stride = (size_t)view->features->normals.cols;
    }
    return s;
}

/* The normals of view_normals_open that are computed, into vn->computed (view_normals_given made it). */
static grip_status view_normals_compute(grip_stage *st, const grip_cloud_input *in, uint32_t orientation,
                                        view_normals *vn)
{
    const uint32_t k = (uint32_t)grip_stage_integer(st, "normals_k");
    grip_normals_plan plan;
    grip_normals_plan_init(&plan, in, k, 0.0f, orientation, (uint32_t)grip_stage_integer(st, "propagate_k"));
    vn->rows = vn->computed;
    vn->stride = 4;
    if (st->use_cuda)
        return grip_normals_plan_cuda(st->ctx, &plan, in, vn->computed);
    return grip_normals_plan_host(st->ctx, &plan, in, NULL, vn->computed);
}

static grip_status view_normals_open(grip_stage *st, const grip_view *view, const grip_cloud_input *in,
                                     uint32_t orientation, const char *what, view_normals *vn)
{
    grip_status s = view_normals_given(st, view, in, what, vn);
    if (!s && !vn->rows)
        s = view_normals_compute(st, in, orientation, vn);
    return s;
}

/* The header of a model's key in the stage's cache (stages/verify_model_cache.h): what shapes the model's ICP
 * points besides its points and the normals it was given -- the leaf, and what its normals were taken or computed
 * from. The parts after it: the points (n x 3 floats) and the given normals (given_normals_size bytes). */
typedef struct icp_model_key {
    double leaf;                 /* model_leaf */
    uint64_t n;                  /* points */
    uint64_t given_normals_size; /* bytes of the given normals' rows, 0 when computed or not used */
    uint32_t width, height;
    float viewpoint[3];                             /* computed normals are oriented toward it */
    uint32_t normals_used;                          /* 0: none (visible_fitness off), 1: given, 2: computed */
    uint32_t normal_stride;                         /* of the given rows */
    uint32_t normals_choice;                        /* the `normals` key */
    uint32_t normals_k, model_normals, propagate_k; /* how computed normals are computed ... */
    uint32_t use_cuda;                              /* ... and on which backend (0 unless computed) */
} icp_model_key;
_Static_assert(sizeof(icp_model_key) == 72, "icp_model_key has padding: keys would compare unset bytes");

/* Model m's ICP points (borrowed from the stage's cache): the cached ones when the model's points, its given
 * normals and every setting that shapes them equal those they were made from, else made now (thinned to model_leaf
 * voxels, with normals when visible_fitness asks for them: the cloud's, its features', or computed) and cached. */
static grip_status model_points(grip_stage *st, grip_model_cache *cache, uint32_t m, const grip_view *view,
                                const grip_cloud_input *in, const char *what, const grip_prepared_model **out)
{
    *out = NULL;
    const int visible = grip_stage_bool(st, "visible_fitness");
    view_normals vn;
    memset(&vn, 0, sizeof vn);
    grip_status s = visible ? view_normals_given(st, view, in, what, &vn) : GRIP_OK;
    icp_model_key key;
    memset(&key, 0, sizeof key); /* the key is compared whole: every byte set */
    key.leaf = grip_stage_number(st, "model_leaf");
    key.n = in->n;
    key.given_normals_size = vn.rows ? in->n * vn.stride * sizeof *vn.rows : 0;
    key.width = in->width;
    key.height = in->height;
    memcpy(key.viewpoint, in->viewpoint, sizeof key.viewpoint);
    key.normals_used = !visible ? 0 : vn.rows ? 1 : 2;
    key.normal_stride = (uint32_t)vn.stride;
    key.normals_choice = (uint32_t)grip_stage_choice(st, "normals");
    key.normals_k = (uint32_t)grip_stage_integer(st, "normals_k");
    key.model_normals = (uint32_t)grip_stage_choice(st, "model_normals");
    key.propagate_k = (uint32_t)grip_stage_integer(st, "propagate_k");
    key.use_cuda = key.normals_used == 2 ? (uint32_t)st->use_cuda : 0; /* a CPU fallback keeps given normals' */
    const grip_model_key_part parts[] = {
        {&key, sizeof key}, {in->xyz, in->n * 3 * sizeof *in->xyz}, {vn.rows, key.given_normals_size}};
    const size_t n_parts = sizeof parts / sizeof parts[0];
    if (!s)
        *out = grip_model_cache_find(cache, m, parts, n_parts);
    if (!s && !*out) {
        if (visible && !vn.rows)
            s = view_normals_compute(st, in, key.model_normals, &vn);
        grip_prepared_model made;
        memset(&made, 0, sizeof made);
        const grip_icp_model model = {in->xyz, in->n, vn.rows, vn.stride};
        if (!s)
            s = grip_icp_model_points(st->ctx, key.leaf, &model, &made.xyz, &made.normals, &made.count);
        if (!s)
            grip_model_spread_compute(in->xyz, in->n, &made.spread);
        /* the overlap test's tree, when the test is on (an entry made without one leaves the test to build it for
         * each call, should max_overlap change later) */
        if (!s && grip_stage_number(st, "max_overlap") < 1.0)
            s = grip_kdtree3d_build(st->ctx, made.xyz, made.count, &made.tree);
        if (!s)
            s = grip_model_cache_store(st->ctx, cache, m, parts, n_parts, &made, out);
        grip_prepared_model_free(&made); /* the store moved the arrays (and zeroed made) unless a step failed */
    }
    view_normals_close(&vn);
    return s;
}

/* The model views opened for refinement: clouds and their ICP points (borrowed from the stage's cache). */
typedef struct open_models {
    grip_cloud_input *cloud;
    const grip_prepared_model **points;
    uint32_t n;
} open_models;

static void open_models_close(open_models *om)
{
    for (uint32_t m = 0; m < om->n; m++)
        grip_cloud_input_close(&om->cloud[m]);
    free(om->cloud);
    free((void *)om->points);
}

static grip_status open_models_open(grip_stage *st, const grip_view *models, uint32_t n_models,
                                    grip_model_spread *spreads, open_models *om)
{
    om->n = 0;
    om->cloud = calloc((size_t)n_models + 1, sizeof *om->cloud);
    om->points = calloc((size_t)n_models + 1, sizeof *om->points);
    if (!om->cloud || !om->points)
        return grip_fail(st->ctx, GRIP_ENOMEM, "verify: out of memory");
    grip_model_cache *cache = NULL;
    grip_status s = grip_verify_model_cache(st, &cache);
    if (!s)
        s = grip_model_cache_reserve(st->ctx, cache, n_models);
    for (uint32_t m = 0; m < n_models && !s; m++) {
        char what[64];
        snprintf(what, sizeof what, "verify: models[%u].cloud", m);
        s = grip_cloud_input_open(st->ctx, models[m].cloud, what, &om->cloud[m]);
        om->n = m + 1;
        if (!s)
            s = model_points(st, cache, m, &models[m], &om->cloud[m], what, &om->points[m]);
        if (!s)
            spreads[m] = om->points[m]->spread; /* of the model's points, which its cache key holds */
    }
    return s;
}

static grip_icp_points icp_points_of(const open_models *om, uint32_t m)
{
    const grip_prepared_model *pm = om->points[m];
    const grip_icp_points points = {pm->xyz, pm->normals, pm->count};
    return points;
}

/* A hypothesis' rank key: its votes and index. */
typedef struct ranked {
    float votes;
    uint32_t index;
} ranked;

/* Most votes first, a NaN vote last, ties to the lower index. */
static int by_votes(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    const int nx = isnan(x->votes), ny = isnan(y->votes);
    if (nx != ny)
        return nx - ny;
    if (!nx && x->votes != y->votes)
        return x->votes > y->votes ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int by_index(const void *a, const void *b)
{
    const uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    return i < j ? -1 : i > j;
}

/* The hypotheses to refine: the max_hypotheses with the most votes (all when the key is 0), in hypothesis order;
 * *kept is malloc'd, the caller frees it. */
static grip_status rank_and_cap(grip_stage *st, const grip_hypotheses *h, uint32_t **kept, uint32_t *n_kept)
{
    const long long cap = grip_stage_integer(st, "max_hypotheses");
    const uint32_t n = cap > 0 && (uint64_t)cap < h->count ? (uint32_t)cap : h->count;
    uint32_t *out = malloc(((size_t)n + 1) * sizeof *out);
    ranked *order = malloc(((size_t)h->count + 1) * sizeof *order);
    if (!out || !order) {
        free(out);
        free(order);
        return grip_fail(st->ctx, GRIP_ENOMEM, "verify: out of memory for %u hypotheses", h->count);
    }
    for (uint32_t i = 0; i < h->count; i++)
        order[i] = (ranked){grip_verify_hypothesis_at(h, i)->votes, i};
    if (n < h->count)
        qsort(order, h->count, sizeof *order, by_votes);
    for (uint32_t i = 0; i < n; i++)
        out[i] = order[i].index;
    qsort(out, n, sizeof *out, by_index);
    free(order);
    *kept = out;
    *n_kept = n;
    return GRIP_OK;
}

/* The CPU twin: one refinement per kept hypothesis against a kd-tree of the scene. */
static grip_status refine_cpu(grip_stage *st, const grip_icp_params *p, const open_models *om,
                              const grip_cloud_input *scene, const view_normals *sn, const grip_hypotheses *h,
                              const uint32_t *kept, uint32_t n_kept, grip_icp_result *res)
{
    grip_kdtree3d *tree = NULL;
    grip_status s = grip_kdtree3d_build(st->ctx, scene->xyz, scene->n, &tree);
    grip_icp_scene sc = {tree, scene->xyz, sn->rows, sn->stride,
                         {scene->viewpoint[0], scene->viewpoint[1], scene->viewpoint[2]}};
    for (uint32_t k = 0; k < n_kept && !s; k++) {
        const grip_hypothesis *hy = grip_verify_hypothesis_at(h, kept[k]);
        double init[16];
        for (int e = 0; e < 16; e++)
            init[e] = hy->pose[e];
        const grip_icp_points points = icp_points_of(om, hy->model_id);
        s = grip_icp_refine_points(st->ctx, p, &points, &sc, init, &res[k]);
    }
    grip_kdtree3d_free(tree);
    return s;
}

/* The ICP points of every model, concatenated, for the GPU batch (malloc'd into b; freed by batch_points_free). */
static void batch_points_free(grip_icp_batch *b)
{
    free((void *)b->model_xyz);
    free((void *)b->model_normals);
    free((void *)b->model_first);
    free((void *)b->hypothesis_model);
    free((void *)b->init_poses);
}

static grip_status batch_points(grip_stage *st, const open_models *om, grip_icp_batch *b)
{
    size_t *first = calloc((size_t)om->n + 1, sizeof *first);
    b->model_first = first;
    b->n_models = om->n;
    if (!first)
        return grip_fail(st->ctx, GRIP_ENOMEM, "verify: out of memory");
    int with_normals = om->n > 0;
    for (uint32_t m = 0; m < om->n; m++) {
        first[m + 1] = first[m] + om->points[m]->count;
        with_normals = with_normals && om->points[m]->normals;
    }
    const size_t total = first[om->n];
    float *all = malloc((total ? total : 1) * 3 * sizeof *all);
    float *all_n = with_normals ? malloc((total ? total : 1) * 3 * sizeof *all_n) : NULL;
    b->model_xyz = all;
    b->model_normals = all_n;
    if (!all || (with_normals && !all_n))
        return grip_fail(st->ctx, GRIP_ENOMEM, "verify: out of memory for %zu model points", total);
    for (uint32_t m = 0; m < om->n; m++) {
        const grip_prepared_model *pm = om->points[m];
        if (pm->count)
            memcpy(all + 3 * first[m], pm->xyz, pm->count * 3 * sizeof *all);
        if (all_n && pm->count)
            memcpy(all_n + 3 * first[m], pm->normals, pm->count * 3 * sizeof *all_n);
    }
    return GRIP_OK;
}

/* ICP iterations the GPU is given before the host first waits to see whether any hypothesis still moves: about as
 * many as the device runs while the host fits the camera and, with a support_margin, the support plane. On the
 * H200, the camera fit took 0.25 ms on the tutorial's scene, whose ICP stops after 8 iterations of 20 us; the
 * camera and the plane, 1.5-1.65 ms on a demo database scene, whose 16-24 hypotheses take 60 us an iteration.
 * Iterations queued after every hypothesis has stopped cost only empty launches the host pays for, and the results
 * do not depend on the number. */
#define ICP_QUEUED_FOR_CAMERA 4
#define ICP_QUEUED_FOR_CAMERA_AND_PLANE 24

/* The GPU: every kept hypothesis in one batch against the scene dev, started (*run; grip_icp_cuda_refine_finish
 * gives the results) so that the host can work while the first `queued` iterations run. */
static grip_status refine_cuda_start(grip_stage *st, const grip_icp_params *p, const open_models *om,
                                     const grip_hypotheses *h, const uint32_t *kept, uint32_t n_kept,
                                     const grip_icp_cuda_scene *dev, uint32_t queued, grip_icp_cuda_run **run)
{
    grip_icp_batch b;
    memset(&b, 0, sizeof b);
    grip_status s = batch_points(st, om, &b);
    uint32_t *model = malloc(((size_t)n_kept + 1) * sizeof *model);
    double *poses = malloc(((size_t)n_kept + 1) * 16 * sizeof *poses);
    b.hypothesis_model = model;
    b.init_poses = poses;
    b.n_hypotheses = n_kept;
    if (!s && (!model || !poses))
        s = grip_fail(st->ctx, GRIP_ENOMEM, "verify: out of memory for %u hypotheses", n_kept);
    for (uint32_t k = 0; k < n_kept && !s; k++) {
        const grip_hypothesis *hy = grip_verify_hypothesis_at(h, kept[k]);
        model[k] = hy->model_id;
        for (int e = 0; e < 16; e++)
            poses[16 * (size_t)k + e] = hy->pose[e];
    }
    if (!s)
        s = grip_icp_cuda_refine_start(st->ctx, p, dev, &b, queued, run);
    batch_points_free(&b);
    return s;
}

/* Why ICP's own scoring rejected r (fitness, then RMSE), or GRIP_VERDICT_ICP_FAILED when its update was not
 * finite; GRIP_VERDICT_ACCEPTED when it passed. */
static uint32_t refinement_reason(const grip_icp_params *p, const grip_icp_result *r)
{
    if (r->accepted)
        return GRIP_VERDICT_ACCEPTED;
    if (r->stop == GRIP_ICP_STOP_DEGENERATE)
        return GRIP_VERDICT_ICP_FAILED;
    return r->fitness >= p->min_fitness ? GRIP_VERDICT_RMSE : GRIP_VERDICT_FITNESS;
}

/* The verdict of hypothesis i from its refinement r: the host's checks (drift, free space, support) may still
 * reject it; the reason is the first test it failed. */
static void verdict_of(grip_stage *st, const grip_icp_params *p, float violation, const grip_support_plane *support,
                       const grip_cloud_input *model, const grip_model_spread *spread, const grip_hypothesis *hy,
                       uint32_t i, grip_icp_result r, grip_verdict *vd)
{
    double init[16];
    for (int k = 0; k < 16; k++)
        init[k] = hy->pose[k];
    uint32_t reason = refinement_reason(p, &r);
    double max_drift = grip_stage_number(st, "max_drift");
    if (!reason && max_drift > 0 && grip_pose_rms_displacement(spread, init, r.pose) > max_drift)
        reason = GRIP_VERDICT_DRIFT; /* ICP wandered off: the grouped pose was not where the model is */
    vd->violation = violation;
    if (!reason && vd->violation > grip_stage_number(st, "max_violation"))
        reason = GRIP_VERDICT_FREE_SPACE;
    if (!reason && support->valid &&
        grip_support_sunk_fraction(support, model->xyz, model->n, r.pose, grip_stage_number(st, "support_margin")) >
            grip_stage_number(st, "max_sunk"))
        reason = GRIP_VERDICT_SUPPORT;
    vd->hypothesis = i;
    for (int k = 0; k < 16; k++)
        vd->pose[k] = (float)r.pose[k];
    vd->fitness = (float)r.fitness;
    vd->rmse = (float)r.rmse;
    vd->iterations = r.iterations;
    vd->accepted = reason == GRIP_VERDICT_ACCEPTED;
    vd->reason = reason;
}

/* Rejects accepted hypotheses that duplicate a better one (higher fitness): of the same model, by pose
 * (duplicate_distance, duplicate_center_distance); of any model, by the space they fill (max_overlap). */
static grip_status suppress_duplicates(grip_stage *st, uint32_t n_models, const grip_hypotheses *h, grip_verdicts *v,
                                       const grip_model_spread *spreads, const open_models *om)
{
    size_t n = h->count;
    uint32_t *model = malloc(n * sizeof *model + 1), *accepted = malloc(n * sizeof *accepted + 1);
    double *poses = malloc(n * 16 * sizeof *poses + 1), *scores = malloc(n * sizeof *scores + 1);
    grip_status s = model && accepted && poses && scores ? GRIP_OK
                                                         : grip_fail(st->ctx, GRIP_ENOMEM, "verify: out of memory");
    for (size_t i = 0; i < n && !s; i++) {
        model[i] = grip_verify_hypothesis_at(h, (uint32_t)i)->model_id;
        accepted[i] = v->items[i].accepted;
        scores[i] = v->items[i].fitness;
        for (int k = 0; k < 16; k++)
            poses[16 * i + k] = v->items[i].pose[k];
    }
    if (!s)
        s = grip_suppress_duplicates(st->ctx, spreads, n_models, model, poses, scores, n,
                                     grip_stage_number(st, "duplicate_distance"),
                                     grip_stage_number(st, "duplicate_center_distance"), accepted, NULL);
    grip_model_points *points = s ? NULL : malloc(((size_t)n_models + 1) * sizeof *points);
    if (!s && !points)
        s = grip_fail(st->ctx, GRIP_ENOMEM, "verify: out of memory");
    for (uint32_t m = 0; m < n_models && !s; m++)
        points[m] = (grip_model_points){om->points[m]->xyz, om->points[m]->count, om->points[m]->tree};
    if (!s)
        s = grip_suppress_overlaps(st->ctx, points, n_models, model, poses, scores, n,
                                   grip_stage_number(st, "overlap_distance"), grip_stage_number(st, "max_overlap"),
                                   accepted, NULL);
    free(points);
    for (size_t i = 0; i < n && !s; i++)
        if (v->items[i].accepted && !accepted[i]) {
            v->items[i].accepted = 0;
            v->items[i].reason = GRIP_VERDICT_DUPLICATE;
        }
    free(model);
    free(accepted);
    free(poses);
    free(scores);
    return s;
}

/* The free-space violation of each of the n_kept refined poses (res) into violation (n_kept, the caller's): on the
 * device when ICP left the scene there (dev), the same fractions. */
static grip_status free_space_of_kept(grip_stage *st, const grip_pinhole *cam, const grip_cloud_input *scene,
                                      const grip_icp_cuda_scene *dev, const open_models *om, const grip_hypotheses *h,
                                      const uint32_t *kept, uint32_t n_kept, const grip_icp_result *res,
                                      float *violation)
{
    grip_free_space_job *jobs = malloc(((size_t)n_kept + 1) * sizeof *jobs);
    if (!jobs)
        return grip_fail(st->ctx, GRIP_ENOMEM, "verify: out of memory for %u free-space checks", n_kept);
    for (uint32_t k = 0; k < n_kept; k++) {
        const grip_cloud_input *model = &om->cloud[grip_verify_hypothesis_at(h, kept[k])->model_id];
        jobs[k] = (grip_free_space_job){model->xyz, model->n, res[k].pose};
    }
    const double tolerance = grip_stage_number(st, "free_space_tolerance");
    size_t stride = 0;
    const float *scene_dev = dev ? grip_icp_cuda_scene_points(dev, &stride) : NULL;
    grip_status s = scene_dev ? grip_free_space_violations_cuda(st->ctx, cam, scene_dev, stride, scene->width,
                                                                scene->height, jobs, n_kept, tolerance, violation)
                              : grip_free_space_violations(st->ctx, cam, scene->xyz, scene->width, scene->height,
                                                           jobs, n_kept, tolerance, violation);
    free(jobs);
    return s;
}

/* ICP on the kept hypotheses, then the duplicates; verdict i gets hypothesis i (a hypothesis left out by the cap
 * keeps its pose and is rejected). */
static grip_status refine_all(grip_stage *st, const grip_view *models, uint32_t n_models, const grip_view *scene_view,
                              const grip_cloud_input *scene, const grip_hypotheses *h, grip_verdicts *v,
                              grip_model_spread *spreads)
{
    grip_ctx *ctx = st->ctx;
    grip_support_plane support;
    memset(&support, 0, sizeof support);
    const double support_margin = grip_stage_number(st, "support_margin");
    grip_icp_params p = icp_params_of(st);
    open_models om;
    memset(&om, 0, sizeof om);
    view_normals sn;
    memset(&sn, 0, sizeof sn);
    uint32_t *kept = NULL, n_kept = 0;
    grip_icp_result *res = NULL;
    grip_icp_cuda_scene *dev = NULL; /* the scene on the device, when ICP runs there */
    grip_icp_cuda_run *run = NULL;
    float *violation = NULL;
    grip_status s = grip_icp_params_check(ctx, &p);
    if (!s && p.metric == GRIP_ICP_POINT_TO_PLANE)
        s = view_normals_open(st, scene_view, scene, GRIP_MODEL_NORMALS_VIEWPOINT, "verify: scene.cloud", &sn);
    /* On the GPU the device works first: the scene's tree (on the descriptor's kept surface its kernels are only
     * queued), then the models' first ICP iterations, while the host fits the camera and the support plane. */
    const double vp[3] = {scene->viewpoint[0], scene->viewpoint[1], scene->viewpoint[2]};
    if (!s && st->use_cuda && h->count > 0) /* no hypothesis: no scene tree to build */
        s = grip_icp_cuda_scene_build(ctx, scene->xyz, grip_view_device_xyz(ctx, scene_view, scene->n),
                                      grip_features_kept_surface(ctx, scene_view->features, scene->n), scene->n,
                                      sn.rows, sn.stride, vp, &dev);
    if (!s)
        s = open_models_open(st, models, n_models, spreads, &om);
    if (!s)
        s = rank_and_cap(st, h, &kept, &n_kept);
    if (!s && !(res = calloc((size_t)n_kept + 1, sizeof *res)))
        s = grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory for %u results", n_kept);
    if (!s && st->use_cuda && n_kept > 0)
        s = refine_cuda_start(st, &p, &om, h, kept, n_kept, dev,
                              support_margin > 0 ? ICP_QUEUED_FOR_CAMERA_AND_PLANE : ICP_QUEUED_FOR_CAMERA, &run);
    grip_pinhole cam;
    grip_pinhole_estimate(scene->xyz, scene->width, scene->height, grip_ctx_threads(ctx), &cam);
    if (!s && support_margin > 0)
        s = grip_support_plane_fit(ctx, scene->xyz, scene->n, support_margin / 2, scene->viewpoint, &support);
    if (!s && n_kept > 0)
        s = st->use_cuda ? grip_icp_cuda_refine_finish(ctx, run, res)
                         : refine_cpu(st, &p, &om, scene, &sn, h, kept, n_kept, res);
    else
        grip_icp_cuda_run_free(run);
    for (uint32_t i = 0; i < h->count && !s; i++) { /* left out by the cap */
        grip_verdict *vd = &v->items[i];
        const grip_hypothesis *hy = grip_verify_hypothesis_at(h, i);
        vd->struct_size = sizeof *vd;
        vd->hypothesis = i;
        for (int k = 0; k < 16; k++)
            vd->pose[k] = hy->pose[k];
        vd->rmse = INFINITY;
        vd->violation = NAN;
        vd->reason = GRIP_VERDICT_CAP;
    }
    if (!s && !(violation = malloc(((size_t)n_kept + 1) * sizeof *violation)))
        s = grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory for %u free-space checks", n_kept);
    if (!s)
        s = free_space_of_kept(st, &cam, scene, dev, &om, h, kept, n_kept, res, violation);
    grip_icp_cuda_scene_free(dev);
    if (!s) /* each verdict reads its model's every point for the support check: in parallel */
#pragma omp parallel for schedule(dynamic, 1) num_threads(grip_ctx_threads(ctx))
        for (uint32_t k = 0; k < n_kept; k++) {
            const grip_hypothesis *hy = grip_verify_hypothesis_at(h, kept[k]);
            verdict_of(st, &p, violation[k], &support, &om.cloud[hy->model_id], &spreads[hy->model_id], hy, kept[k],
                       res[k], &v->items[kept[k]]);
        }
    if (!s)
        s = suppress_duplicates(st, n_models, h, v, spreads, &om);
    free(res);
    free(kept);
    free(violation);
    view_normals_close(&sn);
    open_models_close(&om);
    return s;
}

/* One verify() call whose arguments were checked, on the stage's backend. */
static grip_status icp_verify_once(grip_stage *st, const grip_view *models, uint32_t n_models, const grip_view *scene,
                                   const grip_hypotheses *h, grip_verdicts **out)
{
    grip_cloud_input sc;
    grip_status s = grip_cloud_input_open(st->ctx, scene->cloud, "verify: scene.cloud", &sc);
    grip_verdicts *v = NULL;
    grip_model_spread *spreads = calloc((size_t)n_models + 1, sizeof *spreads);
    if (!s && !spreads)
        s = grip_fail(st->ctx, GRIP_ENOMEM, "verify: out of memory");
    if (!s)
        s = grip_verdicts_new(st->ctx, h->count, &v);
    if (!s)
        s = refine_all(st, models, n_models, scene, &sc, h, v, spreads);
    grip_cloud_input_close(&sc);
    free(spreads);
    if (s) {
        if (v)
            v->release(v);
        return s;
    }
    *out = v;
    return GRIP_OK;
}

static grip_status icp_verify(grip_stage *st, const grip_view *models, uint32_t n_models, const grip_view *scene,
                              const grip_hypotheses *h, grip_verdicts **out)
{
    grip_status s = grip_stage_check_call(&grip_verify_icp, st, out, GRIP_MEM_HOST);
    if (!s)
        s = grip_verify_check_inputs(st->ctx, models, n_models, scene, h);
    if (!s)
        GRIP_STAGE_CALL(st, s, icp_verify_once(st, models, n_models, scene, h, out));
    return s;
}

static grip_status icp_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_verify_icp = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_VERIFY,
    .name = "icp",
    .summary = "ICP refinement (point-to-point or point-to-plane, all hypotheses in one GPU batch), visible-side "
               "fitness and RMSE acceptance, duplicate suppression",
#ifdef GRIP_HAVE_CUDA
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
#else
    .backends = GRIP_BACKEND_CPU,
#endif
    .n_params = sizeof icp_params / sizeof icp_params[0],
    .params = icp_params,
    .create = icp_create,
    .destroy = grip_stage_destroy,
    .verify = icp_verify,
};

static grip_status icp_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_verify_icp, ctx, kv, n_kv, out);
}
