/* bologna.c -- see bologna.h. */
#include "eval/bologna.h"
#include "bench/retrieval.h"
#include "host_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const bologna_model bologna_models[BOLOGNA_MODELS] = {
    {"bunny", "bun_zipper_0.ply", 0},
    {"dragon", "dragon_vrip_res2_0.ply", 1},
    {"asian_dragon", "xyzrgb_dragon_vr3_small_scaled_0.ply", 2},
    {"armadillo", "Armadillo_vres2_small_scaled_0.ply", 3},
    {"buddha", "happy_vrip_res3_0.ply", 4},
    {"statuette", "xyzrgb_statuette_vr3_small_scaled_0.ply", 5},
};

static int parse_noise(const char *list, bologna_selection *s)
{
    const char *p = list;
    s->n_noise = 0;
    while (*p) {
        char *end = NULL;
        double v = strtod(p, &end);
        if (end == p || !(v >= 0 && v <= 10) || (*end && *end != ',') || s->n_noise == BOLOGNA_MAX_NOISE) {
            fprintf(stderr,
                    "grip-host: eval: --noise wants up to %d comma-separated levels from 0 to 10 (mesh "
                    "resolutions), e.g. 0.1,0.3,0.5; got '%s'\n",
                    BOLOGNA_MAX_NOISE, list);
            return -1;
        }
        s->noise[s->n_noise++] = v;
        p = *end ? end + 1 : end;
    }
    return s->n_noise ? 0 : -1;
}

static int parse_models(const char *list, bologna_selection *s)
{
    memset(s->use_model, 0, sizeof s->use_model);
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        int found = 0;
        for (int i = 0; i < BOLOGNA_MODELS; i++)
            if (strlen(bologna_models[i].name) == len && strncmp(p, bologna_models[i].name, len) == 0)
                found = s->use_model[i] = 1;
        if (!found) {
            fprintf(stderr,
                    "grip-host: eval: --models: unknown model '%.*s' (known: bunny, dragon, asian_dragon, "
                    "armadillo, buddha, statuette)\n",
                    (int)len, p);
            return -1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

int bologna_select(const host_options *o, const char *command, const char *default_noise, bologna_selection *s)
{
    memset(s, 0, sizeof *s);
    const char *data = o->data_dir ? o->data_dir : getenv("GRIP_DATA");
    if (!data || !*data) {
        fprintf(stderr,
                "grip-host: %s needs the shared data folder holding bologna_retrieval/: --data DIR or "
                "$GRIP_DATA\n",
                command);
        return 2;
    }
    snprintf(s->root, sizeof s->root, "%s/bologna_retrieval", data);
    if (parse_noise(o->noise ? o->noise : default_noise, s) != 0)
        return 2;
    if (o->model_names) {
        if (parse_models(o->model_names, s) != 0)
            return 2;
    } else {
        for (int i = 0; i < BOLOGNA_MODELS; i++)
            s->use_model[i] = 1;
    }
    char readme[4200];
    snprintf(readme, sizeof readme, "%s/README.md", s->root);
    if (!host_file_readable(readme)) {
        fprintf(stderr,
                "grip-host: %s: the Bologna retrieval data is absent: %s not found (get it as "
                "../shared/data/bologna_retrieval/README.md describes, then pass --data DIR)\n",
                command, readme);
        return 1;
    }
    return 0;
}

int bologna_load_model(const bologna_selection *s, int mi, host_cloud *model, double *mr)
{
    char path[4200], err[1024];
    snprintf(path, sizeof path, "%s/models/%s", s->root, bologna_models[mi].file);
    if (cloud_read(path, model, err, sizeof err) != 0) {
        fprintf(stderr, "grip-host: eval: %s\n", err);
        return 1;
    }
    *mr = retrieval_mesh_resolution(model);
    if (!(*mr > 0)) {
        fprintf(stderr, "grip-host: eval: %s: cannot measure its mesh resolution\n", path);
        host_cloud_free(model);
        return 1;
    }
    return 0;
}

uint64_t bologna_model_rng(uint64_t seed, int mi)
{
    return seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(mi + 1));
}

int bologna_make_scene(const bologna_selection *s, int mi, const host_cloud *model, double mr, double noise,
                       uint64_t *rng, host_cloud *scene, double T[16], bologna_scene_info *info)
{
    char path[4200], err[1024];
    const bologna_model *m = &bologna_models[mi];
    memset(scene, 0, sizeof *scene);
    snprintf(path, sizeof path, "%s/gt/Scene%d-rs0.xf", s->root, m->scene);
    int have_pose = host_file_readable(path);
    if (have_pose && retrieval_read_xf(path, T, err, sizeof err) != 0) {
        fprintf(stderr, "grip-host: eval: %s\n", err);
        return 1;
    }
    info->noise = noise;
    snprintf(path, sizeof path, "%s/scenes/Scene%d_0.1.ply", s->root, m->scene);
    if (have_pose && fabs(noise - 0.1) < 1e-9 && host_file_readable(path)) {
        if (cloud_read(path, scene, err, sizeof err) != 0) {
            fprintf(stderr, "grip-host: eval: %s\n", err);
            return 1;
        }
        if (scene->n != model->n) {
            fprintf(stderr,
                    "grip-host: eval: %s has %zu points, its model %zu: scene vertex k must be model "
                    "vertex k\n",
                    path, scene->n, model->n);
            host_cloud_free(scene);
            return 1;
        }
        info->source = info->pose = "published";
    } else {
        if (!have_pose)
            retrieval_random_pose(rng, T);
        snprintf(path, sizeof path, "%s-noise-%g", m->name, noise);
        if (retrieval_noisy_copy(model, T, noise * BOLOGNA_NOISE_UNIT_MR * mr, rng, path, scene) != 0) {
            fprintf(stderr, "grip-host: eval: out of memory for a scene of %zu points\n", model->n);
            return 1;
        }
        info->source = "generated";
        info->pose = have_pose ? "published" : "random";
    }
    info->residual_mr = retrieval_residual(model, scene, T) / mr;
    return 0;
}
