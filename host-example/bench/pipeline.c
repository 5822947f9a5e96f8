/* pipeline.c -- `grip-host bench pipeline`: whole recognition runs on named workloads (workloads.h), as `grip-host
 * run` makes them: the pipeline runner's pipeline_run (pipeline.h) describes the models, indexes them, describes
 * the scene, matches, groups and verifies, and its accounting (accounting.h) counts the bytes each run moves.
 *
 * Per workload: its clouds made ready in host memory (generated or read; not timed), its config built (--config or
 * the workload's shipped one, then --set), the pipeline opened once (plugins, contexts, stages: not timed), then
 * --warmup untimed runs and --repeat timed ones. Reported: the median of each of the six stage times over the timed
 * runs, the median and fastest end-to-end time (the wall time of a whole pipeline_run, which also holds the
 * runner's own host work: copying results, explaining them), and from the last run its bytes over PCIe, the
 * device pools' growth, its counts and the instances it accepted. A line per workload (text, or JSON with --json),
 * the JSON lines also into --out FILE and a stacked-bar chart of the stage medians into --svg FILE, both rewritten
 * after each workload so that a run cut short keeps what it finished. */
#include "bench/bench_common.h"
#include "bench/subcommands.h"
#include "bench/workloads.h"
#include "eval/svg_stacked.h"
#include "host_util.h"
#include "shipped_configs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_REPEAT 5
#define DEFAULT_WARMUP 1
#define N_STAGES 6

/* The stages of a run as the bench splits it: the descriptor stage's time is the models' part and the scene's. */
static const char *const stage_names[N_STAGES] = {"describe_models", "index", "describe_scene",
                                                  "match",           "group", "verify"};

typedef struct workload_result {
    const workload *w;
    const char *skipped; /* why it did not run here, or NULL (points into `failed`) */
    char failed[1024];   /* why it failed, or "" */
    const char *config;  /* --config, or the shipped config's name */
    char device[8];      /* the pipeline's device: "cuda" or "cpu" */
    int repeat, warmup;
    uint32_t width, height; /* the scene cloud (height 1: unorganized) */
    size_t scene_points;    /* finite */
    size_t scene_bytes;     /* the scene's xyz as uploaded (width x height x 3 floats): the floor of a run's uploads */
    uint32_t n_models, n_clouds, objects;
    size_t model_points;           /* in all model clouds */
    double stage_ms[N_STAGES];     /* medians over the timed runs */
    double total_ms, total_min_ms; /* end to end: median and fastest */
    pipeline_accounting transfers; /* of the last run */
    size_t model_keypoints, scene_keypoints, correspondences, hypotheses, instances;
} workload_result;

/* ---- one workload ------------------------------------------------------------------------------------------- */

/* The workload's config: --config or its shipped one, then every --set. */
static int build_config(const bench_options *b, const workload *w, grip_config *cfg, grip_diag *diag)
{
    int bad = 0;
    if (b->config) {
        bad |= grip_config_load(b->config, cfg, diag) != 0;
    } else {
        const shipped_config *sc = shipped_config_find(w->config);
        if (!sc) {
            grip_diag_add(diag, "workload %s: its config %s is not built into grip-host", w->name, w->config);
            return -1;
        }
        bad |= grip_config_load_mem(sc->name, sc->text, sc->len, cfg, diag) != 0;
    }
    for (int i = 0; i < b->n_sets; i++)
        bad |= grip_config_set(cfg, b->sets[i], diag) != 0;
    return bad ? -1 : 0;
}

/* Where the pipeline runs: its pipeline.device, "auto" resolved by the default plugin's device count. */
static void pipeline_device(const grip_pipeline *p, const grip_config *cfg, char *out, size_t n)
{
    grip_pipeline_settings s;
    grip_config_pipeline(cfg, &s);
    const grip_plugin *t = &p->plugins[0].table;
    int32_t devices = t->device_count ? t->device_count(p->ctxs[0]) : 0;
    snprintf(out, n, "%s",
             strcmp(s.device, "cuda") == 0 || (strcmp(s.device, "auto") == 0 && devices > 0) ? "cuda" : "cpu");
}

/* The six stage times of one run, in stage_names' order. */
static void split_stages(const pipeline_result *r, double *out)
{
    out[0] = r->models_descriptor_ms;
    out[1] = r->timings_ms[GRIP_STAGE_INDEX];
    out[2] = r->timings_ms[GRIP_STAGE_DESCRIPTOR] - r->models_descriptor_ms;
    out[3] = r->timings_ms[GRIP_STAGE_MATCH];
    out[4] = r->timings_ms[GRIP_STAGE_GROUP];
    out[5] = r->timings_ms[GRIP_STAGE_VERIFY];
}

