/* test_spin_image.c -- the CPU spin image reproduces PCL 1.13's own unit-test values on the 397-point bunny
 * (test_spin_estimation.cpp: normals at radius 0.04, spin images at radius 0.08, width 8, support-angle cosine 0.5,
 * at least 16 neighbours; radial and rectangular structure, density and angular domain), and keeps PCL's rules on
 * small cases: the bin layout and bilinear weights of a single vote, the cylinder, the support angle (counter-
 * directed normals kept), the border rule, normalisation (only for supports of two or more points, 0/0 = NaN),
 * and grip's NaN rows (non-finite keypoint or normal, too few neighbours). */
#include "test_support.h"
#include "descriptor/normals.h"
#include "descriptor/spin_image.h"
#include "spatial/kdtree3d.h"
#include "core/array.h"
#include "stages/registry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUNNY "pcl_reference/bun0_397.pcd"
#define BUNNY_POINTS 397
#define DIM153 153

static double row_sum(const float *row, size_t cols)
{
    double s = 0.0;
    for (size_t c = 0; c < cols; ++c)
        s += row[c];
    return s;
}

static grip_spin_image_params params(float radius, uint32_t width, float support_cos, uint32_t min_neighbors,
                                     int radial, int angular)
{
    grip_spin_image_params p = {radius, width, support_cos, min_neighbors, angular, radial};
    return p;
}

/* PCL's test_spin_estimation.cpp checks bins 0, 12, ..., 144 of points 100 and 300 for four variants. */
typedef struct pcl_case {
    const char *name;
    int radial, angular;
    float p100[13], p300[13];
} pcl_case;

static const pcl_case pcl_cases[] = {
    {"radial", 1, 0,
     {0, 0, 0.00233226f, 0, 8.48662e-05f, 0.0266387f, 0, 0, 0.0414662f, 0, 0, 0, 0.0128513f},
     {0, 0, 0.00932424f, 0, 0, 0.0145733f, 0, 0, 0.00034457f, 0, 0, 0, 0.0121195f}},
    {"radial angular", 1, 1,
     {0, 0, 0.132139f, 0, 0.908814f, 0.63875f, 0, 0, 0.550392f, 0, 0, 0, 0.257136f},
     {0, 0, 0.230605f, 0, 0, 0.764872f, 0, 0, 1.02824f, 0, 0, 0, 0.293567f}},
    {"rectangular", 0, 0,
     {0, 0, 0.000889345f, 0, 0, 0.0489534f, 0, 0, 0.0747141f, 0, 0, 0.0173423f, 0},
     {0, 0, 0.0267132f, 0, 0, 0, 0, 0, 0, 0.0209709f, 0, 0, 0.029372f}},
    {"rectangular angular", 0, 1,
     {0, 0, 0.132139f, 0, 0, 0.38800787925720215f, 0, 0, 0.468881f, 0, 0, 0.67901438474655151f, 0},
     {0, 0, 0.143845f, 0, 0, 0, 0, 0, 0, 0.706084f, 0, 0, 0.272542f}},
};

