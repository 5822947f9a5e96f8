/* recognition.c -- see recognition.h. */
#include "eval/recognition.h"

#include <math.h>
#include <string.h>

#include "eval/svg_bars.h"
#include "host_util.h"

int eval_bin_of(double occlusion)
{
    int b = (int)floor(occlusion * 10);
    return b < 0 ? 0 : b >= EVAL_BINS - 1 ? EVAL_BINS - 1 : b;
}

static void bin_label(int b, char *buf, size_t n)
{
    snprintf(buf, n, "%d-%d %%", 10 * b, b == EVAL_BINS - 1 ? 100 : 10 * (b + 1));
}

static void tally_add(eval_tally *t, int found, int rejected, const judge_error *err)
{
    t->objects++;
    if (!found) {
        t->rejected += rejected;
        return;
    }
    t->found++;
    t->sum_distance += err->distance;
    t->sum_angle_deg += err->angle_deg;
    t->sum_translation += err->translation;
    t->max_distance = fmax(t->max_distance, err->distance);
    t->max_angle_deg = fmax(t->max_angle_deg, err->angle_deg);
    t->max_translation = fmax(t->max_translation, err->translation);
}

void eval_add_scene(eval_recognition *e, const recognition_task *t, const pipeline_result *r, const judge_result *j,
                    double seconds)
{
    e->scenes++;
    e->seconds += seconds;
    e->false_instances += j->false_instances;
    e->duplicates += j->duplicates;
    for (size_t o = 0; o < t->n_truth; o++) {
        int found = j->instance_of_truth[o] >= 0, rejected = j->rejected_of_truth[o] >= 0;
        tally_add(&e->all, found, rejected, &j->truth_error[o]);
        tally_add(&e->bins[eval_bin_of(1 - t->visible_fraction[o])], found, rejected, &j->truth_error[o]);
        if (!found && rejected)
            e->rejected_by[r->hypotheses[j->rejected_of_truth[o]].reason]++;
    }
}

static double rate(const eval_tally *t)
{
    return t->objects ? (double)t->found / t->objects : NAN;
}

static double mean(double sum, uint32_t n)
{
    return n ? sum / n : NAN;
}

static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

static void json_tally(FILE *f, const eval_tally *t)
{
    fprintf(f, "\"objects\":%u,\"found\":%u,\"missed_rejected_by_verify\":%u,\"rate\":", t->objects, t->found,
            t->rejected);
    json_number(f, rate(t));
    fputs(",\"mean_distance\":", f);
    json_number(f, mean(t->sum_distance, t->found));
    fputs(",\"mean_angle_deg\":", f);
    json_number(f, mean(t->sum_angle_deg, t->found));
    fputs(",\"mean_translation\":", f);
    json_number(f, mean(t->sum_translation, t->found));
    fputs(",\"max_distance\":", f);
    json_number(f, t->found ? t->max_distance : NAN);
    fputs(",\"max_angle_deg\":", f);
    json_number(f, t->found ? t->max_angle_deg : NAN);
    fputs(",\"max_translation\":", f);
    json_number(f, t->found ? t->max_translation : NAN);
}

void eval_write_json(FILE *f, const eval_setup *s, const eval_recognition *e)
{
    fprintf(f,
            "{\"setup\":{\"first_seed\":%llu,\"scenes\":%u,\"objects\":[%u,%u],\"max_distance\":%.6g,"
            "\"max_angle_deg\":%.6g,\"noise_sigma\":%.6g,\"min_visible_fraction\":%.6g,"
            "\"camera_elevation_deg\":%.6g,\"spread\":%.6g,\"noise_mr\":",
            (unsigned long long)s->first_seed, s->scenes, s->min_objects, s->max_objects, s->max_distance,
            s->max_angle_deg, s->noise_sigma, s->min_visible_fraction, s->camera_elevation_deg, s->spread);
    json_number(f, s->noise_mr);
    fputs(",\"objects_from\":", f);
    host_json_string(f, s->objects_from);
    fputs(",\"pipeline\":", f);
    host_json_string(f, s->pipeline);
    fprintf(f,
            "},\"scenes\":%u,\"failed_scenes\":%u,\"false_instances\":%u,\"duplicates\":%u,"
            "\"false_per_scene\":",
            e->scenes, e->failed_scenes, e->false_instances, e->duplicates);
    json_number(f, e->scenes ? (double)e->false_instances / e->scenes : NAN);
    fprintf(f, ",\"seconds\":%.3f,\"all\":{", e->seconds);
    json_tally(f, &e->all);
    fputs("},\"missed_rejected_by\":{", f);
    for (uint32_t reason = 0, any = 0; reason < EXPLAIN_REASONS; reason++)
        if (e->rejected_by[reason])
            fprintf(f, "%s\"%s\":%u", any++ ? "," : "", explain_reason_key(reason), e->rejected_by[reason]);
    fputs("},\"bins\":[", f);
    for (int b = 0; b < EVAL_BINS; b++) {
        fprintf(f, "%s{\"occlusion\":[%.1f,%.1f],", b ? "," : "", 0.1 * b, b == EVAL_BINS - 1 ? 1.0 : 0.1 * (b + 1));
        json_tally(f, &e->bins[b]);
        fputc('}', f);
    }
    fputs("]}\n", f);
}

