/* fpfh.h -- FPFH-33 (Rusu 2009), exactly as PCL 1.13's FPFHEstimation / FPFHEstimationOMP computes it, on the CPU.
 *
 * For a keypoint q with radius neighbours N(q) (squared distance < radius^2, as PCL's radius search):
 *   FPFH(q) = sum over p in N(q) with d2(q, p) > 0 of SPFH(p) / d2(q, p),
 * each 11-bin sub-histogram then scaled to sum 100. A neighbour at distance 0 -- the keypoint itself when it is a
 * surface point, and its duplicates -- is left out, so the keypoint's own SPFH never enters (PCL's "minus the query
 * point itself"). SPFH(p) bins the pair features (theta, alpha, phi; src/descriptor/pair_features.h) of p with each
 * of its own radius neighbours other than p itself (by index: a duplicate of p counts, with features 0), 11 bins
 * each, every vote 100 / (|N(p)| - 1).
 * Rows: NaN (all 33) for a keypoint with a non-finite coordinate or no neighbour at all; all 0 when every neighbour
 * is at distance 0 (PCL's 0 totals). NaN normals are not checked, as in PCL: their features are NaN and land in
 * bin 0 of each sub-histogram (PCL on x86-64). Neighbour lists are sorted (nearest first, ties to the lower index),
 * as PCL's default search::KdTree(sorted) returns them; only float sums over them depend on that order. */
#ifndef GRIP_DESCRIPTOR_FPFH_H
#define GRIP_DESCRIPTOR_FPFH_H

#include "descriptor/pair_features.h"
#include "spatial/kdtree3d.h"

/* FPFH of the k keypoints keypoint_xyz (k x 3) over the surface surface_xyz (n x 3, the points `tree` was built
 * over) with its normals surface_normals (n x 4: nx ny nz curvature). out: k x GRIP_FPFH_DIM floats, allocated by
 * the caller. radius: finite and > 0 (PCL refuses a radius of 0). Runs on ctx's CPU threads.
 * Errors: GRIP_EINVAL (NULL arrays with k > 0, a tree larger than the surface, a bad radius), GRIP_ENOMEM. */
grip_status grip_fpfh_describe(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                               const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, float radius,
                               float *out);

#endif
