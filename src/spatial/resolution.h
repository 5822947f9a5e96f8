/* resolution.h -- a cloud's resolution: the mean distance from each finite point to its nearest other point, in
 * the cloud's unit. One definition for every user: GHV's derived lengths (verify/ghv.h) and the lengths a host
 * writes as multiples of it ("20 mr", grip_plugin.cloud_resolution). The mean, not the median, because GHV (after
 * PCL) has always used the mean. A point that coincides with another counts with distance 0. */
#ifndef GRIP_SPATIAL_RESOLUTION_H
#define GRIP_SPATIAL_RESOLUTION_H

#include <stddef.h>
#include "core/ctx.h"

/* The mean of sqrt(sqdist[i * stride + 1]) over the rows where it is finite: the resolution from 2-nearest lists
 * whose first entry is the point itself (as the CPU kd-tree and the GPU search give them); 0 when no row is.
 * Summed on up to `threads` threads in GRIP_SPACING_BLOCKS fixed blocks of rows, added in block order: the same
 * bits whatever the thread count, so both backends, which call this on the same lists, agree. */
#define GRIP_SPACING_BLOCKS 64
double grip_mean_spacing(const float *sqdist, size_t rows, size_t stride, int threads);

/* The resolution of xyz (n x 3 host, NaN rows allowed), measured with a kd-tree on the CPU; *out is 0 when the
 * cloud has fewer than two finite points. Errors: GRIP_ENOMEM. Allocates nothing that outlives the call. */
grip_status grip_cloud_resolution_measure(grip_ctx *ctx, const float *xyz, size_t n, double *out);

#endif
