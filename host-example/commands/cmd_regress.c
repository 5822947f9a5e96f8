/* cmd_regress.c -- `grip-host regress CASE...`: runs each case (regress/case.h) through the pipeline runner,
 * judges what it found against the expected instances (judge/judge.h) and prints a pass/fail table (or, with
 * --json, one JSON document). Exit status: 0 when every case passed or was skipped (its data absent), 1 when one
 * failed, 2 when a case file or the command line is wrong (the other cases still run). */
#include "commands/commands.h"
#include "host_util.h"
#include "judge/judge.h"
#include "judge/task.h"
#include "regress/case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum outcome { CASE_PASS, CASE_FAIL, CASE_SKIP, CASE_ERROR } outcome;
static const char *const outcome_names[] = {"pass", "fail", "skip", "error"};
static const char *const row_results[] = {"PASS", "FAIL", "skip", "ERROR"};

/* One case's run: the task, what the pipeline found and how it was judged. */
typedef struct case_run {
    regress_case c;
    host_cloud *models; /* file cases: n_models clouds read, and the scene */
    host_cloud scene;
    recognition_task task;
    pipeline_result result;
    judge_result judged;
    outcome verdict;
    double seconds;
    char note[1024]; /* why it was skipped, or the failure that is not a judgement (a stage that failed) */
} case_run;

static void case_run_free(case_run *r)
{
    judge_result_free(&r->judged);
    pipeline_result_free(&r->result);
    task_free(&r->task);
    for (uint32_t m = 0; r->models && m < r->c.n_models; m++)
        host_cloud_free(&r->models[m]);
    free(r->models);
    host_cloud_free(&r->scene);
    regress_case_free(&r->c);
}

/* The task of a file case: its model and scene clouds, the expected instances as the truth. */
static int file_task(case_run *r)
{
    regress_case *c = &r->c;
    r->models = calloc(c->n_models + 1, sizeof *r->models);
    judge_truth *truth = calloc(c->n_instances + 1, sizeof *truth);
    int rc = r->models && truth ? 0 : -1;
    for (uint32_t m = 0; m < c->n_models && rc == 0; m++)
        rc = cloud_read(c->model_paths[m], &r->models[m], r->note, sizeof r->note);
    if (rc == 0)
        rc = cloud_read(c->scene_path, &r->scene, r->note, sizeof r->note);
    if (rc == 0 &&
        task_from_clouds(r->models, (const char *const *)c->model_labels, c->n_models, &r->scene, &r->task) != 0)
        rc = -1;
    for (uint32_t i = 0; i < c->n_instances && rc == 0; i++) {
        const regress_instance *in = &c->instances[i];
        truth[i] = (judge_truth){in->model, {0}, NULL, in->max_distance, in->max_angle_deg};
        memcpy(truth[i].pose, in->pose, sizeof truth[i].pose);
    }
    if (rc == 0 && task_set_truth(&r->task, truth, c->n_instances) != 0)
        rc = -1;
    if (rc != 0 && !r->note[0])
        snprintf(r->note, sizeof r->note, "out of memory");
    free(truth);
    return rc;
}

/* Runs one loaded case and judges it. */
static void run_case(const host_options *o, case_run *r)
{
    regress_case *c = &r->c;
    if (c->missing_data) {
        r->verdict = CASE_SKIP;
        snprintf(r->note, sizeof r->note, "data absent: %s", c->missing_data);
        return;
    }
    r->verdict = CASE_FAIL;
    int built = c->synth ? task_from_synth(&c->synth_params, c->max_distance, c->max_angle_deg, &r->task, r->note,
                                           sizeof r->note)
                         : file_task(r);
    if (built != 0)
        return;
    /* the case's config and overrides, then the command line's */
    const char **sets = calloc((size_t)(c->n_sets + o->n_sets) + 1, sizeof *sets);
    if (!sets) {
        snprintf(r->note, sizeof r->note, "out of memory");
        return;
    }
    for (int i = 0; i < c->n_sets; i++)
        sets[i] = c->sets[i];
    for (int i = 0; i < o->n_sets; i++)
        sets[c->n_sets + i] = o->sets[i];
    host_options run = *o;
    run.config = c->config;
    run.sets = sets;
    run.n_sets = c->n_sets + o->n_sets;
    run.repeat = 1;
    double t0 = host_now_ms();
    int rc = host_run_task(&run, task_synth_pipeline, &r->task, &r->result);
    r->seconds = (host_now_ms() - t0) / 1e3;
    free(sets);
    if (rc != 0) {
        r->verdict = rc == 2 ? CASE_ERROR : CASE_FAIL;
        snprintf(r->note, sizeof r->note, "the pipeline %s (see above)", rc == 2 ? "could not be set up" : "failed");
        return;
    }
    if (judge_recognition(&r->result, r->task.truth, r->task.n_truth, &r->judged) != 0) {
        snprintf(r->note, sizeof r->note, "out of memory");
        return;
    }
    if (r->judged.found == r->task.n_truth && r->judged.false_instances <= c->max_false)
        r->verdict = CASE_PASS;
}

