/* support_plane.c -- see support_plane.h. */
#include "verify/support_plane.h"
#include "group/mt19937.h"
#include "math/sym3_eigen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUPPORT_SEED 12345u

static int finite3(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

static double height(const double normal[3], double offset, const float *p)
{
    return normal[0] * p[0] + normal[1] * p[1] + normal[2] * p[2] + offset;
}

/* The plane through a, b, c; 0 when they are (nearly) collinear. */
static int plane_through(const float *a, const float *b, const float *c, double normal[3], double *offset)
{
    const double u[3] = {(double)b[0] - a[0], (double)b[1] - a[1], (double)b[2] - a[2]};
    const double v[3] = {(double)c[0] - a[0], (double)c[1] - a[1], (double)c[2] - a[2]};
    double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    const double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (!(len > 1e-12))
        return 0;
    for (int k = 0; k < 3; k++)
        normal[k] = n[k] / len;
    *offset = -(normal[0] * a[0] + normal[1] * a[1] + normal[2] * a[2]);
    return 1;
}

/* The RANSAC plane over the sampled points (sample: m row numbers) into normal, offset; returns its inliers among
 * them (0: no plane found, normal and offset untouched). The draws never depend on the counts, so every iteration's
 * triple is drawn first, in order, the planes are counted on the context's threads, and the first plane with the
 * most inliers wins, as in the one-by-one loop: the same plane for any thread count. */
static size_t ransac_plane(const float *xyz, const uint32_t *sample, size_t m, double tolerance, uint32_t threads,
                           double normal[3], double *offset)
{
    grip_mt19937 mt;
    grip_mt19937_seed(&mt, SUPPORT_SEED);
    uint32_t triple[GRIP_SUPPORT_ITERATIONS][3];
    for (int it = 0; it < GRIP_SUPPORT_ITERATIONS; it++)
        for (int k = 0; k < 3; k++)
            triple[it][k] = sample[grip_mt19937_next(&mt) % m];
    double plane[GRIP_SUPPORT_ITERATIONS][4];
    size_t count[GRIP_SUPPORT_ITERATIONS];
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
    for (int it = 0; it < GRIP_SUPPORT_ITERATIONS; it++) {
        double *n = plane[it];
        count[it] = 0;
        if (!plane_through(xyz + 3 * (size_t)triple[it][0], xyz + 3 * (size_t)triple[it][1],
                           xyz + 3 * (size_t)triple[it][2], n, &n[3]))
            continue;
        size_t c = 0;
        for (size_t i = 0; i < m; i++)
            c += fabs(height(n, n[3], xyz + 3 * (size_t)sample[i])) < tolerance;
        count[it] = c;
    }
    size_t best = 0;
    for (int it = 0; it < GRIP_SUPPORT_ITERATIONS; it++)
        if (count[it] > best) {
            best = count[it];
            memcpy(normal, plane[it], 3 * sizeof *normal);
            *offset = plane[it][3];
        }
    return best;
}

/* The scene's points run in SUPPORT_BLOCKS fixed blocks of rows on the context's threads; what the blocks sum is
 * added in block order, so the plane has the same bits for any thread count. */
#define SUPPORT_BLOCKS 64

static size_t block_start(size_t n, int b)
{
    return (size_t)((uint64_t)n * (uint64_t)b / SUPPORT_BLOCKS);
}

/* Least squares over every finite point within tolerance of the plane: the normal of their covariance's smallest
 * eigenvalue through their mean. The sums are taken about `origin` (a point near them) against cancellation. */
static void refine(const float *xyz, size_t n, double tolerance, int threads, grip_support_plane *p)
{
    const double origin[3] = {-p->offset * p->normal[0], -p->offset * p->normal[1], -p->offset * p->normal[2]};
    double block_sum[SUPPORT_BLOCKS][3], block_cross[SUPPORT_BLOCKS][9];
    size_t block_count[SUPPORT_BLOCKS];
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int b = 0; b < SUPPORT_BLOCKS; b++) {
        double sum[3] = {0, 0, 0}, cross[9] = {0};
        size_t count = 0;
        for (size_t i = block_start(n, b); i < block_start(n, b + 1); i++) {
            const float *q = xyz + 3 * i;
            if (!finite3(q) || !(fabs(height(p->normal, p->offset, q)) < tolerance))
                continue;
            const double d[3] = {q[0] - origin[0], q[1] - origin[1], q[2] - origin[2]};
            for (int r = 0; r < 3; r++) {
                sum[r] += d[r];
                for (int c = 0; c < 3; c++)
                    cross[3 * r + c] += d[r] * d[c];
            }
            count++;
        }
        memcpy(block_sum[b], sum, sizeof sum);
        memcpy(block_cross[b], cross, sizeof cross);
        block_count[b] = count;
    }
    double sum[3] = {0, 0, 0}, cross[9] = {0};
    size_t count = 0;
    for (int b = 0; b < SUPPORT_BLOCKS; b++) {
        for (int k = 0; k < 3; k++)
            sum[k] += block_sum[b][k];
        for (int k = 0; k < 9; k++)
            cross[k] += block_cross[b][k];
        count += block_count[b];
    }
    p->inliers = count;
    if (count < 3)
        return;
    double mean[3], cov[9], values[3], vecs[9];
    for (int r = 0; r < 3; r++)
        mean[r] = sum[r] / (double)count;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            cov[3 * r + c] = cross[3 * r + c] / (double)count - mean[r] * mean[c];
    grip_sym3_eigen(cov, values, vecs);
    const double normal[3] = {vecs[0], vecs[3], vecs[6]}; /* column 0: the smallest eigenvalue's */
    memcpy(p->normal, normal, sizeof normal);
    p->offset = -(normal[0] * (origin[0] + mean[0]) + normal[1] * (origin[1] + mean[1]) +
                  normal[2] * (origin[2] + mean[2]));
}

