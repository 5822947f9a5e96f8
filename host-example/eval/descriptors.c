/* descriptors.c -- `grip-host eval descriptors` (issue 24 a), the SHOT paper's descriptor-matching experiment on
 * the Bologna "Retrieval" models (DATA/bologna_retrieval, README there).
 *
 * Per model: a seeded random sample of its vertices are the keypoints, and the same vertex numbers are the
 * keypoints of each scene, so scene keypoint i has exactly one true counterpart, model keypoint i. The scenes are
 * the model posed and perturbed: at noise 0.1 the published scene where this copy has it (with its .xf pose),
 * otherwise a copy made here, posed by the published pose where there is one, else by a seeded random rigid
 * transform, with Gaussian noise per axis of `noise` Bologna mesh resolutions (NOISE_UNIT_MR below), seeded.
 * Every descriptor stage runs through the plugin's ABI (the benchmarks' stage plumbing, bench_common.h): model and
 * scene described at the keypoints with one support radius (RADIUS_MR mesh resolutions of the model), the model's
 * descriptors indexed (`bruteforce`), each scene descriptor's two nearest model descriptors found (`knn`, k 2).
 * A match is correct when the nearest model keypoint is the true counterpart (the same vertex: exact, no
 * tolerance). The curves (pr_curve.h) pool every model's keypoints; the threshold runs over the ratio of the
 * nearest to the second-nearest distance (the plotted curves, as the SHOT paper's matching) and, as a second
 * figure, over the nearest distance itself. */
#include "eval/descriptors.h"
#include "bench/bench_common.h"
#include "bench/retrieval.h"
#include "eval/bologna.h"
#include "eval/pr_curve.h"
#include "eval/svg_curves.h"
#include "host_util.h"
#include "synth/place.h" /* the host's seeded random stream */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_KEYPOINTS 500
#define MAX_NOISE_LEVELS BOLOGNA_MAX_NOISE
#define RADIUS_MR 15.0 /* support radius in mesh resolutions (median nearest-neighbour spacing), as bench recall */
#define NOISE_UNIT_MR BOLOGNA_NOISE_UNIT_MR
/* max_neighbors of the approximate G-SHOT unless --set descriptor.max_neighbors says otherwise: about a quarter of the
 * ~500-point support */
#define APPROX_GSHOT_CAP 128
#define CURVE_POINTS_OUT 200 /* points of each curve written to JSON and SVG (the areas use every point) */


static const struct descriptor_setting {
    const char *label, *impl;
    enum { NOT_SHOT, SHOT_EXACT, SHOT_CAPPED } shot; /* exact: max_neighbors 0, whatever --set says */
} settings[] = {
    {"SHOT (exact G-SHOT)", "shot", SHOT_EXACT},
    {"SHOT capped (approx. G-SHOT)", "shot", SHOT_CAPPED},
    {"FPFH", "fpfh", NOT_SHOT},
    {"PFH", "pfh", NOT_SHOT},
    {"Spin Image", "spin_image", NOT_SHOT},
};
#define N_SETTINGS (int)(sizeof settings / sizeof settings[0])

/* One scene keypoint's match: squared distances to its nearest and second-nearest model descriptors (NaN: none)
 * and whether the nearest is its true counterpart. */
typedef struct query_match {
    float d1, d2;
    int correct;
} query_match;

/* Every model's matches of one setting at one noise level. */
typedef struct cell {
    query_match *q;
    size_t n, cap;
    uint64_t valid_scene, valid_model;
    double describe_ms; /* scene descriptions, summed over the models */
    int failed;
    pr_curve ratio, distance;
} cell;

typedef bologna_scene_info scene_info;

typedef struct model_run {
    const bologna_model *m;
    size_t vertices, keypoints;
    double mr;
    scene_info scenes[MAX_NOISE_LEVELS];
} model_run;

typedef struct evaluation {
    bologna_selection sel; /* the data folder, noise levels and models */
    uint64_t seed;
    uint32_t keypoints;
    model_run models[BOLOGNA_MODELS];
    int n_models;
    cell cells[N_SETTINGS][MAX_NOISE_LEVELS];
    long long cap; /* the approximate G-SHOT's max_neighbors in use */
    const char *device;
} evaluation;

/* ---- options ----------------------------------------------------------------------------------------------- */

