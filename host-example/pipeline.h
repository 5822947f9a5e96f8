/* pipeline.h -- grip-host's pipeline runner: the five stages, each from the default plugin or from the plugin a
 * config section names, created from a validated config and run on host clouds. */
#ifndef GRIP_HOST_PIPELINE_H
#define GRIP_HOST_PIPELINE_H

#include "config.h"
#include "diag.h"
#include "explain.h"
#include "io/cloud_io.h"
#include "loader.h"
#include "model_set.h"
#include "pipeline_result.h"

typedef struct grip_pipeline {
    grip_loaded_plugin plugins[1 + GRIP_STAGE_KIND_COUNT]; /* [0]: the default plugin; [1 + kind]: a stage's own */
    grip_ctx *ctxs[1 + GRIP_STAGE_KIND_COUNT];             /* one context per loaded plugin */
    int of_stage[GRIP_STAGE_KIND_COUNT];                   /* which plugins[] slot each stage comes from */
    const grip_stage_impl *impl[GRIP_STAGE_KIND_COUNT];
    grip_stage *stage[GRIP_STAGE_KIND_COUNT];
    explain_settings explain;                              /* the values the verdicts' reasons name */
    char *model_settings; /* what describes a model: "key = value" lines for the descriptor plugin, its impl and
                             every descriptor key that can change a model's description (all but device, fallback
                             and scene_*), with the value the stage got; a model set keeps it (model_set.h) */
    uint32_t scene_memory;   /* where describe() leaves the scene's features for match, group and verify:
                                GRIP_MEM_CUDA when they can stay on the device (pipeline.c, scene_features_memory),
                                else GRIP_MEM_HOST */
    struct shard_comm *comm; /* run --mpi: the ranks the index is sharded across (shard/sharded_index.h); NULL: one
                                process. Set by the caller after pipeline_open, not owned. */
} grip_pipeline;

/* Loads the default plugin and any plugin a stage section names, validates cfg against their tables, creates a
 * context per plugin and the five stages. Every problem goes to diag (all at once where they are independent).
 * Returns 0, or -1 with nothing left open. Close with pipeline_close(). */
int pipeline_open(grip_pipeline *p, const char *plugin_path, grip_config *cfg, grip_diag *diag);
/* pipeline_open for a run on `scene` (may be NULL: as pipeline_open): measures the scene's resolution with the
 * default plugin (grip_plugin.cloud_resolution, when it has one) into cfg->resolution before validating, so that
 * lengths written "N mr" resolve to N times it (cfg's entries keep both, for the report). A scene whose resolution
 * cannot be measured fails only when a length uses mr. */
int pipeline_open_for(grip_pipeline *p, const char *plugin_path, grip_config *cfg, const host_cloud *scene,
                      grip_diag *diag);
void pipeline_close(grip_pipeline *p);

/* A grip_cloud view of c's arrays (points, normals and colours where c has them, size, name, viewpoint); it
 * borrows them: c outlives the view. */
grip_cloud pipeline_cloud_view(const host_cloud *c);

/* Whether some entry of cfg is written in mr (so that pipeline_open_for resolves it against each scene). */
int pipeline_config_uses_mr(const grip_config *cfg);

/* The resolution of c as the default plugin measures it (grip_plugin.cloud_resolution; the unit of "N mr"), or 0
 * when it cannot (a plugin of ABI 1.0, fewer than two distinct points). */
double pipeline_cloud_resolution(const grip_pipeline *p, const host_cloud *c);

/* Describes the model clouds with the descriptor stage into *out (host copies; free with model_set_free), with
 * the pipeline's model_settings and its descriptor plugin's ABI. model_of_cloud, n_models as pipeline_run; names:
 * n_models labels (NULL: each model cloud's path). Returns 0, or -1 with the reason in diag. */
int pipeline_describe_models(grip_pipeline *p, const host_cloud *clouds, uint32_t n_clouds,
                             const uint32_t *model_of_cloud, uint32_t n_models, const char *const *names,
                             model_set *out, grip_diag *diag);
/* Whether models described before (a model database `file`, for messages) can be used by this pipeline: the same
 * ABI major.minor as its descriptor plugin and the same model_settings. Returns 0, or -1 with a message in diag
 * naming the file and the first key whose value differs. */
int pipeline_check_models(const grip_pipeline *p, const model_set *m, const char *file, grip_diag *diag);
/* build() of the index stage over every model's descriptors (m->reference, tagged by m->model_ids). *out is
 * released with its own release. Returns 0, or -1 with the stage's error in diag. */
int pipeline_build_index(grip_pipeline *p, const model_set *m, grip_index **out, grip_diag *diag);
/* The scene's part of a run against models kept in m and their index (built from m by pipeline_build_index with
 * this pipeline): descriptor on the scene, match, group, verify. Fills *r as pipeline_run does; its timings are
 * the scene's alone (index 0). Returns 0, or -1 with the reason in diag. */
int pipeline_run_scene(grip_pipeline *p, const model_set *m, grip_index *index, const host_cloud *scene,
                       pipeline_result *r, grip_diag *diag);

/* pipeline_describe_models, pipeline_build_index and pipeline_run_scene in a row: descriptor (every model
 * cloud), index (all models' descriptors, tagged by model), descriptor on the scene, match (scene against the
 * index), group and verify; the descriptor and index times include the models'. Fills *r (free with
 * pipeline_result_free()). Returns 0, or -1 with a message naming the stage and the plugin's own error text in
 * diag. A run that made no correspondence or no hypothesis leaves what happened and its likely cause in r->hint
 * (explain.h).
 * model_of_cloud (n_clouds entries, each < n_models) makes several clouds views of one model: each view is
 * described alone, then the views of a model are merged (model_merge.h). NULL: every cloud is its own model and
 * n_models is ignored. */
int pipeline_run(grip_pipeline *p, const host_cloud *clouds, uint32_t n_clouds, const uint32_t *model_of_cloud,
                 uint32_t n_models, const host_cloud *scene, pipeline_result *r, grip_diag *diag);

#endif
