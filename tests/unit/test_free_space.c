/* test_free_space.c -- the camera of an organized cloud is recovered, and model points are classified as seen,
 * seen through (free-space violation) or occluded, on a rendered wall. */
#include "test_support.h"
#include "verify/free_space.h"

#include <math.h>
#include <stdlib.h>

enum { W = 160, H = 120 };
static const double FX = 131.25, FY = 131.25, CX = 79.5, CY = 59.5;

/* A wall at depth `z` seen through a pinhole; a hole (NaN) in the top-left corner. */
static float *render_wall(float z)
{
    float *xyz = malloc(sizeof(float) * 3 * W * H);
    for (int v = 0; v < H; v++)
        for (int u = 0; u < W; u++) {
            float *p = xyz + 3 * (v * W + u);
            if (u < 10 && v < 10) {
                p[0] = p[1] = p[2] = NAN;
                continue;
            }
            p[0] = (float)((u - CX) / FX * z);
            p[1] = (float)((v - CY) / FY * z);
            p[2] = z;
        }
    return xyz;
}

/* n points of a small square patch facing the camera, centred at the origin of its own frame. */
static float *patch(size_t *n)
{
    *n = 21 * 21;
    float *m = malloc(sizeof(float) * 3 * *n);
    for (int i = 0; i < 21; i++)
        for (int j = 0; j < 21; j++) {
            float *p = m + 3 * (i * 21 + j);
            p[0] = (i - 10) * 0.005f;
            p[1] = (j - 10) * 0.005f;
            p[2] = 0;
        }
    return m;
}

static void translation(double pose[16], double x, double y, double z)
{
    for (int k = 0; k < 16; k++)
        pose[k] = (k % 5 == 0);
    pose[3] = x;
    pose[7] = y;
    pose[11] = z;
}

START_TEST(camera_is_recovered_from_the_cloud)
{
    float *wall = render_wall(1.0f);
    grip_pinhole cam;
    grip_pinhole_estimate(wall, W, H, 4, &cam);
    ck_assert(cam.valid);
    ck_assert_double_eq_tol(cam.fx, FX, 1e-3);
    ck_assert_double_eq_tol(cam.fy, FY, 1e-3);
    ck_assert_double_eq_tol(cam.cx, CX, 1e-3);
    ck_assert_double_eq_tol(cam.cy, CY, 1e-3);
    grip_pinhole_estimate(wall, W * H, 1, 4, &cam); /* the same points, unorganized: no camera */
    ck_assert(!cam.valid);
    free(wall);
}
END_TEST

/* The fit's sums run in fixed blocks of rows: 1, 3 and 16 threads give the same bits (the GPU and CPU verify
 * stages rely on it), on a noisy wall whose rows are fewer than the blocks and on one of more. */
START_TEST(camera_fit_is_the_same_on_any_thread_count)
{
    float *wall = render_wall(1.3f);
    uint64_t seed = 7;
    for (size_t i = 0; i < 3 * W * H; i++)
        wall[i] += isfinite(wall[i]) ? grip_test_uniform(&seed, -1e-3f, 1e-3f) : 0.0f;
    const uint32_t heights[] = {H, 40};
    for (int h = 0; h < 2; h++) {
        grip_pinhole one, three, sixteen;
        grip_pinhole_estimate(wall, W, heights[h], 1, &one);
        grip_pinhole_estimate(wall, W, heights[h], 3, &three);
        grip_pinhole_estimate(wall, W, heights[h], 16, &sixteen);
        ck_assert_mem_eq(&one, &three, sizeof one);
        ck_assert_mem_eq(&one, &sixteen, sizeof one);
        ck_assert_double_eq_tol(one.fx, FX, 1.0);
    }
    free(wall);
}
END_TEST

START_TEST(points_on_the_surface_are_seen_points_in_front_violate)
{
    float *wall = render_wall(1.0f);
    size_t n, seen, violations;
    float *m = patch(&n);
    grip_pinhole cam;
    grip_pinhole_estimate(wall, W, H, 4, &cam);
    double pose[16];
    translation(pose, 0.05, 0.0, 1.0); /* on the wall */
    grip_free_space_count(&cam, wall, W, H, m, n, pose, 0.01, &seen, &violations);
    ck_assert_uint_eq(seen, n);
    ck_assert_uint_eq(violations, 0);
    translation(pose, 0.05, 0.0, 0.9); /* 10 cm in front of the wall: the camera sees the wall through it */
    grip_free_space_count(&cam, wall, W, H, m, n, pose, 0.01, &seen, &violations);
    ck_assert_uint_eq(seen, 0);
    ck_assert_uint_eq(violations, n);
    translation(pose, 0.05, 0.0, 1.2); /* behind the wall: occluded, says nothing */
    grip_free_space_count(&cam, wall, W, H, m, n, pose, 0.01, &seen, &violations);
    ck_assert_uint_eq(seen + violations, 0);
    free(m);
    free(wall);
}
END_TEST

