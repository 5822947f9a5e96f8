/* pipeline_result.h -- what one run of the pipeline found, in host memory, and how grip-host prints it. */
#ifndef GRIP_HOST_PIPELINE_RESULT_H
#define GRIP_HOST_PIPELINE_RESULT_H

#include "explain.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PIPELINE_STAGES 5

/* One verified hypothesis. */
typedef struct pipeline_instance {
    uint32_t model;           /* index of the model, in the order the models were given */
    double pose[16];          /* row-major, model -> scene (the refined pose) */
    uint32_t correspondences; /* members of the grouped hypothesis */
    float votes;              /* grouping score */
    float fitness, rmse;
    float violation;          /* free-space violation fraction (NaN: not measured) */
    int accepted;
    uint32_t reason;          /* grip_verdict_reason: why verification rejected it (explain.h) */
} pipeline_instance;

typedef struct pipeline_result {
    uint32_t n_models;
    size_t *model_keypoints;     /* n_models */
    size_t scene_keypoints;
    size_t correspondences;
    size_t n_hypotheses;
    pipeline_instance *hypotheses; /* n_hypotheses, accepted or not, in the group stage's order */
    double timings_ms[PIPELINE_STAGES]; /* descriptor (all clouds), index, match, group, verify */
    double scene_resolution;     /* the scene's measured resolution, in its unit (0: not measured) */
    uint32_t n_clouds;
    double *cloud_resolutions;   /* n_clouds: each model cloud's, in the order given (0: not measured) */
    size_t n_lengths;
    char **lengths;              /* n_lengths malloc'd texts, one per length written in mr, as it was resolved:
                                    "descriptor.radius = 20 mr = 0.0358" */
    explain_settings settings;          /* the values the rejections name */
    char hint[512];                     /* a run with no correspondence or no hypothesis: why, likely; else "" */
    const char *scene;                  /* the scene's file, when it came from one (borrowed), else NULL */
} pipeline_result;

/* Sets scene_resolution and lengths from a validated config (config.h: resolution, entries' resolved values).
 * Returns 0, or -1 when out of memory. */
struct grip_config;
int pipeline_result_set_units(pipeline_result *r, const struct grip_config *cfg);

void pipeline_result_free(pipeline_result *r);
/* Number of accepted hypotheses. */
size_t pipeline_result_accepted(const pipeline_result *r);

/* Human-readable report: counts, instances with pose, fitness and RMSE, each rejected hypothesis with the test
 * that rejected it, per-stage times. */
void pipeline_result_print_text(FILE *out, const pipeline_result *r, const char *const *model_names);
/* The JSON document of `grip-host run --json` (one line; when r->scene is set, "scene":"…" comes first):
 * {"instances":[{"model":i,"model_name":"…","pose":[16 numbers],"correspondences":n,"votes":v,"fitness":f,
 *                 "rmse":r[,"violation":x when measured]}],   (accepted hypotheses only)
 *  "rejected":[{"hypothesis":i,"model":i,"model_name":"…","fitness":f,"rmse":r,"rejected_by":"min_fitness",
 *               "why":"fitness 0.120 < min_fitness 0.3"}],   (the key a user would change; explain.h)
 *  "counts":{"model_keypoints":[…],"scene_keypoints":n,"correspondences":n,"hypotheses":n},
 *  "timings_ms":{"descriptor":…,"index":…,"match":…,"group":…,"verify":…,"total":…},
 *  "units":{"scene_resolution":r or null,"model_resolutions":[r or null per model cloud],"lengths":["descriptor.radius = 20 mr = 0.0358",…]}} */
void pipeline_result_print_json(FILE *out, const pipeline_result *r, const char *const *model_names);
/* The JSON line of a scene that could not be run: {"scene":"…","error":"…"}. */
void pipeline_result_print_json_error(FILE *out, const char *scene, const char *error);

extern const char *const pipeline_stage_names[PIPELINE_STAGES];

#endif
