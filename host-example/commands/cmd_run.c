/* cmd_run.c -- `grip-host run`: read the clouds, run the pipeline, print what was found. Also the pipeline set-up
 * that `demo` shares. */
#include "commands/commands.h"
#include "shard/comm.h"
#include "shard/shard.h"
#include "host_util.h"
#include "overlay.h"
#include "plausibility.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int host_plugin_path(const host_options *o, char *buf, size_t n)
{
    if (o->plugin) {
        snprintf(buf, n, "%s", o->plugin);
        return 0;
    }
    if (grip_loader_default_path(o->argv0, buf, n) != 0) {
        fprintf(stderr, "grip-host: no plugin found (looked for %s); give --plugin PATH or set GRIP_PLUGIN\n", buf);
        return -1;
    }
    return 0;
}

int host_build_config(const host_options *o, const char *const *default_sets, grip_config *cfg, grip_diag *diag)
{
    int bad = 0;
    if (o->config)
        bad |= grip_config_load(o->config, cfg, diag) != 0;
    else
        for (int i = 0; default_sets && default_sets[i]; i++)
            bad |= grip_config_set(cfg, default_sets[i], diag) != 0;
    for (int i = 0; i < o->n_sets; i++)
        bad |= grip_config_set(cfg, o->sets[i], diag) != 0;
    return bad ? -1 : 0;
}

/* Runs the pipeline `repeat` times; keeps the last result, with each stage's median time over the runs. */
static int run_repeated(grip_pipeline *p, int repeat, const host_cloud *models, int n_models,
                        const uint32_t *model_of_cloud, uint32_t n_model_ids, const host_cloud *scene,
                        pipeline_result *result, grip_diag *diag)
{
    double *times = calloc((size_t)repeat * PIPELINE_STAGES, sizeof *times);
    if (!times) {
        grip_diag_add(diag, "out of memory");
        return 1;
    }
    int rc = 0;
    for (int run = 0; run < repeat && rc == 0; run++) {
        pipeline_result_free(result);
        if (pipeline_run(p, models, (uint32_t)n_models, model_of_cloud, n_model_ids, scene, result, diag) != 0)
            rc = 1;
        for (int s = 0; s < PIPELINE_STAGES && rc == 0; s++)
            times[s * repeat + run] = result->timings_ms[s];
    }
    for (int s = 0; s < PIPELINE_STAGES && rc == 0; s++)
        result->timings_ms[s] = host_median(times + s * repeat, (size_t)repeat);
    free(times);
    return rc;
}

int host_run_pipeline(const host_options *o, const char *const *default_sets, const host_cloud *models,
                      int n_models, const uint32_t *model_of_cloud, uint32_t n_model_ids, const host_cloud *scene,
                      pipeline_result *result)
{
    char path[4096];
    if (host_plugin_path(o, path, sizeof path) != 0)
        return 1;
    grip_config cfg = {0};
    grip_diag diag = {0};
    grip_pipeline p;
    int rc = 0;
    if (host_build_config(o, default_sets, &cfg, &diag) != 0 || pipeline_open_for(&p, path, &cfg, scene, &diag) != 0) {
        rc = 2;
    } else {
        p.comm = o->comm;
        grip_diag warnings = {0};
        double *model_res = calloc((size_t)n_models + 1, sizeof *model_res);
        for (int i = 0; model_res && cfg.resolution > 0 && i < n_models; i++)
            model_res[i] = pipeline_cloud_resolution(&p, &models[i]); /* measured for mr (units.sh) */
        plausibility_check(&p, &cfg, scene, models, n_models, model_res, &warnings);
        for (size_t i = 0; i < warnings.count; i++)
            fprintf(stderr, "grip-host: warning: %s\n", warnings.messages[i]);
        if (!model_res) {
            grip_diag_add(&diag, "out of memory");
            rc = 1;
        } else {
            rc = run_repeated(&p, o->repeat > 1 ? o->repeat : 1, models, n_models, model_of_cloud, n_model_ids,
                              scene, result, &diag);
            if (rc == 0 && pipeline_result_set_units(result, &cfg) != 0) {
                grip_diag_add(&diag, "out of memory");
                rc = 1;
            }
        }
        if (rc == 0) { /* the result reports the mr path's measurements alone, as before */
            result->cloud_resolutions = model_res;
            result->n_clouds = (uint32_t)n_models;
            model_res = NULL;
            result->warnings = warnings;
        } else {
            grip_diag_free(&warnings);
        }
        free(model_res);
        pipeline_close(&p);
        if (rc == 0 && result->hint[0])
            fprintf(stderr, "grip-host: %s\n", result->hint);
    }
    grip_diag_print(&diag, stderr);
    grip_diag_free(&diag);
    grip_config_free(&cfg);
    return rc;
}

int host_run_task(const host_options *o, const char *const *default_sets, const recognition_task *t,
                  pipeline_result *result)
{
    return host_run_pipeline(o, default_sets, t->clouds, (int)t->n_clouds, t->model_of_cloud, t->n_models, t->scene,
                             result);
}

