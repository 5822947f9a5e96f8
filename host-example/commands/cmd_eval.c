/* cmd_eval.c -- `grip-host eval descriptors` (eval/descriptors.h), `grip-host eval registration`
 * (eval/registration.h) and `grip-host eval recognition`: N generated scenes of 3-5 objects (--objects N: that many),
 * occlusion up to 70 %, each recognised by the pipeline (the demo's unless --config is given) and judged against its
 * truth; the figures (eval/recognition.h) go to stdout as a Markdown table (or JSON with --json) and, with --out
 * DIR, to DIR/recognition.{json,md,svg}. The objects are the catalogue's, or with --data (or --models, --noise) the
 * Stanford models of the Bologna data rendered from their meshes, one set of scenes per noise level in mesh
 * resolutions (default 0.1, 0.3, 0.5; files DIR/recognition_noise_<level>.*). Progress goes to stderr, one line a
 * scene. */
#include "commands/commands.h"
#include "eval/bologna.h"
#include "eval/descriptors.h"
#include "eval/recognition.h"
#include "eval/registration.h"
#include "eval/stanford.h"
#include "host_util.h"
#include "judge/judge.h"
#include "judge/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVAL_DEFAULT_SCENES 20
#define EVAL_MIN_OBJECTS 3
#define EVAL_MAX_OBJECTS 5
#define EVAL_MIN_VISIBLE 0.3 /* occlusion up to 70 % */
#define EVAL_MODEL_VIEWS 8   /* as the demo */
/* A lower camera and objects closer together than synth's defaults (50 degrees, 0.1 m * sqrt(objects)), so that
 * objects hide one another: over seeds 1-40 about a third of the objects are 10-70 % occluded, the rest less. */
#define EVAL_CAMERA_ELEVATION 30
#define EVAL_SPREAD 0.07
#define EVAL_MAX_DISTANCE 0.01 /* m: found within 1 cm mean model-point distance ... */
#define EVAL_MAX_ANGLE 15      /* ... and 15 degrees */
#define EVAL_SEED_STRIDE 1000  /* a scene that cannot be placed is drawn again with seed + this */
#define EVAL_PLACEMENT_TRIES 5

/* One scene: generated (redrawn with another seed when its objects cannot be placed), recognised, judged. */
static int eval_scene(const host_options *o, synth_params *sp, eval_recognition *e)
{
    recognition_task t;
    char err[512];
    int rc = -1;
    uint64_t seed = sp->seed;
    for (int k = 0; k < EVAL_PLACEMENT_TRIES && rc != 0; k++) {
        sp->seed = seed + (uint64_t)k * EVAL_SEED_STRIDE;
        rc = task_from_synth(sp, EVAL_MAX_DISTANCE, EVAL_MAX_ANGLE, &t, err, sizeof err);
    }
    if (rc != 0) {
        fprintf(stderr, "grip-host: eval: seed %llu: %s\n", (unsigned long long)seed, err);
        e->failed_scenes++;
        return -1;
    }
    pipeline_result r = {0};
    judge_result j = {0};
    double t0 = host_now_ms();
    rc = host_run_task(o, task_synth_pipeline, &t, &r);
    double seconds = (host_now_ms() - t0) / 1e3;
    if (rc == 0 && judge_recognition(&r, t.truth, t.n_truth, &j) == 0) {
        eval_add_scene(e, &t, &r, &j, seconds);
        fprintf(stderr, "scene %u (seed %llu, %zu objects, visible", e->scenes, (unsigned long long)sp->seed,
                t.n_truth);
        for (size_t i = 0; i < t.n_truth; i++)
            fprintf(stderr, " %.0f%%", 100 * t.visible_fraction[i]);
        fprintf(stderr, "): found %u, %u false, %.1f s\n", j.found, j.false_instances, seconds);
    } else {
        fprintf(stderr, "grip-host: eval: seed %llu: the pipeline failed\n", (unsigned long long)sp->seed);
        e->failed_scenes++;
        rc = rc == 2 ? 2 : -1;
    }
    judge_result_free(&j);
    pipeline_result_free(&r);
    task_free(&t);
    return rc;
}

