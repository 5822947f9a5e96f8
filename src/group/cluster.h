/* cluster.h -- what the grouping stage works on and returns: correspondences between model and scene
 * keypoints, clusters of them (instance hypotheses), and each cluster's pose.
 *
 * The pose of a cluster is found as PCL 1.13 finds it (CorrespondenceRejectorSampleConsensus, which both
 * Hough3DGrouping and GeometricConsistencyGrouping run on every cluster): RANSAC over 3-correspondence rigid
 * fits, reproduced draw for draw -- a Mersenne Twister restarted from `seed` (PCL: 12345) for every cluster,
 * PCL's index shuffle, its sample-spread test and its adaptive stop (p = 0.99). The pose is the best sample's
 * fit, not refit on the inliers: PCL does not refine (its rejector's refine flag is off). */
#ifndef GRIP_GROUP_CLUSTER_H
#define GRIP_GROUP_CLUSTER_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

/* One correspondence: keypoint numbers in the model's and the scene's keypoint lists, and the squared
 * descriptor distance (PCL's Correspondence::distance). */
typedef struct grip_corr {
    uint32_t scene, model;
    float sqdist;
} grip_corr;

/* An instance hypothesis. members index the correspondence array the grouping was given (malloc'd, owned by
 * the cluster); pose is row-major 4x4 mapping model coordinates to scene coordinates; votes is what found the
 * cluster (the Hough bin's value, or the geometric-consistency set size before RANSAC). */
typedef struct grip_cluster {
    uint32_t *members;
    uint32_t n_members;
    double pose[16];
    double votes;
} grip_cluster;

/* Frees the members of n clusters and the array itself (which the grouping functions malloc). NULL is fine. */
void grip_clusters_free(grip_cluster *clusters, size_t n);

/* PCL's CorrespondenceRejectorSampleConsensus settings as the grouping classes use them. */
#define GRIP_RANSAC_PCL_ITERATIONS 10000u
#define GRIP_RANSAC_PCL_SEED 12345u

typedef struct grip_ransac_params {
    double inlier_threshold; /* a correspondence is an inlier when |pose * model - scene| < this (m) */
    uint32_t max_iterations; /* PCL: 10000 */
    uint32_t seed;           /* mt19937 seed, restarted for every cluster and round; 12345 draws PCL's samples */
    uint32_t rounds;         /* consensus sets drawn from each cluster, at least 1; PCL: 1 (see grip_clusters_ransac) */
    uint32_t min_extra;      /* correspondences a set after the first needs to be kept */
} grip_ransac_params;

/* Checks the shared inputs of the grouping functions: arrays present, every correspondence's keypoint numbers
 * within n_model_kp / n_scene_kp. `stage` names the caller in the error text. */
grip_status grip_corr_check(grip_ctx *ctx, const char *stage, const grip_corr *corr, size_t n_corr,
                            const float *model_kp_xyz, size_t n_model_kp, const float *scene_kp_xyz, size_t n_scene_kp);

/* Runs RANSAC on the cluster's members (a consensus set) and replaces them by the inliers, in member order, and
 * sets the pose. As in PCL, when no model is found (fewer than 3 members, or no well-spread sample) or fewer
 * than 3 inliers remain, the members stay as they are and the pose is the identity.
 * One deliberate difference: PCL maps each inlier back to a correspondence through its model keypoint, so when
 * two members share a model keypoint it reports the last of them (possibly twice, possibly not the inlier). Here
 * the inliers are the members themselves. The samples still pair a model keypoint with the last member's scene
 * keypoint, as PCL's do, so that the same draws give the same pose. */
grip_status grip_cluster_ransac(grip_ctx *ctx, const grip_ransac_params *params, const float *model_kp_xyz,
                                const float *scene_kp_xyz, const grip_corr *corr, grip_cluster *cluster);

/* grip_cluster_ransac on each of the *n clusters of *clusters (malloc'd, as the grouping functions make them).
 * With params->rounds > 1, a cluster may hold more than one rigid motion: a symmetric or repetitive object whose
 * correspondences agree on where it is but not on how it is turned (a mug's body votes for its centre from every
 * angle, and only the handle's correspondences fix the angle). One consensus set is then one guess; so RANSAC runs
 * again on the members no earlier set of that cluster took, up to `rounds` sets in all, and each further set with
 * at least min_extra (and 3) inliers becomes a cluster of its own, right after the one it came from, with votes
 * scaled by its size against the first set's. Verification chooses among them. rounds = 1 is PCL's behaviour.
 * The clusters run in parallel on ctx's CPU threads (grip_ctx_threads); the result is the same for any thread
 * count. The array may be reallocated: *clusters and *n are updated. On failure (the first failing cluster's, in
 * cluster order) every cluster is freed and *clusters, *n are set to NULL, 0. */
grip_status grip_clusters_ransac(grip_ctx *ctx, const grip_ransac_params *params, const float *model_kp_xyz,
                                 const float *scene_kp_xyz, const grip_corr *corr, grip_cluster **clusters, size_t *n);

/* Sets a row-major 4x4 to the identity. */
void grip_pose_identity(double pose[16]);

#endif