static void keep_counts(const pipeline_result *r, workload_result *res)
{
    res->transfers = r->accounting;
    res->model_keypoints = 0;
    for (uint32_t m = 0; m < r->n_models; m++)
        res->model_keypoints += r->model_keypoints[m];
    res->scene_keypoints = r->scene_keypoints;
    res->correspondences = r->correspondences;
    res->hypotheses = r->n_hypotheses;
    res->instances = pipeline_result_accepted(r);
}

/* Warm-up and timed runs of an open pipeline. 0, or 1 with the reason in diag. */
static int time_runs(grip_pipeline *p, const workload_clouds *c, workload_result *res, grip_diag *diag)
{
    double *ms = calloc((size_t)res->repeat * (N_STAGES + 1), sizeof *ms); /* stage-major, then end to end */
    if (!ms) {
        grip_diag_add(diag, "out of memory");
        return 1;
    }
    pipeline_result r = {0};
    int rc = 0;
    for (int run = -res->warmup; run < res->repeat && rc == 0; run++) {
        pipeline_result_free(&r);
        double t0 = host_now_ms();
        if (pipeline_run(p, c->clouds, c->n_clouds, c->model_of_cloud, c->n_models, c->scene, &r, diag) != 0) {
            rc = 1;
            break;
        }
        double total = host_now_ms() - t0, stages[N_STAGES];
        if (run < 0)
            continue;
        split_stages(&r, stages);
        for (int s = 0; s < N_STAGES; s++)
            ms[(size_t)s * res->repeat + run] = stages[s];
        ms[(size_t)N_STAGES * res->repeat + run] = total;
    }
    if (rc == 0) {
        for (int s = 0; s < N_STAGES; s++)
            res->stage_ms[s] = host_median(ms + (size_t)s * res->repeat, (size_t)res->repeat);
        res->total_ms = host_median(ms + (size_t)N_STAGES * res->repeat, (size_t)res->repeat);
        res->total_min_ms = ms[(size_t)N_STAGES * res->repeat]; /* sorted by host_median */
        keep_counts(&r, res);
    }
    pipeline_result_free(&r);
    free(ms);
    return rc;
}

/* Opens the workload's pipeline and times it. 0; 1 when a run failed; 2 when the config or the plugin is wrong
 * (every workload would fail alike). The reason goes to res->failed. */
static int bench_workload(const bench_options *b, const char *plugin, const workload_clouds *c, workload_result *res)
{
    grip_config cfg = {0};
    grip_diag diag = {0};
    grip_pipeline p;
    int rc = 0;
    if (build_config(b, res->w, &cfg, &diag) != 0 || pipeline_open_for(&p, plugin, &cfg, c->scene, &diag) != 0) {
        rc = 2;
    } else {
        pipeline_device(&p, &cfg, res->device, sizeof res->device);
        rc = time_runs(&p, c, res, &diag);
        pipeline_close(&p);
    }
    if (rc != 0) {
        size_t used = 0;
        for (size_t i = 0; i < diag.count && used + 1 < sizeof res->failed; i++)
            used += (size_t)snprintf(res->failed + used, sizeof res->failed - used, "%s%s", i ? "; " : "",
                                     diag.messages[i]);
        if (!res->failed[0])
            snprintf(res->failed, sizeof res->failed, "failed");
    }
    grip_diag_free(&diag);
    grip_config_free(&cfg);
    return rc;
}

/* Makes the workload's clouds, describes them in res and benches it. Exit-status-like: 0 (ran or skipped), 1, 2. */
static int run_one(const bench_options *b, const char *plugin, workload_result *res)
{
    const workload *w = res->w;
    workload_clouds c;
    res->config = b->config ? b->config : w->config;
    res->repeat = w->repeat ? w->repeat : b->repeat ? b->repeat : DEFAULT_REPEAT;
    res->warmup = b->warmup >= 0 ? b->warmup : DEFAULT_WARMUP;
    const char *data = b->data_dir ? b->data_dir : getenv("GRIP_DATA");
    int loaded = workload_load(w, data, b->seed, &c, res->failed, sizeof res->failed);
    if (loaded == 1) {
        res->skipped = res->failed;
        return 0;
    }
    if (loaded != 0)
        return 1;
    res->width = c.scene->width;
    res->height = c.scene->height;
    res->scene_points = host_cloud_count_finite(c.scene);
    res->scene_bytes = c.scene->n * 3 * sizeof(float);
    res->n_models = c.n_models;
    res->n_clouds = c.n_clouds;
    res->objects = c.objects;
    res->model_points = workload_model_points(&c);
    int rc = bench_workload(b, plugin, &c, res);
    workload_clouds_free(&c);
    return rc;
}

/* ---- reports ------------------------------------------------------------------------------------------------ */

