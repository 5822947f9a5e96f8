/* pfh_support.c -- see pfh_support.h. */
#include "descriptor/pfh_support.h"

#include <math.h>

grip_status grip_pfh_check_args(grip_ctx *ctx, const char *what, const float *surface_xyz,
                                const float *surface_normals, size_t n, const grip_kdtree3d *tree,
                                const float *keypoint_xyz, size_t k, float radius, const float *out)
{
    if (k > 0 && (!surface_xyz || !surface_normals || !tree || !keypoint_xyz || !out))
        return grip_fail(ctx, GRIP_EINVAL, "%s: surface, normals, tree, keypoints and output must not be NULL", what);
    if (tree && grip_kdtree3d_size(tree) > n)
        return grip_fail(ctx, GRIP_EINVAL, "%s: the tree holds %zu points but the surface has only %zu", what,
                         grip_kdtree3d_size(tree), n);
    if (!(radius > 0.0f) || !isfinite(radius))
        return grip_fail(ctx, GRIP_EINVAL, "%s: radius must be finite and > 0 (got %g)", what, (double)radius);
    return GRIP_OK;
}

void grip_pfh_nan_row(float *row, size_t dim)
{
    for (size_t d = 0; d < dim; ++d)
        row[d] = NAN;
}
