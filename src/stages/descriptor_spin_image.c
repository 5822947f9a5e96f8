/* descriptor_spin_image.c -- the `spin_image` descriptor stage: spin images with PCL 1.13's SpinImageEstimation
 * semantics (src/descriptor/spin_image.h), on the CPU twin or on the GPU (spin_image_cuda.h), after the descriptor
 * front's normals and keypoints (stages/descriptor_front.h). The rotation axis of each keypoint is its normal. */
#include "stages/descriptor_front.h"
#include "stages/registry.h"
#include "descriptor/spin_image.h"
#include "descriptor/spin_image_cuda.h"

#include <stdlib.h>
#include <string.h>

static const grip_param_info spin_image_params[] = {
    GRIP_DESCRIPTOR_FRONT_PARAMS,
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "radius", "0.02", 1e-6, 100, NULL,
     "support radius (cloud units): the sphere searched; the image covers the cylinder inscribed in it", GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "width", "8", 1, GRIP_SPIN_IMAGE_MAX_WIDTH, NULL,
     "image width in bins: (width + 1) x (2 width + 1) values, 153 for 8 (PCL's default)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "support_angle_cos", "0", 0, 1, NULL,
     "cosine of the support angle: neighbours whose normal makes a larger angle with the keypoint's (counter-"
     "directed normals count as aligned) are left out; 0: off (PCL's default)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "min_neighbors", "0", 0, 1000000, NULL,
     "keypoints with fewer points within radius (themselves included) get a NaN row"},
    {sizeof(grip_param_info), GRIP_PARAM_BOOL, "radial", "false", 0, 0, NULL,
     "radial structure: distance and elevation angle instead of the cylinder's radius and height"},
    {sizeof(grip_param_info), GRIP_PARAM_BOOL, "angular", "false", 0, 0, NULL,
     "angular domain: each bin holds the mean angle between normals (radians) instead of a density"},
};

static grip_spin_image_params stage_params(const grip_stage *st)
{
    grip_spin_image_params p = {(float)grip_stage_number(st, "radius"), (uint32_t)grip_stage_integer(st, "width"),
                                (float)grip_stage_number(st, "support_angle_cos"),
                                (uint32_t)grip_stage_integer(st, "min_neighbors"), grip_stage_bool(st, "angular"),
                                grip_stage_bool(st, "radial")};
    return p;
}

/* The CPU twin, over the front's support cloud and keypoints; the keypoints' normals (their rows of the cloud's
 * normals) are gathered here. */
static grip_status host_body(grip_descriptor_front *front, const grip_spin_image_params *p)
{
    grip_ctx *ctx = front->ctx;
    size_t k = front->n_keypoints;
    float *key_normals = malloc((k ? k : 1) * 4 * sizeof *key_normals);
    if (!key_normals)
        return grip_fail(ctx, GRIP_ENOMEM, "spin_image: out of memory for %zu keypoint normals", k);
    for (size_t i = 0; i < k; ++i)
        memcpy(key_normals + 4 * i, front->normals + 4 * (size_t)front->keypoints[i], 4 * sizeof *key_normals);
    grip_features *f = front->features;
    grip_status s = grip_array_alloc_host(ctx, &f->descriptors, GRIP_F32, k, grip_spin_image_dim(p->width));
    if (!s)
        s = grip_spin_image_describe(ctx, front->support_xyz, front->support_normals, front->n_support, front->tree,
                                     front->keypoint_xyz, key_normals, k, p, f->descriptors.data);
    free(key_normals);
    return s;
}

/* The GPU: radius lists of the keypoints over the front's surface, then the kernel, batch by batch; a batch
 * whose lists do not fit on the device is halved. */
static grip_status device_body(grip_descriptor_front *front, const grip_spin_image_params *p)
{
    grip_ctx *ctx = front->ctx;
    const uint32_t k = (uint32_t)front->n_keypoints, dim = grip_spin_image_dim(p->width);
    grip_features *f = front->features;
    grip_status s = grip_result_array_alloc(ctx, &f->descriptors, GRIP_MEM_CUDA, GRIP_F32, k, dim);
    uint32_t batch = k;
    for (uint32_t start = 0; s == GRIP_OK && start < k;) {
        const uint32_t m = k - start < batch ? k - start : batch;
        grip_neighborhoods_cuda nb = {0};
        s = grip_neighborhoods_cuda_radius(ctx, front->surface, front->keypoint_xyz_dev + 3 * (size_t)start, m,
                                           p->radius, 0, &nb);
        if (s == GRIP_ENOMEM && batch > 1) {
            grip_ctx_clear_error(ctx);
            batch = (m + 1) / 2; /* this batch did not fit: half of it */
            s = GRIP_OK;
            continue;
        }
        if (!s)
            s = grip_spin_image_cuda(ctx, &nb, front->keypoint_xyz_dev + 3 * (size_t)start,
                                     front->keypoint_normals_dev + 4 * (size_t)start, m, p,
                                     (float *)f->descriptors.data + (size_t)dim * start);
        grip_neighborhoods_cuda_free(&nb);
        start += m;
    }
    return s;
}

static grip_status spin_image_body(grip_stage *st, grip_descriptor_front *front)
{
    grip_spin_image_params p = stage_params(st);
    return front->on_device ? device_body(front, &p) : host_body(front, &p);
}

static grip_status spin_image_describe(grip_stage *st, const grip_cloud *cloud, uint32_t role,
                                       const grip_array *keypoints, uint32_t out_memory, grip_features **out)
{
    grip_status s = grip_stage_check_call(&grip_descriptor_spin_image, st, out, out_memory);
    if (s)
        return s;
    grip_spin_image_params p = stage_params(st);
    return grip_descriptor_front_describe(st, cloud, role, keypoints, out_memory, grip_spin_image_dim(p.width),
                                          spin_image_body, out);
}

static grip_status spin_image_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_descriptor_spin_image = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_DESCRIPTOR,
    .name = "spin_image",
    .summary = "Spin Images (153 bins at width 8) on uniform-sampling keypoints, PCL 1.13 SpinImageEstimation "
               "semantics (rectangular or radial, density or angular, support angle)",
#ifdef GRIP_HAVE_CUDA
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
#else
    .backends = GRIP_BACKEND_CPU,
#endif
    .n_params = sizeof spin_image_params / sizeof spin_image_params[0],
    .params = spin_image_params,
    .create = spin_image_create,
    .destroy = grip_stage_destroy,
    .describe = spin_image_describe,
    .describe_many = grip_describe_many,
};

static grip_status spin_image_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_descriptor_spin_image, ctx, kv, n_kv, out);
}
