/* test_rigid_fit.c -- the Kabsch fit recovers random rigid motions to 1e-9, always returns a proper rotation
 * (mirrored and coplanar input, the 3-point fits of RANSAC), survives collinear and coincident points, and
 * refuses too few pairs, non-finite coordinates and NULL arguments with a clear error. */
#include "test_support.h"
#include "math/rigid_fit.h"

#include <lapacke.h>
#include <math.h>
#include <string.h>

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
        grip_pose_apply(pose, src + i * 3, dst + i * 3);
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
    grip_ctx *ctx = grip_test_ctx();
    uint64_t rng = 2024;
    double src[64 * 3], dst[64 * 3], truth[16], fit[16], worst = 0.0;
    for (int trial = 0; trial < 2000; ++trial) {
        size_t n = 3 + (size_t)(trial % 62);
        double scale = pow(10.0, (trial % 5) - 2); /* clouds from 1 cm to 100 m across */
        for (size_t i = 0; i < n * 3; ++i)
            src[i] = scale * grip_test_uniform(&rng, -1.0f, 1.0f);
        random_pose(&rng, truth);
        apply_all(truth, src, n, dst);
        ck_assert_int_eq(grip_rigid_fit(ctx, src, dst, n, fit), GRIP_OK);
        assert_proper_rotation(fit);
        worst = fmax(worst, max_pose_difference(fit, truth));
    }
    ck_assert_double_le(worst, 1e-9);
    grip_ctx_free(ctx);
}
END_TEST

/* Three points and coplanar sets: the cross-covariance has rank 2, its third singular vectors have arbitrary
 * signs, and only the reflection fix makes the result the rotation rather than a mirror. */
START_TEST(coplanar_points_give_the_rotation_not_a_mirror)
{
    grip_ctx *ctx = grip_test_ctx();
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
        ck_assert_int_eq(grip_rigid_fit(ctx, src, dst, n, fit), GRIP_OK);
        assert_proper_rotation(fit);
        ck_assert_double_le(max_pose_difference(fit, truth), 1e-9);
    }
    grip_ctx_free(ctx);
}
END_TEST

/* A mirrored target has no exact rigid fit: without the reflection fix Kabsch returns the mirror (det -1).
 * The fit must be a proper rotation that fits at least as well as the identity; for a cloud flat in z the
 * mirror image is the cloud itself and the fit is exactly the identity. */
static double residual(const double pose[16], const double *src, const double *dst, size_t n)
{
    double sum = 0.0, moved[3];
    for (size_t i = 0; i < n; ++i) {
        grip_pose_apply(pose, src + i * 3, moved);
        for (int d = 0; d < 3; ++d)
            sum += (moved[d] - dst[i * 3 + d]) * (moved[d] - dst[i * 3 + d]);
    }
    return sum;
}

