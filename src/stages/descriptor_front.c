/* descriptor_front.c -- see descriptor_front.h. */
#include "stages/descriptor_front.h"
#include "stages/normals_orientation.h"
#include "core/cuda_bridge.h"
#include "descriptor/uniform_sampling.h"
#include "descriptor/uniform_sampling_cuda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- parameters ------------------------------------------------------------------------------------------ */

/* How this cloud's computed normals are oriented: a model's follow model_normals ("viewpoint|outward|propagate"),
 * a scene's keep its viewpoint. */
static uint32_t front_orientation(const grip_descriptor_front *front)
{
    return front->role == GRIP_ROLE_MODEL ? (uint32_t)grip_stage_choice(front->stage, "model_normals")
                                          : GRIP_MODEL_NORMALS_VIEWPOINT;
}

/* The normals plan (stages/normals_orientation.h); GRIP_ECONFIG when neither k nor radius is usable (only asked
 * when normals are due). */
static grip_status front_normals_plan(const grip_descriptor_front *front, grip_normals_plan *p)
{
    const uint32_t k = (uint32_t)grip_stage_integer(front->stage, "normals_k");
    const float radius = k ? 0.0f : (float)grip_stage_number(front->stage, "normals_radius");
    if (k == 0 && radius <= 0)
        return grip_fail(front->ctx, GRIP_ECONFIG, "descriptor.normals_k: 0 needs descriptor.normals_radius > 0");
    grip_normals_plan_init(p, &front->in, k, radius, front_orientation(front),
                           (uint32_t)grip_stage_integer(front->stage, "propagate_k"));
    return GRIP_OK;
}

static float front_leaf(const grip_descriptor_front *front)
{
    return (float)grip_stage_number(front->stage, front->role == GRIP_ROLE_MODEL ? "model_leaf" : "scene_leaf");
}

static int front_wants_all_points(const grip_descriptor_front *front)
{
    return grip_stage_choice(front->stage, "keypoints") == 1; /* "uniform|all" */
}

static int normals_from_cloud(uint32_t source)
{
    return source == GRIP_NORMALS_CLOUD || source == GRIP_NORMALS_CLOUD_RESCALED;
}

static int keypoints_given(const grip_array *given)
{
    return given && given->rows > 0;
}

/* ---- host side --------------------------------------------------------------------------------------------- */

/* The cloud's own normals at unit length (as given: their orientation is the file's), or computed as PCL does and
 * oriented as front_normals_plan says, as the `normals` key chooses; n x 4 into out. */
static grip_status host_normals(grip_descriptor_front *front, float *out)
{
    uint32_t *source = &front->features->normals_source;
    grip_status s = grip_normals_choose(front->stage, &front->in, "descriptor.normals", out, source);
    if (s || normals_from_cloud(*source))
        return s;
    grip_normals_plan p;
    s = front_normals_plan(front, &p);
    if (!s)
        s = grip_normals_plan_host(front->ctx, &p, &front->in, front->tree, out);
    return s;
}

/* The keypoint indices on the host: the host's, every finite point, or uniform sampling (malloc'd). */
static grip_status host_keypoint_indices(grip_descriptor_front *front, const grip_array *given, uint32_t **idx,
                                         size_t *count)
{
    if (keypoints_given(given))
        return grip_cloud_input_keypoints(front->ctx, &front->in, given, idx, count);
    if (front_wants_all_points(front))
        return grip_cloud_input_finite_indices(front->ctx, &front->in, idx, count);
    return grip_uniform_sampling(front->ctx, front->in.xyz, front->in.n, front_leaf(front), idx, count);
}

static grip_status open_host_side(grip_descriptor_front *front, const grip_array *given)
{
    grip_ctx *ctx = front->ctx;
    grip_features *f = front->features;
    uint32_t *idx = NULL;
    size_t count = 0;
    grip_status s = grip_kdtree3d_build(ctx, front->in.xyz, front->in.n, &front->tree);
    if (!s)
        s = grip_array_alloc_host(ctx, &f->normals, GRIP_F32, front->in.n, 4);
    if (!s)
        s = host_normals(front, f->normals.data);
    if (!s)
        s = host_keypoint_indices(front, given, &idx, &count);
    if (!s)
        s = grip_features_set_keypoints(ctx, f, &front->in, idx, count);
    free(idx);
    if (s)
        return s;
    front->n_keypoints = count;
    front->normals = f->normals.data;
    front->keypoints = f->keypoints.data;
    front->keypoint_xyz = f->keypoint_xyz.data;
    return GRIP_OK;
}

