/* normals_orientation.h -- how the normals a stage computes are oriented, written once for the stages that compute
 * them: the descriptor front (descriptor.model_normals, stages/descriptor_front.h) and the icp verify stage
 * (verify.model_normals). Scenes always keep their viewpoint; a model cloud follows the stage's `model_normals`:
 *
 *   viewpoint  flipped toward the cloud's viewpoint, as PCL (partial views, whose sensor saw what they hold);
 *   outward    away from the centroid of the finite points: flipped toward it (grip_normals_centroid as the
 *              viewpoint), then turned around (grip_normals_turn_around) -- convex-ish complete models;
 *   propagate  outward, then made consistent along the surface (descriptor/normals_propagate.h: each component
 *              seeded at its point farthest from the centroid, breadth first over the symmetric kNN graph of
 *              propagate_k neighbours, signed by its points' vote) -- complete models with limbs and inner corners.
 * Every step is exact or shared with the GPU twin, so the two backends agree as they do for any viewpoint; normals a
 * cloud carries are used as given (stages/normals_choice.h) and never pass through here. */
#ifndef GRIP_STAGES_NORMALS_ORIENTATION_H
#define GRIP_STAGES_NORMALS_ORIENTATION_H

#include "descriptor/normals_propagate_math.h"
#include "spatial/kdtree3d.h"
#include "spatial/neighborhood_cuda.h"
#include "stages/cloud_input.h"

typedef enum grip_model_normals {
    GRIP_MODEL_NORMALS_VIEWPOINT = 0,
    GRIP_MODEL_NORMALS_OUTWARD = 1,
    GRIP_MODEL_NORMALS_PROPAGATE = 2
} grip_model_normals;

/* The `model_normals` key's choices (in grip_model_normals order) and the part of its help they share. */
#define GRIP_MODEL_NORMALS_CHOICES "viewpoint|outward|propagate"
#define GRIP_MODEL_NORMALS_HELP                                                                               \
    "viewpoint = toward the cloud's viewpoint as PCL, outward = away from the centroid (complete 360-degree " \
    "models), propagate = outward made consistent along the surface (complete models with limbs)"

/* The `propagate_k` key of the stages that have `model_normals`: the graph's neighbours per point. 15 by
 * bench_normal_orientation (docs/evaluation.md): at 10 the happy Buddha keeps 16 % and the xyzrgb dragon 26 % inward
 * (one component each: fewer reliable paths, so poor edges decide larger regions), at 15 1.9 % and 2.3 %; at 20 the
 * catalogue bracket's thin plates get 3.7 % (1.0 % at 15). */
#define GRIP_PARAM_PROPAGATE_K                                                                               \
    {                                                                                                        \
        sizeof(grip_param_info), GRIP_PARAM_INT, "propagate_k", "15", 1, GRIP_NORMALS_PROPAGATE_MAX_K, NULL, \
            "model_normals = propagate: neighbours per point of the graph the orientation spreads over"      \
    }

/* What a cloud's normals are computed and oriented by. */
typedef struct grip_normals_plan {
    uint32_t k;           /* > 0: the k nearest ... */
    float radius;         /* ... else every point within radius */
    uint32_t orientation; /* grip_model_normals (a scene: viewpoint) */
    uint32_t propagate_k; /* propagate: the graph's neighbours per point, 1..GRIP_NORMALS_PROPAGATE_MAX_K */
    float viewpoint[3];   /* computed normals are first flipped toward it: the cloud's viewpoint, or its centroid */
} grip_normals_plan;

/* Fills *p for the cloud in: its viewpoint, or (outward, propagate) the centroid of its finite points. */
void grip_normals_plan_init(grip_normals_plan *p, const grip_cloud_input *in, uint32_t k, float radius,
                            uint32_t orientation, uint32_t propagate_k);

/* The cloud's normals by the CPU twins, oriented: n x 4 into out (caller's). tree: over in->xyz, or NULL. */
grip_status grip_normals_plan_host(grip_ctx *ctx, const grip_normals_plan *p, const grip_cloud_input *in,
                                   const grip_kdtree3d *tree, float *out);

/* The same on the device, into the surface s made of in->xyz (its normals then marked filled): computed there, or
 * -- for a k the GPU does not keep -- by the CPU twin into scratch (caller's host n x 4) and uploaded; oriented
 * there. */
grip_status grip_normals_plan_surface(grip_ctx *ctx, const grip_normals_plan *p, const grip_cloud_input *in,
                                      grip_surface_cuda *s, float *scratch);

/* The same for a cloud with no surface yet: one is made of in->xyz, filled as above, downloaded into out (caller's
 * host n x 4, also the scratch) and freed. */
grip_status grip_normals_plan_cuda(grip_ctx *ctx, const grip_normals_plan *p, const grip_cloud_input *in, float *out);

#endif
