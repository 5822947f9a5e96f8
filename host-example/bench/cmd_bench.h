/* cmd_bench.h -- what the files of `grip-host bench` share (internal to bench/).
 *
 *   bench descriptors: throughput of every descriptor stage the plugin lists, on a generated surface.
 *   bench recall:      how often a scene keypoint's nearest model descriptor is its true counterpart (Bologna
 *                      retrieval data, or a generated posed copy of the generated surface).
 *
 * Everything goes through the public ABI, as any host would: stages are opened with the pipeline runner
 * (pipeline.h) from a config built per setting, and timed around their synchronous run calls. */
#ifndef GRIP_HOST_CMD_BENCH_H
#define GRIP_HOST_CMD_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "commands/commands.h"
#include "pipeline.h"

/* Support points per keypoint that `bench descriptors` sizes its surface for (the issue's ~200). */
#define BENCH_TARGET_SUPPORT 200

/* The options of `grip-host bench`. Strings point into argv (or into the host's options). */
typedef struct bench_options {
    const char *plugin;         /* --plugin, or NULL for the default */
    const char *argv0;
    const char *what;           /* "descriptors" or "recall" */
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
} bench_options;

int bench_descriptors(const bench_options *b);
int bench_recall(const bench_options *b);

/* ---- stages, one setting at a time (cmd_bench.c) ------------------------------------------------------------ */

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

/* The median of v[0 .. n) (sorts v); NaN when n is 0. */
double bench_median(double *v, size_t n);


/* For a result that was skipped (skipped: why) or failed (failed: the error, "" when it did not): writes
 * ,"skipped":"<why>"} or ,"failed":"<error>"}, closing the result's JSON object, and returns 1; else 0. */
int bench_json_unfinished(FILE *f, const char *skipped, const char *failed);

/* A grip_cloud over host arrays (normals may be NULL), unorganized. */
grip_cloud bench_cloud(const float *xyz, const float *normals, size_t n, const char *name);

/* ---- a uniform grid over a cloud (grid.c) ------------------------------------------------------------------- */

/* The finite points of a cloud sorted by cell (cells of `cell` units, aligned to multiples of it, as PCL's voxel
 * filters align theirs). Borrows xyz; owns the rest. */
typedef struct bench_grid {
    const float *xyz;
    double cell;
    int64_t lo[3];     /* cell coordinates of the first cell on each axis */
    int64_t dims[3];   /* cells on each axis */
    size_t count;      /* finite points */
    uint64_t *keys;    /* count cell keys, ascending */
    uint32_t *points;  /* count point indices, in the order of keys (ascending within a cell) */
} bench_grid;

/* Builds the grid. 0, or -1 when out of memory or when the cloud spans too many cells (nothing allocated). */
int bench_grid_build(bench_grid *g, const float *xyz, size_t n, double cell);
void bench_grid_free(bench_grid *g);

/* Points within distance r of p (inclusive), p itself included when it is a cloud point. */
size_t bench_grid_count_within(const bench_grid *g, const float p[3], double r);

/* Distance from cloud point i to the nearest other cloud point (0 for a duplicate); INFINITY when there is none. */
double bench_grid_nearest(const bench_grid *g, size_t i);

/* PCL's uniform sampling: of the points in each cell, the one nearest the cell's centre (ties to the lower
 * index), in cell order. *idx is malloc'd (caller frees). 0, or -1 when out of memory. */
int bench_grid_sample(const bench_grid *g, uint32_t **idx, size_t *count);

/* ---- the generated surface (surface.c) ---------------------------------------------------------------------- */

/* n points drawn uniformly by area from a smooth closed surface -- a torus whose tube radius undulates, so that
 * no two places look alike -- scaled to the given total area, with outward unit normals. *xyz and *normals are
 * malloc'd n x 3 arrays (caller frees). The same seed gives the same points. 0, or -1 when out of memory. */
int bench_surface_sample(size_t n, double area, uint64_t seed, float **xyz, float **normals);

#endif
