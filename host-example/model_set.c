/* model_set.c -- see model_set.h. */
#include "model_set.h"
#include "host_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void no_release(grip_features *f)
{
    (void)f; /* a stored model's features are freed by model_set_free */
}

int model_set_alloc(model_set *s, uint32_t n, uint32_t dim, uint64_t rows)
{
    memset(s, 0, sizeof *s);
    s->n_models = n;
    s->dim = dim;
    s->rows = rows;
    s->models = calloc((size_t)n + 1, sizeof *s->models);
    s->views = calloc((size_t)n + 1, sizeof *s->views);
    /* the caller has checked rows * dim against what it can hold (a file's length, or models in memory) */
    s->reference = malloc((size_t)rows * dim * sizeof(float) + 1);
    s->model_ids = malloc((size_t)rows * sizeof(uint32_t) + 1);
    if (!s->models || !s->views || !s->reference || !s->model_ids) {
        model_set_free(s);
        return -1;
    }
    return 0;
}

/* malloc(count * size), with 1 byte for an empty array; NULL when count is 0 and optional (absent). */
static void *alloc_rows(uint64_t count, size_t size, int optional, int *failed)
{
    if (count == 0 && optional)
        return NULL;
    void *p = malloc((size_t)count * size + 1);
    *failed |= p == NULL;
    return p;
}

int model_set_shape(model_set *s, uint32_t m, const char *name, const stored_model_shape *shape, uint64_t first_row)
{
    stored_model *sm = &s->models[m];
    uint64_t np = shape->points, nk = shape->keypoints;
    int failed = 0;
    sm->name = host_strdup(name ? name : "");
    failed |= sm->name == NULL;
    sm->xyz = alloc_rows(np * 3, sizeof(float), 0, &failed);
    sm->cloud_normals = alloc_rows(shape->cloud_normals_rows * 3, sizeof(float), 1, &failed);
    sm->rgb = alloc_rows(shape->rgb_rows * 3, 1, 1, &failed);
    sm->keypoints = alloc_rows(nk, sizeof(uint32_t), 0, &failed);
    sm->keypoint_xyz = alloc_rows(nk * 3, sizeof(float), 0, &failed);
    sm->normals = alloc_rows(shape->normals_rows * 4, sizeof(float), 1, &failed);
    sm->frames = alloc_rows(shape->frames_rows * 9, sizeof(float), 1, &failed);
    if (failed)
        return -1;
    grip_cloud *c = &sm->cloud;
    c->struct_size = sizeof *c;
    c->width = shape->width;
    c->height = shape->height;
    c->xyz = host_array(GRIP_F32, np, 3, sm->xyz);
    c->normals = host_array(GRIP_F32, shape->cloud_normals_rows, 3, sm->cloud_normals);
    c->rgb = host_array(GRIP_U8, shape->rgb_rows, 3, sm->rgb);
    c->name = sm->name;
    grip_features *f = &sm->features;
    f->struct_size = sizeof *f;
    f->descriptor_dim = s->dim;
    f->keypoints = host_array(GRIP_U32, nk, 1, sm->keypoints);
    f->keypoint_xyz = host_array(GRIP_F32, nk, 3, sm->keypoint_xyz);
    f->normals = host_array(GRIP_F32, shape->normals_rows, 4, sm->normals);
    f->frames = host_array(GRIP_F32, shape->frames_rows, 9, sm->frames);
    f->descriptors = host_array(GRIP_F32, nk, s->dim, s->reference + first_row * s->dim);
    f->release = no_release;
    for (uint64_t r = 0; r < nk; r++)
        s->model_ids[first_row + r] = m;
    s->views[m] = (grip_view){sizeof(grip_view), &sm->cloud, &sm->features};
    return 0;
}

/* Whether a is a host array of dtype and cols whose rows are 0 (when optional) or `rows`. */
static int shape_ok(const grip_array *a, uint32_t dtype, uint64_t cols, uint64_t rows, int optional)
{
    if (a->rows == 0 && optional)
        return 1;
    return a->rows == rows && a->cols == cols && a->dtype == dtype && a->memory == GRIP_MEM_HOST &&
           (rows == 0 || a->data != NULL);
}

static void copy_rows(void *dst, const grip_array *a, size_t elem)
{
    if (a->rows)
        memcpy(dst, a->data, (size_t)(a->rows * a->cols) * elem);
}

