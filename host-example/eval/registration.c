/* registration.c -- see registration.h. Each scene is the whole model, posed and noisy (bologna_make_scene); the
 * pipeline gets the model as its only model and the scene, and its accepted instances are judged against the true
 * pose (judge.h): the instance that found the model gives the pose error, else the nearest accepted one (reported
 * as missed). The scene's viewpoint is the posed model origin, the model's its origin, so that normals are flipped
 * alike in both clouds (as eval descriptors does). */
#include "eval/registration.h"
#include "bench/retrieval.h"
#include "eval/bologna.h"
#include "host_util.h"
#include "judge/judge.h"
#include "judge/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DISTANCE 0.01 /* m: found within 1 cm mean model-point distance ... */
#define MAX_ANGLE 15      /* ... and 15 degrees, as eval recognition */

/* A scene is a whole object, seen from everywhere: fitness counts the whole model (visible_fitness off). Lengths
 * in the scene's resolution (its mean nearest-neighbour distance, ~0.5 mm here), so that one table serves the six
 * models: the SHOT support of 15 resolutions as eval descriptors, keypoints 4 apart, Hough bins a little larger
 * than the noise at 0.5. */
const char *const registration_pipeline[] = {"descriptor.impl=shot",
                                             "descriptor.normals_k=10",
                                             "descriptor.model_leaf=4 mr",
                                             "descriptor.scene_leaf=4 mr",
                                             "descriptor.radius=15 mr",
                                             "index.impl=bruteforce",
                                             "match.impl=knn",
                                             "match.k=1",
                                             "match.max_sqdist=0.25",
                                             "group.impl=hough3d",
                                             "group.frame_radius=15 mr",
                                             "group.bin_size=8 mr",
                                             "group.threshold=5",
                                             "verify.impl=icp",
                                             "verify.visible_fitness=false",
                                             "verify.model_leaf=2 mr",
                                             "verify.max_correspondence_distance=5 mr",
                                             "verify.inlier_distance=3 mr",
                                             "verify.max_rmse=2 mr",
                                             "verify.max_drift=10 mr",
                                             "verify.duplicate_distance=5 mr",
                                             NULL};

typedef struct reg_row {
    int model;
    bologna_scene_info info;
    int ok;    /* the pipeline ran */
    int found; /* an accepted instance within the tolerances */
    uint32_t accepted, false_instances;
    judge_error error; /* of the found instance, else of the nearest accepted one (infinite when none) */
    double seconds;
} reg_row;

typedef struct reg_eval {
    bologna_selection sel;
    reg_row rows[BOLOGNA_MODELS * BOLOGNA_MAX_NOISE];
    int n_rows;
    char pipeline[2048];
} reg_eval;

/* One scene: recognised and judged into row. 0; 1 when the pipeline failed; 2 on a config error. */
static int run_scene(const host_options *o, const host_cloud *model, host_cloud *scene, const double T[16],
                     reg_row *row)
{
    float origin[3] = {0, 0, 0};
    retrieval_apply_pose(T, origin, scene->viewpoint);
    const char *name = bologna_models[row->model].name;
    recognition_task t;
    if (task_from_clouds(model, &name, 1, scene, &t) != 0) {
        fprintf(stderr, "grip-host: eval: out of memory\n");
        return 1;
    }
    judge_truth truth = {0, {0}, model, MAX_DISTANCE, MAX_ANGLE};
    memcpy(truth.pose, T, sizeof truth.pose);
    pipeline_result r = {0};
    judge_result j = {0};
    int rc = task_set_truth(&t, &truth, 1) != 0 ? 1 : 0;
    double t0 = host_now_ms();
    if (rc == 0)
        rc = host_run_task(o, registration_pipeline, &t, &r);
    row->seconds = (host_now_ms() - t0) / 1e3;
    if (rc == 0 && judge_recognition(&r, t.truth, 1, &j) == 0) {
        row->ok = 1;
        row->found = j.instance_of_truth[0] >= 0;
        row->false_instances = j.false_instances;
        row->accepted = j.found + j.false_instances;
        row->error = j.truth_error[0];
    } else if (rc == 0) {
        fprintf(stderr, "grip-host: eval: out of memory\n");
        rc = 1;
    }
    judge_result_free(&j);
    pipeline_result_free(&r);
    task_free(&t);
    return rc == 2 ? 2 : rc ? 1 : 0;
}