static int setup(const host_options *o, evaluation *e)
{
    e->seed = o->seed;
    e->keypoints = o->keypoints ? (uint32_t)o->keypoints : DEFAULT_KEYPOINTS;
    return bologna_select(o, "eval descriptors", "0.1,0.3,0.5", &e->sel);
}

/* ---- data -------------------------------------------------------------------------------------------------- */

/* k distinct vertex numbers, drawn without replacement (a partial Fisher-Yates shuffle) from the vertices finite in
 * the model, in increasing order. *kp is malloc'd. 0, or -1 when out of memory. */
static int sample_keypoints(const host_cloud *c, uint32_t want, uint64_t *rng, uint32_t **kp, size_t *k)
{
    uint32_t *all = malloc(c->n * sizeof *all + 1);
    if (!all)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (isfinite(c->xyz[3 * i]) && isfinite(c->xyz[3 * i + 1]) && isfinite(c->xyz[3 * i + 2]))
            all[n++] = (uint32_t)i;
    *k = want < n ? want : n;
    for (size_t i = 0; i < *k; i++) {
        size_t j = i + (size_t)(synth_rng_next(rng) % (uint64_t)(n - i));
        uint32_t t = all[i];
        all[i] = all[j];
        all[j] = t;
    }
    for (size_t i = 1; i < *k; i++) /* insertion sort: k is small */
        for (size_t j = i; j > 0 && all[j - 1] > all[j]; j--) {
            uint32_t t = all[j];
            all[j] = all[j - 1];
            all[j - 1] = t;
        }
    *kp = all;
    return 0;
}

/* ---- matching ---------------------------------------------------------------------------------------------- */

static int cell_reserve(cell *c, size_t more)
{
    if (c->n + more <= c->cap)
        return 0;
    size_t cap = c->cap ? 2 * c->cap : 1024;
    while (cap < c->n + more)
        cap *= 2;
    query_match *q = realloc(c->q, cap * sizeof *q);
    if (!q)
        return -1;
    c->q = q;
    c->cap = cap;
    return 0;
}

/* Appends each scene keypoint's two nearest model descriptors (m lists them best first per query). */
static int add_matches(cell *c, const grip_matches *m, size_t k)
{
    if (cell_reserve(c, k) != 0)
        return -1;
    query_match *q = c->q + c->n;
    for (size_t i = 0; i < k; i++)
        q[i] = (query_match){NAN, NAN, 0};
    const uint32_t *query = m->query.data, *ref = m->reference.data;
    const float *d = m->sqdist.data;
    for (uint64_t j = 0; j < m->count; j++) {
        if (query[j] >= k)
            continue;
        query_match *t = &q[query[j]];
        if (isnan(t->d1)) {
            t->d1 = d[j];
            t->correct = ref[j] == query[j];
        } else if (isnan(t->d2)) {
            t->d2 = d[j];
        }
    }
    c->n += k;
    return 0;
}

/* Describes each scene of one model with one setting, matches it against the model's index, collects the
 * matches. The model's description and index are made once for all noise levels. 0, or 1 after saying why. */
