/* board_lrf_math.h -- the BOARD frame of one keypoint from its support, as static inline functions that compile both
 * as C (the CPU twin, board_lrf.c) and as CUDA device code (cuda/group/board_lrf.cu), so that both backends run the
 * same operations in the same order on the same support list and give the same frame.
 *
 * The support is given as a list of point numbers and their squared distances to the keypoint, in the caller's
 * order (board_lrf.h, grip_board_ties): FLANN's, or by squared distance with ties to the lower point number, which
 * both backends produce (grip_kdtree3d_radius on the CPU, the GPU radius neighbourhoods of
 * spatial/neighborhood_cuda.h). Every choice between candidates (the most different normal, a sector's first and
 * last point) is "the first in that order", so in the second order equal candidates are decided the same way on
 * both backends.
 *
 * Rounding: every float and double operation is rounded on its own (math/rounded.h: no fused multiply-add on the
 * device), acosf is glibc's (math/libm_float.h) and the plane's eigen-decomposition is the shared double Jacobi
 * solver (math/sym3_jacobi.h): the z axis, the chosen candidate and the hole angle are the same bits on both
 * backends. Only cosf and sinf, which turn x into a hole, are each backend's own (within 2 ulp): the x and y axes
 * of such frames may differ by a few 1e-7. */
#ifndef GRIP_GROUP_BOARD_LRF_MATH_H
#define GRIP_GROUP_BOARD_LRF_MATH_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "math/libm_float.h"
#include "math/rounded.h"
#include "math/sym3_jacobi.h"

#define GRIP_BOARD_MIN_SUPPORT 6          /* fewer support points (keypoint included) give a NaN frame */
#define GRIP_BOARD_SECTORS 24             /* PCL check_margin_array_size_ */
#define GRIP_BOARD_HOLE_MIN_FRACTION 0.2f /* PCL hole_size_prob_thresh_: a gap must cover more of the circle */
#define GRIP_BOARD_STEEP_MIN 0.1f         /* PCL steep_thresh_ */
/* PCL's margin: squared distance above margin_thresh^2 * tangent_radius^2, and the tangent radius is unset (0) */
#define GRIP_BOARD_MARGIN_SQDIST 0.0f
#define GRIP_BOARD_TWO_PI (2.0f * 3.14159265358979323846f) /* PCL: 2 * static_cast<float>(M_PI) */

/* A keypoint's support: count entries, point numbers idx and squared distances sqdist to the keypoint, in the
 * order above; xyz (n x 3) and normals (n x 4) are the surface's. idx NULL: entry i is row i of xyz and normals,
 * a copy of the support's points in list order (the GPU's, staged in shared memory). */
typedef struct grip_board_support {
    const float *xyz, *normals;
    const uint32_t *idx;
    const float *sqdist;
    uint32_t count;
} grip_board_support;

/* The row of xyz and normals that holds the support's entry i. */
GRIP_HD static inline size_t grip_board_row(const grip_board_support *s, uint32_t i)
{
    return s->idx ? (size_t)s->idx[i] : (size_t)i;
}

/* Whether entry i lies off the margin (at the keypoint's position; a NaN distance counts as margin, as in PCL). */
GRIP_HD static inline int grip_board_off_margin(const grip_board_support *s, uint32_t i)
{
    return s->sqdist[i] <= GRIP_BOARD_MARGIN_SQDIST;
}

/* One sector of the support's border seen around z: whether a margin point falls in it, and its points of smallest
 * and largest angle with their normals' cosines to z. */
typedef struct grip_board_sector {
    unsigned char hit;
    float min_angle, max_angle;
    float min_angle_cos, max_angle_cos;
} grip_board_sector;

typedef struct grip_board_sectors {
    grip_board_sector s[GRIP_BOARD_SECTORS];
} grip_board_sectors;

GRIP_HD static inline float grip_board_dot3(const float a[3], const float b[3])
{
    return GRIP_FADD(GRIP_FADD(GRIP_FMUL(a[0], b[0]), GRIP_FMUL(a[1], b[1])), GRIP_FMUL(a[2], b[2]));
}

GRIP_HD static inline void grip_board_cross3(const float a[3], const float b[3], float out[3])
{
    out[0] = GRIP_FSUB(GRIP_FMUL(a[1], b[2]), GRIP_FMUL(a[2], b[1]));
    out[1] = GRIP_FSUB(GRIP_FMUL(a[2], b[0]), GRIP_FMUL(a[0], b[2]));
    out[2] = GRIP_FSUB(GRIP_FMUL(a[0], b[1]), GRIP_FMUL(a[1], b[0]));
}