/* Every stride-th finite point (the finite points numbered in cloud order from 0, those whose number is a multiple
 * of stride) into sample, given each block's finite count; returns how many. */
static size_t take_sample(const float *xyz, size_t n, const size_t *block_finite, size_t stride, int threads,
                          uint32_t *sample)
{
    size_t first_finite[SUPPORT_BLOCKS + 1]; /* the number of block b's first finite point */
    first_finite[0] = 0;
    for (int b = 0; b < SUPPORT_BLOCKS; b++)
        first_finite[b + 1] = first_finite[b] + block_finite[b];
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int b = 0; b < SUPPORT_BLOCKS; b++) {
        size_t f = first_finite[b], m = (f + stride - 1) / stride; /* multiples of stride below f */
        for (size_t i = block_start(n, b); i < block_start(n, b + 1); i++)
            if (finite3(xyz + 3 * i) && f++ % stride == 0)
                sample[m++] = (uint32_t)i;
    }
    return (first_finite[SUPPORT_BLOCKS] + stride - 1) / stride;
}

grip_status grip_support_plane_fit(grip_ctx *ctx, const float *xyz, size_t n, double tolerance,
                                   const float viewpoint[3], grip_support_plane *out)
{
    memset(out, 0, sizeof *out);
    if (!(tolerance > 0.0) || !isfinite(tolerance))
        return grip_fail(ctx, GRIP_EINVAL, "verify.support_margin: must be finite and > 0 to fit the support, got %g",
                         tolerance);
    const int threads = grip_ctx_threads(ctx);
    size_t block_finite[SUPPORT_BLOCKS], finite = 0;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int b = 0; b < SUPPORT_BLOCKS; b++) {
        size_t count = 0;
        for (size_t i = block_start(n, b); i < block_start(n, b + 1); i++)
            count += finite3(xyz + 3 * i);
        block_finite[b] = count;
    }
    for (int b = 0; b < SUPPORT_BLOCKS; b++)
        finite += block_finite[b];
    if (finite < 3)
        return GRIP_OK;
    const size_t stride = (finite + GRIP_SUPPORT_SAMPLES - 1) / GRIP_SUPPORT_SAMPLES;
    uint32_t *sample = malloc((finite / stride + 1) * sizeof *sample);
    if (!sample)
        return grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory for the support plane's sample");
    const size_t m = take_sample(xyz, n, block_finite, stride, threads, sample);
    const size_t best = ransac_plane(xyz, sample, m, tolerance, (uint32_t)threads, out->normal, &out->offset);
    free(sample);
    if (best < 3)
        return GRIP_OK;
    refine(xyz, n, tolerance, threads, out);
    if (out->inliers < 3)
        return GRIP_OK;
    if (height(out->normal, out->offset, viewpoint) < 0.0) { /* the camera is above the table */
        for (int k = 0; k < 3; k++)
            out->normal[k] = -out->normal[k];
        out->offset = -out->offset;
    }
    out->valid = 1;
    return GRIP_OK;
}

double grip_support_sunk_fraction(const grip_support_plane *plane, const float *model_xyz, size_t n,
                                  const double pose[16], double margin)
{
    if (!plane->valid)
        return 0.0;
    size_t finite = 0, sunk = 0;
    for (size_t i = 0; i < n; i++) {
        const float *p = model_xyz + 3 * i;
        if (!finite3(p))
            continue;
        double q[3];
        for (int r = 0; r < 3; r++)
            q[r] = pose[4 * r] * p[0] + pose[4 * r + 1] * p[1] + pose[4 * r + 2] * p[2] + pose[4 * r + 3];
        const double h = plane->normal[0] * q[0] + plane->normal[1] * q[1] + plane->normal[2] * q[2] + plane->offset;
        finite++;
        sunk += h < -margin;
    }
    return finite ? (double)sunk / (double)finite : 0.0;
}
