/* spin_image_math.h -- the arithmetic of one spin-image vote, exactly as PCL 1.13's
 * SpinImageEstimation::computeSiForPoint does it, shared by the CPU twin (spin_image.c) and the CUDA kernel
 * (cuda/descriptor/spin_image.cu) so that both take the same decisions (support angle, cylinder, bins) bit for bit.
 *
 * PCL's precision, step by step: the direction to the neighbour, its norm and both dot products are float (Eigen
 * Vector3f: x0 y0 + (x1 y1 + x2 y2)); everything after is double. In device code every operation that nvcc could
 * fuse into a multiply-add is written with a round-to-nearest intrinsic, so it rounds as on the CPU. */
#ifndef GRIP_DESCRIPTOR_SPIN_IMAGE_MATH_H
#define GRIP_DESCRIPTOR_SPIN_IMAGE_MATH_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "math/rounded.h"

/* Widths up to this keep a block's images in shared memory (2 x 33 x 65 doubles). */
#define GRIP_SPIN_IMAGE_MAX_WIDTH 32

/* pi to double precision (C11 has no M_PI) */
#define GRIP_SPIN_IMAGE_PI 3.14159265358979323846

/* Bins of an image of width w: (w + 1) rows of alpha (distance from the axis) x (2w + 1) columns of beta
 * (position along the axis, or elevation for the radial structure), row-major as PCL's Histogram<153>. */
GRIP_HD static inline uint32_t grip_spin_image_dim(uint32_t width)
{
    return (width + 1) * (2 * width + 1);
}

/* What one keypoint's votes share, derived once from the parameters (grip_spin_image_geometry_make). */
typedef struct grip_spin_image_geometry {
    double bin_size;      /* alpha bin: radius / width, divided by sqrt 2 for the rectangular structure */
    double beta_bin_size; /* bin_size, or (pi / 2) / width for the radial structure (beta is an angle) */
    double support_cos;   /* neighbours whose |normal . keypoint normal| is below this are left out (0: off) */
    int width;
    int radial;           /* beta = elevation angle, alpha = distance (no cylinder) */
    int angular;          /* bins hold the mean angle between normals instead of a normalised density */
} grip_spin_image_geometry;

GRIP_HD static inline grip_spin_image_geometry grip_spin_image_geometry_make(double radius, int width,
                                                                             double support_cos, int radial,
                                                                             int angular)
{
    grip_spin_image_geometry g;
    g.bin_size = radial ? radius / width : radius / width / sqrt(2.0);
    g.beta_bin_size = radial ? GRIP_SPIN_IMAGE_PI / 2 / width : g.bin_size;
    g.support_cos = support_cos;
    g.width = width;
    g.radial = radial;
    g.angular = angular;
    return g;
}

/* The normals are needed only for the support angle and the angular domain. */
GRIP_HD static inline int grip_spin_image_uses_normals(const grip_spin_image_geometry *g)
{
    return g->support_cos > 0.0 || g->angular;
}

/* One neighbour's vote: the four bins (row, col) .. (row + 1, col + 1) and their bilinear weights, and the angle
 * between the normals that the angular domain averages. */
typedef struct grip_spin_image_vote {
    int row, col;
    double weight[4]; /* (row, col), (row + 1, col), (row, col + 1), (row + 1, col + 1) */
    double angle;     /* acos |cos between normals|; 0 when the normals are not used */
} grip_spin_image_vote;

/* Eigen's Vector3f dot product: x0 y0 + (x1 y1 + x2 y2), in float. */
GRIP_HD static inline float grip_spin_image_dot3f(float x0, float x1, float x2, float y0, float y1, float y2)
{
    return GRIP_FADD(GRIP_FMUL(x0, y0), GRIP_FADD(GRIP_FMUL(x1, y1), GRIP_FMUL(x2, y2)));
}

/* std::max(-1.0, std::min(1.0, c)) as PCL writes it: a NaN comes out as 1. */
GRIP_HD static inline double grip_spin_image_clamp_cos(double c)
{
    double upper = (1.0 < c) ? 1.0 : c;
    if (!(upper == upper))
        upper = 1.0;
    return (upper < -1.0) ? -1.0 : upper;
}

/* The cosine between the keypoint's normal n0 and a neighbour's normal n1, clamped (a NaN normal gives 1, as
 * in PCL), and whether the support angle keeps the neighbour (counter-directed normals count as aligned). */
