/* descriptor_surf.c -- the `surf` descriptor stage: SURF interest points of an organized cloud's colour image
 * (src/descriptor/surf.h), detected and described on the CPU twin or on the GPU (surf_cuda.h), each lifted to 3D
 * through the cloud point at its rounded pixel. Unlike the 3D descriptors it selects its own keypoints (the
 * image's blobs) and computes no normals or frames: the features carry keypoints (the pixel's point index),
 * keypoint_xyz and descriptors, which the match, group and verify stages take as they take SHOT's.
 *
 * A cloud surf cannot describe although other descriptors can (no rgb, unorganized) and host-given keypoints
 * fail with GRIP_EUNSUPPORTED, which a host that tries every descriptor stage reads as "not for this input".
 * Keypoints whose pixel has no finite xyz (depth holes) are dropped. More keypoints than `capacity` is an error
 * (GRIP_ECONFIG naming the key), never a silent cut. The sign of the Laplacian is computed (grip_surf_keypoint)
 * but the features have no field to carry it; with `sign_column` it becomes one more descriptor value (+1 or -1),
 * which makes any nearest-neighbour match stage keep to the keypoint's own sign (surf.h says why). */
#include "stages/cloud_input.h"
#include "stages/describe_many.h"
#include "stages/registry.h"
#include "stages/stage.h"
#include "core/cuda_bridge.h"
#include "descriptor/surf.h"
#include "descriptor/surf_cuda.h"

#include <stdlib.h>
#include <string.h>

static const grip_param_info surf_params[] = {
    GRIP_PARAM_DEVICE,
    GRIP_PARAM_FALLBACK,
    GRIP_PARAM_CLOUDS_IN_FLIGHT,
    {sizeof(grip_param_info), GRIP_PARAM_INT, "octaves", "4", 1, GRIP_SURF_MAX_OCTAVES, NULL,
     "octaves of the scale space; filter sizes 9-27, 15-51, 27-99, 51-195 px at 4 intervals"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "intervals", "4", 3, GRIP_SURF_MAX_INTERVALS, NULL,
     "filter sizes per octave; maxima are searched in all but the first and last"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "init_step", "2", 1, 8, NULL,
     "sampling step of the first octave in pixels; doubles per octave"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "threshold", "0.0004", 0, 1e6, NULL,
     "least Hessian determinant of a keypoint (grey in [0, 1]; OpenSURF's default)"},
    {sizeof(grip_param_info), GRIP_PARAM_BOOL, "upright", "false", 0, 0, NULL,
     "skip the orientation (U-SURF): faster, not rotation invariant"},
    {sizeof(grip_param_info), GRIP_PARAM_BOOL, "extended", "false", 0, 0, NULL,
     "128 values per keypoint instead of 64 (sums split by the sign of the other response)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "capacity", "20000", 1, 1000000, NULL,
     "most keypoints per image (before the depth check); more fails the call"},
    {sizeof(grip_param_info), GRIP_PARAM_BOOL, "sign_column", "false", 0, 0, NULL,
     "one more value per row, +1 or -1 by the sign of the Laplacian: matching then keeps to the same sign"},
};

static grip_surf_params stage_params(const grip_stage *st)
{
    grip_surf_params p = {(uint32_t)grip_stage_integer(st, "octaves"),
                          (uint32_t)grip_stage_integer(st, "intervals"),
                          (uint32_t)grip_stage_integer(st, "init_step"),
                          (float)grip_stage_number(st, "threshold"),
                          grip_stage_bool(st, "upright"),
                          grip_stage_bool(st, "extended"),
                          (uint32_t)grip_stage_integer(st, "capacity"),
                          grip_stage_bool(st, "sign_column")};
    return p;
}

/* The grey image of the cloud's rgb, after checking that the cloud is an image with colour. *grey is malloc'd. */
static grip_status grey_of(grip_ctx *ctx, const grip_cloud *cloud, const grip_cloud_input *in, uint8_t **grey)
{
    const char *name = cloud->name ? cloud->name : "";
    if (in->height < 2)
        return grip_fail(ctx, GRIP_EUNSUPPORTED,
                         "descriptor: cloud '%s' is unorganized (%u x %u): surf needs an organized cloud, an image",
                         name, in->width, in->height);
    grip_status s = grip_optional_array_check(ctx, &cloud->rgb, GRIP_U8, 3, "descriptor: cloud.rgb");
    if (s)
        return s;
    if (cloud->rgb.rows == 0)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "descriptor: cloud '%s' has no rgb: surf needs its colour image",
                         name);
    if (cloud->rgb.rows != in->n)
        return grip_fail(ctx, GRIP_EINVAL, "descriptor: cloud.rgb has %llu rows for %zu points",
                         (unsigned long long)cloud->rgb.rows, in->n);
    grip_array rgb;
    int owned = 0;
    s = grip_array_to_host(ctx, &cloud->rgb, &rgb, &owned, "descriptor: cloud.rgb");
    if (s)
        return s;
    *grey = malloc(in->n);
    if (!*grey)
        s = grip_fail(ctx, GRIP_ENOMEM, "descriptor: out of memory for a %u x %u grey image", in->width, in->height);
    else
        grip_surf_grey_image(rgb.data, in->n, *grey);
    if (owned)
        grip_array_free_host(&rgb);
    return s;
}

