/* recognition.h -- the figures of `grip-host eval recognition`: over many generated scenes, the recognition rate,
 * false positives per scene and pose errors (mean model-point distance, rotation angle, translation), overall and
 * binned by each object's occlusion (1 - its visible fraction, synth.h), and how they are written: JSON, a
 * Markdown table and an SVG chart of the rate per bin. */
#ifndef GRIP_HOST_EVAL_RECOGNITION_H
#define GRIP_HOST_EVAL_RECOGNITION_H

#include <stdint.h>
#include <stdio.h>

#include "judge/judge.h"
#include "judge/task.h"

/* Occlusion bins: [0, 10 %), [10, 20 %), ... [60, 70 %), then [70, 100 %]. */
#define EVAL_BINS 8

typedef struct eval_tally {
    uint32_t objects, found;
    uint32_t rejected; /* missed, though verification rejected a hypothesis within the tolerances */
    double sum_distance, sum_angle_deg, sum_translation; /* over the found objects */
    double max_distance, max_angle_deg, max_translation;
} eval_tally;

/* Zero-initialise, then eval_add_scene() for each scene. */
typedef struct eval_recognition {
    uint32_t scenes, failed_scenes; /* failed: the scene could not be generated or the pipeline failed */
    uint32_t false_instances, duplicates;
    double seconds; /* in the pipeline, all scenes */
    eval_tally all, bins[EVAL_BINS];
    uint32_t rejected_by[EXPLAIN_REASONS]; /* the missed objects of all.rejected, by what rejected the hypothesis
                                              within their tolerances (grip_verdict_reason) */
} eval_recognition;

/* The bin of an occlusion (0..1). */
int eval_bin_of(double occlusion);

/* Adds one scene, r as judge_recognition() judged it into j (t must know each object's visible fraction). */
void eval_add_scene(eval_recognition *e, const recognition_task *t, const pipeline_result *r, const judge_result *j,
                    double seconds);

/* What the run was, for the reports' headers. */
typedef struct eval_setup {
    uint64_t first_seed;
    uint32_t scenes, min_objects, max_objects;
    double max_distance, max_angle_deg, noise_sigma, min_visible_fraction;
    double camera_elevation_deg, spread; /* objects within spread * sqrt(objects) m of the table centre */
    const char *pipeline;                /* how the pipeline was configured, one line */
    const char *objects_from;            /* what the objects are, e.g. "the catalogue", "Stanford models: bunny" */
    double noise_mr;                     /* noise_sigma in mesh resolutions, or NaN when not given in them */
} eval_setup;

void eval_write_json(FILE *f, const eval_setup *s, const eval_recognition *e);
void eval_write_markdown(FILE *f, const eval_setup *s, const eval_recognition *e);
void eval_write_svg(FILE *f, const eval_setup *s, const eval_recognition *e);

#endif
