/* surf_math.h -- SURF's per-pixel and per-keypoint arithmetic, written once for the CPU twin (surf.c) and the
 * kernels (cuda/descriptor/surf.cu), so that both detect the same keypoints bit for bit and give the same
 * descriptors up to the order-free rounding of exp/cos/sin (see below).
 *
 * Semantics are OpenSURF's (Evans 2009) where it is right, with these choices:
 *  - the grey image is 8 bits (BT.601 weights in integers) and the integral image is exact, uint32: box sums are
 *    integers, the same whatever order a parallel scan adds in; a box's value is its sum / 255 (OpenSURF's grey
 *    is in [0, 1]), so OpenSURF's threshold 0.0004 keeps its meaning;
 *  - box filters (lobe l = filter / 3), det = Dxx Dyy - 0.81 Dxy^2 with each D divided by the filter's area, the
 *    sign of the Laplacian (Dxx + Dyy >= 0), layers shared between octaves where the filter sizes coincide and
 *    read at the coarser layer's positions, the layer border (filter + 1) / (2 step), strict 3 x 3 x 3 maxima
 *    (ties rejected) at or above the threshold, a quadratic fit in (x, y, scale) whose offsets must all be below
 *    0.5 (else the point is rejected), scale sigma = 1.2 / 9 * filter;
 *  - orientation: Haar responses (size 4s) at the 109 samples of radius 6s, weighted by a Gaussian of sigma 2.5s,
 *    summed in 42 sliding windows of pi/3 starting every 0.15 rad; the longest sum's angle;
 *  - descriptor (M-SURF, as OpenSURF): 4 x 4 subregions of 9 x 9 samples at spacing s overlapping by 4, Haar
 *    size 2s, a Gaussian of sigma 2.5s around each subregion's centre and one of sigma 1.5 over the subregions,
 *    responses turned into the keypoint's frame (u along the orientation, v across): per subregion sum du, sum dv,
 *    sum |du|, sum |dv|; the extended (128) form splits du's sums by the sign of dv and dv's by the sign of du;
 *    then L2 normalised.
 *
 * Rounding: every float/double operation goes through math/rounded.h, so nvcc contracts nothing; angles use
 * glibc's atanf bit for bit (math/libm_float.h). exp, cos and sin are taken in double and rounded to float; the
 * device's double functions are within an ulp of glibc's, so the float results agree except in a 2^-29-likely
 * case, and even then by one float ulp of a weight. Sums are added in one fixed order on both sides. */
#ifndef GRIP_DESCRIPTOR_SURF_MATH_H
#define GRIP_DESCRIPTOR_SURF_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "math/libm_float.h"
#include "math/rounded.h"

#define GRIP_SURF_MAX_OCTAVES 6
#define GRIP_SURF_MAX_INTERVALS 6
#define GRIP_SURF_MAX_LAYERS (GRIP_SURF_MAX_OCTAVES * GRIP_SURF_MAX_INTERVALS)
#define GRIP_SURF_ORIENT_SAMPLES 109 /* (i, j) in [-6, 6]^2 with i^2 + j^2 < 36 */
#define GRIP_SURF_ORIENT_WINDOWS 42  /* window starts 0, 0.15, ..., 6.15 (added up in float, below 2 pi) */
#define GRIP_SURF_PI 3.14159265f
#define GRIP_SURF_TWO_PI 6.28318531f

/* The Gaussian of sigma 2.5 at squared distance d2 = 0 .. 35, 1 / (2 pi 6.25) exp(-d2 / 12.5), rounded to float:
 * the orientation samples' weights. A macro so that each side makes its own table (host static, device
 * __constant__). */
