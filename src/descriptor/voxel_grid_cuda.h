/* voxel_grid_cuda.h -- the GPU twin of the voxel grid (src/descriptor/voxel_grid.h) over a device-resident cloud,
 * with exactly the CPU twin's result: the same voxels in the same order, the same points in each, and centroids,
 * mean normals and spread rows bit for bit (one thread per voxel summing its points in order through
 * voxel_grid_math.h). The grid's arrays (order, start, voxel_of) are device memory of the context's device.
 * Every call is synchronous. A CPU-only build links src/no_cuda.c, which fails with GRIP_EUNSUPPORTED. */
#ifndef GRIP_DESCRIPTOR_VOXEL_GRID_CUDA_H
#define GRIP_DESCRIPTOR_VOXEL_GRID_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "descriptor/voxel_grid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Groups the n points of xyz_dev (device, n x 3, n <= INT_MAX) by voxels of side leaf. The arrays of *grid are
 * allocated here (grip_cuda_alloc, each at least one element) and freed by grip_voxel_grid_cuda_free. Errors as the
 * CPU twin's, the text starting with `what`: GRIP_EINVAL (bad leaf, NULL xyz_dev with n > 0, a point too far out,
 * named); GRIP_ENOMEM (the context stays usable); GRIP_ECUDA; GRIP_EUNSUPPORTED (CPU-only build, or n > INT_MAX).
 * On failure *grid is zeroed. */
grip_status grip_voxel_grid_cuda_build(grip_ctx *ctx, const char *what, const float *xyz_dev, size_t n, float leaf,
                                       grip_voxel_grid *grid);

/* grip_voxel_grid_centroids on the device: xyz_dev (n x 3) -> out_dev (voxels x 3), both device memory. */
grip_status grip_voxel_grid_cuda_centroids(grip_ctx *ctx, const grip_voxel_grid *grid, const float *xyz_dev,
                                           float *out_dev);
/* grip_voxel_grid_mean_normals on the device: normals_dev (n x 4) -> out_dev (voxels x 4). */
grip_status grip_voxel_grid_cuda_mean_normals(grip_ctx *ctx, const grip_voxel_grid *grid, const float *normals_dev,
                                              float *out_dev);
/* grip_voxel_grid_spread on the device: rows_dev (voxels x 4) -> out_dev (n x 4). */
grip_status grip_voxel_grid_cuda_spread(grip_ctx *ctx, const grip_voxel_grid *grid, const float *rows_dev,
                                        float *out_dev);

/* Frees the device arrays of a grid built by grip_voxel_grid_cuda_build and zeroes it; safe on a zeroed grid. */
void grip_voxel_grid_cuda_free(grip_voxel_grid *grid);

#ifdef __cplusplus
}
#endif
#endif
