/* gc_math.h -- the pairwise test of geometric-consistency grouping, as a static inline function that compiles both
 * as C (the CPU twin, gc.c) and as CUDA device code (cuda/group/gc.cu), every operation rounded on its own
 * (math/rounded.h), so that both backends decide every pair alike. Distances are float as in PCL
 * (Eigen::Vector3f::norm); their difference is compared in double with the double tolerance, as PCL does. */
#ifndef GRIP_GROUP_GC_MATH_H
#define GRIP_GROUP_GC_MATH_H

#include <math.h>

#include "math/rounded.h"

GRIP_HD static inline float grip_gc_distance3(const float *a, const float *b)
{
    float x = GRIP_FSUB(a[0], b[0]), y = GRIP_FSUB(a[1], b[1]), z = GRIP_FSUB(a[2], b[2]);
    return GRIP_FSQRT(GRIP_FADD(GRIP_FADD(GRIP_FMUL(x, x), GRIP_FMUL(y, y)), GRIP_FMUL(z, z)));
}

/* Whether correspondences k and j agree: scene keypoints sk, sj and model keypoints mk, mj at distances that differ
 * by at most size. Symmetric in k and j. */
GRIP_HD static inline int grip_gc_consistent(const float *sk, const float *mk, const float *sj, const float *mj,
                                             double size)
{
    float gap = fabsf(GRIP_FSUB(grip_gc_distance3(sk, sj), grip_gc_distance3(mk, mj)));
    return !((double)gap > size);
}

#endif
