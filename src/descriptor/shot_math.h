/* shot_math.h -- the arithmetic of SHOT-352 for one support point and one keypoint (and, below, of its local
 * reference frame), exactly as PCL 1.13's
 * SHOTEstimation does it (createBinDistanceShape, interpolateSingleChannel, normalizeHistogram), as static inline
 * functions shared by the CPU twin (shot.c) and the CUDA kernel (cuda/descriptor/shot.cu), so that both take the same
 * decisions (volume, bins, weights) bit for bit.
 *
 * PCL's precision, step by step: float dot products in the order Eigen's SSE reduction sums them, double for the
 * interpolation weights, votes added to a float histogram. In device code every product is rounded on its own
 * (GRIP_FMUL/DMUL, math/rounded.h), so that nvcc cannot fuse it with a sum into a multiply-add that rounds once
 * where the host rounds twice. A vote is returned as the (bin, value) pairs it adds, and the caller adds them: the
 * CPU in list order, the GPU with shared-memory atomics. The 5 bins of one vote are distinct, so the order in which
 * they are added changes nothing. */
#ifndef GRIP_DESCRIPTOR_SHOT_MATH_H
#define GRIP_DESCRIPTOR_SHOT_MATH_H

#include <math.h>
#include <stdint.h>

#include "math/rounded.h"
#include "math/sym3_jacobi.h"

/* 32 volumes (8 azimuth x 2 elevation x 2 radial) x (10 cosine bins + 1 stored for cos = 1). */
#define GRIP_SHOT_VOLUMES 32
#define GRIP_SHOT_COSINE_BINS 10
#define GRIP_SHOT_STRIDE (GRIP_SHOT_COSINE_BINS + 1) /* floats per volume */
#define GRIP_SHOT_DIM (GRIP_SHOT_VOLUMES * GRIP_SHOT_STRIDE)
/* PCL gives no descriptor to a keypoint with fewer support points than this (the keypoint itself included). */
#define GRIP_SHOT_MIN_SUPPORT 5
/* The bins one support point adds to: its cosine, radial, elevation and azimuth neighbours, and its own bin. */
#define GRIP_SHOT_VOTE_BINS 5

/* PCL's angle constants, to its digits */
#define GRIP_SHOT_RAD_45 0.78539816339744830961566084581988
#define GRIP_SHOT_RAD_90 1.5707963267948966192313216916398
#define GRIP_SHOT_RAD_135 2.3561944901923449288469825374596
#define GRIP_SHOT_RAD_PI_7_8 2.7488935718910690836548129603691

/* The radial shells of a support of radius r: r/4, r/2, 3r/4, in double as PCL. */
typedef struct grip_shot_shells {
    double radius1_4, radius1_2, radius3_4;
} grip_shot_shells;

GRIP_HD static inline grip_shot_shells grip_shot_shells_make(float radius)
{
    double r = radius;
    grip_shot_shells s = {r / 4, r / 2, GRIP_DMUL(r, 3.0) / 4};
    return s;
}

/* One support point's vote: value[s] is added to bin[s]; bin[s] < 0 adds nothing. */
typedef struct grip_shot_vote {
    int bin[GRIP_SHOT_VOTE_BINS];
    float value[GRIP_SHOT_VOTE_BINS];
} grip_shot_vote;

enum { GRIP_SHOT_VOTE_COSINE, GRIP_SHOT_VOTE_RADIUS, GRIP_SHOT_VOTE_ELEVATION, GRIP_SHOT_VOTE_AZIMUTH,
       GRIP_SHOT_VOTE_OWN };

/* A keypoint gets a descriptor when its frame is finite and its support holds enough points. */
GRIP_HD static inline int grip_shot_keypoint_valid(const float rf[9], uint64_t support)
{
    return isfinite(rf[0]) && isfinite(rf[3]) && isfinite(rf[6]) && support >= GRIP_SHOT_MIN_SUPPORT;
}

/* Dot product of two 3-vectors stored as Vector4f with w = 0, summed as Eigen's SSE reduction does:
 * (a0 b0 + a2 b2) + a1 b1, in float. */
GRIP_HD static inline float grip_shot_dot4f(const float a[3], const float b[3])
{
    return (GRIP_FMUL(a[0], b[0]) + GRIP_FMUL(a[2], b[2])) + GRIP_FMUL(a[1], b[1]);
}

/* Position of a support point's normal on the cosine axis, in [0, 10]; NaN for a non-finite normal. */
GRIP_HD static inline double grip_shot_cosine_bin_distance(const float normal[3], const float z_axis[3])
{
    if (!isfinite(normal[0]) || !isfinite(normal[1]) || !isfinite(normal[2]))
        return NAN;
    double cosine = (double)grip_shot_dot4f(normal, z_axis);
    if (cosine > 1.0)
        cosine = 1.0;
    if (cosine < -1.0)
        cosine = -1.0;
    return GRIP_DMUL(1.0 + cosine, (double)GRIP_SHOT_COSINE_BINS) / 2;
}

