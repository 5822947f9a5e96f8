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
 *   - stages: a round first walks only the edges whose |n_i . n_j| reaches 0.9 (nearly parallel neighbours, a smooth
 *     stretch of surface), then, from everything it has oriented, those reaching 0.7, then 0.4, then any edge
 *     (grip_propagate_stage_accept); in all but the last, only edges along the surface (the step between the points
 *     within about 17 degrees of both tangent planes: grip_propagate_tangent), since across a part thinner than the
 *     neighbourhood the normals are as parallel as on a good edge but the wrong way round. An unreliable edge orients
 *     a point only where no reliable path reaches it;
 *   - levels, breadth first within a stage: at level L every point not yet oriented with a neighbour in the frontier
 *     (the points oriented at level L - 1; at a stage's first level, everything the round has oriented) over an edge
 *     the stage accepts follows the one whose normal is most parallel to its own (largest |n_i . n_j|, ties to the
 *     lowest index), turning when n_i . n_j < 0. Within a stage, a point's accepted edge to an older oriented point
 *     would have reached it earlier, so the frontier holds all its candidates, and a level depends only on the
 *     levels before it: the CPU's loop and the GPU's one thread per point per level (the levels apart by kernel
 *     launches) decide alike whatever order they meet candidates in;
 *   - the round's vote: when it reaches no more points, a round whose points face the centroid ((c - p) . n > 0) more
 *     often than not is turned as a whole: the walk makes a component consistent, the outward rule -- right on most
 *     of a complete model, wrong where the seed's tip may be too sharp for a good normal -- picks its sign;
 *   - the next round seeds itself among the points left: each connected component of the graph is oriented on its
 *     own (seeded at its point farthest from the whole cloud's centroid, its sign by its own vote).
 * Every change is a sign change of nx, ny, nz (curvature kept), so given equal normals both twins give equal bits.
 *
 * Why breadth first and not Hoppe's minimum spanning tree (PCL's and Open3D's orient_normals_consistent_tangent_plane
 * walk the tree of the largest |n_i . n_j|): Prim's order is inherently sequential (one point per step), which on the
 * GPU means one launch or one grid barrier per point. The staged breadth-first walk keeps Hoppe's preferences -- the
 * most parallel oriented neighbour within a level, reliable edges before poor ones across stages -- at one level per
 * graph hop per stage, deterministic on both sides; what it gives up is the exact order within a stage's band of
 * |n_i . n_j| (without the stages, the catalogue blob kept 3.8 % inward, with them 0.13 %; docs/evaluation.md
 * measures the result against the models' truth). */
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
