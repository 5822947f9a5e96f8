/* test_sym3_eigen.c -- the Jacobi eigen-solver returns ascending eigenvalues and orthonormal eigenvector
 * columns with A v = lambda v to double precision: random matrices over many scales, repeated and zero
 * eigenvalues, diagonal and rank-1 input. PCL's float solver agrees with it on well-separated spectra and
 * keeps PCL's degenerate answers (0 for a tiny determinant, NaN vectors for rank < 2). */
#include "test_support.h"
#include "math/sym3_eigen.h"

#include <math.h>

static double matrix_norm(const double a[9])
{
    double s = 0.0;
    for (int i = 0; i < 9; ++i)
        s += a[i] * a[i];
    return sqrt(s);
}

/* Asserts the decomposition of a is complete and accurate to `tol` relative to |a|. */
static void check_decomposition(const double a[9], const double values[3], const double vecs[9], double tol)
{
    double scale = matrix_norm(a);
    if (scale == 0.0)
        scale = 1.0;
    ck_assert(values[0] <= values[1] && values[1] <= values[2]);
    for (int c = 0; c < 3; ++c) {
        for (int r = 0; r < 3; ++r) {
            double av = a[r * 3 + 0] * vecs[0 * 3 + c] + a[r * 3 + 1] * vecs[1 * 3 + c] +
                        a[r * 3 + 2] * vecs[2 * 3 + c];
            ck_assert_double_le(fabs(av - values[c] * vecs[r * 3 + c]), tol * scale);
        }
        for (int d = 0; d < 3; ++d) {
            double dot = vecs[0 * 3 + c] * vecs[0 * 3 + d] + vecs[1 * 3 + c] * vecs[1 * 3 + d] +
                         vecs[2 * 3 + c] * vecs[2 * 3 + d];
            ck_assert_double_le(fabs(dot - (c == d ? 1.0 : 0.0)), 1e-14);
        }
    }
}

/* A = R diag(l) R^T with R a rotation from a random unit quaternion. */
static void compose(uint64_t *rng, const double l[3], double a[9])
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
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            a[i * 3 + j] = r[i * 3 + 0] * l[0] * r[j * 3 + 0] + r[i * 3 + 1] * l[1] * r[j * 3 + 1] +
                           r[i * 3 + 2] * l[2] * r[j * 3 + 2];
}

START_TEST(random_matrices_over_many_scales)
{
    uint64_t rng = 12345;
    for (int trial = 0; trial < 20000; ++trial) {
        double scale = pow(10.0, (trial % 41) - 20); /* 1e-20 .. 1e20 */
        double a[9];
        for (int i = 0; i < 3; ++i)
            for (int j = i; j < 3; ++j)
                a[i * 3 + j] = a[j * 3 + i] = scale * grip_test_uniform(&rng, -1.0f, 1.0f);
        double values[3], vecs[9];
        grip_sym3_eigen(a, values, vecs);
        check_decomposition(a, values, vecs, 1e-14);
        double trace = a[0] + a[4] + a[8];
        ck_assert_double_le(fabs(values[0] + values[1] + values[2] - trace), 1e-14 * matrix_norm(a) * 3);
    }
}
END_TEST

START_TEST(known_spectra_are_recovered)
{
    uint64_t rng = 777;
    const double spectra[][3] = {{1e-9, 1.0, 2.0},   {0.0, 0.0, 1.0},   {3.0, 3.0, 3.0},  {-2.0, 5.0, 5.0},
                                 {1.0, 1.0 + 1e-12, 4.0}, {-1e-3, 0.0, 1e-3}, {1e-30, 1e-15, 1.0}};
    for (size_t s = 0; s < sizeof spectra / sizeof spectra[0]; ++s)
        for (int trial = 0; trial < 200; ++trial) {
            double a[9], values[3], vecs[9];
            compose(&rng, spectra[s], a);
            grip_sym3_eigen(a, values, vecs);
            check_decomposition(a, values, vecs, 1e-14);
            for (int i = 0; i < 3; ++i)
                ck_assert_double_le(fabs(values[i] - spectra[s][i]), 1e-14 * 4.0);
        }
}
END_TEST