/* Eigen's normalize(): a zero vector stays zero. */
GRIP_HD static inline void grip_board_normalize3(float v[3])
{
    float n2 = grip_board_dot3(v, v);
    if (n2 > 0.0f) {
        float n = GRIP_FSQRT(n2);
        v[0] = GRIP_FDIV(v[0], n);
        v[1] = GRIP_FDIV(v[1], n);
        v[2] = GRIP_FDIV(v[2], n);
    }
}

/* The plane and its orientation are sums over the support, each its own accumulator run over the list in order:
 * the CPU runs them one after another, the GPU one a lane, and each gives the same bits either way. */

/* The mean of coordinate d (0, 1, 2) of the support's points, summed in double. */
GRIP_HD static inline double grip_board_mean_coordinate(const grip_board_support *s, int d)
{
    double sum = 0.0;
    for (uint32_t i = 0; i < s->count; ++i)
        sum = GRIP_DADD(sum, (double)s->xyz[grip_board_row(s, i) * 3 + d]);
    return GRIP_DDIV(sum, (double)s->count);
}

/* Entry e of the upper triangle of the support's covariance about mean (unnormalised), in the order 00 01 02 11 12
 * 22. */
#define GRIP_BOARD_COV_ENTRIES 6
GRIP_HD static inline double grip_board_covariance_entry(const grip_board_support *s, const double mean[3], int e)
{
    const int r = e < 3 ? 0 : (e < 5 ? 1 : 2), c = e < 3 ? e : (e < 5 ? e - 2 : 2);
    double sum = 0.0;
    for (uint32_t i = 0; i < s->count; ++i) {
        const float *p = s->xyz + grip_board_row(s, i) * 3;
        sum = GRIP_DADD(sum, GRIP_DMUL(GRIP_DSUB((double)p[r], mean[r]), GRIP_DSUB((double)p[c], mean[c])));
    }
    return sum;
}

/* Component d of the sum of the support's normals, in float. */
GRIP_HD static inline float grip_board_normal_sum(const grip_board_support *s, int d)
{
    float sum = 0.0f;
    for (uint32_t i = 0; i < s->count; ++i)
        sum = GRIP_FADD(sum, s->normals[grip_board_row(s, i) * 4 + d]);
    return sum;
}

/* The normal of the least-squares plane (unit, sign arbitrary): the smallest eigenvector of the covariance whose
 * upper triangle is upper (grip_board_covariance_entry's order). */
GRIP_HD static inline void grip_board_plane_from_covariance(const double upper[GRIP_BOARD_COV_ENTRIES], float z[3])
{
    double cov[9] = {upper[0], upper[1], upper[2], upper[1], upper[3], upper[4], upper[2], upper[4], upper[5]};
    double values[3], vecs[9];
    grip_sym3_jacobi(cov, values, vecs);
    for (int d = 0; d < 3; ++d)
        z[d] = (float)vecs[d * 3 + 0];
}

/* PCL normalDisambiguation: z turns toward the mean of the support's normals, whose sum is normal_sum (a NaN normal
 * makes the mean NaN and leaves z as it is, as in PCL). */
GRIP_HD static inline void grip_board_orient(const float normal_sum[3], float z[3])
{
    float mean[3] = {normal_sum[0], normal_sum[1], normal_sum[2]};
    grip_board_normalize3(mean);
    if (grip_board_dot3(z, mean) < 0.0f)
        for (int d = 0; d < 3; ++d)
            z[d] = -z[d];
}

/* PCL directedOrthogonalAxis: the unit direction from origin to p's projection on the plane through origin
 * orthogonal to z. */
GRIP_HD static inline void grip_board_directed_axis(const float z[3], const float origin[3], const float p[3],
                                                    float out[3])
{
    float rel[3] = {GRIP_FSUB(p[0], origin[0]), GRIP_FSUB(p[1], origin[1]), GRIP_FSUB(p[2], origin[2])};
    float t = grip_board_dot3(z, rel);
    for (int d = 0; d < 3; ++d)
        out[d] = GRIP_FSUB(GRIP_FSUB(p[d], GRIP_FMUL(t, z[d])), origin[d]);
    grip_board_normalize3(out);
}