/* The volume (0..31) a point at (x, y, z) in the frame, at `distance`, falls in: 4 x azimuth sector
 * + 2 x outer shell + upper hemisphere, with PCL's conventions on the sector borders. */
GRIP_HD static inline int grip_shot_volume_index(double x, double y, double z, double distance, double radius1_2)
{
    int bit4 = (y > 0) || (y == 0.0 && x < 0);
    int bit3 = ((x > 0) || (x == 0.0 && y > 0)) ? !bit4 : bit4;
    int volume = ((bit4 << 3) + (bit3 << 2)) << 1;
    if ((GRIP_DMUL(x, y) > 0) || (x == 0.0))
        volume += (fabs(x) >= fabs(y)) ? 0 : 4;
    else
        volume += (fabs(x) > fabs(y)) ? 4 : 0;
    volume += z > 0 ? 1 : 0;
    volume += distance > radius1_2 ? 2 : 0;
    return volume;
}

/* Splits the vote between the nearest cosine bin (*step, whose weight is returned) and the next one, which
 * wraps around modulo 10. */
GRIP_HD static inline double grip_shot_vote_cosine(grip_shot_vote *v, int volume, double bin_distance, int *step)
{
    *step = (int)floor(bin_distance + 0.5);
    double offset = bin_distance - *step;
    int base = volume * GRIP_SHOT_STRIDE;
    if (offset > 0) {
        v->bin[GRIP_SHOT_VOTE_COSINE] = base + (*step + 1) % GRIP_SHOT_COSINE_BINS;
        v->value[GRIP_SHOT_VOTE_COSINE] = (float)offset;
    } else {
        v->bin[GRIP_SHOT_VOTE_COSINE] = base + (*step - 1 + GRIP_SHOT_COSINE_BINS) % GRIP_SHOT_COSINE_BINS;
        v->value[GRIP_SHOT_VOTE_COSINE] = -(float)offset;
    }
    return 1 - fabs(offset);
}

/* Between the inner and the outer shell, linear in distance between radius/4 and 3 radius/4. */
GRIP_HD static inline double grip_shot_vote_radius(grip_shot_vote *v, const grip_shot_shells *sh, int volume,
                                                   int step, double distance)
{
    if (distance > sh->radius1_2) {
        double shift = (distance - sh->radius3_4) / sh->radius1_2;
        if (distance > sh->radius3_4)
            return 1 - shift;
        v->bin[GRIP_SHOT_VOTE_RADIUS] = (volume - 2) * GRIP_SHOT_STRIDE + step;
        v->value[GRIP_SHOT_VOTE_RADIUS] = -(float)shift;
        return 1 + shift;
    }
    double shift = (distance - sh->radius1_4) / sh->radius1_2;
    if (distance < sh->radius1_4)
        return 1 + shift;
    v->bin[GRIP_SHOT_VOTE_RADIUS] = (volume + 2) * GRIP_SHOT_STRIDE + step;
    v->value[GRIP_SHOT_VOTE_RADIUS] = (float)shift;
    return 1 - shift;
}

/* Between the two hemispheres, linear in inclination between 45 and 135 degrees. */
GRIP_HD static inline double grip_shot_vote_elevation(grip_shot_vote *v, int volume, int step, double z,
                                                      double distance)
{
    double cosine = z / distance;
    if (cosine < -1.0)
        cosine = -1.0;
    if (cosine > 1.0)
        cosine = 1.0;
    double inclination = acos(cosine);
    if (inclination > GRIP_SHOT_RAD_90 || (fabs(inclination - GRIP_SHOT_RAD_90) < 1e-30 && z <= 0)) {
        double shift = (inclination - GRIP_SHOT_RAD_135) / GRIP_SHOT_RAD_90;
        if (inclination > GRIP_SHOT_RAD_135)
            return 1 - shift;
        v->bin[GRIP_SHOT_VOTE_ELEVATION] = (volume + 1) * GRIP_SHOT_STRIDE + step;
        v->value[GRIP_SHOT_VOTE_ELEVATION] = -(float)shift;
        return 1 + shift;
    }
    double shift = (inclination - GRIP_SHOT_RAD_45) / GRIP_SHOT_RAD_90;
    if (inclination < GRIP_SHOT_RAD_45)
        return 1 + shift;
    v->bin[GRIP_SHOT_VOTE_ELEVATION] = (volume - 1) * GRIP_SHOT_STRIDE + step;
    v->value[GRIP_SHOT_VOTE_ELEVATION] = (float)shift;
    return 1 - shift;
}

