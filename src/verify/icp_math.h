/* icp_math.h -- the arithmetic of one ICP iteration that the CPU twin (icp.c) and the batched kernels
 * (cuda/verify/icp.cu) share, as static inline functions compiled by both sides, so that each pair, each update
 * and each stop decision rounds alike (math/rounded.h: every double operation rounded on its own, in the order
 * written here). Both sides also sum the per-pair terms in one order (GRIP_ICP_CHUNK below), so that the sums, and
 * with them every point-to-point update, are the same bits on both; point-to-plane differs only where CUDA's
 * cos/sin round otherwise than the C library's (an ulp or so).
 *
 * The summation order: the points of a model (ICP's points, in their order) in chunks of GRIP_ICP_CHUNK; within a
 * chunk, warps of GRIP_ICP_WARP consecutive points, each reduced by a halving tree (lane l takes lane l + off, off
 * = 16, 8, 4, 2, 1: the GPU's __shfl_down_sync ladder), the chunk's warps added in warp order, the chunks' sums
 * added in chunk order from 0. A point without a pair adds zeros.
 *
 * An iteration, for each pair (s = the model point under the current pose, d = its nearest scene point, n = d's
 * normal):
 *   - point-to-point: the sums of s, d and s d^T give the cross-covariance H = sum (s - cs)(d - cd)^T
 *     (= sum s d^T - n cs cd^T); the rotation is Horn's (1987) unit quaternion, the eigenvector of the largest
 *     eigenvalue of his symmetric 4x4 matrix of H (math/horn.h): the same least-squares optimum as PCL's
 *     SVD with the reflection fix, a proper rotation also for coplanar or collinear pairs; t = cd - R cs;
 *   - point-to-plane: PCL's TransformationEstimationPointToPlaneLLS (Low 2004): the linearised residual
 *     n.(s + a x s + t - d) gives the 6x6 normal equations (A^T A) x = A^T b, a row of A being (s x n, n) and
 *     b = n.(d - s); x = (alpha, beta, gamma, tx, ty, tz) is solved by the pseudo-inverse of A^T A (Jacobi again;
 *     eigenvalues below 1e-12 of the largest are dropped, so that a plane-only scene leaves its free motions
 *     at 0 instead of failing), and the update is Rz(gamma) Ry(beta) Rx(alpha) with t, as PCL builds it. */
#ifndef GRIP_VERIFY_ICP_MATH_H
#define GRIP_VERIFY_ICP_MATH_H

#include <math.h>
#include <stdint.h>

#include "math/horn.h"
#include "math/rounded.h"
#include "verify/icp.h"

/* The per-pair terms summed over an iteration's pairs. Both metrics: [0] pairs, [1] squared distances.
 * Point-to-point: [2..4] s, [5..7] d, [8..16] s_r d_c (row-major). Point-to-plane: [2..22] the upper triangle of
 * A^T A row by row, [23..28] A^T b. */
#define GRIP_ICP_TERMS_P2P 17
#define GRIP_ICP_TERMS_P2L 29
#define GRIP_ICP_TERMS_MAX 29
/* the fit's sums are over chunks of this many model points (one GPU block), warps of GRIP_ICP_WARP */
#define GRIP_ICP_CHUNK 256
#define GRIP_ICP_WARP 32

/* Eigenvalues of A^T A below this fraction of the largest are treated as 0 (unconstrained motions stay 0). */
#define GRIP_ICP_P2L_RCOND 1e-12

GRIP_HD static inline uint32_t grip_icp_terms(uint32_t metric)
{
    return metric == GRIP_ICP_POINT_TO_PLANE ? GRIP_ICP_TERMS_P2L : GRIP_ICP_TERMS_P2P;
}

/* out = T p (row-major 4x4), each row summed left to right: grip_pose_apply's order. */
GRIP_HD static inline void grip_icp_apply(const double T[16], const double p[3], double out[3])
{
    for (int i = 0; i < 3; ++i)
        out[i] = GRIP_DADD(GRIP_DADD(GRIP_DADD(GRIP_DMUL(T[4 * i], p[0]), GRIP_DMUL(T[4 * i + 1], p[1])),
                                     GRIP_DMUL(T[4 * i + 2], p[2])),
                           T[4 * i + 3]);
}

/* out = R v, the rotation part of T. */
GRIP_HD static inline void grip_icp_rotate(const double T[16], const double v[3], double out[3])
{
    for (int i = 0; i < 3; ++i)
        out[i] = GRIP_DADD(GRIP_DADD(GRIP_DMUL(T[4 * i], v[0]), GRIP_DMUL(T[4 * i + 1], v[1])),
                           GRIP_DMUL(T[4 * i + 2], v[2]));
}

