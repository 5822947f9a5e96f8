/* shot_lrf_math.h -- the arithmetic of the SHOT local reference frame, exactly as PCL 1.13's
 * SHOTLocalReferenceFrameEstimation::getLocalRF does it, as static inline functions shared by the CPU twin
 * (shot_lrf.c) and the CUDA kernel (cuda/shot.cu).
 *
 * PCL's precision: float offsets to the keypoint widened to double, the weighted covariance summed in double in
 * support order, Eigen's ordering of the dot products. The covariance entries and the weight are 7 separate
 * sums, each a chain of additions in support order: a caller that adds the terms of grip_shot_lrf_terms in that
 * order gets the CPU's sums to the bit, whatever runs where. In device code every product is rounded on its own
 * (GRIP_DMUL/FMUL, math/rounded.h), so that nvcc cannot fuse it into a multiply-add. */
#ifndef GRIP_DESCRIPTOR_SHOT_LRF_MATH_H
#define GRIP_DESCRIPTOR_SHOT_LRF_MATH_H

#include <math.h>
#include "math/rounded.h"
#include "math/sym3_jacobi.h"

/* PCL gives no frame to a keypoint with fewer support points than this (copies of the keypoint left out). */
#define GRIP_SHOT_LRF_MIN_SUPPORT 5
/* Neighbours around the median distance that break a tie in the sign votes. */
#define GRIP_SHOT_LRF_TIE_VOTERS 5
/* The sums of the weighted covariance: its lower triangle (00, 10, 11, 20, 21, 22), then the weights. */
#define GRIP_SHOT_LRF_SUMS 7

/* PCL leaves copies of the keypoint out of the support. */
GRIP_HD static inline int grip_shot_lrf_is_copy(const float q[3], const float p[3])
{
    return q[0] == p[0] && q[1] == p[1] && q[2] == p[2];
}

/* Offset of a support point from the keypoint: subtracted in float, as PCL's Vector4f does, then widened. */
GRIP_HD static inline void grip_shot_lrf_offset(const float q[3], const float p[3], double v[3])
{
    for (int d = 0; d < 3; ++d)
        v[d] = (double)(q[d] - p[d]);
}

/* What support point q (not a copy of p; squared distance sqdist) adds to each of the GRIP_SHOT_LRF_SUMS sums:
 * (w v_r) v_c as Eigen evaluates `cov += w * (v^T v)`, with w = radius - distance, then w. */
GRIP_HD static inline void grip_shot_lrf_terms(const float q[3], const float p[3], float sqdist, double radius,
                                               double terms[GRIP_SHOT_LRF_SUMS])
{
    double v[3];
    grip_shot_lrf_offset(q, p, v);
    double w = radius - sqrt((double)sqdist);
    int e = 0;
    for (int r = 0; r < 3; ++r) {
        double wv = GRIP_DMUL(w, v[r]);
        for (int c = 0; c <= r; ++c)
            terms[e++] = GRIP_DMUL(wv, v[c]);
    }
    terms[e] = w;
}

/* The x axis (largest eigenvalue) and z axis (smallest) of the covariance the sums describe, before their signs
 * are settled. Returns 0 when an eigenvalue is not finite (no frame, as in PCL). */
GRIP_HD static inline int grip_shot_lrf_axes(const double sums[GRIP_SHOT_LRF_SUMS], double x[3], double z[3])
{
    double cov[9];
    int e = 0;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c <= r; ++c) /* the solver reads the upper triangle: mirror the lower one */
            cov[c * 3 + r] = cov[r * 3 + c] = sums[e++] / sums[GRIP_SHOT_LRF_SUMS - 1];
    double values[3], vecs[9];
    grip_sym3_jacobi(cov, values, vecs);
    if (!isfinite(values[0]) || !isfinite(values[1]) || !isfinite(values[2]))
        return 0;
    for (int d = 0; d < 3; ++d) {
        x[d] = vecs[3 * d + 2];
        z[d] = vecs[3 * d];
    }
    return 1;
}

/* Dot product in Eigen's order for a double row of 4 with w = 0: (a0 b0 + a1 b1) + a2 b2. */
GRIP_HD static inline double grip_shot_lrf_dot(const double a[3], const double b[3])
{
    return (GRIP_DMUL(a[0], b[0]) + GRIP_DMUL(a[1], b[1])) + GRIP_DMUL(a[2], b[2]);
}

/* The sign votes of an axis: `balance` is (offsets with dot >= 0) - (offsets with dot < 0) over the whole
 * support; on a tie, `tie_positive` counts the offsets with dot > 0 among the GRIP_SHOT_LRF_TIE_VOTERS around
 * the median distance (support positions valid/2 - 2 .. valid/2 + 2, copies of the keypoint left out).
 * Returns 1 when the axis must be turned round. */
GRIP_HD static inline int grip_shot_lrf_must_flip(long balance, int tie_positive)
{
    if (balance != 0)
        return balance < 0;
    return tie_positive < GRIP_SHOT_LRF_TIE_VOTERS / 2 + 1;
}

/* The first of the tie voters' support positions (among the valid ones). */
GRIP_HD static inline long grip_shot_lrf_first_tie_voter(long valid)
{
    return valid / 2 - GRIP_SHOT_LRF_TIE_VOTERS / 2;
}

/* Writes the frame's rows x, y = z cross x (in float, like PCL's Matrix3f rows) and z. */
GRIP_HD static inline void grip_shot_lrf_store(const double x[3], const double z[3], float rf[9])
{
    for (int d = 0; d < 3; ++d) {
        rf[d] = (float)x[d];
        rf[6 + d] = (float)z[d];
    }
    rf[3] = GRIP_FMUL(rf[7], rf[2]) - GRIP_FMUL(rf[8], rf[1]);
    rf[4] = GRIP_FMUL(rf[8], rf[0]) - GRIP_FMUL(rf[6], rf[2]);
    rf[5] = GRIP_FMUL(rf[6], rf[1]) - GRIP_FMUL(rf[7], rf[0]);
}

GRIP_HD static inline void grip_shot_lrf_store_nan(float rf[9])
{
    for (int e = 0; e < 9; ++e)
        rf[e] = NAN;
}

#endif
