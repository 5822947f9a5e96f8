/* test_shot.c -- the SHOT frame and descriptor reproduce PCL 1.13's own unit-test values on the 397-point bunny
 * (test_shot_lrf_estimation.cpp: frames at radius 0.01; test_shot_estimation.cpp: SHOT352 bins of point 103 with
 * normals and SHOT at radius 0.04), and keep PCL's rules on small cases: NaN rows for keypoints without a frame
 * or with fewer than 5 support points, unit L2 norm, invariance under a rigid motion, the support cap (of the
 * descriptor and of the frame). */
#include "test_support.h"
#include "descriptor/normals.h"
#include "descriptor/shot.h"
#include "spatial/kdtree3d.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BUNNY "pcl_reference/bun0_397.pcd"
#define BUNNY_POINTS 397

/* Frames of every bunny point at radius 0.01, from PCL's test_shot_lrf_estimation.cpp (which checks to 1e-3;
 * its numbers have 6 digits, and we hold them to 1e-4). Point 15 exercises the tangent tie rule, 311 the
 * normal tie rule, and 24 has too small a support. */
START_TEST(lrf_matches_pcl_unit_test)
{
    static const struct {
        int point;
        float rf[9];
    } expected[] = {
        {15,
         {-0.849213f, 0.528016f, 0.00593846f, 0.274564f, 0.451135f, -0.849171f, -0.451055f, -0.719497f, -0.528084f}},
        {45, {0.950556f, 0.0673042f, 0.303171f, 0.156242f, -0.947328f, -0.279569f, 0.268386f, 0.313114f, -0.911004f}},
        {163,
         {0.816369f, 0.309943f, -0.487317f, 0.235273f, -0.949082f, -0.209498f, -0.527436f, 0.0563754f, -0.847722f}},
        {311,
         {0.77608663f, -0.60673451f, 0.17193851f, 0.49546647f, 0.75532055f, 0.42895663f, -0.39013144f, -0.24771771f,
          0.88681078f}},
    };
    grip_ctx *ctx = grip_test_ctx();
    size_t n = 0;
    float *xyz = grip_test_read_xyz(BUNNY, &n);
    ck_assert_uint_eq(n, BUNNY_POINTS);
    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, n);
    float *frames = malloc(n * 9 * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    ck_assert_int_eq(grip_shot_lrf(ctx, xyz, n, tree, xyz, n, 0.01f, 0, frames), GRIP_OK);

    ck_assert(grip_test_row_is_nan(frames + 9 * 24, 9));
    for (size_t e = 0; e < sizeof expected / sizeof expected[0]; ++e)
        for (int d = 0; d < 9; ++d)
            ck_assert_float_eq_tol(frames[9 * expected[e].point + d], expected[e].rf[d], 1e-4f);
    /* every valid frame is orthonormal and right-handed */
    size_t valid = 0;
    for (size_t i = 0; i < n; ++i) {
        const float *rf = frames + 9 * i;
        if (isnan(rf[0]))
            continue;
        ++valid;
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) {
                float dot = rf[3 * a] * rf[3 * b] + rf[3 * a + 1] * rf[3 * b + 1] + rf[3 * a + 2] * rf[3 * b + 2];
                ck_assert_float_eq_tol(dot, a == b ? 1.0f : 0.0f, 1e-5f);
            }
        float det = rf[0] * (rf[4] * rf[8] - rf[5] * rf[7]) - rf[1] * (rf[3] * rf[8] - rf[5] * rf[6]) +
                    rf[2] * (rf[3] * rf[7] - rf[4] * rf[6]);
        ck_assert_float_eq_tol(det, 1.0f, 1e-5f);
    }
    ck_assert_uint_gt(valid, 100); /* 163: the bunny is sparse at 1 cm */
    free(frames);
    grip_kdtree3d_free(tree);
    free(xyz);
    grip_ctx_free(ctx);
}
END_TEST

/* SHOT352 of every bunny point with normals and SHOT at radius 0.04, as PCL's test_shot_estimation.cpp: the ten
 * bins of point 103 it checks, to its tolerance 1e-4. */