#define GRIP_SURF_GAUSS25_TABLE                                                                               \
    {                                                                                                         \
        0x1.a13714p-6f, 0x1.81235cp-6f, 0x1.6386fcp-6f, 0x1.48316cp-6f, 0x1.2ef5dap-6f, 0x1.17aaecp-6f,       \
            0x1.022a72p-6f, 0x1.dca256p-7f, 0x1.b7fd2p-7f, 0x1.96292cp-7f, 0x1.76ef06p-7f, 0x1.5a1b8p-7f,     \
            0x1.3f7f56p-7f, 0x1.26eeecp-7f, 0x1.1041fcp-7f, 0x1.f6a6bp-8f, 0x1.d00168p-8f, 0x1.ac54cp-8f,     \
            0x1.8b663ep-8f, 0x1.6cffe8p-8f, 0x1.50efe8p-8f, 0x1.37083cp-8f, 0x1.1f1e7p-8f, 0x1.090b4cp-8f,    \
            0x1.e9554ap-9f, 0x1.c3b62p-9f, 0x1.a0fb72p-9f, 0x1.80ec5p-9f, 0x1.63542cp-9f, 0x1.480284p-9f,     \
            0x1.2eca8ep-9f, 0x1.1782f4p-9f, 0x1.02058cp-9f, 0x1.dc5e36p-10f, 0x1.b7be3cp-10f, 0x1.95ef1ep-10f \
    }

/* A detected interest point, in pixels of the image (x the column, y the row). */
typedef struct grip_surf_keypoint {
    float x, y;        /* sub-pixel position */
    float scale;       /* sigma, 1.2 / 9 of the interpolated filter size */
    float orientation; /* radians in [0, 2 pi); 0 when upright */
    float response;    /* det of the Hessian at the detected sample (the threshold's units) */
    int32_t laplacian; /* 1 when Dxx + Dyy >= 0 (a dark blob on light ground), else 0 */
    uint32_t pixel;    /* row * width + column of the rounded position: the cloud point it was lifted through */
    uint32_t slot;     /* octave * intervals + interval of the middle layer it was found in */
} grip_surf_keypoint;

/* One response layer: a filter size sampled every `step` pixels over width x height samples, its responses at
 * `offset` in the layers' common buffer. */
typedef struct grip_surf_layer {
    uint32_t filter, step, width, height;
    size_t offset;
} grip_surf_layer;

/* The scale space: each distinct filter size once, computed at the step of the first octave that uses it; map
 * gives the layer of (octave, interval). */
typedef struct grip_surf_pyramid {
    uint32_t octaves, intervals, n_layers;
    size_t total; /* samples in all layers */
    grip_surf_layer layer[GRIP_SURF_MAX_LAYERS];
    uint8_t map[GRIP_SURF_MAX_OCTAVES][GRIP_SURF_MAX_INTERVALS];
} grip_surf_pyramid;

/* Filter size of (octave, interval), both from 0: 9, 15, 21, 27 / 15, 27, 39, 51 / 27, 51, 75, 99 / ... */
GRIP_HD static inline uint32_t grip_surf_filter(uint32_t octave, uint32_t interval)
{
    return 3u * ((2u << octave) * (interval + 1u) + 1u);
}

GRIP_HD static inline void grip_surf_pyramid_make(uint32_t octaves, uint32_t intervals, uint32_t init_step,
                                                  uint32_t width, uint32_t height, grip_surf_pyramid *p)
{
    p->octaves = octaves;
    p->intervals = intervals;
    p->n_layers = 0;
    p->total = 0;
    for (uint32_t o = 0; o < octaves; ++o)
        for (uint32_t i = 0; i < intervals; ++i) {
            const uint32_t f = grip_surf_filter(o, i);
            uint32_t l = 0;
            while (l < p->n_layers && p->layer[l].filter != f)
                ++l;
            if (l == p->n_layers) {
                grip_surf_layer *L = &p->layer[p->n_layers++];
                L->filter = f;
                L->step = init_step << o;
                L->width = width / L->step;
                L->height = height / L->step;
                L->offset = p->total;
                p->total += (size_t)L->width * L->height;
            }
            p->map[o][i] = (uint8_t)l;
        }
}

GRIP_HD static inline int grip_surf_clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Sum of the grey values of rows [row, row + rows) and columns [col, col + cols), clipped to the image, from the
 * integral image ii ((height + 1) x (width + 1), ii[r][c] = sum over rows < r and columns < c). Exact: uint32
 * arithmetic wraps, and the true sum fits (the caller keeps 255 width height below 2^32). */
