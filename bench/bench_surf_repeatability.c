/* bench_surf_repeatability.c -- SURF's repeatability and matching precision under known homographies of a real
 * image: the rgb of the organized cloud argv[1] (e.g. milk_cartoon_all_small_clorox.pcd) warped by seeded
 * homographies about the image centre, in four families of `per` seeds each (argv[2], default 5):
 *   rotation     any angle, scale 1;
 *   scale        0.5 .. 2 (log-uniform), no rotation;
 *   perspective  angle within +-0.3, scale 0.8 .. 1.25, projective terms up to 6e-4 per pixel;
 *   combined     any angle, scale 0.5 .. 2, the same projective terms.
 * The warp is bilinear; pixels that map outside the source are black and a keypoint counts only where both
 * images see it (its true position 20 px inside the other image's valid area).
 * Keypoints come from the CPU twin (grip_surf_run; the kernels give the same, test_surf_cuda). Per pair:
 *   repeatability  one-to-one pairs (nearest first) whose true position is within 2.5 px and whose scale agrees
 *                  with the homography's local scale within a factor 1.5, over the fewer of the two counts in the
 *                  common area;
 *   matching       each common keypoint of the first image against all of the second's with the same sign of
 *                  the Laplacian: nearest descriptor, kept when its Euclidean distance is below 0.65 of the second
 *                  nearest; precision = kept matches whose true position is within 2.5 px, over kept matches;
 *                  matching score = correct kept matches over the common keypoints of the first image.
 * Prints one row per pair and the mean per family (tab separated). Not a timing; the name follows bench/.
 * With --svg OUT.svg also draws the means as a bar chart (eval/svg_bars.h): per family its repeatability and its
 * matching precision side by side.
 * Usage: bench_surf_repeatability [--svg OUT.svg] cloud.pcd [per] [upright]. Exits 1 on a failure. */
#define _POSIX_C_SOURCE 200809L
#include "core/ctx.h"
#include "descriptor/surf.h"
#include "eval/svg_bars.h"
#include "io/cloud_io.h"
#include "surf_scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIX_TOL 2.5
#define MARGIN 20.0
#define RATIO 0.65

typedef struct {
    double m[9];
} mat3;

static mat3 mul(mat3 a, mat3 b)
{
    mat3 r;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            r.m[3 * i + j] = a.m[3 * i] * b.m[j] + a.m[3 * i + 1] * b.m[3 + j] + a.m[3 * i + 2] * b.m[6 + j];
    return r;
}

static mat3 inverse(mat3 a)
{
    const double *m = a.m;
    const double c0 = m[4] * m[8] - m[5] * m[7], c1 = m[5] * m[6] - m[3] * m[8], c2 = m[3] * m[7] - m[4] * m[6];
    const double det = m[0] * c0 + m[1] * c1 + m[2] * c2;
    mat3 r = {{c0 / det, (m[2] * m[7] - m[1] * m[8]) / det, (m[1] * m[5] - m[2] * m[4]) / det, c1 / det,
               (m[0] * m[8] - m[2] * m[6]) / det, (m[2] * m[3] - m[0] * m[5]) / det, c2 / det,
               (m[1] * m[6] - m[0] * m[7]) / det, (m[0] * m[4] - m[1] * m[3]) / det}};
    return r;
}

static int apply(mat3 h, double x, double y, double *ox, double *oy)
{
    const double w = h.m[6] * x + h.m[7] * y + h.m[8];
    if (!(w > 1e-9))
        return 0;
    *ox = (h.m[0] * x + h.m[1] * y + h.m[2]) / w;
    *oy = (h.m[3] * x + h.m[4] * y + h.m[5]) / w;
    return 1;
}

/* sqrt |det J| of h at (x, y): how much h scales lengths there. */
static double local_scale(mat3 h, double x, double y)
{
    double x0, y0, x1, y1, x2, y2;
    if (!apply(h, x, y, &x0, &y0) || !apply(h, x + 1, y, &x1, &y1) || !apply(h, x, y + 1, &x2, &y2))
        return NAN;
    return sqrt(fabs((x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0)));
}

