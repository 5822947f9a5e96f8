/* icp.h -- ICP of a model cloud against the scene, point-to-point or point-to-plane (the CPU twin of the `icp`
 * verifier and of its batched kernels, icp_cuda.h), then a verdict: the fraction of the model points the scene's
 * sensor could see that the scene explains under the refined pose, and their RMSE.
 *
 * The loop is PCL 1.13's IterativeClosestPoint with its default estimators and DefaultConvergenceCriteria
 * (point-to-plane: IterativeClosestPointWithNormals' TransformationEstimationPointToPlaneLLS): each iteration
 * pairs every (transformed) model point with its nearest scene point, drops pairs farther apart than the
 * iteration's correspondence distance (squared distance > its square), stops when fewer than 3 pairs remain, fits
 * the rigid update (icp_math.h: Horn's quaternion for point-to-point, the same optimum as PCL's SVD; PCL's linear
 * least squares for point-to-plane) and composes it onto the pose. After the update it stops when (in this order)
 *   1. the iteration count reaches max_iterations;
 *   2. the update is small: cos(angle) >= rotation threshold and squared translation <= transformation_epsilon;
 *   3. the pairs' mean squared distance (measured before the update) changed by less than 1e-12 (absolute);
 *   4. it changed by a fraction below euclidean_fitness_epsilon of its previous value.
 * Unlike PCL, the model is re-transformed from its original coordinates by the composed pose in double each
 * iteration (PCL transforms its float copy incrementally).
 *
 * The correspondence-distance schedule: with final_correspondence_distance f in (0, max_correspondence_distance m)
 * the bound of iteration k (0-based) of K = max_iterations is m (f/m)^(k/(K-1)), from m at the first iteration
 * to f at the last (grip_icp_correspondence_distance): wide enough to pull a poor start in, tight at the end so
 * that clutter and the far side of thin parts stop pulling. f = 0 keeps m throughout (PCL).
 *
 * Visible fitness: when the model has normals, a model point is scored only if, under the final pose, its normal
 * faces the scene's viewpoint (the sensor origin): the hidden side of an object can never be explained and would
 * cap the fitness of every true instance at its visible fraction. */
#ifndef GRIP_VERIFY_ICP_H
#define GRIP_VERIFY_ICP_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "spatial/kdtree3d.h"

/* The metrics (grip_icp_params.metric; the arithmetic of each is in icp_math.h). */
#define GRIP_ICP_POINT_TO_POINT 0u
#define GRIP_ICP_POINT_TO_PLANE 1u

typedef struct grip_icp_params {
    uint32_t max_iterations;            /* refinement iterations at most; 0 scores the initial pose as is */
    double max_correspondence_distance; /* > 0: pairs farther apart are rejected in each iteration (cloud units) */
    double transformation_epsilon;      /* >= 0: the update is small when its squared translation is <= this ... */
    double rotation_epsilon;            /* ... and cos(its rotation angle) >= this when > 0 (PCL's
                                           transformation_rotation_epsilon), else >= 1 - transformation_epsilon */
    double euclidean_fitness_epsilon;   /* >= 0: relative change of the pairs' mean squared distance that stops it;
                                           0 = off (PCL's default, -DBL_MAX, never stops either) */
    double voxel_leaf;                  /* > 0: the model is first thinned to one point per voxel; 0: every point */
    double inlier_distance;             /* > 0: a model point is an inlier when a scene point lies within this */
    double min_fitness;                 /* accepted when fitness >= min_fitness ... */
    double max_rmse;                    /* ... and rmse <= max_rmse */
    uint32_t metric;                    /* GRIP_ICP_POINT_TO_POINT (0) or GRIP_ICP_POINT_TO_PLANE (icp_math.h;
                                           needs scene normals) */
    double final_correspondence_distance; /* 0: the bound stays max_correspondence_distance; in (0, max]: the
                                             bound shrinks to this over the iterations (see above) */
} grip_icp_params;

/* Why the refinement stopped. */
typedef enum grip_icp_stop {
    GRIP_ICP_STOP_ITERATIONS = 0,          /* max_iterations reached (PCL counts this as converged) */
    GRIP_ICP_STOP_TRANSFORM = 1,           /* the update became small */
    GRIP_ICP_STOP_ABSOLUTE_MSE = 2,        /* the mean squared pair distance stopped changing (1e-12) */
    GRIP_ICP_STOP_RELATIVE_MSE = 3,        /* ... by more than euclidean_fitness_epsilon of itself */
    GRIP_ICP_STOP_FEW_CORRESPONDENCES = 4, /* fewer than 3 pairs: the pose reached so far is kept and scored */
    GRIP_ICP_STOP_DEGENERATE = 5           /* the update was not finite: the pose reached so far is kept */
} grip_icp_stop;