static void md_row(FILE *f, const char *label, const eval_tally *t)
{
    fprintf(f, "| %s | %u | %u | %u | ", label, t->objects, t->found, t->rejected);
    if (t->objects)
        fprintf(f, "%.1f %% | ", 100 * rate(t));
    else
        fputs("– | ", f);
    if (t->found)
        fprintf(f, "%.2f | %.2f | %.2f | %.2f |\n", 1e3 * mean(t->sum_distance, t->found),
                mean(t->sum_angle_deg, t->found), t->max_angle_deg, 1e3 * mean(t->sum_translation, t->found));
    else
        fputs("– | – | – | – |\n", f);
}

void eval_write_markdown(FILE *f, const eval_setup *s, const eval_recognition *e)
{
    char noise[96];
    if (isfinite(s->noise_mr))
        snprintf(noise, sizeof noise, "%.3f mm (%g mesh resolutions)", s->noise_sigma * 1e3, s->noise_mr);
    else
        snprintf(noise, sizeof noise, "%.1f mm", s->noise_sigma * 1e3);
    fprintf(f,
            "Recognition on %u generated scenes of %s (seeds %llu–%llu, %u–%u objects each, depth noise %s, "
            "occlusion up to %.0f %%; camera %.0f° above the table, objects within %.2f m × √n of its "
            "centre); an object is found when an accepted instance of its model lies within "
            "%.0f mm mean model-point distance and %.0f° of its true pose. Pipeline: %s.\n\n",
            e->scenes, s->objects_from, (unsigned long long)s->first_seed,
            (unsigned long long)(s->first_seed + s->scenes - 1), s->min_objects, s->max_objects, noise,
            100 * (1 - s->min_visible_fraction),
            s->camera_elevation_deg, s->spread, s->max_distance * 1e3, s->max_angle_deg, s->pipeline);
    fputs("| occlusion | objects | found | missed, rejected by verify | rate | mean dist. (mm) | mean rot. (°) | "
          "max rot. (°) | mean transl. (mm) |\n"
          "|---|---|---|---|---|---|---|---|---|\n",
          f);
    for (int b = 0; b < EVAL_BINS; b++) {
        char label[32];
        bin_label(b, label, sizeof label);
        if (e->bins[b].objects)
            md_row(f, label, &e->bins[b]);
    }
    md_row(f, "**all**", &e->all);
    fputs("\n\"Missed, rejected by verify\": objects no accepted instance found although verification rejected a "
          "hypothesis within the tolerances; the other misses had no such hypothesis (lost before verification).",
          f);
    for (uint32_t reason = 0, any = 0; reason < EXPLAIN_REASONS; reason++)
        if (e->rejected_by[reason])
            fprintf(f, "%s%s %u", any++ ? ", " : " Rejected by: ", explain_reason_key(reason), e->rejected_by[reason]);
    fputc('\n', f);
    fprintf(f,
            "\nFalse positives: %u in %u scenes (%.2f per scene; %u of them duplicates of a found object). "
            "%u scenes failed. %.1f s in the pipeline (%.1f s per scene).\n",
            e->false_instances, e->scenes, e->scenes ? (double)e->false_instances / e->scenes : 0, e->duplicates,
            e->failed_scenes, e->seconds, e->scenes ? e->seconds / e->scenes : 0);
}

void eval_write_svg(FILE *f, const eval_setup *s, const eval_recognition *e)
{
    svg_bar bars[EVAL_BINS];
    char labels[EVAL_BINS][32], notes[EVAL_BINS][32], title[160];
    int n = 0;
    for (int b = 0; b < EVAL_BINS; b++) {
        if (!e->bins[b].objects && b == EVAL_BINS - 1)
            continue; /* the open last bin only when something fell in it */
        bin_label(b, labels[n], sizeof labels[n]);
        snprintf(notes[n], sizeof notes[n], "%u/%u", e->bins[b].found, e->bins[b].objects);
        bars[n] = (svg_bar){labels[n], rate(&e->bins[b]), e->bins[b].objects ? notes[n] : NULL};
        n++;
    }
    char noise[48] = "";
    if (isfinite(s->noise_mr))
        snprintf(noise, sizeof noise, ", noise %g mr", s->noise_mr);
    snprintf(title, sizeof title,
             "Recognition rate by occlusion: %u scenes (seeds %llu-%llu%s), %.2f false positives per scene",
             e->scenes, (unsigned long long)s->first_seed, (unsigned long long)(s->first_seed + s->scenes - 1), noise,
             e->scenes ? (double)e->false_instances / e->scenes : 0);
    svg_bars_write(f, title, "occlusion (share of the object's pixels hidden)", "objects found", bars, n);
}