/* Between neighbouring azimuth sectors (wrapping around), linear within half a sector of the centre. A point on
 * the z axis has no azimuth and adds nothing. */
GRIP_HD static inline double grip_shot_vote_azimuth(grip_shot_vote *v, int volume, int step, double x, double y)
{
    if (y == 0.0 && x == 0.0)
        return 0.0;
    double azimuth = atan2(y, x);
    int sector = volume >> 2;
    double shift = (azimuth - (-GRIP_SHOT_RAD_PI_7_8 + GRIP_DMUL(GRIP_SHOT_RAD_45, (double)sector))) /
                   GRIP_SHOT_RAD_45;
    shift = fmax(-0.5, fmin(shift, 0.5));
    if (shift > 0) {
        v->bin[GRIP_SHOT_VOTE_AZIMUTH] = ((volume + 4) % GRIP_SHOT_VOLUMES) * GRIP_SHOT_STRIDE + step;
        v->value[GRIP_SHOT_VOTE_AZIMUTH] = (float)shift;
        return 1 - shift;
    }
    v->bin[GRIP_SHOT_VOTE_AZIMUTH] = ((volume - 4 + GRIP_SHOT_VOLUMES) % GRIP_SHOT_VOLUMES) * GRIP_SHOT_STRIDE + step;
    v->value[GRIP_SHOT_VOTE_AZIMUTH] = -(float)shift;
    return 1 + shift;
}

/* Coordinates in the frame below this are taken as 0, as PCL does. */
GRIP_HD static inline double grip_shot_snap_tiny(double v)
{
    return fabs(v) < 1e-30 ? 0.0 : v;
}

/* The quadrilinear vote of support point q (normal n, squared distance sqdist to the keypoint p) in the frame rf
 * (x, y, z axis rows). Returns 0 when it casts none: a non-finite normal, or q at the keypoint itself. */
GRIP_HD static inline int grip_shot_vote_compute(const grip_shot_shells *sh, const float p[3], const float rf[9],
                                                 const float q[3], const float n[3], float sqdist,
                                                 grip_shot_vote *v)
{
    double bin_distance = grip_shot_cosine_bin_distance(n, rf + 6);
    if (!isfinite(bin_distance))
        return 0;
    float delta[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
    double distance = sqrt((double)sqdist);
    if (fabs(distance) < 1e-15)
        return 0;
    for (int s = 0; s < GRIP_SHOT_VOTE_BINS; ++s)
        v->bin[s] = -1;
    double x = grip_shot_snap_tiny((double)grip_shot_dot4f(delta, rf));
    double y = grip_shot_snap_tiny((double)grip_shot_dot4f(delta, rf + 3));
    double z = grip_shot_snap_tiny((double)grip_shot_dot4f(delta, rf + 6));
    int volume = grip_shot_volume_index(x, y, z, distance, sh->radius1_2);
    int step;
    double weight = grip_shot_vote_cosine(v, volume, bin_distance, &step);
    weight += grip_shot_vote_radius(v, sh, volume, step, distance);
    weight += grip_shot_vote_elevation(v, volume, step, z, distance);
    weight += grip_shot_vote_azimuth(v, volume, step, x, y);
    v->bin[GRIP_SHOT_VOTE_OWN] = volume * GRIP_SHOT_STRIDE + step;
    v->value[GRIP_SHOT_VOTE_OWN] = (float)weight;
    return 1;
}

/* PCL's L2 normalisation: the float squares summed in double (any order agrees to double rounding), the root
 * taken in double and rounded to float, every bin divided by it in float (0/0 gives NaN, as in PCL). */
GRIP_HD static inline double grip_shot_norm_term(float h)
{
    return (double)GRIP_FMUL(h, h);
}

GRIP_HD static inline float grip_shot_norm(double sum_of_terms)
{
    return (float)sqrt(sum_of_terms);
}

/* ---- The SHOT local reference frame: the arithmetic of the SHOT local reference frame, exactly as PCL 1.13's
 * SHOTLocalReferenceFrameEstimation::getLocalRF does it, as static inline functions shared by the CPU twin
 * (shot.c) and the CUDA kernel (cuda/descriptor/shot.cu).
 *
 * PCL's precision: float offsets to the keypoint widened to double, the weighted covariance summed in double in
 * support order, Eigen's ordering of the dot products. The covariance entries and the weight are 7 separate
 * sums, each a chain of additions in support order: a caller that adds the terms of grip_shot_lrf_terms in that
 * order gets the CPU's sums to the bit, whatever runs where. In device code every product is rounded on its own
 * (GRIP_DMUL/FMUL, math/rounded.h), so that nvcc cannot fuse it into a multiply-add. */

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
