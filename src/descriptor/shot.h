/* shot.h -- the SHOT local reference frame and the SHOT-352 descriptor (Tombari et al. 2010), exactly as PCL 1.13's
 * SHOTEstimation computes it, on the CPU, with the approximate G-SHOT support cap of Hu (2017) as an option. The GPU
 * twin is shot_cuda.h.
 *
 * The cap (approximate G-SHOT): max_neighbors N > 0 keeps, of each keypoint's support, only the nearest N points
 * (the radius list sorted by distance, ties to the lower index, cut after N) -- for the frame (grip_shot_lrf) and
 * for the descriptor alike, as Hu truncates both kernels' neighbour lists: one list serves both. Copies of the
 * keypoint count among the N. N = 0 is PCL's exact SHOT. */
#ifndef GRIP_DESCRIPTOR_SHOT_H
#define GRIP_DESCRIPTOR_SHOT_H

#include "descriptor/shot_math.h"
#include "spatial/kdtree3d.h"

/* The SHOT local reference frame (Tombari et al. 2010), exactly as PCL 1.13's
 * SHOTLocalReferenceFrameEstimation computes it, on the CPU. */
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

/* SHOT descriptor of each keypoint over its support: the surface points within `radius` of it.
 *
 * surface_xyz: n x 3, the points `tree` was built over; surface_normals: n x 4 (nx ny nz curvature) of the same
 * points. keypoint_xyz: k x 3. frames: k x 9 from grip_shot_lrf (rows x, y, z axis). max_neighbors: 0 uses the
 * whole support (PCL); N > 0 keeps only the nearest N support points (approximate G-SHOT, not PCL; give the
 * frames the same cap). descriptors_out: k x GRIP_SHOT_DIM, allocated by the caller. Each histogram is
 * quadrilinearly interpolated (cosine of the normal with the frame's z, radius, elevation, azimuth) and
 * L2-normalised.
 * A row is all NaN, as in PCL, for a keypoint with a non-finite coordinate or frame, or fewer than 5 support
 * points (the keypoint itself included). Support points with a NaN normal, or at the keypoint, cast no vote; a
 * keypoint where none votes gets NaN too (PCL's 0/0 normalisation). Errors: GRIP_EINVAL, GRIP_ENOMEM. */
grip_status grip_shot_describe(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                               const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, const float *frames,
                               float radius, uint32_t max_neighbors, float *descriptors_out);

#endif
