/* model_merge.h -- a model made of several partial views (clouds in one shared frame, each described on its own,
 * as a camera saw it) turned into one model for index, group and verify: the views' points and features are
 * concatenated. Describing each view separately keeps every descriptor a one-view descriptor, like the scene's;
 * grouping them keeps the votes of all views of an object for one pose. */
#ifndef GRIP_HOST_MODEL_MERGE_H
#define GRIP_HOST_MODEL_MERGE_H

#include <stdint.h>
#include "plugin.h"

/* One merged model: a host-owned cloud and features (released with model_merge_free). */
typedef struct merged_model {
    grip_cloud cloud;
    grip_features features; /* host arrays; features.release frees nothing: use model_merge_free */
    float *xyz;
    uint32_t *keypoints;
    float *keypoint_xyz, *normals, *frames, *descriptors;
} merged_model;

/* Concatenates the n views (clouds[i] described as features[i], all host memory) into *out.
 * Returns 0, or -1 when out of memory or the views' descriptor dimensions differ. */
int model_merge(const grip_cloud *const *clouds, const grip_features *const *features, uint32_t n, merged_model *out);
void model_merge_free(merged_model *m);

#endif
