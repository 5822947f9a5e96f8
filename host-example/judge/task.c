/* task.c -- see task.h. */
#include "judge/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pipeline for generated scenes. Each object is modelled by partial views rendered around it, like PCL's
 * one-view milk model: a local descriptor of a complete surface would mix in surface the camera never sees. Unlike
 * the tutorial's model, which is cut out of its scene, these views are sampled differently from the noisy scene
 * (1 mm), so normals come from a 1 cm radius instead of 10 neighbours, SHOT takes a wider support, and Hough votes
 * in the SHOT frames of each view (BOARD frames of the merged views would mix the views). The RMSE bound allows
 * for the scene's noise.
 *
 * What finds more objects here also makes more false ones, and each of those has its own check:
 *  - two matches a scene keypoint, 1.5 cm Hough bins, 8 votes: more of an occluded object's correspondences reach
 *    a bin;
 *  - three RANSAC rounds a bin: a mug's body votes for the mug's centre from every angle, so a bin's first
 *    consensus set may hold the mug turned wrongly about its axis (the free-space check then rejects it and the mug
 *    is missed); further sets offer other turns;
 *  - duplicates by centre: of two accepted poses of one model centred within 3 cm of each other (one object: the
 *    catalogue's are 8 cm across or more) the fitter stays; and of two poses (any models) that share a fifth of
 *    their points' space, as a bracket turned end for end that shares its upright with the real one;
 *  - the table as a support: a flat face of the bracket fits the table itself, the rest of the bracket sunk
 *    beneath it; no model may have more than a tenth of its points 1 cm under the scene's dominant plane.
 * On 100 scenes (seeds 1-100, GPU) one match, 1 cm bins, 6 votes and none of the checks found 358 of 399 objects
 * with 11 false; these settings 380 with 9 (each setting's share: docs/evaluation.md). */
const char *const task_synth_pipeline[] = {"pipeline.unit=m",
                                           "descriptor.impl=shot",
                                           "descriptor.normals_k=0",
                                           "descriptor.normals_radius=0.01",
                                           "descriptor.model_leaf=0.007",
                                           "descriptor.scene_leaf=0.01",
                                           "descriptor.radius=0.035",
                                           "index.impl=bruteforce",
                                           "match.impl=knn",
                                           "match.k=2",
                                           "match.max_sqdist=0.25",
                                           "group.impl=hough3d",
                                           "group.frames=descriptor",
                                           "group.bin_size=0.015",
                                           "group.threshold=8",
                                           "group.ransac_rounds=3",
                                           "verify.impl=icp",
                                           "verify.max_rmse=0.004",
                                           "verify.duplicate_center_distance=0.03",
                                           "verify.support_margin=0.01",
                                           "verify.max_overlap=0.2",
                                           NULL};

static int alloc_models(recognition_task *t, uint32_t n_models)
{
    t->n_models = n_models;
    t->model_names = calloc(n_models + 1, sizeof *t->model_names);
    t->model_points = calloc(n_models + 1, sizeof *t->model_points);
    return t->model_names && t->model_points ? 0 : -1;
}

int task_from_synth(const synth_params *p, double max_distance, double max_angle_deg, recognition_task *t, char *err,
                    size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (synth_generate(p, &t->synth, err, errlen) != 0)
        return -1;
    const synth_scene *sc = &t->synth;
    t->clouds = sc->models;
    t->n_clouds = sc->n_models;
    t->scene = &sc->scene;
    t->n_truth = sc->n_objects;
    t->model_of_cloud = calloc(sc->n_models + 1, sizeof *t->model_of_cloud);
    t->truth = calloc(sc->n_objects + 1, sizeof *t->truth);
    t->visible_fraction = calloc(sc->n_objects + 1, sizeof *t->visible_fraction);
    if (alloc_models(t, sc->n_kinds) != 0 || !t->model_of_cloud || !t->truth || !t->visible_fraction) {
        snprintf(err, errlen, "synth: out of memory");
        task_free(t);
        return -1;
    }
    for (uint32_t m = 0; m < sc->n_models; m++) {
        uint32_t k = m / sc->views_per_kind;
        t->model_of_cloud[m] = k;
        t->model_names[k] = sc->complete[k].path; /* the catalogue's or the mesh's name */
        t->model_points[k] = &sc->complete[k];
    }
    for (uint32_t o = 0; o < sc->n_objects; o++) {
        judge_truth *j = &t->truth[o];
        j->model = sc->model_of_object[o] / sc->views_per_kind;
        memcpy(j->pose, sc->poses[o], sizeof j->pose);
        j->points = &sc->complete[j->model];
        j->max_distance = max_distance;
        j->max_angle_deg = max_angle_deg;
        t->visible_fraction[o] = sc->visible_fraction[o];
    }
    return 0;
}

int task_from_clouds(const host_cloud *models, const char *const *names, uint32_t n_models, const host_cloud *scene,
                     recognition_task *t)
{
    memset(t, 0, sizeof *t);
    t->clouds = models;
    t->n_clouds = n_models;
    t->scene = scene;
    if (alloc_models(t, n_models) != 0) {
        task_free(t);
        return -1;
    }
    for (uint32_t m = 0; m < n_models; m++) {
        t->model_names[m] = names[m];
        t->model_points[m] = &models[m];
    }
    return 0;
}

int task_set_truth(recognition_task *t, const judge_truth *truth, size_t n)
{
    judge_truth *copy = malloc((n + 1) * sizeof *copy);
    if (!copy)
        return -1;
    memcpy(copy, truth, n * sizeof *copy);
    for (size_t i = 0; i < n; i++)
        if (!copy[i].points && copy[i].model < t->n_models)
            copy[i].points = t->model_points[copy[i].model];
    free(t->truth);
    t->truth = copy;
    t->n_truth = n;
    return 0;
}

void task_free(recognition_task *t)
{
    if (!t)
        return;
    free(t->model_of_cloud);
    free((void *)t->model_names);
    free((void *)t->model_points);
    free(t->truth);
    free(t->visible_fraction);
    synth_scene_free(&t->synth);
    memset(t, 0, sizeof *t);
}
