/* commands.h -- grip-host's subcommands. Each returns the process exit status: 0 success, 1 a failure of the
 * work (a file that does not load, a stage that fails), 2 a usage or configuration error. */
#ifndef GRIP_HOST_COMMANDS_H
#define GRIP_HOST_COMMANDS_H

/* Options every subcommand shares. */
typedef struct host_options {
    const char *argv0;         /* how grip-host was started (to find the plugin beside it) */
    const char *plugin;        /* --plugin PATH, or the default beside grip-host */
    const char *config;        /* --config FILE */
    const char **sets;         /* --set section.key=value, in order */
    int n_sets;
    const char **models;       /* --model FILE */
    int n_models;
    const char **scene_files;  /* --scene FILE, in order (run: each is recognised; other commands: one) */
    int n_scene_files;
    const char **scene_lists;  /* --scene-list FILE (run): files naming one scene a line */
    int n_scene_lists;
    const char *out_dir;       /* --out DIR (synth) */
    unsigned long long seed;   /* --seed N (demo, synth) */
    int objects;               /* --objects N (demo, synth); 0 = default */
    int views;                 /* --views N (synth, eval recognition): each model as N partial views, 0: the complete
                                  models; -1 when not given (synth: complete, eval: the demo's 8 views) */
    int json;                  /* --json */
    int repeat;                /* --repeat N: run the pipeline N times, report median stage times (default 1) */
    const char *overlay;       /* --overlay FILE.ply (run, demo): the picture of the run (overlay.h) */
    const char *data_dir;      /* --data DIR (regress): the shared data folder; NULL: $GRIP_DATA */
    int scenes;                /* --scenes N (eval recognition); 0 = default */
    unsigned long long keypoints; /* --keypoints N (eval descriptors): keypoints a model; 0 = default */
    const char *noise;         /* --noise LIST (eval descriptors): comma-separated noise levels */
    const char *model_names;   /* --models LIST (eval descriptors): comma-separated Bologna model names;
                                  --models FILE (run): a model database (model_db.h) instead of --model */
    const char **args;         /* the words after the command (regress's case files, eval's what) */
    int n_args;
    int merge_views;           /* --merge-views (models): files NAME@VIEW.ext are views of one model NAME */
    int mpi;                   /* --mpi (run): the index sharded across the ranks of an MPI job */
    struct shard_comm *comm;   /* run --mpi: the ranks, opened by cmd_run (NULL otherwise) */
} host_options;

int cmd_list(const host_options *o);
int cmd_run(const host_options *o);
/* `run` with several scenes (--scene repeated, --scene-list) or a model database (--models): the models described
 * or loaded once and indexed once, every scene run against them (run_scenes.c). */
int cmd_run_scenes(const host_options *o);
int cmd_models(const host_options *o);
int cmd_demo(const host_options *o);
int cmd_synth(const host_options *o);
int cmd_regress(const host_options *o);
int cmd_eval(const host_options *o);
/* `bench` (in bench/cmd_bench.c): the options given before it in o, its own arguments (after the word bench) in
 * argc/argv. */
int cmd_bench(const host_options *o, int argc, char **argv);

/* The plugin path from --plugin or the default beside grip-host; 0, or -1 after saying why on stderr. */
#include <stddef.h>
int host_plugin_path(const host_options *o, char *buf, size_t n);

/* The config: o's file (if any; else default_sets, which may be NULL), then o's --set overrides. 0, or -1 with the
 * problems in diag. */
#include "config.h"
int host_build_config(const host_options *o, const char *const *default_sets, grip_config *cfg, grip_diag *diag);

/* Shared by run and demo: builds the config (file, if any, then the given defaults when no file was given, then
 * --set), opens the pipeline and runs it. Prints problems to stderr. 0, or the exit status on failure. */
#include "pipeline.h"
int host_run_pipeline(const host_options *o, const char *const *default_sets, const host_cloud *models,
                      int n_models, const uint32_t *model_of_cloud, uint32_t n_model_ids, const host_cloud *scene,
                      pipeline_result *result);

/* host_run_pipeline on a recognition task (judge/task.h). */
#include "judge/task.h"
int host_run_task(const host_options *o, const char *const *default_sets, const recognition_task *t,
                  pipeline_result *result);
/* Writes --overlay's picture of r on t when o asks for one; 0, or 1 after saying why on stderr. */
int host_write_overlay(const host_options *o, const recognition_task *t, const pipeline_result *r);

#endif
