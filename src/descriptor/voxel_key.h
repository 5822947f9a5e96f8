/* voxel_key.h -- which cubic voxel a point falls in, written once for everything that bins a cloud by voxels of
 * side `leaf` on either side: uniform sampling (uniform_sampling.c, cuda/descriptor/uniform_sampling.cu) and the
 * voxel grid (voxel_grid.c, cuda/descriptor/voxel_grid.cu), so that both backends put every point in the same voxel.
 *
 * As PCL 1.13 (UniformSampling, VoxelGrid): a point's voxel is floor(x * inv) per axis, inv = 1 / leaf, all in
 * float; points with a non-finite coordinate are in no voxel. PCL casts the float to int without a check (undefined
 * when it does not fit); here such a point is an error (grip_voxel_fail_too_far). VoxelGrid subtracts the minimum
 * voxel before flattening (i, j, k) to one int; here voxels are told apart by their exact (i, j, k), so no
 * flattened index can wrap around. */
#ifndef GRIP_DESCRIPTOR_VOXEL_KEY_H
#define GRIP_DESCRIPTOR_VOXEL_KEY_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ctx.h"
#include "math/rounded.h"

GRIP_HD static inline int grip_voxel_point_finite(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

/* The voxel (i, j, k) of the finite point p into ijk; -1 when a coordinate does not fit in an int (ijk is then
 * partly written), 0 otherwise. */
GRIP_HD static inline int grip_voxel_of(const float *p, float inv, int32_t ijk[3])
{
    for (int a = 0; a < 3; ++a) {
        const float f = floorf(GRIP_FMUL(p[a], inv));
        if (!(f >= -2147483648.0f && f < 2147483648.0f))
            return -1;
        ijk[a] = (int32_t)f;
    }
    return 0;
}

#ifdef __cplusplus
extern "C" {
#endif

/* GRIP_EINVAL unless leaf is finite, > 0 and has a finite inverse; the text starts with `what` (e.g.
 * "uniform_sampling", "descriptor.support_leaf"). GRIP_OK otherwise, nothing reported. */
grip_status grip_voxel_check_leaf(grip_ctx *ctx, const char *what, float leaf);

/* Reports (GRIP_EINVAL, text starting with `what`) that point `index` at p is so far out for `leaf` that its voxel
 * coordinate does not fit in an int. Returns GRIP_EINVAL. */
grip_status grip_voxel_fail_too_far(grip_ctx *ctx, const char *what, size_t index, const float p[3], float leaf);

#ifdef __cplusplus
}
#endif
#endif
