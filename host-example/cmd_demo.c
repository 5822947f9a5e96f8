/* cmd_demo.c -- `grip-host demo`: render a scene of known objects at known poses (host-example/synth.c), run
 * the pipeline on it and compare each found pose with the truth. Needs no data and no config file. */
#include "commands.h"
#include "synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The pipeline the demo runs when no --config is given: PCL's tutorial parameters (the scenes are rendered at
 * the density of a Kinect view, like the tutorial's). Models are complete objects, so at most about half of each
 * is visible: the fitness threshold is lower than for PCL's one-view milk model. */
static const char *const demo_config[] = {
    "descriptor.impl=shot",       "descriptor.normals_k=10",  "descriptor.model_leaf=0.01",
    "descriptor.scene_leaf=0.02", "descriptor.radius=0.02",   "index.impl=bruteforce",
    "match.impl=knn",             "match.k=1",                "match.max_sqdist=0.25",
    "group.impl=hough3d",         "group.frame_radius=0.015", "group.bin_size=0.01",
    "group.threshold=5",          "verify.impl=icp",          "verify.min_fitness=0.15",
    NULL};

/* The true object of model m nearest to pose (by synth_pose_error); its error in *err. -1 if none. */
static int nearest_truth(const synth_scene *sc, uint32_t m, const double pose[16], double *err)
{
    int best = -1;
    *err = INFINITY;
    for (uint32_t o = 0; o < sc->n_objects; o++) {
        if (sc->model_of_object[o] != m)
            continue;
        double e = synth_pose_error(&sc->models[m], sc->poses[o], pose);
        if (e < *err) {
            *err = e;
            best = (int)o;
        }
    }
    return best;
}

/* Prints each accepted instance against the truth; returns the number of objects found within 1 cm. */
static uint32_t report(const synth_scene *sc, const pipeline_result *r)
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
        printf("%-8d %-12s %-10.2f %-10.3f %s\n", o, sc->names[h->model], err * 1e3, h->fitness,
               good ? "correct" : o >= 0 && found && found[o] ? "duplicate" : "WRONG");
    }
    for (uint32_t o = 0; o < sc->n_objects; o++)
        if (found && !found[o])
            printf("%-8u %-12s %-10s %-10s missed\n", o, sc->names[sc->model_of_object[o]], "-", "-");
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
    synth_scene sc;
    char err[512];
    if (synth_generate(&sp, &sc, err, sizeof err) != 0) {
        fprintf(stderr, "grip-host: demo: %s\n", err);
        return 1;
    }
    if (!o->json)
        printf("demo scene (seed %llu): %ux%u organized cloud, %zu finite points, %u objects of %u kinds\n",
               (unsigned long long)o->seed, sc.scene.width, sc.scene.height, host_cloud_count_finite(&sc.scene),
               sc.n_objects, sc.n_models);
    pipeline_result r = {0};
    int rc = host_run_pipeline(o, demo_config, sc.models, (int)sc.n_models, &sc.scene, &r);
    if (rc == 0) {
        if (o->json) {
            pipeline_result_print_json(stdout, &r, sc.names);
        } else {
            pipeline_result_print_text(stdout, &r, sc.names);
            uint32_t found = report(&sc, &r);
            printf("\nfound %u of %u objects within 1 cm of their true pose\n", found, sc.n_objects);
        }
    }
    pipeline_result_free(&r);
    synth_scene_free(&sc);
    return rc;
}