START_TEST(mirrored_target_gives_a_proper_rotation)
{
    grip_ctx *ctx = grip_test_ctx();
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
    ck_assert_int_eq(grip_rigid_fit(ctx, src, dst, 30, fit), GRIP_OK);
    assert_proper_rotation(fit);
    ck_assert_double_le(residual(fit, src, dst, 30), residual(identity, src, dst, 30));
    /* flat in z: the mirror is the cloud itself, and the identity fits exactly */
    for (size_t i = 0; i < 30; ++i)
        src[i * 3 + 2] = dst[i * 3 + 2] = 0.0;
    ck_assert_int_eq(grip_rigid_fit(ctx, src, dst, 30, fit), GRIP_OK);
    assert_proper_rotation(fit);
    ck_assert_double_le(max_pose_difference(fit, identity), 1e-12);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(collinear_and_coincident_points_do_not_break_it)
{
    grip_ctx *ctx = grip_test_ctx();
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
    ck_assert_int_eq(grip_rigid_fit(ctx, src, dst, 10, fit), GRIP_OK);
    assert_proper_rotation(fit);
    for (size_t i = 0; i < 10; ++i) { /* the rotation about the line is free, the line itself is not */
        grip_pose_apply(fit, src + i * 3, moved);
        for (int d = 0; d < 3; ++d)
            ck_assert_double_le(fabs(moved[d] - dst[i * 3 + d]), 1e-9);
    }
    for (size_t i = 0; i < 10 * 3; ++i) { /* all points at one place */
        src[i] = 1.0 + (double)(i % 3);
        dst[i] = -4.0 + (double)(i % 3);
    }
    ck_assert_int_eq(grip_rigid_fit(ctx, src, dst, 10, fit), GRIP_OK);
    assert_proper_rotation(fit);
    grip_pose_apply(fit, src, moved);
    for (int d = 0; d < 3; ++d)
        ck_assert_double_le(fabs(moved[d] - dst[d]), 1e-12);
    grip_ctx_free(ctx);
}
END_TEST

/* grip_svd3 is LAPACKE_dgesvd's row-major answer bit for bit (the fits of RANSAC and ICP keep their values): on
 * random cross-covariances of full rank, of rank 2 and 1 (coplanar and collinear points), negative determinants, the
 * zero matrix, and a NaN, which both refuse. */
START_TEST(svd3_is_lapackes_row_major_svd)
{
    uint64_t rng = 77;
    for (int t = 0; t < 20000; ++t) {
        double h[9];
        const int rank = 3 - t % 4; /* 3, 2, 1, 0 */
        for (int i = 0; i < 9; ++i)
            h[i] = 0.0;
        for (int r = 0; r < rank; ++r) { /* a sum of rank outer products */
            double a[3], b[3];
            for (int d = 0; d < 3; ++d) {
                a[d] = grip_test_uniform(&rng, -1.0f, 1.0f);
                b[d] = grip_test_uniform(&rng, -1.0f, 1.0f) * (t % 7 == 0 ? 1e-6 : 1.0);
            }
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j)
                    h[i * 3 + j] += a[i] * b[j];
        }
        double s0[3], u0[9], vt0[9], superb[2], copy[9];
        memcpy(copy, h, sizeof h);
        const lapack_int info0 = LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'A', 'A', 3, 3, copy, 3, s0, u0, 3, vt0, 3, superb);
        double s1[3], u1[9], vt1[9];
        ck_assert_int_eq(grip_svd3(h, s1, u1, vt1), (int)info0);
        ck_assert_int_eq(info0, 0);
        ck_assert_msg(!memcmp(s0, s1, sizeof s0) && !memcmp(u0, u1, sizeof u0) && !memcmp(vt0, vt1, sizeof vt0),
                      "matrix %d (rank %d): grip_svd3 differs from LAPACKE_dgesvd", t, rank);
    }
    double h[9] = {1, 0, 0, 0, NAN, 0, 0, 0, 1}, s[3], u[9], vt[9], superb[2];
    ck_assert_int_ne(grip_svd3(h, s, u, vt), 0);
    ck_assert_int_ne(LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'A', 'A', 3, 3, h, 3, s, u, 3, vt, 3, superb), 0);
}
END_TEST

START_TEST(bad_input_is_refused_clearly)
{
    grip_ctx *ctx = grip_test_ctx();
    double src[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0}, dst[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0}, fit[16];
    ck_assert_int_eq(grip_rigid_fit(ctx, src, dst, 2, fit), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "at least 3 point pairs, got 2"));
    ck_assert_int_eq(grip_rigid_fit(ctx, src, dst, 0, fit), GRIP_EINVAL);
    ck_assert_int_eq(grip_rigid_fit(ctx, NULL, dst, 3, fit), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "must not be NULL"));
    dst[4] = NAN;
    ck_assert_int_eq(grip_rigid_fit(ctx, src, dst, 3, fit), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "not finite"));
    grip_ctx_free(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("rigid_fit");
    TCase *tc = tcase_create("kabsch");
    tcase_add_test(tc, random_motions_are_recovered);
    tcase_add_test(tc, coplanar_points_give_the_rotation_not_a_mirror);
    tcase_add_test(tc, mirrored_target_gives_a_proper_rotation);
    tcase_add_test(tc, collinear_and_coincident_points_do_not_break_it);
    tcase_add_test(tc, svd3_is_lapackes_row_major_svd);
    tcase_add_test(tc, bad_input_is_refused_clearly);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return grip_test_run(suite()); }
