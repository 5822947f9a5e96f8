/* test_surf.c -- the SURF CPU twin (src/descriptor/surf.c) and the `surf` descriptor stage on the CPU:
 *  - the integral image's box sums equal sums taken pixel by pixel;
 *  - blobs of a synthetic frame are found where they are (within 1 px), at a scale that grows with their size,
 *    with the sign of the Laplacian of their kind (dark: 1, bright: 0);
 *  - the fit: an off-centre peak is placed where the quadratic says, an offset of 0.5 or more is rejected;
 *  - a 90-degree rotation of the real frame turns the orientations by pi/2 and keeps the descriptors close;
 *  - upright gives orientation 0; the extended descriptor splits the 64's sums (same totals);
 *  - descriptors have unit length; capacity overflow is an error naming capacity, never a cut;
 *  - the sign column is +1 / -1 by the Laplacian and puts rows of opposite signs at least 2 apart;
 *  - lifting: a depth hole at a blob drops that keypoint and counts it;
 *  - bad input through the stage: no rgb, unorganized and host keypoints (GRIP_EUNSUPPORTED: not for surf), an
 *    image smaller than the largest filter (GRIP_EINVAL), constant and all-black images (no keypoints, no error); the stage's keypoints index the cloud
 *    point whose xyz they carry;
 *  - the real frame milk_cartoon_all_small_clorox.pcd gives keypoints with finite 3D positions (skipped
 *    without the shared data). */
#include "test_support.h"
#include "surf_scene.h"
#include "descriptor/surf.h"
#include "stages/registry.h"
#include "stages/stage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const grip_surf_params defaults = {4, 4, 2, 0.0004f, 0, 0, 20000, 0};

static uint8_t *grey_of(const grip_surf_scene *sc)
{
    const size_t n = (size_t)sc->width * sc->height;
    uint8_t *g = malloc(n);
    ck_assert_ptr_nonnull(g);
    grip_surf_grey_image(sc->rgb, n, g);
    return g;
}

START_TEST(integral_box_sums_are_exact)
{
    const uint32_t w = 37, h = 23;
    uint8_t *g = malloc(w * h);
    uint32_t *ii = malloc((w + 1) * (h + 1) * sizeof *ii);
    uint64_t st = 7;
    for (uint32_t i = 0; i < w * h; ++i)
        g[i] = (uint8_t)(grip_test_uniform(&st, 0, 256));
    grip_surf_integral(g, w, h, ii);
    for (int t = 0; t < 500; ++t) {
        const int r = (int)grip_test_uniform(&st, -10, (float)h + 5),
                  c = (int)grip_test_uniform(&st, -10, (float)w + 5);
        const int rows = (int)grip_test_uniform(&st, 0, 30), cols = (int)grip_test_uniform(&st, 0, 30);
        int64_t want = 0;
        for (int y = r; y < r + rows; ++y)
            for (int x = c; x < c + cols; ++x)
                if (y >= 0 && y < (int)h && x >= 0 && x < (int)w)
                    want += g[y * w + x];
        ck_assert_int_eq(grip_surf_box(ii, (int)w, (int)h, r, c, rows, cols), want);
    }
    ck_assert_uint_eq(grip_surf_grey(255, 255, 255), 255);
    ck_assert_uint_eq(grip_surf_grey(0, 0, 0), 0);
    ck_assert_uint_eq(grip_surf_grey(255, 0, 0), 76); /* 0.299 * 255 = 76.2 */
    free(g);
    free(ii);
}
END_TEST

/* The keypoint of r nearest to (x, y), or -1. */
static long nearest(const grip_surf_result *r, float x, float y, float *dist)
{
    long best = -1;
    float bd = INFINITY;
    for (size_t k = 0; k < r->count; ++k) {
        const float d = hypotf(r->keypoints[k].x - x, r->keypoints[k].y - y);
        if (d < bd) {
            bd = d;
            best = (long)k;
        }
    }
    *dist = bd;
    return best;
}

