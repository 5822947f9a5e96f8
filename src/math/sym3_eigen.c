/* sym3_eigen.c -- symmetric 3x3 eigen-solvers: cyclic Jacobi rotations in double precision (sym3_jacobi.h,
 * shared with CUDA kernels), and a transcription of PCL's float closed-form solver.
 * PCL's solver is kept for normals, whose parity with PCL depends on reproducing its float rounding where the
 * two smallest eigenvalues nearly coincide. */
#include "math/sym3_eigen.h"
#include "math/sym3_jacobi.h"

#include <float.h>
#include <math.h>

void grip_sym3_eigen(const double a[9], double values[3], double vecs[9])
{
    grip_sym3_jacobi(a, values, vecs);
}

/* ---- PCL 1.13's float solver (pcl/common/impl/eigen.hpp), operation for operation ---------------------- */

/* computeRoots2: the roots of x^2 - b x + c with a third root 0 (PCL forms b*b - 4c in double). */
static void pcl_roots_quadratic(float b, float c, float roots[3])
{
    roots[0] = 0.0f;
    float d = (float)(b * b - 4.0 * c);
    if (d < 0.0f)
        d = 0.0f;
    float sd = sqrtf(d);
    roots[2] = 0.5f * (b + sd);
    roots[1] = 0.5f * (b - sd);
}

static void swap_float(float *a, float *b)
{
    float t = *a;
    *a = *b;
    *b = t;
}

/* computeRoots: the eigenvalues of m, ascending, from the characteristic cubic in trigonometric form. */
static void pcl_roots(const float m[9], float roots[3])
{
    float m00 = m[0], m01 = m[1], m02 = m[2], m11 = m[4], m12 = m[5], m22 = m[8];
    float c0 = m00 * m11 * m22 + 2.0f * m01 * m02 * m12 - m00 * m12 * m12 - m11 * m02 * m02 - m22 * m01 * m01;
    float c1 = m00 * m11 - m01 * m01 + m00 * m22 - m02 * m02 + m11 * m22 - m12 * m12;
    float c2 = m00 + m11 + m22;
    if (fabsf(c0) < FLT_EPSILON) { /* one root is 0 */
        pcl_roots_quadratic(c2, c1, roots);
        return;
    }
    const float inv3 = (float)(1.0 / 3.0), sqrt3 = sqrtf(3.0f);
    float c2_over_3 = c2 * inv3;
    float a_over_3 = (c1 - c2 * c2_over_3) * inv3;
    if (a_over_3 > 0.0f)
        a_over_3 = 0.0f;
    float half_b = 0.5f * (c0 + c2_over_3 * (2.0f * c2_over_3 * c2_over_3 - c1));
    float q = half_b * half_b + a_over_3 * a_over_3 * a_over_3;
    if (q > 0.0f)
        q = 0.0f;
    float rho = sqrtf(-a_over_3);
    float theta = atan2f(sqrtf(-q), half_b) * inv3;
    float cos_theta = cosf(theta), sin_theta = sinf(theta);
    roots[0] = c2_over_3 + 2.0f * rho * cos_theta;
    roots[1] = c2_over_3 - rho * (cos_theta + sqrt3 * sin_theta);
    roots[2] = c2_over_3 - rho * (cos_theta - sqrt3 * sin_theta);
    if (roots[0] >= roots[1])
        swap_float(&roots[0], &roots[1]);
    if (roots[1] >= roots[2]) {
        swap_float(&roots[1], &roots[2]);
        if (roots[0] >= roots[1])
            swap_float(&roots[0], &roots[1]);
    }
    if (roots[0] <= 0.0f) /* a PSD matrix has no negative eigenvalue: PCL re-solves with l0 = 0 */
        pcl_roots_quadratic(c2, c1, roots);
}

static void cross3f(const float *a, const float *b, float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* getLargest3x3Eigenvector: the longest cross product of two rows (Eigen sums a 3-vector's squares as
 * x^2 + (y^2 + z^2)); the first of equal lengths wins. */
static void pcl_largest_cross(const float m[9], float vec[3])
{
    float cross[3][3];
    cross3f(m + 0, m + 3, cross[0]);
    cross3f(m + 0, m + 6, cross[1]);
    cross3f(m + 3, m + 6, cross[2]);
    int best = 0;
    float best_len = 0.0f;
    for (int r = 0; r < 3; ++r) {
        float len = sqrtf(cross[r][0] * cross[r][0] + (cross[r][1] * cross[r][1] + cross[r][2] * cross[r][2]));
        if (r == 0 || len > best_len) {
            best = r;
            best_len = len;
        }
    }
    for (int i = 0; i < 3; ++i)
        vec[i] = cross[best][i] / best_len;
}

float grip_sym3_smallest_pcl(const float a[9], float vec[3])
{
    float m[9] = {a[0], a[1], a[2], a[1], a[4], a[5], a[2], a[5], a[8]}, scale = 0.0f;
    for (int i = 0; i < 9; ++i)
        if (fabsf(m[i]) > scale)
            scale = fabsf(m[i]);
    if (scale <= FLT_MIN)
        scale = 1.0f;
    for (int i = 0; i < 9; ++i)
        m[i] /= scale;
    float roots[3];
    pcl_roots(m, roots);
    m[0] -= roots[0];
    m[4] -= roots[0];
    m[8] -= roots[0];
    pcl_largest_cross(m, vec);
    return roots[0] * scale;
}