GRIP_HD static inline int64_t grip_surf_box(const uint32_t *ii, int width, int height, int row, int col, int rows,
                                            int cols)
{
    const int r1 = grip_surf_clampi(row, 0, height), r2 = grip_surf_clampi(row + rows, 0, height);
    const int c1 = grip_surf_clampi(col, 0, width), c2 = grip_surf_clampi(col + cols, 0, width);
    const size_t s = (size_t)width + 1;
    const uint32_t v = ii[(size_t)r2 * s + c2] - ii[(size_t)r1 * s + c2] - ii[(size_t)r2 * s + c1] +
                       ii[(size_t)r1 * s + c1];
    return (int64_t)v;
}

/* BT.601 luma of one pixel, rounded to the nearest integer. */
GRIP_HD static inline uint8_t grip_surf_grey(uint8_t r, uint8_t g, uint8_t b)
{
    return (uint8_t)((299u * r + 587u * g + 114u * b + 500u) / 1000u);
}

/* det of the box Hessian of layer L at its sample (ar, ac), and the sign of its Laplacian. */
GRIP_HD static inline float grip_surf_response(const uint32_t *ii, int width, int height, const grip_surf_layer *L,
                                               int ar, int ac, uint8_t *laplacian)
{
    const int r = ar * (int)L->step, c = ac * (int)L->step;
    const int w = (int)L->filter, l = w / 3, b = (w - 1) / 2;
    const int64_t xx = grip_surf_box(ii, width, height, r - l + 1, c - b, 2 * l - 1, w) -
                       3 * grip_surf_box(ii, width, height, r - l + 1, c - l / 2, 2 * l - 1, l);
    const int64_t yy = grip_surf_box(ii, width, height, r - b, c - l + 1, w, 2 * l - 1) -
                       3 * grip_surf_box(ii, width, height, r - l / 2, c - l + 1, l, 2 * l - 1);
    const int64_t xy = grip_surf_box(ii, width, height, r - l, c + 1, l, l) +
                       grip_surf_box(ii, width, height, r + 1, c - l, l, l) -
                       grip_surf_box(ii, width, height, r - l, c - l, l, l) -
                       grip_surf_box(ii, width, height, r + 1, c + 1, l, l);
    const float norm = GRIP_FDIV(1.0f, (float)(255u * (uint32_t)w * (uint32_t)w)); /* grey in [0, 1], per area */
    const float dxx = GRIP_FMUL((float)xx, norm), dyy = GRIP_FMUL((float)yy, norm), dxy = GRIP_FMUL((float)xy, norm);
    *laplacian = GRIP_FADD(dxx, dyy) >= 0.0f ? 1 : 0;
    return GRIP_FSUB(GRIP_FMUL(dxx, dyy), GRIP_FMUL(GRIP_FMUL(0.81f, dxy), dxy));
}

/* Response of layer L at the position of sample (r, c) of a layer `ratio` times coarser. */
GRIP_HD static inline float grip_surf_at(const float *resp, const grip_surf_layer *L, uint32_t ratio, int r, int c)
{
    return resp[L->offset + (size_t)(ratio * (uint32_t)r) * L->width + ratio * (uint32_t)c];
}

/* The 3 x 3 x 3 test and the quadratic fit at sample (r, c) of the top layer t of the triple b < m < t (layer
 * indices of the pyramid): 1 and *kp (all but orientation and pixel) when (r, c) is a strict maximum at or above
 * threshold whose fitted offsets are all below 0.5, else 0. */
