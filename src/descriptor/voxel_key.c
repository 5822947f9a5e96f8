/* voxel_key.c -- the errors of voxel binning, in one wording for every caller (see voxel_key.h). */
#include "descriptor/voxel_key.h"

grip_status grip_voxel_check_leaf(grip_ctx *ctx, const char *what, float leaf)
{
    if (!(leaf > 0.0f) || !isfinite(leaf) || !isfinite(1.0f / leaf))
        return grip_fail(ctx, GRIP_EINVAL, "%s: leaf must be finite and > 0 (got %g)", what, (double)leaf);
    return GRIP_OK;
}

grip_status grip_voxel_fail_too_far(grip_ctx *ctx, const char *what, size_t index, const float p[3], float leaf)
{
    return grip_fail(ctx, GRIP_EINVAL,
                     "%s: point %zu (%g, %g, %g) is too far out for leaf %g: its voxel coordinate does not fit in an "
                     "int",
                     what, index, (double)p[0], (double)p[1], (double)p[2], (double)leaf);
}
