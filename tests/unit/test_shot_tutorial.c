/* test_shot_tutorial.c -- SHOT frames and descriptors on PCL's correspondence-grouping tutorial pair (model milk
 * 12,575 points, scene 640 x 480) match PCL 1.13's own outputs: given PCL's normals and keypoints, so that only
 * the SHOT code is compared, at radius 0.02 over the full clouds, the NaN rows are the same and every other value
 * is within 1e-4, but for one scene keypoint explained below. Prints the time of both clouds' frames and
 * descriptors on 2 threads. */
#include "test_support.h"
#include "io/cloud_io.h"
#include "host_util.h"
#include "descriptor/shot.h"
#include "spatial/kdtree3d.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define REF "pcl_reference/tutorial/"
#define SHOT_RADIUS 0.02f
#define TOLERANCE 1e-4

typedef struct tutorial_cloud {
    const char *name, *pcd, *prefix;
    host_cloud cloud;
    float *normals;       /* n x 4, PCL's */
    uint32_t *keypoints;  /* PCL's keypoint indices */
    size_t k;
    float *keypoint_xyz;  /* k x 3 */
    float *ref_shot;      /* k x 352, PCL's */
    float *ref_rf;        /* k x 9, PCL's */
    float *frames, *descriptors;
} tutorial_cloud;

/* Reads <data>/<REF><prefix><suffix>, checks it holds whole rows of `row_bytes`, returns it and its row count. */
static void *read_reference(const char *prefix, const char *suffix, size_t row_bytes, size_t *rows)
{
    char rel[256];
    snprintf(rel, sizeof rel, REF "%s%s", prefix, suffix);
    return grip_test_read_rows(rel, row_bytes, rows);
}

static void load(tutorial_cloud *c)
{
    c->cloud = grip_test_read_cloud(c->pcd);
    size_t rows = 0;
    c->normals = read_reference(c->prefix, "_normals.f32.gz", 4 * sizeof(float), &rows);
    ck_assert_uint_eq(rows, c->cloud.n);
    c->keypoints = read_reference(c->prefix, "_keypoints.u32.gz", sizeof(uint32_t), &c->k);
    c->ref_shot = read_reference(c->prefix, "_shot.f32.gz", GRIP_SHOT_DIM * sizeof(float), &rows);
    ck_assert_uint_eq(rows, c->k);
    c->ref_rf = read_reference(c->prefix, "_shot_rf.f32.gz", 9 * sizeof(float), &rows);
    ck_assert_uint_eq(rows, c->k);
    c->keypoint_xyz = grip_test_gather_xyz(&c->cloud, c->keypoints, c->k);
    c->frames = malloc(c->k * 9 * sizeof(float));
    c->descriptors = malloc(c->k * GRIP_SHOT_DIM * sizeof(float));
    ck_assert(c->frames && c->descriptors);
}

static void unload(tutorial_cloud *c)
{
    host_cloud_free(&c->cloud);
    free(c->normals);
    free(c->keypoints);
    free(c->keypoint_xyz);
    free(c->ref_shot);
    free(c->ref_rf);
    free(c->frames);
    free(c->descriptors);
}

/* Frames then descriptors of one cloud; returns the milliseconds they took (the tree build not included). */
static double describe(grip_ctx *ctx, tutorial_cloud *c)
{
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, c->cloud.xyz, c->cloud.n, &tree), GRIP_OK);
    double t0 = host_now_ms();
    ck_assert_int_eq(
        grip_shot_lrf(ctx, c->cloud.xyz, c->cloud.n, tree, c->keypoint_xyz, c->k, SHOT_RADIUS, 0, c->frames), GRIP_OK);
    ck_assert_int_eq(grip_shot_describe(ctx, c->cloud.xyz, c->normals, c->cloud.n, tree, c->keypoint_xyz, c->k,
                                        c->frames, SHOT_RADIUS, 0, c->descriptors),
                     GRIP_OK);
    double t = host_now_ms() - t0;
    grip_kdtree3d_free(tree);
    return t;
}

/* The one descriptor row that differs from PCL's, scene keypoint 2041 (point 10820). Its support is 6 points
 * in one plane that holds the scene's x direction exactly (4 of them lie on the keypoint's image row with
 * offsets (dx, 0, 0)), so the weighted covariance has rank 2 and the frame's z axis is (0, 0.8017, 0.5977).
 * Eigen's tridiagonal QR, which PCL uses, returns that 0 exactly; our Jacobi solver returns -9e-17 (both are
 * right to double precision, and the frames agree to 1e-16). PCL then finds z = 0 for the 4 row points, puts
 * them in the lower hemisphere (inclination exactly 90 degrees), while -9e-17 * dx puts them in the upper one:
 * the votes of 4 of 6 points move between volumes 16-19 and their neighbours, a max |diff| of 0.555. */
