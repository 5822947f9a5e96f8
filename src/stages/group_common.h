/* group_common.h -- what the grouping stages share: per-model correspondence lists taken from a grip_matches,
 * host views of the keypoints, and the grip_hypotheses result. */
#ifndef GRIP_STAGES_GROUP_COMMON_H
#define GRIP_STAGES_GROUP_COMMON_H

#include "core/array.h"
#include "group/cluster.h"

/* A view's keypoints in host memory (copies when the features live on a device). */
typedef struct grip_group_keypoints {
    size_t n;
    const float *xyz;     /* n x 3 */
    const uint32_t *index; /* n: the keypoints' point numbers in their cloud */
    grip_array xyz_host, index_host;
    int own_xyz, own_index;
} grip_group_keypoints;

grip_status grip_group_keypoints_open(grip_ctx *ctx, const grip_view *view, const char *what, grip_group_keypoints *kp);
void grip_group_keypoints_close(grip_group_keypoints *kp);

/* The correspondences of one model, with the index of each in the grip_matches. */
typedef struct grip_group_corrs {
    size_t n;
    grip_corr *corr;
    uint32_t *match_index;
} grip_group_corrs;

/* Host copies of all matches, split by model: per_model[m] for m < n_models. Checks model ids and keypoint numbers
 * against the views. Free with grip_group_corrs_free(per_model, n_models). */
grip_status grip_group_corrs_split(grip_ctx *ctx, const grip_matches *matches, uint32_t n_models,
                                   grip_group_corrs **per_model);
void grip_group_corrs_free(grip_group_corrs *per_model, uint32_t n_models);

/* Appends the clusters of model m (their members index corrs->corr) to h (from grip_hypotheses_new,
 * stages/results.h). */
grip_status grip_hypotheses_append(grip_ctx *ctx, grip_hypotheses *h, uint32_t model, const grip_cluster *clusters,
                                   size_t n, const grip_group_corrs *corrs);

/* What a grouping implementation does for model m: group its correspondences into h. scene_rf is NULL unless
 * the implementation asked for scene frames. */
typedef grip_status (*grip_group_model_fn)(grip_stage *st, const grip_view *model, uint32_t m,
                                           const grip_group_corrs *corrs, const grip_group_keypoints *scene_kp,
                                           const float *scene_rf, grip_hypotheses *h);
/* Local frames of a view's keypoints (k x 9, malloc'd into *frames; the caller frees). */
typedef grip_status (*grip_group_frames_fn)(grip_stage *st, const grip_view *view, const grip_group_keypoints *kp,
                                            float **frames);

/* The body every group() shares, once the stage's own entry point has checked its call (grip_stage_check_call):
 * checks the arguments (the views, their clouds and features, the matches: their structs, and arrays as read),
 * splits the matches by model, opens the scene keypoints (and their frames when scene_frames is not NULL), and calls
 * per_model for each model. */
grip_status grip_group_run(grip_stage *st, const grip_view *models, uint32_t n_models, const grip_view *scene,
                           const grip_matches *matches, grip_group_frames_fn scene_frames,
                           grip_group_model_fn per_model, grip_hypotheses **out);

#endif