static grip_status host_body(grip_ctx *ctx, const grip_cloud_input *in, const uint8_t *grey, const grip_surf_params *p,
                             grip_features *f)
{
    grip_surf_result r;
    grip_status s = grip_surf_run(ctx, grey, in->xyz, in->width, in->height, p, &r);
    const uint32_t dim = grip_surf_dim(p);
    if (!s)
        s = grip_array_alloc_host(ctx, &f->keypoints, GRIP_U32, r.count, 1);
    if (!s)
        s = grip_array_alloc_host(ctx, &f->keypoint_xyz, GRIP_F32, r.count, 3);
    if (!s)
        s = grip_array_alloc_host(ctx, &f->descriptors, GRIP_F32, r.count, dim);
    if (!s) {
        uint32_t *idx = f->keypoints.data;
        float *xyz = f->keypoint_xyz.data;
        for (size_t k = 0; k < r.count; ++k) {
            idx[k] = r.keypoints[k].pixel;
            memcpy(xyz + 3 * k, in->xyz + 3 * (size_t)idx[k], 3 * sizeof *xyz);
        }
        if (r.count)
            memcpy(f->descriptors.data, r.descriptors, r.count * dim * sizeof(float));
    }
    grip_surf_result_free(&r);
    return s;
}

static grip_status device_body(grip_ctx *ctx, const grip_cloud_input *in, const uint8_t *grey,
                               const grip_surf_params *p, grip_features *f)
{
    void *grey_dev = NULL, *xyz_dev = NULL;
    int device = -1;
    grip_surf_cuda_result r = {0};
    const uint32_t dim = grip_surf_dim(p);
    grip_status s = grip_cuda_upload(ctx, grey, in->n, &grey_dev, &device);
    if (!s)
        s = grip_cuda_upload(ctx, in->xyz, in->n * 3 * sizeof(float), &xyz_dev, &device);
    if (!s)
        s = grip_surf_cuda(ctx, grey_dev, xyz_dev, in->width, in->height, p, &r);
    if (!s)
        s = grip_result_array_alloc(ctx, &f->keypoints, GRIP_MEM_CUDA, GRIP_U32, r.count, 1);
    if (!s)
        s = grip_result_array_alloc(ctx, &f->keypoint_xyz, GRIP_MEM_CUDA, GRIP_F32, r.count, 3);
    if (!s)
        s = grip_result_array_alloc(ctx, &f->descriptors, GRIP_MEM_CUDA, GRIP_F32, r.count, dim);
    if (!s)
        s = grip_cuda_copy_on_device(ctx, f->keypoints.data, r.pixels, r.count * sizeof(uint32_t));
    if (!s)
        s = grip_cuda_copy_on_device(ctx, f->keypoint_xyz.data, r.xyz, r.count * 3 * sizeof(float));
    if (!s)
        s = grip_cuda_copy_on_device(ctx, f->descriptors.data, r.descriptors, r.count * dim * sizeof(float));
    grip_surf_cuda_result_free(&r);
    grip_cuda_free(xyz_dev);
    grip_cuda_free(grey_dev);
    return s;
}

static grip_status describe_once(grip_stage *st, const grip_cloud *cloud, uint32_t role, const grip_array *keypoints,
                                 uint32_t out_memory, grip_features **out)
{
    grip_status s = grip_stage_check_run(st, out, out_memory);
    if (s)
        return s;
    grip_ctx *ctx = st->ctx;
    if (role != GRIP_ROLE_MODEL && role != GRIP_ROLE_SCENE)
        return grip_fail(ctx, GRIP_EINVAL, "descriptor: role %u is neither model nor scene", role);
    s = grip_optional_array_check(ctx, keypoints, GRIP_U32, 1, "descriptor: keypoints");
    if (s)
        return s;
    if (keypoints && keypoints->rows > 0)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "descriptor: surf finds its own keypoints; the host gave %llu",
                         (unsigned long long)keypoints->rows);
    const grip_surf_params p = stage_params(st);
    grip_cloud_input in;
    uint8_t *grey = NULL;
    grip_features *f = NULL;
    s = grip_cloud_input_open(ctx, cloud, "descriptor: cloud", &in);
    if (!s)
        s = grey_of(ctx, cloud, &in, &grey);
    if (!s)
        s = grip_surf_check(ctx, &p, in.width, in.height, "descriptor: surf");
    if (!s)
        s = grip_features_new(ctx, grip_surf_dim(&p), &f);
    if (!s)
        s = st->use_cuda ? device_body(ctx, &in, grey, &p, f) : host_body(ctx, &in, grey, &p, f);
    if (!s)
        s = grip_features_place(ctx, f, out_memory);
    if (!s) {
        *out = f;
        f = NULL;
    }
    if (f)
        f->release(f);
    free(grey);
    grip_cloud_input_close(&in);
    return s;
}

static grip_status surf_describe(grip_stage *st, const grip_cloud *cloud, uint32_t role, const grip_array *keypoints,
                                 uint32_t out_memory, grip_features **out)
{
    grip_status s = grip_stage_check_call(&grip_descriptor_surf, st, out, out_memory);
    if (s)
        return s;
    GRIP_STAGE_CALL(st, s, describe_once(st, cloud, role, keypoints, out_memory, out));
    return s;
}

static grip_status surf_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_descriptor_surf = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_DESCRIPTOR,
    .name = "surf",
    .summary = "SURF (64 or 128) on the colour image of an organized cloud: box-Hessian blobs over octaves, "
               "Haar orientation and descriptor (OpenSURF semantics), keypoints lifted to 3D by the depth",
#ifdef GRIP_HAVE_CUDA
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
#else
    .backends = GRIP_BACKEND_CPU,
#endif
    .n_params = sizeof surf_params / sizeof surf_params[0],
    .params = surf_params,
    .create = surf_create,
    .destroy = grip_stage_destroy,
    .describe = surf_describe,
    .describe_many = grip_describe_many,
};

static grip_status surf_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_descriptor_surf, ctx, kv, n_kv, out);
}