/* out = a b (row-major 4x4; out may not alias a or b). */
GRIP_HD static inline void grip_icp_compose(const double a[16], const double b[16], double out[16])
{
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) {
            double s = 0.0;
            for (int i = 0; i < 4; ++i)
                s = GRIP_DADD(s, GRIP_DMUL(a[4 * r + i], b[4 * i + c]));
            out[4 * r + c] = s;
        }
}

/* Whether a model point p_moved with model normal n (non-finite: unknown) faces the viewpoint under T: the
 * rotated normal points toward the sensor. A point with no usable normal counts as facing it. */
GRIP_HD static inline int grip_icp_faces_viewpoint(const double T[16], const double p_moved[3], const float n[3],
                                                   const double viewpoint[3])
{
    if (!(isfinite(n[0]) && isfinite(n[1]) && isfinite(n[2])))
        return 1;
    const double nm[3] = {n[0], n[1], n[2]};
    double nr[3];
    grip_icp_rotate(T, nm, nr);
    const double d = GRIP_DADD(GRIP_DADD(GRIP_DMUL(nr[0], GRIP_DSUB(viewpoint[0], p_moved[0])),
                                         GRIP_DMUL(nr[1], GRIP_DSUB(viewpoint[1], p_moved[1]))),
                               GRIP_DMUL(nr[2], GRIP_DSUB(viewpoint[2], p_moved[2])));
    return d > 0.0;
}

/* The terms of one pair (s, d, the scene normal n for point-to-plane, sqdist as the search gave it), written to
 * t[0 .. grip_icp_terms(metric)). */
GRIP_HD static inline void grip_icp_pair_terms(uint32_t metric, const double s[3], const float d_in[3],
                                               const float n_in[3], float sqdist, double *t)
{
    const double d[3] = {d_in[0], d_in[1], d_in[2]};
    t[0] = 1.0;
    t[1] = (double)sqdist;
    if (metric != GRIP_ICP_POINT_TO_PLANE) {
        for (int a = 0; a < 3; ++a) {
            t[2 + a] = s[a];
            t[5 + a] = d[a];
        }
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                t[8 + 3 * r + c] = GRIP_DMUL(s[r], d[c]);
        return;
    }
    const double n[3] = {n_in[0], n_in[1], n_in[2]};
    const double row[6] = {GRIP_DSUB(GRIP_DMUL(n[2], s[1]), GRIP_DMUL(n[1], s[2])),
                           GRIP_DSUB(GRIP_DMUL(n[0], s[2]), GRIP_DMUL(n[2], s[0])),
                           GRIP_DSUB(GRIP_DMUL(n[1], s[0]), GRIP_DMUL(n[0], s[1])),
                           n[0],
                           n[1],
                           n[2]};
    const double b = GRIP_DADD(
        GRIP_DADD(GRIP_DMUL(n[0], GRIP_DSUB(d[0], s[0])), GRIP_DMUL(n[1], GRIP_DSUB(d[1], s[1]))),
        GRIP_DMUL(n[2], GRIP_DSUB(d[2], s[2])));
    int k = 2;
    for (int r = 0; r < 6; ++r)
        for (int c = r; c < 6; ++c)
            t[k++] = GRIP_DMUL(row[r], row[c]);
    for (int r = 0; r < 6; ++r)
        t[23 + r] = GRIP_DMUL(row[r], b);
}

GRIP_HD static inline void grip_icp_pose_set(double T[16], const double R[9], const double t[3])
{
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c)
            T[4 * r + c] = R[3 * r + c];
        T[4 * r + 3] = t[r];
    }
    T[12] = T[13] = T[14] = 0.0;
    T[15] = 1.0;
}

/* Point-to-point update from the sums (pairs >= 3). */
GRIP_HD static inline void grip_icp_solve_p2p(const double *sum, double delta[16])
{
    const double n = sum[0];
    double cs[3], cd[3], H[9];
    for (int a = 0; a < 3; ++a) {
        cs[a] = GRIP_DDIV(sum[2 + a], n);
        cd[a] = GRIP_DDIV(sum[5 + a], n);
    }
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            H[3 * r + c] = GRIP_DSUB(sum[8 + 3 * r + c], GRIP_DMUL(GRIP_DMUL(n, cs[r]), cd[c]));
    double R[9];
    grip_horn_rotation(H, R);
    double t[3];
    for (int r = 0; r < 3; ++r)
        t[r] = GRIP_DSUB(cd[r], GRIP_DADD(GRIP_DADD(GRIP_DMUL(R[3 * r], cs[0]), GRIP_DMUL(R[3 * r + 1], cs[1])),
                                          GRIP_DMUL(R[3 * r + 2], cs[2])));
    grip_icp_pose_set(delta, R, t);
}

