/* keypoint_support.h -- the support of keypoints as PCL gathers it (a radius search over the surface), and the
 * OpenMP loop over keypoints that the CPU twins of every descriptor (SHOT and its frame, FPFH, PFH, Spin Image)
 * share. */
#ifndef GRIP_DESCRIPTOR_KEYPOINT_SUPPORT_H
#define GRIP_DESCRIPTOR_KEYPOINT_SUPPORT_H

#include "spatial/kdtree3d.h"

/* Work on one keypoint: i is its row, keypoint its coordinates, support its neighbours. The support buffer
 * belongs to the calling thread, so the callback may compact or reorder it; callbacks run concurrently on
 * distinct keypoints and must only write to row i of their outputs. */
typedef void (*grip_keypoint_support_fn)(size_t i, const float keypoint[3], grip_neighbors *support, void *user);

/* For every keypoint i in [0, k) (keypoint_xyz is k x 3): gathers its support over the tree's surface and calls fn.
 * The support is what PCL's FLANN radius search returns, as grip_kdtree3d_radius gives it (squared distance below
 * radius^2 in FLANN's float arithmetic, nearest first, ties to the lower index); when max_neighbors > 0 only the
 * nearest max_neighbors of them; empty for a keypoint with a non-finite coordinate. Runs on ctx's CPU threads.
 * `what` names the caller in error texts. GRIP_ENOMEM when a support buffer cannot grow. */
grip_status grip_keypoint_support_for_each(grip_ctx *ctx, const char *what, const grip_kdtree3d *tree,
                                        const float *keypoint_xyz, size_t k, float radius, uint32_t max_neighbors,
                                        grip_keypoint_support_fn fn, void *user);

#endif
