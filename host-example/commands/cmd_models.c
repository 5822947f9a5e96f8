/* cmd_models.c -- `grip-host models --config C --out DB M1.ply M2.pcd ...`: describes each model cloud once with the
 * config's descriptor stage and writes the model database (model_db.h) that `run --models DB` loads instead. */
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
        double t0 = host_now_ms();
        if (pipeline_describe_models(&p, clouds, (uint32_t)n, NULL, 0, files, &set, &diag) != 0)
            rc = 1;
        double ms = host_now_ms() - t0;
        if (rc == 0 && model_db_write(o->out_dir, &set, err, sizeof err) != 0) {
            grip_diag_add(&diag, "%s", err);
            rc = 1;
        }
        if (rc == 0)
            printf("%s: %u models, %llu keypoints, descriptors of %u values, described in %.1f ms\n", o->out_dir,
                   set.n_models, (unsigned long long)set.rows, set.dim, ms);
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