/* PCL getAngleBetweenUnitVectors: the angle in [0, 2 pi) that turns v1 to v2 about axis. */
GRIP_HD static inline float grip_board_angle_about(const float v1[3], const float v2[3], const float axis[3])
{
    float c[3];
    grip_board_cross3(v1, v2, c);
    float angle = grip_acosf(fmaxf(-1.0f, fminf(1.0f, grip_board_dot3(v1, v2))));
    return grip_board_dot3(c, axis) < 0.0f ? GRIP_FSUB(GRIP_BOARD_TWO_PI, angle) : angle;
}

/* The sectors' origin. PCL draws it with rand(); any axis orthogonal to z gives the same frame (the gap's
 * edges are actual support points) unless support points lie exactly on a sector boundary. Those are common
 * along the scan lines of range images, which run along the image axes, so the axis here is the projection of a
 * fixed direction unrelated to the coordinate axes (or of a second one when z is nearly parallel to it). */
GRIP_HD static inline void grip_board_reference_axis(const float z[3], float x[3])
{
    const float g0[3] = {0.4926f, 0.7286f, 0.4759f}, g1[3] = {-0.6123f, 0.2197f, 0.7595f};
    const float *g = fabsf(grip_board_dot3(z, g0)) < 0.9f ? g0 : g1;
    float t = grip_board_dot3(z, g);
    for (int d = 0; d < 3; ++d)
        x[d] = GRIP_FSUB(g[d], GRIP_FMUL(t, z[d]));
    grip_board_normalize3(x);
}

GRIP_HD static inline void grip_board_sector_reset(grip_board_sector *t)
{
    t->hit = 0;
    t->min_angle = FLT_MAX;
    t->max_angle = -FLT_MAX;
    t->min_angle_cos = -1.0f;
    t->max_angle_cos = -1.0f;
}

/* The sector of an angle in [0, 2 pi] about z. */
GRIP_HD static inline int grip_board_sector_of(float angle)
{
    int i = (int)floorf(GRIP_FDIV(angle, GRIP_FDIV(GRIP_BOARD_TWO_PI, (float)GRIP_BOARD_SECTORS)));
    return i > GRIP_BOARD_SECTORS - 1 ? GRIP_BOARD_SECTORS - 1 : i;
}

/* Folds a margin point of the sector (its angle, its normal's cosine to z) into it. A sector's fold reads no other
 * sector: the GPU folds each sector on a lane of its own, over the list in order, as the CPU folds them all. */
GRIP_HD static inline void grip_board_sector_fold(grip_board_sector *t, float angle, float normal_cos)
{
    t->hit = 1;
    if (angle < t->min_angle) {
        t->min_angle = angle;
        t->min_angle_cos = normal_cos;
    }
    if (angle > t->max_angle) {
        t->max_angle = angle;
        t->max_angle_cos = normal_cos;
    }
}

/* PCL's hole search: the widest gap between hit sectors covering more than 20% of the circle whose edge normals
 * are steep enough (relative to the smallest cosine min_cos). Writes the angle, from the sectors' origin, at
 * which x points into it. Returns 0 when there is no such gap. */
GRIP_HD static inline int grip_board_widest_hole(const grip_board_sectors *m, float min_cos, float *angle)
{
    const int n = GRIP_BOARD_SECTORS;
    int first = 0;
    if (!m->s[n - 1].hit)
        while (first < n && !m->s[first].hit)
            ++first;
    float best = -FLT_MAX;
    for (int ch = first; ch < n; ++ch) {
        if (m->s[ch].hit)
            continue;
        int hole_end = ch + 1;
        while (!m->s[hole_end % n].hit)
            ++hole_end;
        int before = (ch - 1 + n) % n, after = hole_end % n;
        float range = GRIP_FSUB(1.0f, min_cos);
        float steep_begin = GRIP_FSUB(1.0f, GRIP_FDIV(GRIP_FSUB(m->s[before].max_angle_cos, min_cos), range));
        float steep_end = GRIP_FSUB(1.0f, GRIP_FDIV(GRIP_FSUB(m->s[after].min_angle_cos, min_cos), range));
        float width = after < before
                          ? GRIP_FSUB(GRIP_FADD(m->s[after].min_angle, GRIP_BOARD_TWO_PI), m->s[before].max_angle)
                          : GRIP_FSUB(m->s[after].min_angle, m->s[before].max_angle);
        float fraction = GRIP_FDIV(width, GRIP_BOARD_TWO_PI);
        if (fraction > GRIP_BOARD_HOLE_MIN_FRACTION &&
            GRIP_FDIV(GRIP_FADD(steep_end, steep_begin), 2.0f) > GRIP_BOARD_STEEP_MIN && fraction > best) {
            best = fraction;
            float weight = GRIP_FDIV(GRIP_FADD(GRIP_FSUB(steep_end, steep_begin), 1.0f), 2.0f);
            *angle = GRIP_FADD(m->s[before].max_angle, GRIP_FMUL(width, weight));
        }
        if (hole_end >= n)
            break;
        ch = hole_end - 1;
    }
    return best > -FLT_MAX;
}

