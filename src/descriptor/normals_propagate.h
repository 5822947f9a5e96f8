/* normals_propagate.h -- consistent orientation of a complete model's normals by propagation over its surface (the
 * CPU twin; the GPU twin is normals_propagate_cuda.h): descriptor.model_normals = propagate, verify.model_normals =
 * propagate.
 *
 * Why: pointing every normal away from the centroid (model_normals = outward) is right where the direction from the
 * centroid crosses the surface once, and wrong on limbs, tails and inner corners (a fifth to a third of the Stanford
 * dragons and statuette inward, docs/evaluation.md). Neighbouring normals of a smooth surface are nearly parallel,
 * so a sign known at one point can be carried along the surface (Hoppe et al. 1992).
 *
 * The walk, identical on both backends:
 *   - graph: each point with a defined normal (finite; NaN rows take no part and stay NaN) is joined to its k + 1
 *     nearest points (grip_kdtree3d_knn: ties to the lower index; the point itself dropped from its own list), the
 *     edges taken both ways (symmetric kNN graph), between defined normals only;
 *   - seed of a round: of the points not yet oriented, the one farthest from the centroid c (squared distance in
 *     float, ties to the lowest index). The surface there touches the sphere about c through it, so its true normal
 *     points away from c: it is turned when (c - p) . n > 0 (the `outward` rule; normals_propagate_math.h);
 *   - levels, breadth first from the seed: at level L every point not yet oriented with a neighbour oriented at level
 *     L - 1 follows the one whose normal is most parallel to its own (largest |n_i . n_j|, ties to the lowest index),
 *     turning when n_i . n_j < 0. In a symmetric graph every oriented neighbour of such a point was reached at
 *     L - 1 (one reached earlier would have reached it earlier), so this is the most parallel of all its oriented
 *     neighbours, and a level depends only on the levels before it: the CPU's loop and the GPU's one thread per
 *     point per level (the levels apart by kernel launches) decide alike whatever order they meet candidates in;
 *   - when a round reaches no more points, the next seeds itself among those left: each connected component of the
 *     graph is oriented from its own point farthest from the (whole cloud's) centroid, by the outward rule there.
 * Every change is a sign change of nx, ny, nz (curvature kept), so given equal normals both twins give equal bits.
 *
 * Why breadth first and not Hoppe's minimum spanning tree (PCL's and Open3D's orient_normals_consistent_tangent_plane
 * walk the tree of the largest |n_i . n_j|): Prim's order is inherently sequential (one point per step), which on the
 * GPU means one launch or one grid barrier per point. The breadth-first walk keeps Hoppe's local rule (follow the most
 * parallel oriented neighbour) within each level, costs one level per graph hop and is deterministic on both sides;
 * what it gives up is the global order in which an unreliable edge (across a thin part or a sharp crease) may be the
 * first to reach a region (docs/evaluation.md measures the result against the models' truth). */
#ifndef GRIP_DESCRIPTOR_NORMALS_PROPAGATE_H
#define GRIP_DESCRIPTOR_NORMALS_PROPAGATE_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "spatial/kdtree3d.h"

/* Orients normals (n x 4: nx, ny, nz, curvature, in any orientation; NaN rows allowed) of the n points xyz (n x 3)
 * in place, as above. k: neighbours per point, 1 <= k <= GRIP_NORMALS_PROPAGATE_MAX_K (normals_propagate_math.h).
 * centroid: the seeds' reference (grip_normals_centroid of xyz, normals.h). tree: a tree over the same xyz, or NULL
 * to build one here. Errors: GRIP_EINVAL (NULL arrays with n > 0, k out of range), GRIP_ENOMEM (normals are then
 * left as they were). Single-threaded: the walk is O(n k) and much cheaper than the normals themselves. */
grip_status grip_normals_propagate(grip_ctx *ctx, const float *xyz, size_t n, const grip_kdtree3d *tree, uint32_t k,
                                   const float centroid[3], float *normals);

#endif