static int run_setting(const bench_plugin *bp, const grip_stage_impl *impl, int s, evaluation *e, const model_run *mrun,
                       const host_cloud *model, const host_cloud *scenes, const double (*poses)[16], const uint32_t *kp,
                       size_t k)
{
    char radius[64], cap[64], failed[1024] = "";
    snprintf(radius, sizeof radius, "descriptor.radius=%.9g", RADIUS_MR * mrun->mr);
    snprintf(cap, sizeof cap, "descriptor.max_neighbors=%d", settings[s].shot == SHOT_CAPPED ? APPROX_GSHOT_CAP : 0);
    const char *const defaults[] = {
        radius, "index.impl=bruteforce", "match.impl=knn", "match.k=2", settings[s].shot == SHOT_CAPPED ? cap : NULL,
        NULL};
    const char *const forced[] = {settings[s].shot == SHOT_EXACT ? cap : NULL, NULL};
    bench_run r;
    const char *skip = NULL;
    if (bench_run_open(bp, impl, defaults, forced, &r, &skip) != 0) {
        fprintf(stderr, "grip-host: eval: %s: %s\n", settings[s].label, skip ? skip : "cannot open the stages");
        return 1;
    }
    e->device = r.device;
    if (settings[s].shot == SHOT_CAPPED)
        e->cap = atoll(grip_config_find(&r.cfg, "descriptor", "max_neighbors")->value);
    grip_array kpa = host_array(GRIP_U32, k, 1, (void *)kp);
    grip_cloud mc = bench_cloud(model->xyz, NULL, model->n, model->path);
    const grip_stage_impl *d = r.p.impl[GRIP_STAGE_DESCRIPTOR];
    grip_features *fm = NULL;
    grip_index *index = NULL;
    grip_status st = d->describe(r.p.stage[GRIP_STAGE_DESCRIPTOR], &mc, GRIP_ROLE_MODEL, &kpa, GRIP_MEM_HOST, &fm);
    if (st != GRIP_OK)
        bench_run_error(&r, GRIP_STAGE_DESCRIPTOR, st, model->path, failed, sizeof failed);
    if (st == GRIP_OK && (st = r.p.impl[GRIP_STAGE_INDEX]->build(r.p.stage[GRIP_STAGE_INDEX], &fm->descriptors, NULL,
                                                                 &index)) != GRIP_OK)
        bench_run_error(&r, GRIP_STAGE_INDEX, st, "the model's descriptors", failed, sizeof failed);
    for (int j = 0; j < e->sel.n_noise && st == GRIP_OK; j++) {
        cell *c = &e->cells[s][j];
        grip_cloud sc = bench_cloud(scenes[j].xyz, NULL, scenes[j].n, scenes[j].path);
        float origin[3] = {0, 0, 0};
        retrieval_apply_pose(poses[j], origin, sc.viewpoint); /* normals flipped alike in both clouds */
        grip_features *fs = NULL;
        grip_matches *m = NULL;
        double t0 = host_now_ms();
        st = d->describe(r.p.stage[GRIP_STAGE_DESCRIPTOR], &sc, GRIP_ROLE_SCENE, &kpa, GRIP_MEM_HOST, &fs);
        c->describe_ms += host_now_ms() - t0;
        if (st != GRIP_OK)
            bench_run_error(&r, GRIP_STAGE_DESCRIPTOR, st, scenes[j].path, failed, sizeof failed);
        if (st == GRIP_OK && (st = r.p.impl[GRIP_STAGE_MATCH]->match(r.p.stage[GRIP_STAGE_MATCH], index,
                                                                     &fs->descriptors, GRIP_MEM_HOST, &m)) != GRIP_OK)
            bench_run_error(&r, GRIP_STAGE_MATCH, st, scenes[j].path, failed, sizeof failed);
        if (st == GRIP_OK) {
            c->valid_scene += bench_valid_rows(&fs->descriptors);
            c->valid_model += bench_valid_rows(&fm->descriptors);
            if (add_matches(c, m, k) != 0) {
                snprintf(failed, sizeof failed, "out of host memory");
                st = GRIP_ENOMEM;
            }
        }
        if (m)
            m->release(m);
        if (fs)
            fs->release(fs);
    }
    if (index)
        index->release(index);
    if (fm)
        fm->release(fm);
    bench_run_close(&r);
    if (st != GRIP_OK) {
        fprintf(stderr, "grip-host: eval: %s: %s\n", settings[s].label, failed);
        for (int j = 0; j < e->sel.n_noise; j++)
            e->cells[s][j].failed = 1;
        return 1;
    }
    return 0;
}