START_TEST(bunny_matches_pcl_unit_test)
{
    const pcl_case *pc = &pcl_cases[_i];
    grip_ctx *ctx = grip_test_ctx();
    size_t n = 0;
    float *xyz = grip_test_read_xyz(BUNNY, &n);
    ck_assert_uint_eq(n, BUNNY_POINTS);
    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, n);
    float *normals = malloc(n * 4 * sizeof *normals), *desc = malloc(n * DIM153 * sizeof *desc);
    ck_assert(normals && desc);
    const float viewpoint[3] = {0.0f, 0.0f, 0.0f};
    ck_assert_int_eq(grip_normals_compute(ctx, xyz, n, tree, 0, 0.04f, viewpoint, normals), GRIP_OK);
    grip_spin_image_params p = params(0.08f, 8, 0.5f, 16, pc->radial, pc->angular);
    ck_assert_uint_eq(grip_spin_image_dim(p.width), DIM153);
    ck_assert_int_eq(grip_spin_image_describe(ctx, xyz, normals, n, tree, xyz, normals, n, &p, desc), GRIP_OK);

    float worst = 0.0f;
    for (int b = 0; b < 13; ++b) {
        float d100 = fabsf(desc[100 * DIM153 + 12 * b] - pc->p100[b]);
        float d300 = fabsf(desc[300 * DIM153 + 12 * b] - pc->p300[b]);
        worst = fmaxf(worst, fmaxf(d100, d300));
        ck_assert_msg(d100 <= 1e-4f && d300 <= 1e-4f, "%s bin %d: got %.9g %.9g, PCL %.9g %.9g", pc->name,
                      12 * b, (double)desc[100 * DIM153 + 12 * b], (double)desc[300 * DIM153 + 12 * b],
                      (double)pc->p100[b], (double)pc->p300[b]);
    }
    printf("spin image %s: max |grip - PCL| %.3g over PCL's 26 checked bins\n", pc->name, (double)worst);
    /* PCL found 16 neighbours everywhere (else it throws): no NaN row; densities sum to 1, mean angles of
     * |cos| lie in [0, pi/2] */
    for (size_t i = 0; i < n; ++i) {
        const float *d = desc + DIM153 * i;
        ck_assert(!isnan(d[0]));
        if (!pc->angular)
            ck_assert_double_eq_tol(row_sum(d, DIM153), 1.0, 1e-6);
        for (int j = 0; j < DIM153; ++j)
            ck_assert(d[j] >= 0.0f && d[j] <= (pc->angular ? 1.5707964f : 1.0f));
    }
    free(desc);
    free(normals);
    grip_kdtree3d_free(tree);
    free(xyz);
    grip_ctx_free(ctx);
}
END_TEST

/* Describes keypoints keys (k x 3, normals k x 4) over the surface xyz (n x 3, normals n x 4) into out. */
static grip_status describe(const float *xyz, const float *normals, size_t n, const float *keys,
                            const float *key_normals, size_t k, const grip_spin_image_params *p, float *out)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, n);
    grip_status st = grip_spin_image_describe(ctx, xyz, normals, n, tree, keys, key_normals, k, p, out);
    grip_kdtree3d_free(tree);
    grip_ctx_free(ctx);
    return st;
}

static const float up[4] = {0.0f, 0.0f, 1.0f, 0.0f};

/* Keypoint at the origin with axis z, one neighbour at (2.25, 0, 1.5); radius 8 sqrt 2 makes the rectangular
 * bin 1: alpha 2.25 -> row 2, a = 0.25; beta 1.5 -> column 8 + 1, b = 0.5. With the keypoint in the surface the
 * support is 2, so the image is normalised (its sum is already 1). The radial structure: bin sqrt 2, alpha =
 * |d| = 2.7041, beta = asin(1.5 / |d|) in bins of pi / 16. */
START_TEST(single_vote_layout_and_weights)
{
    const float xyz[6] = {0.0f, 0.0f, 0.0f, 2.25f, 0.0f, 1.5f};
    const float normals[8] = {0, 0, 1, 0, 0, 0, 1, 0};
    float out[DIM153];
    grip_spin_image_params p = params(8.0f * sqrtf(2.0f), 8, 0.0f, 0, 0, 0);
    ck_assert_int_eq(describe(xyz, normals, 2, xyz, up, 1, &p, out), GRIP_OK);
    const int cols = 17;
    for (int j = 0; j < DIM153; ++j) {
        float want = j == 2 * cols + 9 || j == 2 * cols + 10   ? 0.375f
                     : j == 3 * cols + 9 || j == 3 * cols + 10 ? 0.125f
                                                               : 0.0f;
        ck_assert_msg(fabsf(out[j] - want) < 1e-5f, "bin %d: %.9g, want %.9g", j, (double)out[j], (double)want);
    }

    p.radial = 1;
    ck_assert_int_eq(describe(xyz, normals, 2, xyz, up, 1, &p, out), GRIP_OK);
    const double norm = sqrt(2.25 * 2.25 + 1.5 * 1.5), bin = 8.0 * sqrt(2.0) / 8, beta_bin = 3.14159265358979 / 16;
    const double alpha_pos = norm / bin, beta_pos = asin(1.5 / norm) / beta_bin;
    const int row = (int)alpha_pos, col = (int)beta_pos + 8;
    const double a = alpha_pos - row, b = beta_pos - (col - 8);
    ck_assert_float_eq_tol(out[row * cols + col], (float)((1 - a) * (1 - b)), 1e-5f);
    ck_assert_float_eq_tol(out[(row + 1) * cols + col], (float)(a * (1 - b)), 1e-5f);
    ck_assert_float_eq_tol(out[row * cols + col + 1], (float)((1 - a) * b), 1e-5f);
    ck_assert_float_eq_tol(out[(row + 1) * cols + col + 1], (float)(a * b), 1e-5f);
    ck_assert_double_eq_tol(row_sum(out, DIM153), 1.0, 1e-6);
}
END_TEST