static grip_surf_rng rng; /* the trial's stream (surf_scene.h) */

static double uniform(double lo, double hi)
{
    return grip_surf_rng_uniform(&rng, lo, hi);
}

#define N_FAMILIES 4
static const char *families[N_FAMILIES] = {"rotation", "scale", "perspective", "combined"};

static mat3 homography(int family, uint32_t w, uint32_t h)
{
    const double pi = 3.14159265358979323846;
    double angle = 0, scale = 1, px = 0, py = 0;
    if (family == 0 || family == 3)
        angle = uniform(-pi, pi);
    if (family == 2)
        angle = uniform(-0.3, 0.3);
    if (family == 1 || family == 3)
        scale = exp(uniform(log(0.5), log(2.0)));
    if (family == 2)
        scale = exp(uniform(log(0.8), log(1.25)));
    if (family >= 2) {
        px = uniform(-6e-4, 6e-4);
        py = uniform(-6e-4, 6e-4);
    }
    const double cx = 0.5 * (w - 1), cy = 0.5 * (h - 1);
    mat3 to = {{1, 0, -cx, 0, 1, -cy, 0, 0, 1}}, back = {{1, 0, cx, 0, 1, cy, 0, 0, 1}};
    mat3 rs = {{scale * cos(angle), -scale * sin(angle), 0, scale * sin(angle), scale * cos(angle), 0, 0, 0, 1}};
    mat3 persp = {{1, 0, 0, 0, 1, 0, px, py, 1}};
    return mul(back, mul(persp, mul(rs, to)));
}

/* out(x, y) = grey(H^-1 (x, y)), bilinear; valid 0 where that falls outside. */
static void warp(const uint8_t *grey, uint32_t w, uint32_t h, mat3 H, uint8_t *out, uint8_t *valid)
{
    const mat3 inv = inverse(H);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            double sx, sy;
            const size_t at = (size_t)y * w + x;
            out[at] = 0;
            valid[at] = 0;
            if (!apply(inv, x, y, &sx, &sy) || sx < 0 || sy < 0 || sx > w - 1 || sy > h - 1)
                continue;
            int x0 = (int)sx, y0 = (int)sy;
            if (x0 > (int)w - 2)
                x0 = (int)w - 2;
            if (y0 > (int)h - 2)
                y0 = (int)h - 2;
            const double fx = sx - x0, fy = sy - y0;
            const uint8_t *p = grey + (size_t)y0 * w + x0;
            const double v = (1 - fy) * ((1 - fx) * p[0] + fx * p[1]) + fy * ((1 - fx) * p[w] + fx * p[w + 1]);
            out[at] = (uint8_t)(v + 0.5);
            valid[at] = 1;
        }
}

/* (x, y) lies MARGIN px inside the valid area of a w x h image (valid NULL: the whole image). */
static int inside(const uint8_t *valid, uint32_t w, uint32_t h, double x, double y)
{
    if (!(x >= MARGIN && y >= MARGIN && x <= w - 1 - MARGIN && y <= h - 1 - MARGIN))
        return 0;
    if (!valid)
        return 1;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
            const long px = lround(x + dx * MARGIN), py = lround(y + dy * MARGIN);
            if (!valid[(size_t)py * w + (size_t)px])
                return 0;
        }
    return 1;
}

typedef struct {
    double repeat, precision, score;
    size_t common_a, common_b, pairs, matches, correct;
} pair_result;