static int read_clouds(const host_options *o, host_cloud *models, host_cloud *scene)
{
    char err[1024];
    int bad = 0;
    for (int i = 0; i < o->n_models; i++)
        if (cloud_read(o->models[i], &models[i], err, sizeof err) != 0) {
            fprintf(stderr, "grip-host: %s\n", err);
            bad = 1;
        }
    if (cloud_read(o->scene_files[0], scene, err, sizeof err) != 0) {
        fprintf(stderr, "grip-host: %s\n", err);
        bad = 1;
    }
    return bad ? -1 : 0;
}


int host_write_overlay(const host_options *o, const recognition_task *t, const pipeline_result *r)
{
    char err[1024];
    if (o->overlay && overlay_write(o->overlay, t, r, err, sizeof err) != 0) {
        fprintf(stderr, "grip-host: --overlay: %s\n", err);
        return 1;
    }
    return 0;
}

static int run_once(const host_options *o);

/* The hash of what every rank of run --mpi must agree on: the plugin, config, files and settings. */
static uint64_t run_hash(const host_options *o)
{
    uint64_t h = SHARD_HASH_SEED;
    const char *one[] = {o->plugin ? o->plugin : "", o->config, o->scene_files[0], o->overlay ? o->overlay : ""};
    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
        h = shard_hash(h, one[i], strlen(one[i]) + 1);
    for (int i = 0; i < o->n_models; i++)
        h = shard_hash(h, o->models[i], strlen(o->models[i]) + 1);
    for (int i = 0; i < o->n_sets; i++)
        h = shard_hash(h, o->sets[i], strlen(o->sets[i]) + 1);
    return shard_hash(h, &o->repeat, sizeof o->repeat);
}

/* run --mpi: every rank runs the pipeline alike, with the index sharded (shard/sharded_index.h) and its CUDA
 * device numbered by its local rank; rank 0 alone prints the result. */
static int run_sharded(const host_options *o)
{
    shard_comm c;
    char err[512], device[64], why[256] = "";
    if (shard_comm_open(1, 600, &c, err, sizeof err) != 0) {
        fprintf(stderr, "grip-host: run --mpi: %s\n", err);
        return 2;
    }
    uint64_t *hashes = calloc((size_t)c.size, sizeof *hashes);
    if (!hashes || shard_comm_allgather_u64(&c, run_hash(o), hashes, "command check") != 0)
        shard_comm_abort(&c, 3);
    for (int r = 1; r < c.size; r++)
        if (hashes[r] != hashes[0] && (c.rank == r || c.rank == 0) && !why[0])
            snprintf(why, sizeof why, "the ranks were given different commands (rank %d differs from rank 0)", r);
    free(hashes);
    int rc = 2;
    const char **sets = calloc((size_t)o->n_sets + 1, sizeof *sets);
    if (!sets)
        snprintf(why, sizeof why, "out of memory");
    if (shard_comm_agree(&c, why) == 0) {
        host_options mine = *o;
        for (int i = 0; i < o->n_sets; i++)
            sets[i] = o->sets[i];
        mine.sets = sets;
        if (c.local_size > 1) { /* one device a rank on a shared host; last, so that it wins */
            snprintf(device, sizeof device, "pipeline.cuda_device=%d", c.local_rank);
            sets[mine.n_sets++] = device;
        }
        mine.comm = &c;
        if (c.rank != 0 && !freopen("/dev/null", "w", stdout))
            fprintf(stderr, "grip-host: rank %d: cannot silence stdout\n", c.rank);
        rc = run_once(&mine);
    }
    free(sets);
    shard_comm_close(&c);
    return rc;
}

int cmd_run(const host_options *o)
{
    if (!o->config || o->n_scene_files + o->n_scene_lists == 0 || (o->n_models == 0) == !o->model_names) {
        fprintf(stderr, "grip-host: run needs --config FILE, --scene FILE (or --scene-list FILE) and either --model "
                        "FILE (one or more) or --models DATABASE\n");
        return 2;
    }
    if (o->mpi && (o->n_scene_files != 1 || o->n_scene_lists || o->model_names)) {
        fprintf(stderr, "grip-host: run --mpi takes one --scene and --model files, not a list or a model database\n");
        return 2;
    }
    if (o->mpi)
        return run_sharded(o);
    if (o->n_scene_files != 1 || o->n_scene_lists || o->model_names)
        return cmd_run_scenes(o);
    return run_once(o);
}

static int run_once(const host_options *o)
{
    host_cloud *models = calloc((size_t)o->n_models, sizeof *models);
    host_cloud scene = {0};
    pipeline_result r = {0};
    recognition_task t;
    memset(&t, 0, sizeof t);
    int rc = 1;
    if (!models || task_from_clouds(models, o->models, (uint32_t)o->n_models, &scene, &t) != 0)
        fprintf(stderr, "grip-host: out of memory\n");
    else if (read_clouds(o, models, &scene) == 0)
        rc = host_run_task(o, NULL, &t, &r);
    if (rc == 0) {
        r.scene = o->scene_files[0];
        if (o->json)
            pipeline_result_print_json(stdout, &r, o->models);
        else
            pipeline_result_print_text(stdout, &r, o->models);
        rc = host_write_overlay(o, &t, &r);
    }
    pipeline_result_free(&r);
    task_free(&t);
    for (int i = 0; models && i < o->n_models; i++)
        host_cloud_free(&models[i]);
    free(models);
    host_cloud_free(&scene);
    return rc;
}
