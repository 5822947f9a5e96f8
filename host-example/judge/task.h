/* task.h -- a recognition task: the model clouds the pipeline gets, the scene, and the truth where it is known.
 * `demo`, `regress` and `eval recognition` build one from a generated scene (synth.h) and run the pipeline on it
 * with host_run_pipeline(); regress builds one from files too. */
#ifndef GRIP_HOST_JUDGE_TASK_H
#define GRIP_HOST_JUDGE_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "judge/judge.h"
#include "synth/synth.h"

/* Owns everything it points to but `scene` and `clouds` when they come from `synth`: free with task_free(). */
typedef struct recognition_task {
    const host_cloud *clouds; /* n_clouds model clouds (or views) the pipeline describes */
    uint32_t n_clouds;
    uint32_t *model_of_cloud; /* n_clouds, or NULL: every cloud is its own model */
    uint32_t n_models;
    const char **model_names;        /* n_models labels (borrowed strings) */
    const host_cloud **model_points; /* n_models: each model's points in its own frame, for judging and pictures
                                        (a generated kind's complete surface; a file model's cloud) */
    const host_cloud *scene;
    judge_truth *truth; /* n_truth true objects (NULL, 0 when unknown) */
    size_t n_truth;
    double *visible_fraction; /* n_truth: each object's visible fraction, or NULL when unknown */
    synth_scene synth;        /* the generated scene behind the task (zeroed for file tasks) */
} recognition_task;

/* The pipeline settings for generated scenes when no config is given (the demo's; see task.c for why). */
extern const char *const task_synth_pipeline[];

/* Generates the scene of p and the task of recognising its kinds in it: each kind one model made of its views
 * (model ids: the kinds in order of first use), every object expected within max_distance / max_angle_deg.
 * Returns 0, or -1 with a message in err (*t zeroed). */
int task_from_synth(const synth_params *p, double max_distance, double max_angle_deg, recognition_task *t, char *err,
                    size_t errlen);

/* A task over clouds the caller owns (models[n_models], scene), each model its own cloud, truth unknown (add it
 * with task_set_truth). Returns 0, or -1 when out of memory. */
int task_from_clouds(const host_cloud *models, const char *const *names, uint32_t n_models, const host_cloud *scene,
                     recognition_task *t);

/* Sets the truth of a task (copies truth[n]; points taken from model_points when NULL). 0, or -1 (out of memory). */
int task_set_truth(recognition_task *t, const judge_truth *truth, size_t n);

void task_free(recognition_task *t);

#endif