/* ---- reporting --------------------------------------------------------------------------------------------- */

/* Largest error among the found objects. */
static void worst_found(const case_run *r, double *distance, double *angle)
{
    *distance = *angle = 0;
    for (size_t t = 0; t < r->judged.n_truth; t++)
        if (r->judged.instance_of_truth[t] >= 0) {
            *distance = fmax(*distance, r->judged.truth_error[t].distance);
            *angle = fmax(*angle, r->judged.truth_error[t].angle_deg);
        }
}

static void print_row_header(void)
{
    printf("%-36s %-6s %7s %9s %13s %10s %8s\n", "case", "result", "found", "false", "worst dist", "worst ang",
           "time(s)");
}

/* The table row, then what failed: each missed object and each false instance. */
static void print_row(const case_run *r)
{
    const judge_result *j = &r->judged;
    const recognition_task *t = &r->task;
    char found[32] = "-", falses[32] = "-", dist[32] = "-", angle[32] = "-", secs[32] = "-";
    if (j->instance_of_truth) { /* judged */
        double d, a;
        worst_found(r, &d, &a);
        snprintf(found, sizeof found, "%u/%zu", j->found, t->n_truth);
        snprintf(falses, sizeof falses, "%u/%u", j->false_instances, r->c.max_false);
        if (j->found) {
            snprintf(dist, sizeof dist, "%.2f mm", d * 1e3);
            snprintf(angle, sizeof angle, "%.1f deg", a);
        }
        snprintf(secs, sizeof secs, "%.1f", r->seconds);
    }
    printf("%-36s %-6s %7s %9s %13s %10s %8s\n", r->c.name ? r->c.name : r->c.path, row_results[r->verdict], found,
           falses, dist, angle, secs);
    if (r->note[0])
        printf("    %s\n", r->note);
    for (size_t o = 0; o < j->n_truth; o++) {
        if (j->instance_of_truth[o] >= 0)
            continue;
        const judge_truth *tr = &t->truth[o];
        printf("    missed object %zu (%s", o, t->model_names[tr->model]);
        if (t->visible_fraction)
            printf(", %.0f%% visible", 100 * t->visible_fraction[o]);
        int rejected = j->rejected_of_truth[o];
        if (rejected >= 0) {
            const pipeline_instance *h = &r->result.hypotheses[rejected];
            judge_error e;
            judge_compare(tr->points, tr->pose, h->pose, &e);
            char why[256];
            explain_rejection(why, sizeof why, h->reason, h->fitness, h->rmse, h->violation, &r->result.settings);
            printf("): hypothesis %d, %.2f mm and %.1f deg off, was rejected by verify: %s (%s; fitness %.3f, RMSE "
                   "%.2f mm, free-space violation %.3f)",
                   rejected, e.distance * 1e3, e.angle_deg, explain_reason_key(h->reason), why, h->fitness,
                   h->rmse * 1e3, h->violation);
        } else if (isfinite(j->truth_error[o].distance))
            printf("): nearest instance %.2f mm, %.1f deg off", j->truth_error[o].distance * 1e3,
                   j->truth_error[o].angle_deg);
        else
            printf("): no instance of its model accepted, no hypothesis near it (lost before verification)");
        printf(" (tolerance %.2f mm, %.1f deg)\n", tr->max_distance * 1e3, tr->max_angle_deg);
    }
    for (size_t h = 0; h < j->n_hypotheses && j->false_instances > r->c.max_false; h++)
        if (r->result.hypotheses[h].accepted && j->truth_of_instance[h] < 0)
            printf("    false instance %zu (%s): %s, %.2f mm, %.1f deg from the nearest expected %s\n", h,
                   t->model_names[r->result.hypotheses[h].model],
                   j->verdict[h] == JUDGE_DUPLICATE ? "a duplicate" : "wrong", j->instance_error[h].distance * 1e3,
                   j->instance_error[h].angle_deg, t->model_names[r->result.hypotheses[h].model]);
}

static void json_error(FILE *f, const judge_error *e)
{
    fputs("\"distance\":", f);
    host_json_number(f, e->distance);
    fputs(",\"angle_deg\":", f);
    host_json_number(f, e->angle_deg);
    fputs(",\"translation\":", f);
    host_json_number(f, e->translation);
}

