/* shot_lrf.h -- the SHOT local reference frame (Tombari et al. 2010), exactly as PCL 1.13's
 * SHOTLocalReferenceFrameEstimation computes it, on the CPU. The GPU twin is shot_cuda.h. */
#ifndef GRIP_DESCRIPTOR_SHOT_LRF_H
#define GRIP_DESCRIPTOR_SHOT_LRF_H

#include "spatial/kdtree3d.h"

/* Local reference frame of each keypoint over its support: the surface points within `radius` of it.
 *
 * surface_xyz: n x 3, the points `tree` was built over. keypoint_xyz: k x 3 (in PCL the keypoints are copies of
 * surface points). max_neighbors: 0 uses the whole support (PCL); N > 0 only the nearest N support points
 * (approximate G-SHOT, see shot.h). frames_out: k x 9, allocated by the caller, gets per keypoint the x, y and z
 * axis as rows.
 * Per PCL: the covariance of the offsets to the keypoint, weighted by radius - distance, in double; x is the
 * eigenvector of the largest eigenvalue and z of the smallest, each turned towards the majority of the offsets
 * (on a tie, towards the majority of the 5 neighbours around the median distance); y = z x x.
 * A row is all NaN, as in PCL, when the keypoint has fewer than 5 support points other than copies of itself, a
 * non-finite coordinate, or a non-finite eigenvalue. Errors: GRIP_EINVAL (bad arguments), GRIP_ENOMEM. */
grip_status grip_shot_lrf(grip_ctx *ctx, const float *surface_xyz, size_t n, const grip_kdtree3d *tree,
                          const float *keypoint_xyz, size_t k, float radius, uint32_t max_neighbors,
                          float *frames_out);

#endif
