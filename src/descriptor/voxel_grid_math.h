/* voxel_grid_math.h -- the arithmetic of one voxel of the voxel grid (voxel_grid.h), shared by the CPU twin
 * (voxel_grid.c) and the kernels (cuda/descriptor/voxel_grid.cu, one thread per voxel), so that both sum the same
 * points in the same order and round alike (math/rounded.h: no fused multiply-add on the device). */
#ifndef GRIP_DESCRIPTOR_VOXEL_GRID_MATH_H
#define GRIP_DESCRIPTOR_VOXEL_GRID_MATH_H

#include <math.h>
#include <stdint.h>

#include "math/rounded.h"

/* The centroid of the points order[begin, end) of xyz (n x 3) into out: summed in double in that order, divided by
 * the count, rounded to float. */
GRIP_HD static inline void grip_voxel_grid_centroid_of(const uint32_t *order, uint32_t begin, uint32_t end,
                                                       const float *xyz, float *out)
{
    double sum[3] = {0.0, 0.0, 0.0};
    for (uint32_t e = begin; e < end; ++e)
        for (int a = 0; a < 3; ++a)
            sum[a] = GRIP_DADD(sum[a], (double)xyz[3 * (size_t)order[e] + a]);
    const double count = (double)(end - begin);
    for (int a = 0; a < 3; ++a)
        out[a] = (float)GRIP_DDIV(sum[a], count);
}

/* The mean normal of the points order[begin, end) (normals n x 4: nx ny nz curvature) into out (4 floats): the
 * finite normals summed in double in that order and scaled to unit length, the curvature the mean of theirs; a NaN
 * row when no finite normal is there or they sum to zero. */
GRIP_HD static inline void grip_voxel_grid_mean_normal_of(const uint32_t *order, uint32_t begin, uint32_t end,
                                                          const float *normals, float *out)
{
    double sum[3] = {0.0, 0.0, 0.0}, curvature = 0.0;
    uint32_t used = 0;
    for (uint32_t e = begin; e < end; ++e) {
        const float *nrm = normals + 4 * (size_t)order[e];
        if (!(isfinite(nrm[0]) && isfinite(nrm[1]) && isfinite(nrm[2])))
            continue;
        for (int a = 0; a < 3; ++a)
            sum[a] = GRIP_DADD(sum[a], (double)nrm[a]);
        curvature = GRIP_DADD(curvature, (double)nrm[3]);
        ++used;
    }
    const double norm2 = GRIP_DADD(GRIP_DADD(GRIP_DMUL(sum[0], sum[0]), GRIP_DMUL(sum[1], sum[1])),
                                   GRIP_DMUL(sum[2], sum[2]));
    if (used == 0 || !(norm2 > 0.0)) {
        out[0] = out[1] = out[2] = out[3] = NAN;
        return;
    }
    const double norm = sqrt(norm2); /* correctly rounded on both sides (IEEE 754) */
    for (int a = 0; a < 3; ++a)
        out[a] = (float)GRIP_DDIV(sum[a], norm);
    out[3] = (float)GRIP_DDIV(curvature, (double)used);
}

#endif