/* Supports of one point are not normalised: the keypoint alone gives zeros (it casts no vote), a single
 * neighbour other than the keypoint gives its raw weights. Two points with no vote (the second outside the
 * cylinder) give PCL's 0/0: NaN. */
START_TEST(normalisation_follows_the_support_size)
{
    const float normals[8] = {0, 0, 1, 0, 0, 0, 1, 0};
    float out[DIM153];
    grip_spin_image_params p = params(1.0f, 8, 0.0f, 0, 0, 0);
    const float alone[3] = {0.1f, 0.2f, 0.3f};
    ck_assert_int_eq(describe(alone, normals, 1, alone, up, 1, &p, out), GRIP_OK);
    ck_assert_double_eq(row_sum(out, DIM153), 0.0);

    const float other[3] = {0.1f, 0.2f, 0.5f}, key[3] = {0.1f, 0.2f, 0.3f};
    ck_assert_int_eq(describe(other, normals, 1, key, up, 1, &p, out), GRIP_OK);
    /* beta = 0.2 in bins of 1/(8 sqrt 2): position 2.263 above the centre column, alpha 0: row 0 */
    const double pos = 0.2f * 8.0 * sqrt(2.0);
    const int col = 8 + (int)pos;
    ck_assert_float_eq_tol(out[col], (float)(1 - (pos - (int)pos)), 1e-5f);
    ck_assert_float_eq_tol(out[col + 1], (float)(pos - (int)pos), 1e-5f);
    ck_assert_double_eq_tol(row_sum(out, DIM153), 1.0, 1e-6);

    /* 0.8 along the axis is inside the sphere of radius 1 but beyond the cylinder's half-height 1/sqrt 2 */
    const float pair[6] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.8f};
    ck_assert_int_eq(describe(pair, normals, 2, pair, up, 1, &p, out), GRIP_OK);
    ck_assert(grip_test_row_is_nan(out, DIM153));
    p.radial = 1; /* the radial structure has no cylinder: the point votes on the top border */
    ck_assert_int_eq(describe(pair, normals, 2, pair, up, 1, &p, out), GRIP_OK);
    ck_assert_double_eq_tol(row_sum(out, DIM153), 1.0, 1e-9);
    /* alpha 0.8 of bins 1/8: between rows 6 and 7; beta = pi/2: the last column, moved back by PCL's border rule */
    ck_assert_float_eq_tol(out[6 * 17 + 16], 0.6f, 1e-5f);
    ck_assert_float_eq_tol(out[7 * 17 + 16], 0.4f, 1e-5f);
}
END_TEST

/* A 9 x 9 grid of 1 cm on the plane z = 0, normals +z, the keypoint at its centre (point 40). */
#define GRID 9
#define GRID_N (GRID * GRID)
static void make_grid(float *xyz, float *normals)
{
    for (int a = 0; a < GRID; ++a)
        for (int b = 0; b < GRID; ++b) {
            float *q = xyz + 3 * (a * GRID + b), *nq = normals + 4 * (a * GRID + b);
            q[0] = 0.01f * (float)(a - GRID / 2);
            q[1] = 0.01f * (float)(b - GRID / 2);
            q[2] = 0.0f;
            memcpy(nq, up, sizeof up);
        }
}

/* The support angle leaves out neighbours whose normal is tilted beyond it, keeps counter-directed ones, and is
 * off at 0. A NaN normal counts as aligned, as in PCL. Measured as the angular image, which is 0 wherever only
 * aligned normals vote. */