START_TEST(points_outside_the_image_or_on_holes_are_not_counted)
{
    float *wall = render_wall(1.0f);
    size_t n, seen, violations;
    float *m = patch(&n);
    grip_pinhole cam;
    grip_pinhole_estimate(wall, W, H, 4, &cam);
    double pose[16];
    translation(pose, 5.0, 0.0, 0.9); /* far outside the field of view */
    grip_free_space_count(&cam, wall, W, H, m, n, pose, 0.01, &seen, &violations);
    ck_assert_uint_eq(seen + violations, 0);
    /* in front of the NaN corner (pixels 0..9): its centre pixel's 3x3 neighbourhood holds no data */
    translation(pose, (2 - CX) / FX * 0.9, (2 - CY) / FY * 0.9, 0.9);
    float one[3] = {0, 0, 0};
    grip_free_space_count(&cam, wall, W, H, one, 1, pose, 0.01, &seen, &violations);
    ck_assert_uint_eq(seen + violations, 0);
    free(m);
    free(wall);
}
END_TEST

/* Many poses at once, their points split in chunks over the threads, count what each pose counts alone: a model
 * of several chunks and a partial last one, an empty one, one of a single point; poses on, in front of, behind and
 * beside the wall. */
START_TEST(many_poses_count_as_each_alone)
{
    float *wall = render_wall(1.0f);
    grip_pinhole cam;
    grip_pinhole_estimate(wall, W, H, 4, &cam);
    const size_t n_big = 2 * GRIP_FREE_SPACE_CHUNK + 123;
    float *big = malloc(sizeof(float) * 3 * n_big);
    uint64_t seed = 3;
    for (size_t i = 0; i < n_big; i++) { /* a 12 cm square, a point in 100 NaN */
        big[3 * i] = i % 100 == 7 ? NAN : grip_test_uniform(&seed, -0.06f, 0.06f);
        big[3 * i + 1] = grip_test_uniform(&seed, -0.06f, 0.06f);
        big[3 * i + 2] = grip_test_uniform(&seed, -0.02f, 0.02f);
    }
    const float one[3] = {0, 0, 0};
    enum { JOBS = 6 };
    double poses[JOBS][16];
    translation(poses[0], 0.05, 0.0, 1.0);    /* straddles the wall: some seen, some in front, some behind */
    translation(poses[1], 0.0, 0.0, 0.9);     /* in front */
    translation(poses[2], 0.0, 0.0, 1.2);     /* behind */
    translation(poses[3], -0.45, -0.35, 1.0); /* across the image's corner and the hole */
    translation(poses[4], 0.0, 0.0, 0.95);
    translation(poses[5], 0.0, 0.0, 0.9);
    const grip_free_space_job jobs[JOBS] = {{big, n_big, poses[0]}, {big, n_big, poses[1]}, {big, n_big, poses[2]},
                                            {big, n_big, poses[3]}, {big, 0, poses[4]},     {one, 1, poses[5]}};
    size_t want_seen[JOBS], want_violations[JOBS];
    for (int k = 0; k < JOBS; k++)
        grip_free_space_count(&cam, wall, W, H, jobs[k].model_xyz, jobs[k].n_model, jobs[k].pose, 0.01, &want_seen[k],
                              &want_violations[k]);
    ck_assert_uint_gt(want_seen[0], 0);
    ck_assert_uint_gt(want_violations[0], 0);
    ck_assert_uint_eq(want_violations[5], 1);
    float want[JOBS]; /* each pose alone: violations / (seen + violations), 0 when neither */
    for (int k = 0; k < JOBS; k++)
        want[k] = want_seen[k] + want_violations[k]
                      ? (float)((double)want_violations[k] / (double)(want_seen[k] + want_violations[k]))
                      : 0.0f;
    ck_assert_float_eq(want[4], 0.0f); /* no points */
    ck_assert_float_eq(want[5], 1.0f);
    for (uint32_t threads = 1; threads <= 7; threads += 3) {
        grip_ctx *ctx = grip_test_ctx_threads(threads);
        float violation[JOBS];
        ck_assert_int_eq(grip_free_space_violations(ctx, &cam, wall, W, H, jobs, JOBS, 0.01, violation), GRIP_OK);
        ck_assert_mem_eq(violation, want, sizeof want);
        /* no camera: no fraction */
        grip_pinhole none = cam;
        none.valid = 0;
        ck_assert_int_eq(grip_free_space_violations(ctx, &none, wall, W, H, jobs, JOBS, 0.01, violation), GRIP_OK);
        for (int k = 0; k < JOBS; k++)
            ck_assert(isnan(violation[k]));
        grip_ctx_free(ctx);
    }
    free(big);
    free(wall);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("free_space");
    TCase *tc = tcase_create("wall");
    tcase_add_test(tc, camera_is_recovered_from_the_cloud);
    tcase_add_test(tc, camera_fit_is_the_same_on_any_thread_count);
    tcase_add_test(tc, points_on_the_surface_are_seen_points_in_front_violate);
    tcase_add_test(tc, points_outside_the_image_or_on_holes_are_not_counted);
    tcase_add_test(tc, many_poses_count_as_each_alone);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
