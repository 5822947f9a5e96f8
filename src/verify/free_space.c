/* free_space.c -- see free_space.h. */
#include "verify/free_space.h"
#include "verify/free_space_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Least squares of a = s * b + c over the pairs accumulated in sums (n, sum b, sum a, sum b^2, sum a*b). */
static void fit_line(const double sums[5], double *slope, double *offset)
{
    double n = sums[0], det = n * sums[3] - sums[1] * sums[1];
    *slope = det != 0 ? (n * sums[4] - sums[1] * sums[2]) / det : 0;
    *offset = n > 0 ? (sums[2] - *slope * sums[1]) / n : 0;
}

/* The fit's sums over rows [v0, v1): per axis (n, sum b, sum a, sum b^2, sum a*b), with b = x/z or y/z and a the
 * pixel column or row. */
static void pinhole_sums(const float *xyz, uint32_t width, uint32_t v0, uint32_t v1, double out_u[5], double out_v[5])
{
    double su[5] = {0}, sv[5] = {0}; /* summed here, stored once: neighbouring blocks' sums share cache lines */
    for (uint32_t v = v0; v < v1; v++)
        for (uint32_t u = 0; u < width; u++) {
            const float *p = xyz + 3 * ((size_t)v * width + u);
            if (!grip_free_space_usable(p))
                continue;
            double bx = p[0] / p[2], by = p[1] / p[2];
            double xs[5] = {1, bx, u, bx * bx, bx * u}, ys[5] = {1, by, v, by * by, by * v};
            for (int k = 0; k < 5; k++) {
                su[k] += xs[k];
                sv[k] += ys[k];
            }
        }
    for (int k = 0; k < 5; k++) {
        out_u[k] = su[k];
        out_v[k] = sv[k];
    }
}

void grip_pinhole_estimate(const float *xyz, uint32_t width, uint32_t height, int threads, grip_pinhole *out)
{
    memset(out, 0, sizeof *out);
    if (height < 2 || width < 2)
        return;
    double bu[GRIP_PINHOLE_BLOCKS][5], bv[GRIP_PINHOLE_BLOCKS][5], bsq[GRIP_PINHOLE_BLOCKS];
    size_t bn[GRIP_PINHOLE_BLOCKS];
    int fitted = 0;
    /* one team for both passes: its threads wake once (they sleep while the host waits on a device) */
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
    {
#pragma omp for schedule(static)
        for (int b = 0; b < GRIP_PINHOLE_BLOCKS; b++)
            pinhole_sums(xyz, width, (uint32_t)((uint64_t)height * b / GRIP_PINHOLE_BLOCKS),
                         (uint32_t)((uint64_t)height * (b + 1) / GRIP_PINHOLE_BLOCKS), bu[b], bv[b]);
#pragma omp single
        {
            double su[5] = {0}, sv[5] = {0};
            for (int b = 0; b < GRIP_PINHOLE_BLOCKS; b++)
                for (int k = 0; k < 5; k++) {
                    su[k] += bu[b][k];
                    sv[k] += bv[b][k];
                }
            if (su[0] >= 16) {
                fit_line(su, &out->fx, &out->cx);
                fit_line(sv, &out->fy, &out->cy);
                fitted = 1;
            }
        }
        /* the residual over every 4th pixel of every 4th row, in the same blocks of rows */
#pragma omp for schedule(static)
        for (int b = 0; b < GRIP_PINHOLE_BLOCKS; b++) {
            const uint32_t v0 = (uint32_t)((uint64_t)height * b / GRIP_PINHOLE_BLOCKS),
                           v1 = (uint32_t)((uint64_t)height * (b + 1) / GRIP_PINHOLE_BLOCKS);
            double sq = 0; /* summed here, stored once: neighbouring blocks' sums share cache lines */
            size_t n = 0;
            for (uint32_t v = (v0 + 3) / 4 * 4; fitted && v < v1; v += 4)
                for (uint32_t u = 0; u < width; u += 4) {
                    const float *p = xyz + 3 * ((size_t)v * width + u);
                    if (!grip_free_space_usable(p))
                        continue;
                    double du = out->fx * p[0] / p[2] + out->cx - u, dv = out->fy * p[1] / p[2] + out->cy - v;
                    sq += du * du + dv * dv;
                    n++;
                }
            bsq[b] = sq;
            bn[b] = n;
        }
    }
    if (!fitted)
        return;
    double sq = 0;
    size_t n = 0;
    for (int b = 0; b < GRIP_PINHOLE_BLOCKS; b++) {
        sq += bsq[b];
        n += bn[b];
    }
    out->rms_residual_px = n ? sqrt(sq / (double)n) : INFINITY;
    out->valid = n > 0 && out->rms_residual_px < 0.5 && out->fx != 0 && out->fy != 0;
}

void grip_free_space_count(const grip_pinhole *cam, const float *scene_xyz, uint32_t width, uint32_t height,
                           const float *model_xyz, size_t n_model, const double pose[16], double tolerance,
                           size_t *seen, size_t *violations)
{
    *seen = *violations = 0;
    if (!cam->valid)
        return;
    const double c[4] = {cam->fx, cam->fy, cam->cx, cam->cy};
    for (size_t i = 0; i < n_model; i++) {
        int k = grip_free_space_point(c, scene_xyz, 3, width, height, model_xyz + 3 * i, pose, tolerance);
        *seen += k > 0;
        *violations += k < 0;
    }
}

grip_status grip_free_space_violations(grip_ctx *ctx, const grip_pinhole *cam, const float *scene_xyz, uint32_t width,
                                       uint32_t height, const grip_free_space_job *jobs, size_t n, double tolerance,
                                       float *violation)
{
    /* job k's chunks are [first[k], first[k + 1]); its counts seen[k], violations[k] */
    size_t *first = malloc((n + 1) * sizeof *first), *seen = calloc(n + 1, sizeof *seen),
           *violations = calloc(n + 1, sizeof *violations);
    if (!first || !seen || !violations) {
        free(first);
        free(seen);
        free(violations);
        return grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory for the free-space check of %zu poses", n);
    }
    first[0] = 0;
    for (size_t k = 0; k < n; k++)
        first[k + 1] = first[k] + (jobs[k].n_model + GRIP_FREE_SPACE_CHUNK - 1) / GRIP_FREE_SPACE_CHUNK;
    const size_t chunks = cam->valid ? first[n] : 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(grip_ctx_threads(ctx))
    for (size_t c = 0; c < chunks; c++) {
        size_t lo = 0, hi = n; /* the job holding chunk c: the last k with first[k] <= c */
        while (hi - lo > 1) {
            const size_t mid = lo + (hi - lo) / 2;
            if (first[mid] <= c)
                lo = mid;
            else
                hi = mid;
        }
        const grip_free_space_job *j = &jobs[lo];
        const size_t start = (c - first[lo]) * GRIP_FREE_SPACE_CHUNK;
        const size_t count = j->n_model - start < GRIP_FREE_SPACE_CHUNK ? j->n_model - start : GRIP_FREE_SPACE_CHUNK;
        size_t s = 0, v = 0;
        grip_free_space_count(cam, scene_xyz, width, height, j->model_xyz + 3 * start, count, j->pose, tolerance, &s,
                              &v);
#pragma omp atomic
        seen[lo] += s;
#pragma omp atomic
        violations[lo] += v;
    }
    for (size_t k = 0; k < n; k++)
        violation[k] = grip_free_space_fraction(cam->valid, seen[k], violations[k]);
    free(first);
    free(seen);
    free(violations);
    return GRIP_OK;
}