START_TEST(support_angle)
{
    float xyz[GRID_N * 3], normals[GRID_N * 4], base[DIM153], out[DIM153];
    make_grid(xyz, normals);
    const float *key = xyz + 3 * 40;
    grip_spin_image_params p = params(0.03f, 8, 0.5f, 0, 0, 0);
    ck_assert_int_eq(describe(xyz, normals, GRID_N, key, up, 1, &p, base), GRIP_OK);
    ck_assert_double_eq_tol(row_sum(base, DIM153), 1.0, 1e-6);
    /* every vote lies on the centre column (beta 0) or its right neighbour, b = 0 */
    for (int j = 0; j < DIM153; ++j)
        if (j % 17 != 8)
            ck_assert_float_eq(base[j], 0.0f);

    normals[4 * 41 + 2] = -1.0f; /* counter-directed: kept */
    normals[4 * 39 + 3] = 0.5f;  /* curvature is not read */
    ck_assert_int_eq(describe(xyz, normals, GRID_N, key, up, 1, &p, out), GRIP_OK);
    ck_assert_mem_eq(out, base, sizeof out);
    normals[4 * 31 + 0] = NAN; /* NaN normal: kept, as aligned */
    ck_assert_int_eq(describe(xyz, normals, GRID_N, key, up, 1, &p, out), GRIP_OK);
    ck_assert_mem_eq(out, base, sizeof out);
    p.angular = 1;
    ck_assert_int_eq(describe(xyz, normals, GRID_N, key, up, 1, &p, out), GRIP_OK);
    for (int j = 0; j < DIM153; ++j)
        ck_assert_float_eq(out[j], 0.0f);

    /* tilt point 49 (1 cm along x) by 70 degrees: cos 0.342 < 0.5 leaves it out */
    normals[4 * 49] = sinf(1.2217305f);
    normals[4 * 49 + 2] = cosf(1.2217305f);
    p.angular = 0;
    ck_assert_int_eq(describe(xyz, normals, GRID_N, key, up, 1, &p, out), GRIP_OK);
    float removed[GRID_N * 3], removed_normals[GRID_N * 4];
    memcpy(removed, xyz, sizeof removed);
    memcpy(removed_normals, normals, sizeof removed_normals);
    removed[3 * 49] = NAN; /* a NaN point is in no support */
    float without[DIM153];
    ck_assert_int_eq(describe(removed, removed_normals, GRID_N, key, up, 1, &p, without), GRIP_OK);
    for (int j = 0; j < DIM153; ++j)
        ck_assert_float_eq_tol(out[j], without[j], 1e-7f);
    ck_assert(memcmp(out, base, sizeof out) != 0);
    /* the angular image sees it when the support angle is off: acos(0.342) = 1.2217 spread on its bins */
    p.support_angle_cos = 0.0f;
    p.angular = 1;
    ck_assert_int_eq(describe(xyz, normals, GRID_N, key, up, 1, &p, out), GRIP_OK);
    float largest = 0.0f;
    for (int j = 0; j < DIM153; ++j)
        largest = fmaxf(largest, out[j]);
    ck_assert(largest > 0.1f && largest <= 1.2217306f);
}
END_TEST

/* NaN rows: a NaN keypoint, a NaN keypoint normal, a support below min_neighbors (the keypoint included); NaN
 * surface points are ignored; duplicating every surface point leaves a normalised image unchanged. */