/* One model: its keypoints and scenes, then every setting. 0, or 1 after saying why. */
static int run_model(const bench_plugin *bp, const grip_stage_impl *const *impls, evaluation *e, int mi)
{
    model_run *mrun = &e->models[e->n_models];
    memset(mrun, 0, sizeof *mrun);
    mrun->m = &bologna_models[mi];
    host_cloud model = {0}, scenes[MAX_NOISE_LEVELS];
    double poses[MAX_NOISE_LEVELS][16];
    memset(scenes, 0, sizeof scenes);
    uint32_t *kp = NULL;
    int rc = 0;
    if (bologna_load_model(&e->sel, mi, &model, &mrun->mr) != 0)
        return 1;
    mrun->vertices = model.n;
    uint64_t rng = bologna_model_rng(e->seed, mi);
    if (sample_keypoints(&model, e->keypoints, &rng, &kp, &mrun->keypoints) != 0) {
        fprintf(stderr, "grip-host: eval: out of memory\n");
        rc = 1;
    }
    for (int j = 0; j < e->sel.n_noise && rc == 0; j++)
        rc = bologna_make_scene(&e->sel, mi, &model, mrun->mr, e->sel.noise[j], &rng, &scenes[j], poses[j],
                                &mrun->scenes[j]);
    if (rc == 0) {
        e->n_models++;
        fprintf(stderr, "%s: %zu vertices, mesh resolution %.4g, %zu keypoints; scenes", mrun->m->name, model.n,
                mrun->mr, mrun->keypoints);
        for (int j = 0; j < e->sel.n_noise; j++)
            fprintf(stderr, " %g (%s, rms %.3f mr)", e->sel.noise[j], mrun->scenes[j].source,
                    mrun->scenes[j].residual_mr);
        fputc('\n', stderr);
    }
    for (int s = 0; s < N_SETTINGS && rc == 0; s++) {
        if (!impls[s])
            continue;
        double t0 = host_now_ms();
        rc = run_setting(bp, impls[s], s, e, mrun, &model, scenes, (const double(*)[16])poses, kp, mrun->keypoints);
        fprintf(stderr, "  %s: %.1f s\n", settings[s].label, (host_now_ms() - t0) / 1e3);
    }
    for (int j = 0; j < e->sel.n_noise; j++)
        host_cloud_free(&scenes[j]);
    host_cloud_free(&model);
    free(kp);
    return rc;
}

/* ---- curves and output ------------------------------------------------------------------------------------- */

static int build_curves(cell *c)
{
    pr_query *ratio = malloc(c->n * sizeof *ratio + 1), *dist = malloc(c->n * sizeof *dist + 1);
    int rc = ratio && dist ? 0 : -1;
    for (size_t i = 0; i < c->n && rc == 0; i++) {
        const query_match *q = &c->q[i];
        double r = isnan(q->d2) ? 0 : q->d2 > 0 ? sqrt((double)q->d1 / q->d2) : 1; /* no second: unambiguous */
        ratio[i] = (pr_query){isnan(q->d1) ? NAN : r, q->correct};
        dist[i] = (pr_query){sqrt((double)q->d1), q->correct};
    }
    if (rc == 0)
        rc = pr_curve_build(ratio, c->n, c->n, &c->ratio) != 0 || pr_curve_build(dist, c->n, c->n, &c->distance);
    free(ratio);
    free(dist);
    return rc ? -1 : 0;
}

static double recall_at_1(const cell *c)
{
    return c->n ? (double)c->ratio.correct / (double)c->n : NAN;
}

/* The i-th of at most CURVE_POINTS_OUT evenly spaced points of a curve (always its first and last). */
static size_t out_points(const pr_curve *c)
{
    return c->n < CURVE_POINTS_OUT ? c->n : CURVE_POINTS_OUT;
}
static const pr_point *out_point(const pr_curve *c, size_t i)
{
    size_t m = out_points(c);
    return &c->points[m > 1 ? i * (c->n - 1) / (m - 1) : 0];
}

static void json_curve(FILE *f, const pr_curve *c)
{
    fputc('[', f);
    for (size_t i = 0; i < out_points(c); i++) {
        const pr_point *p = out_point(c, i);
        fprintf(f, "%s[%.5f,%.5f]", i ? "," : "", p->false_rate, p->recall);
    }
    fputc(']', f);
}