START_TEST(blobs_are_found_with_scale_and_sign)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_surf_scene sc = grip_surf_scene_make(320, 240, 12, 3);
    ck_assert_ptr_nonnull(sc.rgb);
    ck_assert_uint_ge(sc.n_blobs, 8);
    uint8_t *g = grey_of(&sc);
    grip_surf_result r;
    ck_assert_msg(grip_surf_run(ctx, g, sc.xyz, sc.width, sc.height, &defaults, &r) == GRIP_OK, "%s", ctx->last_error);
    ck_assert_uint_eq(r.n_no_depth, 0);
    ck_assert_uint_eq(r.count, r.n_found);
    /* Most blobs are found (8 of 12 here: a maximum whose fit leaves its cell is rejected, as in OpenSURF, and a
     * blob of sigma near 2 is at the smallest scale searched); each found one within 0.5 px, with its sign, at a
     * scale near 0.7 of its sigma (what the 1.2 / 9 rule gives for these box filters); every keypoint is a blob. */
    int found = 0;
    for (uint32_t b = 0; b < sc.n_blobs; ++b) {
        float d;
        long k = nearest(&r, sc.blob_x[b], sc.blob_y[b], &d);
        if (k < 0 || d > 0.5f)
            continue;
        ++found;
        const grip_surf_keypoint *kp = &r.keypoints[k];
        ck_assert_int_eq(kp->laplacian, sc.blob_dark[b]);
        ck_assert_msg(kp->scale > 0.5f * sc.blob_sigma[b] && kp->scale < 1.0f * sc.blob_sigma[b],
                      "blob sigma %g found at scale %g", (double)sc.blob_sigma[b], (double)kp->scale);
    }
    ck_assert_int_ge(found, 8);
    for (size_t k = 0; k < r.count; ++k) {
        int near_blob = 0;
        for (uint32_t b = 0; b < sc.n_blobs; ++b)
            near_blob |= hypotf(r.keypoints[k].x - sc.blob_x[b], r.keypoints[k].y - sc.blob_y[b]) < 1.0f;
        ck_assert_msg(near_blob, "keypoint %zu at (%g, %g) is on no blob", k, (double)r.keypoints[k].x,
                      (double)r.keypoints[k].y);
        const grip_surf_keypoint *kp = &r.keypoints[k];
        ck_assert_uint_eq(kp->pixel, (uint32_t)lrintf(kp->y) * sc.width + (uint32_t)lrintf(kp->x));
    }
    /* unit descriptors; keypoints in (slot, row, column) order */
    for (size_t k = 0; k < r.count; ++k) {
        double len = 0;
        for (int i = 0; i < 64; ++i)
            len += (double)r.descriptors[k * 64 + i] * r.descriptors[k * 64 + i];
        ck_assert_double_eq_tol(len, 1.0, 1e-5);
        ck_assert(r.keypoints[k].orientation >= 0.0f && r.keypoints[k].orientation < 6.2832f);
        if (k)
            ck_assert_uint_le(r.keypoints[k - 1].slot, r.keypoints[k].slot);
    }
    grip_surf_result_free(&r);
    free(g);
    grip_surf_scene_free(&sc);
    grip_ctx_free(ctx);
}
END_TEST

/* grip_surf_extremum on hand-made responses: three layers of one octave (filters 9, 15, 21, step 2), b and t all
 * 0, m 0.5 around a centre of 1 at (r0, c0). hss = -2 and no scale slope, so the fit moves in x and y only:
 * offset = -H^-1 g over the 3 x 3 patch of m. */
static void set_m(float *resp, const grip_surf_layer *M, int r, int c, float v)
{
    resp[M->offset + (size_t)r * M->width + c] = v;
}

