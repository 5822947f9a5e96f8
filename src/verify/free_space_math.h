/* free_space_math.h -- the free-space test of one model point (free_space.h), as static inline functions shared by
 * the CPU twin (free_space.c) and the CUDA kernel (cuda/verify/free_space.cu), so that both count the same points:
 * every double operation is rounded on its own (math/rounded.h), in the order written here, and the counts are
 * integers. The scene is organized, row-major, `stride` floats a point (x, y, z first). */
#ifndef GRIP_VERIFY_FREE_SPACE_MATH_H
#define GRIP_VERIFY_FREE_SPACE_MATH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "math/rounded.h"

/* A scene point the camera saw: finite, in front of it. */
static inline GRIP_HD int grip_free_space_usable(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]) && p[2] > 1e-6f;
}

/* -1: violation, 1: seen, 0: occluded or unknown, for a point at depth z over pixel (u, v): every usable scene point
 * of the 3x3 neighbourhood lies more than tol behind it (violation), or one lies within tol of it (seen). */
static inline GRIP_HD int grip_free_space_classify(const float *scene, size_t stride, uint32_t width, uint32_t height,
                                                   long u, long v, double z, double tol)
{
    int any = 0, all_behind = 1, near = 0;
    for (long dv = -1; dv <= 1; dv++)
        for (long du = -1; du <= 1; du++) {
            long uu = u + du, vv = v + dv;
            if (uu < 0 || vv < 0 || uu >= (long)width || vv >= (long)height)
                continue;
            const float *p = scene + stride * ((size_t)vv * width + (size_t)uu);
            if (!grip_free_space_usable(p))
                continue;
            any = 1;
            if ((double)p[2] <= GRIP_DADD(z, tol))
                all_behind = 0;
            if (fabs(GRIP_DSUB((double)p[2], z)) <= tol)
                near = 1;
        }
    if (!any)
        return 0;
    return near ? 1 : all_behind ? -1 : 0;
}

/* The model point m moved by pose (row-major 4x4), projected by the pinhole (fx, fy, cx, cy) and classified as
 * above; 0 for a point that is not finite, behind the camera or off the image. */
static inline GRIP_HD int grip_free_space_point(const double cam[4], const float *scene, size_t stride, uint32_t width,
                                                uint32_t height, const float m[3], const double pose[16], double tol)
{
    if (!isfinite(m[0]) || !isfinite(m[1]) || !isfinite(m[2]))
        return 0;
    double q[3];
    for (int r = 0; r < 3; r++)
        q[r] = GRIP_DADD(
            GRIP_DADD(GRIP_DADD(GRIP_DMUL(pose[4 * r], (double)m[0]), GRIP_DMUL(pose[4 * r + 1], (double)m[1])),
                      GRIP_DMUL(pose[4 * r + 2], (double)m[2])),
            pose[4 * r + 3]);
    if (q[2] <= 1e-6)
        return 0;
    const double pu = GRIP_DADD(GRIP_DDIV(GRIP_DMUL(cam[0], q[0]), q[2]), cam[2]);
    const double pv = GRIP_DADD(GRIP_DDIV(GRIP_DMUL(cam[1], q[1]), q[2]), cam[3]);
    if (!(pu > -0.5 && pv > -0.5 && pu < (double)width - 0.5 && pv < (double)height - 0.5))
        return 0; /* off the image, or NaN: checked before rounding, which is undefined out of long's range */
#ifdef __CUDA_ARCH__
    const long u = (long)llround(pu), v = (long)llround(pv);
#else
    const long u = lround(pu), v = lround(pv);
#endif
    return grip_free_space_classify(scene, stride, width, height, u, v, q[2], tol);
}

/* The violation of one pose from its counts: NaN without a valid camera, 0 when it counts neither. */
static inline float grip_free_space_fraction(int camera_valid, uint64_t seen, uint64_t violations)
{
    return !camera_valid ? NAN : seen + violations ? (float)((double)violations / (double)(seen + violations)) : 0.0f;
}

#endif