START_TEST(shot352_matches_pcl_unit_test)
{
    static const struct {
        int bin;
        float value;
    } expected[] = {{9, 0.0072018504f},  {10, 0.0023103887f}, {11, 0.0024724449f}, {19, 0.0031367359f},
                    {20, 0.17439659f},   {21, 0.06542316f},   {42, 0.013304681f},  {53, 0.0073520984f},
                    {54, 0.013584172f},  {55, 0.0050609680f}};
    const float radius = 0.04f;
    grip_ctx *ctx = grip_test_ctx();
    size_t n = 0;
    float *xyz = grip_test_read_xyz(BUNNY, &n);
    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, n);
    float *normals = malloc(n * 4 * sizeof *normals);
    float *frames = malloc(n * 9 * sizeof *frames);
    float *desc = malloc(n * GRIP_SHOT_DIM * sizeof *desc);
    ck_assert(normals && frames && desc);
    const float viewpoint[3] = {0.0f, 0.0f, 0.0f};
    ck_assert_int_eq(grip_normals_compute(ctx, xyz, n, tree, 0, radius, viewpoint, normals), GRIP_OK);
    ck_assert_int_eq(grip_shot_lrf(ctx, xyz, n, tree, xyz, n, radius, 0, frames), GRIP_OK);
    ck_assert_int_eq(grip_shot_describe(ctx, xyz, normals, n, tree, xyz, n, frames, radius, 0, desc), GRIP_OK);

    const float *d103 = desc + (size_t)GRIP_SHOT_DIM * 103;
    for (size_t e = 0; e < sizeof expected / sizeof expected[0]; ++e)
        ck_assert_float_eq_tol(d103[expected[e].bin], expected[e].value, 1e-4f);
    for (size_t i = 0; i < n; ++i) {
        const float *d = desc + (size_t)GRIP_SHOT_DIM * i;
        if (isnan(d[0]))
            continue;
        double sq = 0.0;
        for (int j = 0; j < GRIP_SHOT_DIM; ++j) {
            ck_assert_float_ge(d[j], -1e-6f);
            sq += (double)d[j] * d[j];
        }
        ck_assert_double_eq_tol(sq, 1.0, 1e-5);
    }
    free(desc);
    free(frames);
    free(normals);
    grip_kdtree3d_free(tree);
    free(xyz);
    grip_ctx_free(ctx);
}
END_TEST

/* A 9 x 9 grid on a tilted plane z = 0.3 x + 0.1 y with spacing 1 cm, normals all +n, and one lone point far away. */
#define GRID 9
static size_t make_patch(float *xyz, float *normals)
{
    const float len = sqrtf(0.3f * 0.3f + 0.1f * 0.1f + 1.0f);
    size_t n = 0;
    for (int a = 0; a < GRID; ++a)
        for (int b = 0; b < GRID; ++b, ++n) {
            float x = 0.01f * (float)(a - GRID / 2), y = 0.01f * (float)(b - GRID / 2) + 0.002f * (float)(a % 3);
            xyz[3 * n] = x;
            xyz[3 * n + 1] = y;
            xyz[3 * n + 2] = 0.3f * x + 0.1f * y;
            normals[4 * n] = -0.3f / len;
            normals[4 * n + 1] = -0.1f / len;
            normals[4 * n + 2] = 1.0f / len;
            normals[4 * n + 3] = 0.0f;
        }
    xyz[3 * n] = 1.0f;
    xyz[3 * n + 1] = 1.0f;
    xyz[3 * n + 2] = 1.0f;
    memcpy(normals + 4 * n, normals, 4 * sizeof *normals);
    return n + 1;
}

/* On a plane the frame's z is the plane normal (up to sign), every normal votes in the cos = +-1 bins, the
 * descriptor has unit norm; a lone point and a NaN keypoint get NaN rows; no vote at all (NaN normals) gives
 * NaN; a cap of 4 support points is too few, and a cap above the support changes nothing. */
