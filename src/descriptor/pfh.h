/* pfh.h -- PFH-125 (Rusu 2008), exactly as PCL 1.13's PFHEstimation computes it on the CPU (not PCL's GPU module,
 * which counts ordered pairs).
 *
 * For a keypoint with radius neighbours N (squared distance < radius^2, the keypoint itself included when it is a
 * surface point): every unordered pair of N -- for i over N in order, every j before i, the pair (N[i], N[j]) --
 * votes 100 / (|N| (|N| - 1) / 2) into bin theta + 5 alpha + 25 phi of its pair features, 5 subdivisions each,
 * no distance feature (src/descriptor/pair_features.h). A pair at distance 0 (duplicates) has features 0 and votes
 * into bin 62, as in PCL. The histogram sums to 100.
 * Rows: NaN (all 125) for a keypoint with a non-finite coordinate or no neighbour; all 0 for a single neighbour.
 * NaN normals are not checked, as in PCL: NaN features land in bin 0 (PCL on x86-64). */
#ifndef GRIP_DESCRIPTOR_PFH_H
#define GRIP_DESCRIPTOR_PFH_H

#include "descriptor/pair_features.h"
#include "spatial/kdtree3d.h"

/* PFH of the k keypoints keypoint_xyz (k x 3) over the surface surface_xyz (n x 3, the points `tree` was built
 * over) with its normals surface_normals (n x 4). out: k x GRIP_PFH_DIM floats, allocated by the caller. radius:
 * finite and > 0. Runs on ctx's CPU threads; the work grows with the square of the neighbourhood size.
 * Errors: GRIP_EINVAL (NULL arrays with k > 0, a tree larger than the surface, a bad radius), GRIP_ENOMEM. */
grip_status grip_pfh_describe(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                              const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, float radius,
                              float *out);

#endif
