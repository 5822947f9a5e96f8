/* pair_features.h -- the arithmetic FPFH-33 and PFH-125 share, exactly as PCL 1.13 does it on the CPU, written once
 * for the CPU twins (fpfh.c, pfh.c) and the CUDA kernels (cuda/descriptor/fpfh.cu, cuda/descriptor/pfh.cu), so that
 * both take the same decisions (source/target swap, bins) bit for bit.
 *
 * PCL's precision, step by step (pcl::computePairFeatures in features/src/pfh.cpp, the binning in
 * impl/fpfh.hpp and impl/pfh.hpp):
 *  - points and normals are Eigen Vector4f with the fourth lane 0; a dot product is Eigen's SSE reduction
 *    (a0 b0 + a2 b2) + (a1 b1 + a3 b3) in float, where a3 b3 is +0 in every dot PCL takes here (that +0 decides the
 *    sign of a zero result, which atan2 sees); cross products are a1 b2 - a2 b1, ... in float; norms are sqrtf of
 *    the dot; divisions are float;
 *  - the swap test is acosf(|angle1|) > acosf(|angle2|) and f1 = atan2f(...), in float, with glibc's acosf and
 *    atan2f (math/libm_float.h ports them, so that both sides compute them bit for bit as PCL's libm does);
 *  - a bin is floor(bins * ((f + pi) * d_pi)) or floor(bins * ((f + 1) * 0.5)) in double, with d_pi the float
 *    1 / (2 pi), converted to int as x86-64 does (NaN gives INT_MIN) and clamped to [0, bins - 1]: a NaN feature
 *    (a NaN normal) lands in bin 0;
 *  - a histogram grows by `h += incr` in float, one vote at a time, with the same incr for every vote.
 * In device code every float and double operation nvcc could contract into a multiply-add is written with a
 * round-to-nearest intrinsic, so the device takes every decision and lands every vote as the CPU does. */
#ifndef GRIP_DESCRIPTOR_PAIR_FEATURES_H
#define GRIP_DESCRIPTOR_PAIR_FEATURES_H

#include <math.h>
#include <stdint.h>

#include "math/libm_float.h"
#include "math/rounded.h"

#define GRIP_FPFH_BINS 11                     /* per angular feature */
#define GRIP_FPFH_DIM (3 * GRIP_FPFH_BINS)    /* f1 | f2 | f3 sub-histograms */
#define GRIP_PFH_SUBDIV 5                     /* per angular feature */
#define GRIP_PFH_DIM (GRIP_PFH_SUBDIV * GRIP_PFH_SUBDIV * GRIP_PFH_SUBDIV)

/* pi to double precision, as M_PI (C11 has none) */
#define GRIP_PAIR_PI 3.14159265358979323846

/* Eigen's Vector4f dot product with a zero fourth lane: (a0 b0 + a2 b2) + (a1 b1 + 0). The "+ 0" is kept: it turns
 * a -0 product into +0 as PCL's reduction does. */
GRIP_HD static inline float grip_pf_dot(const float a[3], const float b[3])
{
    float even = GRIP_FADD(GRIP_FMUL(a[0], b[0]), GRIP_FMUL(a[2], b[2]));
    float odd = GRIP_FADD(GRIP_FMUL(a[1], b[1]), 0.0f);
    return GRIP_FADD(even, odd);
}

/* Eigen's cross3: (a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0), each product rounded. */
GRIP_HD static inline void grip_pf_cross(const float a[3], const float b[3], float out[3])
{
    out[0] = GRIP_FSUB(GRIP_FMUL(a[1], b[2]), GRIP_FMUL(a[2], b[1]));
    out[1] = GRIP_FSUB(GRIP_FMUL(a[2], b[0]), GRIP_FMUL(a[0], b[2]));
    out[2] = GRIP_FSUB(GRIP_FMUL(a[0], b[1]), GRIP_FMUL(a[1], b[0]));
}

/* PCL's pcl::computePairFeatures of the pair (p1, n1) -> (p2, n2): f[0] = theta = atan2(w . nt, u . nt) in
 * [-pi, pi], f[1] = alpha = v . nt, f[2] = phi = u . dp / |dp|, f[3] = |dp|, in the Darboux frame u, v, w of the
 * source (the point whose normal makes the smaller angle with the line joining the two). A pair at distance 0, or
 * whose dp x u is 0, gives (0, 0, 0, 0): PCL's FPFH and PFH ignore the failure flag and bin those zeros. */