START_TEST(fit_places_and_rejects_offsets)
{
    grip_surf_pyramid pyr;
    grip_surf_pyramid_make(1, 3, 2, 64, 64, &pyr);
    ck_assert_uint_eq(pyr.n_layers, 3);
    float *resp = calloc(pyr.total, sizeof *resp);
    uint8_t *lap = calloc(pyr.total, 1);
    const grip_surf_layer *M = &pyr.layer[1];
    const int r0 = 15, c0 = 16;
    for (int dr = -1; dr <= 1; ++dr)
        for (int dc = -1; dc <= 1; ++dc)
            set_m(resp, M, r0 + dr, c0 + dc, 0.5f);
    set_m(resp, M, r0, c0, 1.0f);
    set_m(resp, M, r0, c0 + 1, 0.6f); /* g = 0.05, hxx = -0.9 */
    grip_surf_keypoint kp;
    ck_assert_int_eq(grip_surf_extremum(resp, lap, &pyr, 0, 1, 2, r0, c0, 0.1f, &kp), 1);
    ck_assert_float_eq_tol(kp.x, (float)((c0 + 0.05 / 0.9) * 2), 1e-5f);
    ck_assert_float_eq_tol(kp.y, (float)(r0 * 2), 1e-5f);
    ck_assert_float_eq_tol(kp.scale, 1.2f / 9 * 15, 1e-5f);
    ck_assert_float_eq(kp.response, 1.0f);
    /* in one dimension a strict maximum always fits within 0.5: here 0.495 / 1.01 */
    set_m(resp, M, r0, c0 + 1, 0.99f);
    set_m(resp, M, r0, c0 - 1, 0.0f);
    ck_assert_int_eq(grip_surf_extremum(resp, lap, &pyr, 0, 1, 2, r0, c0, 0.1f, &kp), 1);
    ck_assert_float_eq_tol(kp.x, (float)((c0 + 0.495 / 1.01) * 2), 1e-5f);
    /* slopes in x and y of 0.225 (curvature -0.55) and a cross term of 0.1225: both offsets 0.526, rejected
     * although the centre stays the largest sample */
    set_m(resp, M, r0, c0 - 1, 0.5f);
    set_m(resp, M, r0, c0 + 1, 0.95f);
    set_m(resp, M, r0 + 1, c0, 0.95f);
    set_m(resp, M, r0 + 1, c0 + 1, 0.99f);
    ck_assert_int_eq(grip_surf_extremum(resp, lap, &pyr, 0, 1, 2, r0, c0, 0.1f, &kp), 0);
    set_m(resp, M, r0 + 1, c0 + 1, 0.5f); /* no cross term: 0.409 each, kept */
    ck_assert_int_eq(grip_surf_extremum(resp, lap, &pyr, 0, 1, 2, r0, c0, 0.1f, &kp), 1);
    ck_assert_float_eq_tol(kp.y, (float)((r0 + 0.225 / 0.55) * 2), 1e-5f);
    /* below the threshold, a tie with a neighbour, inside the layer border: no keypoint */
    ck_assert_int_eq(grip_surf_extremum(resp, lap, &pyr, 0, 1, 2, r0, c0, 1.5f, &kp), 0);
    ck_assert_int_eq(grip_surf_extremum(resp, lap, &pyr, 0, 1, 2, r0, c0, 1.0f, &kp), 1);
    set_m(resp, M, r0 - 1, c0 - 1, 1.0f);
    ck_assert_int_eq(grip_surf_extremum(resp, lap, &pyr, 0, 1, 2, r0, c0, 0.1f, &kp), 0);
    ck_assert_int_eq(grip_surf_extremum(resp, lap, &pyr, 0, 1, 2, 5, c0, 0.1f, &kp), 0); /* border 22 / 4 = 5 */
    free(resp);
    free(lap);
}
END_TEST

#define MILK "pcl/milk_cartoon_all_small_clorox.pcd"

/* The grey image of the real frame, or NULL (and a note) when the shared data is absent. */
static uint8_t *milk_grey(uint32_t *width, uint32_t *height)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, MILK))
        return NULL;
    host_cloud c = grip_test_read_cloud(MILK);
    ck_assert_ptr_nonnull(c.rgb);
    uint8_t *g = malloc(c.n);
    ck_assert_ptr_nonnull(g);
    grip_surf_grey_image(c.rgb, c.n, g);
    *width = c.width;
    *height = c.height;
    host_cloud_free(&c);
    return g;
}

