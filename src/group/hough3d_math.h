/* hough3d_math.h -- the arithmetic of Hough 3D voting that decides where a vote lands and what it weighs, as static
 * inline functions that compile both as C (the CPU twin, hough3d.c) and as CUDA device code (cuda/group/hough3d.cu),
 * with every operation rounded on its own (math/rounded.h): both backends cast the same votes into the same bins
 * with the same weights, bit for bit. Votes are computed in float and the grid in double, as PCL 1.13 does
 * (Hough3DGrouping::train/houghVoting, HoughSpace3D::vote/voteInt). */
#ifndef GRIP_GROUP_HOUGH3D_MATH_H
#define GRIP_GROUP_HOUGH3D_MATH_H

#include <math.h>
#include <stdint.h>

#include "math/rounded.h"

#define GRIP_HOUGH3D_MAX_SHARES 8 /* an interpolated vote reaches at most 8 bins */

/* The grid spanning the votes' bounding box: count[d] = ceil((max - min) / bin) as in PCL. */
typedef struct grip_hough3d_grid {
    double min[3], bin;
    int64_t count[3];
    int64_t stride[3]; /* linear index = x + y * stride[1] + z * stride[2] */
} grip_hough3d_grid;

GRIP_HD static inline int grip_hough3d_frame_finite(const float *rf)
{
    for (int i = 0; i < 9; ++i)
        if (!isfinite(rf[i]))
            return 0;
    return 1;
}

GRIP_HD static inline float grip_hough3d_dot3(const float a[3], const float b[3])
{
    return GRIP_FADD(GRIP_FADD(GRIP_FMUL(a[0], b[0]), GRIP_FMUL(a[1], b[1])), GRIP_FMUL(a[2], b[2]));
}

/* Hough3DGrouping::train: a model keypoint's vector to the keypoint centroid c, in its own frame rf. */
GRIP_HD static inline void grip_hough3d_model_vote(const float xyz[3], const float rf[9], const float c[3],
                                                   float out[3])
{
    float v[3] = {GRIP_FSUB(c[0], xyz[0]), GRIP_FSUB(c[1], xyz[1]), GRIP_FSUB(c[2], xyz[2])};
    for (int a = 0; a < 3; ++a)
        out[a] = grip_hough3d_dot3(rf + a * 3, v);
}

/* Hough3DGrouping::houghVoting: where a correspondence places the model's reference point in the scene, from the
 * scene keypoint p, its frame rf and the model keypoint's vote mv. Returns 0 (no vote) when a frame or the vote is
 * not finite. */
GRIP_HD static inline int grip_hough3d_scene_vote(const float p[3], const float rf[9], const float model_rf[9],
                                                  const float mv[3], double vote[3])
{
    if (!grip_hough3d_frame_finite(rf) || !grip_hough3d_frame_finite(model_rf))
        return 0;
    for (int d = 0; d < 3; ++d)
        vote[d] = (double)GRIP_FADD(
            GRIP_FADD(GRIP_FADD(GRIP_FMUL(rf[0 + d], mv[0]), GRIP_FMUL(rf[3 + d], mv[1])), GRIP_FMUL(rf[6 + d], mv[2])),
            p[d]);
    return isfinite(vote[0]) && isfinite(vote[1]) && isfinite(vote[2]);
}

/* A vote's weight: 1, or with distance weighting 1 - sqdist / max_sqdist (PCL: max_sqdist is only measured with
 * interpolation on; see hough3d.h). */
GRIP_HD static inline double grip_hough3d_weight(int use_distance_weight, float sqdist, float max_sqdist)
{
    if (use_distance_weight && max_sqdist != 0.0f)
        return GRIP_DSUB(1.0, (double)GRIP_FDIV(sqdist, max_sqdist));
    return 1.0;
}

/* The vote's bin along each axis; 0 when it falls outside the grid (PCL drops such a vote, which happens to a
 * vote exactly on the far edge of the box when the extent is a whole number of bins). */
GRIP_HD static inline int grip_hough3d_central_bin(const grip_hough3d_grid *g, const double v[3], int64_t c[3])
{
    for (int d = 0; d < 3; ++d) {
        double b = floor(GRIP_DDIV(GRIP_DSUB(v[d], g->min[d]), g->bin));
        if (!(b >= 0.0) || b >= (double)g->count[d])
            return 0;
        c[d] = (int64_t)b;
    }
    return 1;
}

/* The shares of one vote of the given weight: HoughSpace3D::vote (one bin, the whole weight) or, interpolated,
 * HoughSpace3D::voteInt with its float weights: the central bin gets 1 - |offset from its centre| / bin along each
 * axis and the neighbour on the side of the offset the rest (a vote exactly at a bin centre along an axis gives
 * that axis weight 0: PCL's arithmetic, kept). Writes up to GRIP_HOUGH3D_MAX_SHARES (bin, weight) pairs in PCL's
 * order and returns how many. */
GRIP_HD static inline int grip_hough3d_shares(const grip_hough3d_grid *g, const double v[3], double weight,
                                              int interpolate, int64_t bins[GRIP_HOUGH3D_MAX_SHARES],
                                              double weights[GRIP_HOUGH3D_MAX_SHARES])
{
    int64_t c[3], side[3];
    float centre_weight[3];
    if (!grip_hough3d_central_bin(g, v, c))
        return 0;
    if (!interpolate) {
        bins[0] = c[0] + c[1] * g->stride[1] + c[2] * g->stride[2];
        weights[0] = weight;
        return 1;
    }
    for (int d = 0; d < 3; ++d) {
        double offset = GRIP_DSUB(v[d], g->min[d]);
        float centre = (float)GRIP_DDIV(GRIP_DADD(GRIP_DMUL(GRIP_DMUL(2.0, (double)c[d]), g->bin), g->bin), 2.0);
        centre_weight[d] = (float)GRIP_DSUB(1.0, GRIP_DDIV(fabs(GRIP_DSUB(offset, (double)centre)), g->bin));
        side[d] = offset < (double)centre ? c[d] - 1 : offset > (double)centre ? c[d] + 1 : c[d];
    }
    int n = 0;
    for (int k = 0; k < 27; ++k) { /* the 3^3 bins around the central one, of which at most 8 get a share */
        float share = 1.0f;
        int64_t bin = 0;
        int valid = 1;
        for (int d = 0, step = 1; d < 3 && valid; ++d, step *= 3) {
            int64_t b = c[d] + (k % (step * 3)) / step - 1;
            if (b < 0 || b >= g->count[d])
                valid = 0;
            else if (b == side[d])
                share = GRIP_FMUL(share, GRIP_FSUB(1.0f, centre_weight[d]));
            else if (b == c[d])
                share = GRIP_FMUL(share, centre_weight[d]);
            else
                valid = 0;
            bin += b * g->stride[d];
        }
        if (valid) {
            bins[n] = bin;
            weights[n++] = GRIP_DMUL(weight, (double)share);
        }
    }
    return n;
}

/* The smallest value of an instance's bin: threshold when >= 0; in [-1, 0) that fraction of the largest bin value
 * `maximum`, below -1 the largest value itself. */
GRIP_HD static inline double grip_hough3d_threshold(double threshold, double maximum)
{
    if (threshold >= 0.0)
        return threshold;
    return threshold >= -1.0 ? GRIP_DMUL(-threshold, maximum) : maximum;
}

#endif
