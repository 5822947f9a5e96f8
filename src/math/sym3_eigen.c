/* sym3_eigen.c -- symmetric 3x3 eigen-solvers: cyclic Jacobi rotations in double precision, and a
 * transcription of PCL's float closed-form solver.
 * Jacobi is slower than a closed-form cubic but accurate to the last bits for every input, including repeated
 * and tiny eigenvalues, which is what the local frames need. PCL's solver is kept for normals, whose parity
 * with PCL depends on reproducing its float rounding where the two smallest eigenvalues nearly coincide. */
#include "math/sym3_eigen.h"

#include <float.h>
#include <math.h>

/* Jacobi converges quadratically: 5 to 6 sweeps reach machine precision; the cap only guards NaN input. */
#define JACOBI_MAX_SWEEPS 64

static double off_diagonal_sum(const double m[3][3])
{
    return fabs(m[0][1]) + fabs(m[0][2]) + fabs(m[1][2]);
}

/* One rotation in the (p, q) plane that zeroes m[p][q] (Golub & Van Loan, the stable small-angle form).
 * r is the index of the third row/column. v accumulates the rotations (columns are eigenvectors). */
static void jacobi_rotate(double m[3][3], double v[3][3], int p, int q, int r)
{
    double apq = m[p][q];
    double theta = (m[q][q] - m[p][p]) / (2.0 * apq);
    double t = 1.0 / (fabs(theta) + sqrt(theta * theta + 1.0));
    if (theta < 0.0)
        t = -t;
    double c = 1.0 / sqrt(t * t + 1.0);
    double s = t * c;
    double tau = s / (1.0 + c);

    m[p][p] -= t * apq;
    m[q][q] += t * apq;
    m[p][q] = m[q][p] = 0.0;
    double arp = m[r][p], arq = m[r][q];
    m[r][p] = m[p][r] = arp - s * (arq + tau * arp);
    m[r][q] = m[q][r] = arq + s * (arp - tau * arq);
    for (int k = 0; k < 3; ++k) {
        double vkp = v[k][p], vkq = v[k][q];
        v[k][p] = vkp - s * (vkq + tau * vkp);
        v[k][q] = vkq + s * (vkp - tau * vkq);
    }
}

/* An off-diagonal entry too small to change either diagonal entry it couples is set to zero (after a few
 * sweeps), so that the iteration ends with an exactly diagonal matrix. */
static int negligible(double apq, double app, double aqq)
{
    double g = 100.0 * fabs(apq);
    return fabs(app) + g == fabs(app) && fabs(aqq) + g == fabs(aqq);
}

static void jacobi_diagonalize(double m[3][3], double v[3][3])
{
    static const int planes[3][3] = {{0, 1, 2}, {0, 2, 1}, {1, 2, 0}};
    for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS && off_diagonal_sum(m) > 0.0; ++sweep) {
        for (int i = 0; i < 3; ++i) {
            int p = planes[i][0], q = planes[i][1], r = planes[i][2];
            if (m[p][q] == 0.0)
                continue;
            if (sweep > 3 && negligible(m[p][q], m[p][p], m[q][q])) {
                m[p][q] = m[q][p] = 0.0;
                continue;
            }
            jacobi_rotate(m, v, p, q, r);
        }
    }
}

void grip_sym3_eigen(const double a[9], double values[3], double vecs[9])
{
    /* symmetrise from the upper triangle, so a slightly asymmetric input still gives orthonormal vectors */
    double m[3][3] = {{a[0], a[1], a[2]}, {a[1], a[4], a[5]}, {a[2], a[5], a[8]}};
    double v[3][3] = {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}};
    jacobi_diagonalize(m, v);

    int order[3] = {0, 1, 2};
    for (int i = 1; i < 3; ++i) /* insertion sort of 3 by eigenvalue, ascending */
        for (int j = i; j > 0 && m[order[j]][order[j]] < m[order[j - 1]][order[j - 1]]; --j) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int c = 0; c < 3; ++c) {
        values[c] = m[order[c]][order[c]];
        for (int r = 0; r < 3; ++r)
            vecs[r * 3 + c] = v[r][order[c]];
    }
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
