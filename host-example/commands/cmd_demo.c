/* cmd_demo.c -- `grip-host demo`: render a scene of known objects at known poses (synth/synth.c), run
 * the pipeline on it and compare each found pose with the truth. Needs no data and no config file. */
#include "commands/commands.h"
#include "judge/judge.h"
#include "judge/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Each object is modelled by this many partial views rendered around it (task.c says why). */
#define DEMO_VIEWS 8
/* An instance is correct within this mean model-point distance of its object's true pose, whatever its angle. */
#define DEMO_MAX_DISTANCE 0.01
#define DEMO_ANY_ANGLE 180

/* Prints each accepted instance against the truth, then the objects no instance found. */
static void report(const recognition_task *t, const pipeline_result *r, const judge_result *j)
{
    static const char *const verdicts[] = {"correct", "duplicate", "WRONG"};
    printf("\n%-8s %-12s %-10s %-10s %s\n", "object", "model", "error(mm)", "fitness", "verdict");
    for (size_t i = 0; i < r->n_hypotheses; i++) {
        const pipeline_instance *h = &r->hypotheses[i];
        if (!h->accepted)
            continue;
        int o = j->truth_of_instance[i];
        if (o < 0) /* the nearest object of its model, if any */
            for (size_t k = 0; k < t->n_truth; k++)
                if (t->truth[k].model == h->model && (o < 0 || j->truth_error[k].distance < j->truth_error[o].distance))
                    o = (int)k;
        printf("%-8d %-12s %-10.2f %-10.3f %s\n", o, t->model_names[h->model], j->instance_error[i].distance * 1e3,
               h->fitness, verdicts[j->verdict[i]]);
    }
    for (size_t o = 0; o < t->n_truth; o++)
        if (j->instance_of_truth[o] < 0)
            printf("%-8zu %-12s %-10s %-10s missed\n", o, t->model_names[t->truth[o].model], "-", "-");
}

int cmd_demo(const host_options *o)
{
    synth_params sp;
    synth_params_default(&sp);
    sp.seed = o->seed;
    if (o->objects)
        sp.n_objects = (uint32_t)o->objects;
    sp.model_views = DEMO_VIEWS;
    recognition_task t;
    char err[512];
    if (task_from_synth(&sp, DEMO_MAX_DISTANCE, DEMO_ANY_ANGLE, &t, err, sizeof err) != 0) {
        fprintf(stderr, "grip-host: demo: %s\n", err);
        return 1;
    }
    const synth_scene *sc = &t.synth;
    if (!o->json) {
        printf("demo scene (seed %llu): %ux%u organized cloud, %zu finite points, %u objects; %u model views\n",
               (unsigned long long)o->seed, sc->scene.width, sc->scene.height, host_cloud_count_finite(&sc->scene),
               sc->n_objects, sc->n_models);
        printf("models: %u kinds, each as %u partial views rendered around it\n", sc->n_kinds, sc->views_per_kind);
    }
    pipeline_result r = {0};
    judge_result j = {0};
    int rc = host_run_task(o, task_synth_pipeline, &t, &r);
    if (rc == 0 && judge_recognition(&r, t.truth, t.n_truth, &j) != 0) {
        fprintf(stderr, "grip-host: demo: out of memory\n");
        rc = 1;
    }
    if (rc == 0) {
        if (o->json) {
            pipeline_result_print_json(stdout, &r, t.model_names);
        } else {
            pipeline_result_print_text(stdout, &r, t.model_names);
            report(&t, &r, &j);
            printf("\nfound %u of %u objects within 1 cm of their true pose\n", j.found, sc->n_objects);
        }
        rc = host_write_overlay(o, &t, &r);
    }
    judge_result_free(&j);
    pipeline_result_free(&r);
    task_free(&t);
    return rc;
}