GRIP_HD static inline void grip_pair_features(const float p1[3], const float n1[3], const float p2[3],
                                              const float n2[3], float f[4])
{
    float dp[3] = {GRIP_FSUB(p2[0], p1[0]), GRIP_FSUB(p2[1], p1[1]), GRIP_FSUB(p2[2], p1[2])};
    float distance = GRIP_FSQRT(grip_pf_dot(dp, dp));
    f[0] = f[1] = f[2] = f[3] = 0.0f;
    if (distance == 0.0f)
        return;
    float angle1 = GRIP_FDIV(grip_pf_dot(n1, dp), distance);
    float angle2 = GRIP_FDIV(grip_pf_dot(n2, dp), distance);
    const float *u = n1, *target = n2;
    float phi = angle1;
    if (grip_acosf(fabsf(angle1)) > grip_acosf(fabsf(angle2))) { /* the target is the better source */
        u = n2;
        target = n1;
        dp[0] = -dp[0];
        dp[1] = -dp[1];
        dp[2] = -dp[2];
        phi = -angle2;
    }
    float v[3], w[3];
    grip_pf_cross(dp, u, v);
    float v_norm = GRIP_FSQRT(grip_pf_dot(v, v));
    if (v_norm == 0.0f)
        return;
    v[0] = GRIP_FDIV(v[0], v_norm);
    v[1] = GRIP_FDIV(v[1], v_norm);
    v[2] = GRIP_FDIV(v[2], v_norm);
    grip_pf_cross(u, v, w);
    f[0] = grip_atan2f(grip_pf_dot(w, target), grip_pf_dot(u, target));
    f[1] = grip_pf_dot(v, target);
    f[2] = phi;
    f[3] = distance;
}

/* (int)scaled clamped to [0, bins - 1], where scaled is already floor()ed: x86-64 converts NaN and values outside
 * int's range to INT_MIN, which PCL's clamp sends to bin 0. */
GRIP_HD static inline int grip_pair_bin_clamp(double scaled, int bins)
{
    if (!(scaled >= -2147483648.0 && scaled < 2147483648.0))
        return 0;
    int bin = (int)scaled;
    return bin < 0 ? 0 : (bin >= bins ? bins - 1 : bin);
}

/* Bin of the angle theta in [-pi, pi]: floor(bins * ((theta + pi) * d_pi)), d_pi = 1 / (2 pi) in float. */
GRIP_HD static inline int grip_pair_bin_angle(float theta, int bins)
{
    const float d_pi = 1.0f / (2.0f * (float)GRIP_PAIR_PI);
    double shifted = GRIP_DMUL(GRIP_DADD((double)theta, GRIP_PAIR_PI), (double)d_pi);
    return grip_pair_bin_clamp(floor(GRIP_DMUL((double)bins, shifted)), bins);
}

/* Bin of a cosine in [-1, 1]: floor(bins * ((c + 1) * 0.5)). */
GRIP_HD static inline int grip_pair_bin_cosine(float c, int bins)
{
    double shifted = GRIP_DMUL(GRIP_DADD((double)c, 1.0), 0.5);
    return grip_pair_bin_clamp(floor(GRIP_DMUL((double)bins, shifted)), bins);
}

/* The three SPFH bins (one per sub-histogram, already offset into the 33) of the pair (p, np) -> (q, nq), as
 * FPFHEstimation::computePointSPFHSignature bins it. */
GRIP_HD static inline void grip_spfh_pair_bins(const float p[3], const float np[3], const float q[3], const float nq[3],
                                               int bins[3])
{
    float f[4];
    grip_pair_features(p, np, q, nq, f);
    bins[0] = grip_pair_bin_angle(f[0], GRIP_FPFH_BINS);
    bins[1] = GRIP_FPFH_BINS + grip_pair_bin_cosine(f[1], GRIP_FPFH_BINS);
    bins[2] = 2 * GRIP_FPFH_BINS + grip_pair_bin_cosine(f[2], GRIP_FPFH_BINS);
}