/* ---- device side ------------------------------------------------------------------------------------------- */

/* Computed normals on the surface, oriented as front_normals_plan says (grip_normals_plan_surface; scratch: n x 4
 * host floats for a k the GPU does not keep). */
static grip_status device_computed_normals(grip_descriptor_front *front, float *scratch)
{
    grip_normals_plan p;
    grip_status s = front_normals_plan(front, &p);
    if (!s)
        s = grip_normals_plan_surface(front->ctx, &p, &front->in, front->surface, scratch);
    return s;
}

/* The surface's normals as the `normals` key chooses: the cloud's own at unit length (made on the host, as for the
 * CPU twin, and uploaded; oriented as given), or computed. */
static grip_status device_surface_normals(grip_descriptor_front *front)
{
    float *host = malloc(front->in.n * 4 * sizeof *host);
    if (!host)
        return grip_fail(front->ctx, GRIP_ENOMEM, "descriptor: out of memory for %zu normals", front->in.n);
    uint32_t *source = &front->features->normals_source;
    grip_status s = grip_normals_choose(front->stage, &front->in, "descriptor.normals", host, source);
    if (!s)
        s = normals_from_cloud(*source) ? grip_surface_cuda_set_normals(front->ctx, front->surface, host, 4)
                                        : device_computed_normals(front, host);
    free(host);
    return s;
}

/* The features' normals: a device copy of the surface's (the surface goes at close, the features stay). */
static grip_status device_feature_normals(grip_descriptor_front *front)
{
    grip_features *f = front->features;
    grip_surface_cuda_view v = grip_surface_cuda_get_view(front->surface);
    grip_status s = grip_result_array_alloc(front->ctx, &f->normals, GRIP_MEM_CUDA, GRIP_F32, front->in.n, 4);
    if (!s)
        s = grip_cuda_copy_on_device(front->ctx, f->normals.data, v.normals, front->in.n * 4 * sizeof(float));
    return s;
}

/* The keypoint indices as the features' device array: the host's or every finite point (checked on the host,
 * uploaded), or uniform sampling on the device. */
static grip_status device_keypoint_indices(grip_descriptor_front *front, const grip_array *given)
{
    grip_ctx *ctx = front->ctx;
    grip_array *kp = &front->features->keypoints;
    void *dev = NULL;
    size_t count = 0;
    grip_status s;
    if (keypoints_given(given) || front_wants_all_points(front)) {
        uint32_t *idx = NULL;
        int device = -1;
        s = host_keypoint_indices(front, given, &idx, &count);
        if (!s)
            s = grip_cuda_upload(ctx, idx, count * sizeof *idx, &dev, &device);
        free(idx);
    } else {
        uint32_t *sampled = NULL;
        s = grip_uniform_sampling_cuda(ctx, front->surface, front_leaf(front), &sampled, &count);
        dev = sampled;
    }
    if (s)
        return s;
    kp->data = dev;
    kp->memory = GRIP_MEM_CUDA;
    kp->device = ctx->device;
    kp->rows = count;
    kp->cols = 1;
    front->n_keypoints = count;
    return GRIP_OK;
}

/* keypoint_xyz (features, k x 3) and the keypoints' normals (k x 4), gathered on the device. */
static grip_status device_keypoint_rows(grip_descriptor_front *front)
{
    grip_ctx *ctx = front->ctx;
    grip_features *f = front->features;
    size_t k = front->n_keypoints;
    grip_surface_cuda_view v = grip_surface_cuda_get_view(front->surface);
    void *nrm = NULL;
    grip_status s = grip_result_array_alloc(ctx, &f->keypoint_xyz, GRIP_MEM_CUDA, GRIP_F32, k, 3);
    if (!s)
        s = grip_surface_cuda_gather(ctx, front->surface, f->keypoints.data, k, f->keypoint_xyz.data);
    if (!s)
        s = grip_cuda_alloc(ctx, k * 4 * sizeof(float), &nrm);
    front->keypoint_normals_dev = nrm; /* owned by the front from here on, freed at close */
    if (!s)
        s = grip_cuda_gather_rows4(ctx, v.normals, f->keypoints.data, k, nrm);
    return s;
}