/* Point-to-plane update from the sums (pairs >= 3). */
GRIP_HD static inline void grip_icp_solve_p2l(const double *sum, double delta[16])
{
    double M[36], V[36];
    int k = 2;
    for (int r = 0; r < 6; ++r)
        for (int c = r; c < 6; ++c)
            M[6 * r + c] = M[6 * c + r] = sum[k++];
    grip_jacobi_sym(6, M, V);
    double largest = 0.0;
    for (int i = 0; i < 6; ++i)
        largest = fmax(largest, M[7 * i]);
    double x[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 6; ++i) { /* x = sum over kept eigenpairs of v (v . Atb) / lambda */
        const double lambda = M[7 * i];
        if (!(lambda > GRIP_DMUL(GRIP_ICP_P2L_RCOND, largest)))
            continue;
        double proj = 0.0;
        for (int r = 0; r < 6; ++r)
            proj = GRIP_DADD(proj, GRIP_DMUL(V[6 * r + i], sum[23 + r]));
        const double w = GRIP_DDIV(proj, lambda);
        for (int r = 0; r < 6; ++r)
            x[r] = GRIP_DADD(x[r], GRIP_DMUL(V[6 * r + i], w));
    }
    const double ca = cos(x[0]), sa = sin(x[0]), cb = cos(x[1]), sb = sin(x[1]), cg = cos(x[2]), sg = sin(x[2]);
    const double R[9] = {GRIP_DMUL(cg, cb),
                         GRIP_DADD(GRIP_DMUL(-sg, ca), GRIP_DMUL(GRIP_DMUL(cg, sb), sa)),
                         GRIP_DADD(GRIP_DMUL(sg, sa), GRIP_DMUL(GRIP_DMUL(cg, sb), ca)),
                         GRIP_DMUL(sg, cb),
                         GRIP_DADD(GRIP_DMUL(cg, ca), GRIP_DMUL(GRIP_DMUL(sg, sb), sa)),
                         GRIP_DADD(GRIP_DMUL(-cg, sa), GRIP_DMUL(GRIP_DMUL(sg, sb), ca)),
                         -sb,
                         GRIP_DMUL(cb, sa),
                         GRIP_DMUL(cb, ca)};
    grip_icp_pose_set(delta, R, x + 3);
}

/* The convergence rules of icp.h after an update (PCL's DefaultConvergenceCriteria). Returns the stop reason
 * (grip_icp_stop) or -1 to go on, in which case *previous_mse becomes mse. */
#define GRIP_ICP_MSE_ABSOLUTE 1e-12
GRIP_HD static inline int grip_icp_converged(uint32_t max_iterations, double transformation_epsilon,
                                             double rotation_threshold, double euclidean_fitness_epsilon,
                                             uint32_t iterations, const double delta[16], double mse,
                                             double *previous_mse)
{
    const double cos_angle = GRIP_DMUL(0.5, GRIP_DSUB(GRIP_DADD(GRIP_DADD(delta[0], delta[5]), delta[10]), 1.0));
    const double translation_sqr = GRIP_DADD(GRIP_DADD(GRIP_DMUL(delta[3], delta[3]), GRIP_DMUL(delta[7], delta[7])),
                                             GRIP_DMUL(delta[11], delta[11]));
    if (iterations >= max_iterations)
        return 0; /* GRIP_ICP_STOP_ITERATIONS */
    if (cos_angle >= rotation_threshold && translation_sqr <= transformation_epsilon)
        return 1; /* GRIP_ICP_STOP_TRANSFORM */
    const double change = fabs(GRIP_DSUB(mse, *previous_mse));
    if (change < GRIP_ICP_MSE_ABSOLUTE)
        return 2; /* GRIP_ICP_STOP_ABSOLUTE_MSE */
    if (GRIP_DDIV(change, *previous_mse) < euclidean_fitness_epsilon)
        return 3; /* GRIP_ICP_STOP_RELATIVE_MSE */
    *previous_mse = mse;
    return -1;
}

/* Whether every entry of a pose is finite. */
GRIP_HD static inline int grip_icp_pose_finite(const double T[16])
{
    for (int i = 0; i < 16; ++i)
        if (!isfinite(T[i]))
            return 0;
    return 1;
}

#endif