/* The real frame and the same turned by 90 degrees clockwise ((x, y) -> (h - 1 - y, x)): keypoints found at the
 * same place (1 px) and scale (5 %) in both turn their orientation by pi/2 (all but a few whose orientation is
 * ambiguous) and keep their descriptor. */
START_TEST(rotation_turns_orientation_keeps_descriptor)
{
    uint32_t w, h;
    uint8_t *g = milk_grey(&w, &h);
    if (!g)
        return;
    uint8_t *gr = malloc((size_t)w * h);
    ck_assert_ptr_nonnull(gr);
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x)
            gr[(size_t)x * h + (h - 1 - y)] = g[(size_t)y * w + x];
    grip_ctx *ctx = grip_test_ctx();
    grip_surf_result a, b;
    ck_assert_int_eq(grip_surf_run(ctx, g, NULL, w, h, &defaults, &a), GRIP_OK);
    ck_assert_int_eq(grip_surf_run(ctx, gr, NULL, h, w, &defaults, &b), GRIP_OK);
    size_t pairs = 0, turned = 0, close = 0;
    for (size_t i = 0; i < a.count; ++i) {
        const grip_surf_keypoint *p = &a.keypoints[i];
        const float tx = (float)(h - 1) - p->y, ty = p->x;
        for (size_t j = 0; j < b.count; ++j) {
            const grip_surf_keypoint *q = &b.keypoints[j];
            if (hypotf(q->x - tx, q->y - ty) > 1.0f || fabsf(q->scale / p->scale - 1) > 0.05f)
                continue;
            ++pairs;
            float turn = fmodf(q->orientation - p->orientation + 4 * 3.14159265f, 2 * 3.14159265f);
            if (fabsf(turn - 1.5707963f) > 0.15f)
                break;
            ++turned;
            double d2 = 0;
            for (int v = 0; v < 64; ++v) {
                const double e = (double)a.descriptors[i * 64 + v] - b.descriptors[j * 64 + v];
                d2 += e * e;
            }
            close += sqrt(d2) < 0.2;
            break;
        }
    }
    /* 164 and 159 found, 80 pairs, 67 turned, 66 close: the turn moves the step-2 sampling grid by a pixel */
    ck_assert_uint_ge(pairs, 2 * a.count / 5);
    ck_assert_msg(turned >= 0.8 * (double)pairs, "%zu of %zu turned by pi/2", turned, pairs);
    ck_assert_msg(close >= 0.95 * (double)turned, "%zu of %zu kept their descriptor", close, turned);
    grip_surf_result_free(&a);
    grip_surf_result_free(&b);
    free(g);
    free(gr);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(upright_and_extended)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_surf_scene sc = grip_surf_scene_make(240, 220, 8, 5);
    ck_assert_ptr_nonnull(sc.rgb);
    uint8_t *g = grey_of(&sc);
    grip_surf_params up = defaults, ext = defaults, ue = defaults;
    up.upright = 1;
    ext.extended = 1;
    ue.upright = 1;
    ue.extended = 1;
    grip_surf_result a, e, u, x;
    ck_assert_int_eq(grip_surf_run(ctx, g, NULL, sc.width, sc.height, &defaults, &a), GRIP_OK);
    ck_assert_int_eq(grip_surf_run(ctx, g, NULL, sc.width, sc.height, &ext, &e), GRIP_OK);
    ck_assert_int_eq(grip_surf_run(ctx, g, NULL, sc.width, sc.height, &up, &u), GRIP_OK);
    ck_assert_int_eq(grip_surf_run(ctx, g, NULL, sc.width, sc.height, &ue, &x), GRIP_OK);
    ck_assert_uint_gt(a.count, 0);
    ck_assert_uint_eq(a.count, e.count);
    ck_assert_uint_eq(a.count, u.count);
    int oriented = 0;
    for (size_t k = 0; k < a.count; ++k) {
        ck_assert_float_eq(u.keypoints[k].orientation, 0.0f);
        ck_assert_float_eq(u.keypoints[k].x, a.keypoints[k].x);
        oriented += a.keypoints[k].orientation != 0.0f;
        ck_assert_float_eq(e.keypoints[k].orientation, a.keypoints[k].orientation);
        /* the 128's halves add up to the 64's sums, up to one factor per keypoint (each is normalised) */
        double factor = NAN;
        for (int cell = 0; cell < 16; ++cell) {
            const float *d = a.descriptors + k * 64 + cell * 4, *h = e.descriptors + k * 128 + cell * 8;
            const float sums[4] = {h[0] + h[2], h[4] + h[6], h[1] + h[3], h[5] + h[7]};
            for (int v = 0; v < 4; ++v) {
                if (fabsf(d[v]) < 0.02f)
                    continue;
                if (isnan(factor))
                    factor = sums[v] / d[v];
                ck_assert_msg(fabs(sums[v] / d[v] - factor) < 1e-3 * fabs(factor), "keypoint %zu cell %d value %d", k,
                              cell, v);
            }
        }
    }
    ck_assert_int_gt(oriented, 0);
    grip_surf_result_free(&a);
    grip_surf_result_free(&e);
    grip_surf_result_free(&u);
    grip_surf_result_free(&x);
    free(g);
    grip_surf_scene_free(&sc);
    grip_ctx_free(ctx);
}
END_TEST

