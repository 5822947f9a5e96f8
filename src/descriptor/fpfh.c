/* fpfh.c -- see fpfh.h. Three passes, as PCL's FPFHEstimationOMP: mark every surface point that is a neighbour of
 * some keypoint, compute the SPFH of each of those (one row each), then weigh the rows into each keypoint's FPFH. */
#include "descriptor/fpfh.h"
#include "descriptor/pfh_support.h"
#include "descriptor/keypoint_support.h"

#include <stdlib.h>
#include <string.h>

typedef struct fpfh_job {
    const float *xyz, *normals;
    unsigned char *needed; /* n: 1 for a neighbour of some keypoint */
    const uint32_t *point; /* u: the needed points, ascending */
    const uint32_t *row;   /* n: a needed point's row in spfh */
    float *spfh;           /* u x GRIP_FPFH_DIM */
    float *out;            /* k x GRIP_FPFH_DIM */
} fpfh_job;

static void mark_needed(size_t i, const float keypoint[3], grip_neighbors *support, void *user)
{
    fpfh_job *job = user;
    (void)i;
    (void)keypoint;
    for (size_t j = 0; j < support->count; ++j) {
#pragma omp atomic write
        job->needed[support->idx[j]] = 1;
    }
}

/* SPFH of needed point r over its own neighbours, itself (by index) left out. */
static void spfh_one(size_t r, const float p[3], grip_neighbors *support, void *user)
{
    fpfh_job *job = user;
    uint32_t self = job->point[r];
    const float *normal = job->normals + 4 * (size_t)self;
    uint64_t counts[GRIP_FPFH_DIM] = {0};
    for (size_t j = 0; j < support->count; ++j) {
        size_t q = support->idx[j];
        if (q == self)
            continue;
        int bins[3];
        grip_spfh_pair_bins(p, normal, job->xyz + 3 * q, job->normals + 4 * q, bins);
        ++counts[bins[0]];
        ++counts[bins[1]];
        ++counts[bins[2]];
    }
    float incr = grip_spfh_increment(support->count);
    float *row = job->spfh + (size_t)GRIP_FPFH_DIM * r;
    for (int d = 0; d < GRIP_FPFH_DIM; ++d)
        row[d] = grip_repeat_add(incr, counts[d]);
}

/* The neighbours' SPFH weighted by 1 / squared distance, each sub-histogram scaled to sum 100. */
static void fpfh_one(size_t i, const float keypoint[3], grip_neighbors *support, void *user)
{
    const fpfh_job *job = user;
    float *hist = job->out + (size_t)GRIP_FPFH_DIM * i;
    (void)keypoint;
    if (support->count == 0) {
        grip_pfh_nan_row(hist, GRIP_FPFH_DIM);
        return;
    }
    double total[3] = {0.0, 0.0, 0.0};
    memset(hist, 0, GRIP_FPFH_DIM * sizeof *hist);
    for (size_t j = 0; j < support->count; ++j) {
        if (support->sqdist[j] == 0.0f)
            continue;
        float weight = grip_fpfh_weight(support->sqdist[j]);
        const float *spfh = job->spfh + (size_t)GRIP_FPFH_DIM * job->row[support->idx[j]];
        for (int d = 0; d < GRIP_FPFH_DIM; ++d) {
            float value = spfh[d] * weight;
            total[d / GRIP_FPFH_BINS] += value;
            hist[d] += value;
        }
    }
    for (int d = 0; d < GRIP_FPFH_DIM; ++d)
        hist[d] = grip_fpfh_scaled(hist[d], grip_fpfh_scale_of(total[d / GRIP_FPFH_BINS]));
}

/* The needed points, their rows and their coordinates (u x 3) from job->needed. */
static grip_status list_needed(grip_ctx *ctx, fpfh_job *job, size_t n, uint32_t **point, uint32_t **row,
                               float **point_xyz, size_t *u)
{
    size_t count = 0;
    for (size_t i = 0; i < n; ++i)
        count += job->needed[i];
    *point = malloc((count ? count : 1) * sizeof **point);
    *row = malloc((n ? n : 1) * sizeof **row);
    *point_xyz = malloc((count ? count : 1) * 3 * sizeof **point_xyz);
    if (!*point || !*row || !*point_xyz)
        return grip_fail(ctx, GRIP_ENOMEM, "fpfh: out of memory for the SPFH of %zu points", count);
    size_t r = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!job->needed[i])
            continue;
        (*point)[r] = (uint32_t)i;
        (*row)[i] = (uint32_t)r;
        memcpy(*point_xyz + 3 * r, job->xyz + 3 * i, 3 * sizeof(float));
        ++r;
    }
    *u = count;
    return GRIP_OK;
}

grip_status grip_fpfh_describe(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                               const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, float radius,
                               float *out)
{
    grip_status s = grip_pfh_check_args(ctx, "fpfh", surface_xyz, surface_normals, n, tree, keypoint_xyz, k, radius,
                                        out);
    if (s || k == 0)
        return s;
    fpfh_job job = {surface_xyz, surface_normals, NULL, NULL, NULL, NULL, out};
    uint32_t *point = NULL, *row = NULL;
    float *point_xyz = NULL;
    size_t u = 0;
    job.needed = calloc(n ? n : 1, 1);
    if (!job.needed)
        s = grip_fail(ctx, GRIP_ENOMEM, "fpfh: out of memory for the marks of %zu points", n);
    if (!s)
        s = grip_keypoint_support_for_each(ctx, "fpfh", tree, keypoint_xyz, k, radius, 0, mark_needed, &job);
    if (!s)
        s = list_needed(ctx, &job, n, &point, &row, &point_xyz, &u);
    if (!s) {
        job.point = point;
        job.row = row;
        job.spfh = malloc((u ? u : 1) * GRIP_FPFH_DIM * sizeof *job.spfh);
        if (!job.spfh)
            s = grip_fail(ctx, GRIP_ENOMEM, "fpfh: out of memory for the SPFH of %zu points", u);
    }
    if (!s)
        s = grip_keypoint_support_for_each(ctx, "fpfh", tree, point_xyz, u, radius, 0, spfh_one, &job);
    if (!s)
        s = grip_keypoint_support_for_each(ctx, "fpfh", tree, keypoint_xyz, k, radius, 0, fpfh_one, &job);
    free(job.spfh);
    free(point_xyz);
    free(row);
    free(point);
    free(job.needed);
    return s;
}
