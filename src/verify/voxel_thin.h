/* voxel_thin.h -- thinning a cloud to one point per cubic voxel: the point nearest the centroid of the voxel's
 * points. ICP uses it to bound the cost of refining a dense model. Unlike VoxelGrid's centroids, the kept points
 * lie on the surface (a centroid of points from two faces of an edge lies inside the object and biases ICP). */
#ifndef GRIP_VERIFY_VOXEL_THIN_H
#define GRIP_VERIFY_VOXEL_THIN_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

/* Voxels are the cells floor(p / leaf) of the finite points of xyz (n x 3). Writes the index (into xyz) of each
 * occupied voxel's point nearest its centroid (ties to the lower index), by voxel: z-major, then y, then x.
 * *indices (n_out entries) is malloc'd here and freed by the caller with free(); NULL when n_out == 0.
 * GRIP_EINVAL for leaf <= 0 (or non-finite), n >= UINT32_MAX, or a leaf so small that the grid would exceed 2^62
 * cells; GRIP_ENOMEM. Nothing is written on failure. */
grip_status grip_voxel_thin(grip_ctx *ctx, const float *xyz, size_t n, double leaf, uint32_t **indices,
                            size_t *n_out);

#endif
