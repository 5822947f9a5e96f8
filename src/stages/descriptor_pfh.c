/* descriptor_pfh.c -- the `pfh` descriptor stage: PFH-125 with PCL 1.13's CPU semantics (src/descriptor/pfh.h)
 * after the descriptor front's normals and keypoints (stages/descriptor_front.h), on the CPU twin or on the GPU
 * (src/descriptor/pfh_cuda.h), whose descriptors stay in device memory. PFH has no local frame; its cost grows
 * with the square of the neighbourhood. */
#include "stages/descriptor_front.h"
#include "stages/registry.h"
#include "descriptor/pfh.h"
#include "descriptor/pfh_cuda.h"

static const grip_param_info pfh_params[] = {
    GRIP_DESCRIPTOR_FRONT_PARAMS,
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "radius", "0.015", 1e-6, 100, NULL,
     "PFH feature radius (cloud units): every pair of the keypoint's neighbours votes", GRIP_PARAM_FLAG_LENGTH},
};

static grip_status pfh_body(grip_stage *st, grip_descriptor_front *front)
{
    grip_ctx *ctx = st->ctx;
    grip_array *d = &front->features->descriptors;
    size_t k = front->n_keypoints;
    float radius = (float)grip_stage_number(st, "radius");
    if (front->on_device) {
        grip_status s = grip_result_array_alloc(ctx, d, GRIP_MEM_CUDA, GRIP_F32, k, GRIP_PFH_DIM);
        return s ? s
                 : grip_pfh_cuda_surface(ctx, front->surface, front->keypoint_xyz_dev, (uint32_t)k, radius, d->data);
    }
    grip_status s = grip_array_alloc_host(ctx, d, GRIP_F32, k, GRIP_PFH_DIM);
    return s ? s
             : grip_pfh_describe(ctx, front->support_xyz, front->support_normals, front->n_support, front->tree,
                                 front->keypoint_xyz, k, radius, d->data);
}

static grip_status pfh_describe(grip_stage *st, const grip_cloud *cloud, uint32_t role, const grip_array *keypoints,
                                uint32_t out_memory, grip_features **out)
{
    grip_status s = grip_stage_check_call(&grip_descriptor_pfh, st, out, out_memory);
    return s ? s : grip_descriptor_front_describe(st, cloud, role, keypoints, out_memory, GRIP_PFH_DIM, pfh_body, out);
}

static grip_status pfh_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_descriptor_pfh = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_DESCRIPTOR,
    .name = "pfh",
    .summary = "PFH-125 on uniform-sampling keypoints, PCL 1.13 semantics (all pairs of the neighbourhood)",
#ifdef GRIP_HAVE_CUDA
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
#else
    .backends = GRIP_BACKEND_CPU,
#endif
    .n_params = sizeof pfh_params / sizeof pfh_params[0],
    .params = pfh_params,
    .create = pfh_create,
    .destroy = grip_stage_destroy,
    .describe = pfh_describe,
    .describe_many = grip_describe_many,
};

static grip_status pfh_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_descriptor_pfh, ctx, kv, n_kv, out);
}
