/* recall.c -- `grip-host bench recall`: descriptor retrieval on the Bologna "Retrieval" data, where
 * the scene is a posed, noisy copy of the model and scene vertex k IS model vertex k (or on a generated case
 * made the same way from the benchmarks' surface).
 *
 * Scene keypoints come from uniform sampling of the scene; the model keypoints are the SAME vertex indices
 * (host-given), so keypoint i of the scene has exactly one true counterpart, keypoint i of the model. Both clouds
 * are described, the model's descriptors indexed (index stage `bruteforce`) and each scene descriptor matched to
 * its nearest model descriptor (match stage `knn`, k = 1), all through the plugin's ABI. Reported: recall@1, the
 * fraction of scene keypoints matched to their true counterpart, and the fraction matched within 2 mesh
 * resolutions of it (a near-by vertex whose neighbourhood is nearly the same); an invalid (NaN) or unmatched
 * scene descriptor counts as a miss. Computed normals are flipped toward the viewpoint: the model's is its
 * frame's origin and the scene's is T applied to it, so that both clouds' normals are flipped alike. */
#include "bench/bench_common.h"
#include "bench/grid.h"
#include "bench/retrieval.h"
#include "bench/subcommands.h"
#include "bench/surface.h"
#include "host_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_LEAF_MR 5.0     /* uniform-sampling leaf, in mesh resolutions (~3-5 mm on the Stanford models) */
#define DEFAULT_RADIUS_MR 15.0  /* descriptor support radius, in mesh resolutions */
#define NEAR_MR 2.0             /* a match this close to the true vertex counts as near */
#define DEFAULT_MODEL_POINTS 20000ull
#define GENERATED_SPACING 1e-3  /* m: the generated model's density, 1 point per GENERATED_SPACING^2 */
#define GENERATED_NOISE_MR 0.1  /* per-axis noise of the generated scene, like Bologna's lowest level */
#define MAX_SETTINGS_PER_IMPL 4 /* exact, then the support cap at 25, 50 and 100 % of the median support */

typedef struct recall_data {
    host_cloud model, scene;
    const char *truth;          /* the .xf file, or "generated" */
    double T[16];               /* model -> scene, row-major */
    double mr, leaf, radius, gt_rms_mr;
    uint32_t *kp;               /* k scene keypoints (vertex indices finite in both clouds) */
    size_t k;
    double support_mean, support_median;
} recall_data;

typedef struct recall_setting {
    const grip_stage_impl *impl;
    char label[64];
    char cap[64];               /* "descriptor.max_neighbors=N", or "" */
} recall_setting;

typedef struct recall_result {
    const char *label, *impl, *device, *skipped; /* skipped may point to `failed` (GRIP_EUNSUPPORTED) */
    char failed[1024];
    long long max_neighbors;    /* -1 when the impl has no such key */
    uint64_t valid_scene, valid_model;
    double recall, near;
    double scene_ms, model_ms, index_ms, match_ms;
} recall_result;

static void recall_data_free(recall_data *d)
{
    host_cloud_free(&d->model);
    host_cloud_free(&d->scene);
    free(d->kp);
}

/* ---- data -------------------------------------------------------------------------------------------------- */

static int load_data(const bench_options *b, recall_data *d)
{
    char err[1024];
    if (cloud_read(b->model, &d->model, err, sizeof err) != 0 || cloud_read(b->scene, &d->scene, err, sizeof err)) {
        fprintf(stderr, "grip-host: bench: %s\n", err);
        return 1;
    }
    if (retrieval_read_xf(b->gt, d->T, err, sizeof err) != 0) {
        fprintf(stderr, "grip-host: bench: %s\n", err);
        return 1;
    }
    if (d->model.n != d->scene.n) {
        fprintf(stderr, "grip-host: bench: %s has %zu points and %s %zu: scene vertex k must be model vertex k\n",
                b->model, d->model.n, b->scene, d->scene.n);
        return 1;
    }
    d->truth = b->gt;
    return 0;
}

/* Sets the shape and the name of an unorganized cloud of n points. 0, or -1 when out of memory. */
static int name_cloud(host_cloud *c, size_t n, const char *name)
{
    c->n = n;
    c->width = (uint32_t)n;
    c->height = 1;
    c->path = host_strdup(name);
    return c->path ? 0 : -1;
}