START_TEST(nan_rows_duplicates_and_minimum)
{
    float xyz[2 * GRID_N * 3], normals[2 * GRID_N * 4];
    make_grid(xyz, normals);
    float keys[4 * 3], key_normals[4 * 4], out[4 * DIM153];
    for (int i = 0; i < 4; ++i) {
        memcpy(keys + 3 * i, xyz + 3 * 40, 3 * sizeof(float));
        memcpy(key_normals + 4 * i, up, sizeof up);
    }
    keys[3] = NAN;
    key_normals[8 + 1] = NAN;
    /* radius 0.015: the keypoint and its 4 direct neighbours, 8 with the diagonals at 0.0141 */
    grip_spin_image_params p = params(0.015f, 8, 0.0f, 9, 0, 0);
    ck_assert_int_eq(describe(xyz, normals, GRID_N, keys, key_normals, 4, &p, out), GRIP_OK);
    ck_assert(!isnan(out[0]));
    ck_assert(grip_test_row_is_nan(out + DIM153, DIM153));
    ck_assert(grip_test_row_is_nan(out + 2 * DIM153, DIM153));
    ck_assert_mem_eq(out + 3 * DIM153, out, DIM153 * sizeof(float));
    p.min_neighbors = 10;
    ck_assert_int_eq(describe(xyz, normals, GRID_N, keys, key_normals, 1, &p, out), GRIP_OK);
    ck_assert(grip_test_row_is_nan(out, DIM153));

    p.min_neighbors = 0;
    p.radius = 0.03f;
    float single[DIM153];
    ck_assert_int_eq(describe(xyz, normals, GRID_N, keys, key_normals, 1, &p, single), GRIP_OK);
    memcpy(xyz + 3 * GRID_N, xyz, GRID_N * 3 * sizeof(float));
    memcpy(normals + 4 * GRID_N, normals, GRID_N * 4 * sizeof(float));
    for (int i = 0; i < GRID_N; i += 7)
        xyz[3 * i + 1] = NAN; /* every 7th first copy is missing, its duplicate stays */
    float doubled[DIM153];
    const float *doubled_xyz = xyz;
    ck_assert_int_eq(describe(doubled_xyz, normals, 2 * GRID_N, keys, key_normals, 1, &p, doubled), GRIP_OK);
    float worst = 0.0f;
    for (int j = 0; j < DIM153; ++j)
        worst = fmaxf(worst, fabsf(doubled[j] - single[j]));
    ck_assert(worst > 1e-4f); /* the missing points are missed once: not the same image */
    for (int i = 0; i < GRID_N; i += 7)
        xyz[3 * i + 1] = xyz[3 * (GRID_N + i) + 1];
    ck_assert_int_eq(describe(doubled_xyz, normals, 2 * GRID_N, keys, key_normals, 1, &p, doubled), GRIP_OK);
    for (int j = 0; j < DIM153; ++j)
        ck_assert_float_eq_tol(doubled[j], single[j], 1e-7f);
}
END_TEST

/* A huge radius puts the whole grid in the first bins around the centre column; radius 0, a width out of
 * [1, 32], a support cosine out of [0, 1] and missing normals are refused, naming the culprit. */
START_TEST(radius_extremes_and_refusals)
{
    float xyz[GRID_N * 3], normals[GRID_N * 4], out[DIM153];
    make_grid(xyz, normals);
    const float *key = xyz + 3 * 40;
    grip_spin_image_params p = params(1e6f, 8, 0.0f, 0, 0, 0);
    ck_assert_int_eq(describe(xyz, normals, GRID_N, key, up, 1, &p, out), GRIP_OK);
    ck_assert_float_eq_tol(out[8], 1.0f, 1e-6f);

    static const struct {
        float radius;
        uint32_t width;
        float support_cos;
        const char *needle;
    } bad[] = {{0.0f, 8, 0.0f, "radius"},  {NAN, 8, 0.0f, "radius"},          {INFINITY, 8, 0.0f, "radius"},
               {0.1f, 0, 0.0f, "width"},   {0.1f, 33, 0.0f, "width"},         {0.1f, 8, -0.1f, "support_angle_cos"},
               {0.1f, 8, 1.5f, "support_angle_cos"}, {0.1f, 8, NAN, "support_angle_cos"}};
    grip_ctx *ctx = grip_test_ctx();
    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, GRID_N);
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
        p = params(bad[b].radius, bad[b].width, bad[b].support_cos, 0, 0, 0);
        ck_assert_int_eq(grip_spin_image_describe(ctx, xyz, normals, GRID_N, tree, key, up, 1, &p, out),
                         GRIP_EINVAL);
        ck_assert_msg(strstr(ctx->last_error, bad[b].needle), "%s", ctx->last_error);
    }
    p = params(0.03f, 8, 0.5f, 0, 0, 0);
    ck_assert_int_eq(grip_spin_image_describe(ctx, xyz, NULL, GRID_N, tree, key, up, 1, &p, out), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "normals"));
    p.support_angle_cos = 0.0f; /* without support angle or angular domain the surface normals are not needed */
    ck_assert_int_eq(grip_spin_image_describe(ctx, xyz, NULL, GRID_N, tree, key, up, 1, &p, out), GRIP_OK);
    ck_assert_int_eq(grip_spin_image_describe(ctx, xyz, NULL, GRID_N, tree, key, NULL, 1, &p, out), GRIP_EINVAL);
    ck_assert_int_eq(grip_spin_image_describe(ctx, xyz, NULL, GRID_N, tree, key, up, 0, &p, NULL), GRIP_EINVAL);
    grip_kdtree3d_free(tree);
    grip_ctx_free(ctx);
}
END_TEST