static pair_result evaluate(const grip_surf_result *a, const grip_surf_result *b, mat3 H, const uint8_t *valid,
                            uint32_t w, uint32_t h, uint32_t dim)
{
    pair_result r;
    memset(&r, 0, sizeof r);
    const mat3 inv = inverse(H);
    double *tx = malloc((a->count + 1) * sizeof *tx), *ty = malloc((a->count + 1) * sizeof *ty);
    char *ca = calloc(a->count + 1, 1), *used = calloc(b->count + 1, 1);
    for (size_t i = 0; i < a->count; ++i) {
        ca[i] = apply(H, a->keypoints[i].x, a->keypoints[i].y, tx + i, ty + i) &&
                inside(NULL, w, h, a->keypoints[i].x, a->keypoints[i].y) && inside(valid, w, h, tx[i], ty[i]);
        r.common_a += ca[i];
    }
    for (size_t j = 0; j < b->count; ++j) {
        double sx, sy;
        r.common_b += inside(valid, w, h, b->keypoints[j].x, b->keypoints[j].y) &&
                      apply(inv, b->keypoints[j].x, b->keypoints[j].y, &sx, &sy) && inside(NULL, w, h, sx, sy);
    }
    /* repeatability: each common keypoint of a takes the nearest unused one of b that agrees */
    for (size_t i = 0; i < a->count; ++i) {
        if (!ca[i])
            continue;
        const double want = a->keypoints[i].scale * local_scale(H, a->keypoints[i].x, a->keypoints[i].y);
        long best = -1;
        double bd = PIX_TOL;
        for (size_t j = 0; j < b->count; ++j) {
            const double d = hypot(b->keypoints[j].x - tx[i], b->keypoints[j].y - ty[i]);
            if (used[j] || d > bd || fabs(log(b->keypoints[j].scale / want)) > log(1.5))
                continue;
            bd = d;
            best = (long)j;
        }
        if (best >= 0) {
            used[best] = 1;
            ++r.pairs;
        }
    }
    const size_t fewer = r.common_a < r.common_b ? r.common_a : r.common_b;
    r.repeat = fewer ? (double)r.pairs / (double)fewer : NAN;
    /* matching with the ratio test and the sign of the Laplacian */
    for (size_t i = 0; i < a->count; ++i) {
        if (!ca[i])
            continue;
        double d1 = INFINITY, d2 = INFINITY;
        long best = -1;
        for (size_t j = 0; j < b->count; ++j) {
            if (b->keypoints[j].laplacian != a->keypoints[i].laplacian)
                continue;
            double s = 0;
            for (uint32_t v = 0; v < dim; ++v) {
                const double e = (double)a->descriptors[i * dim + v] - b->descriptors[j * dim + v];
                s += e * e;
            }
            s = sqrt(s);
            if (s < d1) {
                d2 = d1;
                d1 = s;
                best = (long)j;
            } else if (s < d2) {
                d2 = s;
            }
        }
        if (best < 0 || !(d1 < RATIO * d2))
            continue;
        ++r.matches;
        r.correct += hypot(b->keypoints[best].x - tx[i], b->keypoints[best].y - ty[i]) <= PIX_TOL;
    }
    r.precision = r.matches ? (double)r.correct / (double)r.matches : NAN;
    r.score = r.common_a ? (double)r.correct / (double)r.common_a : NAN;
    free(tx);
    free(ty);
    free(ca);
    free(used);
    return r;
}

/* The per-family means as bars, repeatability then precision for each family; NaN (no pair had a common area or
 * a match) draws as "n/a". Returns 0, or 1 when `path` cannot be written. */
static int write_svg(const char *path, const char *cloud, int upright, int per, const double *repeat,
                     const double *precision)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    const char *base = strrchr(cloud, '/');
    char title[256];
    snprintf(title, sizeof title, "SURF %s, %s, %d seeds a family", upright ? "upright" : "oriented",
             base ? base + 1 : cloud, per);
    svg_bar bars[2 * N_FAMILIES];
    for (int i = 0; i < N_FAMILIES; ++i) {
        bars[2 * i] = (svg_bar){families[i], repeat[i], "repeat."};
        bars[2 * i + 1] = (svg_bar){families[i], precision[i], "precision"};
    }
    svg_bars_write(f, title, "family: repeatability (2.5 px, scale 1.5), then match precision (ratio 0.65)",
                   "mean over the seeds", bars, 2 * N_FAMILIES);
    return fclose(f) != 0;
}

