/* pose_nms.h -- non-maximum suppression of pose hypotheses: among the accepted hypotheses of one model, one whose
 * pose moves the model's points to within `duplicate_distance` of where a better-scored accepted hypothesis places
 * them, or (center_distance > 0) puts the points' centre within `center_distance` of where that one puts it, is a
 * duplicate of it, and is rejected. The second test is for objects turned about an axis of near symmetry: two
 * poses of one mug that differ by its angle about its axis move its points far (beyond duplicate_distance), yet
 * describe one mug in one place, since two objects cannot stand in the same place.
 *
 * The distance between two poses A and B of a model is the root mean square displacement of its points,
 * sqrt(mean_i |A p_i - B p_i|^2), which the points' mean and covariance give in closed form (O(1) per pair):
 * with D = R_A - R_B and d = t_A - t_B, mean_i |D p_i + d|^2 = trace(D C D^T) + |D mean + d|^2. */
#ifndef GRIP_VERIFY_POSE_NMS_H
#define GRIP_VERIFY_POSE_NMS_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "spatial/kdtree3d.h"

/* The spread of a model's finite points: enough to measure how far apart two poses put them. */
typedef struct grip_model_spread {
    double mean[3];
    double covariance[9]; /* row-major, mean of (p - mean)(p - mean)^T */
    size_t n;             /* finite points; 0 leaves mean and covariance zero */
} grip_model_spread;

void grip_model_spread_compute(const float *xyz, size_t n, grip_model_spread *out);

/* sqrt(mean over the model's points of |A p - B p|^2), for row-major 4x4 poses a and b. */
double grip_pose_rms_displacement(const grip_model_spread *spread, const double a[16], const double b[16]);

/* |A mean - B mean|: how far apart the two poses put the points' centre. */
double grip_pose_center_distance(const grip_model_spread *spread, const double a[16], const double b[16]);

/* Greedy suppression over h hypotheses: poses (h x 16, row-major), model_id (h; each < n_models, indexing
 * spreads), scores (h, higher is better; ties go to the lower hypothesis). accepted (h, in/out): visiting the
 * accepted hypotheses best first, each one within duplicate_distance (<=) of an already kept one of the same
 * model (or, center_distance > 0, whose centre lies within center_distance of its) gets accepted = 0.
 * duplicate_of (h, optional) receives the kept hypothesis it duplicates, else UINT32_MAX.
 * GRIP_EINVAL for a NaN score, an out-of-range model id, a negative distance or NULL arrays; GRIP_ENOMEM.
 * Nothing is written on failure. */
grip_status grip_suppress_duplicates(grip_ctx *ctx, const grip_model_spread *spreads, uint32_t n_models,
                                     const uint32_t *model_id, const double *poses, const double *scores, size_t h,
                                     double duplicate_distance, double center_distance, uint32_t *accepted,
                                     uint32_t *duplicate_of);

/* One model's points for the overlap test (borrowed). The test asks a tree over the model's points, in the model's
 * own frame, for the points of other poses brought into that frame: a caller that tests the same models again and
 * again (a verify stage's model cache) builds it once and passes it; NULL makes the test build one for the call. */
typedef struct grip_model_points {
    const float *xyz; /* n x 3, NaN rows skipped */
    size_t n;
    const grip_kdtree3d *tree; /* over xyz, or NULL */
} grip_model_points;

/* Greedy suppression by shared space, over every model at once: visiting the accepted hypotheses best first (as
 * grip_suppress_duplicates), one whose model points (points[model_id], moved by its pose) lie, for more than
 * max_overlap of them, within `distance` of the points of hypotheses already kept gets accepted = 0: two objects
 * cannot fill the same space. A flipped L bracket that shares its upright with the real one, or a second pose of
 * one object, is caught whatever its model; objects that only touch share a few points. overlap_of (h, optional)
 * receives the kept hypothesis it shares most points with, else UINT32_MAX. max_overlap >= 1 suppresses nothing.
 * The poses are rigid: a point is brought into a kept pose's model frame by the pose's inverse, R^T (p - t).
 * GRIP_EINVAL for a NaN score, an out-of-range model id, a distance that is not finite and > 0, a max_overlap
 * outside [0, 1] or NULL arrays; GRIP_ENOMEM. Nothing is written on failure. */
grip_status grip_suppress_overlaps(grip_ctx *ctx, const grip_model_points *points, uint32_t n_models,
                                   const uint32_t *model_id, const double *poses, const double *scores, size_t h,
                                   double distance, double max_overlap, uint32_t *accepted, uint32_t *overlap_of);

#endif
