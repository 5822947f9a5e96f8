/* descriptor_fpfh.c -- the `fpfh` descriptor stage: FPFH-33 with PCL 1.13's CPU semantics (src/descriptor/fpfh.h)
 * after the descriptor front's normals and keypoints (stages/descriptor_front.h), on the CPU twin or on the GPU
 * (src/descriptor/fpfh_cuda.h), whose descriptors stay in device memory. FPFH has no local frame. */
#include "stages/descriptor_front.h"
#include "stages/registry.h"
#include "descriptor/fpfh.h"
#include "descriptor/fpfh_cuda.h"

static const grip_param_info fpfh_params[] = {
    GRIP_DESCRIPTOR_FRONT_PARAMS,
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "radius", "0.015", 1e-6, 100, NULL,
     "FPFH feature radius (cloud units): the keypoint's neighbours and each neighbour's own SPFH support", GRIP_PARAM_FLAG_LENGTH},
};

static grip_status fpfh_body(grip_stage *st, grip_descriptor_front *front)
{
    grip_ctx *ctx = st->ctx;
    grip_array *d = &front->features->descriptors;
    size_t k = front->n_keypoints;
    float radius = (float)grip_stage_number(st, "radius");
    if (front->on_device) {
        grip_status s = grip_result_array_alloc(ctx, d, GRIP_MEM_CUDA, GRIP_F32, k, GRIP_FPFH_DIM);
        return s ? s : grip_fpfh_cuda(ctx, front->surface, front->keypoint_xyz_dev, (uint32_t)k, radius, d->data);
    }
    grip_status s = grip_array_alloc_host(ctx, d, GRIP_F32, k, GRIP_FPFH_DIM);
    return s ? s
             : grip_fpfh_describe(ctx, front->support_xyz, front->support_normals, front->n_support, front->tree,
                                  front->keypoint_xyz, k, radius, d->data);
}

static grip_status fpfh_describe(grip_stage *st, const grip_cloud *cloud, uint32_t role, const grip_array *keypoints,
                                 uint32_t out_memory, grip_features **out)
{
    grip_status s = grip_stage_check_call(&grip_descriptor_fpfh, st, out, out_memory);
    return s ? s
             : grip_descriptor_front_describe(st, cloud, role, keypoints, out_memory, GRIP_FPFH_DIM, fpfh_body, out);
}

static grip_status fpfh_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_descriptor_fpfh = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_DESCRIPTOR,
    .name = "fpfh",
    .summary = "FPFH-33 on uniform-sampling keypoints, PCL 1.13 semantics (SPFH of the neighbours, 1/d^2 weights)",
#ifdef GRIP_HAVE_CUDA
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
#else
    .backends = GRIP_BACKEND_CPU,
#endif
    .n_params = sizeof fpfh_params / sizeof fpfh_params[0],
    .params = fpfh_params,
    .create = fpfh_create,
    .destroy = grip_stage_destroy,
    .describe = fpfh_describe,
    .describe_many = grip_describe_many,
};

static grip_status fpfh_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_descriptor_fpfh, ctx, kv, n_kv, out);
}