/* The model: the benchmarks' surface (its normals dropped: the stage computes them, as on scanned data); the
 * scene: the model posed by a random T, with Gaussian noise of GENERATED_NOISE_MR mesh resolutions per axis. */
static int generate_data(const bench_options *b, recall_data *d)
{
    size_t n = (size_t)(b->points ? b->points : DEFAULT_MODEL_POINTS);
    float *normals = NULL;
    int bad = bench_surface_sample(n, (double)n * GENERATED_SPACING * GENERATED_SPACING, b->seed, &d->model.xyz,
                                   &normals) != 0;
    free(normals);
    bad |= name_cloud(&d->model, n, "generated-model") != 0;
    uint64_t rng = b->seed ^ 0x5EEDF00Dull;
    if (!bad) {
        retrieval_random_pose(&rng, d->T);
        double sigma = GENERATED_NOISE_MR * retrieval_mesh_resolution(&d->model);
        bad = retrieval_noisy_copy(&d->model, d->T, sigma, &rng, "generated-scene", &d->scene) != 0;
    }
    if (bad) {
        fprintf(stderr, "grip-host: bench: out of memory for a generated case of %zu points\n", n);
        return 1;
    }
    d->truth = "generated";
    return 0;
}

/* ---- measurements on the host ------------------------------------------------------------------------------ */

/* Scene keypoints (uniform sampling at the leaf, kept where the model vertex is finite too) and their support. */
static int choose_keypoints(recall_data *d)
{
    bench_grid g;
    uint32_t *idx = NULL;
    size_t count = 0;
    if (bench_grid_build(&g, d->scene.xyz, d->scene.n, d->leaf) != 0)
        return -1;
    int rc = bench_grid_sample(&g, &idx, &count);
    bench_grid_free(&g);
    if (rc != 0)
        return -1;
    d->k = 0;
    for (size_t i = 0; i < count; i++) {
        const float *m = d->model.xyz + 3 * (size_t)idx[i];
        if (isfinite(m[0]) && isfinite(m[1]) && isfinite(m[2]))
            idx[d->k++] = idx[i];
    }
    d->kp = idx;
    double *support = malloc(d->k * sizeof *support + 1);
    if (!support || bench_grid_build(&g, d->scene.xyz, d->scene.n, d->radius) != 0) {
        free(support);
        return -1;
    }
    double sum = 0;
    for (size_t i = 0; i < d->k; i++)
        sum += support[i] = (double)bench_grid_count_within(&g, d->scene.xyz + 3 * (size_t)d->kp[i], d->radius);
    d->support_mean = d->k ? sum / (double)d->k : NAN;
    d->support_median = host_median(support, d->k);
    free(support);
    bench_grid_free(&g);
    return 0;
}

static int prepare_data(const bench_options *b, recall_data *d)
{
    memset(d, 0, sizeof *d);
    int given = (b->model != NULL) + (b->scene != NULL) + (b->gt != NULL);
    if (given != 0 && given != 3) {
        fprintf(stderr, "grip-host: bench: recall needs --model, --scene and --gt together (or none of them, for "
                        "a generated case)\n");
        return 2;
    }
    int rc = given ? load_data(b, d) : generate_data(b, d);
    if (rc == 0) {
        d->mr = retrieval_mesh_resolution(&d->model);
        if (!(d->mr > 0)) {
            fprintf(stderr, "grip-host: bench: %s: cannot measure the mesh resolution (median nearest-neighbour "
                            "spacing %g)\n", d->model.path, d->mr);
            rc = 1;
        }
    }
    if (rc == 0) {
        d->leaf = b->leaf > 0 ? b->leaf : DEFAULT_LEAF_MR * d->mr;
        d->radius = b->radius > 0 ? b->radius : DEFAULT_RADIUS_MR * d->mr;
        d->gt_rms_mr = retrieval_residual(&d->model, &d->scene, d->T) / d->mr;
        if (choose_keypoints(d) != 0) {
            fprintf(stderr, "grip-host: bench: out of memory choosing keypoints (or leaf %g too small)\n", d->leaf);
            rc = 1;
        } else if (d->k == 0) {
            fprintf(stderr, "grip-host: bench: no scene keypoint at leaf %g\n", d->leaf);
            rc = 1;
        }
    }
    if (rc != 0)
        recall_data_free(d);
    return rc;
}

/* ---- settings ---------------------------------------------------------------------------------------------- */