GRIP_HD static inline int grip_surf_extremum(const float *resp, const uint8_t *lap, const grip_surf_pyramid *p,
                                             uint32_t bi, uint32_t mi, uint32_t ti, int r, int c, float threshold,
                                             grip_surf_keypoint *kp)
{
    const grip_surf_layer *B = &p->layer[bi], *M = &p->layer[mi], *T = &p->layer[ti];
    const int border = (int)((T->filter + 1) / (2 * T->step));
    if (r <= border || r >= (int)T->height - border || c <= border || c >= (int)T->width - border)
        return 0;
    const uint32_t rm = T->step / M->step, rb = T->step / B->step;
    const float v = grip_surf_at(resp, M, rm, r, c);
    if (!(v >= threshold))
        return 0;
    for (int dr = -1; dr <= 1; ++dr)
        for (int dc = -1; dc <= 1; ++dc)
            if (grip_surf_at(resp, T, 1, r + dr, c + dc) >= v ||
                ((dr != 0 || dc != 0) && grip_surf_at(resp, M, rm, r + dr, c + dc) >= v) ||
                grip_surf_at(resp, B, rb, r + dr, c + dc) >= v)
                return 0;
    /* gradient and Hessian of the response in (column, row, layer), central differences, in double */
    const double m0 = v;
    const double mr = grip_surf_at(resp, M, rm, r, c + 1), ml = grip_surf_at(resp, M, rm, r, c - 1);
    const double md = grip_surf_at(resp, M, rm, r + 1, c), mu = grip_surf_at(resp, M, rm, r - 1, c);
    const double t0 = grip_surf_at(resp, T, 1, r, c), b0 = grip_surf_at(resp, B, rb, r, c);
    const double g0 = GRIP_DDIV(GRIP_DSUB(mr, ml), 2.0), g1 = GRIP_DDIV(GRIP_DSUB(md, mu), 2.0),
                 g2 = GRIP_DDIV(GRIP_DSUB(t0, b0), 2.0);
    const double two_m = GRIP_DMUL(2.0, m0);
    const double hxx = GRIP_DSUB(GRIP_DADD(mr, ml), two_m), hyy = GRIP_DSUB(GRIP_DADD(md, mu), two_m),
                 hss = GRIP_DSUB(GRIP_DADD(t0, b0), two_m);
    const double hxy = GRIP_DDIV(GRIP_DADD(GRIP_DSUB(GRIP_DSUB((double)grip_surf_at(resp, M, rm, r + 1, c + 1),
                                                               (double)grip_surf_at(resp, M, rm, r + 1, c - 1)),
                                                     (double)grip_surf_at(resp, M, rm, r - 1, c + 1)),
                                           (double)grip_surf_at(resp, M, rm, r - 1, c - 1)),
                                 4.0);
    const double hxs = GRIP_DDIV(GRIP_DADD(GRIP_DSUB(GRIP_DSUB((double)grip_surf_at(resp, T, 1, r, c + 1),
                                                               (double)grip_surf_at(resp, T, 1, r, c - 1)),
                                                     (double)grip_surf_at(resp, B, rb, r, c + 1)),
                                           (double)grip_surf_at(resp, B, rb, r, c - 1)),
                                 4.0);
    const double hys = GRIP_DDIV(GRIP_DADD(GRIP_DSUB(GRIP_DSUB((double)grip_surf_at(resp, T, 1, r + 1, c),
                                                               (double)grip_surf_at(resp, T, 1, r - 1, c)),
                                                     (double)grip_surf_at(resp, B, rb, r + 1, c)),
                                           (double)grip_surf_at(resp, B, rb, r - 1, c)),
                                 4.0);
    /* offset = -H^-1 g by the adjugate */
    const double a00 = GRIP_DSUB(GRIP_DMUL(hyy, hss), GRIP_DMUL(hys, hys));
    const double a01 = GRIP_DSUB(GRIP_DMUL(hxs, hys), GRIP_DMUL(hxy, hss));
    const double a02 = GRIP_DSUB(GRIP_DMUL(hxy, hys), GRIP_DMUL(hxs, hyy));
    const double a11 = GRIP_DSUB(GRIP_DMUL(hxx, hss), GRIP_DMUL(hxs, hxs));
    const double a12 = GRIP_DSUB(GRIP_DMUL(hxy, hxs), GRIP_DMUL(hxx, hys));
    const double a22 = GRIP_DSUB(GRIP_DMUL(hxx, hyy), GRIP_DMUL(hxy, hxy));
    const double det = GRIP_DADD(GRIP_DADD(GRIP_DMUL(hxx, a00), GRIP_DMUL(hxy, a01)), GRIP_DMUL(hxs, a02));
    if (!(det != 0.0) || !isfinite(det))
        return 0;
    const double oc = -GRIP_DDIV(GRIP_DADD(GRIP_DADD(GRIP_DMUL(a00, g0), GRIP_DMUL(a01, g1)), GRIP_DMUL(a02, g2)), det);
    const double orow = -GRIP_DDIV(GRIP_DADD(GRIP_DADD(GRIP_DMUL(a01, g0), GRIP_DMUL(a11, g1)), GRIP_DMUL(a12, g2)),
                                   det);
    const double os = -GRIP_DDIV(GRIP_DADD(GRIP_DADD(GRIP_DMUL(a02, g0), GRIP_DMUL(a12, g1)), GRIP_DMUL(a22, g2)), det);
    if (!(fabs(oc) < 0.5 && fabs(orow) < 0.5 && fabs(os) < 0.5))
        return 0;
    kp->x = (float)GRIP_DMUL(GRIP_DADD((double)c, oc), (double)T->step);
    kp->y = (float)GRIP_DMUL(GRIP_DADD((double)r, orow), (double)T->step);
    kp->scale = (float)GRIP_DMUL(GRIP_DDIV(1.2, 9.0),
                                 GRIP_DADD((double)M->filter, GRIP_DMUL(os, (double)(M->filter - B->filter))));
    kp->orientation = 0.0f;
    kp->response = v;
    kp->laplacian = lap[M->offset + (size_t)(rm * (uint32_t)r) * M->width + rm * (uint32_t)c];
    kp->pixel = 0;
    return 1;
}

