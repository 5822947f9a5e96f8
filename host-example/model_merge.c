/* model_merge.c -- see model_merge.h. */
#include "model_merge.h"
#include "host_util.h"

#include <stdlib.h>
#include <string.h>

static void no_release(grip_features *f)
{
    (void)f; /* merged features are freed by model_merge_free */
}

/* Appends the rows of `a` (rows x cols of elem bytes) to dst at row `at`; absent arrays contribute NaN rows. */
static void append_rows(void *dst, uint64_t at, const grip_array *a, uint64_t rows, uint64_t cols, size_t elem)
{
    unsigned char *d = (unsigned char *)dst + at * cols * elem;
    if (a->rows == rows && a->cols == cols && a->data)
        memcpy(d, a->data, rows * cols * elem);
    else
        memset(d, 0xff, rows * cols * elem); /* all-ones bits: NaN for floats */
}

int model_merge(const grip_cloud *const *clouds, const grip_features *const *features, uint32_t n, merged_model *out)
{
    memset(out, 0, sizeof *out);
    uint64_t points = 0, kps = 0;
    uint32_t dim = n ? features[0]->descriptor_dim : 0;
    for (uint32_t i = 0; i < n; i++) {
        if (features[i]->descriptor_dim != dim)
            return -1;
        points += clouds[i]->xyz.rows;
        kps += features[i]->keypoints.rows;
    }
    out->xyz = malloc(points * 3 * sizeof(float) + 1);
    out->normals = malloc(points * 4 * sizeof(float) + 1);
    out->keypoints = malloc(kps * sizeof(uint32_t) + 1);
    out->keypoint_xyz = malloc(kps * 3 * sizeof(float) + 1);
    out->frames = malloc(kps * 9 * sizeof(float) + 1);
    out->descriptors = malloc(kps * dim * sizeof(float) + 1);
    if (!out->xyz || !out->normals || !out->keypoints || !out->keypoint_xyz || !out->frames || !out->descriptors) {
        model_merge_free(out);
        return -1;
    }
    uint64_t p = 0, k = 0;
    for (uint32_t i = 0; i < n; i++) {
        const grip_features *f = features[i];
        uint64_t np = clouds[i]->xyz.rows, nk = f->keypoints.rows;
        append_rows(out->xyz, p, &clouds[i]->xyz, np, 3, sizeof(float));
        append_rows(out->normals, p, &f->normals, np, 4, sizeof(float));
        append_rows(out->keypoint_xyz, k, &f->keypoint_xyz, nk, 3, sizeof(float));
        append_rows(out->frames, k, &f->frames, nk, 9, sizeof(float));
        append_rows(out->descriptors, k, &f->descriptors, nk, dim, sizeof(float));
        const uint32_t *idx = f->keypoints.data;
        for (uint64_t j = 0; j < nk; j++)
            out->keypoints[k + j] = (uint32_t)(idx[j] + p); /* keypoint numbers move with their view's points */
        p += np;
        k += nk;
    }
    out->cloud.struct_size = sizeof out->cloud;
    out->cloud.width = (uint32_t)points;
    out->cloud.height = 1;
    out->cloud.xyz = host_array(GRIP_F32, points, 3, out->xyz);
    out->cloud.name = clouds[0]->name;
    grip_features *mf = &out->features;
    mf->struct_size = sizeof *mf;
    mf->descriptor_dim = dim;
    mf->keypoints = host_array(GRIP_U32, kps, 1, out->keypoints);
    mf->keypoint_xyz = host_array(GRIP_F32, kps, 3, out->keypoint_xyz);
    mf->normals = host_array(GRIP_F32, points, 4, out->normals);
    mf->frames = host_array(GRIP_F32, kps, 9, out->frames);
    mf->descriptors = host_array(GRIP_F32, kps, dim, out->descriptors);
    mf->release = no_release;
    return 0;
}

void model_merge_free(merged_model *m)
{
    if (!m)
        return;
    free(m->xyz);
    free(m->normals);
    free(m->keypoints);
    free(m->keypoint_xyz);
    free(m->frames);
    free(m->descriptors);
    memset(m, 0, sizeof *m);
}
