/* ghv_math.h -- the per-point arithmetic of global hypotheses verification that the CPU twin (verify/ghv.c) and the
 * kernels (cuda/verify/ghv.cu) share, written with rounded.h's operations so that both round alike: a model point
 * moved by a pose, its visibility in an organized scene, and an inlier's fixed-point squared distance. */
#ifndef GRIP_VERIFY_GHV_MATH_H
#define GRIP_VERIFY_GHV_MATH_H

#include <stdint.h>
#include "math/rounded.h"

/* q = R p + t for a pose of 12 floats (rows of [R | t]), each row summed left to right. */
GRIP_HD static inline void grip_ghv_transform(const float *pose, const float *p, float *q)
{
    for (int r = 0; r < 3; r++)
        q[r] = GRIP_FADD(GRIP_FADD(GRIP_FADD(GRIP_FMUL(pose[4 * r], p[0]), GRIP_FMUL(pose[4 * r + 1], p[1])),
                                   GRIP_FMUL(pose[4 * r + 2], p[2])),
                         pose[4 * r + 3]);
}

/* 1 when the camera (fx, fy, cx, cy) would see q: q lies in front of it, projects onto a pixel (u, v) =
 * floor(fx x / z + cx, fy y / z + cy) of the width x height cloud scene_xyz whose point is finite, and lies at most
 * `occlusion` behind that point (PCL's occlusion_reasoning::filter, with a fitted camera instead of f = 525). */
GRIP_HD static inline int grip_ghv_visible(const double *cam, const float *scene_xyz, uint32_t width, uint32_t height,
                                           const float *q, float occlusion)
{
    if (!(q[2] > 0.0f))
        return 0;
    double u = floor(GRIP_DADD(GRIP_DDIV(GRIP_DMUL(cam[0], (double)q[0]), (double)q[2]), cam[2]));
    double v = floor(GRIP_DADD(GRIP_DDIV(GRIP_DMUL(cam[1], (double)q[1]), (double)q[2]), cam[3]));
    if (!(u >= 0.0 && u < (double)width && v >= 0.0 && v < (double)height))
        return 0;
    const float *s = scene_xyz + 3 * ((size_t)v * width + (size_t)u);
    if (!(isfinite(s[0]) && isfinite(s[1]) && isfinite(s[2])))
        return 0;
    return GRIP_FSUB(q[2], s[2]) <= occlusion;
}

/* floor(d2 / t2 * 2^32) for 0 <= d2 <= t2: an inlier's squared distance in fixed point, summed exactly. */
GRIP_HD static inline uint64_t grip_ghv_fixed_sq(float d2, float t2)
{
    return (uint64_t)GRIP_DMUL(GRIP_DDIV((double)d2, (double)t2), 4294967296.0);
}

#endif
