/* gc.h -- geometric-consistency grouping, PCL 1.13's GeometricConsistencyGrouping.
 *
 * Correspondences are visited by increasing descriptor distance. Each one not yet taken seeds a consensus set;
 * every other untaken correspondence (in the same order) joins when, for every member k already in the set,
 * | |s_k - s_j| - |m_k - m_j| | <= size (keypoint distances in the scene and in the model agree). A set with
 * more than `threshold` members is kept and its correspondences are taken; then RANSAC (cluster.h, inlier
 * threshold = size) filters it and gives its pose. */
#ifndef GRIP_GROUP_GC_H
#define GRIP_GROUP_GC_H

#include "group/cluster.h"

typedef struct grip_gc_params {
    double size;             /* consensus tolerance on distances (m); PCL setGCSize, default 1.0 */
    int threshold;           /* a set is kept when it has MORE members than this; PCL setGCThreshold, default 3 */
    uint32_t ransac_iterations; /* PCL: 10000 */
    uint32_t seed;           /* RANSAC seed (cluster.h); 12345 draws PCL's samples */
    uint32_t ransac_rounds;  /* consensus sets drawn from each set (grip_clusters_ransac); PCL: 1 */
} grip_gc_params;

/* PCL's defaults: size 1.0, threshold 3, 10000 RANSAC iterations, seed 12345, one RANSAC set a consistent set. */
grip_gc_params grip_gc_params_default(void);

/* The consensus sets, before RANSAC: members in the order they joined, votes = set size, identity poses.
 * *out is malloc'd (free with grip_clusters_free(*out, *n_out)); no correspondences give no clusters.
 * Ties in descriptor distance are visited by correspondence index (PCL's std::sort leaves them unspecified). */
grip_status grip_gc_consensus(grip_ctx *ctx, const grip_gc_params *params, const float *model_kp_xyz, size_t n_model_kp,
                              const float *scene_kp_xyz, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                              grip_cluster **out, size_t *n_out);

/* The consensus sets filtered by RANSAC, with their poses (model -> scene). Same ownership as above. */
grip_status grip_gc_cluster(grip_ctx *ctx, const grip_gc_params *params, const float *model_kp_xyz, size_t n_model_kp,
                            const float *scene_kp_xyz, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                            grip_cluster **out, size_t *n_out);

/* The parameter checks both backends share (GRIP_EINVAL naming group.gc.size). */
grip_status grip_gc_check_params(grip_ctx *ctx, const grip_gc_params *params);

#endif
