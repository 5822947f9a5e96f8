/* horn.h -- the least-squares rotation between paired 3D points by Horn's (1987) unit quaternion, and the rigid fit
 * built on it, shared by the CPU twins and the kernels as static inline functions (math/rounded.h: every double
 * operation rounded on its own, in the order written), so that both sides compute the same bits.
 *
 * The rotation R maximising tr(R H) for a cross-covariance H = sum (s - cs)(d - cd)^T is the rotation of the unit
 * quaternion that is the eigenvector of the largest eigenvalue of Horn's symmetric 4x4 matrix of H, found here by
 * cyclic Jacobi: the same optimum as Kabsch's SVD with the reflection fix (PCL's TransformationEstimationSVD), and
 * a proper rotation also for coplanar or collinear points, with no call that can fail. Used by ICP's update
 * (verify/icp_math.h) and RANSAC's 3-point fits (group/cluster.c). */
#ifndef GRIP_MATH_HORN_H
#define GRIP_MATH_HORN_H

#include <math.h>
#include <stdint.h>

#include "math/rounded.h"

#define GRIP_JACOBI_SWEEPS 50

/* Cyclic Jacobi on a symmetric n x n matrix m (n <= 6, row-major, stride 6): m becomes diagonal, v (stride 6)
 * collects the eigenvectors as columns. */
GRIP_HD static inline void grip_jacobi_sym(int n, double m[36], double v[36])
{
    GRIP_UNROLL
    for (int r = 0; r < n; ++r)
        GRIP_UNROLL
        for (int c = 0; c < n; ++c)
            v[6 * r + c] = r == c ? 1.0 : 0.0;
    for (int sweep = 0; sweep < GRIP_JACOBI_SWEEPS; ++sweep) {
        double off = 0.0;
        GRIP_UNROLL
        for (int p = 0; p < n; ++p)
            GRIP_UNROLL
            for (int q = p + 1; q < n; ++q)
                off = GRIP_DADD(off, fabs(m[6 * p + q]));
        if (!(off > 0.0))
            return;
        GRIP_UNROLL
        for (int p = 0; p < n; ++p)
            GRIP_UNROLL
            for (int q = p + 1; q < n; ++q) {
                const double apq = m[6 * p + q];
                if (apq == 0.0)
                    continue;
                const double app = m[6 * p + p], aqq = m[6 * q + q];
                const double g = GRIP_DMUL(100.0, fabs(apq));
                if (sweep > 3 && fabs(app) + g == fabs(app) && fabs(aqq) + g == fabs(aqq)) {
                    m[6 * p + q] = m[6 * q + p] = 0.0;
                    continue;
                }
                const double theta = GRIP_DDIV(GRIP_DSUB(aqq, app), GRIP_DMUL(2.0, apq));
                double t = GRIP_DDIV(1.0, GRIP_DADD(fabs(theta), sqrt(GRIP_DADD(GRIP_DMUL(theta, theta), 1.0))));
                if (theta < 0.0)
                    t = -t;
                const double c = GRIP_DDIV(1.0, sqrt(GRIP_DADD(GRIP_DMUL(t, t), 1.0))), s = GRIP_DMUL(t, c);
                GRIP_UNROLL
                for (int k = 0; k < n; ++k) { /* columns p, q: m <- m J */
                    const double mkp = m[6 * k + p], mkq = m[6 * k + q];
                    m[6 * k + p] = GRIP_DSUB(GRIP_DMUL(c, mkp), GRIP_DMUL(s, mkq));
                    m[6 * k + q] = GRIP_DADD(GRIP_DMUL(s, mkp), GRIP_DMUL(c, mkq));
                }
                GRIP_UNROLL
                for (int k = 0; k < n; ++k) { /* rows p, q: m <- J^T m */
                    const double mpk = m[6 * p + k], mqk = m[6 * q + k];
                    m[6 * p + k] = GRIP_DSUB(GRIP_DMUL(c, mpk), GRIP_DMUL(s, mqk));
                    m[6 * q + k] = GRIP_DADD(GRIP_DMUL(s, mpk), GRIP_DMUL(c, mqk));
                }
                m[6 * p + q] = m[6 * q + p] = 0.0;
                GRIP_UNROLL
                for (int k = 0; k < n; ++k) {
                    const double vkp = v[6 * k + p], vkq = v[6 * k + q];
                    v[6 * k + p] = GRIP_DSUB(GRIP_DMUL(c, vkp), GRIP_DMUL(s, vkq));
                    v[6 * k + q] = GRIP_DADD(GRIP_DMUL(s, vkp), GRIP_DMUL(c, vkq));
                }
            }
    }
}

