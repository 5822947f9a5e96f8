/* hough3d.h -- 3D Hough voting grouping, PCL 1.13's Hough3DGrouping (Tombari & Di Stefano 2010).
 *
 * Every model keypoint stores, in its local reference frame, the vector to the model's reference point (the
 * centroid of all model keypoints). A correspondence carries that vector into the scene through the scene
 * keypoint's frame and votes for where the model's reference point lies. The votes fill a 3D grid of cubic bins
 * spanning the votes' bounding box (optionally spread trilinearly over the 8 nearest bins, optionally weighted
 * by 1 - sqdist / max sqdist); each bin at least `threshold` high and not lower than its 6 face neighbours is
 * an instance, made of the correspondences that voted into it. RANSAC (cluster.h, inlier threshold = bin size)
 * then filters each one and gives its pose.
 *
 * Frames are k x 9 floats, rows x, y, z axis (BOARD or SHOT frames); a correspondence whose model or scene
 * frame has a NaN casts no vote. As in PCL the grid has ceil(extent / bin) bins along each axis of the votes'
 * bounding box, so a vote exactly on the box's far face is dropped when the extent is a whole number of bins (and
 * every vote when all share a coordinate). */
#ifndef GRIP_GROUP_HOUGH3D_H
#define GRIP_GROUP_HOUGH3D_H

#include "group/cluster.h"

typedef struct grip_hough3d_params {
    double bin_size;          /* bin edge (m); PCL setHoughBinSize, default 1.0 */
    double threshold;         /* minimum bin value; in [-1, 0) a fraction of the largest bin, below -1 the
                               * largest bin itself; PCL setHoughThreshold, default -1 */
    int use_interpolation;    /* spread each vote over 8 bins; PCL default on */
    int use_distance_weight;  /* weight votes by 1 - sqdist / max sqdist; PCL default off. As in PCL the
                               * maximum is only taken with interpolation on: without it every weight is 1. */
    uint32_t ransac_iterations; /* PCL: 10000 */
    uint32_t seed;            /* RANSAC seed (cluster.h); 12345 draws PCL's samples */
    uint32_t ransac_rounds;   /* consensus sets drawn from each bin (grip_clusters_ransac); PCL: 1 */
} grip_hough3d_params;

/* PCL's defaults: bin 1.0, threshold -1, interpolation on, distance weight off, 10000 iterations, seed 12345,
 * one consensus set a bin. */
grip_hough3d_params grip_hough3d_params_default(void);

/* The correspondences a consensus set after a bin's first needs (grip_ransac_params.min_extra): as many as a bin
 * needs votes when the threshold is a count (each vote weighs at most 1), else none beyond RANSAC's 3. */
uint32_t grip_hough3d_min_extra(const grip_hough3d_params *params);

/* The RANSAC that filters the maxima (grip_hough3d_cluster: grip_hough3d_vote, then grip_clusters_ransac with it). */
grip_ransac_params grip_hough3d_ransac_params(const grip_hough3d_params *params);

/* The Hough maxima before RANSAC, in increasing bin order: members are the correspondences that voted into the
 * bin (in correspondence order), votes the bin's value, poses the identity. *out is malloc'd (free with
 * grip_clusters_free(*out, *n_out)). No correspondences, or no vote cast, give no clusters. Unlike PCL, a bin
 * nobody voted into is never an instance (PCL reports such empty bins when the threshold is <= 0). */
grip_status grip_hough3d_vote(grip_ctx *ctx, const grip_hough3d_params *params, const float *model_kp_xyz,
                              const float *model_rf, size_t n_model_kp, const float *scene_kp_xyz,
                              const float *scene_rf, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                              grip_cluster **out, size_t *n_out);

/* The maxima filtered by RANSAC, with their poses (model -> scene). Same ownership as above. */
grip_status grip_hough3d_cluster(grip_ctx *ctx, const grip_hough3d_params *params, const float *model_kp_xyz,
                                 const float *model_rf, size_t n_model_kp, const float *scene_kp_xyz,
                                 const float *scene_rf, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                                 grip_cluster **out, size_t *n_out);

/* What both backends share (hough3d_math.h has the arithmetic): the checks of grip_hough3d_vote's arguments
 * (*out and *n_out are not touched), and the grid over the votes' box lo..hi (GRIP_EINVAL, naming
 * group.hough3d.bin_size, when it would have too many bins). */
struct grip_hough3d_grid;
grip_status grip_hough3d_check_inputs(grip_ctx *ctx, const grip_hough3d_params *params, const float *model_kp_xyz,
                                      const float *model_rf, size_t n_model_kp, const float *scene_kp_xyz,
                                      const float *scene_rf, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                                      grip_cluster **out, size_t *n_out);
grip_status grip_hough3d_grid_make(grip_ctx *ctx, const double lo[3], const double hi[3], double bin,
                                   struct grip_hough3d_grid *g);

#endif
