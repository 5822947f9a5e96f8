/* bench_contexts_cuda.c -- a host that recognises in several streams of scenes at once: T threads, each with a
 * pipeline (a context) of its own, run the whole pipeline on one model and scene R times each, all at the same
 * time (each call's GPU work on its thread's default stream, plugin.h "Synchrony"). Prints
 *   bench contexts threads=<T> runs=<R> median_ms=<per run> wall_ms=<all runs> runs_per_s=<T R / wall>
 * and checks every run's accepted instances against the first thread's first run (a line "DIFFERENT" and exit 1
 * when one differs).
 * Usage: bench_contexts_cuda CONFIG MODEL SCENE THREADS RUNS [section.key=value ...]; one warm-up run per thread
 * first (it fills each context's pool). The plugin: $GRIP_PLUGIN, else the one grip-host would find beside the
 * program. Not a test. */
#define _POSIX_C_SOURCE 200809L
#include "host_util.h"
#include "pipeline.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct worker {
    pthread_t thread;
    grip_pipeline p;
    grip_config cfg;
    const host_cloud *model, *scene;
    int runs, failed;
    double *ms;
    pipeline_result first;
    int found_same; /* every run found what the first found */
    pthread_barrier_t *start;
} worker;

static int same_instances(const pipeline_result *a, const pipeline_result *b)
{
    return pipeline_result_same_instances(a, b, 1e-4);
}

static int run_once(worker *w, pipeline_result *r)
{
    grip_diag diag = {0};
    int rc = pipeline_run(&w->p, w->model, 1, NULL, 0, w->scene, r, &diag);
    grip_diag_print(&diag, stderr);
    grip_diag_free(&diag);
    return rc;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    w->failed = run_once(w, &w->first) != 0; /* the warm-up */
    w->found_same = 1;
    pthread_barrier_wait(w->start);
    for (int r = 0; r < w->runs && !w->failed; r++) {
        pipeline_result res;
        double t0 = host_now_ms();
        w->failed = run_once(w, &res) != 0;
        w->ms[r] = host_now_ms() - t0;
        if (!w->failed) {
            w->found_same = w->found_same && same_instances(&w->first, &res);
            pipeline_result_free(&res);
        }
    }
    return NULL;
}

static int compare_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: bench_contexts_cuda CONFIG MODEL SCENE THREADS RUNS [section.key=value ...]\n");
        return 2;
    }
    const int threads = atoi(argv[4]), runs = atoi(argv[5]);
    host_cloud model, scene;
    char err[512];
    if (threads < 1 || runs < 1 || cloud_read(argv[2], &model, err, sizeof err) != 0 ||
        cloud_read(argv[3], &scene, err, sizeof err) != 0) {
        fprintf(stderr, "bench contexts: bad arguments or clouds: %s\n", err);
        return 1;
    }
    char plugin[4096];
    grip_loader_default_path(argv[0], plugin, sizeof plugin);
    worker *w = calloc((size_t)threads, sizeof *w);
    double *all = calloc((size_t)threads * (size_t)runs, sizeof *all);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    for (int t = 0; t < threads; t++) {
        grip_diag diag = {0};
        int bad = grip_config_load(argv[1], &w[t].cfg, &diag) != 0;
        for (int a = 6; a < argc && !bad; a++)
            bad = grip_config_set(&w[t].cfg, argv[a], &diag) != 0;
        bad = bad || pipeline_open(&w[t].p, plugin, &w[t].cfg, &diag) != 0;
        grip_diag_print(&diag, stderr);
        grip_diag_free(&diag);
        if (bad)
            return 1;
        w[t].model = &model;
        w[t].scene = &scene;
        w[t].runs = runs;
        w[t].ms = all + (size_t)t * (size_t)runs;
        w[t].start = &start;
    }
    for (int t = 0; t < threads; t++)
        pthread_create(&w[t].thread, NULL, worker_main, &w[t]);
    pthread_barrier_wait(&start);
    const double t0 = host_now_ms();
    for (int t = 0; t < threads; t++)
        pthread_join(w[t].thread, NULL);
    const double wall = host_now_ms() - t0;
    int failed = 0, same = 1;
    for (int t = 0; t < threads; t++) {
        failed = failed || w[t].failed;
        same = same && w[t].found_same && (t == 0 || same_instances(&w[0].first, &w[t].first));
    }
    qsort(all, (size_t)threads * (size_t)runs, sizeof *all, compare_ms);
    printf("bench contexts threads=%d runs=%d median_ms=%.3f wall_ms=%.1f runs_per_s=%.1f instances=%d%s\n", threads,
           runs, all[(size_t)threads * (size_t)runs / 2], wall, 1000.0 * threads * runs / wall,
           failed ? -1 : (int)pipeline_result_accepted(&w[0].first), failed ? " FAILED" : same ? "" : " DIFFERENT");
    for (int t = 0; t < threads; t++) {
        if (!w[t].failed)
            pipeline_result_free(&w[t].first);
        pipeline_close(&w[t].p);
        grip_config_free(&w[t].cfg);
    }
    free(all);
    free(w);
    host_cloud_free(&model);
    host_cloud_free(&scene);
    return failed || !same;
}