START_TEST(plane_patch_rules)
{
    grip_ctx *ctx = grip_test_ctx();
    float xyz[(GRID * GRID + 1) * 3], normals[(GRID * GRID + 1) * 4];
    size_t n = make_patch(xyz, normals);
    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, n);
    const size_t centre = GRID * GRID / 2, lone = n - 1;
    float keys[4 * 3];
    memcpy(keys, xyz + 3 * centre, 3 * sizeof(float));
    memcpy(keys + 3, xyz + 3 * lone, 3 * sizeof(float));
    const float nan_key[3] = {NAN, 0.0f, 0.0f};
    memcpy(keys + 6, nan_key, sizeof nan_key);
    memcpy(keys + 9, xyz + 3 * (centre + 1), 3 * sizeof(float));
    const size_t k = 4;
    const float radius = 0.035f;
    float frames[4 * 9], desc[4 * GRIP_SHOT_DIM], capped[4 * GRIP_SHOT_DIM];
    ck_assert_int_eq(grip_shot_lrf(ctx, xyz, n, tree, keys, k, radius, 0, frames), GRIP_OK);
    ck_assert(grip_test_row_is_nan(frames + 9, 9));
    ck_assert(grip_test_row_is_nan(frames + 18, 9));
    const float *nz = normals;
    float cz = fabsf(frames[6] * nz[0] + frames[7] * nz[1] + frames[8] * nz[2]);
    ck_assert_float_eq_tol(cz, 1.0f, 1e-6f);

    ck_assert_int_eq(grip_shot_describe(ctx, xyz, normals, n, tree, keys, k, frames, radius, 0, desc), GRIP_OK);
    ck_assert(grip_test_row_is_nan(desc + GRIP_SHOT_DIM, GRIP_SHOT_DIM));
    ck_assert(grip_test_row_is_nan(desc + 2 * GRIP_SHOT_DIM, GRIP_SHOT_DIM));
    double sq = 0.0;
    for (int j = 0; j < GRIP_SHOT_DIM; ++j) {
        int bin = j % (GRIP_SHOT_COSINE_BINS + 1);
        /* normal parallel to z: cosine +-1, bins 0 and 10 (and 9 / 1 through the cosine interpolation) */
        if (bin > 1 && bin < 9)
            ck_assert_float_eq(desc[j], 0.0f);
        sq += (double)desc[j] * desc[j];
    }
    ck_assert_double_eq_tol(sq, 1.0, 1e-6);

    /* the cap: above the support it changes nothing, at 4 the support is too small */
    ck_assert_int_eq(grip_shot_describe(ctx, xyz, normals, n, tree, keys, k, frames, radius, 1000, capped), GRIP_OK);
    ck_assert_int_eq(memcmp(desc, capped, sizeof desc), 0);
    ck_assert_int_eq(grip_shot_describe(ctx, xyz, normals, n, tree, keys, k, frames, radius, 4, capped), GRIP_OK);
    ck_assert(grip_test_row_is_nan(capped, GRIP_SHOT_DIM));
    ck_assert_int_eq(grip_shot_describe(ctx, xyz, normals, n, tree, keys, k, frames, radius, 20, capped), GRIP_OK);
    ck_assert(!isnan(capped[0]));
    ck_assert_int_ne(memcmp(desc, capped, GRIP_SHOT_DIM * sizeof(float)), 0);
    /* the frame takes the same cap: above the support nothing changes, 5 (the keypoint and 4 others) is too few */
    float capped_frames[4 * 9];
    ck_assert_int_eq(grip_shot_lrf(ctx, xyz, n, tree, keys, k, radius, 1000, capped_frames), GRIP_OK);
    ck_assert_int_eq(memcmp(frames, capped_frames, sizeof frames), 0);
    ck_assert_int_eq(grip_shot_lrf(ctx, xyz, n, tree, keys, k, radius, 5, capped_frames), GRIP_OK);
    ck_assert(grip_test_row_is_nan(capped_frames, 9));
    ck_assert_int_eq(grip_shot_lrf(ctx, xyz, n, tree, keys, k, radius, 6, capped_frames), GRIP_OK);
    ck_assert(!isnan(capped_frames[0]));

    /* every normal NaN: no point votes, PCL's normalisation gives 0/0 */
    for (size_t i = 0; i < n; ++i)
        normals[4 * i] = NAN;
    ck_assert_int_eq(grip_shot_describe(ctx, xyz, normals, n, tree, keys, 1, frames, radius, 0, desc), GRIP_OK);
    ck_assert(grip_test_row_is_nan(desc, GRIP_SHOT_DIM));
    grip_kdtree3d_free(tree);
    grip_ctx_free(ctx);
}
END_TEST