typedef struct grip_icp_result {
    double pose[16];     /* refined pose, row-major 4x4, model -> scene */
    uint32_t iterations; /* updates applied */
    uint32_t stop;       /* grip_icp_stop */
    size_t n_points;     /* model points scored: of the points ICP used (the finite points, or one per voxel),
                            those facing the viewpoint under the final pose (all of them without model normals) */
    size_t n_inliers;    /* of those, the ones with a scene point within inlier_distance under the final pose */
    double fitness;      /* n_inliers / n_points (0 when n_points == 0) */
    double rmse;         /* sqrt(mean squared distance of the inliers to their nearest scene point); +inf if none */
    uint32_t accepted;   /* fitness >= min_fitness && rmse <= max_rmse */
} grip_icp_result;

/* GRIP_ECONFIG naming the field ("verify.<name>") when a parameter is out of range. */
grip_status grip_icp_params_check(grip_ctx *ctx, const grip_icp_params *params);

/* The correspondence distance of iteration `iteration` (0-based) under the schedule above. */
double grip_icp_correspondence_distance(const grip_icp_params *params, uint32_t iteration);

/* The scene as ICP reads it (all borrowed). */
typedef struct grip_icp_scene {
    const grip_kdtree3d *tree; /* over xyz: ids of the tree are rows of xyz */
    const float *xyz;          /* rows of 3 floats */
    const float *normals;      /* NULL, or one row of normal_stride floats per xyz row (NaN where undefined);
                                  point-to-plane needs them (pairs whose scene normal is not finite are dropped) */
    size_t normal_stride;      /* 3 or 4 */
    double viewpoint[3];       /* the sensor origin, for visible fitness */
} grip_icp_scene;

/* A model as ICP reads it (all borrowed). */
typedef struct grip_icp_model {
    const float *xyz;          /* n x 3; non-finite points are ignored */
    size_t n;
    const float *normals;      /* NULL (every point is scored), or one row of normal_stride floats per point */
    size_t normal_stride;      /* 3 or 4 */
} grip_icp_model;

/* The points ICP works on: the finite model points, or one per voxel of side voxel_leaf (> 0), and their normals.
 * *xyz (count x 3) and, when the model has normals, *normals (count x 3; else NULL) are malloc'd here; the caller
 * frees both. */
grip_status grip_icp_model_points(grip_ctx *ctx, double voxel_leaf, const grip_icp_model *model, float **xyz,
                                  float **normals, size_t *count);

/* The points ICP works on, as grip_icp_model_points made them (all borrowed): count x 3, normals count x 3 or NULL
 * (every point is scored). A caller refining one model many times (the icp stage, its prepared models cached
 * across calls: stages/verify_model_cache.h) makes them once. */
typedef struct grip_icp_points {
    const float *xyz;
    const float *normals;
    size_t count;
} grip_icp_points;

/* Refines init_pose (row-major 4x4, model -> scene) of the model against the scene and scores the result. Writes
 * *out only on success. Errors: GRIP_EINVAL / GRIP_ECONFIG for bad arguments or parameters (point-to-plane
 * without scene normals), GRIP_ENOMEM. */
grip_status grip_icp_refine_scene(grip_ctx *ctx, const grip_icp_params *params, const grip_icp_model *model,
                                  const grip_icp_scene *scene, const double init_pose[16], grip_icp_result *out);

/* grip_icp_refine_scene of the model whose ICP points (params->voxel_leaf applied) are given: the same result,
 * bit for bit, as grip_icp_refine_scene of the model they were made from. */
grip_status grip_icp_refine_points(grip_ctx *ctx, const grip_icp_params *params, const grip_icp_points *points,
                                   const grip_icp_scene *scene, const double init_pose[16], grip_icp_result *out);

/* grip_icp_refine_scene of a model without normals (every point scored) against a scene without normals (so
 * point-to-point only), whose points scene_xyz are indexed by scene_tree. */
grip_status grip_icp_refine(grip_ctx *ctx, const grip_icp_params *params, const float *model_xyz, size_t n_model,
                            const grip_kdtree3d *scene_tree, const float *scene_xyz, const double init_pose[16],
                            grip_icp_result *out);

#endif