static void write_json(FILE *f, const evaluation *e)
{
    fprintf(f, "{\"evaluation\":\"descriptors\",\"data\":");
    host_json_string(f, e->sel.root);
    fprintf(f,
            ",\"seed\":%llu,\"keypoints_per_model\":%u,\"radius_mr\":%g,\"noise_unit_mr\":%g,"
            "\"approx_gshot_max_neighbors\":%lld,\"device\":\"%s\",\"correct_match\":\"the nearest model keypoint "
            "is the same vertex\",\"threshold\":\"ratio of nearest to second-nearest descriptor distance "
            "(curve_ratio, auc_ratio); nearest distance (curve_distance, auc_distance)\",\"models\":[",
            (unsigned long long)e->seed, e->keypoints, RADIUS_MR, NOISE_UNIT_MR, e->cap,
            e->device ? e->device : "none");
    for (int i = 0; i < e->n_models; i++) {
        const model_run *m = &e->models[i];
        fprintf(f,
                "%s{\"name\":\"%s\",\"file\":\"%s\",\"vertices\":%zu,\"mesh_resolution\":%.6g,\"keypoints\":%zu,"
                "\"scenes\":[",
                i ? "," : "", m->m->name, m->m->file, m->vertices, m->mr, m->keypoints);
        for (int j = 0; j < e->sel.n_noise; j++)
            fprintf(f, "%s{\"noise\":%g,\"source\":\"%s\",\"pose\":\"%s\",\"residual_rms_mr\":%.4f}", j ? "," : "",
                    m->scenes[j].noise, m->scenes[j].source, m->scenes[j].pose, m->scenes[j].residual_mr);
        fputs("]}", f);
    }
    fputs("],\"results\":[", f);
    int first = 1;
    for (int s = 0; s < N_SETTINGS; s++)
        for (int j = 0; j < e->sel.n_noise; j++) {
            const cell *c = &e->cells[s][j];
            if (!c->n && !c->failed)
                continue;
            fprintf(f, "%s{\"descriptor\":\"%s\",\"impl\":\"%s\",\"max_neighbors\":%lld,\"noise\":%g", first ? "" : ",",
                    settings[s].label, settings[s].impl, settings[s].shot == SHOT_CAPPED ? e->cap : 0, e->sel.noise[j]);
            first = 0;
            if (c->failed) {
                fputs(",\"failed\":true}", f);
                continue;
            }
            fprintf(f,
                    ",\"queries\":%zu,\"valid_scene\":%llu,\"valid_model\":%llu,\"recall_at_1\":%.6f,"
                    "\"auc_ratio\":%.6f,\"auc_distance\":%.6f,\"scene_describe_ms\":%.1f,\"curve_ratio\":",
                    c->n, (unsigned long long)c->valid_scene, (unsigned long long)c->valid_model, recall_at_1(c),
                    c->ratio.auc, c->distance.auc, c->describe_ms);
            json_curve(f, &c->ratio);
            fputs(",\"curve_distance\":", f);
            json_curve(f, &c->distance);
            fputc('}', f);
        }
    fputs("]}\n", f);
}

static void markdown_table(FILE *f, const evaluation *e, const char *what, double (*value)(const cell *))
{
    fprintf(f, "\n%s\n\n| descriptor |", what);
    for (int j = 0; j < e->sel.n_noise; j++)
        fprintf(f, " noise %g |", e->sel.noise[j]);
    fputs("\n|---|", f);
    for (int j = 0; j < e->sel.n_noise; j++)
        fputs("---:|", f);
    for (int s = 0; s < N_SETTINGS; s++) {
        if (!e->cells[s][0].n && !e->cells[s][0].failed)
            continue;
        fprintf(f, "\n| %s |", settings[s].label);
        for (int j = 0; j < e->sel.n_noise; j++) {
            const cell *c = &e->cells[s][j];
            if (c->failed)
                fputs(" failed |", f);
            else
                fprintf(f, " %.3f |", value(c));
        }
    }
    fputc('\n', f);
}

static double auc_ratio(const cell *c)
{
    return c->ratio.auc;
}
static double auc_distance(const cell *c)
{
    return c->distance.auc;
}

static void write_markdown(FILE *f, const evaluation *e)
{
    fprintf(f, "# grip-host eval descriptors\n\nBologna retrieval models:");
    for (int i = 0; i < e->n_models; i++)
        fprintf(f, "%s %s", i ? "," : "", e->models[i].m->name);
    fprintf(f,
            "; %u keypoints a model (seed %llu), the same vertices in each scene; support radius %g mesh "
            "resolutions; noise in Bologna mesh resolutions (%g x the median nearest-neighbour spacing); "
            "descriptors on the %s; SHOT capped: max_neighbors %lld. A match is correct when the nearest model "
            "descriptor is the true vertex's.\n",
            e->keypoints, (unsigned long long)e->seed, RADIUS_MR, NOISE_UNIT_MR, e->device ? e->device : "-", e->cap);
    markdown_table(
        f, e, "Area under recall vs 1-precision, threshold on the nearest/second-nearest distance ratio:", auc_ratio);
    markdown_table(f, e, "Area under recall vs 1-precision, threshold on the nearest distance:", auc_distance);
    markdown_table(f, e, "Recall@1 (the nearest model descriptor is the true one):", recall_at_1);
}