/* The sign column: +1 or -1 by the Laplacian after the 64 values, which it leaves alone; across signs rows are
 * at least 2 apart, within a sign less (so a nearest-neighbour search keeps to the sign). */
START_TEST(sign_column_follows_the_laplacian)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_surf_scene sc = grip_surf_scene_make(240, 220, 12, 8);
    ck_assert_ptr_nonnull(sc.rgb);
    uint8_t *g = grey_of(&sc);
    grip_surf_params sp = defaults;
    sp.sign_column = 1;
    ck_assert_uint_eq(grip_surf_dim(&sp), 65);
    grip_surf_result a, s;
    ck_assert_int_eq(grip_surf_run(ctx, g, NULL, sc.width, sc.height, &defaults, &a), GRIP_OK);
    ck_assert_int_eq(grip_surf_run(ctx, g, NULL, sc.width, sc.height, &sp, &s), GRIP_OK);
    ck_assert_uint_eq(a.count, s.count);
    int signs[2] = {0, 0};
    for (size_t k = 0; k < s.count; ++k) {
        ck_assert_mem_eq(s.descriptors + 65 * k, a.descriptors + 64 * k, 64 * sizeof(float));
        ck_assert_float_eq(s.descriptors[65 * k + 64], s.keypoints[k].laplacian ? 1.0f : -1.0f);
        signs[s.keypoints[k].laplacian] = 1;
        for (size_t j = 0; j < k; ++j) {
            double d2 = 0;
            for (int v = 0; v < 65; ++v) {
                const double e = (double)s.descriptors[65 * k + v] - s.descriptors[65 * j + v];
                d2 += e * e;
            }
            if (s.keypoints[k].laplacian != s.keypoints[j].laplacian)
                ck_assert(d2 >= 4.0);
            else
                ck_assert(d2 < 4.0);
        }
    }
    ck_assert(signs[0] && signs[1]);
    grip_surf_result_free(&a);
    grip_surf_result_free(&s);
    free(g);
    grip_surf_scene_free(&sc);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(capacity_overflow_and_depth_holes)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_surf_scene sc = grip_surf_scene_make(240, 200, 8, 9);
    ck_assert_ptr_nonnull(sc.rgb);
    uint8_t *g = grey_of(&sc);
    grip_surf_result r;
    ck_assert_int_eq(grip_surf_run(ctx, g, sc.xyz, sc.width, sc.height, &defaults, &r), GRIP_OK);
    const size_t all = r.count;
    ck_assert_uint_ge(all, 2);
    /* a hole at the first keypoint's pixel drops it, and only it */
    const grip_surf_keypoint first = r.keypoints[0];
    sc.xyz[3 * (size_t)first.pixel + 2] = NAN;
    grip_surf_result h;
    ck_assert_int_eq(grip_surf_run(ctx, g, sc.xyz, sc.width, sc.height, &defaults, &h), GRIP_OK);
    ck_assert_uint_eq(h.n_found, all);
    ck_assert_uint_eq(h.n_no_depth, 1);
    ck_assert_uint_eq(h.count, all - 1);
    ck_assert_mem_eq(h.descriptors, r.descriptors + 64, (all - 1) * 64 * sizeof(float));
    grip_surf_params small = defaults;
    small.capacity = (uint32_t)all - 1;
    grip_surf_result o;
    ck_assert_int_eq(grip_surf_run(ctx, g, sc.xyz, sc.width, sc.height, &small, &o), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "capacity"));
    ck_assert_uint_eq(o.n_found, all);
    ck_assert_uint_eq(o.count, 0);
    ck_assert_ptr_null(o.keypoints);
    small.capacity = (uint32_t)all; /* exactly full is no overflow */
    ck_assert_int_eq(grip_surf_run(ctx, g, sc.xyz, sc.width, sc.height, &small, &o), GRIP_OK);
    ck_assert_uint_eq(o.n_found, all);
    grip_surf_result_free(&o);
    grip_surf_result_free(&h);
    grip_surf_result_free(&r);
    free(g);
    grip_surf_scene_free(&sc);
    grip_ctx_free(ctx);
}
END_TEST

