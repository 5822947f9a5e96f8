/* ransac_clusters.h -- synthetic input for grip_clusters_ransac's tests and benchmark: the clusters a grouping
 * stage hands its RANSAC on a scene with many objects. Each cluster is one object's correspondences: most under
 * its pose, in a third of the clusters also under one or two other poses (a symmetric object's bin, whose
 * correspondences agree on where it is but not on how it is turned), and outliers; a few members share a model
 * keypoint, as k-nearest matching makes them. Deterministic for a seed (SplitMix, icp_scene.h's generator). */
#ifndef GRIP_TESTS_RANSAC_CLUSTERS_H
#define GRIP_TESTS_RANSAC_CLUSTERS_H

#include "group/cluster.h"

#include <stddef.h>
#include <stdint.h>

/* Correspondence i pairs model keypoint corr[i].model with scene keypoint corr[i].scene = i. Cluster c is the
 * correspondences first[c] .. first[c] + size[c] - 1, in order. */
typedef struct grip_ransac_scene {
    float *model_kp, *scene_kp; /* n_corr x 3 each */
    grip_corr *corr;
    size_t n_corr;
    uint32_t *first, *size; /* n_clusters each */
    size_t n_clusters;
} grip_ransac_scene;

/* n_clusters clusters of min_size .. max_size members, the inliers 1 mm off their pose. Returns 0 when memory is
 * short. The caller frees with grip_ransac_scene_free. */
int grip_ransac_scene_make(uint64_t seed, size_t n_clusters, uint32_t min_size, uint32_t max_size,
                           grip_ransac_scene *out);
void grip_ransac_scene_free(grip_ransac_scene *s);

/* A fresh array of the scene's clusters (members set, pose zero, votes = size), malloc'd as the grouping
 * functions make theirs, for one grip_clusters_ransac call, after which grip_clusters_free frees it. NULL when
 * memory is short. */
grip_cluster *grip_ransac_scene_clusters(const grip_ransac_scene *s);

#endif
