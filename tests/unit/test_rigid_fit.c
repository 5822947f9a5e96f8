/* test_rigid_fit.c -- the least-squares rigid fit (math/horn.h, Horn's quaternion, which RANSAC and ICP use)
 * recovers random rigid motions to 1e-9, always returns a proper rotation (mirrored and coplanar input, the
 * 3-point fits of RANSAC) and survives collinear and coincident points. */
#include "test_support.h"
#include "math/horn.h"

#include <math.h>
#include <string.h>

/* out = pose p (row-major 4x4) */
static void pose_apply(const double pose[16], const double p[3], double out[3])
{
    for (int i = 0; i < 3; ++i)
        out[i] = pose[i * 4 + 0] * p[0] + pose[i * 4 + 1] * p[1] + pose[i * 4 + 2] * p[2] + pose[i * 4 + 3];
}

static double det3x3_of_pose(const double p[16])
{
    return p[0] * (p[5] * p[10] - p[6] * p[9]) - p[1] * (p[4] * p[10] - p[6] * p[8]) +
           p[2] * (p[4] * p[9] - p[5] * p[8]);
}

/* A random rigid motion: rotation from a random unit quaternion, translation in [-2, 2]^3. */
static void random_pose(uint64_t *rng, double pose[16])
{
    double q[4], n = 0.0;
    for (int i = 0; i < 4; ++i) {
        q[i] = grip_test_uniform(rng, -1.0f, 1.0f);
        n += q[i] * q[i];
    }
    n = sqrt(n);
    double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                   2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    memset(pose, 0, 16 * sizeof *pose);
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j)
            pose[i * 4 + j] = r[i * 3 + j];
        pose[i * 4 + 3] = grip_test_uniform(rng, -2.0f, 2.0f);
    }
    pose[15] = 1.0;
}

static void apply_all(const double pose[16], const double *src, size_t n, double *dst)
{
    for (size_t i = 0; i < n; ++i)
        pose_apply(pose, src + i * 3, dst + i * 3);
}

static void assert_proper_rotation(const double p[16])
{
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            double dot = p[a * 4 + 0] * p[b * 4 + 0] + p[a * 4 + 1] * p[b * 4 + 1] + p[a * 4 + 2] * p[b * 4 + 2];
            ck_assert_double_le(fabs(dot - (a == b)), 1e-12);
        }
    ck_assert_double_le(fabs(det3x3_of_pose(p) - 1.0), 1e-12);
    ck_assert(p[12] == 0.0 && p[13] == 0.0 && p[14] == 0.0 && p[15] == 1.0);
}

