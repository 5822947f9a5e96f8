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
 * The frame of one keypoint is board_lrf_math.h's, shared with the GPU kernel.
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

/* Which of equal candidates (two support points whose normals make the same angle with z, or lie at the same angle
 * around it) a frame is built on: the first in the support's order, which is
 *  - GRIP_BOARD_TIES_PCL: FLANN's visiting order, as PCL's (a range image's neighbouring points often share one
 *    normal, so this decides the x axis of about one scene frame in eight on the PCL tutorial); only the CPU twin
 *    has it, since it needs FLANN's tree;
 *  - GRIP_BOARD_TIES_NEAREST: by squared distance, ties to the lower point number -- the order both backends
 *    produce, so that the CPU twin and the GPU (board_lrf_cuda.h) give the same frames. */
typedef enum grip_board_ties { GRIP_BOARD_TIES_PCL = 0, GRIP_BOARD_TIES_NEAREST = 1 } grip_board_ties;

/* surface_xyz: n x 3 (non-finite points are never neighbours); surface_normals: n x 4 (nx ny nz curvature) of
 * the same points, NaN where unknown; tree: a tree over surface_xyz, or NULL to build one for this call;
 * keypoint_xyz: k x 3; radius > 0 (m). Writes frames_out, k x 9 (rows x, y, z axis), owned by the caller.
 * grip_board_lrf decides ties as PCL does (GRIP_BOARD_TIES_PCL). */
grip_status grip_board_lrf(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                           const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, float radius,
                           int find_holes, float *frames_out);
grip_status grip_board_lrf_ties(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                                const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, float radius,
                                int find_holes, grip_board_ties ties, float *frames_out);

#endif