static int write_file(const char *dir, const char *stem, const char *ext, const eval_setup *s,
                      const eval_recognition *e, void (*writer)(FILE *, const eval_setup *, const eval_recognition *))
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s", dir, stem, ext);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "grip-host: eval: cannot write %s\n", path);
        return -1;
    }
    writer(f, s, e);
    if (fclose(f) != 0) {
        fprintf(stderr, "grip-host: eval: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

/* One line saying how the pipeline was configured. */
static void describe_pipeline(const host_options *o, char *buf, size_t n)
{
    size_t at = (size_t)snprintf(buf, n, "%s", o->config ? o->config : "the demo's (task.c)");
    if (o->views == 0 && at < n)
        at += (size_t)snprintf(buf + at, n - at, ", complete models (--views 0)");
    else if (o->views > 0 && at < n)
        at += (size_t)snprintf(buf + at, n - at, ", %d views a model (--views)", o->views);
    for (int i = 0; i < o->n_sets && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, " --set %s", o->sets[i]);
}

/* setup->scenes scenes of sp's kinds, tallied into *e and written (stdout; DIR/<stem>.{json,md,svg} with --out).
 * The exit status: 0, 1 when a scene failed or a file could not be written, 2 on a config error. */
static int run_scenes(const host_options *o, synth_params *sp, const eval_setup *setup, const char *stem)
{
    eval_recognition e;
    memset(&e, 0, sizeof e);
    for (uint32_t i = 0; i < setup->scenes; i++) {
        /* the object count follows the seed, so that seeds 1-100 are the same scenes in one run or in parts */
        sp->seed = setup->first_seed + i;
        sp->n_objects = setup->min_objects + (uint32_t)((sp->seed - 1) % (setup->max_objects - setup->min_objects + 1));
        sp->placement_radius = EVAL_SPREAD * sqrt((double)sp->n_objects);
        if (eval_scene(o, sp, &e) == 2)
            return 2; /* a config error: every scene would fail alike */
    }
    if (o->json)
        eval_write_json(stdout, setup, &e);
    else
        eval_write_markdown(stdout, setup, &e);
    int bad = 0;
    if (o->out_dir)
        bad = host_make_dir(o->out_dir, "eval") != 0 ||
              write_file(o->out_dir, stem, "json", setup, &e, eval_write_json) != 0 ||
              write_file(o->out_dir, stem, "md", setup, &e, eval_write_markdown) != 0 ||
              write_file(o->out_dir, stem, "svg", setup, &e, eval_write_svg) != 0;
    return bad || e.failed_scenes ? 1 : 0;
}

/* The Stanford models' scenes: one run of run_scenes per noise level (in mesh resolutions), files
 * DIR/recognition_noise_<level>.*. */
static int stanford_scenes(const host_options *o, synth_params *sp, eval_setup *setup)
{
    bologna_selection sel;
    int rc = bologna_select(o, "eval recognition --data", "0.1,0.3,0.5", &sel);
    if (rc != 0)
        return rc;
    synth_mesh meshes[BOLOGNA_MODELS];
    memset(meshes, 0, sizeof meshes);
    uint32_t n = 0;
    double unit = 0;
    rc = stanford_meshes_load(&sel, meshes, &n, &unit);
    char from[256];
    size_t at = (size_t)snprintf(from, sizeof from, "Stanford models:");
    for (uint32_t k = 0; k < n && at < sizeof from; k++)
        at += (size_t)snprintf(from + at, sizeof from - at, "%s %s", k ? "," : "", meshes[k].name);
    setup->objects_from = from;
    sp->meshes = meshes;
    sp->n_meshes = n;
    for (int j = 0; j < sel.n_noise && rc == 0; j++) {
        sp->noise_sigma = sel.noise[j] * unit;
        setup->noise_sigma = sp->noise_sigma;
        setup->noise_mr = sel.noise[j];
        char stem[64];
        snprintf(stem, sizeof stem, "recognition_noise_%g", sel.noise[j]);
        if (!o->json)
            printf("%s### Noise %g mesh resolutions\n\n", j ? "\n" : "", sel.noise[j]);
        int r = run_scenes(o, sp, setup, stem);
        rc = r == 2 ? 2 : rc ? rc : r;
        if (r == 2)
            break;
    }
    for (uint32_t k = 0; k < n; k++)
        synth_mesh_free(&meshes[k]);
    return rc;
}

static int eval_recognition_cmd(const host_options *o)
{
    synth_params sp;
    synth_params_default(&sp);
    sp.model_views = o->views >= 0 ? (uint32_t)o->views : EVAL_MODEL_VIEWS;
    sp.min_visible_fraction = EVAL_MIN_VISIBLE;
    sp.camera_elevation_deg = EVAL_CAMERA_ELEVATION;
    char pipeline[2048];
    describe_pipeline(o, pipeline, sizeof pipeline);
    eval_setup setup = {o->seed,
                        o->scenes ? (uint32_t)o->scenes : EVAL_DEFAULT_SCENES,
                        o->objects ? (uint32_t)o->objects : EVAL_MIN_OBJECTS,
                        o->objects ? (uint32_t)o->objects : EVAL_MAX_OBJECTS,
                        EVAL_MAX_DISTANCE,
                        EVAL_MAX_ANGLE,
                        sp.noise_sigma,
                        sp.min_visible_fraction,
                        sp.camera_elevation_deg,
                        EVAL_SPREAD,
                        pipeline,
                        "the catalogue",
                        NAN};
    if (o->data_dir || o->noise || o->model_names)
        return stanford_scenes(o, &sp, &setup);
    return run_scenes(o, &sp, &setup, "recognition");
}

int cmd_eval(const host_options *o)
{
    if (o->n_args == 1 && strcmp(o->args[0], "recognition") == 0)
        return eval_recognition_cmd(o);
    if (o->n_args == 1 && strcmp(o->args[0], "descriptors") == 0)
        return eval_descriptors(o);
    if (o->n_args == 1 && strcmp(o->args[0], "registration") == 0)
        return eval_registration(o);
    fprintf(stderr, "grip-host: eval needs what to evaluate: eval recognition [--scenes N] [--objects N] [--seed N] "
                    "[--out DIR] [--config FILE] [--set ...] [--json] [--data DIR [--models LIST] [--noise LIST]], "
                    "eval descriptors [--data DIR] [--keypoints N] [--noise LIST] [--models LIST] [--seed N] "
                    "[--out DIR] [--set ...] [--json], or eval registration [--data DIR] [--models LIST] "
                    "[--noise LIST] [--seed N] [--out DIR] [--config FILE] [--set ...] [--json]\n");
    return 2;
}
