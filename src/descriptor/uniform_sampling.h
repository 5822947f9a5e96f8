/* uniform_sampling.h -- keypoints by uniform sampling: one point per occupied voxel, the CPU twin of PCL 1.13's
 * pcl::UniformSampling (filters/impl/uniform_sampling.hpp).
 *
 * As PCL 1.13.0: non-finite points are skipped; a point's voxel is floor(x * inv) per axis with inv = 1 / leaf,
 * all in float; the point kept for a voxel is the one nearest its centre c = ((float)ijk + 0.5) * leaf, by
 * PCL's float score ((x, y, z, 1) - (c, 0)).squaredNorm(), summed in the order Eigen's SSE code sums it, and,
 * among equal scores, the first point in cloud order. (PCL before 1.13 measured from the integer voxel
 * coordinates instead of the centre; 1.13.0 already has the centre.)
 * Differences from PCL, on purpose: the keypoints are returned sorted by point index (PCL's order is that of a
 * std::unordered_map, which nothing should depend on); voxels are told apart by their exact (i, j, k), where
 * PCL's flattened int index could wrap around on a huge grid. */
#ifndef GRIP_DESCRIPTOR_UNIFORM_SAMPLING_H
#define GRIP_DESCRIPTOR_UNIFORM_SAMPLING_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

/* Samples the n points xyz (n x 3, NaN rows allowed; n <= UINT32_MAX) with voxels of side `leaf` (finite, > 0).
 * On success *out_idx is a malloc'd array of *out_count point indices in ascending order (NULL when the count
 * is 0), which the caller frees with free(). GRIP_EINVAL for a bad leaf, or a point so far out that its voxel
 * coordinate does not fit in an int; GRIP_ENOMEM. On failure *out_idx is NULL and *out_count 0. */
grip_status grip_uniform_sampling(grip_ctx *ctx, const float *xyz, size_t n, float leaf, uint32_t **out_idx,
                                  size_t *out_count);

#endif
