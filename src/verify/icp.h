/* icp.h -- point-to-point ICP of a model cloud against the scene (the CPU twin of the `icp` verifier), then a
 * verdict: the fraction of model points the scene explains under the refined pose, and their RMSE.
 *
 * The loop is PCL 1.13's IterativeClosestPoint with its default estimators and DefaultConvergenceCriteria:
 * each iteration pairs every (transformed) model point with its nearest scene point, drops pairs farther apart
 * than max_correspondence_distance (squared distance > its square), stops when fewer than 3 pairs remain, fits the
 * rigid update by SVD and composes it onto the pose. After the update it stops when (in this order)
 *   1. the iteration count reaches max_iterations;
 *   2. the update is small: cos(angle) >= rotation threshold and squared translation <= transformation_epsilon;
 *   3. the pairs' mean squared distance (measured before the update) changed by less than 1e-12 (absolute);
 *   4. it changed by a fraction below euclidean_fitness_epsilon of its previous value.
 * Unlike PCL, the model is re-transformed from its original coordinates by the composed pose in double each
 * iteration (PCL transforms its float copy incrementally). */
#ifndef GRIP_VERIFY_ICP_H
#define GRIP_VERIFY_ICP_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "spatial/kdtree3d.h"

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
} grip_icp_params;

/* Why the refinement stopped. */
typedef enum grip_icp_stop {
    GRIP_ICP_STOP_ITERATIONS = 0,          /* max_iterations reached (PCL counts this as converged) */
    GRIP_ICP_STOP_TRANSFORM = 1,           /* the update became small */
    GRIP_ICP_STOP_ABSOLUTE_MSE = 2,        /* the mean squared pair distance stopped changing (1e-12) */
    GRIP_ICP_STOP_RELATIVE_MSE = 3,        /* ... by more than euclidean_fitness_epsilon of itself */
    GRIP_ICP_STOP_FEW_CORRESPONDENCES = 4  /* fewer than 3 pairs: the pose reached so far is kept and scored */
} grip_icp_stop;

typedef struct grip_icp_result {
    double pose[16];     /* refined pose, row-major 4x4, model -> scene */
    uint32_t iterations; /* updates applied */
    uint32_t stop;       /* grip_icp_stop */
    size_t n_points;     /* model points used: the finite points, or one per voxel */
    size_t n_inliers;    /* of those, the ones with a scene point within inlier_distance under the final pose */
    double fitness;      /* n_inliers / n_points (0 when n_points == 0) */
    double rmse;         /* sqrt(mean squared distance of the inliers to their nearest scene point); +inf if none */
    uint32_t accepted;   /* fitness >= min_fitness && rmse <= max_rmse */
} grip_icp_result;

/* GRIP_ECONFIG naming the field ("verify.<name>") when a parameter is out of range. */
grip_status grip_icp_params_check(grip_ctx *ctx, const grip_icp_params *params);

/* Refines init_pose (row-major 4x4, model -> scene) of the model (model_xyz: n_model x 3; non-finite points are
 * ignored) against the scene, whose points scene_xyz are indexed by scene_tree (ids of the tree are rows of
 * scene_xyz), and scores the result. Writes *out only on success. Errors: GRIP_EINVAL / GRIP_ECONFIG for bad
 * arguments or parameters, GRIP_ENOMEM, and whatever grip_rigid_fit reports (GRIP_ELAPACK). */
grip_status grip_icp_refine(grip_ctx *ctx, const grip_icp_params *params, const float *model_xyz, size_t n_model,
                            const grip_kdtree3d *scene_tree, const float *scene_xyz, const double init_pose[16],
                            grip_icp_result *out);

#endif