/* The PFH bin (0..124) of the pair (p1, n1) -> (p2, n2), as PFHEstimation::computePointPFHSignature bins it:
 * theta + 5 alpha + 25 phi. */
GRIP_HD static inline int grip_pfh_pair_bin(const float p1[3], const float n1[3], const float p2[3], const float n2[3])
{
    float f[4];
    grip_pair_features(p1, n1, p2, n2, f);
    return grip_pair_bin_angle(f[0], GRIP_PFH_SUBDIV) +
           GRIP_PFH_SUBDIV * grip_pair_bin_cosine(f[1], GRIP_PFH_SUBDIV) +
           GRIP_PFH_SUBDIV * GRIP_PFH_SUBDIV * grip_pair_bin_cosine(f[2], GRIP_PFH_SUBDIV);
}

/* The vote of one pair: SPFH of a point with `support` neighbours (itself included) 100 / (support - 1), PFH of a
 * neighbourhood of `support` points 100 / (support (support - 1) / 2) -- in float, as PCL (infinite when there is
 * no pair, and then no vote is cast). */
GRIP_HD static inline float grip_spfh_increment(uint64_t support)
{
    return GRIP_FDIV(100.0f, (float)(support - 1));
}
GRIP_HD static inline float grip_pfh_increment(uint64_t support)
{
    return GRIP_FDIV(100.0f, (float)(support * (support - 1) / 2));
}

/* The float PCL's `h += incr` leaves after `count` additions to 0 (incr > 0), without making them one by one.
 * Within one binade of the sum every exact addition lands on the same grid, so a step is incr rounded to that
 * grid: the same for every step (after at most one step when incr falls half-way between grid points, where
 * rounding to even then keeps the sum even). Once two successive steps inside a binade agree, the run up to just
 * below the binade's top is taken in one go; the steps that cross into the next binade are made one by one. */
GRIP_HD static inline float grip_repeat_add(float incr, uint64_t count)
{
    float sum = 0.0f, last_step = -1.0f;
    if (count == 0)
        return 0.0f;
    if (!(incr < 3.402823466e+38f)) /* inf or NaN: the sum is incr after the first vote */
        return incr;
    while (count > 0) {
        float next = GRIP_FADD(sum, incr);
        --count;
        if (next == sum) /* incr no longer moves the sum */
            return sum;
        int e_sum, e_next;
        (void)frexpf(sum, &e_sum);
        (void)frexpf(next, &e_next);
        float step = GRIP_FSUB(next, sum); /* exact within a binade (Sterbenz) */
        int steady = sum != 0.0f && e_sum == e_next && step == last_step;
        last_step = (sum != 0.0f && e_sum == e_next) ? step : -1.0f;
        sum = next;
        if (!steady || count == 0)
            continue;
        /* every step from here adds `step` while the sum stays at or below top - 2 ulp */
        double ulp = ldexp(1.0, e_next - 24), room = ldexp(1.0, e_next) - 2.0 * ulp - (double)sum; /* exact */
        if (room < (double)step)
            continue;
        uint64_t jumps = (uint64_t)(room / ulp) / (uint64_t)((double)step / ulp); /* whole ulps */
        if (jumps > count)
            jumps = count;
        sum = (float)((double)sum + (double)jumps * (double)step);
        count -= jumps;
    }
    return sum;
}

/* FPFH's weighting (FPFHEstimation::weightPointSPFHSignature): a neighbour at squared distance d2 > 0 adds its
 * SPFH times 1.0f / d2 (float products; the histogram sums them in float, and each sub-histogram's total in
 * double, neighbour by neighbour, bin by bin); each sub-histogram is then scaled by the double 100 / total
 * (left as is when the total is 0) and rounded to float. */
GRIP_HD static inline float grip_fpfh_weight(float sqdist)
{
    return GRIP_FDIV(1.0f, sqdist);
}
GRIP_HD static inline double grip_fpfh_scale_of(double total)
{
    return total != 0.0 ? GRIP_DDIV(100.0, total) : total;
}
GRIP_HD static inline float grip_fpfh_scaled(float h, double scale)
{
    return (float)GRIP_DMUL((double)h, scale);
}

#endif
