/* pipeline_result.c -- see pipeline_result.h. */
#include "pipeline_result.h"
#include "accounting.h"
#include "config.h"
#include "host_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const pipeline_stage_names[PIPELINE_STAGES] = {"descriptor", "index", "match", "group", "verify"};

void pipeline_result_free(pipeline_result *r)
{
    if (!r)
        return;
    free(r->model_keypoints);
    free(r->hypotheses);
    for (size_t i = 0; i < r->n_lengths; i++)
        free(r->lengths[i]);
    free(r->lengths);
    free(r->cloud_resolutions);
    free(r->normals_source);
    free(r->had_normals);
    grip_diag_free(&r->warnings);
    memset(r, 0, sizeof *r);
}

const char *pipeline_normals_word(uint32_t source)
{
    static const char *const words[] = {"unsaid", "computed", "cloud", "cloud_rescaled", "recomputed"};
    return source < sizeof words / sizeof words[0] ? words[source] : words[GRIP_NORMALS_UNSAID];
}

/* Where cloud i's normals came from and why, for the text report. */
static const char *normals_phrase(const pipeline_result *r, uint32_t i)
{
    switch (r->normals_source[i]) {
    case GRIP_NORMALS_COMPUTED:
        return r->had_normals[i] ? "computed (descriptor.normals = compute)" : "computed (the cloud carries none)";
    case GRIP_NORMALS_CLOUD:
        return "the cloud's own";
    case GRIP_NORMALS_CLOUD_RESCALED:
        return "the cloud's own, rescaled to unit length";
    case GRIP_NORMALS_RECOMPUTED:
        return "computed: over a tenth of the cloud's own are unusable (not finite or of length 0)";
    default:
        return NULL;
    }
}

int pipeline_result_set_units(pipeline_result *r, const grip_config *cfg)
{
    grip_pipeline_settings settings;
    grip_config_pipeline(cfg, &settings);
    r->unit = settings.unit;
    r->scene_resolution = cfg->resolution;
    r->lengths = calloc(cfg->count + 1, sizeof *r->lengths);
    if (!r->lengths)
        return -1;
    for (size_t i = 0; i < cfg->count; i++) {
        const grip_config_entry *e = &cfg->entries[i];
        if (!e->resolved)
            continue;
        int n = snprintf(NULL, 0, "%s.%s = %s = %s", e->section, e->key, e->value, e->resolved);
        char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
        if (!text)
            return -1;
        snprintf(text, (size_t)n + 1, "%s.%s = %s = %s", e->section, e->key, e->value, e->resolved);
        r->lengths[r->n_lengths++] = text;
    }
    return 0;
}

size_t pipeline_result_accepted(const pipeline_result *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_hypotheses; i++)
        n += r->hypotheses[i].accepted != 0;
    return n;
}

int pipeline_result_same_instances(const pipeline_result *a, const pipeline_result *b, double tolerance)
{
    if (pipeline_result_accepted(a) != pipeline_result_accepted(b))
        return 0;
    for (size_t i = 0; i < a->n_hypotheses; i++) { /* each instance of a is one of b's */
        const pipeline_instance *x = &a->hypotheses[i];
        int matched = !x->accepted;
        for (size_t j = 0; j < b->n_hypotheses && !matched; j++) {
            const pipeline_instance *y = &b->hypotheses[j];
            int close = y->accepted && y->model == x->model;
            for (int e = 0; e < 16 && close; e++)
                close = fabs(x->pose[e] - y->pose[e]) <= tolerance;
            matched = close;
        }
        if (!matched)
            return 0;
    }
    return 1;
}

static double total_ms(const pipeline_result *r)
{
    double t = 0;
    for (int s = 0; s < PIPELINE_STAGES; s++)
        t += r->timings_ms[s];
    return t;
}

/* ,"warnings":[…]: one string a warning. */
static void print_json_warnings(FILE *out, const grip_diag *warnings)
{
    fputs(",\"warnings\":[", out);
    for (size_t i = 0; i < warnings->count; i++) {
        if (i)
            fputc(',', out);
        host_json_string(out, warnings->messages[i]);
    }
    fputc(']', out);
}

