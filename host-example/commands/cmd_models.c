/* cmd_models.c -- `grip-host models --config C --out DB M1.ply M2.pcd ...`: describes each model cloud once with the
 * config's descriptor stage and writes the model database (model_db.h) that `run --models DB` loads instead.
 *
 * With --merge-views, files named NAME@VIEW.ext (as `grip-host synth --views` writes them) are partial views of one
 * model NAME, in that model's frame: each view is described alone and the views are merged into one model
 * (model_merge.h), as `grip-host demo` models its objects, so that a run reports one instance per object rather than
 * one per view that matched. A file without '@' is a model of its own. */
#include "commands/commands.h"
#include "host_util.h"
#include "model_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The model files: the words after `models`, then any --model. */
static const char **model_files(const host_options *o, int *n)
{
    const char **files = calloc((size_t)(o->n_args + o->n_models) + 1, sizeof *files);
    *n = 0;
    for (int i = 0; files && i < o->n_args; i++)
        files[(*n)++] = o->args[i];
    for (int i = 0; files && i < o->n_models; i++)
        files[(*n)++] = o->models[i];
    return files;
}

/* The length of the part of path that names its model under --merge-views: up to the last '@' of its file name,
 * or the whole path when the file name has none. */
static size_t model_key_length(const char *path)
{
    const char *base = strrchr(path, '/'), *at = strrchr(path, '@');
    return at && (!base || at > base) ? (size_t)(at - path) : strlen(path);
}

/* --merge-views: the model of each file (files with the same key share one, numbered in order of first appearance)
 * and each model's name (its key: a pointer into `names`' own copy). Returns the number of models, or 0 when out of
 * memory. */
static uint32_t group_views(const char *const *files, int n, uint32_t *model_of_file, char **names)
{
    uint32_t n_models = 0;
    for (int i = 0; i < n; i++) {
        size_t len = model_key_length(files[i]);
        uint32_t m = 0;
        while (m < n_models && !(strlen(names[m]) == len && strncmp(names[m], files[i], len) == 0))
            m++;
        if (m == n_models && !(names[n_models++] = host_strndup(files[i], len)))
            return 0;
        model_of_file[i] = m;
    }
    return n_models;
}

static int describe_and_write(const host_options *o, const char *const *files, int n, host_cloud *clouds)
{
    char path[4096], err[1024];
    grip_config cfg = {0};
    grip_diag diag = {0};
    grip_pipeline p;
    model_set set = {0};
    int rc = 0;
    if (host_plugin_path(o, path, sizeof path) != 0)
        return 2;
    if (host_build_config(o, NULL, &cfg, &diag) != 0) {
        rc = 2;
    } else if (pipeline_config_uses_mr(&cfg)) {
        /* N mr is N times each scene's resolution: models described for one scene would not suit the next */
        grip_diag_add(&diag, "models: the config writes lengths in mr (multiples of each scene's resolution); a model "
                             "database needs them in the clouds' unit");
        rc = 2;
    } else if (pipeline_open(&p, path, &cfg, &diag) != 0) {
        rc = 2;
    } else {
        uint32_t *model_of_file = o->merge_views ? calloc((size_t)n, sizeof *model_of_file) : NULL;
        char **names = o->merge_views ? calloc((size_t)n, sizeof *names) : NULL;
        uint32_t n_models = 0;
        if (o->merge_views && (!model_of_file || !names || !(n_models = group_views(files, n, model_of_file, names)))) {
            grip_diag_add(&diag, "models: out of memory");
            rc = 1;
        }
        double t0 = host_now_ms();
        if (rc == 0 && pipeline_describe_models(&p, clouds, (uint32_t)n, model_of_file, n_models,
                                                names ? (const char *const *)names : files, &set, &diag) != 0)
            rc = 1;
        double ms = host_now_ms() - t0;
        if (rc == 0 && model_db_write(o->out_dir, &set, err, sizeof err) != 0) {
            grip_diag_add(&diag, "%s", err);
            rc = 1;
        }
        if (rc == 0)
            printf("%s: %u models (from %d files), %llu keypoints, descriptors of %u values, described in %.1f ms\n",
                   o->out_dir, set.n_models, n, (unsigned long long)set.rows, set.dim, ms);
        for (int i = 0; names && i < n; i++)
            free(names[i]);
        free(names);
        free(model_of_file);
        model_set_free(&set);
        pipeline_close(&p);
    }
    grip_diag_print(&diag, stderr);
    grip_diag_free(&diag);
    grip_config_free(&cfg);
    return rc;
}

int cmd_models(const host_options *o)
{
    int n = 0;
    const char **files = model_files(o, &n);
    if (!files) {
        fprintf(stderr, "grip-host: out of memory\n");
        return 1;
    }
    if (!o->config || !o->out_dir || n == 0) {
        fprintf(stderr, "grip-host: models needs --config FILE, --out DATABASE and at least one model file\n");
        free(files);
        return 2;
    }
    host_cloud *clouds = calloc((size_t)n, sizeof *clouds);
    char err[1024];
    int rc = clouds ? 0 : 1;
    for (int i = 0; clouds && i < n; i++)
        if (cloud_read(files[i], &clouds[i], err, sizeof err) != 0) {
            fprintf(stderr, "grip-host: %s\n", err);
            rc = 1;
        }
    if (rc == 0)
        rc = describe_and_write(o, files, n, clouds);
    for (int i = 0; clouds && i < n; i++)
        host_cloud_free(&clouds[i]);
    free(clouds);
    free(files);
    return rc;
}