static void write_svg(FILE *f, const evaluation *e, int j)
{
    svg_curve curves[N_SETTINGS];
    char labels[N_SETTINGS][96];
    double xs[N_SETTINGS][CURVE_POINTS_OUT], ys[N_SETTINGS][CURVE_POINTS_OUT];
    int n = 0;
    for (int s = 0; s < N_SETTINGS; s++) {
        const cell *c = &e->cells[s][j];
        if (!c->n || c->failed)
            continue;
        for (size_t i = 0; i < out_points(&c->ratio); i++) {
            xs[n][i] = out_point(&c->ratio, i)->false_rate;
            ys[n][i] = out_point(&c->ratio, i)->recall;
        }
        snprintf(labels[n], sizeof labels[n], "%s: AUC %.3f", settings[s].label, c->ratio.auc);
        curves[n] = (svg_curve){labels[n], xs[n], ys[n], out_points(&c->ratio)};
        n++;
    }
    char title[160];
    snprintf(title, sizeof title, "Bologna retrieval, noise %g mr: descriptor matching", e->sel.noise[j]);
    svg_curves_write(f, title, "1 - precision (threshold on the nearest / second-nearest distance ratio)", "recall",
                     curves, n);
}

static int write_out(const char *dir, const evaluation *e)
{
    char path[4200];
    int bad = 0;
    if (host_make_dir(dir, "eval") != 0)
        return 1;
    for (int j = -2; j < e->sel.n_noise; j++) { /* -2: JSON, -1: Markdown, then one SVG per noise level */
        if (j < 0)
            snprintf(path, sizeof path, "%s/descriptors.%s", dir, j == -2 ? "json" : "md");
        else
            snprintf(path, sizeof path, "%s/descriptors_noise_%g.svg", dir, e->sel.noise[j]);
        FILE *f = fopen(path, "w");
        if (f) {
            if (j == -2)
                write_json(f, e);
            else if (j == -1)
                write_markdown(f, e);
            else
                write_svg(f, e, j);
        }
        if (!f || fclose(f) != 0) {
            fprintf(stderr, "grip-host: eval: cannot write %s\n", path);
            bad = 1;
        }
    }
    return bad;
}

int eval_descriptors(const host_options *o)
{
    evaluation *e = calloc(1, sizeof *e);
    if (!e) {
        fprintf(stderr, "grip-host: eval: out of memory\n");
        return 1;
    }
    int rc = setup(o, e);
    bench_options b = {0};
    b.plugin = o->plugin;
    b.argv0 = o->argv0;
    b.sets = o->sets;
    b.n_sets = o->n_sets;
    bench_plugin bp = {0};
    int plugin_open = 0;
    if (rc == 0) {
        rc = bench_plugin_open(&b, &bp);
        plugin_open = rc == 0;
    }
    const grip_stage_impl *impls[N_SETTINGS] = {0};
    for (int s = 0; s < N_SETTINGS && rc == 0; s++) {
        for (uint32_t i = 0; i < bp.n_impls; i++)
            if (strcmp(bp.impls[i]->name, settings[s].impl) == 0)
                impls[s] = bp.impls[i];
        if (!impls[s])
            fprintf(stderr,
                    "grip-host: eval: the plugin has no descriptor stage '%s' (or descriptor.impl chose "
                    "another): %s left out\n",
                    settings[s].impl, settings[s].label);
    }
    for (int mi = 0; mi < BOLOGNA_MODELS && rc == 0; mi++)
        if (e->sel.use_model[mi])
            rc = run_model(&bp, impls, e, mi);
    for (int s = 0; s < N_SETTINGS && rc == 0; s++)
        for (int j = 0; j < e->sel.n_noise && rc == 0; j++)
            if (build_curves(&e->cells[s][j]) != 0) {
                fprintf(stderr, "grip-host: eval: out of memory\n");
                rc = 1;
            }
    if (rc == 0) {
        if (o->json)
            write_json(stdout, e);
        else
            write_markdown(stdout, e);
        if (o->out_dir)
            rc = write_out(o->out_dir, e);
    }
    for (int s = 0; s < N_SETTINGS; s++)
        for (int j = 0; j < MAX_NOISE_LEVELS; j++) {
            free(e->cells[s][j].q);
            pr_curve_free(&e->cells[s][j].ratio);
            pr_curve_free(&e->cells[s][j].distance);
        }
    if (plugin_open)
        bench_plugin_close(&bp);
    free(e);
    return rc;
}