START_TEST(diagonal_and_zero_matrices)
{
    const double diag[9] = {3.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 2.0};
    double values[3], vecs[9];
    grip_sym3_eigen(diag, values, vecs);
    ck_assert_double_eq(values[0], -1.0);
    ck_assert_double_eq(values[1], 2.0);
    ck_assert_double_eq(values[2], 3.0);
    ck_assert_double_eq(fabs(vecs[1 * 3 + 0]), 1.0); /* eigenvector of -1 is the y axis */
    ck_assert_double_eq(fabs(vecs[2 * 3 + 1]), 1.0);
    ck_assert_double_eq(fabs(vecs[0 * 3 + 2]), 1.0);

    const double zero[9] = {0};
    grip_sym3_eigen(zero, values, vecs);
    for (int i = 0; i < 3; ++i)
        ck_assert_double_eq(values[i], 0.0);
    check_decomposition(zero, values, vecs, 0.0);
}
END_TEST

START_TEST(rank_one_outer_product)
{
    const double v[3] = {0.3, -0.5, 0.8};
    double a[9], values[3], vecs[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            a[i * 3 + j] = v[i] * v[j];
    grip_sym3_eigen(a, values, vecs);
    check_decomposition(a, values, vecs, 1e-15);
    ck_assert_double_le(fabs(values[0]), 1e-16);
    ck_assert_double_le(fabs(values[1]), 1e-16);
    ck_assert_double_le(fabs(values[2] - 0.98), 1e-15);
    double dot = (vecs[2] * v[0] + vecs[5] * v[1] + vecs[8] * v[2]) / sqrt(0.98);
    ck_assert_double_le(fabs(fabs(dot) - 1.0), 1e-15);
}
END_TEST

START_TEST(pcl_solver_agrees_on_separated_spectra)
{
    uint64_t rng = 4242;
    for (int trial = 0; trial < 5000; ++trial) {
        double scale = pow(10.0, (trial % 9) - 6); /* covariances of mm to km sized patches */
        double l[3] = {scale * grip_test_uniform(&rng, 0.0f, 0.1f), scale * grip_test_uniform(&rng, 0.3f, 0.6f),
                       scale * grip_test_uniform(&rng, 0.8f, 1.0f)};
        double a[9], values[3], vecs[9];
        compose(&rng, l, a);
        float af[9], vec[3];
        for (int i = 0; i < 9; ++i)
            af[i] = (float)a[i];
        float l0 = grip_sym3_smallest_pcl(af, vec);
        grip_sym3_eigen(a, values, vecs);
        ck_assert_double_le(fabs(l0 - values[0]), 1e-5 * scale);
        double dot = vec[0] * vecs[0] + vec[1] * vecs[3] + vec[2] * vecs[6];
        ck_assert_double_le(fabs(fabs(dot) - 1.0), 1e-6);
        ck_assert_double_le(fabs(sqrt(vec[0] * vec[0] + vec[1] * vec[1] + vec[2] * vec[2]) - 1.0), 1e-6);
    }
}
END_TEST

START_TEST(pcl_solver_degenerate_cases)
{
    float vec[3];
    const float zero[9] = {0};
    ck_assert_float_eq(grip_sym3_smallest_pcl(zero, vec), 0.0f);
    ck_assert(isnan(vec[0]) && isnan(vec[1]) && isnan(vec[2])); /* PCL: every cross product is 0, 0/0 */
    const float line[9] = {2.0f, 0, 0, 0, 0, 0, 0, 0, 0};
    ck_assert_float_eq(grip_sym3_smallest_pcl(line, vec), 0.0f);
    ck_assert(isnan(vec[0]) && isnan(vec[1]) && isnan(vec[2]));
    /* a plane: determinant 0, so l0 is exactly 0 and the normal is the z axis */
    const float plane[9] = {3.0f, 1.0f, 0, 1.0f, 2.0f, 0, 0, 0, 0};
    ck_assert_float_eq(grip_sym3_smallest_pcl(plane, vec), 0.0f);
    ck_assert_float_eq(fabsf(vec[2]), 1.0f);
    ck_assert_float_eq(vec[0], 0.0f);
    ck_assert_float_eq(vec[1], 0.0f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sym3_eigen");
    TCase *tc = tcase_create("jacobi");
    tcase_add_test(tc, random_matrices_over_many_scales);
    tcase_add_test(tc, known_spectra_are_recovered);
    tcase_add_test(tc, diagonal_and_zero_matrices);
    tcase_add_test(tc, rank_one_outer_product);
    tcase_add_test(tc, pcl_solver_agrees_on_separated_spectra);
    tcase_add_test(tc, pcl_solver_degenerate_cases);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return grip_test_run(suite()); }
