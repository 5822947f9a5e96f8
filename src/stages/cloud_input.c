/* cloud_input.c -- see cloud_input.h. */
#include "stages/cloud_input.h"
#include "stages/stage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *cloud_name(const grip_cloud *c)
{
    int has_name = c->struct_size >= offsetof(grip_cloud, name) + sizeof c->name; /* ABI growth rule */
    return has_name && c->name && *c->name ? c->name : "cloud";
}

static grip_status open_normals(grip_ctx *ctx, const grip_cloud *cloud, const char *stage, grip_cloud_input *in)
{
    const grip_array *nrm = &cloud->normals;
    if (nrm->rows == 0)
        return GRIP_OK;
    grip_status s = grip_array_check(ctx, nrm, GRIP_F32, 0, stage);
    if (s)
        return s;
    if (nrm->rows != in->n || (nrm->cols != 3 && nrm->cols != 4) || nrm->dtype != GRIP_F32)
        return grip_fail(ctx, GRIP_EINVAL, "%s: %s: normals must be F32 %zu x 3 or x 4, got %llu x %llu", stage,
                         cloud_name(cloud), in->n, (unsigned long long)nrm->rows, (unsigned long long)nrm->cols);
    s = grip_array_to_host(ctx, nrm, &in->normals_host, &in->own_normals, stage);
    if (s)
        return s;
    in->normals = in->normals_host.data;
    in->normal_stride = (size_t)nrm->cols;
    return GRIP_OK;
}

grip_status grip_cloud_input_open(grip_ctx *ctx, const grip_cloud *cloud, const char *stage, grip_cloud_input *in)
{
    memset(in, 0, sizeof *in);
    if (!cloud)
        return grip_fail(ctx, GRIP_EINVAL, "%s: cloud is NULL", stage);
    if (cloud->struct_size < offsetof(grip_cloud, rgb))
        return grip_fail(ctx, GRIP_EINVAL, "%s: grip_cloud.struct_size %u is too small", stage, cloud->struct_size);
    grip_status s = grip_array_check(ctx, &cloud->xyz, GRIP_F32, 3, stage);
    if (s)
        return s;
    in->n = (size_t)cloud->xyz.rows;
    if (in->n == 0)
        return grip_fail(ctx, GRIP_EINVAL, "%s: %s is empty (0 points)", stage, cloud_name(cloud));
    in->width = cloud->width ? cloud->width : (uint32_t)in->n;
    in->height = cloud->height ? cloud->height : 1;
    if ((size_t)in->width * in->height != in->n)
        return grip_fail(ctx, GRIP_EINVAL, "%s: %s: width %u x height %u != %zu points", stage, cloud_name(cloud),
                         in->width, in->height, in->n);
    s = grip_array_to_host(ctx, &cloud->xyz, &in->xyz_host, &in->own_xyz, stage);
    if (s)
        return s;
    in->xyz = in->xyz_host.data;
    if (cloud->struct_size >= offsetof(grip_cloud, viewpoint) + sizeof cloud->viewpoint)
        memcpy(in->viewpoint, cloud->viewpoint, sizeof in->viewpoint);
    for (size_t i = 0; i < in->n; i++)
        in->n_finite += isfinite(in->xyz[3 * i]) && isfinite(in->xyz[3 * i + 1]) && isfinite(in->xyz[3 * i + 2]);
    if (in->n_finite == 0)
        return grip_fail(ctx, GRIP_EINVAL, "%s: %s has no finite point (all %zu are NaN or infinite)", stage,
                         cloud_name(cloud), in->n);
    return open_normals(ctx, cloud, stage, in);
}

void grip_cloud_input_close(grip_cloud_input *in)
{
    if (in->own_xyz)
        grip_array_free_host(&in->xyz_host);
    if (in->own_normals)
        grip_array_free_host(&in->normals_host);
    memset(in, 0, sizeof *in);
}

static int point_finite(const grip_cloud_input *in, size_t i)
{
    const float *p = in->xyz + 3 * i;
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

grip_status grip_cloud_input_keypoints(grip_ctx *ctx, const grip_cloud_input *in, const grip_array *given,
                                       uint32_t **idx, size_t *count)
{
    *idx = NULL;
    *count = 0;
    grip_status s = grip_array_check(ctx, given, GRIP_U32, 1, "descriptor: keypoints");
    if (s)
        return s;
    grip_array host;
    int owned = 0;
    s = grip_array_to_host(ctx, given, &host, &owned, "descriptor: keypoints");
    if (s)
        return s;
    const uint32_t *k = host.data;
    size_t n = (size_t)host.rows;
    for (size_t i = 0; i < n && !s; i++) {
        if (k[i] >= in->n)
            s = grip_fail(ctx, GRIP_EINVAL, "descriptor: keypoint %zu is point %u, but the cloud has %zu points", i, k[i],
                          in->n);
        else if (!point_finite(in, k[i]))
            s = grip_fail(ctx, GRIP_EINVAL, "descriptor: keypoint %zu is point %u, which is NaN", i, k[i]);
    }
    if (!s) {
        *idx = malloc(n * sizeof **idx + 1);
        if (!*idx)
            s = grip_fail(ctx, GRIP_ENOMEM, "descriptor: out of memory for %zu keypoints", n);
        else {
            memcpy(*idx, k, n * sizeof **idx);
            *count = n;
        }
    }
    if (owned)
        grip_array_free_host(&host);
    return s;
}

grip_status grip_cloud_input_finite_indices(grip_ctx *ctx, const grip_cloud_input *in, uint32_t **idx, size_t *count)
{
    *count = 0;
    *idx = malloc(in->n_finite * sizeof **idx + 1);
    if (!*idx)
        return grip_fail(ctx, GRIP_ENOMEM, "descriptor: out of memory for %zu keypoints", in->n_finite);
    for (size_t i = 0; i < in->n; i++)
        if (point_finite(in, i))
            (*idx)[(*count)++] = (uint32_t)i;
    return GRIP_OK;
}

grip_status grip_features_set_keypoints(grip_ctx *ctx, grip_features *f, const grip_cloud_input *in,
                                        const uint32_t *idx, size_t count)
{
    grip_status s = grip_array_alloc_host(ctx, &f->keypoints, GRIP_U32, count, 1);
    if (!s)
        s = grip_array_alloc_host(ctx, &f->keypoint_xyz, GRIP_F32, count, 3);
    if (s)
        return s;
    uint32_t *k = f->keypoints.data;
    float *xyz = f->keypoint_xyz.data;
    for (size_t i = 0; i < count; i++) {
        k[i] = idx[i];
        memcpy(xyz + 3 * i, in->xyz + 3 * (size_t)idx[i], 3 * sizeof(float));
    }
    return GRIP_OK;
}

grip_status grip_features_place(grip_ctx *ctx, grip_features *f, uint32_t out_memory)
{
    grip_array *arrays[] = {&f->keypoints, &f->keypoint_xyz, &f->normals, &f->frames, &f->descriptors};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        grip_status s = grip_result_array_place(ctx, arrays[i], out_memory);
        if (s)
            return s;
    }
    return GRIP_OK;
}
