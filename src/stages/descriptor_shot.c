/* descriptor_shot.c -- the `shot` descriptor stage: SHOT local frames and SHOT-352 descriptors with PCL 1.13's
 * semantics (CPU twin; see src/descriptor/), after the descriptor front's normals and keypoints
 * (stages/descriptor_front.h). */
#include "stages/descriptor_front.h"
#include "stages/registry.h"
#include "core/cuda_bridge.h"
#include "descriptor/shot.h"
#include "descriptor/shot_cuda.h"

#define SHOT_DIM 352

static const grip_param_info shot_params[] = {
    GRIP_DESCRIPTOR_FRONT_PARAMS,
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "radius", "0.02", 1e-6, 100, NULL, "SHOT support radius (cloud units)", GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "lrf_radius", "0", 0, 100, NULL,
     "radius of the SHOT local reference frame (0: the support radius, as PCL)", GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "max_neighbors", "0", 0, 1000000, NULL,
     "cap on the support size of frame and descriptor, nearest first (approximate G-SHOT); 0: no cap (exact SHOT)"},
};

/* The CUDA branch: frames, then descriptors, of the front's keypoints on the device, over their radius lists
 * (capped at max_neighbors as on the host: the approximate G-SHOT); the frames get lists of their own only when
 * lrf_radius differs from the support radius. The results stay in device memory. */
static grip_status shot_body_cuda(grip_stage *st, grip_descriptor_front *front)
{
    grip_ctx *ctx = st->ctx;
    grip_features *f = front->features;
    uint32_t k = (uint32_t)front->n_keypoints, cap = (uint32_t)grip_stage_integer(st, "max_neighbors");
    float radius = (float)grip_stage_number(st, "radius"), lrf_radius = (float)grip_stage_number(st, "lrf_radius");
    if (!(lrf_radius > 0))
        lrf_radius = radius;
    grip_neighborhoods_cuda support = {0}, lrf_support = {0};
    const grip_neighborhoods_cuda *frame_support = lrf_radius == radius ? &support : &lrf_support;
    grip_status s = grip_result_array_alloc(ctx, &f->frames, GRIP_MEM_CUDA, GRIP_F32, k, 9);
    if (!s)
        s = grip_result_array_alloc(ctx, &f->descriptors, GRIP_MEM_CUDA, GRIP_F32, k, SHOT_DIM);
    if (!s && k > 0)
        s = grip_neighborhoods_cuda_radius(ctx, front->surface, front->keypoint_xyz_dev, k, radius, cap, &support);
    if (!s && k > 0 && frame_support == &lrf_support)
        s = grip_neighborhoods_cuda_radius(ctx, front->surface, front->keypoint_xyz_dev, k, lrf_radius, cap,
                                           &lrf_support);
    if (!s)
        s = grip_shot_lrf_cuda(ctx, frame_support, front->keypoint_xyz_dev, k, lrf_radius, f->frames.data);
    if (!s)
        s = grip_shot_describe_cuda(ctx, &support, front->keypoint_xyz_dev, f->frames.data, k, radius,
                                    f->descriptors.data);
    if (!s) /* the kernels are queued: describe() returns with its results ready, and reports their faults */
        s = grip_cuda_sync(ctx);
    grip_neighborhoods_cuda_free(&support);
    grip_neighborhoods_cuda_free(&lrf_support);
    return s;
}

/* Frames, then descriptors, of the front's keypoints on the host. */
static grip_status shot_body(grip_stage *st, grip_descriptor_front *front)
{
    if (front->on_device)
        return shot_body_cuda(st, front);
    grip_ctx *ctx = st->ctx;
    grip_features *f = front->features;
    size_t k = front->n_keypoints;
    float radius = (float)grip_stage_number(st, "radius");
    float lrf_radius = (float)grip_stage_number(st, "lrf_radius");
    grip_status s = grip_array_alloc_host(ctx, &f->frames, GRIP_F32, k, 9);
    if (!s)
        s = grip_array_alloc_host(ctx, &f->descriptors, GRIP_F32, k, SHOT_DIM);
    uint32_t cap = (uint32_t)grip_stage_integer(st, "max_neighbors");
    if (!s)
        s = grip_shot_lrf(ctx, front->support_xyz, front->n_support, front->tree, front->keypoint_xyz, k,
                          lrf_radius > 0 ? lrf_radius : radius, cap, f->frames.data);
    if (!s)
        s = grip_shot_describe(ctx, front->support_xyz, front->support_normals, front->n_support, front->tree,
                               front->keypoint_xyz, k, f->frames.data, radius, cap, f->descriptors.data);
    return s;
}

static grip_status shot_describe(grip_stage *st, const grip_cloud *cloud, uint32_t role, const grip_array *keypoints,
                                 uint32_t out_memory, grip_features **out)
{
    grip_status s = grip_stage_check_call(&grip_descriptor_shot, st, out, out_memory);
    return s ? s : grip_descriptor_front_describe(st, cloud, role, keypoints, out_memory, SHOT_DIM, shot_body, out);
}

static grip_status shot_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_descriptor_shot = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_DESCRIPTOR,
    .name = "shot",
    .summary = "SHOT-352 on uniform-sampling keypoints, PCL 1.13 semantics (normals, SHOT frame, interpolation)",
#ifdef GRIP_HAVE_CUDA
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
#else
    .backends = GRIP_BACKEND_CPU,
#endif
    .n_params = sizeof shot_params / sizeof shot_params[0],
    .params = shot_params,
    .create = shot_create,
    .destroy = grip_stage_destroy,
    .describe = shot_describe,
    .describe_many = grip_describe_many,
};

static grip_status shot_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_descriptor_shot, ctx, kv, n_kv, out);
}
