/* board_lrf.c -- see board_lrf.h. The frame of each keypoint is group/board_lrf_math.h's, shared with the CUDA
 * kernel: it follows PCL 1.13's BOARDLocalReferenceFrameEstimation::computePointLRF step by step, in float where
 * PCL computes in float (axes, angles, the gap search), so that the comparisons that pick the x axis decide as
 * PCL's do. The plane normal comes from a double-precision eigen-decomposition of the support's covariance instead
 * of PCL's float SVD of the centred points: the same vector, more accurate. This file finds the supports. */
#include "group/board_lrf.h"
#include "group/board_lrf_math.h"

#include <math.h>

static grip_status check_inputs(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                                const float *keypoint_xyz, size_t k, float radius, const float *frames_out)
{
    if (k == 0)
        return GRIP_OK;
    if (!keypoint_xyz || !frames_out)
        return grip_fail(ctx, GRIP_EINVAL, "board: keypoints and frames_out must not be NULL");
    if (n > 0 && (!surface_xyz || !surface_normals))
        return grip_fail(ctx, GRIP_EINVAL, "board: surface points and normals must not be NULL");
    if (!(radius > 0.0f) || !isfinite(radius))
        return grip_fail(ctx, GRIP_EINVAL, "board.radius: %g must be finite and > 0", (double)radius);
    return GRIP_OK;
}

static grip_status frames_for_keypoints(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals,
                                        const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, float radius,
                                        int find_holes, grip_board_ties ties, float *frames_out)
{
    int failed = 0;
#pragma omp parallel num_threads(grip_ctx_threads(ctx)) reduction(| : failed)
    {
        grip_neighbors support = {0};
#pragma omp for schedule(dynamic, 16)
        for (size_t i = 0; i < k; ++i) {
            const float *q = keypoint_xyz + i * 3;
            grip_status found = ties == GRIP_BOARD_TIES_PCL ? grip_kdtree3d_radius_pcl(tree, q, radius, &support)
                                                            : grip_kdtree3d_radius(tree, q, radius, &support);
            if (failed || found != GRIP_OK) {
                failed = 1;
                continue;
            }
            grip_board_support s = {surface_xyz, surface_normals, support.idx, support.sqdist,
                                    (uint32_t)support.count};
            grip_board_keypoint_frame(&s, keypoint_xyz + i * 3, find_holes, frames_out + i * 9);
        }
        grip_neighbors_free(&support);
    }
    if (failed)
        return grip_fail(ctx, GRIP_ENOMEM, "board: out of memory for the support of a keypoint");
    return GRIP_OK;
}

grip_status grip_board_lrf(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                           const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, float radius,
                           int find_holes, float *frames_out)
{
    return grip_board_lrf_ties(ctx, surface_xyz, surface_normals, n, tree, keypoint_xyz, k, radius, find_holes,
                               GRIP_BOARD_TIES_PCL, frames_out);
}

grip_status grip_board_lrf_ties(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                                const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, float radius,
                                int find_holes, grip_board_ties ties, float *frames_out)
{
    grip_status st = check_inputs(ctx, surface_xyz, surface_normals, n, keypoint_xyz, k, radius, frames_out);
    if (st != GRIP_OK || k == 0)
        return st;
    grip_kdtree3d *own_tree = NULL;
    if (!tree) {
        st = grip_kdtree3d_build(ctx, surface_xyz, n, &own_tree);
        if (st != GRIP_OK)
            return st;
        tree = own_tree;
    }
    st = frames_for_keypoints(ctx, surface_xyz, surface_normals, tree, keypoint_xyz, k, radius, find_holes, ties,
                              frames_out);
    grip_kdtree3d_free(own_tree);
    return st;
}
