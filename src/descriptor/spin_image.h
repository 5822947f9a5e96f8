/* spin_image.h -- Spin Images (Johnson & Hebert 1999) exactly as PCL 1.13's SpinImageEstimation computes them, on
 * the CPU: the twin of the CUDA kernel (spin_image_cuda.h). With width 8 the descriptor has (8 + 1) x (2 x 8 + 1)
 * = 153 bins (PCL's Histogram<153>).
 *
 * For each keypoint p with normal n (the rotation axis), every surface point q within `radius` of p (the support,
 * p itself included when it is a surface point) votes, in the order of its distance:
 *   - support angle (support_angle_cos > 0) or angular domain: c = n . n_q (float), clamped to [-1, 1]; q is left
 *     out when |c| < support_angle_cos (counter-directed normals count as aligned);
 *   - d = q - p (float), |d| (float); q is left out when |d| < 10 DBL_EPSILON (the keypoint itself);
 *   - rectangular structure (radial 0): bin = radius / width / sqrt 2; beta = |d| cos(d, n) along the axis,
 *     alpha = |d| sin(d, n) from it; q is left out when |beta| or alpha reaches bin x width (the cylinder);
 *     radial structure (radial 1): bin = radius / width; alpha = |d|, beta = asin cos(d, n) with beta bins of
 *     (pi / 2) / width;
 *   - bilinear vote into rows floor(alpha / bin) and columns floor(beta / beta bin) + width (PCL's border rule
 *     moves a point on the last row or column back into the image), summed in double.
 * Then, as PCL: the angular domain (angular 1) stores per bin the weighted mean of acos |c| (sum of weighted
 * angles / (sum of weights + DBL_EPSILON)); otherwise the image is divided by its sum when the support holds more
 * than one point (a support of two or more points that all failed to vote gives 0/0 = NaN, as in PCL).
 *
 * Where grip differs from PCL, which throws an exception for the whole cloud or returns meaningless values:
 *   - a keypoint whose support holds fewer than min_neighbors points gets a NaN row (PCL throws);
 *   - a keypoint with a non-finite coordinate or normal gets a NaN row (PCL gives zeros, or an image of every
 *     neighbour put on the axis);
 *   - normals that are not unit length are clamped, not refused (PCL throws beyond 1 + 10 FLT_EPSILON).
 * Like PCL, a support point whose normal is NaN counts as aligned with the keypoint (PCL's clamp turns the NaN
 * cosine into 1). */
#ifndef GRIP_DESCRIPTOR_SPIN_IMAGE_H
#define GRIP_DESCRIPTOR_SPIN_IMAGE_H

#include "descriptor/spin_image_math.h"
#include "spatial/kdtree3d.h"

/* Defaults are PCL's constructor's: width 8, support angle off (0), no minimum, rectangular, density. */
typedef struct grip_spin_image_params {
    float radius;            /* support radius (> 0, finite) */
    uint32_t width;          /* image width in bins, 1 .. GRIP_SPIN_IMAGE_MAX_WIDTH */
    float support_angle_cos; /* in [0, 1]; 0 turns the support angle off */
    uint32_t min_neighbors;  /* fewer support points (the keypoint included) give a NaN row */
    int angular;             /* 1: mean angle between normals per bin (PCL's setAngularDomain) */
    int radial;              /* 1: radial structure (PCL's setRadialStructure) */
} grip_spin_image_params;

/* Checks p (radius, width, support_angle_cos); GRIP_EINVAL names the field, prefixed by `what`. */
grip_status grip_spin_image_params_check(grip_ctx *ctx, const char *what, const grip_spin_image_params *p);

/* The spin image of each of the k keypoints over the n surface points.
 * surface_xyz: n x 3, the points `tree` was built over; surface_normals: n x 4 (nx ny nz curvature), read only
 * when support_angle_cos > 0 or angular (may be NULL otherwise). keypoint_xyz: k x 3; keypoint_normals: k x 4,
 * the rotation axes. out: k x grip_spin_image_dim(width) floats, allocated by the caller. Runs on ctx's CPU
 * threads. Errors: GRIP_EINVAL (NULL arrays, bad parameters), GRIP_ENOMEM. */
grip_status grip_spin_image_describe(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals,
                                     size_t n, const grip_kdtree3d *tree, const float *keypoint_xyz,
                                     const float *keypoint_normals, size_t k, const grip_spin_image_params *p,
                                     float *out);

#endif
