/* keypoint_support.c -- see keypoint_support.h. */
#include "descriptor/keypoint_support.h"

#include <math.h>

static int point_is_finite(const float p[3])
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

grip_status grip_keypoint_support_for_each(grip_ctx *ctx, const char *what, const grip_kdtree3d *tree,
                                        const float *keypoint_xyz, size_t k, float radius, uint32_t max_neighbors,
                                        grip_keypoint_support_fn fn, void *user)
{
    int failed = 0;
#pragma omp parallel num_threads(grip_ctx_threads(ctx)) reduction(| : failed)
    {
        grip_neighbors support = {0};
        /* dynamic: supports range from a handful of points to thousands */
#pragma omp for schedule(dynamic, 16)
        for (size_t i = 0; i < k; ++i) {
            const float *p = keypoint_xyz + 3 * i;
            support.count = 0;
            if (failed)
                continue;
            if (point_is_finite(p)) {
                if (grip_kdtree3d_radius(tree, p, radius, &support) != GRIP_OK) {
                    failed = 1;
                    continue;
                }
                if (max_neighbors > 0 && support.count > max_neighbors)
                    support.count = max_neighbors; /* the list is sorted: the nearest stay */
            }
            fn(i, p, &support, user);
        }
        grip_neighbors_free(&support);
    }
    if (failed)
        return grip_fail(ctx, GRIP_ENOMEM, "%s: out of memory for the neighbours of a keypoint", what);
    return GRIP_OK;
}
