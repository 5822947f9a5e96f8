/* descriptor_shot.c -- the `shot` descriptor stage: normals, uniform-sampling keypoints, SHOT local frames and
 * SHOT-352 descriptors, with PCL 1.13's semantics (CPU twin; see src/descriptor/). */
#include "stages/stage.h"
#include "stages/cloud_input.h"
#include "descriptor/normals.h"
#include "descriptor/shot.h"
#include "descriptor/shot_lrf.h"
#include "descriptor/uniform_sampling.h"
#include "spatial/kdtree3d.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SHOT_DIM 352

static const grip_param_info shot_params[] = {
    GRIP_PARAM_DEVICE,
    {sizeof(grip_param_info), GRIP_PARAM_INT, "normals_k", "10", 0, 1000, NULL,
     "neighbours for normal estimation (0: use normals_radius instead)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "normals_radius", "0", 0, 100, NULL,
     "radius for normal estimation in cloud units, used when normals_k is 0"},
    {sizeof(grip_param_info), GRIP_PARAM_ENUM, "keypoints", "uniform", 0, 0, "uniform|all",
     "keypoint selection when the host gives none: uniform sampling, or every finite point"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "model_leaf", "0.01", 1e-6, 100, NULL,
     "uniform-sampling leaf size on model clouds (cloud units)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "scene_leaf", "0.03", 1e-6, 100, NULL,
     "uniform-sampling leaf size on scene clouds (cloud units)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "radius", "0.02", 1e-6, 100, NULL, "SHOT support radius (cloud units)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "lrf_radius", "0", 0, 100, NULL,
     "radius of the SHOT local reference frame (0: the support radius, as PCL)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "max_neighbors", "0", 0, 1000000, NULL,
     "cap on the support size, nearest first (approximate G-SHOT); 0: no cap (exact SHOT)"},
};

/* Keypoints: the host's indices when given, else uniform sampling or every finite point. */
static grip_status select_keypoints(grip_stage *st, const grip_cloud_input *in, uint32_t role, const grip_array *given,
                                    uint32_t **idx, size_t *count)
{
    grip_ctx *ctx = st->ctx;
    if (given && given->rows > 0)
        return grip_cloud_input_keypoints(ctx, in, given, idx, count);
    if (grip_stage_choice(st, "keypoints") == 1)
        return grip_cloud_input_finite_indices(ctx, in, idx, count);
    float leaf = (float)grip_stage_number(st, role == GRIP_ROLE_MODEL ? "model_leaf" : "scene_leaf");
    return grip_uniform_sampling(ctx, in->xyz, in->n, leaf, idx, count);
}

static grip_status compute_normals(grip_stage *st, const grip_cloud_input *in, const grip_kdtree3d *tree, float *out)
{
    if (in->normals) { /* the host's normals win; curvature is unknown */
        for (size_t i = 0; i < in->n; i++) {
            memcpy(out + 4 * i, in->normals + in->normal_stride * i, 3 * sizeof(float));
            out[4 * i + 3] = in->normal_stride == 4 ? in->normals[4 * i + 3] : NAN;
        }
        return GRIP_OK;
    }
    uint32_t k = (uint32_t)grip_stage_integer(st, "normals_k");
    float radius = (float)grip_stage_number(st, "normals_radius");
    if (k == 0 && radius <= 0)
        return grip_fail(st->ctx, GRIP_ECONFIG, "descriptor.normals_k: 0 needs descriptor.normals_radius > 0");
    /* flipped toward the cloud's sensor origin, as PCL's NormalEstimation does by default */
    return grip_normals_compute(st->ctx, in->xyz, in->n, tree, k, k ? 0.0f : radius, in->viewpoint, out);
}

static grip_status shot_run(grip_stage *st, const grip_cloud_input *in, uint32_t role, const grip_array *given,
                            grip_features *f)
{
    grip_ctx *ctx = st->ctx;
    grip_kdtree3d *tree = NULL;
    uint32_t *kp = NULL;
    size_t nkp = 0;
    grip_status s = grip_kdtree3d_build(ctx, in->xyz, in->n, &tree);
    if (!s)
        s = grip_array_alloc_host(ctx, &f->normals, GRIP_F32, in->n, 4);
    if (!s)
        s = compute_normals(st, in, tree, f->normals.data);
    if (!s)
        s = select_keypoints(st, in, role, given, &kp, &nkp);
    if (!s)
        s = grip_features_set_keypoints(ctx, f, in, kp, nkp);
    if (!s)
        s = grip_array_alloc_host(ctx, &f->frames, GRIP_F32, nkp, 9);
    if (!s)
        s = grip_array_alloc_host(ctx, &f->descriptors, GRIP_F32, nkp, SHOT_DIM);
    float radius = (float)grip_stage_number(st, "radius");
    float lrf_radius = (float)grip_stage_number(st, "lrf_radius");
    if (!s)
        s = grip_shot_lrf(ctx, in->xyz, in->n, tree, f->keypoint_xyz.data, nkp, lrf_radius > 0 ? lrf_radius : radius,
                          f->frames.data);
    if (!s)
        s = grip_shot_describe(ctx, in->xyz, f->normals.data, in->n, tree, f->keypoint_xyz.data, nkp, f->frames.data,
                               radius, (uint32_t)grip_stage_integer(st, "max_neighbors"), f->descriptors.data);
    free(kp);
    grip_kdtree3d_free(tree);
    return s;
}

static grip_status shot_describe(grip_stage *st, const grip_cloud *cloud, uint32_t role, const grip_array *keypoints,
                                 uint32_t out_memory, grip_features **out)
{
    grip_status s = grip_stage_check_run(st, out, out_memory);
    if (s)
        return s;
    if (role != GRIP_ROLE_MODEL && role != GRIP_ROLE_SCENE)
        return grip_fail(st->ctx, GRIP_EINVAL, "descriptor: role %u is neither model nor scene", role);
    grip_cloud_input in;
    s = grip_cloud_input_open(st->ctx, cloud, "descriptor", &in);
    if (s)
        return s;
    grip_features *f = NULL;
    s = grip_features_new(st->ctx, SHOT_DIM, &f);
    if (!s)
        s = shot_run(st, &in, role, keypoints, f);
    if (!s)
        s = grip_features_place(st->ctx, f, out_memory);
    grip_cloud_input_close(&in);
    if (s) {
        if (f)
            f->release(f);
        return s;
    }
    *out = f;
    return GRIP_OK;
}

static grip_status shot_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_descriptor_shot = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_DESCRIPTOR,
    .name = "shot",
    .summary = "SHOT-352 on uniform-sampling keypoints, PCL 1.13 semantics (normals, SHOT frame, interpolation)",
    .backends = GRIP_BACKEND_CPU,
    .n_params = sizeof shot_params / sizeof shot_params[0],
    .params = shot_params,
    .create = shot_create,
    .destroy = grip_stage_destroy,
    .describe = shot_describe,
};

static grip_status shot_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_descriptor_shot, ctx, kv, n_kv, out);
}