/* describe() through the stage on the CPU, features in host memory; the stage is made and freed here. */
static grip_status stage_describe(grip_ctx *ctx, const grip_cloud *cloud, const grip_array *keys, grip_features **f)
{
    grip_kv kv[] = {{"device", "cpu"}};
    grip_stage *st = NULL;
    ck_assert_int_eq(grip_stage_create(&grip_descriptor_surf, ctx, kv, 1, &st), GRIP_OK);
    grip_status s = grip_descriptor_surf.describe(st, cloud, GRIP_ROLE_SCENE, keys, GRIP_MEM_HOST, f);
    grip_stage_destroy(st);
    return s;
}

static grip_cloud cloud_of(const grip_surf_scene *sc)
{
    grip_cloud c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.width = sc->width;
    c.height = sc->height;
    c.xyz = grip_array_host_view(GRIP_F32, (uint64_t)sc->width * sc->height, 3, sc->xyz);
    c.rgb = grip_array_host_view(GRIP_U8, (uint64_t)sc->width * sc->height, 3, sc->rgb);
    c.name = "synthetic";
    return c;
}

START_TEST(stage_lifts_and_refuses_bad_input)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_surf_scene sc = grip_surf_scene_make(240, 200, 8, 21);
    ck_assert_ptr_nonnull(sc.rgb);
    for (uint32_t x = 0; x < 60; ++x) /* a depth hole across the top rows */
        for (uint32_t y = 0; y < 60; ++y)
            sc.xyz[3 * ((size_t)y * sc.width + x)] = NAN;
    grip_cloud cloud = cloud_of(&sc);
    grip_features *f = NULL;
    ck_assert_msg(stage_describe(ctx, &cloud, NULL, &f) == GRIP_OK, "%s", ctx->last_error);
    ck_assert_uint_eq(f->descriptor_dim, 64);
    ck_assert_uint_eq(f->descriptors.cols, 64);
    ck_assert_uint_gt(f->keypoints.rows, 0);
    ck_assert_uint_eq(f->keypoints.rows, f->descriptors.rows);
    ck_assert_uint_eq(f->keypoint_xyz.rows, f->keypoints.rows);
    uint8_t *g = grey_of(&sc);
    grip_surf_result r;
    ck_assert_int_eq(grip_surf_run(ctx, g, sc.xyz, sc.width, sc.height, &defaults, &r), GRIP_OK);
    ck_assert_uint_eq(r.count, f->keypoints.rows);
    const uint32_t *idx = f->keypoints.data;
    const float *kxyz = f->keypoint_xyz.data;
    for (size_t k = 0; k < r.count; ++k) {
        ck_assert_uint_eq(idx[k], r.keypoints[k].pixel);
        ck_assert_mem_eq(kxyz + 3 * k, sc.xyz + 3 * (size_t)idx[k], 3 * sizeof(float));
        ck_assert(isfinite(kxyz[3 * k]));
    }
    ck_assert_mem_eq(f->descriptors.data, r.descriptors, r.count * 64 * sizeof(float));
    f->release(f);
    grip_surf_result_free(&r);

    /* host keypoints are refused: surf finds its own */
    uint32_t given[1] = {5};
    grip_array keys = grip_array_host_view(GRIP_U32, 1, 1, given);
    ck_assert_int_eq(stage_describe(ctx, &cloud, &keys, &f), GRIP_EUNSUPPORTED);
    ck_assert_ptr_null(f);
    /* no rgb */
    grip_cloud bad = cloud;
    bad.rgb.rows = 0;
    ck_assert_int_eq(stage_describe(ctx, &bad, NULL, &f), GRIP_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "no rgb"));
    /* unorganized */
    bad = cloud;
    bad.width = sc.width * sc.height;
    bad.height = 1;
    ck_assert_int_eq(stage_describe(ctx, &bad, NULL, &f), GRIP_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "unorganized"));
    /* smaller than the largest filter (195 px at 4 octaves) */
    bad = cloud;
    bad.width = 120;
    bad.height = 400;
    ck_assert_int_eq(stage_describe(ctx, &bad, NULL, &f), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "largest filter"));
    ck_assert_ptr_null(f);
    /* constant and all-black images: nothing found, no error */
    for (int v = 0; v < 2; ++v) {
        memset(sc.rgb, v ? 0 : 173, 3 * (size_t)sc.width * sc.height);
        ck_assert_int_eq(stage_describe(ctx, &cloud, NULL, &f), GRIP_OK);
        ck_assert_uint_eq(f->keypoints.rows, 0);
        ck_assert_uint_eq(f->descriptors.rows, 0);
        ck_assert_uint_eq(f->descriptors.cols, 64);
        f->release(f);
    }
    free(g);
    grip_surf_scene_free(&sc);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(real_frame_keypoints_have_depth)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, MILK))
        return;
    host_cloud c = grip_test_read_cloud(MILK);
    ck_assert_ptr_nonnull(c.rgb);
    grip_ctx *ctx = grip_test_ctx();
    grip_cloud cloud;
    memset(&cloud, 0, sizeof cloud);
    cloud.struct_size = sizeof cloud;
    cloud.width = c.width;
    cloud.height = c.height;
    cloud.xyz = grip_array_host_view(GRIP_F32, c.n, 3, c.xyz);
    cloud.rgb = grip_array_host_view(GRIP_U8, c.n, 3, c.rgb);
    grip_features *f = NULL;
    ck_assert_msg(stage_describe(ctx, &cloud, NULL, &f) == GRIP_OK, "%s", ctx->last_error);
    ck_assert_uint_ge(f->keypoints.rows, 100);
    const float *xyz = f->keypoint_xyz.data;
    for (size_t k = 0; k < 3 * f->keypoint_xyz.rows; ++k)
        ck_assert(isfinite(xyz[k]));
    f->release(f);
    grip_ctx_free(ctx);
    host_cloud_free(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("surf");
    TCase *tc = tcase_create("twin");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, integral_box_sums_are_exact);
    tcase_add_test(tc, blobs_are_found_with_scale_and_sign);
    tcase_add_test(tc, fit_places_and_rejects_offsets);
    tcase_add_test(tc, rotation_turns_orientation_keeps_descriptor);
    tcase_add_test(tc, upright_and_extended);
    tcase_add_test(tc, capacity_overflow_and_depth_holes);
    tcase_add_test(tc, sign_column_follows_the_laplacian);
    suite_add_tcase(s, tc);
    TCase *st = tcase_create("stage");
    tcase_set_timeout(st, 300);
    tcase_add_test(st, stage_lifts_and_refuses_bad_input);
    tcase_add_test(st, real_frame_keypoints_have_depth);
    suite_add_tcase(s, st);
    return s;
}

int main(void)
{
    return grip_test_run(suite());
}