/* Every noise level of model mi. The exit status so far. */
static int run_model(const host_options *o, reg_eval *e, int mi)
{
    host_cloud model = {0};
    double mr = 0;
    if (bologna_load_model(&e->sel, mi, &model, &mr) != 0)
        return 1;
    uint64_t rng = bologna_model_rng(o->seed, mi);
    int rc = 0;
    for (int j = 0; j < e->sel.n_noise && rc != 2; j++) {
        reg_row *row = &e->rows[e->n_rows];
        memset(row, 0, sizeof *row);
        row->model = mi;
        host_cloud scene = {0};
        double T[16];
        if (bologna_make_scene(&e->sel, mi, &model, mr, e->sel.noise[j], &rng, &scene, T, &row->info) != 0) {
            rc = 1;
            continue;
        }
        e->n_rows++;
        int r = run_scene(o, &model, &scene, T, row);
        rc = r == 2 ? 2 : rc ? rc : r;
        if (row->ok)
            fprintf(stderr,
                    "%s noise %g (%s, rms %.3f mr): %s, %u accepted, rotation %.3f deg, translation %.3f mm, "
                    "%.1f s\n",
                    bologna_models[mi].name, row->info.noise, row->info.source, row->info.residual_mr,
                    row->found ? "found" : "missed", row->accepted, row->error.angle_deg, 1e3 * row->error.translation,
                    row->seconds);
        host_cloud_free(&scene);
    }
    host_cloud_free(&model);
    return rc;
}

static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

/* Over the rows of noise level j: scenes, found, false instances, and the mean and largest errors of the found. */
typedef struct reg_summary {
    uint32_t scenes, found, false_instances;
    double sum_angle, max_angle, sum_translation, max_translation, sum_distance;
} reg_summary;

static reg_summary summarize(const reg_eval *e, double noise)
{
    reg_summary s = {0};
    for (int i = 0; i < e->n_rows; i++) {
        const reg_row *r = &e->rows[i];
        if (r->info.noise != noise || !r->ok)
            continue;
        s.scenes++;
        s.false_instances += r->false_instances;
        if (!r->found)
            continue;
        s.found++;
        s.sum_angle += r->error.angle_deg;
        s.max_angle = fmax(s.max_angle, r->error.angle_deg);
        s.sum_translation += r->error.translation;
        s.max_translation = fmax(s.max_translation, r->error.translation);
        s.sum_distance += r->error.distance;
    }
    return s;
}

static void write_json(FILE *f, const reg_eval *e)
{
    fputs("{\"evaluation\":\"registration\",\"data\":", f);
    host_json_string(f, e->sel.root);
    fprintf(f, ",\"max_distance\":%g,\"max_angle_deg\":%g,\"pipeline\":", MAX_DISTANCE, (double)MAX_ANGLE);
    host_json_string(f, e->pipeline);
    fputs(",\"scenes\":[", f);
    for (int i = 0; i < e->n_rows; i++) {
        const reg_row *r = &e->rows[i];
        fprintf(f,
                "%s{\"model\":\"%s\",\"noise\":%g,\"source\":\"%s\",\"pose\":\"%s\",\"residual_rms_mr\":%.4f,"
                "\"ok\":%s,\"found\":%s,\"accepted\":%u,\"false_instances\":%u,\"rotation_deg\":",
                i ? "," : "", bologna_models[r->model].name, r->info.noise, r->info.source, r->info.pose,
                r->info.residual_mr, r->ok ? "true" : "false", r->found ? "true" : "false", r->accepted,
                r->false_instances);
        json_number(f, r->ok ? r->error.angle_deg : NAN);
        fputs(",\"translation_mm\":", f);
        json_number(f, r->ok ? 1e3 * r->error.translation : NAN);
        fputs(",\"mean_distance_mm\":", f);
        json_number(f, r->ok ? 1e3 * r->error.distance : NAN);
        fprintf(f, ",\"seconds\":%.3f}", r->seconds);
    }
    fputs("],\"by_noise\":[", f);
    for (int j = 0; j < e->sel.n_noise; j++) {
        reg_summary s = summarize(e, e->sel.noise[j]);
        fprintf(f, "%s{\"noise\":%g,\"scenes\":%u,\"found\":%u,\"false_instances\":%u,\"mean_rotation_deg\":",
                j ? "," : "", e->sel.noise[j], s.scenes, s.found, s.false_instances);
        json_number(f, s.found ? s.sum_angle / s.found : NAN);
        fputs(",\"max_rotation_deg\":", f);
        json_number(f, s.found ? s.max_angle : NAN);
        fputs(",\"mean_translation_mm\":", f);
        json_number(f, s.found ? 1e3 * s.sum_translation / s.found : NAN);
        fputs(",\"max_translation_mm\":", f);
        json_number(f, s.found ? 1e3 * s.max_translation : NAN);
        fputc('}', f);
    }
    fputs("]}\n", f);
}

