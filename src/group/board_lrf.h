/* board_lrf.h -- BOARD local reference frames (Petrelli & Di Stefano 2011), as PCL 1.13's
 * BOARDLocalReferenceFrameEstimation computes them with its default parameters.
 *
 * For a keypoint, its support is the surface points strictly within `radius` (the keypoint itself included).
 *  - z axis: the normal of the least-squares plane through the support, turned toward the mean of the
 *    support's normals (which are used only for that sign and for the x axis, never as the z axis itself).
 *  - x axis: towards the support point whose normal differs most from z (smallest cosine), projected onto the
 *    plane; with find_holes, when the support's border has a gap (the neighbours' directions around z, in 24
 *    sectors) wider than 20% of the circle whose edges are steep enough, x points into the widest such gap
 *    instead, placed between its edges by their normals. y = z x x.
 * PCL's tangent radius is left unset, as the tutorial does: the "margin" then holds every support point except
 * those at the keypoint's own position.
 *
 * A frame is NaN (all 9 values) where PCL's is: fewer than 6 support points, or no usable normal.
 *
 * Differences from PCL: PCL measures the 24 sectors from a rand() axis, here from a fixed generic one, and PCL
 * fits the plane by a float SVD, here by a double eigen-decomposition. Neither matters except where PCL itself
 * picks among near-equal candidates by rounding -- support points at the same angle around z (collinear scan-line
 * points of a range image) or normals at the same angle to z: on the PCL tutorial 1 of 686 model and 22 of 3747
 * scene x axes differ (PCL's own output changes in 9 scene frames with another srand seed); all z axes agree. */
#ifndef GRIP_GROUP_BOARD_LRF_H
#define GRIP_GROUP_BOARD_LRF_H

#include <stddef.h>
#include "core/ctx.h"
#include "spatial/kdtree3d.h"

/* surface_xyz: n x 3 (non-finite points are never neighbours); surface_normals: n x 4 (nx ny nz curvature) of
 * the same points, NaN where unknown; tree: a tree over surface_xyz, searched with grip_kdtree3d_radius_pcl (PCL
 * picks the first of equal candidates in FLANN's order), or NULL to build one for this call;
 * keypoint_xyz: k x 3; radius > 0 (m). Writes frames_out, k x 9 (rows x, y, z axis), owned by the caller. */
grip_status grip_board_lrf(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                           const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, float radius,
                           int find_holes, float *frames_out);

#endif
