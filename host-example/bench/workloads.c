/* workloads.c -- see workloads.h. */
#include "bench/workloads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TUTORIAL_MODEL "pcl/data_repo/correspondence_grouping/milk.pcd"
#define TUTORIAL_SCENE "pcl/milk_cartoon_all_small_clorox.pcd"

/* Image sizes by finite points (~81 % of the pixels: measured on the default camera, table and objects). */
static const struct {
    const char *points;
    uint32_t width, height;
} sizes[] = {{"1e5", 400, 300}, {"1e6", 1280, 960}, {"3e6", 2224, 1668}};

/* Objects and views of each kind present by model count (kinds = min(objects, the catalogue's 4)); merged: the
 * kind's views make one model (as grip-host demo models a kind), else each view is a model. */
static const struct {
    const char *models;
    uint32_t objects, views;
    int merged;
} model_sets[] = {{"1", 1, 8, 1}, {"10", 2, 5, 0}, {"100", 16, 25, 0}};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static int unknown(const char *entry, size_t len, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "unknown workload '%.*s' (known: tutorial and synth-PxM with P = 1e5, 1e6 or 3e6 points and M = 1, 10 "
             "or 100 models, e.g. synth-1e6x10; each may end in :REPEAT)",
             (int)len, entry);
    return -1;
}

static int parse_repeat(const char *text, size_t len, int *out)
{
    char buf[16];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    char *end = NULL;
    long v = strtol(buf, &end, 10);
    if (*end || buf[0] == '-' || buf[0] == '+' || v < 1 || v > 1000)
        return -1;
    *out = (int)v;
    return 0;
}

int workload_parse(const char *entry, size_t len, double scale, workload *w, char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    const char *colon = memchr(entry, ':', len);
    size_t name_len = colon ? (size_t)(colon - entry) : len;
    if (colon && parse_repeat(colon + 1, len - name_len - 1, &w->repeat) != 0) {
        snprintf(err, errlen, "workload '%.*s': the repeat after ':' is not an integer in [1, 1000]", (int)len, entry);
        return -1;
    }
    if (name_len == 0 || name_len >= sizeof w->name)
        return unknown(entry, len, err, errlen);
    memcpy(w->name, entry, name_len);
    w->name[name_len] = '\0';
    if (strcmp(w->name, "tutorial") == 0) {
        w->tutorial = 1;
        w->config = "configs/pcl_tutorial.conf";
        return 0;
    }
    for (size_t s = 0; s < N_OF(sizes); s++)
        for (size_t m = 0; m < N_OF(model_sets); m++) {
            char name[sizeof w->name];
            snprintf(name, sizeof name, "synth-%sx%s", sizes[s].points, model_sets[m].models);
            if (strcmp(name, w->name) != 0)
                continue;
            synth_params_default(&w->synth);
            double side = sqrt(scale);
            w->synth.width = (uint32_t)fmax(8, round(sizes[s].width * side));
            w->synth.height = (uint32_t)fmax(8, round(sizes[s].height * side));
            w->synth.n_objects = model_sets[m].objects;
            w->synth.model_views = model_sets[m].views;
            w->merged_views = model_sets[m].merged;
            w->config = "configs/synth_hough3d_icp.conf";
            return 0;
        }
    return unknown(entry, len, err, errlen);
}

static int read_tutorial(const char *data_dir, workload_clouds *c, char *err, size_t errlen)
{
    char model[4096], scene[4096];
    struct stat st;
    snprintf(model, sizeof model, "%s/" TUTORIAL_MODEL, data_dir ? data_dir : "");
    snprintf(scene, sizeof scene, "%s/" TUTORIAL_SCENE, data_dir ? data_dir : "");
    if (!data_dir || !*data_dir || stat(model, &st) != 0 || stat(scene, &st) != 0) {
        snprintf(err, errlen, "the tutorial pair (" TUTORIAL_MODEL ", " TUTORIAL_SCENE ") is not in %s%s",
                 data_dir && *data_dir ? "the data folder " : "",
                 data_dir && *data_dir ? data_dir : "any data folder (give --data DIR or set GRIP_DATA)");
        return 1;
    }
    if (cloud_read(model, &c->files[0], err, errlen) != 0 || cloud_read(scene, &c->files[1], err, errlen) != 0)
        return -1;
    c->clouds = &c->files[0];
    c->n_clouds = 1;
    c->n_models = 1;
    c->scene = &c->files[1];
    c->objects = 1;
    return 0;
}

/* Each view its kind's model: model ids by kind. */
static int merge_views(workload_clouds *c)
{
    const synth_scene *sc = &c->synth;
    c->model_of_cloud = calloc(sc->n_models + 1, sizeof *c->model_of_cloud);
    if (!c->model_of_cloud)
        return -1;
    for (uint32_t m = 0; m < sc->n_models; m++)
        c->model_of_cloud[m] = m / sc->views_per_kind;
    c->n_models = sc->n_kinds;
    return 0;
}

int workload_load(const workload *w, const char *data_dir, uint64_t seed, workload_clouds *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    int rc = 0;
    if (w->tutorial) {
        rc = read_tutorial(data_dir, c, err, errlen);
    } else {
        synth_params p = w->synth;
        p.seed = seed;
        if (synth_generate(&p, &c->synth, err, errlen) != 0) {
            rc = -1;
        } else {
            c->clouds = c->synth.models;
            c->n_clouds = c->synth.n_models;
            c->n_models = c->synth.n_models;
            if (w->merged_views && merge_views(c) != 0) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
            }
            c->scene = &c->synth.scene;
            c->objects = c->synth.n_objects;
        }
    }
    if (rc != 0)
        workload_clouds_free(c);
    return rc;
}

void workload_clouds_free(workload_clouds *c)
{
    free(c->model_of_cloud);
    synth_scene_free(&c->synth);
    host_cloud_free(&c->files[0]);
    host_cloud_free(&c->files[1]);
    memset(c, 0, sizeof *c);
}

size_t workload_model_points(const workload_clouds *c)
{
    size_t n = 0;
    for (uint32_t m = 0; m < c->n_clouds; m++)
        n += c->clouds[m].n;
    return n;
}