int main(int argc, char **argv)
{
    const char *svg = NULL, *args[3] = {NULL, NULL, NULL};
    int n_args = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--svg") == 0 && i + 1 < argc)
            svg = argv[++i];
        else if (n_args < 3)
            args[n_args++] = argv[i];
    }
    if (n_args < 1) {
        printf("usage: bench_surf_repeatability [--svg OUT.svg] cloud.pcd [per] [upright]\n");
        return 1;
    }
    const int per = n_args > 1 ? atoi(args[1]) : 5, upright = n_args > 2 && strcmp(args[2], "upright") == 0;
    host_cloud c;
    char err[512];
    if (cloud_read(args[0], &c, err, sizeof err) || !c.rgb || c.height < 2) {
        printf("surf: %s: %s\n", args[0], c.rgb ? err : "no organized rgb");
        return 1;
    }
    const uint32_t w = c.width, h = c.height;
    const size_t n = c.n;
    uint8_t *grey = malloc(n), *warped = malloc(n), *valid = malloc(n);
    grip_ctx *ctx = NULL;
    grip_ctx_options o = {sizeof o, -1, 0};
    if (!grey || !warped || !valid || grip_ctx_new(&o, &ctx)) {
        printf("surf: out of memory\n");
        return 1;
    }
    grip_surf_grey_image(c.rgb, n, grey);
    const grip_surf_params p = {4, 4, 2, 0.0004f, upright, 0, 100000, 0};
    grip_surf_result a;
    if (grip_surf_run(ctx, grey, NULL, w, h, &p, &a)) {
        printf("surf: %s\n", grip_ctx_error_text(ctx));
        return 1;
    }
    printf("# %s, %u x %u, %zu keypoints, %s, seeds 1..%d per family\n", args[0], w, h, a.count,
           upright ? "upright" : "oriented", per);
    printf("family\tseed\tkeypoints_a\tkeypoints_b\tcommon_a\tcommon_b\trepeatable\trepeatability\tmatches\tcorrect"
           "\tprecision\tmatching_score\n");
    int bad = 0;
    double mean_repeat[N_FAMILIES], mean_precision[N_FAMILIES];
    for (int f = 0; f < N_FAMILIES; ++f) {
        double sum_r = 0, sum_p = 0, sum_s = 0;
        int nr = 0, np = 0;
        for (int seed = 1; seed <= per; ++seed) {
            rng = grip_surf_rng_seed((uint64_t)(f * 1000 + seed));
            const mat3 H = homography(f, w, h);
            warp(grey, w, h, H, warped, valid);
            grip_surf_result b;
            if (grip_surf_run(ctx, warped, NULL, w, h, &p, &b)) {
                printf("surf: %s\n", grip_ctx_error_text(ctx));
                bad = 1;
                continue;
            }
            const pair_result r = evaluate(&a, &b, H, valid, w, h, grip_surf_dim(&p));
            printf("%s\t%d\t%zu\t%zu\t%zu\t%zu\t%zu\t%.3f\t%zu\t%zu\t%.3f\t%.3f\n", families[f], seed, a.count, b.count,
                   r.common_a, r.common_b, r.pairs, r.repeat, r.matches, r.correct, r.precision, r.score);
            if (!isnan(r.repeat)) {
                sum_r += r.repeat;
                sum_s += r.score;
                ++nr;
            }
            if (!isnan(r.precision)) {
                sum_p += r.precision;
                ++np;
            }
            grip_surf_result_free(&b);
        }
        mean_repeat[f] = nr ? sum_r / nr : NAN;
        mean_precision[f] = np ? sum_p / np : NAN;
        printf("%s\tmean\t\t\t\t\t\t%.3f\t\t\t%.3f\t%.3f\n", families[f], mean_repeat[f], mean_precision[f],
               nr ? sum_s / nr : NAN);
    }
    if (svg && write_svg(svg, args[0], upright, per, mean_repeat, mean_precision)) {
        printf("surf: cannot write %s\n", svg);
        bad = 1;
    }
    grip_surf_result_free(&a);
    free(grey);
    free(warped);
    free(valid);
    host_cloud_free(&c);
    grip_ctx_free(ctx);
    return bad;
}
