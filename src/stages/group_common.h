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

/* Local frames of a view's keypoints (k x 9, malloc'd into *frames; the caller frees). */
typedef grip_status (*grip_group_frames_fn)(grip_stage *st, const grip_view *view, const grip_group_keypoints *kp,
                                            float **frames);
/* The part of model m's grouping that runs on the device (a Hough vote): made for every model before any is
 * finished, on a CUDA device each model on a worker of its own (stages/stage_workers.h: st is then a copy of the
 * stage bound to a worker context, and st->state may only be read), so that the models' kernels and read-backs
 * overlap. It makes *part (NULL on failure), which the steps' part_free frees. */
typedef grip_status (*grip_group_prepare_fn)(grip_stage *st, const grip_view *model, uint32_t m,
                                             const grip_group_corrs *corrs, const grip_group_keypoints *scene_kp,
                                             const float *scene_rf, void **part);
/* What a grouping implementation does for model m, the models in turn: group its correspondences into h. scene_rf
 * is NULL unless the implementation asked for scene frames; part is what prepare made for the model (NULL without
 * a prepare step). */
typedef grip_status (*grip_group_model_fn)(grip_stage *st, const grip_view *model, uint32_t m,
                                           const grip_group_corrs *corrs, const grip_group_keypoints *scene_kp,
                                           const float *scene_rf, void *part, grip_hypotheses *h);

/* The steps of a group stage: scene_frames when it votes in frames (else NULL); prepare and part_free when part of a
 * model's work runs before the models are finished in turn (else both NULL); per_model. prepare_at_once tells
 * whether prepare's work is the device's, so that on a CUDA device the models' prepare steps run at once; a prepare
 * step with CPU work of its own (BOARD frames with PCL's ties) runs the models in turn, since inside a worker its
 * OpenMP loops would have one thread. */
typedef struct grip_group_steps {
    grip_group_frames_fn scene_frames;
    grip_group_prepare_fn prepare;
    void (*part_free)(void *part);
    grip_group_model_fn per_model;
    int prepare_at_once;
} grip_group_steps;

/* The body every group() shares, once the stage's own entry point has checked its call (grip_stage_check_call):
 * checks the arguments (the views, their clouds and features, the matches: their structs, and arrays as read),
 * splits the matches by model, opens the scene keypoints (and their frames when steps->scene_frames is not NULL),
 * runs prepare for every model with correspondences, then per_model for each of them in turn. */
grip_status grip_group_run(grip_stage *st, const grip_view *models, uint32_t n_models, const grip_view *scene,
                           const grip_matches *matches, const grip_group_steps *steps, grip_hypotheses **out);

#endif