static void print_json_case(const case_run *r, int first)
{
    const judge_result *j = &r->judged;
    const recognition_task *t = &r->task;
    printf("%s{\"name\":", first ? "" : ",");
    host_json_string(stdout, r->c.name ? r->c.name : "");
    printf(",\"file\":");
    host_json_string(stdout, r->c.path);
    printf(",\"result\":\"%s\",\"note\":", outcome_names[r->verdict]);
    host_json_string(stdout, r->note);
    printf(",\"seconds\":%.3f,\"expected\":%zu,\"found\":%u,\"false\":%u,\"duplicates\":%u,\"max_false\":%u",
           r->seconds, t->n_truth, j->found, j->false_instances, j->duplicates, r->c.max_false);
    printf(",\"truth\":[");
    for (size_t o = 0; o < j->n_truth; o++) {
        printf("%s{\"model\":%u,\"model_name\":", o ? "," : "", t->truth[o].model);
        host_json_string(stdout, t->model_names[t->truth[o].model]);
        printf(",\"found\":%s,\"instance\":%d,\"rejected_hypothesis\":%d,",
               j->instance_of_truth[o] >= 0 ? "true" : "false", j->instance_of_truth[o], j->rejected_of_truth[o]);
        if (j->rejected_of_truth[o] >= 0) {
            printf("\"rejected_by\":");
            host_json_string(stdout, explain_reason_key(r->result.hypotheses[j->rejected_of_truth[o]].reason));
            putchar(',');
        }
        json_error(stdout, &j->truth_error[o]);
        if (t->visible_fraction)
            printf(",\"visible_fraction\":%.4f", t->visible_fraction[o]);
        putchar('}');
    }
    printf("],\"instances\":[");
    int any = 0;
    for (size_t h = 0; h < j->n_hypotheses; h++) {
        const pipeline_instance *in = &r->result.hypotheses[h];
        if (!in->accepted)
            continue;
        static const char *const verdicts[] = {"correct", "duplicate", "wrong"};
        printf("%s{\"hypothesis\":%zu,\"model\":%u,\"model_name\":", any ? "," : "", h, in->model);
        host_json_string(stdout, t->model_names[in->model]);
        printf(",\"verdict\":\"%s\",\"truth\":%d,", verdicts[j->verdict[h]], j->truth_of_instance[h]);
        json_error(stdout, &j->instance_error[h]);
        printf(",\"fitness\":%.6g,\"rmse\":%.6g}", in->fitness, in->rmse);
        any = 1;
    }
    printf("]}");
}

int cmd_regress(const host_options *o)
{
    if (o->n_args == 0) {
        fprintf(stderr, "grip-host: regress needs at least one case file (e.g. tests/regress/*.case)\n");
        return 2;
    }
    const char *data_dir = o->data_dir ? o->data_dir : getenv("GRIP_DATA");
    if (data_dir && !*data_dir)
        data_dir = NULL;
    int counts[4] = {0, 0, 0, 0};
    double total = 0;
    if (o->json)
        printf("{\"cases\":[");
    else
        print_row_header();
    fflush(stdout);
    for (int i = 0; i < o->n_args; i++) {
        case_run r;
        memset(&r, 0, sizeof r);
        grip_diag diag = {0};
        if (regress_case_load(o->args[i], data_dir, &r.c, &diag) != 0) {
            grip_diag_print(&diag, stderr);
            r.verdict = CASE_ERROR;
            r.c.path = host_strdup(o->args[i]);
            snprintf(r.note, sizeof r.note, "invalid case file (%zu problems, see stderr)", grip_diag_count(&diag));
        } else {
            run_case(o, &r);
        }
        grip_diag_free(&diag);
        counts[r.verdict]++;
        total += r.seconds;
        if (o->json)
            print_json_case(&r, i == 0);
        else
            print_row(&r);
        fflush(stdout);
        case_run_free(&r);
    }
    if (o->json)
        printf("],\"passed\":%d,\"failed\":%d,\"skipped\":%d,\"errors\":%d,\"seconds\":%.3f}\n", counts[CASE_PASS],
               counts[CASE_FAIL], counts[CASE_SKIP], counts[CASE_ERROR], total);
    else
        printf("%d passed, %d failed, %d skipped, %d invalid (%.1f s in the pipeline)\n", counts[CASE_PASS],
               counts[CASE_FAIL], counts[CASE_SKIP], counts[CASE_ERROR], total);
    return counts[CASE_ERROR] ? 2 : counts[CASE_FAIL] ? 1 : 0;
}
