/* shot.h -- the SHOT-352 descriptor (Tombari et al. 2010), exactly as PCL 1.13's SHOTEstimation computes it, on
 * the CPU, with the approximate G-SHOT support cap of Hu (2017) as an option. */
#ifndef GRIP_DESCRIPTOR_SHOT_H
#define GRIP_DESCRIPTOR_SHOT_H

#include "spatial/kdtree3d.h"

/* 32 volumes (8 azimuth x 2 elevation x 2 radial) x (10 cosine bins + 1 stored for cos = 1). */
#define GRIP_SHOT_VOLUMES 32
#define GRIP_SHOT_COSINE_BINS 10
#define GRIP_SHOT_DIM (GRIP_SHOT_VOLUMES * (GRIP_SHOT_COSINE_BINS + 1))

/* SHOT descriptor of each keypoint over its support: the surface points within `radius` of it.
 *
 * surface_xyz: n x 3, the points `tree` was built over; surface_normals: n x 4 (nx ny nz curvature) of the same
 * points. keypoint_xyz: k x 3. frames: k x 9 from grip_shot_lrf (rows x, y, z axis). max_neighbors: 0 uses the
 * whole support (PCL); N > 0 keeps only the nearest N support points (approximate G-SHOT, not PCL).
 * descriptors_out: k x GRIP_SHOT_DIM, allocated by the caller. Each histogram is quadrilinearly interpolated
 * (cosine of the normal with the frame's z, radius, elevation, azimuth) and L2-normalised.
 * A row is all NaN, as in PCL, for a keypoint with a non-finite coordinate or frame, or fewer than 5 support
 * points (the keypoint itself included). Support points with a NaN normal, or at the keypoint, cast no vote; a
 * keypoint where none votes gets NaN too (PCL's 0/0 normalisation). Errors: GRIP_EINVAL, GRIP_ENOMEM. */
grip_status grip_shot_describe(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                               const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, const float *frames,
                               float radius, uint32_t max_neighbors, float *descriptors_out);

#endif