/* Rodrigues: v turned by angle about the unit axis (cosf and sinf are each backend's own). */
GRIP_HD static inline void grip_board_rotate_about(const float axis[3], float angle, const float v[3], float out[3])
{
    float c = cosf(angle), s = sinf(angle), k = GRIP_FMUL(grip_board_dot3(axis, v), GRIP_FSUB(1.0f, c)), w[3];
    grip_board_cross3(axis, v, w);
    for (int d = 0; d < 3; ++d)
        out[d] = GRIP_FADD(GRIP_FADD(GRIP_FMUL(v[d], c), GRIP_FMUL(w[d], s)), GRIP_FMUL(axis[d], k));
}

GRIP_HD static inline void grip_board_write_nan(float *f)
{
    for (int i = 0; i < 9; ++i)
        f[i] = NAN;
}

GRIP_HD static inline void grip_board_write_frame(float *f, const float x[3], const float z[3])
{
    float y[3];
    grip_board_cross3(z, x, y);
    for (int d = 0; d < 3; ++d) {
        f[d] = x[d];
        f[3 + d] = y[d];
        f[6 + d] = z[d];
    }
}

/* One margin entry's measures: its normal's cosine to z and, with holes, its angle about z from x_ref (else 0).
 * They depend on no other entry, so the GPU measures a support's entries in parallel and folds them in list order
 * (grip_board_margin_fold); the CPU measures each as it folds it. */
GRIP_HD static inline void grip_board_margin_measure(const grip_board_support *s, uint32_t i, const float kp[3],
                                                     const float z[3], const float x_ref[3], int find_holes,
                                                     float *normal_cos, float *angle)
{
    const size_t row = grip_board_row(s, i);
    *normal_cos = grip_board_dot3(z, s->normals + row * 4);
    *angle = 0.0f;
    if (find_holes) {
        float toward[3];
        grip_board_directed_axis(z, kp, s->xyz + row * 3, toward);
        *angle = grip_board_angle_about(x_ref, toward, z);
    }
}

/* Folds one point (its row, its normal's cosine to z) into the choice of the point whose normal differs most from z
 * (strictly less: the first of equal ones). Order-sensitive: call in list order. */
GRIP_HD static inline void grip_board_min_cos_fold(int64_t row, float normal_cos, int64_t *min_index, float *min_cos)
{
    if (normal_cos < *min_cos) {
        *min_index = row;
        *min_cos = normal_cos;
    }
}

/* Folds one margin entry (its row and measures) into the choice so far and, with holes, into its sector. */
GRIP_HD static inline void grip_board_margin_fold(int64_t row, float normal_cos, float angle, int find_holes,
                                                  grip_board_sectors *m, int64_t *min_index, float *min_cos)
{
    grip_board_min_cos_fold(row, normal_cos, min_index, min_cos);
    if (find_holes)
        grip_board_sector_fold(&m->s[grip_board_sector_of(angle)], angle, normal_cos);
}

/* Scans the margin: the point whose normal differs most from z (the first of equal ones; -1 if none has a normal)
 * and, with holes, the sectors. measured_cos and measured_angle (count entries each, those off the margin unread)
 * hold the entries' grip_board_margin_measure results when the caller measured them beforehand, else both are NULL
 * and each entry is measured here. Returns whether any margin point exists. */
GRIP_HD static inline int grip_board_scan_margin(const grip_board_support *s, const float kp[3], const float z[3],
                                                 const float x_ref[3], int find_holes, const float *measured_cos,
                                                 const float *measured_angle, grip_board_sectors *m, int64_t *min_index,
                                                 float *min_cos)
{
    int found = 0;
    for (uint32_t i = 0; i < s->count; ++i) {
        if (grip_board_off_margin(s, i))
            continue;
        found = 1;
        float normal_cos, angle;
        if (measured_cos) {
            normal_cos = measured_cos[i];
            angle = measured_angle[i];
        } else {
            grip_board_margin_measure(s, i, kp, z, x_ref, find_holes, &normal_cos, &angle);
        }
        grip_board_margin_fold((int64_t)grip_board_row(s, i), normal_cos, angle, find_holes, m, min_index, min_cos);
    }
    return found;
}