void pipeline_result_print_json(FILE *out, const pipeline_result *r, const char *const *model_names)
{
    fputc('{', out);
    if (r->scene) {
        fputs("\"scene\":", out);
        host_json_string(out, r->scene);
        fputc(',', out);
    }
    fprintf(out, "\"instances\":[");
    int first = 1;
    for (size_t i = 0; i < r->n_hypotheses; i++) {
        const pipeline_instance *h = &r->hypotheses[i];
        if (!h->accepted)
            continue;
        fprintf(out, "%s{\"model\":%u,\"model_name\":", first ? "" : ",", h->model);
        host_json_string(out, model_names ? model_names[h->model] : "");
        fprintf(out, ",\"pose\":[");
        for (int k = 0; k < 16; k++)
            fprintf(out, "%s%.9g", k ? "," : "", h->pose[k]);
        fprintf(out, "],\"correspondences\":%u,\"votes\":%.9g,\"fitness\":%.9g,\"rmse\":%.9g", h->correspondences,
                h->votes, h->fitness, h->rmse);
        if (isfinite(h->violation))
            fprintf(out, ",\"violation\":%.9g", h->violation);
        fputc('}', out);
        first = 0;
    }
    fprintf(out, "],\"rejected\":[");
    first = 1;
    for (size_t i = 0; i < r->n_hypotheses; i++) {
        const pipeline_instance *h = &r->hypotheses[i];
        if (h->accepted)
            continue;
        char why[256];
        explain_rejection(why, sizeof why, h->reason, h->fitness, h->rmse, h->violation, &r->settings);
        fprintf(out, "%s{\"hypothesis\":%zu,\"model\":%u,\"model_name\":", first ? "" : ",", i, h->model);
        host_json_string(out, model_names ? model_names[h->model] : "");
        fprintf(out, ",\"fitness\":");
        host_json_number(out, h->fitness);
        fprintf(out, ",\"rmse\":");
        host_json_number(out, h->rmse);
        fprintf(out, ",\"rejected_by\":");
        host_json_string(out, explain_reason_key(h->reason));
        fprintf(out, ",\"why\":");
        host_json_string(out, why);
        fputc('}', out);
        first = 0;
    }
    fprintf(out, "],\"counts\":{\"model_keypoints\":[");
    for (uint32_t m = 0; m < r->n_models; m++)
        fprintf(out, "%s%zu", m ? "," : "", r->model_keypoints[m]);
    fprintf(out, "],\"scene_keypoints\":%zu,\"correspondences\":%zu,\"hypotheses\":%zu},\"timings_ms\":{",
            r->scene_keypoints, r->correspondences, r->n_hypotheses);
    for (int s = 0; s < PIPELINE_STAGES; s++)
        fprintf(out, "\"%s\":%.3f,", pipeline_stage_names[s], r->timings_ms[s]);
    fprintf(out, "\"total\":%.3f},\"units\":{\"unit\":", total_ms(r));
    if (r->unit && *r->unit)
        host_json_string(out, r->unit);
    else
        fputs("null", out);
    fputs(",\"scene_resolution\":", out);
    if (r->scene_resolution > 0)
        fprintf(out, "%.9g", r->scene_resolution);
    else
        fputs("null", out);
    fputs(",\"model_resolutions\":[", out);
    for (uint32_t i = 0; i < r->n_clouds; i++) {
        if (r->cloud_resolutions[i] > 0)
            fprintf(out, "%s%.9g", i ? "," : "", r->cloud_resolutions[i]);
        else
            fprintf(out, "%snull", i ? "," : "");
    }
    fputs("],\"lengths\":[", out);
    for (size_t i = 0; i < r->n_lengths; i++) {
        if (i)
            fputc(',', out);
        host_json_string(out, r->lengths[i]);
    }
    fputs("]},\"normals\":{\"models\":[", out);
    for (uint32_t i = 0; i + 1 < r->n_described; i++)
        fprintf(out, "%s\"%s\"", i ? "," : "", pipeline_normals_word(r->normals_source[i]));
    fprintf(out, "],\"scene\":\"%s\",\"model_orientation\":\"%s\"}",
            r->n_described ? pipeline_normals_word(r->normals_source[r->n_described - 1]) : "unsaid",
            r->model_orientation ? r->model_orientation : "viewpoint");
    fprintf(out, ",\"scene_features\":\"%s\",\"model_features\":\"%s\"",
            r->scene_features_on_device ? "device" : "host", r->model_features_on_device ? "device" : "host");
    print_json_warnings(out, &r->warnings);
    accounting_print_json(out, &r->accounting);
    fputs("}\n", out);
}