/* Moving the whole bunny rigidly moves every frame with it and leaves the descriptors as they were. */
START_TEST(rigid_motion_invariance)
{
    const float radius = 0.04f;
    /* rotation about (1, 2, 3)/|.| by 0.7 rad, then a translation */
    const double ax[3] = {1.0 / sqrt(14.0), 2.0 / sqrt(14.0), 3.0 / sqrt(14.0)}, t = 0.7;
    const double c = cos(t), s = sin(t), C = 1.0 - c;
    const double R[9] = {c + ax[0] * ax[0] * C,         ax[0] * ax[1] * C - ax[2] * s, ax[0] * ax[2] * C + ax[1] * s,
                         ax[1] * ax[0] * C + ax[2] * s, c + ax[1] * ax[1] * C,         ax[1] * ax[2] * C - ax[0] * s,
                         ax[2] * ax[0] * C - ax[1] * s, ax[2] * ax[1] * C + ax[0] * s, c + ax[2] * ax[2] * C};
    const double shift[3] = {0.5, -0.25, 1.0};
    grip_ctx *ctx = grip_test_ctx();
    size_t n = 0;
    float *xyz[2] = {grip_test_read_xyz(BUNNY, &n), NULL};
    float *normals[2], *frames[2], *desc[2];
    xyz[1] = malloc(n * 3 * sizeof(float));
    ck_assert_ptr_nonnull(xyz[1]);
    for (size_t i = 0; i < n; ++i)
        for (int r = 0; r < 3; ++r)
            xyz[1][3 * i + r] = (float)(R[3 * r] * xyz[0][3 * i] + R[3 * r + 1] * xyz[0][3 * i + 1] +
                                        R[3 * r + 2] * xyz[0][3 * i + 2] + shift[r]);
    for (int m = 0; m < 2; ++m) {
        normals[m] = malloc(n * 4 * sizeof(float));
        frames[m] = malloc(n * 9 * sizeof(float));
        desc[m] = malloc(n * GRIP_SHOT_DIM * sizeof(float));
        ck_assert(normals[m] && frames[m] && desc[m]);
        grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz[m], n);
        const float viewpoint[3] = {(float)shift[0] * m, (float)shift[1] * m, (float)shift[2] * m};
        ck_assert_int_eq(grip_normals_compute(ctx, xyz[m], n, tree, 0, radius, viewpoint, normals[m]), GRIP_OK);
        ck_assert_int_eq(grip_shot_lrf(ctx, xyz[m], n, tree, xyz[m], n, radius, 0, frames[m]), GRIP_OK);
        ck_assert_int_eq(grip_shot_describe(ctx, xyz[m], normals[m], n, tree, xyz[m], n, frames[m], radius, 0,
                                            desc[m]),
                         GRIP_OK);
        grip_kdtree3d_free(tree);
    }
    size_t compared = 0;
    for (size_t i = 0; i < n; ++i) {
        ck_assert_int_eq(isnan(frames[0][9 * i]), isnan(frames[1][9 * i]));
        if (isnan(desc[0][(size_t)GRIP_SHOT_DIM * i]))
            continue;
        for (int a = 0; a < 3; ++a)
            for (int r = 0; r < 3; ++r) {
                const float *f = frames[0] + 9 * i + 3 * a;
                double moved = R[3 * r] * f[0] + R[3 * r + 1] * f[1] + R[3 * r + 2] * f[2];
                ck_assert_double_eq_tol(frames[1][9 * i + 3 * a + r], moved, 1e-4);
            }
        for (int j = 0; j < GRIP_SHOT_DIM; ++j)
            ck_assert_float_eq_tol(desc[1][(size_t)GRIP_SHOT_DIM * i + j], desc[0][(size_t)GRIP_SHOT_DIM * i + j],
                                   1e-4f);
        ++compared;
    }
    ck_assert_uint_gt(compared, n * 9 / 10);
    for (int m = 0; m < 2; ++m) {
        free(xyz[m]);
        free(normals[m]);
        free(frames[m]);
        free(desc[m]);
    }
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
    grip_ctx *ctx = grip_test_ctx();
    float xyz[(GRID * GRID + 1) * 3], normals[(GRID * GRID + 1) * 4], frames[9], desc[GRIP_SHOT_DIM];
    size_t n = make_patch(xyz, normals);
    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, n);
    ck_assert_int_eq(grip_shot_lrf(ctx, xyz, n, tree, xyz, 1, 0.0f, 0, frames), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "shot_lrf: radius"));
    ck_assert_int_eq(grip_shot_lrf(ctx, xyz, n, tree, xyz, 1, NAN, 0, frames), GRIP_EINVAL);
    ck_assert_int_eq(grip_shot_lrf(ctx, xyz, n, tree, NULL, 1, 0.02f, 0, frames), GRIP_EINVAL);
    ck_assert_int_eq(grip_shot_lrf(ctx, xyz, n - 1, tree, xyz, 1, 0.02f, 0, frames), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "surface has only"));
    ck_assert_int_eq(grip_shot_lrf(ctx, xyz, n, tree, xyz, 1, 0.02f, 0, frames), GRIP_OK);
    ck_assert_int_eq(grip_shot_describe(ctx, xyz, NULL, n, tree, xyz, 1, frames, 0.02f, 0, desc), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "shot: "));
    ck_assert_int_eq(grip_shot_describe(ctx, xyz, normals, n, tree, xyz, 1, frames, -1.0f, 0, desc), GRIP_EINVAL);
    ck_assert_int_eq(grip_shot_describe(ctx, xyz, normals, n, tree, xyz, 0, NULL, 0.02f, 0, NULL), GRIP_OK);
    grip_kdtree3d_free(tree);
    grip_ctx_free(ctx);
}
END_TEST

static Suite *shot_suite(void)
{
    Suite *s = suite_create("shot");
    TCase *tc = tcase_create("shot");
    tcase_add_test(tc, lrf_matches_pcl_unit_test);
    tcase_add_test(tc, shot352_matches_pcl_unit_test);
    tcase_add_test(tc, plane_patch_rules);
    tcase_add_test(tc, rigid_motion_invariance);
    tcase_add_test(tc, bad_arguments_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return grip_test_run_with_data(shot_suite(), BUNNY);
}