/* z, the plane's normal, oriented by the normals' sum, and the sectors' origin x_ref (zero without holes). */
GRIP_HD static inline void grip_board_axes_finish(const float normal_sum[3], int find_holes, float z[3], float x_ref[3])
{
    grip_board_orient(normal_sum, z);
    x_ref[0] = x_ref[1] = x_ref[2] = 0.0f;
    if (find_holes)
        grip_board_reference_axis(z, x_ref);
}

/* z, oriented by the normals, and the sectors' origin x_ref (zero without holes) of a support of at least
 * GRIP_BOARD_MIN_SUPPORT entries. */
GRIP_HD static inline void grip_board_axes(const grip_board_support *s, int find_holes, float z[3], float x_ref[3])
{
    double mean[3], upper[GRIP_BOARD_COV_ENTRIES];
    float normal_sum[3];
    for (int d = 0; d < 3; ++d)
        mean[d] = grip_board_mean_coordinate(s, d);
    for (int e = 0; e < GRIP_BOARD_COV_ENTRIES; ++e)
        upper[e] = grip_board_covariance_entry(s, mean, e);
    for (int d = 0; d < 3; ++d)
        normal_sum[d] = grip_board_normal_sum(s, d);
    grip_board_plane_from_covariance(upper, z);
    grip_board_axes_finish(normal_sum, find_holes, z, x_ref);
}

/* The frame from the scanned margin (grip_board_scan_margin's result `margin`, the sectors m and the choice
 * min_index, min_cos). */
GRIP_HD static inline void grip_board_frame_from_scan(const grip_board_support *s, const float kp[3], const float z[3],
                                                      const float x_ref[3], int find_holes, int margin,
                                                      const grip_board_sectors *m, int64_t min_index, float min_cos,
                                                      float frame[9])
{
    float x[3];
    if (!margin) /* only points at the keypoint's position: the most different normal among them */
        for (uint32_t j = 0; j < s->count; ++j) {
            const size_t row = grip_board_row(s, j);
            grip_board_min_cos_fold((int64_t)row, grip_board_dot3(z, s->normals + row * 4), &min_index, &min_cos);
        }

    float hole_angle = 0.0f;
    if (margin && find_holes && grip_board_widest_hole(m, min_cos, &hole_angle)) {
        grip_board_rotate_about(z, hole_angle, x_ref, x);
    } else if (min_index >= 0) {
        grip_board_directed_axis(z, kp, s->xyz + (size_t)min_index * 3, x);
    } else {
        grip_board_write_nan(frame); /* no support point has a normal */
        return;
    }
    grip_board_write_frame(frame, x, z);
}

/* The frame of a support of at least GRIP_BOARD_MIN_SUPPORT entries whose axes (grip_board_axes) are z and x_ref:
 * the margin scanned (measured_cos and measured_angle as for grip_board_scan_margin), then x. */
GRIP_HD static inline void grip_board_frame_from_axes(const grip_board_support *s, const float kp[3], const float z[3],
                                                      const float x_ref[3], int find_holes, const float *measured_cos,
                                                      const float *measured_angle, float frame[9])
{
    grip_board_sectors m;
    int64_t min_index = -1;
    float min_cos = FLT_MAX;
    for (int i = 0; i < GRIP_BOARD_SECTORS; ++i)
        grip_board_sector_reset(&m.s[i]);
    int margin = grip_board_scan_margin(s, kp, z, x_ref, find_holes, measured_cos, measured_angle, &m, &min_index,
                                        &min_cos);
    grip_board_frame_from_scan(s, kp, z, x_ref, find_holes, margin, &m, min_index, min_cos, frame);
}

/* PCL computePointLRF for one keypoint kp given its support; writes 9 floats (rows x, y, z axis, or NaN). */
GRIP_HD static inline void grip_board_keypoint_frame(const grip_board_support *s, const float kp[3], int find_holes,
                                                     float frame[9])
{
    if (s->count < GRIP_BOARD_MIN_SUPPORT) {
        grip_board_write_nan(frame);
        return;
    }
    float z[3], x_ref[3];
    grip_board_axes(s, find_holes, z, x_ref);
    grip_board_frame_from_axes(s, kp, z, x_ref, find_holes, NULL, NULL, frame);
}

#endif