static int has_cap_key(const grip_stage_impl *impl)
{
    for (uint32_t i = 0; i < impl->n_params; i++)
        if (strcmp(impl->params[i].key, "max_neighbors") == 0)
            return 1;
    return 0;
}

/* Without --sweep: the one impl chosen (descriptor.impl, else the plugin's first). With it: every impl, and for
 * an impl with a support cap (max_neighbors), exact and capped at 25, 50 and 100 % of the median support. */
static uint32_t make_settings(const bench_options *b, const recall_data *d, const grip_stage_impl *const *impls,
                              uint32_t n_impls, recall_setting *out)
{
    static const int shares[MAX_SETTINGS_PER_IMPL] = {0, 25, 50, 100};
    uint32_t n = 0;
    for (uint32_t i = 0; i < (b->sweep ? n_impls : 1); i++) {
        int capped = b->sweep && has_cap_key(impls[i]);
        for (int s = 0; s < (capped ? MAX_SETTINGS_PER_IMPL : 1); s++, n++) {
            recall_setting *st = &out[n];
            memset(st, 0, sizeof *st);
            st->impl = impls[i];
            snprintf(st->label, sizeof st->label, "%s", impls[i]->name);
            if (!capped)
                continue;
            long long cap = shares[s] ? llround(d->support_median * shares[s] / 100.0) : 0;
            cap = shares[s] && cap < 1 ? 1 : cap;
            snprintf(st->cap, sizeof st->cap, "descriptor.max_neighbors=%lld", cap);
            if (shares[s])
                snprintf(st->label, sizeof st->label, "%s-cap%d", impls[i]->name, shares[s]);
            else
                snprintf(st->label, sizeof st->label, "%s-exact", impls[i]->name);
        }
    }
    return n;
}

/* ---- one setting ------------------------------------------------------------------------------------------- */

/* One describe kept for the result, then `repeat` timed ones. */
static grip_status describe_cloud(const bench_run *r, const grip_cloud *c, uint32_t role, const grip_array *kp,
                                  int repeat, grip_features **f, double *ms, recall_result *res)
{
    const grip_stage_impl *d = r->p.impl[GRIP_STAGE_DESCRIPTOR];
    grip_status s = d->describe(r->p.stage[GRIP_STAGE_DESCRIPTOR], c, role, kp, GRIP_MEM_HOST, f);
    if (s != GRIP_OK) {
        bench_run_error(r, GRIP_STAGE_DESCRIPTOR, s, c->name, res->failed, sizeof res->failed);
        return s;
    }
    double min_ms = 0;
    return bench_time_describe(r, c, role, kp, GRIP_MEM_HOST, repeat, ms, &min_ms, res->failed, sizeof res->failed);
}

/* The first (best) reference row matched to each query; UINT32_MAX where none. */
static void best_matches(const grip_matches *m, uint32_t *best, size_t k)
{
    for (size_t i = 0; i < k; i++)
        best[i] = UINT32_MAX;
    const uint32_t *q = m->query.data, *ref = m->reference.data;
    for (uint64_t j = 0; j < m->count; j++)
        if (q[j] < k && best[q[j]] == UINT32_MAX)
            best[q[j]] = ref[j];
}

static void score(const recall_data *d, const grip_matches *m, uint32_t *best, recall_result *res)
{
    best_matches(m, best, d->k);
    size_t exact = 0, near = 0;
    double near2 = NEAR_MR * d->mr * NEAR_MR * d->mr;
    for (size_t i = 0; i < d->k; i++) {
        if (best[i] >= d->k)
            continue;
        exact += best[i] == i;
        const float *a = d->model.xyz + 3 * (size_t)d->kp[best[i]], *t = d->model.xyz + 3 * (size_t)d->kp[i];
        double dx = (double)a[0] - t[0], dy = (double)a[1] - t[1], dz = (double)a[2] - t[2];
        near += dx * dx + dy * dy + dz * dz <= near2;
    }
    res->recall = (double)exact / (double)d->k;
    res->near = (double)near / (double)d->k;
}