int model_set_copy(model_set *s, const grip_view *views, const char *const *names, uint32_t n, const char *settings,
                   uint32_t abi_major, uint32_t abi_minor, char *err, size_t errlen)
{
    uint32_t dim = n ? views[0].features->descriptor_dim : 0;
    uint64_t rows = 0;
    for (uint32_t m = 0; m < n; m++) {
        const grip_cloud *c = views[m].cloud;
        const grip_features *f = views[m].features;
        uint64_t np = c->xyz.rows, nk = f->keypoints.rows;
        if (f->descriptor_dim != dim) {
            snprintf(err, errlen, "model %u has descriptors of %u values, model 0 of %u", m, f->descriptor_dim, dim);
            return -1;
        }
        if (!shape_ok(&c->xyz, GRIP_F32, 3, np, 0) || !shape_ok(&c->normals, GRIP_F32, 3, np, 1) ||
            !shape_ok(&c->rgb, GRIP_U8, 3, np, 1) || !shape_ok(&f->keypoints, GRIP_U32, 1, nk, 0) ||
            !shape_ok(&f->keypoint_xyz, GRIP_F32, 3, nk, 0) || !shape_ok(&f->normals, GRIP_F32, 4, np, 1) ||
            !shape_ok(&f->frames, GRIP_F32, 9, nk, 1) || !shape_ok(&f->descriptors, GRIP_F32, dim, nk, 0)) {
            snprintf(err, errlen,
                     "model %u: its cloud or features are not host arrays of the shapes a model database keeps "
                     "(%llu points, %llu keypoints)",
                     m, (unsigned long long)np, (unsigned long long)nk);
            return -1;
        }
        rows += nk;
    }
    if (model_set_alloc(s, n, dim, rows) != 0 || !(s->settings = host_strdup(settings ? settings : ""))) {
        model_set_free(s);
        snprintf(err, errlen, "out of host memory for %u models", n);
        return -1;
    }
    s->abi_major = abi_major;
    s->abi_minor = abi_minor;
    uint64_t at = 0;
    for (uint32_t m = 0; m < n; m++) {
        const grip_cloud *c = views[m].cloud;
        const grip_features *f = views[m].features;
        stored_model_shape shape = {c->xyz.rows,     f->keypoints.rows, c->width,      c->height,
                                    c->normals.rows, c->rgb.rows,       f->normals.rows, f->frames.rows};
        if (model_set_shape(s, m, names ? names[m] : NULL, &shape, at) != 0) {
            model_set_free(s);
            snprintf(err, errlen, "out of host memory for model %u", m);
            return -1;
        }
        stored_model *sm = &s->models[m];
        sm->features.normals_source = f->struct_size >= offsetof(grip_features, normals_source) + sizeof f->normals_source
                                          ? f->normals_source
                                          : GRIP_NORMALS_UNSAID; /* kept in memory; a database file does not say */
        copy_rows(sm->xyz, &c->xyz, sizeof(float));
        copy_rows(sm->cloud_normals, &c->normals, sizeof(float));
        copy_rows(sm->rgb, &c->rgb, 1);
        copy_rows(sm->keypoints, &f->keypoints, sizeof(uint32_t));
        copy_rows(sm->keypoint_xyz, &f->keypoint_xyz, sizeof(float));
        copy_rows(sm->normals, &f->normals, sizeof(float));
        copy_rows(sm->frames, &f->frames, sizeof(float));
        copy_rows(s->reference + at * dim, &f->descriptors, sizeof(float));
        memcpy(sm->cloud.viewpoint, c->viewpoint, sizeof sm->cloud.viewpoint);
        at += f->keypoints.rows;
    }
    return 0;
}

int model_set_hold(model_set *s, const grip_cloud *cloud, grip_features *features, const char *name,
                   const char *settings, uint32_t abi_major, uint32_t abi_minor)
{
    memset(s, 0, sizeof *s);
    s->n_models = 1;
    s->dim = features->descriptor_dim;
    s->rows = features->descriptors.rows;
    s->models = calloc(1, sizeof *s->models);
    s->views = calloc(1, sizeof *s->views);
    s->settings = host_strdup(settings ? settings : "");
    char *label = host_strdup(name ? name : "");
    if (!s->models || !s->views || !s->settings || !label) {
        free(label);
        model_set_free(s);
        return -1;
    }
    s->abi_major = abi_major;
    s->abi_minor = abi_minor;
    stored_model *sm = &s->models[0];
    sm->name = label;
    sm->cloud = *cloud;
    sm->cloud.name = label;
    s->views[0] = (grip_view){sizeof(grip_view), &sm->cloud, features};
    s->held = features;
    return 0;
}

int model_set_reference(const model_set *s, grip_array *rows, grip_array *ids)
{
    if (s->held) {
        *rows = s->held->descriptors;
        return 0;
    }
    *rows = host_array(GRIP_F32, s->rows, s->dim, s->reference);
    *ids = host_array(GRIP_U32, s->rows, 1, s->model_ids);
    return 1;
}

void model_set_free(model_set *s)
{
    if (!s)
        return;
    if (s->held)
        s->held->release(s->held);
    for (uint32_t m = 0; s->models && m < s->n_models; m++) {
        stored_model *sm = &s->models[m];
        free(sm->name);
        free(sm->xyz);
        free(sm->cloud_normals);
        free(sm->rgb);
        free(sm->keypoints);
        free(sm->keypoint_xyz);
        free(sm->normals);
        free(sm->frames);
    }
    free(s->models);
    free(s->views);
    free(s->reference);
    free(s->model_ids);
    free(s->settings);
    memset(s, 0, sizeof *s);
}
