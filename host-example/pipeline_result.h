/* pipeline_result.h -- what one run of the pipeline found, in host memory, and how grip-host prints it. */
#ifndef GRIP_HOST_PIPELINE_RESULT_H
#define GRIP_HOST_PIPELINE_RESULT_H

#include "diag.h"
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

/* What one stage moved between host and device memory (accounting.h), and the host time inside those copies. */
typedef struct pipeline_transfer {
    uint64_t h2d_bytes, d2h_bytes, h2d_copies, d2h_copies;
    double h2d_ms, d2h_ms;
} pipeline_transfer;

/* A run's accounting, from the plugins' context counters (ABI 1.2); available == 0 when no plugin reports them. */
typedef struct pipeline_accounting {
    int available;
    pipeline_transfer stage[PIPELINE_STAGES]; /* descriptor, index, match, group, verify */
    uint64_t pool_grows;                      /* times a device memory pool grew during the run */
    uint64_t pool_reserved_bytes;             /* device memory the pools hold after the run */
    uint64_t pool_reserved_high_bytes;        /* the most they ever held */
} pipeline_accounting;

typedef struct pipeline_result {
    uint32_t n_models;
    size_t *model_keypoints;     /* n_models */
    size_t scene_keypoints;
    size_t correspondences;
    size_t n_hypotheses;
    pipeline_instance *hypotheses; /* n_hypotheses, accepted or not, in the group stage's order */
    double timings_ms[PIPELINE_STAGES]; /* descriptor (all clouds), index, match, group, verify */
    double models_descriptor_ms;        /* of timings_ms[descriptor], the part spent on the model clouds (set by
                                           pipeline_run; 0 when the models were described before the run) */
    pipeline_accounting accounting;     /* bytes over PCIe, copy times and pool growth, stage by stage */
    const char *unit;            /* the clouds' unit as the config names it (pipeline.unit, static text), "" when
                                    unnamed: every length below is in the clouds' unit */
    double scene_resolution;     /* the scene's measured resolution, in its unit (0: not measured) */
    uint32_t n_clouds;
    double *cloud_resolutions;   /* n_clouds: each model cloud's, in the order given (0: not measured) */
    uint32_t n_described;        /* model clouds, then the scene */
    uint32_t *normals_source;    /* n_described: grip_normals_source of each described cloud's features
                                    (GRIP_NORMALS_UNSAID when the plugin does not say) */
    unsigned char *had_normals;  /* n_described: 1 when the cloud carried normals of its own */
    const char *model_orientation; /* how the models' computed normals were oriented, from the settings that
                                      described them (descriptor.model_normals): "viewpoint" (toward the viewpoint),
                                      "outward" (away from their centroids) or "propagate" (outward, made
                                      consistent along the surface); a static string */
    int scene_features_on_device; /* 1 when the scene's features stayed in device memory between the stages */
    int model_features_on_device; /* 1 when the models' did (a run of one model described for it: model_set_hold) */
    size_t n_lengths;
    char **lengths;              /* n_lengths malloc'd texts, one per length written in mr, as it was resolved:
                                    "descriptor.radius = 20 mr = 0.0358" */
    grip_diag warnings;          /* the settings implausible for these clouds (plausibility.h), one line each */
    explain_settings settings;          /* the values the rejections name */
    char hint[512];                     /* a run with no correspondence or no hypothesis: why, likely; else "" */
    const char *scene;                  /* the scene's file, when it came from one (borrowed), else NULL */
} pipeline_result;

/* Sets unit, scene_resolution and lengths from a validated config (config.h: pipeline.unit, resolution, entries'
 * resolved values).
 * Returns 0, or -1 when out of memory. */
struct grip_config;
int pipeline_result_set_units(pipeline_result *r, const struct grip_config *cfg);

void pipeline_result_free(pipeline_result *r);
/* The word for a grip_normals_source, as --json writes it ("computed", "cloud", ...; "unsaid" for one it does not
 * know). Static text. */
const char *pipeline_normals_word(uint32_t source);
/* Number of accepted hypotheses. */
size_t pipeline_result_accepted(const pipeline_result *r);
/* Whether a and b accepted the same instances: as many, and each of a's of the same model as one of b's, their
 * poses' entries within tolerance. */
int pipeline_result_same_instances(const pipeline_result *a, const pipeline_result *b, double tolerance);

/* Human-readable report: counts, instances with pose, fitness and RMSE, each rejected hypothesis with the test
 * that rejected it, per-stage times. Lengths (resolutions, resolved lengths, RMSE, translations) are printed in the
 * clouds' unit, followed by its name (pipeline.unit) or "(cloud unit)" when the config names none. */
void pipeline_result_print_text(FILE *out, const pipeline_result *r, const char *const *model_names);
/* The JSON document of `grip-host run --json` (one line; when r->scene is set, "scene":"…" comes first):
 * {"instances":[{"model":i,"model_name":"…","pose":[16 numbers],"correspondences":n,"votes":v,"fitness":f,
 *                 "rmse":r[,"violation":x when measured]}],   (accepted hypotheses only)
 *  "rejected":[{"hypothesis":i,"model":i,"model_name":"…","fitness":f,"rmse":r,"rejected_by":"min_fitness",
 *               "why":"fitness 0.120 < min_fitness 0.3"}],   (the key a user would change; explain.h)
 *  "counts":{"model_keypoints":[…],"scene_keypoints":n,"correspondences":n,"hypotheses":n},
 *  "timings_ms":{"descriptor":…,"index":…,"match":…,"group":…,"verify":…,"total":…},
 *  "units":{"unit":"mm" or null,"scene_resolution":r or null,"model_resolutions":[r or null per model cloud],"lengths":["descriptor.radius = 20 mr = 0.0358",…]},
 *  "normals":{"models":["computed"|"cloud"|"cloud_rescaled"|"recomputed"|"unsaid" per model],"scene":"…",
 *             "model_orientation":"viewpoint"|"outward"|"propagate"},   (how the models' computed normals were oriented)
 *  "scene_features":"device"|"host",   (where the scene's features stayed between the stages: host when a stage
 *                                       comes from another plugin or the descriptor runs on the CPU)
 *  "model_features":"device"|"host",   (where the models' stayed: device only for one model described for this
 *                                       run when the scene's stay there; kept models and databases are host copies)
 *  "transfers":{"run":T,"stages":{"descriptor":T,…,"verify":T},"pool_grows":n,"pool_reserved_bytes":n,
 *               "pool_reserved_high_bytes":n}}   (when a plugin reports its counters: accounting.h)
 * where T = {"h2d_bytes":n,"d2h_bytes":n,"h2d_copies":n,"d2h_copies":n,"upload_ms":x,"download_ms":x}: bytes and
 * copies host->device and device->host, and the host time inside those copies (a stage's time includes its own). */
void pipeline_result_print_json(FILE *out, const pipeline_result *r, const char *const *model_names);
/* The JSON line of a scene that could not be run: {"scene":"…","error":"…","warnings":[…]}, the warnings of its
 * settings (plausibility.h; NULL: none) as in a scene's report. */
void pipeline_result_print_json_error(FILE *out, const char *scene, const char *error, const grip_diag *warnings);

extern const char *const pipeline_stage_names[PIPELINE_STAGES];

#endif
