/* surf.c -- the CPU twin of SURF (surf.h): every pixel, maximum and keypoint computed by surf_math.h's functions,
 * which the kernels call too; sums in the kernels' order. OpenMP over layer rows and over keypoints. */
#include "descriptor/surf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const float gauss25[36] = GRIP_SURF_GAUSS25_TABLE;

uint32_t grip_surf_largest_filter(const grip_surf_params *p)
{
    return grip_surf_filter(p->octaves - 1, p->intervals - 1);
}

grip_status grip_surf_check(grip_ctx *ctx, const grip_surf_params *p, uint32_t width, uint32_t height, const char *what)
{
    if (p->octaves < 1 || p->octaves > GRIP_SURF_MAX_OCTAVES)
        return grip_fail(ctx, GRIP_EINVAL, "%s: octaves %u is outside 1 .. %d", what, p->octaves,
                         GRIP_SURF_MAX_OCTAVES);
    if (p->intervals < 3 || p->intervals > GRIP_SURF_MAX_INTERVALS)
        return grip_fail(ctx, GRIP_EINVAL, "%s: intervals %u is outside 3 .. %d", what, p->intervals,
                         GRIP_SURF_MAX_INTERVALS);
    if (p->init_step < 1 || p->init_step > 8)
        return grip_fail(ctx, GRIP_EINVAL, "%s: init_step %u is outside 1 .. 8", what, p->init_step);
    if (!(p->threshold >= 0.0f) || !isfinite(p->threshold))
        return grip_fail(ctx, GRIP_EINVAL, "%s: threshold %g is not a finite number >= 0", what, (double)p->threshold);
    if (p->capacity < 1)
        return grip_fail(ctx, GRIP_EINVAL, "%s: capacity is 0", what);
    const uint32_t largest = grip_surf_largest_filter(p);
    if (width < largest || height < largest)
        return grip_fail(ctx, GRIP_EINVAL,
                         "%s: the image (%u x %u) is smaller than the largest filter (%u px, %u octaves of %u "
                         "intervals): lower octaves",
                         what, width, height, largest, p->octaves, p->intervals);
    if ((uint64_t)width * height * 255u > UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "%s: the image (%u x %u) has more than 16.8 million pixels", what, width,
                         height);
    return GRIP_OK;
}