static pipeline_transfer transfer_sum(const pipeline_accounting *a)
{
    pipeline_transfer t = {0};
    for (int s = 0; s < PIPELINE_STAGES; s++) {
        t.h2d_bytes += a->stage[s].h2d_bytes;
        t.d2h_bytes += a->stage[s].d2h_bytes;
        t.h2d_copies += a->stage[s].h2d_copies;
        t.d2h_copies += a->stage[s].d2h_copies;
    }
    return t;
}

static void print_text(const workload_result *r)
{
    if (r->skipped || r->failed[0]) {
        printf("workload=%s %s: %s\n", r->w->name, r->skipped ? "skipped" : "failed",
               r->skipped ? r->skipped : r->failed);
        return;
    }
    printf("workload=%s device=%s scene_points=%zu image=%ux%u models=%u model_clouds=%u model_points=%zu objects=%u "
           "repeat=%d",
           r->w->name, r->device, r->scene_points, r->width, r->height, r->n_models, r->n_clouds, r->model_points,
           r->objects, r->repeat);
    for (int s = 0; s < N_STAGES; s++)
        printf(" %s_ms=%.3f", stage_names[s], r->stage_ms[s]);
    printf(" total_ms=%.3f", r->total_ms);
    if (r->transfers.available) {
        pipeline_transfer t = transfer_sum(&r->transfers);
        printf(" h2d_bytes=%llu d2h_bytes=%llu scene_bytes=%zu pool_grows=%llu", (unsigned long long)t.h2d_bytes,
               (unsigned long long)t.d2h_bytes, r->scene_bytes, (unsigned long long)r->transfers.pool_grows);
    }
    printf(" instances=%zu\n", r->instances);
}

/* One JSON line (pipeline.c's head says what it holds; docs/performance.md lists the fields). */
static void print_json(FILE *f, const workload_result *r, double scale)
{
    fprintf(f, "{\"benchmark\":\"pipeline\",\"workload\":");
    host_json_string(f, r->w->name);
    if (bench_json_unfinished(f, r->skipped, r->failed)) {
        fputc('\n', f);
        return;
    }
    fprintf(f, ",\"device\":\"%s\",\"config\":", r->device);
    host_json_string(f, r->config);
    fprintf(f,
            ",\"scale\":%.6g,\"repeat\":%d,\"warmup\":%d,\"scene\":{\"width\":%u,\"height\":%u,\"points\":%zu,"
            "\"bytes\":%zu},\"models\":%u,\"model_clouds\":%u,\"model_points\":%zu,\"objects\":%u,"
            "\"median_ms\":{",
            r->w->tutorial ? 1.0 : scale, r->repeat, r->warmup, r->width, r->height, r->scene_points, r->scene_bytes,
            r->n_models, r->n_clouds, r->model_points, r->objects);
    for (int s = 0; s < N_STAGES; s++)
        fprintf(f, "%s\"%s\":%.6f", s ? "," : "", stage_names[s], r->stage_ms[s]);
    fprintf(f, "},\"end_to_end_ms\":{\"median\":%.6f,\"min\":%.6f},\"transfers\":", r->total_ms, r->total_min_ms);
    if (r->transfers.available) {
        pipeline_transfer t = transfer_sum(&r->transfers);
        fprintf(f,
                "{\"h2d_bytes\":%llu,\"d2h_bytes\":%llu,\"h2d_copies\":%llu,\"d2h_copies\":%llu,"
                "\"pool_grows\":%llu,\"pool_reserved_bytes\":%llu}",
                (unsigned long long)t.h2d_bytes, (unsigned long long)t.d2h_bytes, (unsigned long long)t.h2d_copies,
                (unsigned long long)t.d2h_copies, (unsigned long long)r->transfers.pool_grows,
                (unsigned long long)r->transfers.pool_reserved_bytes);
    } else {
        fputs("null", f);
    }
    fprintf(f,
            ",\"counts\":{\"model_keypoints\":%zu,\"scene_keypoints\":%zu,\"correspondences\":%zu,"
            "\"hypotheses\":%zu},\"instances\":%zu}\n",
            r->model_keypoints, r->scene_keypoints, r->correspondences, r->hypotheses, r->instances);
}

