/* sym3_jacobi.h -- the eigen-decomposition of a symmetric 3x3 matrix by cyclic Jacobi rotations in double
 * precision, as static inline functions that compile both as C and as CUDA device code: grip_sym3_eigen
 * (sym3_eigen.h) is this solver, and GPU kernels that must give the CPU's answer to the bit (the SHOT frame) call
 * it directly.
 *
 * Jacobi is slower than a closed-form cubic but accurate to the last bits for every input, including repeated
 * and tiny eigenvalues, which is what the local frames need. Every product is rounded on its own
 * (GRIP_DMUL, math/rounded.h): in device code nvcc could otherwise fuse a product and a sum into one multiply-add,
 * which rounds once where the host rounds twice. The host compiles ISO C, which fuses nothing. */
#ifndef GRIP_MATH_SYM3_JACOBI_H
#define GRIP_MATH_SYM3_JACOBI_H

#include <math.h>

#include "math/rounded.h"

/* Jacobi converges quadratically: 5 to 6 sweeps reach machine precision; the cap only guards NaN input. */
#define GRIP_SYM3_JACOBI_MAX_SWEEPS 64

GRIP_HD static inline double grip_sym3_jacobi_off_diagonal(const double m[3][3])
{
    return fabs(m[0][1]) + fabs(m[0][2]) + fabs(m[1][2]);
}

/* One rotation in the (p, q) plane that zeroes m[p][q] (Golub & Van Loan, the stable small-angle form).
 * r is the index of the third row/column. v accumulates the rotations (columns are eigenvectors). */
GRIP_HD static inline void grip_sym3_jacobi_rotate(double m[3][3], double v[3][3], int p, int q, int r)
{
    double apq = m[p][q];
    double theta = (m[q][q] - m[p][p]) / GRIP_DMUL(2.0, apq);
    double t = 1.0 / (fabs(theta) + sqrt(GRIP_DMUL(theta, theta) + 1.0));
    if (theta < 0.0)
        t = -t;
    double c = 1.0 / sqrt(GRIP_DMUL(t, t) + 1.0);
    double s = GRIP_DMUL(t, c);
    double tau = s / (1.0 + c);

    m[p][p] -= GRIP_DMUL(t, apq);
    m[q][q] += GRIP_DMUL(t, apq);
    m[p][q] = m[q][p] = 0.0;
    double arp = m[r][p], arq = m[r][q];
    m[r][p] = m[p][r] = arp - GRIP_DMUL(s, arq + GRIP_DMUL(tau, arp));
    m[r][q] = m[q][r] = arq + GRIP_DMUL(s, arp - GRIP_DMUL(tau, arq));
    for (int k = 0; k < 3; ++k) {
        double vkp = v[k][p], vkq = v[k][q];
        v[k][p] = vkp - GRIP_DMUL(s, vkq + GRIP_DMUL(tau, vkp));
        v[k][q] = vkq + GRIP_DMUL(s, vkp - GRIP_DMUL(tau, vkq));
    }
}

/* An off-diagonal entry too small to change either diagonal entry it couples is set to zero (after a few
 * sweeps), so that the iteration ends with an exactly diagonal matrix. */
GRIP_HD static inline int grip_sym3_jacobi_negligible(double apq, double app, double aqq)
{
    double g = GRIP_DMUL(100.0, fabs(apq));
    return fabs(app) + g == fabs(app) && fabs(aqq) + g == fabs(aqq);
}

/* The step of one sweep in the (p, q) plane. */
GRIP_HD static inline void grip_sym3_jacobi_visit(double m[3][3], double v[3][3], int p, int q, int r, int sweep)
{
    if (m[p][q] == 0.0)
        return;
    if (sweep > 3 && grip_sym3_jacobi_negligible(m[p][q], m[p][p], m[q][q])) {
        m[p][q] = m[q][p] = 0.0;
        return;
    }
    grip_sym3_jacobi_rotate(m, v, p, q, r);
}

/* The planes are visited with literal indices, so that a GPU keeps m and v in registers. */
GRIP_HD static inline void grip_sym3_jacobi_diagonalize(double m[3][3], double v[3][3])
{
    for (int sweep = 0; sweep < GRIP_SYM3_JACOBI_MAX_SWEEPS && grip_sym3_jacobi_off_diagonal(m) > 0.0; ++sweep) {
        grip_sym3_jacobi_visit(m, v, 0, 1, 2, sweep);
        grip_sym3_jacobi_visit(m, v, 0, 2, 1, sweep);
        grip_sym3_jacobi_visit(m, v, 1, 2, 0, sweep);
    }
}

/* a: row-major symmetric 3x3 (the upper triangle is read). Writes eigenvalues in ascending order and the
 * matching unit eigenvectors as the COLUMNS of vecs (row-major 3x3: vecs[r*3+c] is component r of eigenvector
 * c). Eigenvector signs are unspecified. */
GRIP_HD static inline void grip_sym3_jacobi(const double a[9], double values[3], double vecs[9])
{
    /* symmetrise from the upper triangle, so a slightly asymmetric input still gives orthonormal vectors */
    double m[3][3] = {{a[0], a[1], a[2]}, {a[1], a[4], a[5]}, {a[2], a[5], a[8]}};
    double v[3][3] = {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}};
    grip_sym3_jacobi_diagonalize(m, v);

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

#endif