/* OpenSURF's fRound: the nearest integer, halves up. */
GRIP_HD static inline int grip_surf_round(float v)
{
    return (int)floorf(GRIP_FADD(v, 0.5f));
}

/* Haar wavelet responses of side s at (row, col), in grey units ([0, 1] per pixel): x (right minus left) and y
 * (bottom minus top). */
GRIP_HD static inline void grip_surf_haar(const uint32_t *ii, int width, int height, int row, int col, int s, float *hx,
                                          float *hy)
{
    const int h = s / 2;
    const int64_t x = grip_surf_box(ii, width, height, row - h, col, s, h) -
                      grip_surf_box(ii, width, height, row - h, col - h, s, h);
    const int64_t y = grip_surf_box(ii, width, height, row, col - h, h, s) -
                      grip_surf_box(ii, width, height, row - h, col - h, h, s);
    *hx = GRIP_FDIV((float)x, 255.0f);
    *hy = GRIP_FDIV((float)y, 255.0f);
}

/* Angle of (x, y) in [0, 2 pi), 0 for x == 0 (OpenSURF's getAngle), with glibc's atanf. */
GRIP_HD static inline float grip_surf_angle(float x, float y)
{
    if (x > 0.0f && y >= 0.0f)
        return grip_atanf(GRIP_FDIV(y, x));
    if (x < 0.0f && y >= 0.0f)
        return GRIP_FSUB(GRIP_SURF_PI, grip_atanf(GRIP_FDIV(-y, x)));
    if (x < 0.0f && y < 0.0f)
        return GRIP_FADD(GRIP_SURF_PI, grip_atanf(GRIP_FDIV(y, x)));
    if (x > 0.0f && y < 0.0f)
        return GRIP_FSUB(GRIP_SURF_TWO_PI, grip_atanf(GRIP_FDIV(-y, x)));
    return 0.0f;
}

/* The orientation sample number `index` (0 .. 108, i outer, j inner) of keypoint kp: the weighted Haar responses
 * and their angle. gauss25: GRIP_SURF_GAUSS25_TABLE. */