/* Index the model's descriptors, match the scene's, score. */
static grip_status match_and_score(const bench_run *r, const recall_data *d, const grip_features *scene,
                                   const grip_features *model, recall_result *res)
{
    grip_index *index = NULL;
    grip_matches *m = NULL;
    uint32_t *best = malloc(d->k * sizeof *best + 1);
    if (!best) {
        snprintf(res->failed, sizeof res->failed, "out of host memory");
        return GRIP_ENOMEM;
    }
    double t0 = host_now_ms();
    grip_status s = r->p.impl[GRIP_STAGE_INDEX]->build(r->p.stage[GRIP_STAGE_INDEX], &model->descriptors, NULL, &index);
    double t1 = host_now_ms();
    if (s != GRIP_OK)
        bench_run_error(r, GRIP_STAGE_INDEX, s, "the model's descriptors", res->failed, sizeof res->failed);
    if (s == GRIP_OK) {
        s = r->p.impl[GRIP_STAGE_MATCH]->match(r->p.stage[GRIP_STAGE_MATCH], index, &scene->descriptors,
                                               GRIP_MEM_HOST, &m);
        if (s != GRIP_OK)
            bench_run_error(r, GRIP_STAGE_MATCH, s, "the scene's descriptors", res->failed, sizeof res->failed);
    }
    res->index_ms = t1 - t0;
    res->match_ms = host_now_ms() - t1;
    if (s == GRIP_OK)
        score(d, m, best, res);
    if (m)
        m->release(m);
    if (index)
        index->release(index);
    free(best);
    return s;
}

/* The cap the stage runs with (the config's, else the table's default); -1 when the impl has none. */
static long long cap_in_use(const bench_run *r)
{
    const grip_config_entry *e = grip_config_find(&r->cfg, "descriptor", "max_neighbors");
    for (uint32_t i = 0; i < r->impl->n_params; i++)
        if (strcmp(r->impl->params[i].key, "max_neighbors") == 0)
            return atoll(e ? e->value : r->impl->params[i].default_value);
    return -1;
}

static int run_setting(const bench_plugin *bp, const bench_options *b, const recall_data *d,
                       const recall_setting *st, recall_result *res)
{
    char radius[64];
    snprintf(radius, sizeof radius, "descriptor.radius=%.9g", d->radius);
    const char *const defaults[] = {radius, "index.impl=bruteforce", "match.impl=knn", "match.k=1", NULL};
    const char *const forced[] = {st->cap[0] ? st->cap : NULL, NULL};
    res->label = st->label;
    res->impl = st->impl->name;
    bench_run r;
    int rc = bench_run_open(bp, st->impl, defaults, forced, &r, &res->skipped);
    if (rc != 0)
        return rc < 0 ? 2 : 0;
    res->device = r.device;
    res->max_neighbors = cap_in_use(&r);
    grip_array kp = host_array(GRIP_U32, d->k, 1, d->kp);
    grip_cloud scene = bench_cloud(d->scene.xyz, NULL, d->scene.n, d->scene.path);
    grip_cloud model = bench_cloud(d->model.xyz, NULL, d->model.n, d->model.path);
    float origin[3] = {0, 0, 0};
    retrieval_apply_pose(d->T, origin, scene.viewpoint);
    grip_features *fs = NULL, *fm = NULL;
    int repeat = b->repeat ? b->repeat : 1;
    grip_status s = describe_cloud(&r, &scene, GRIP_ROLE_SCENE, &kp, repeat, &fs, &res->scene_ms, res);
    if (s == GRIP_EUNSUPPORTED) { /* not a stage for this input (e.g. an image descriptor): say so, go on */
        res->skipped = res->failed;
        bench_run_close(&r);
        return 0;
    }
    if (s == GRIP_OK)
        s = describe_cloud(&r, &model, GRIP_ROLE_MODEL, &kp, repeat, &fm, &res->model_ms, res);
    if (s == GRIP_OK) {
        res->valid_scene = bench_valid_rows(&fs->descriptors);
        res->valid_model = bench_valid_rows(&fm->descriptors);
        s = match_and_score(&r, d, fs, fm, res);
    }
    if (fs)
        fs->release(fs);
    if (fm)
        fm->release(fm);
    bench_run_close(&r);
    if (s != GRIP_OK)
        fprintf(stderr, "grip-host: bench: %s\n", res->failed);
    return s == GRIP_OK ? 0 : 1;
}

/* ---- output ------------------------------------------------------------------------------------------------ */

