/* voxel_grid.h -- a cloud downsampled to one point per occupied cubic voxel, at the centroid of the voxel's points:
 * PCL 1.13's VoxelGrid (filters/impl/voxel_grid.hpp) with one leaf on every axis, as TEASER++'s and Open3D's FPFH
 * pipelines thin a cloud before describing it. The descriptor front uses it for the support surface
 * (`support_leaf`, stages/descriptor_front.h). CPU twin here (voxel_grid.c); the GPU twin is voxel_grid_cuda.h,
 * with the same result bit for bit.
 *
 * As PCL: non-finite points are skipped; a point's voxel is floor(x / leaf) per axis as voxel_key.h computes it;
 * each occupied voxel gives one point, the centroid of its points. Differences from PCL, on purpose, so that both
 * backends agree bit for bit: each centroid is summed in double over the voxel's points in cloud order, divided by
 * their count, then rounded to float (PCL sums in float in the order of an unstable sort); the voxels come ordered
 * by (i, j, k) lexicographically, x first (PCL: by its flattened index, z first), the order the GPU's sort gives
 * (cuda/descriptor/voxel_sort.cuh); a point too far out for an int voxel coordinate is an error (PCL warns when the
 * flattened index would overflow and returns the cloud unchanged); no minimum of points per voxel.
 *
 * The grid is kept as the points grouped by voxel, so that more than the coordinates can be averaged over it (the
 * cloud's own normals) and each point can take its voxel's row back (grip_voxel_grid_spread). */
#ifndef GRIP_DESCRIPTOR_VOXEL_GRID_H
#define GRIP_DESCRIPTOR_VOXEL_GRID_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

#define GRIP_VOXEL_NONE UINT32_MAX /* voxel_of of a non-finite point */

/* The points grouped by voxel. The arrays live in host memory here (grip_voxel_grid_build) or in the context's
 * device memory (grip_voxel_grid_cuda_build); each side frees its own. */
typedef struct grip_voxel_grid {
    size_t n;           /* points of the cloud */
    size_t voxels;      /* occupied voxels */
    size_t finite;      /* finite points = start[voxels] */
    uint32_t *order;    /* finite entries: point indices, voxel by voxel in the order above, each in cloud order */
    uint32_t *start;    /* voxels + 1 entries: voxel v's points are order[start[v], start[v + 1]) */
    uint32_t *voxel_of; /* n entries: the voxel of each point, GRIP_VOXEL_NONE for a non-finite one */
} grip_voxel_grid;

/* Groups the n points xyz (n x 3 host floats, NaN rows allowed, n < UINT32_MAX) by voxels of side leaf. The arrays
 * of *grid are malloc'd here (each at least one element) and freed by grip_voxel_grid_free. Errors, the text
 * starting with `what` (the caller's key, e.g. "descriptor.support_leaf"): GRIP_EINVAL for a bad leaf (not finite,
 * <= 0), too many points, or a point whose voxel coordinate does not fit in an int (named); GRIP_ENOMEM. On failure
 * *grid is zeroed. */
grip_status grip_voxel_grid_build(grip_ctx *ctx, const char *what, const float *xyz, size_t n, float leaf,
                                  grip_voxel_grid *grid);

/* The voxels' centroids into out (grid->voxels x 3 floats, caller's): summed in double in the voxel's order,
 * divided by the count, rounded to float. xyz: the cloud the grid was built over. */
void grip_voxel_grid_centroids(const grip_voxel_grid *grid, const float *xyz, float *out);

/* The voxels' mean normals into out (grid->voxels x 4, caller's) from the points' normals (n x 4: nx ny nz
 * curvature): the sum of the finite normals of the voxel's points in double, in its order, scaled to unit length
 * (sqrt of the double sum of squares); the curvature their mean. A NaN row where no finite normal sums to a
 * non-zero vector. The cloud's own normals (unit length) become the support cloud's this way. */
void grip_voxel_grid_mean_normals(const grip_voxel_grid *grid, const float *normals, float *out);

/* Each point's row of its voxel (rows: grid->voxels x 4) into out (grid->n x 4, caller's); a NaN row for a
 * non-finite point. */
void grip_voxel_grid_spread(const grip_voxel_grid *grid, const float *rows, float *out);

/* Frees the host arrays of a grid built by grip_voxel_grid_build and zeroes it; safe on a zeroed grid. */
void grip_voxel_grid_free(grip_voxel_grid *grid);

#endif
