/* verify_icp.c -- the `icp` verify stage: each hypothesis is refined by point-to-point ICP against the scene and
 * accepted when enough of the model lands on scene points (fitness) closely enough (RMSE); then, per model,
 * accepted hypotheses that put the model where a better one already does are rejected as duplicates. */
#include "stages/stage.h"
#include "stages/cloud_input.h"
#include "stages/registry.h"
#include "spatial/kdtree3d.h"
#include "verify/free_space.h"
#include "verify/icp.h"
#include "verify/pose_nms.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const grip_param_info icp_params[] = {
    GRIP_PARAM_DEVICE,
    {sizeof(grip_param_info), GRIP_PARAM_INT, "max_iterations", "50", 0, 10000, NULL, "ICP iterations at most"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "max_correspondence_distance", "0.01", 1e-9, 1e9, NULL,
     "ICP pairs farther apart than this are dropped (cloud units)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "transformation_epsilon", "1e-10", 0, 1, NULL,
     "ICP stops when the update's squared translation is below this (and its rotation is as small)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "euclidean_fitness_epsilon", "0", 0, 1, NULL,
     "ICP stops when the mean squared pair distance changes by less than this fraction (0: off)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "model_leaf", "0.002", 0, 100, NULL,
     "models are thinned to voxel centroids of this size for ICP and scoring (0: every point)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "inlier_distance", "0.005", 1e-9, 1e9, NULL,
     "a model point is explained when a scene point lies within this distance (cloud units)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "min_fitness", "0.3", 0, 1, NULL,
     "accept when at least this fraction of the model is explained ..."},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "max_rmse", "0.0025", 0, 1e9, NULL,
     "... and the explained points' RMSE is at most this (cloud units)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "max_drift", "0.02", 0, 1e9, NULL,
     "reject when ICP moved the model more than this RMS distance from the grouped pose (0: no limit)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "free_space_tolerance", "0.01", 1e-9, 1e9, NULL,
     "a model point floats in seen-through space when the scene surface lies farther than this behind it"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "max_violation", "0.1", 0, 1, NULL,
     "reject when more than this fraction of the model points the camera should see are seen through "
     "(organized scenes only)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "duplicate_distance", "0.01", 0, 1e9, NULL,
     "an accepted pose within this RMS point displacement of a better one of the same model is a duplicate"},
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
    return p;
}

static const grip_hypothesis *hypothesis_at(const grip_hypotheses *h, uint32_t i)
{
    return (const grip_hypothesis *)((const char *)h->items + (size_t)i * h->item_size);
}

/* The hypotheses as verify() reads them: the whole struct, and items when count > 0, a grip_hypothesis apart at
 * least, each a whole grip_hypothesis naming a model view, with a finite pose. */
static grip_status check_hypotheses(grip_ctx *ctx, const grip_hypotheses *h, uint32_t n_models)
{
    grip_status s = grip_struct_check(ctx, h, sizeof *h, "verify: hypotheses", "grip_hypotheses");
    if (s || h->count == 0)
        return s;
    if (!h->items)
        return grip_fail(ctx, GRIP_EINVAL, "verify: hypotheses: %u hypotheses but items is NULL", h->count);
    if (h->item_size < sizeof(grip_hypothesis))
        return grip_fail(ctx, GRIP_EINVAL, "verify: hypotheses: item_size %u is below the %zu bytes of a grip_hypothesis",
                         h->item_size, sizeof(grip_hypothesis));
    for (uint32_t i = 0; i < h->count && !s; i++) {
        const grip_hypothesis *hy = hypothesis_at(h, i);
        if (hy->struct_size < sizeof *hy)
            s = grip_fail(ctx, GRIP_EINVAL, "verify: hypotheses.items[%u].struct_size %u is below the %zu bytes of a "
                          "grip_hypothesis", i, hy->struct_size, sizeof *hy);
        else if (hy->model_id >= n_models)
            s = grip_fail(ctx, GRIP_EINVAL, "verify: hypotheses.items[%u] names model %u, but %u model views were given",
                          i, hy->model_id, n_models);
        for (int k = 0; k < 16 && !s; k++)
            if (!isfinite(hy->pose[k]))
                s = grip_fail(ctx, GRIP_EINVAL, "verify: hypotheses.items[%u].pose is not finite", i);
    }
    return s;
}

/* A view as verify() reads it: the whole grip_view with a cloud (checked in full when it is opened). */
static grip_status check_view(grip_ctx *ctx, const grip_view *view, const char *what)
{
    grip_status s = grip_struct_check(ctx, view, sizeof *view, what, "grip_view");
    if (!s && !view->cloud)
        s = grip_fail(ctx, GRIP_EINVAL, "%s.cloud is NULL", what);
    return s;
}

static grip_status check_inputs(grip_ctx *ctx, const grip_view *models, uint32_t n_models, const grip_view *scene,
                                const grip_hypotheses *h)
{
    grip_status s = check_hypotheses(ctx, h, n_models);
    if (!s)
        s = check_view(ctx, scene, "verify: scene");
    if (s)
        return s;
    if (n_models && !models) /* refine_all opens every model view, with or without hypotheses */
        return grip_fail(ctx, GRIP_EINVAL, "verify: %u model views, but models is NULL", n_models);
    for (uint32_t m = 0; m < n_models && !s; m++) {
        char what[64];
        snprintf(what, sizeof what, "verify: models[%u]", m);
        s = check_view(ctx, &models[m], what);
    }
    return s;
}