static void print_header(const recall_data *d)
{
    printf("bench recall: model %s (%zu points), scene %s, truth %s\n", d->model.path, d->model.n, d->scene.path,
           d->truth);
    printf("mesh resolution %.6g (median nearest-neighbour spacing of the model); |scene - T model| rms %.3f mesh "
           "resolutions\n", d->mr, d->gt_rms_mr);
    printf("keypoints: %zu by uniform sampling of the scene at leaf %.6g (%.2f mesh resolutions), the same vertices "
           "on the model; radius %.6g (%.2f mesh resolutions): support mean %.1f median %.0f points\n",
           d->k, d->leaf, d->leaf / d->mr, d->radius, d->radius / d->mr, d->support_mean, d->support_median);
}

static void print_line(const recall_result *r)
{
    if (r->skipped || r->failed[0]) {
        printf("setting=%s impl=%s %s: %s\n", r->label, r->impl, r->skipped ? "skipped" : "failed",
               r->skipped ? r->skipped : r->failed);
        return;
    }
    printf("setting=%s impl=%s device=%s max_neighbors=%lld valid_scene=%llu valid_model=%llu recall_at_1=%.4f "
           "within_2mr=%.4f scene_ms=%.2f model_ms=%.2f index_ms=%.2f match_ms=%.2f\n",
           r->label, r->impl, r->device, r->max_neighbors, (unsigned long long)r->valid_scene,
           (unsigned long long)r->valid_model, r->recall, r->near, r->scene_ms, r->model_ms, r->index_ms,
           r->match_ms);
}

static void print_json(const recall_data *d, const recall_result *res, uint32_t n)
{
    printf("{\"benchmark\":\"recall\",\"model\":");
    host_json_string(stdout, d->model.path);
    printf(",\"scene\":");
    host_json_string(stdout, d->scene.path);
    printf(",\"truth\":");
    host_json_string(stdout, d->truth);
    printf(",\"points\":%zu,\"mesh_resolution\":%.9g,\"truth_rms_mr\":%.6f,\"leaf\":%.9g,\"radius\":%.9g,"
           "\"keypoints\":%zu,\"support\":{\"mean\":%.3f,\"median\":%.1f},\"results\":[",
           d->model.n, d->mr, d->gt_rms_mr, d->leaf, d->radius, d->k, d->support_mean, d->support_median);
    for (uint32_t i = 0; i < n; i++) {
        const recall_result *r = &res[i];
        printf("%s{\"setting\":", i ? "," : "");
        host_json_string(stdout, r->label);
        printf(",\"impl\":");
        host_json_string(stdout, r->impl);
        if (bench_json_unfinished(stdout, r->skipped, r->failed))
            continue;
        printf(",\"device\":\"%s\",\"max_neighbors\":%lld,\"valid_scene\":%llu,\"valid_model\":%llu,"
               "\"recall_at_1\":%.6f,\"within_2mr\":%.6f,\"scene_ms\":%.4f,\"model_ms\":%.4f,\"index_ms\":%.4f,"
               "\"match_ms\":%.4f}",
               r->device, r->max_neighbors, (unsigned long long)r->valid_scene, (unsigned long long)r->valid_model,
               r->recall, r->near, r->scene_ms, r->model_ms, r->index_ms, r->match_ms);
    }
    printf("]}\n");
}

int bench_recall(const bench_options *b)
{
    bench_plugin bp;
    recall_data d;
    int rc = bench_plugin_open(b, &bp);
    if (rc != 0)
        return rc;
    if ((rc = prepare_data(b, &d)) != 0) {
        bench_plugin_close(&bp);
        return rc;
    }
    recall_setting *settings = calloc((size_t)bp.n_impls * MAX_SETTINGS_PER_IMPL, sizeof *settings);
    recall_result *res = calloc((size_t)bp.n_impls * MAX_SETTINGS_PER_IMPL, sizeof *res);
    uint32_t n = settings && res ? make_settings(b, &d, bp.impls, bp.n_impls, settings) : 0;
    if (!settings || !res) {
        fprintf(stderr, "grip-host: bench: out of memory\n");
        rc = 1;
    } else if (!b->json) {
        print_header(&d);
        fflush(stdout);
    }
    for (uint32_t i = 0; i < n && rc != 2; i++) {
        int one = run_setting(&bp, b, &d, &settings[i], &res[i]);
        rc = one > rc ? one : rc;
        if (one != 2 && !b->json) {
            print_line(&res[i]);
            fflush(stdout);
        }
    }
    if (n && rc != 2 && b->json)
        print_json(&d, res, n);
    free(settings);
    free(res);
    recall_data_free(&d);
    bench_plugin_close(&bp);
    return rc;
}