GRIP_HD static inline int grip_spin_image_normals_cos(const grip_spin_image_geometry *g, const float n0[3],
                                                      float n1x, float n1y, float n1z, double *cos_out)
{
    double c = grip_spin_image_clamp_cos((double)grip_spin_image_dot3f(n0[0], n0[1], n0[2], n1x, n1y, n1z));
    if (fabs(c) < g->support_cos)
        return 0;
    *cos_out = c < 0.0 ? -c : c;
    return 1;
}

/* The vote of neighbour q (normal qn, read only when the geometry uses normals) of the keypoint at origin whose
 * rotation axis (its normal) is axis. Returns 0 when the neighbour casts no vote: it is the keypoint itself, the
 * support angle leaves it out, or (rectangular structure) it lies outside the cylinder of radius and half-height
 * bin_size * width. */
GRIP_HD static inline int grip_spin_image_vote_of(const grip_spin_image_geometry *g, const float origin[3],
                                                  const float axis[3], float qx, float qy, float qz, float qnx,
                                                  float qny, float qnz, grip_spin_image_vote *v)
{
    double cos_normals = 1.0;
    if (grip_spin_image_uses_normals(g) && !grip_spin_image_normals_cos(g, axis, qnx, qny, qnz, &cos_normals))
        return 0;
    const float dx = qx - origin[0], dy = qy - origin[1], dz = qz - origin[2];
    const double norm = (double)sqrtf(grip_spin_image_dot3f(dx, dy, dz, dx, dy, dz));
    if (norm < 10 * DBL_EPSILON)
        return 0; /* the keypoint itself */
    const double cos_axis = grip_spin_image_clamp_cos((double)grip_spin_image_dot3f(dx, dy, dz, axis[0], axis[1],
                                                                                    axis[2]) / norm);
    const int w = g->width;
    double alpha, beta;
    if (g->radial) {
        beta = asin(cos_axis); /* the angle against the tangent plane */
        alpha = norm;
    } else {
        beta = norm * cos_axis;
        alpha = norm * sqrt(GRIP_DSUB(1.0, GRIP_DMUL(cos_axis, cos_axis)));
        const double half = g->bin_size * w;
        if (fabs(beta) >= half || alpha >= half)
            return 0;
    }
    int col = (int)floor(beta / g->beta_bin_size) + w;
    int row = (int)floor(alpha / g->bin_size);
    if (col < 0) /* beta a rounding below -width bins: PCL would write out of its image */
        col = 0;
    if (row >= w) { /* on the outer border: PCL's hack keeps a < 1 */
        row = w - 1;
        alpha = GRIP_DSUB(GRIP_DMUL(g->bin_size, (double)(row + 1)), DBL_EPSILON);
    }
    if (col >= 2 * w) {
        col = 2 * w - 1;
        beta = GRIP_DSUB(GRIP_DMUL(g->beta_bin_size, (double)(col - w + 1)), DBL_EPSILON);
    }
    const double a = alpha / g->bin_size - (double)row;
    const double b = beta / g->beta_bin_size - (double)(col - w);
    v->row = row;
    v->col = col;
    v->weight[0] = (1 - a) * (1 - b);
    v->weight[1] = a * (1 - b);
    v->weight[2] = (1 - a) * b;
    v->weight[3] = a * b;
    v->angle = g->angular ? acos(cos_normals) : 0.0;
    return 1;
}

/* Offsets of the four voted bins from (row, col) in a row-major image of width w, in weight[] order. */
GRIP_HD static inline uint32_t grip_spin_image_bin(const grip_spin_image_vote *v, int corner, int w)
{
    const int cols = 2 * w + 1;
    return (uint32_t)((v->row + (corner & 1)) * cols + v->col + (corner >> 1));
}

/* A finished bin, as PCL turns its sums into the descriptor: the angular domain divides the weighted angle sum
 * by the weight sum (+ DBL_EPSILON against 0/0); otherwise the density is divided by the image's total when
 * the support held more than one point (a total of 0 then gives NaN, as PCL's 0/0). */
GRIP_HD static inline float grip_spin_image_finish(const grip_spin_image_geometry *g, double density,
                                                   double angle_sum, double total, uint32_t support)
{
    if (g->angular)
        return (float)(angle_sum / (density + DBL_EPSILON));
    return (float)(support > 1 ? density / total : density);
}

#endif