/* The rotation (row-major R) maximising tr(R H) for the row-major 3x3 cross-covariance H. */
GRIP_HD static inline void grip_horn_rotation(const double H[9], double R[9])
{
    const double xx = H[0], xy = H[1], xz = H[2], yx = H[3], yy = H[4], yz = H[5], zx = H[6], zy = H[7], zz = H[8];
    double N[36], V[36];
    N[0] = GRIP_DADD(GRIP_DADD(xx, yy), zz);
    N[1] = N[6] = GRIP_DSUB(yz, zy);
    N[2] = N[12] = GRIP_DSUB(zx, xz);
    N[3] = N[18] = GRIP_DSUB(xy, yx);
    N[7] = GRIP_DSUB(GRIP_DSUB(xx, yy), zz);
    N[8] = N[13] = GRIP_DADD(xy, yx);
    N[9] = N[19] = GRIP_DADD(zx, xz);
    N[14] = GRIP_DSUB(GRIP_DSUB(yy, xx), zz);
    N[15] = N[20] = GRIP_DADD(yz, zy);
    N[21] = GRIP_DSUB(GRIP_DSUB(zz, xx), yy);
    grip_jacobi_sym(4, N, V);
    /* the eigenvector of the largest eigenvalue; ties to the lower column (H = 0 gives the identity). Constant
       indices only: the device keeps N and V in registers */
    double top = N[0], q0 = V[0], qx = V[6], qy = V[12], qz = V[18];
    GRIP_UNROLL
    for (int k = 1; k < 4; ++k)
        if (N[7 * k] > top) {
            top = N[7 * k];
            q0 = V[k];
            qx = V[6 + k];
            qy = V[12 + k];
            qz = V[18 + k];
        }
    const double norm = sqrt(
        GRIP_DADD(GRIP_DADD(GRIP_DADD(GRIP_DMUL(q0, q0), GRIP_DMUL(qx, qx)), GRIP_DMUL(qy, qy)), GRIP_DMUL(qz, qz)));
    q0 = GRIP_DDIV(q0, norm);
    qx = GRIP_DDIV(qx, norm);
    qy = GRIP_DDIV(qy, norm);
    qz = GRIP_DDIV(qz, norm);
    const double rot[9] = {
        GRIP_DSUB(GRIP_DSUB(GRIP_DADD(GRIP_DMUL(q0, q0), GRIP_DMUL(qx, qx)), GRIP_DMUL(qy, qy)), GRIP_DMUL(qz, qz)),
        GRIP_DMUL(2.0, GRIP_DSUB(GRIP_DMUL(qx, qy), GRIP_DMUL(q0, qz))),
        GRIP_DMUL(2.0, GRIP_DADD(GRIP_DMUL(qx, qz), GRIP_DMUL(q0, qy))),
        GRIP_DMUL(2.0, GRIP_DADD(GRIP_DMUL(qy, qx), GRIP_DMUL(q0, qz))),
        GRIP_DSUB(GRIP_DADD(GRIP_DSUB(GRIP_DMUL(q0, q0), GRIP_DMUL(qx, qx)), GRIP_DMUL(qy, qy)), GRIP_DMUL(qz, qz)),
        GRIP_DMUL(2.0, GRIP_DSUB(GRIP_DMUL(qy, qz), GRIP_DMUL(q0, qx))),
        GRIP_DMUL(2.0, GRIP_DSUB(GRIP_DMUL(qz, qx), GRIP_DMUL(q0, qy))),
        GRIP_DMUL(2.0, GRIP_DADD(GRIP_DMUL(qz, qy), GRIP_DMUL(q0, qx))),
        GRIP_DADD(GRIP_DSUB(GRIP_DSUB(GRIP_DMUL(q0, q0), GRIP_DMUL(qx, qx)), GRIP_DMUL(qy, qy)), GRIP_DMUL(qz, qz))};
    GRIP_UNROLL
    for (int i = 0; i < 9; ++i)
        R[i] = rot[i];
}

/* The least-squares rigid motion taking src_i to dst_i (n >= 3 pairs, n x 3 doubles each) as a row-major 4x4 pose:
 * the centroids summed in point order, then divided by n; H = sum (src_i - cs)(dst_i - cd)^T in point order; R by
 * grip_horn_rotation; t = cd - R cs. */
GRIP_HD static inline void grip_horn_fit(const double *src, const double *dst, uint32_t n, double pose[16])
{
    double cs[3] = {0.0, 0.0, 0.0}, cd[3] = {0.0, 0.0, 0.0};
    for (uint32_t i = 0; i < n; ++i)
        for (int d = 0; d < 3; ++d) {
            cs[d] = GRIP_DADD(cs[d], src[3 * i + d]);
            cd[d] = GRIP_DADD(cd[d], dst[3 * i + d]);
        }
    for (int d = 0; d < 3; ++d) {
        cs[d] = GRIP_DDIV(cs[d], (double)n);
        cd[d] = GRIP_DDIV(cd[d], (double)n);
    }
    double H[9] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    for (uint32_t i = 0; i < n; ++i) {
        const double a[3] = {GRIP_DSUB(src[3 * i], cs[0]), GRIP_DSUB(src[3 * i + 1], cs[1]),
                             GRIP_DSUB(src[3 * i + 2], cs[2])};
        const double b[3] = {GRIP_DSUB(dst[3 * i], cd[0]), GRIP_DSUB(dst[3 * i + 1], cd[1]),
                             GRIP_DSUB(dst[3 * i + 2], cd[2])};
        GRIP_UNROLL
        for (int r = 0; r < 3; ++r)
            GRIP_UNROLL
            for (int c = 0; c < 3; ++c)
                H[3 * r + c] = GRIP_DADD(H[3 * r + c], GRIP_DMUL(a[r], b[c]));
    }
    double R[9];
    grip_horn_rotation(H, R);
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c)
            pose[4 * r + c] = R[3 * r + c];
        const double rc = GRIP_DADD(GRIP_DADD(GRIP_DMUL(R[3 * r], cs[0]), GRIP_DMUL(R[3 * r + 1], cs[1])),
                                    GRIP_DMUL(R[3 * r + 2], cs[2]));
        pose[4 * r + 3] = GRIP_DSUB(cd[r], rc);
    }
    pose[12] = pose[13] = pose[14] = 0.0;
    pose[15] = 1.0;
}

#endif