/* The `spin_image` stage end to end on the bunny, as PCL's test: normals at radius 0.04 (flipped toward the
 * origin), every point a keypoint, spin images at radius 0.08 with support-angle cosine 0.5 and at least 16
 * neighbours, rectangular angular variant: the same values as the CPU twin called directly, PCL's bins within
 * 1e-4; a bad key is refused by name. */
START_TEST(stage_matches_the_twin)
{
    grip_ctx *ctx = grip_test_ctx();
    size_t n = 0;
    float *xyz = grip_test_read_xyz(BUNNY, &n);
    const grip_kv kv[] = {{"device", "cpu"},           {"normals_k", "0"},   {"normals_radius", "0.04"},
                          {"keypoints", "all"},        {"radius", "0.08"},   {"support_angle_cos", "0.5"},
                          {"min_neighbors", "16"},     {"angular", "true"}};
    grip_stage *stage = NULL;
    ck_assert_msg(grip_descriptor_spin_image.create(ctx, kv, 8, &stage) == GRIP_OK, "%s", ctx->last_error);
    grip_cloud cloud = {.struct_size = sizeof(grip_cloud), .width = (uint32_t)n, .height = 1,
                        .xyz = grip_array_host_view(GRIP_F32, n, 3, xyz), .name = "bunny"};
    grip_features *f = NULL;
    ck_assert_msg(grip_descriptor_spin_image.describe(stage, &cloud, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, &f) ==
                      GRIP_OK, "%s", ctx->last_error);
    ck_assert_uint_eq(f->descriptor_dim, DIM153);
    ck_assert_uint_eq(f->descriptors.rows, n);
    ck_assert_uint_eq(f->keypoints.rows, n);

    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, n);
    float *normals = malloc(n * 4 * sizeof *normals), *desc = malloc(n * DIM153 * sizeof *desc);
    ck_assert(normals && desc);
    const float viewpoint[3] = {0.0f, 0.0f, 0.0f};
    ck_assert_int_eq(grip_normals_compute(ctx, xyz, n, tree, 0, 0.04f, viewpoint, normals), GRIP_OK);
    grip_spin_image_params p = params(0.08f, 8, 0.5f, 16, 0, 1);
    ck_assert_int_eq(grip_spin_image_describe(ctx, xyz, normals, n, tree, xyz, normals, n, &p, desc), GRIP_OK);
    ck_assert_mem_eq(f->descriptors.data, desc, n * DIM153 * sizeof *desc);
    const pcl_case *pc = &pcl_cases[3];
    for (int b = 0; b < 13; ++b) {
        ck_assert_float_eq_tol(desc[100 * DIM153 + 12 * b], pc->p100[b], 1e-4f);
        ck_assert_float_eq_tol(desc[300 * DIM153 + 12 * b], pc->p300[b], 1e-4f);
    }
    f->release(f);
    grip_descriptor_spin_image.destroy(stage);

    const grip_kv bad[] = {{"width", "33"}, {"support_angle_cos", "1.5"}};
    ck_assert_int_eq(grip_descriptor_spin_image.create(ctx, bad, 2, &stage), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "width"));
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "support_angle_cos"));
    free(desc);
    free(normals);
    grip_kdtree3d_free(tree);
    free(xyz);
    grip_ctx_free(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("spin_image");
    TCase *pcl = tcase_create("pcl");
    tcase_add_loop_test(pcl, bunny_matches_pcl_unit_test, 0, (int)(sizeof pcl_cases / sizeof pcl_cases[0]));
    tcase_add_test(pcl, stage_matches_the_twin);
    suite_add_tcase(s, pcl);
    TCase *rules = tcase_create("rules");
    tcase_add_test(rules, single_vote_layout_and_weights);
    tcase_add_test(rules, normalisation_follows_the_support_size);
    tcase_add_test(rules, support_angle);
    tcase_add_test(rules, nan_rows_duplicates_and_minimum);
    tcase_add_test(rules, radius_extremes_and_refusals);
    suite_add_tcase(s, rules);
    return s;
}

int main(void) { return grip_test_run_with_data(suite(), BUNNY); }