static double max_pose_difference(const double a[16], const double b[16])
{
    double m = 0.0;
    for (int i = 0; i < 16; ++i)
        m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

START_TEST(random_motions_are_recovered)
{
    uint64_t rng = 2024;
    double src[64 * 3], dst[64 * 3], truth[16], fit[16], worst = 0.0;
    for (int trial = 0; trial < 2000; ++trial) {
        size_t n = 3 + (size_t)(trial % 62);
        double scale = pow(10.0, (trial % 5) - 2); /* clouds from 1 cm to 100 m across */
        for (size_t i = 0; i < n * 3; ++i)
            src[i] = scale * grip_test_uniform(&rng, -1.0f, 1.0f);
        random_pose(&rng, truth);
        apply_all(truth, src, n, dst);
        grip_horn_fit(src, dst, n, fit);
        assert_proper_rotation(fit);
        worst = fmax(worst, max_pose_difference(fit, truth));
    }
    ck_assert_double_le(worst, 1e-9);
}
END_TEST

/* Three points and coplanar sets: the cross-covariance has rank 2, where Kabsch's SVD needs its reflection fix to
 * give the rotation rather than a mirror; Horn's quaternion is a rotation by construction. */
START_TEST(coplanar_points_give_the_rotation_not_a_mirror)
{
    uint64_t rng = 77;
    double src[20 * 3], dst[20 * 3], truth[16], fit[16];
    for (int trial = 0; trial < 500; ++trial) {
        size_t n = 3 + (size_t)(trial % 18);
        for (size_t i = 0; i < n; ++i) {
            src[i * 3 + 0] = grip_test_uniform(&rng, -1.0f, 1.0f);
            src[i * 3 + 1] = grip_test_uniform(&rng, -1.0f, 1.0f);
            src[i * 3 + 2] = 0.5;
        }
        random_pose(&rng, truth);
        apply_all(truth, src, n, dst);
        grip_horn_fit(src, dst, n, fit);
        assert_proper_rotation(fit);
        ck_assert_double_le(max_pose_difference(fit, truth), 1e-9);
    }
}
END_TEST

/* A mirrored target has no exact rigid fit: without its reflection fix Kabsch's SVD returns the mirror (det -1).
 * The fit must be a proper rotation that fits at least as well as the identity; for a cloud flat in z the
 * mirror image is the cloud itself and the fit is exactly the identity. */
static double residual(const double pose[16], const double *src, const double *dst, size_t n)
{
    double sum = 0.0, moved[3];
    for (size_t i = 0; i < n; ++i) {
        pose_apply(pose, src + i * 3, moved);
        for (int d = 0; d < 3; ++d)
            sum += (moved[d] - dst[i * 3 + d]) * (moved[d] - dst[i * 3 + d]);
    }
    return sum;
}

START_TEST(mirrored_target_gives_a_proper_rotation)
{
    uint64_t rng = 5;
    double src[30 * 3], dst[30 * 3], fit[16];
    for (size_t i = 0; i < 30; ++i) {
        for (int d = 0; d < 3; ++d)
            src[i * 3 + d] = grip_test_uniform(&rng, -1.0f, 1.0f);
        dst[i * 3 + 0] = src[i * 3 + 0];
        dst[i * 3 + 1] = src[i * 3 + 1];
        dst[i * 3 + 2] = -src[i * 3 + 2];
    }
    static const double identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    grip_horn_fit(src, dst, 30, fit);
    assert_proper_rotation(fit);
    ck_assert_double_le(residual(fit, src, dst, 30), residual(identity, src, dst, 30));
    /* flat in z: the mirror is the cloud itself, and the identity fits exactly */
    for (size_t i = 0; i < 30; ++i)
        src[i * 3 + 2] = dst[i * 3 + 2] = 0.0;
    grip_horn_fit(src, dst, 30, fit);
    assert_proper_rotation(fit);
    ck_assert_double_le(max_pose_difference(fit, identity), 1e-12);
}
END_TEST

START_TEST(collinear_and_coincident_points_do_not_break_it)
{
    uint64_t rng = 9;
    double src[10 * 3], dst[10 * 3], truth[16], fit[16], moved[3];
    random_pose(&rng, truth);
    for (size_t i = 0; i < 10; ++i) {
        double s = grip_test_uniform(&rng, -1.0f, 1.0f);
        src[i * 3 + 0] = 0.1 + s;
        src[i * 3 + 1] = 0.2 - 2.0 * s;
        src[i * 3 + 2] = 0.3 + 0.5 * s;
    }
    apply_all(truth, src, 10, dst);
    grip_horn_fit(src, dst, 10, fit);
    assert_proper_rotation(fit);
    for (size_t i = 0; i < 10; ++i) { /* the rotation about the line is free, the line itself is not */
        pose_apply(fit, src + i * 3, moved);
        for (int d = 0; d < 3; ++d)
            ck_assert_double_le(fabs(moved[d] - dst[i * 3 + d]), 1e-9);
    }
    for (size_t i = 0; i < 10 * 3; ++i) { /* all points at one place */
        src[i] = 1.0 + (double)(i % 3);
        dst[i] = -4.0 + (double)(i % 3);
    }
    grip_horn_fit(src, dst, 10, fit);
    assert_proper_rotation(fit);
    pose_apply(fit, src, moved);
    for (int d = 0; d < 3; ++d)
        ck_assert_double_le(fabs(moved[d] - dst[d]), 1e-12);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("rigid_fit");
    TCase *tc = tcase_create("horn");
    tcase_add_test(tc, random_motions_are_recovered);
    tcase_add_test(tc, coplanar_points_give_the_rotation_not_a_mirror);
    tcase_add_test(tc, mirrored_target_gives_a_proper_rotation);
    tcase_add_test(tc, collinear_and_coincident_points_do_not_break_it);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return grip_test_run(suite()); }