GRIP_HD static inline void grip_surf_orient_sample(const uint32_t *ii, int width, int height,
                                                   const grip_surf_keypoint *kp, const float *gauss25, int index,
                                                   float *rx, float *ry, float *ang)
{
    const int s = grip_surf_round(kp->scale), r = grip_surf_round(kp->y), c = grip_surf_round(kp->x);
    int n = 0;
    for (int i = -6; i <= 6; ++i)
        for (int j = -6; j <= 6; ++j) {
            if (i * i + j * j >= 36)
                continue;
            if (n++ != index)
                continue;
            float hx, hy;
            grip_surf_haar(ii, width, height, r + j * s, c + i * s, 4 * s, &hx, &hy);
            const float g = gauss25[i * i + j * j];
            *rx = GRIP_FMUL(g, hx);
            *ry = GRIP_FMUL(g, hy);
            *ang = grip_surf_angle(*rx, *ry);
            return;
        }
}

/* Start of orientation window w: w additions of 0.15 in float, as OpenSURF's loop. */
GRIP_HD static inline float grip_surf_window_start(int w)
{
    float a = 0.0f;
    for (int k = 0; k < w; ++k)
        a = GRIP_FADD(a, 0.15f);
    return a;
}

/* Sum of the samples whose angle lies in window w (a pi/3 arc, open at both ends, wrapping at 2 pi). */
GRIP_HD static inline void grip_surf_window_sum(const float *rx, const float *ry, const float *ang, int w, float *sx,
                                                float *sy)
{
    const float a1 = grip_surf_window_start(w);
    const float third = GRIP_FDIV(GRIP_SURF_PI, 3.0f);
    const float a2 = GRIP_FADD(a1, third) > GRIP_SURF_TWO_PI ? GRIP_FSUB(a1, GRIP_FMUL(5.0f, third))
                                                             : GRIP_FADD(a1, third);
    float x = 0.0f, y = 0.0f;
    for (int k = 0; k < GRIP_SURF_ORIENT_SAMPLES; ++k) {
        const float a = ang[k];
        const int in = a1 < a2 ? (a1 < a && a < a2) : ((a > 0.0f && a < a2) || (a > a1 && a < GRIP_SURF_TWO_PI));
        if (in) {
            x = GRIP_FADD(x, rx[k]);
            y = GRIP_FADD(y, ry[k]);
        }
    }
    *sx = x;
    *sy = y;
}

GRIP_HD static inline float grip_surf_norm2(float x, float y)
{
    return GRIP_FADD(GRIP_FMUL(x, x), GRIP_FMUL(y, y));
}

/* A Gaussian weight exp(-d2 / (2 sigma^2)) / (2 pi sigma^2), in double, rounded to float. */
GRIP_HD static inline float grip_surf_gauss(double d2, double sigma)
{
    const double two_s2 = GRIP_DMUL(2.0, GRIP_DMUL(sigma, sigma));
    return (float)GRIP_DDIV(exp(-GRIP_DDIV(d2, two_s2)), GRIP_DMUL(3.14159265358979323846, two_s2));
}

/* Values per subregion: 4, or 8 extended. */
GRIP_HD static inline int grip_surf_cell_values(int extended)
{
    return extended ? 8 : 4;
}

/* cos and sin of the orientation (1, 0 upright), in double, rounded to float. */
GRIP_HD static inline void grip_surf_frame(const grip_surf_keypoint *kp, int upright, float *co, float *si)
{
    *co = upright ? 1.0f : (float)cos((double)kp->orientation);
    *si = upright ? 0.0f : (float)sin((double)kp->orientation);
}

/* The values of subregion (a, b) (a along u, b along v, each 0 .. 3) of keypoint kp, weighted by the subregion's
 * Gaussian: out[0 .. 3] = sum du, sum dv, sum |du|, sum |dv|; extended: out[0 .. 7] = sum du and sum |du| where
 * dv < 0, then where dv >= 0, sum dv and sum |dv| where du < 0, then where du >= 0. */