#define SCENE_DEGENERATE_ROW 2041

typedef struct row_diff {
    size_t nan_mismatch; /* rows NaN on one side only */
    size_t nan_rows;     /* rows NaN on both sides */
    size_t over;         /* rows with some |diff| > TOLERANCE */
    size_t first_over;   /* the first such row */
    double max_diff;     /* over the rows within tolerance */
    double worst;        /* over every finite row */
} row_diff;

/* Compares k rows of `cols` values; reports rows beyond the tolerance on stderr, naming the keypoint. */
static row_diff compare_rows(const char *what, const float *ours, const float *ref, size_t k, size_t cols)
{
    row_diff r = {0, 0, 0, 0, 0.0, 0.0};
    for (size_t i = 0; i < k; ++i) {
        const float *a = ours + cols * i, *b = ref + cols * i;
        int nan_a = isnan(a[0]), nan_b = isnan(b[0]);
        if (nan_a || nan_b) {
            r.nan_rows += nan_a && nan_b;
            if (nan_a != nan_b) {
                ++r.nan_mismatch;
                fprintf(stderr, "%s row %zu: NaN in %s only\n", what, i, nan_a ? "ours" : "PCL's");
            }
            continue;
        }
        double row_max = 0.0;
        for (size_t c = 0; c < cols; ++c)
            row_max = fmax(row_max, fabs((double)a[c] - (double)b[c]));
        r.worst = fmax(r.worst, row_max);
        if (row_max > TOLERANCE) {
            if (r.over++ == 0)
                r.first_over = i;
            fprintf(stderr, "%s row %zu: max |diff| %.3g\n", what, i, row_max);
        } else
            r.max_diff = fmax(r.max_diff, row_max);
    }
    fprintf(stderr, "%s: %zu rows, %zu NaN in both, %zu NaN mismatches, %zu over %.0e, max |diff| %.3g (worst %.3g)\n",
            what, k, r.nan_rows, r.nan_mismatch, r.over, TOLERANCE, r.max_diff, r.worst);
    return r;
}

START_TEST(tutorial_pair_matches_pcl)
{
    tutorial_cloud clouds[2] = {
        {.name = "model", .pcd = "pcl/data_repo/correspondence_grouping/milk.pcd", .prefix = "model"},
        {.name = "scene", .pcd = "pcl/milk_cartoon_all_small_clorox.pcd", .prefix = "scene"},
    };
    grip_ctx_options opts = {sizeof opts, -1, 2};
    grip_ctx *ctx = NULL;
    ck_assert_int_eq(grip_ctx_new(&opts, &ctx), GRIP_OK);
    double ms = 0.0;
    for (int m = 0; m < 2; ++m) {
        tutorial_cloud *c = &clouds[m];
        load(c);
        double t = describe(ctx, c);
        ms += t;
        fprintf(stderr, "%s: %zu points, %zu keypoints, SHOT frames + descriptors %.1f ms (2 threads)\n", c->name,
                c->cloud.n, c->k, t);
        char what[64];
        snprintf(what, sizeof what, "%s frames", c->name);
        row_diff f = compare_rows(what, c->frames, c->ref_rf, c->k, 9);
        snprintf(what, sizeof what, "%s SHOT", c->name);
        row_diff d = compare_rows(what, c->descriptors, c->ref_shot, c->k, GRIP_SHOT_DIM);
        ck_assert_uint_eq(f.nan_mismatch, 0);
        ck_assert_uint_eq(d.nan_mismatch, 0);
        ck_assert_uint_eq(f.over, 0);
        if (m == 0) {
            ck_assert_uint_eq(d.over, 0);
        } else {
            ck_assert_uint_le(d.over, 1);
            if (d.over == 1)
                ck_assert_uint_eq(d.first_over, SCENE_DEGENERATE_ROW);
        }
        ck_assert_uint_lt(d.nan_rows, c->k);
        unload(c);
    }
    fprintf(stderr, "model + scene SHOT: %.1f ms on 2 threads\n", ms);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shot_tutorial");
    TCase *tc = tcase_create("tutorial");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, tutorial_pair_matches_pcl);
    suite_add_tcase(s, tc);
    return grip_test_run_with_data(s, REF "scene_shot.f32.gz");
}