void pipeline_result_print_json_error(FILE *out, const char *scene, const char *error, const grip_diag *warnings)
{
    static const grip_diag none = {0};
    fputs("{\"scene\":", out);
    host_json_string(out, scene);
    fputs(",\"error\":", out);
    host_json_string(out, error);
    print_json_warnings(out, warnings ? warnings : &none);
    fputs("}\n", out);
}

/* The name printed after a length: the config's unit, or a reminder that it is the cloud's own. */
static const char *unit_label(const pipeline_result *r)
{
    return r->unit && *r->unit ? r->unit : "(cloud unit)";
}

static void print_pose(FILE *out, const double pose[16], const char *unit)
{
    fprintf(out, "      rotation | translation (%s)\n", unit);
    for (int row = 0; row < 3; row++)
        fprintf(out, "      [%9.6f %9.6f %9.6f | %11.6g]\n", pose[4 * row], pose[4 * row + 1], pose[4 * row + 2],
                pose[4 * row + 3]);
}

/* What the text output adds to a model cloud whose normals were computed: how they were oriented, when not toward
 * the viewpoint. */
static const char *orientation_phrase(const pipeline_result *r)
{
    const char *o = r->model_orientation ? r->model_orientation : "viewpoint";
    if (strcmp(o, "outward") == 0)
        return ", pointing away from its centroid (descriptor.model_normals = outward)";
    if (strcmp(o, "propagate") == 0)
        return ", pointing away from its centroid, made consistent along its surface (descriptor.model_normals = "
               "propagate)";
    return "";
}

void pipeline_result_print_text(FILE *out, const pipeline_result *r, const char *const *model_names)
{
    for (uint32_t m = 0; m < r->n_models; m++)
        fprintf(out, "model %u (%s): %zu keypoints\n", m, model_names ? model_names[m] : "?", r->model_keypoints[m]);
    if (r->scene_resolution > 0)
        fprintf(out, "scene resolution: %.6g %s (mean nearest-neighbour distance)\n", r->scene_resolution,
                unit_label(r));
    for (uint32_t i = 0; i < r->n_clouds; i++)
        if (r->cloud_resolutions[i] > 0)
            fprintf(out, "model cloud %u resolution: %.6g %s\n", i, r->cloud_resolutions[i], unit_label(r));
    for (size_t i = 0; i < r->n_lengths; i++)
        fprintf(out, "  %s %s\n", r->lengths[i], unit_label(r));
    for (uint32_t i = 0; i < r->n_described; i++) {
        const char *phrase = normals_phrase(r, i);
        const int computed = r->normals_source[i] == GRIP_NORMALS_COMPUTED ||
                             r->normals_source[i] == GRIP_NORMALS_RECOMPUTED;
        if (phrase && i + 1 < r->n_described)
            fprintf(out, "model cloud %u normals: %s%s\n", i, phrase, computed ? orientation_phrase(r) : "");
        else if (phrase)
            fprintf(out, "scene normals: %s\n", phrase);
    }
    fprintf(out, "scene: %zu keypoints, %zu correspondences, %zu hypotheses, %zu accepted\n", r->scene_keypoints,
            r->correspondences, r->n_hypotheses, pipeline_result_accepted(r));
    for (size_t i = 0; i < r->n_hypotheses; i++) {
        const pipeline_instance *h = &r->hypotheses[i];
        fprintf(out,
                "  %s hypothesis %zu: model %u (%s), %u correspondences, votes %.1f, fitness %.3f, RMSE %.4g %s, "
                "free-space violation %.3f\n",
                h->accepted ? "ACCEPTED" : "rejected", i, h->model, model_names ? model_names[h->model] : "?",
                h->correspondences, h->votes, h->fitness, h->rmse, unit_label(r), h->violation);
        if (h->accepted) {
            print_pose(out, h->pose, unit_label(r));
        } else {
            char why[256];
            explain_rejection(why, sizeof why, h->reason, h->fitness, h->rmse, h->violation, &r->settings);
            fprintf(out, "      rejected by %s: %s\n", explain_reason_key(h->reason), why);
        }
    }
    fprintf(out, "timings (ms):");
    for (int s = 0; s < PIPELINE_STAGES; s++)
        fprintf(out, " %s %.1f,", pipeline_stage_names[s], r->timings_ms[s]);
    fprintf(out, " total %.1f\n", total_ms(r));
    accounting_print_text(out, &r->accounting);
}