GRIP_HD static inline void grip_surf_cell(const uint32_t *ii, int width, int height, const grip_surf_keypoint *kp,
                                          float co, float si, int extended, int a, int b, float *out)
{
    const int x = grip_surf_round(kp->x), y = grip_surf_round(kp->y);
    const float s = kp->scale;
    const int haar = 2 * grip_surf_round(s);
    const int u0 = -12 + 5 * a, v0 = -12 + 5 * b; /* first sample of the subregion, in units of s */
    /* the subregion's centre, rounded to a pixel */
    const float cu = GRIP_FMUL((float)(u0 + 4), s), cv = GRIP_FMUL((float)(v0 + 4), s);
    const int xs = grip_surf_round(GRIP_FADD((float)x, GRIP_FSUB(GRIP_FMUL(cu, co), GRIP_FMUL(cv, si))));
    const int ys = grip_surf_round(GRIP_FADD((float)y, GRIP_FADD(GRIP_FMUL(cu, si), GRIP_FMUL(cv, co))));
    const double sigma = GRIP_DMUL(2.5, (double)s);
    float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (int k = u0; k < u0 + 9; ++k)
        for (int l = v0; l < v0 + 9; ++l) {
            const float su = GRIP_FMUL((float)k, s), sv = GRIP_FMUL((float)l, s);
            const int px = grip_surf_round(GRIP_FADD((float)x, GRIP_FSUB(GRIP_FMUL(su, co), GRIP_FMUL(sv, si))));
            const int py = grip_surf_round(GRIP_FADD((float)y, GRIP_FADD(GRIP_FMUL(su, si), GRIP_FMUL(sv, co))));
            float hx, hy;
            grip_surf_haar(ii, width, height, py, px, haar, &hx, &hy);
            const int ex = xs - px, ey = ys - py;
            const float g = grip_surf_gauss((double)(ex * ex + ey * ey), sigma);
            const float du = GRIP_FMUL(g, GRIP_FADD(GRIP_FMUL(hx, co), GRIP_FMUL(hy, si)));
            const float dv = GRIP_FMUL(g, GRIP_FSUB(GRIP_FMUL(hy, co), GRIP_FMUL(hx, si)));
            if (!extended) {
                acc[0] = GRIP_FADD(acc[0], du);
                acc[1] = GRIP_FADD(acc[1], dv);
                acc[2] = GRIP_FADD(acc[2], fabsf(du));
                acc[3] = GRIP_FADD(acc[3], fabsf(dv));
            } else {
                const int iu = dv >= 0.0f ? 2 : 0, iv = du >= 0.0f ? 6 : 4;
                acc[iu] = GRIP_FADD(acc[iu], du);
                acc[iu + 1] = GRIP_FADD(acc[iu + 1], fabsf(du));
                acc[iv] = GRIP_FADD(acc[iv], dv);
                acc[iv + 1] = GRIP_FADD(acc[iv + 1], fabsf(dv));
            }
        }
    const double da = (double)a - 1.5, db = (double)b - 1.5;
    const float g2 = grip_surf_gauss(GRIP_DADD(GRIP_DMUL(da, da), GRIP_DMUL(db, db)), 1.5);
    for (int v = 0; v < grip_surf_cell_values(extended); ++v)
        out[v] = GRIP_FMUL(acc[v], g2);
}

/* Cell (a, b)'s values start at (4 a + b) * cell_values in the descriptor. Unit L2 length over dim values, summed
 * in order; a zero vector becomes a NaN row (an invalid keypoint). */
GRIP_HD static inline void grip_surf_normalise(float *d, int dim)
{
    float len = 0.0f;
    for (int i = 0; i < dim; ++i)
        len = GRIP_FADD(len, GRIP_FMUL(d[i], d[i]));
    const float norm = GRIP_FSQRT(len);
    for (int i = 0; i < dim; ++i)
        d[i] = norm > 0.0f ? GRIP_FDIV(d[i], norm) : NAN;
}

/* The sign column's value (grip_surf_params.sign_column): +1 or -1 by the Laplacian's sign, NaN on an invalid
 * (NaN) row. */
GRIP_HD static inline float grip_surf_sign_value(const grip_surf_keypoint *kp, float first)
{
    return first != first ? NAN : kp->laplacian ? 1.0f : -1.0f;
}

#endif