static void write_markdown(FILE *f, const reg_eval *e)
{
    fprintf(f,
            "Recognition of one Stanford model in each Bologna retrieval scene (the whole model, posed, Gaussian "
            "noise per axis in Bologna mesh resolutions); found when an accepted instance lies within %.0f mm mean "
            "model-point distance and %.0f° of the true pose; the errors are those of that instance (of the nearest "
            "accepted one, in brackets, when the model was missed). Pipeline: %s.\n\n"
            "| model | noise | scene | found | accepted | false | rotation (°) | translation (mm) | mean dist. (mm) "
            "| s |\n|---|---:|---|---|---:|---:|---:|---:|---:|---:|\n",
            1e3 * MAX_DISTANCE, (double)MAX_ANGLE, e->pipeline);
    for (int i = 0; i < e->n_rows; i++) {
        const reg_row *r = &e->rows[i];
        fprintf(f, "| %s | %g | %s | ", bologna_models[r->model].name, r->info.noise, r->info.source);
        if (!r->ok) {
            fputs("failed | – | – | – | – | – | – |\n", f);
            continue;
        }
        const char *open = r->found ? "" : "(", *close = r->found ? "" : ")";
        fprintf(f, "%s | %u | %u | ", r->found ? "yes" : "no", r->accepted, r->false_instances);
        if (isfinite(r->error.angle_deg))
            fprintf(f, "%s%.3f%s | %s%.3f%s | %s%.3f%s | ", open, r->error.angle_deg, close, open,
                    1e3 * r->error.translation, close, open, 1e3 * r->error.distance, close);
        else
            fputs("– | – | – | ", f);
        fprintf(f, "%.1f |\n", r->seconds);
    }
    fputs("\n| noise | found | false per scene | mean rotation (°) | max rotation (°) | mean translation (mm) | max "
          "translation (mm) |\n|---:|---:|---:|---:|---:|---:|---:|\n",
          f);
    for (int j = 0; j < e->sel.n_noise; j++) {
        reg_summary s = summarize(e, e->sel.noise[j]);
        fprintf(f, "| %g | %u/%u | %.2f | ", e->sel.noise[j], s.found, s.scenes,
                s.scenes ? (double)s.false_instances / s.scenes : 0);
        if (s.found)
            fprintf(f, "%.3f | %.3f | %.3f | %.3f |\n", s.sum_angle / s.found, s.max_angle,
                    1e3 * s.sum_translation / s.found, 1e3 * s.max_translation);
        else
            fputs("– | – | – | – |\n", f);
    }
}

static int write_out(const char *dir, const reg_eval *e)
{
    if (host_make_dir(dir, "eval") != 0)
        return 1;
    int bad = 0;
    for (int k = 0; k < 2; k++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/registration.%s", dir, k ? "md" : "json");
        FILE *f = fopen(path, "w");
        if (f)
            (k ? write_markdown : write_json)(f, e);
        if (!f || fclose(f) != 0) {
            fprintf(stderr, "grip-host: eval: cannot write %s\n", path);
            bad = 1;
        }
    }
    return bad;
}

int eval_registration(const host_options *o)
{
    reg_eval *e = calloc(1, sizeof *e);
    if (!e) {
        fprintf(stderr, "grip-host: eval: out of memory\n");
        return 1;
    }
    int rc = bologna_select(o, "eval registration", "0.1,0.3,0.5", &e->sel);
    if (rc != 0) {
        free(e);
        return rc;
    }
    size_t at = (size_t)snprintf(e->pipeline, sizeof e->pipeline, "%s",
                                 o->config ? o->config : "registration.c's (SHOT, Hough 3D, ICP)");
    for (int i = 0; i < o->n_sets && at < sizeof e->pipeline; i++)
        at += (size_t)snprintf(e->pipeline + at, sizeof e->pipeline - at, " --set %s", o->sets[i]);
    for (int mi = 0; mi < BOLOGNA_MODELS && rc != 2; mi++)
        if (e->sel.use_model[mi]) {
            int r = run_model(o, e, mi);
            rc = r == 2 ? 2 : rc ? rc : r;
        }
    if (rc != 2 && e->n_rows > 0) {
        if (o->json)
            write_json(stdout, e);
        else
            write_markdown(stdout, e);
        if (o->out_dir && write_out(o->out_dir, e) != 0)
            rc = rc ? rc : 1;
    }
    free(e);
    return rc;
}