void grip_surf_grey_image(const uint8_t *rgb, size_t n, uint8_t *grey)
{
    for (size_t i = 0; i < n; ++i)
        grey[i] = grip_surf_grey(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

void grip_surf_integral(const uint8_t *grey, uint32_t width, uint32_t height, uint32_t *ii)
{
    const size_t s = (size_t)width + 1;
    memset(ii, 0, s * sizeof *ii);
    for (uint32_t r = 0; r < height; ++r) {
        uint32_t row = 0;
        ii[(r + 1) * s] = 0;
        for (uint32_t c = 0; c < width; ++c) {
            row += grey[(size_t)r * width + c];
            ii[(r + 1) * s + c + 1] = ii[r * s + c + 1] + row;
        }
    }
}

static void responses(grip_ctx *ctx, const uint32_t *ii, uint32_t width, uint32_t height, const grip_surf_pyramid *pyr,
                      float *resp, uint8_t *lap)
{
    for (uint32_t l = 0; l < pyr->n_layers; ++l) {
        const grip_surf_layer *L = &pyr->layer[l];
#pragma omp parallel for num_threads(grip_ctx_threads(ctx)) schedule(static)
        for (int ar = 0; ar < (int)L->height; ++ar)
            for (uint32_t ac = 0; ac < L->width; ++ac) {
                const size_t at = L->offset + (size_t)ar * L->width + ac;
                resp[at] = grip_surf_response(ii, (int)width, (int)height, L, ar, (int)ac, lap + at);
            }
    }
}

/* The maxima of every (octave, middle interval), in (slot, row, column) order; writes at most capacity of them,
 * counts all. */
static size_t detect(const float *resp, const uint8_t *lap, const grip_surf_pyramid *pyr, const grip_surf_params *p,
                     grip_surf_keypoint *kps)
{
    size_t n = 0;
    for (uint32_t o = 0; o < p->octaves; ++o)
        for (uint32_t i = 1; i + 1 < p->intervals; ++i) {
            const uint32_t bi = pyr->map[o][i - 1], mi = pyr->map[o][i], ti = pyr->map[o][i + 1];
            const grip_surf_layer *T = &pyr->layer[ti];
            for (uint32_t r = 0; r < T->height; ++r)
                for (uint32_t c = 0; c < T->width; ++c) {
                    grip_surf_keypoint kp;
                    if (!grip_surf_extremum(resp, lap, pyr, bi, mi, ti, (int)r, (int)c, p->threshold, &kp))
                        continue;
                    kp.slot = o * p->intervals + i;
                    if (n < p->capacity)
                        kps[n] = kp;
                    ++n;
                }
        }
    return n;
}

/* Keeps the keypoints whose rounded pixel (clamped into the image) has a finite xyz; sets their pixel. */
static size_t lift(grip_surf_keypoint *kps, size_t n, const float *xyz, uint32_t width, uint32_t height)
{
    size_t kept = 0;
    for (size_t k = 0; k < n; ++k) {
        const int px = grip_surf_clampi(grip_surf_round(kps[k].x), 0, (int)width - 1);
        const int py = grip_surf_clampi(grip_surf_round(kps[k].y), 0, (int)height - 1);
        const uint32_t pixel = (uint32_t)py * width + (uint32_t)px;
        if (xyz && !(isfinite(xyz[3 * (size_t)pixel]) && isfinite(xyz[3 * (size_t)pixel + 1]) &&
                     isfinite(xyz[3 * (size_t)pixel + 2])))
            continue;
        kps[kept] = kps[k];
        kps[kept++].pixel = pixel;
    }
    return kept;
}

static float orientation(const uint32_t *ii, int width, int height, const grip_surf_keypoint *kp)
{
    float rx[GRIP_SURF_ORIENT_SAMPLES], ry[GRIP_SURF_ORIENT_SAMPLES], ang[GRIP_SURF_ORIENT_SAMPLES];
    for (int k = 0; k < GRIP_SURF_ORIENT_SAMPLES; ++k)
        grip_surf_orient_sample(ii, width, height, kp, gauss25, k, rx + k, ry + k, ang + k);
    float best = 0.0f, bx = 0.0f, by = 0.0f;
    for (int w = 0; w < GRIP_SURF_ORIENT_WINDOWS; ++w) {
        float sx, sy;
        grip_surf_window_sum(rx, ry, ang, w, &sx, &sy);
        const float n2 = grip_surf_norm2(sx, sy);
        if (n2 > best) {
            best = n2;
            bx = sx;
            by = sy;
        }
    }
    return grip_surf_angle(bx, by);
}

static void descriptor(const uint32_t *ii, int width, int height, const grip_surf_keypoint *kp,
                       const grip_surf_params *p, float *d)
{
    float co, si;
    grip_surf_frame(kp, p->upright, &co, &si);
    const int cv = grip_surf_cell_values(p->extended);
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b)
            grip_surf_cell(ii, width, height, kp, co, si, p->extended, a, b, d + (4 * a + b) * cv);
    grip_surf_normalise(d, 16 * cv);
    if (p->sign_column)
        d[16 * cv] = grip_surf_sign_value(kp, d[0]);
}

void grip_surf_result_free(grip_surf_result *r)
{
    if (!r)
        return;
    free(r->keypoints);
    free(r->descriptors);
    memset(r, 0, sizeof *r);
}

grip_status grip_surf_run(grip_ctx *ctx, const uint8_t *grey, const float *xyz, uint32_t width, uint32_t height,
                          const grip_surf_params *p, grip_surf_result *out)
{
    memset(out, 0, sizeof *out);
    grip_status s = grip_surf_check(ctx, p, width, height, "surf");
    if (s)
        return s;
    grip_surf_pyramid pyr;
    grip_surf_pyramid_make(p->octaves, p->intervals, p->init_step, width, height, &pyr);
    const uint32_t dim = grip_surf_dim(p);
    uint32_t *ii = malloc(((size_t)width + 1) * ((size_t)height + 1) * sizeof *ii);
    float *resp = malloc(pyr.total * sizeof *resp);
    uint8_t *lap = malloc(pyr.total);
    grip_surf_keypoint *kps = malloc((size_t)p->capacity * sizeof *kps);
    if (!ii || !resp || !lap || !kps) {
        s = grip_fail(ctx, GRIP_ENOMEM, "surf: out of memory for a %u x %u image", width, height);
        goto done;
    }
    grip_surf_integral(grey, width, height, ii);
    responses(ctx, ii, width, height, &pyr, resp, lap);
    out->n_found = detect(resp, lap, &pyr, p, kps);
    if (out->n_found > p->capacity) {
        s = grip_fail(ctx, GRIP_ECONFIG,
                      "surf: %zu keypoints found, more than capacity %u: raise capacity or "
                      "threshold",
                      out->n_found, p->capacity);
        goto done;
    }
    out->count = lift(kps, out->n_found, xyz, width, height);
    out->n_no_depth = out->n_found - out->count;
    out->descriptors = malloc((out->count ? out->count : 1) * dim * sizeof *out->descriptors);
    if (!out->descriptors) {
        s = grip_fail(ctx, GRIP_ENOMEM, "surf: out of memory for %zu descriptors", out->count);
        goto done;
    }
#pragma omp parallel for num_threads(grip_ctx_threads(ctx)) schedule(dynamic, 16)
    for (long k = 0; k < (long)out->count; ++k) {
        if (!p->upright)
            kps[k].orientation = orientation(ii, (int)width, (int)height, kps + k);
        descriptor(ii, (int)width, (int)height, kps + k, p, out->descriptors + (size_t)k * dim);
    }
    out->keypoints = kps;
    kps = NULL;
done:
    free(ii);
    free(resp);
    free(lap);
    free(kps);
    if (s) {
        const size_t found = out->n_found;
        grip_surf_result_free(out);
        out->n_found = found;
    }
    return s;
}