/* Rewrites the chart of the workloads that ran among res[0 .. n). 0, or -1 after a message. */
static int write_svg(const char *path, const workload_result *res, size_t n)
{
    svg_stack *bars = calloc(n + 1, sizeof *bars);
    char(*notes)[48] = calloc(n + 1, sizeof *notes);
    FILE *f = bars && notes ? fopen(path, "w") : NULL;
    if (!f) {
        fprintf(stderr, "grip-host: bench pipeline: cannot write --svg %s\n", path);
        free(bars);
        free(notes);
        return -1;
    }
    int k = 0;
    const char *device = NULL;
    for (size_t i = 0; i < n; i++) {
        if (res[i].skipped || res[i].failed[0])
            continue;
        snprintf(notes[k], sizeof notes[k], "%.4g ms", res[i].total_ms);
        bars[k] = (svg_stack){res[i].w->name, res[i].stage_ms, notes[k]};
        device = device && strcmp(device, res[i].device) != 0 ? "mixed" : res[i].device;
        k++;
    }
    char title[128];
    snprintf(title, sizeof title, "grip-host bench pipeline (%s)", device ? device : "no workload ran");
    svg_stacked_write(f, title, "median ms per stage (over each bar: end to end)", stage_names, N_STAGES, bars, k);
    int rc = fclose(f) == 0 ? 0 : -1;
    if (rc != 0)
        fprintf(stderr, "grip-host: bench pipeline: cannot write --svg %s\n", path);
    free(bars);
    free(notes);
    return rc;
}

/* Rewrites --out with the JSON lines of res[0 .. n). 0, or -1 after a message. */
static int write_json_lines(const char *path, const workload_result *res, size_t n, double scale)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "grip-host: bench pipeline: cannot write --out %s\n", path);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        print_json(f, &res[i], scale);
    if (fclose(f) != 0) {
        fprintf(stderr, "grip-host: bench pipeline: cannot write --out %s\n", path);
        return -1;
    }
    return 0;
}

/* ---- the command -------------------------------------------------------------------------------------------- */

/* The --workloads list (or the default) parsed, each checked before anything runs. 0, or 2 after a message. */
static int parse_workloads(const bench_options *b, workload **out, size_t *n)
{
    const char *list = b->workloads ? b->workloads : WORKLOADS_DEFAULT;
    size_t cap = 1;
    for (const char *s = list; *s; s++)
        cap += *s == ',';
    *out = calloc(cap, sizeof **out);
    *n = 0;
    if (!*out) {
        fprintf(stderr, "grip-host: bench pipeline: out of memory\n");
        return 1;
    }
    char err[512];
    for (const char *s = list;; s++) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (workload_parse(s, len, b->scale > 0 ? b->scale : 1, &(*out)[*n], err, sizeof err) != 0) {
            fprintf(stderr, "grip-host: bench pipeline: --workloads: %s\n", err);
            free(*out);
            *out = NULL;
            return 2;
        }
        ++*n;
        if (!end)
            return 0;
        s = end;
    }
}

int bench_pipeline(const bench_options *b)
{
    if (b->scale > 1) {
        fprintf(stderr, "grip-host: bench pipeline: --scale %g is not in (0, 1]\n", b->scale);
        return 2;
    }
    char plugin[4096];
    if (b->plugin) {
        snprintf(plugin, sizeof plugin, "%s", b->plugin);
    } else if (grip_loader_default_path(b->argv0, plugin, sizeof plugin) != 0) {
        fprintf(stderr, "grip-host: no plugin found (looked for %s); give --plugin PATH or set GRIP_PLUGIN\n", plugin);
        return 2;
    }
    workload *ws = NULL;
    size_t n = 0;
    int rc = parse_workloads(b, &ws, &n);
    workload_result *res = rc == 0 ? calloc(n + 1, sizeof *res) : NULL;
    if (rc == 0 && !res) {
        fprintf(stderr, "grip-host: bench pipeline: out of memory\n");
        rc = 1;
    }
    double scale = b->scale > 0 ? b->scale : 1;
    if (rc == 0 && !b->json)
        printf("bench pipeline: %zu workload%s, whole runs (describe models, index, describe scene, match, group, "
               "verify); medians over the timed runs after %d warm-up%s\n",
               n, n == 1 ? "" : "s", b->warmup >= 0 ? b->warmup : DEFAULT_WARMUP,
               (b->warmup >= 0 ? b->warmup : DEFAULT_WARMUP) == 1 ? "" : "s");
    for (size_t i = 0; rc != 2 && res && i < n; i++) {
        res[i].w = &ws[i];
        int one = run_one(b, plugin, &res[i]);
        rc = one > rc ? one : rc;
        if (res[i].failed[0] && !res[i].skipped)
            fprintf(stderr, "grip-host: bench pipeline: %s: %s\n", ws[i].name, res[i].failed);
        if (b->json)
            print_json(stdout, &res[i], scale);
        else
            print_text(&res[i]);
        fflush(stdout);
        if (b->out && write_json_lines(b->out, res, i + 1, scale) != 0)
            rc = 1;
        if (b->svg && write_svg(b->svg, res, i + 1) != 0)
            rc = 1;
    }
    free(res);
    free(ws);
    return rc;
}