static grip_status open_device_side(grip_descriptor_front *front, const grip_array *given)
{
    grip_status s = grip_surface_cuda_create(front->ctx, front->in.xyz, front->in.n, &front->surface);
    if (!s)
        s = device_surface_normals(front);
    if (!s)
        s = device_feature_normals(front);
    if (!s)
        s = device_keypoint_indices(front, given);
    if (!s)
        s = device_keypoint_rows(front);
    if (s)
        return s;
    front->keypoints_dev = front->features->keypoints.data;
    front->keypoint_xyz_dev = front->features->keypoint_xyz.data;
    return GRIP_OK;
}

/* ---- the front --------------------------------------------------------------------------------------------- */

grip_status grip_descriptor_front_open(grip_stage *st, const grip_cloud *cloud, uint32_t role,
                                       const grip_array *keypoints, uint32_t descriptor_dim,
                                       grip_descriptor_front *front)
{
    memset(front, 0, sizeof *front);
    if (!st)
        return GRIP_EINVAL;
    front->stage = st;
    front->ctx = st->ctx;
    front->role = role;
    front->on_device = st->use_cuda;
    if (role != GRIP_ROLE_MODEL && role != GRIP_ROLE_SCENE)
        return grip_fail(st->ctx, GRIP_EINVAL, "descriptor: role %u is neither model nor scene", role);
    grip_status s = grip_optional_array_check(st->ctx, keypoints, GRIP_U32, 1, "descriptor: keypoints");
    if (!s)
        s = grip_cloud_input_open(st->ctx, cloud, "descriptor: cloud", &front->in);
    if (!s)
        s = grip_features_new(st->ctx, descriptor_dim, &front->features);
    if (!s)
        s = front->on_device ? open_device_side(front, keypoints) : open_host_side(front, keypoints);
    return s;
}

grip_status grip_descriptor_front_finish(grip_descriptor_front *front, uint32_t out_memory, grip_features **out)
{
    *out = NULL;
    grip_status s = grip_features_place(front->ctx, front->features, out_memory);
    if (s)
        return s;
    *out = front->features;
    front->features = NULL;
    return GRIP_OK;
}

void grip_descriptor_front_close(grip_descriptor_front *front)
{
    if (front->features)
        front->features->release(front->features);
    grip_kdtree3d_free(front->tree);
    if (front->surface)
        grip_surface_cuda_free(front->surface);
    grip_cuda_free((void *)front->keypoint_normals_dev);
    grip_cloud_input_close(&front->in);
    memset(front, 0, sizeof *front);
}

/* One describe() on the side st->use_cuda says. */
static grip_status describe_once(grip_stage *st, const grip_cloud *cloud, uint32_t role, const grip_array *keypoints,
                                 uint32_t out_memory, uint32_t descriptor_dim, grip_descriptor_body body,
                                 grip_features **out)
{
    grip_status s = grip_stage_check_run(st, out, out_memory);
    if (s)
        return s;
    grip_descriptor_front front;
    s = grip_descriptor_front_open(st, cloud, role, keypoints, descriptor_dim, &front);
    if (!s)
        s = body(st, &front);
    if (!s)
        s = grip_descriptor_front_finish(&front, out_memory, out);
    grip_descriptor_front_close(&front);
    return s;
}

grip_status grip_descriptor_front_describe(grip_stage *st, const grip_cloud *cloud, uint32_t role,
                                           const grip_array *keypoints, uint32_t out_memory, uint32_t descriptor_dim,
                                           grip_descriptor_body body, grip_features **out)
{
    grip_status s;
    GRIP_STAGE_CALL(st, s, describe_once(st, cloud, role, keypoints, out_memory, descriptor_dim, body, out));
    return s;
}
