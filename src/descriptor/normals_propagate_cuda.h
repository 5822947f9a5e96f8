/* normals_propagate_cuda.h -- the GPU twin of grip_normals_propagate (normals_propagate.h): the same walk over the
 * same symmetric kNN graph, on a device-resident cloud's normals, bit for bit the CPU twin's given the same normals.
 *
 * The graph comes from the surface's exact k + 1 nearest (grip_neighborhoods_cuda_knn: the CPU's set, ties to the
 * lower index). Each level is two launches over every point, apart by the launch boundary (which orders the first's
 * writes before the second's reads): the first offers each point not yet oriented its frontier neighbours over the
 * edges the stage accepts (pulled from its own list, pushed from theirs) by 64-bit atomicMax on the edge key
 * (normals_propagate_math.h: an integer maximum, the same whatever the order), the second orients the points that
 * got an offer and counts them; the host reads the count after each level and ends a stage at 0; the round's vote is
 * two integer counts (atomicAdd), read by the host, which then turns the round or not; the next round is seeded by an
 * atomicMax over the seed keys. Device normals that differ from the CPU's within
 * normals_cuda.h's tolerance decide alike except where an edge is nearly perpendicular (|n_i . n_j| near 0) or two
 * neighbours nearly tie: tests/gpu/test_normals_propagate_cuda.c measures the agreement of the full path.
 * A CPU-only build links src/no_cuda.c, which fails with GRIP_EUNSUPPORTED. */
#ifndef GRIP_DESCRIPTOR_NORMALS_PROPAGATE_CUDA_H
#define GRIP_DESCRIPTOR_NORMALS_PROPAGATE_CUDA_H

#include <stdint.h>
#include "core/ctx.h"
#include "spatial/neighborhood_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Orients the surface s's normals (view.normals, filled) in place as grip_normals_propagate does with k neighbours
 * (1 <= k <= GRIP_NORMALS_PROPAGATE_MAX_K) and the seeds' reference centroid (host, 3 floats). Working memory is
 * allocated and freed here. Fails with GRIP_EINVAL on a NULL surface, one without normals or k out of range,
 * GRIP_ENOMEM when device memory is short (the normals are then left as they were), GRIP_ECUDA when a CUDA call
 * fails, GRIP_EUNSUPPORTED on a CPU-only build. Synchronous. */
grip_status grip_normals_cuda_propagate(grip_ctx *ctx, grip_surface_cuda *s, uint32_t k, const float centroid[3]);

#ifdef __cplusplus
}
#endif
#endif
