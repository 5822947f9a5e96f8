/* cloud_input.c -- see cloud_input.h. */
#include "stages/cloud_input.h"
#include "stages/stage.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "<what>" or "<what> '<name>'" when the host named the cloud. */
static void cloud_label(const grip_cloud *c, const char *what, char *label, size_t size)
{
    if (c->name && *c->name)
        snprintf(label, size, "%s '%s'", what, c->name);
    else
        snprintf(label, size, "%s", what);
}

static grip_status open_normals(grip_ctx *ctx, const grip_cloud *cloud, const char *label, grip_cloud_input *in)
{
    char what[GRIP_ERROR_TEXT_MAX / 2];
    snprintf(what, sizeof what, "%s: normals", label);
    const grip_array *nrm = &cloud->normals;
    grip_status s = grip_optional_array_check(ctx, nrm, GRIP_F32, 0, what);
    if (s || nrm->rows == 0)
        return s;
    if (nrm->rows != in->n || (nrm->cols != 3 && nrm->cols != 4))
        return grip_fail(ctx, GRIP_EINVAL, "%s must be F32 %zu x 3 or x 4, got %llu x %llu", what, in->n,
                         (unsigned long long)nrm->rows, (unsigned long long)nrm->cols);
    s = grip_array_to_host(ctx, nrm, &in->normals_host, &in->own_normals, what);
    if (s)
        return s;
    in->normals = in->normals_host.data;
    in->normal_stride = (size_t)nrm->cols;
    return GRIP_OK;
}

grip_status grip_cloud_input_open(grip_ctx *ctx, const grip_cloud *cloud, const char *what, grip_cloud_input *in)
{
    memset(in, 0, sizeof *in);
    grip_status s = grip_struct_check(ctx, cloud, offsetof(grip_cloud, viewpoint), what, "grip_cloud (through name)");
    if (s)
        return s;
    char label[GRIP_ERROR_TEXT_MAX / 4], xyz[GRIP_ERROR_TEXT_MAX / 2];
    cloud_label(cloud, what, label, sizeof label);
    snprintf(xyz, sizeof xyz, "%s: xyz", label);
    s = grip_array_check(ctx, &cloud->xyz, GRIP_F32, 3, xyz);
    if (s)
        return s;
    in->n = (size_t)cloud->xyz.rows;
    if (in->n == 0)
        return grip_fail(ctx, GRIP_EINVAL, "%s is empty (0 points)", label);
    in->width = cloud->width ? cloud->width : (uint32_t)in->n;
    in->height = cloud->height ? cloud->height : 1;
    if ((size_t)in->width * in->height != in->n)
        return grip_fail(ctx, GRIP_EINVAL, "%s: width %u x height %u != %zu points", label, in->width, in->height,
                         in->n);
    s = grip_array_to_host(ctx, &cloud->xyz, &in->xyz_host, &in->own_xyz, xyz);
    if (s)
        return s;
    in->xyz = in->xyz_host.data;
    in->name = cloud->name;
    if (cloud->struct_size >= offsetof(grip_cloud, viewpoint) + sizeof cloud->viewpoint)
        memcpy(in->viewpoint, cloud->viewpoint, sizeof in->viewpoint);
    const float *p = in->xyz;
    size_t n_finite = 0; /* every stage opens every cloud: a scan of the whole cloud, on all threads */
#pragma omp parallel for schedule(static) num_threads(grip_ctx_threads(ctx)) reduction(+ : n_finite)
    for (size_t i = 0; i < in->n; i++)
        n_finite += isfinite(p[3 * i]) && isfinite(p[3 * i + 1]) && isfinite(p[3 * i + 2]);
    in->n_finite = n_finite;
    if (in->n_finite == 0)
        return grip_fail(ctx, GRIP_EINVAL, "%s has no finite point (all %zu are NaN or infinite)", label, in->n);
    return open_normals(ctx, cloud, label, in);
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
            s = grip_fail(ctx, GRIP_EINVAL, "descriptor: keypoint %zu is point %u, but the cloud has %zu points", i,
                          k[i], in->n);
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
    if (out_memory != GRIP_MEM_CUDA || f->xyz.memory != GRIP_MEM_CUDA) { /* the cloud's copy is for device output */
        grip_result_array_free(&f->xyz);
        f->xyz = grip_array_host_view(GRIP_F32, 0, 0, NULL);
    }
    return GRIP_OK;
}

int grip_array_on_ctx_device(const grip_ctx *ctx, const grip_array *a)
{
    return a->memory == GRIP_MEM_CUDA && ctx->device >= 0 && a->device == ctx->device;
}

const float *grip_view_device_xyz(const grip_ctx *ctx, const grip_view *view, size_t n)
{
    const grip_features *f = view ? view->features : NULL;
    if (!f || f->struct_size < offsetof(grip_features, xyz) + sizeof f->xyz)
        return NULL;
    const grip_array *a = &f->xyz;
    return grip_array_on_ctx_device(ctx, a) && a->dtype == GRIP_F32 && a->rows == n && a->cols == 3 && a->data
               ? (const float *)a->data
               : NULL;
}
