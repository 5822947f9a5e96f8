/* cmd_demo.c -- `grip-host demo`: render a scene of known objects at known poses (synth/synth.c), run
 * the pipeline on it and compare each found pose with the truth. Needs no data and no config file. */
#include "commands/commands.h"
#include "synth/synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The pipeline the demo runs when no --config is given. Each object is modelled by partial views rendered around
 * it (DEMO_VIEWS), like PCL's one-view milk model: a local descriptor of a complete surface would mix in surface
 * the camera never sees. Unlike the tutorial's model, which is cut out of its scene, these views are sampled
 * differently from the noisy scene (1 mm), so normals come from a 1 cm radius instead of 10 neighbours, SHOT
 * takes a wider support, and Hough votes in the SHOT frames of each view (BOARD frames of the merged views would
 * mix the views). The RMSE bound allows for the scene's noise. */
#define DEMO_VIEWS 8

static const char *const demo_config[] = {
    "descriptor.impl=shot",         "descriptor.normals_k=0",       "descriptor.normals_radius=0.01",
    "descriptor.model_leaf=0.007",  "descriptor.scene_leaf=0.015",  "descriptor.radius=0.035",
    "index.impl=bruteforce",        "match.impl=knn",               "match.k=1",
    "match.max_sqdist=0.25",        "group.impl=hough3d",           "group.frames=descriptor",
    "group.bin_size=0.01",          "group.threshold=5",            "verify.impl=icp",
    "verify.max_rmse=0.004",        NULL};

/* The pipeline's model ids are the scene's kinds (numbered in order of first use): all views of a kind make
 * one model, in the kind's frame. */
static uint32_t kind_of_object(const synth_scene *sc, uint32_t o)
{
    return sc->model_of_object[o] / sc->views_per_kind;
}

/* The true object of kind k nearest to pose (by synth_pose_error on the kind's complete surface); its error in
 * *err. -1 if none. */
static int nearest_truth(const synth_scene *sc, uint32_t k, const double pose[16], double *err)
{
    int best = -1;
    *err = INFINITY;
    for (uint32_t o = 0; o < sc->n_objects; o++) {
        if (kind_of_object(sc, o) != k)
            continue;
        double e = synth_pose_error(&sc->complete[k], sc->poses[o], pose);
        if (e < *err) {
            *err = e;
            best = (int)o;
        }
    }
    return best;
}

/* Prints each accepted instance against the truth; returns the number of objects found within 1 cm. */
static uint32_t report(const synth_scene *sc, const pipeline_result *r, const char *const *kind_names)
{
    int *found = calloc(sc->n_objects + 1, sizeof *found);
    uint32_t n_found = 0;
    printf("\n%-8s %-12s %-10s %-10s %s\n", "object", "model", "error(mm)", "fitness", "verdict");
    for (size_t i = 0; i < r->n_hypotheses; i++) {
        const pipeline_instance *h = &r->hypotheses[i];
        if (!h->accepted)
            continue;
        double err;
        int o = nearest_truth(sc, h->model, h->pose, &err);
        int good = o >= 0 && err < 0.01 && found && !found[o];
        if (good) {
            found[o] = 1;
            n_found++;
        }
        printf("%-8d %-12s %-10.2f %-10.3f %s\n", o, kind_names[h->model], err * 1e3, h->fitness,
               good ? "correct" : o >= 0 && found && found[o] ? "duplicate" : "WRONG");
    }
    for (uint32_t o = 0; o < sc->n_objects; o++)
        if (found && !found[o])
            printf("%-8u %-12s %-10s %-10s missed\n", o, kind_names[kind_of_object(sc, o)], "-", "-");
    free(found);
    return n_found;
}

int cmd_demo(const host_options *o)
{
    synth_params sp;
    synth_params_default(&sp);
    sp.seed = o->seed;
    if (o->objects)
        sp.n_objects = (uint32_t)o->objects;
    sp.model_views = DEMO_VIEWS;
    synth_scene sc;
    char err[512];
    if (synth_generate(&sp, &sc, err, sizeof err) != 0) {
        fprintf(stderr, "grip-host: demo: %s\n", err);
        return 1;
    }
    if (!o->json)
        printf("demo scene (seed %llu): %ux%u organized cloud, %zu finite points, %u objects; %u model views\n",
               (unsigned long long)o->seed, sc.scene.width, sc.scene.height, host_cloud_count_finite(&sc.scene),
               sc.n_objects, sc.n_models);
    if (!o->json)
        printf("models: %u kinds, each as %u partial views rendered around it\n", sc.n_kinds, sc.views_per_kind);
    pipeline_result r = {0};
    uint32_t *kind_of_view = calloc(sc.n_models + 1, sizeof *kind_of_view);
    const char **kind_names = calloc(sc.n_kinds + 1, sizeof *kind_names);
    if (!kind_of_view || !kind_names) {
        fprintf(stderr, "grip-host: demo: out of memory\n");
        free(kind_of_view);
        free(kind_names);
        synth_scene_free(&sc);
        return 1;
    }
    for (uint32_t m = 0; m < sc.n_models; m++) {
        kind_of_view[m] = m / sc.views_per_kind;
        kind_names[kind_of_view[m]] = synth_kind_name(sc.kind_of_model[m]);
    }
    int rc = host_run_pipeline(o, demo_config, sc.models, (int)sc.n_models, kind_of_view, sc.n_kinds, &sc.scene, &r);
    if (rc == 0) {
        if (o->json) {
            pipeline_result_print_json(stdout, &r, kind_names);
        } else {
            pipeline_result_print_text(stdout, &r, kind_names);
            uint32_t found = report(&sc, &r, kind_names);
            printf("\nfound %u of %u objects within 1 cm of their true pose\n", found, sc.n_objects);
        }
    }
    pipeline_result_free(&r);
    free(kind_of_view);
    free(kind_names);
    synth_scene_free(&sc);
    return rc;
}