/* The fraction of the model the camera should see in place but sees through; NaN for an unorganized scene. */
static float free_space_violation(const grip_stage *st, const grip_pinhole *cam, const grip_cloud_input *scene,
                                  const grip_cloud_input *model, const double pose[16])
{
    size_t seen = 0, violations = 0;
    if (!cam->valid)
        return NAN;
    grip_free_space_count(cam, scene->xyz, scene->width, scene->height, model->xyz, model->n, pose,
                          grip_stage_number(st, "free_space_tolerance"), &seen, &violations);
    return seen + violations ? (float)((double)violations / (double)(seen + violations)) : 0.0f;
}

/* ICP on every hypothesis; verdict i gets hypothesis i. */
static grip_status refine_all(grip_stage *st, const grip_view *models, uint32_t n_models, const grip_cloud_input *scene,
                              const grip_hypotheses *h, grip_verdicts *v, grip_model_spread *spreads)
{
    grip_pinhole cam_fit;
    const grip_pinhole *cam = &cam_fit;
    grip_pinhole_estimate(scene->xyz, scene->width, scene->height, &cam_fit);
    grip_ctx *ctx = st->ctx;
    grip_icp_params p = icp_params_of(st);
    grip_kdtree3d *tree = NULL;
    grip_status s = grip_icp_params_check(ctx, &p);
    if (!s)
        s = grip_kdtree3d_build(ctx, scene->xyz, scene->n, &tree);
    for (uint32_t m = 0; m < n_models && !s; m++) {
        grip_cloud_input model;
        char what[64];
        snprintf(what, sizeof what, "verify: models[%u].cloud", m);
        s = grip_cloud_input_open(ctx, models[m].cloud, what, &model);
        if (!s)
            grip_model_spread_compute(model.xyz, model.n, &spreads[m]);
        for (uint32_t i = 0; i < h->count && !s; i++) {
            const grip_hypothesis *hy = hypothesis_at(h, i);
            if (hy->model_id != m)
                continue;
            double init[16];
            for (int k = 0; k < 16; k++)
                init[k] = hy->pose[k];
            grip_icp_result r;
            s = grip_icp_refine(ctx, &p, model.xyz, model.n, tree, scene->xyz, init, &r);
            if (s)
                break;
            double max_drift = grip_stage_number(st, "max_drift");
            if (max_drift > 0 && grip_pose_rms_displacement(&spreads[m], init, r.pose) > max_drift)
                r.accepted = 0; /* ICP wandered off: the grouped pose was not where the model is */
            grip_verdict *vd = &v->items[i];
            vd->violation = free_space_violation(st, cam, scene, &model, r.pose);
            if (vd->violation > grip_stage_number(st, "max_violation"))
                r.accepted = 0;
            vd->struct_size = sizeof *vd;
            vd->hypothesis = i;
            for (int k = 0; k < 16; k++)
                vd->pose[k] = (float)r.pose[k];
            vd->fitness = (float)r.fitness;
            vd->rmse = (float)r.rmse;
            vd->iterations = r.iterations;
            vd->accepted = r.accepted;
        }
        grip_cloud_input_close(&model);
    }
    grip_kdtree3d_free(tree);
    return s;
}

/* Rejects accepted hypotheses that duplicate a better one (higher fitness) of the same model. */
static grip_status suppress_duplicates(grip_stage *st, uint32_t n_models, const grip_hypotheses *h, grip_verdicts *v,
                                       const grip_model_spread *spreads)
{
    size_t n = h->count;
    uint32_t *model = malloc(n * sizeof *model + 1), *accepted = malloc(n * sizeof *accepted + 1);
    double *poses = malloc(n * 16 * sizeof *poses + 1), *scores = malloc(n * sizeof *scores + 1);
    grip_status s = model && accepted && poses && scores ? GRIP_OK : grip_fail(st->ctx, GRIP_ENOMEM, "verify: out of memory");
    for (size_t i = 0; i < n && !s; i++) {
        model[i] = hypothesis_at(h, (uint32_t)i)->model_id;
        accepted[i] = v->items[i].accepted;
        scores[i] = v->items[i].fitness;
        for (int k = 0; k < 16; k++)
            poses[16 * i + k] = v->items[i].pose[k];
    }
    if (!s)
        s = grip_suppress_duplicates(st->ctx, spreads, n_models, model, poses, scores, n,
                                     grip_stage_number(st, "duplicate_distance"), accepted, NULL);
    for (size_t i = 0; i < n && !s; i++)
        v->items[i].accepted = accepted[i];
    free(model);
    free(accepted);
    free(poses);
    free(scores);
    return s;
}

static grip_status icp_verify(grip_stage *st, const grip_view *models, uint32_t n_models, const grip_view *scene,
                              const grip_hypotheses *h, grip_verdicts **out)
{
    grip_status s = grip_stage_check_call(&grip_verify_icp, st, out, GRIP_MEM_HOST);
    if (!s)
        s = check_inputs(st->ctx, models, n_models, scene, h);
    if (s)
        return s;
    grip_cloud_input sc;
    s = grip_cloud_input_open(st->ctx, scene->cloud, "verify: scene.cloud", &sc);
    grip_verdicts *v = NULL;
    grip_model_spread *spreads = calloc((size_t)n_models + 1, sizeof *spreads);
    if (!s && !spreads)
        s = grip_fail(st->ctx, GRIP_ENOMEM, "verify: out of memory");
    if (!s)
        s = grip_verdicts_new(st->ctx, h->count, &v);
    if (!s)
        s = refine_all(st, models, n_models, &sc, h, v, spreads);
    if (!s)
        s = suppress_duplicates(st, n_models, h, v, spreads);
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

static grip_status icp_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_verify_icp = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_VERIFY,
    .name = "icp",
    .summary = "point-to-point ICP refinement (SVD by LAPACKE), fitness and RMSE acceptance, duplicate suppression",
    .backends = GRIP_BACKEND_CPU,
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
