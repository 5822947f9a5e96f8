/* bench_common.h -- what the subcommands of `grip-host bench` share: their options, the descriptor stages opened
 * one setting at a time, and small helpers (bench_common.c). Internal to bench/.
 *
 * Everything goes through the public ABI, as any host would: stages are opened with the pipeline runner
 * (pipeline.h) from a config built per setting, and timed around their synchronous run calls. */
#ifndef GRIP_HOST_BENCH_COMMON_H
#define GRIP_HOST_BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pipeline.h"

/* Support points per keypoint that `bench descriptors` sizes its surface for (the issue's ~200). */
#define BENCH_TARGET_SUPPORT 200

/* The options of `grip-host bench`. Strings point into argv (or into the host's options). */
typedef struct bench_options {
    const char *plugin;         /* --plugin, or NULL for the default */
    const char *argv0;
    const char *what;           /* "descriptors", "recall", "index" or "pipeline" */
    const char **sets;          /* --set section.key=value, the ones given before `bench` first */
    int n_sets;
    int json;                   /* --json: one JSON document on stdout instead of the text lines */
    int repeat;                 /* --repeat N: timed runs per measurement; 0 = the subcommand's default */
    uint64_t points;            /* --points N; 0 = default */
    uint64_t keypoints;         /* --keypoints K; 0 = default */
    double radius;              /* --radius R; 0 = default */
    double leaf;                /* --leaf L (recall); 0 = default */
    const char *model, *scene;  /* --model M, --scene S (recall) */
    const char *gt;             /* --gt T.xf (recall) */
    int sweep;                  /* --sweep (recall) */
    uint64_t seed;              /* --seed N: the generated data */
    /* bench index (index.c) */
    uint64_t rows, queries;     /* --rows N, --queries M (generated); 0 = default */
    uint32_t dim, k;            /* --dim D, --k K; 0 = default */
    const char *reference;      /* --reference FILE (raw float32 rows x dim) */
    const char *query_file;     /* --query-file FILE (likewise) */
    const char *out;            /* --out FILE: the merged result */
    int mpi;                    /* --mpi: shard across the ranks of an MPI job */
    double mpi_timeout;         /* --mpi-timeout S: the longest wait for the other ranks; 0 = default */
    uint32_t sync_checks;       /* --sync-checks L: the forest's bound sync after L leaves; 0 = off */
    uint32_t sync_groups;       /* --sync-groups G: groups of alike bounds; 0 = default */
    int recall;                 /* --recall */
    int bandwidth;              /* --bandwidth */
    /* bench pipeline (pipeline.c) */
    const char *config;         /* --config FILE: every workload's config; NULL: each workload's shipped one */
    const char *data_dir;       /* --data DIR: the shared data folder; NULL: $GRIP_DATA */
    const char *workloads;      /* --workloads LIST: comma-separated names (workloads.h); NULL: the default list */
    double scale;               /* --scale F: generated images' area times F, 0 < F <= 1; 0 = 1 */
    int warmup;                 /* --warmup N: untimed runs before the timed ones; -1 = default */
    const char *svg;            /* --svg FILE: the chart of time per stage */
} bench_options;

/* ---- stages, one setting at a time -------------------------------------------------------------------------- */

/* The user's --set entries, checked for syntax, the plugin that offers the descriptor stages, and the descriptor
 * implementations to run. */
typedef struct bench_plugin {
    grip_config user;             /* the --set entries, in order */
    char path[4096];              /* the default plugin */
    grip_loaded_plugin descriptors; /* the plugin the descriptor stages come from (descriptor.plugin or the
                                       default); held open for the whole bench so that its stage list stays
                                       valid and the library is not unloaded between settings */
    const grip_stage_impl **impls; /* every descriptor stage the plugin lists, or the one descriptor.impl names */
    uint32_t n_impls;
} bench_plugin;

/* Parses the --set entries, loads the descriptor plugin and lists the implementations to run, checking that every
 * descriptor key of --set belongs to at least one of them. 0, or the exit status after saying why (nothing is
 * then held). Close with bench_plugin_close(). */
int bench_plugin_open(const bench_options *b, bench_plugin *bp);
void bench_plugin_close(bench_plugin *bp);

/* One setting opened: the pipeline (its descriptor, index and match stages are the ones a bench uses). */
typedef struct bench_run {
    grip_config cfg;
    grip_pipeline p;
    const grip_stage_impl *impl; /* the descriptor implementation */
    const char *device;          /* where the descriptor stage runs: "cuda" or "cpu" (static text) */
} bench_run;

/* Opens `impl` with, in increasing precedence: `defaults` (NULL-terminated "section.key=value"; a descriptor key
 * the impl lacks is left out), the user's --set entries (likewise) and `forced` (NULL-terminated, always applied).
 * Returns 0; 1 when the impl cannot run on the requested device (*skip_reason then says why, nothing open);
 * or -1 after printing the problems. Close with bench_run_close(). */
int bench_run_open(const bench_plugin *bp, const grip_stage_impl *impl, const char *const *defaults,
                   const char *const *forced, bench_run *r, const char **skip_reason);
void bench_run_close(bench_run *r);

/* "<kind> '<impl>' failed on <what>: <status>: <the plugin's last error>" into err, for a stage of r. */
void bench_run_error(const bench_run *r, uint32_t kind, grip_status s, const char *what, char *err, size_t n);

/* Times `repeat` describe calls (after the caller's warm-up): the median and the fastest, in ms. The features of
 * each call are released at once. Returns GRIP_OK, or the first failure with its text in err. */
grip_status bench_time_describe(const bench_run *r, const grip_cloud *cloud, uint32_t role, const grip_array *kp,
                                uint32_t out_memory, int repeat, double *median_ms, double *min_ms, char *err,
                                size_t errlen);

/* Rows of a host F32 descriptor array without a NaN. */
uint64_t bench_valid_rows(const grip_array *descriptors);


/* For a result that was skipped (skipped: why) or failed (failed: the error, "" when it did not): writes
 * ,"skipped":"<why>"} or ,"failed":"<error>"}, closing the result's JSON object, and returns 1; else 0. */
int bench_json_unfinished(FILE *f, const char *skipped, const char *failed);

/* A grip_cloud over host arrays (normals may be NULL), unorganized. */
grip_cloud bench_cloud(const float *xyz, const float *normals, size_t n, const char *name);

#endif
