/* pipeline.h -- grip-host's pipeline runner: the five stages, each from the default plugin or from the plugin a
 * config section names, created from a validated config and run on host clouds. */
#ifndef GRIP_HOST_PIPELINE_H
#define GRIP_HOST_PIPELINE_H

#include "config.h"
#include "diag.h"
#include "explain.h"
#include "io/cloud_io.h"
#include "loader.h"
#include "pipeline_result.h"

typedef struct grip_pipeline {
    grip_loaded_plugin plugins[1 + GRIP_STAGE_KIND_COUNT]; /* [0]: the default plugin; [1 + kind]: a stage's own */
    grip_ctx *ctxs[1 + GRIP_STAGE_KIND_COUNT];             /* one context per loaded plugin */
    int of_stage[GRIP_STAGE_KIND_COUNT];                   /* which plugins[] slot each stage comes from */
    const grip_stage_impl *impl[GRIP_STAGE_KIND_COUNT];
    grip_stage *stage[GRIP_STAGE_KIND_COUNT];
    explain_settings explain;                              /* the values the verdicts' reasons name */
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

/* The resolution of c as the default plugin measures it (grip_plugin.cloud_resolution; the unit of "N mr"), or 0
 * when it cannot (a plugin of ABI 1.0, fewer than two distinct points). */
double pipeline_cloud_resolution(const grip_pipeline *p, const host_cloud *c);

/* Runs descriptor (every model cloud, then the scene), index (all models' descriptors, tagged by model), match
 * (scene against the index), group and verify. Fills *r (free with pipeline_result_free()). Returns 0, or -1 with
 * a message naming the stage and the plugin's own error text in diag. A run that made no correspondence or no
 * hypothesis leaves what happened and its likely cause in r->hint (explain.h).
 * model_of_cloud (n_clouds entries, each < n_models) makes several clouds views of one model: each view is
 * described alone, then the views of a model are merged (model_merge.h). NULL: every cloud is its own model and
 * n_models is ignored. */
int pipeline_run(grip_pipeline *p, const host_cloud *clouds, uint32_t n_clouds, const uint32_t *model_of_cloud,
                 uint32_t n_models, const host_cloud *scene, pipeline_result *r, grip_diag *diag);

#endif
