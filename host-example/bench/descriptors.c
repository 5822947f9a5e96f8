/* descriptors.c -- `grip-host bench descriptors`: the throughput of every descriptor stage the plugin
 * lists, on a generated surface of N points whose density puts ~BENCH_TARGET_SUPPORT points within the support
 * radius, at K keypoints the host gives (every (N/K)-th point of a randomly drawn cloud).
 *
 * Each stage is timed end to end as a host sees it: a host cloud in, descriptors out (left on the device when
 * the stage runs on CUDA, as a chained pipeline would keep them; in host memory otherwise). One warm-up describe,
 * then `repeat` timed ones, the median reported. The same is done with the surface's exact normals handed in
 * (grip_cloud.normals): the difference of the two medians is what normal estimation costs, since the stages
 * have no switch of their own for it. */
#include "bench/bench_common.h"
#include "bench/grid.h"
#include "bench/subcommands.h"
#include "bench/surface.h"
#include "host_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_POINTS 1000000ull
#define DEFAULT_KEYPOINTS 100000ull
#define DEFAULT_RADIUS 0.02
#define DEFAULT_REPEAT 5
#define SUPPORT_SAMPLE 10000 /* keypoints whose support is counted on the host */
#define BENCH_PI 3.14159265358979323846

typedef struct timing {
    double median_ms, min_ms;
} timing;

typedef struct descriptor_result {
    const char *impl;
    const char *device;      /* "cuda" or "cpu" */
    const char *skipped;     /* why the impl was not run, or NULL; may point to `failed` (GRIP_EUNSUPPORTED) */
    char failed[1024];       /* why it failed, or "" */
    uint32_t dim;
    uint64_t valid;          /* keypoints with a descriptor (no NaN) */
    timing computed, given;  /* normals computed by the stage / handed in */
} descriptor_result;

/* The benchmark's data: the surface, its keypoints and the support the radius gives them. */
typedef struct bench_data {
    size_t n, k;
    double radius, area;
    float *xyz, *normals;
    uint32_t *keypoints;
    double support_mean, support_median;
    size_t support_measured;
} bench_data;

static void bench_data_free(bench_data *d)
{
    free(d->xyz);
    free(d->normals);
    free(d->keypoints);
}

/* Points within the radius of (up to) SUPPORT_SAMPLE of the keypoints, evenly spread over them. */
static int measure_support(bench_data *d)
{
    bench_grid g;
    size_t m = d->k < SUPPORT_SAMPLE ? d->k : SUPPORT_SAMPLE;
    double *counts = malloc(m * sizeof *counts + 1);
    if (!counts || bench_grid_build(&g, d->xyz, d->n, d->radius) != 0) {
        free(counts);
        return -1;
    }
    double sum = 0;
    for (size_t i = 0; i < m; i++) {
        uint32_t p = d->keypoints[i * d->k / m];
        counts[i] = (double)bench_grid_count_within(&g, d->xyz + 3 * (size_t)p, d->radius);
        sum += counts[i];
    }
    d->support_mean = sum / (double)m;
    d->support_median = host_median(counts, m);
    d->support_measured = m;
    bench_grid_free(&g);
    free(counts);
    return 0;
}

static int make_data(const bench_options *b, bench_data *d)
{
    memset(d, 0, sizeof *d);
    d->n = (size_t)(b->points ? b->points : DEFAULT_POINTS);
    d->k = (size_t)(b->keypoints ? b->keypoints : DEFAULT_KEYPOINTS);
    d->radius = b->radius > 0 ? b->radius : DEFAULT_RADIUS;
    if (d->k > d->n) {
        fprintf(stderr, "grip-host: bench: --keypoints %zu exceeds --points %zu\n", d->k, d->n);
        return 2;
    }
    /* density N / area puts N pi r^2 / area points within r of a point of a locally flat surface */
    d->area = (double)d->n * BENCH_PI * d->radius * d->radius / BENCH_TARGET_SUPPORT;
    d->keypoints = malloc(d->k * sizeof *d->keypoints);
    for (size_t i = 0; d->keypoints && i < d->k; i++) /* the points are drawn at random: any stride picks random ones */
        d->keypoints[i] = (uint32_t)((uint64_t)i * d->n / d->k);
    if (!d->keypoints || bench_surface_sample(d->n, d->area, b->seed, &d->xyz, &d->normals) != 0 ||
        measure_support(d) != 0) {
        fprintf(stderr, "grip-host: bench: out of memory for %zu points\n", d->n);
        bench_data_free(d);
        return 1;
    }
    return 0;
}

/* The warm-up: checks the shape of the result and counts the valid descriptors. */
static grip_status warm_up(const bench_run *r, const grip_cloud *c, const grip_array *kp, descriptor_result *res)
{
    grip_features *f = NULL;
    const grip_stage_impl *d = r->p.impl[GRIP_STAGE_DESCRIPTOR];
    grip_status s = d->describe(r->p.stage[GRIP_STAGE_DESCRIPTOR], c, GRIP_ROLE_SCENE, kp, GRIP_MEM_HOST, &f);
    if (s != GRIP_OK) {
        bench_run_error(r, GRIP_STAGE_DESCRIPTOR, s, c->name, res->failed, sizeof res->failed);
        return s;
    }
    res->dim = f->descriptor_dim;
    res->valid = bench_valid_rows(&f->descriptors);
    if (f->descriptors.rows != kp->rows || f->descriptors.cols != f->descriptor_dim) {
        snprintf(res->failed, sizeof res->failed, "descriptor '%s' returned %llu x %llu descriptors for %llu "
                 "keypoints", res->impl, (unsigned long long)f->descriptors.rows,
                 (unsigned long long)f->descriptors.cols, (unsigned long long)kp->rows);
        s = GRIP_EINTERNAL;
    }
    f->release(f);
    return s;
}

/* Runs one impl: with computed normals (the warm-up, then the timed runs), then with the surface's normals. */
static int bench_impl(const bench_plugin *bp, const bench_options *b, const bench_data *d,
                      const grip_stage_impl *impl, descriptor_result *res)
{
    char radius[64];
    snprintf(radius, sizeof radius, "descriptor.radius=%.9g", d->radius);
    const char *const defaults[] = {radius, NULL};
    bench_run r;
    res->impl = impl->name;
    int rc = bench_run_open(bp, impl, defaults, NULL, &r, &res->skipped);
    if (rc != 0)
        return rc < 0 ? 2 : 0;
    res->device = r.device;
    int repeat = b->repeat ? b->repeat : DEFAULT_REPEAT;
    uint32_t out = strcmp(r.device, "cuda") == 0 ? GRIP_MEM_CUDA : GRIP_MEM_HOST;
    grip_array kp = host_array(GRIP_U32, d->k, 1, d->keypoints);
    grip_cloud plain = bench_cloud(d->xyz, NULL, d->n, "the generated surface");
    grip_cloud with_normals = bench_cloud(d->xyz, d->normals, d->n, "the generated surface with its normals");
    grip_status s = warm_up(&r, &plain, &kp, res);
    if (s == GRIP_EUNSUPPORTED) { /* not a stage for this input (e.g. an image descriptor): say so, go on */
        res->skipped = res->failed;
        bench_run_close(&r);
        return 0;
    }
    if (s == GRIP_OK)
        s = bench_time_describe(&r, &plain, GRIP_ROLE_SCENE, &kp, out, repeat, &res->computed.median_ms,
                                &res->computed.min_ms, res->failed, sizeof res->failed);
    if (s == GRIP_OK)
        s = warm_up(&r, &with_normals, &kp, res);
    if (s == GRIP_OK)
        s = bench_time_describe(&r, &with_normals, GRIP_ROLE_SCENE, &kp, out, repeat, &res->given.median_ms,
                                &res->given.min_ms, res->failed, sizeof res->failed);
    bench_run_close(&r);
    if (s != GRIP_OK)
        fprintf(stderr, "grip-host: bench: %s\n", res->failed);
    return s == GRIP_OK ? 0 : 1;
}

static double per_second(size_t k, double ms)
{
    return ms > 0 ? (double)k / (ms * 1e-3) : INFINITY;
}

static void print_header(const bench_data *d, int repeat)
{
    printf("bench descriptors: undulating torus of %zu points (area %.6g), %zu host-given keypoints, radius %.6g, "
           "%d timed runs after a warm-up\n",
           d->n, d->area, d->k, d->radius, repeat);
    printf("support: mean %.1f median %.0f points within the radius (target %d; over %zu keypoints)\n",
           d->support_mean, d->support_median, BENCH_TARGET_SUPPORT, d->support_measured);
}

static void print_line(const bench_data *d, const descriptor_result *r)
{
    if (r->skipped || r->failed[0]) {
        printf("impl=%s %s: %s\n", r->impl, r->skipped ? "skipped" : "failed", r->skipped ? r->skipped : r->failed);
        return;
    }
    printf("impl=%s device=%s dim=%u keypoints=%zu valid=%llu median_ms=%.3f min_ms=%.3f descriptors_per_s=%.4g "
           "given_normals_median_ms=%.3f given_normals_descriptors_per_s=%.4g normals_ms=%.3f\n",
           r->impl, r->device, r->dim, d->k, (unsigned long long)r->valid, r->computed.median_ms,
           r->computed.min_ms, per_second(d->k, r->computed.median_ms), r->given.median_ms,
           per_second(d->k, r->given.median_ms), r->computed.median_ms - r->given.median_ms);
}

static void print_json(const bench_data *d, int repeat, const descriptor_result *res, uint32_t n)
{
    printf("{\"benchmark\":\"descriptors\",\"surface\":\"undulating torus\",\"points\":%zu,\"area\":%.9g,"
           "\"keypoints\":%zu,\"radius\":%.9g,\"repeat\":%d,"
           "\"support\":{\"mean\":%.3f,\"median\":%.1f,\"measured_keypoints\":%zu},\"results\":[",
           d->n, d->area, d->k, d->radius, repeat, d->support_mean, d->support_median, d->support_measured);
    for (uint32_t i = 0; i < n; i++) {
        const descriptor_result *r = &res[i];
        printf("%s{\"impl\":", i ? "," : "");
        host_json_string(stdout, r->impl);
        if (bench_json_unfinished(stdout, r->skipped, r->failed))
            continue;
        printf(",\"device\":\"%s\",\"dim\":%u,\"valid\":%llu,\"median_ms\":%.6f,\"min_ms\":%.6f,"
               "\"descriptors_per_s\":%.6g,\"given_normals\":{\"median_ms\":%.6f,\"min_ms\":%.6f,"
               "\"descriptors_per_s\":%.6g},\"normals_ms\":%.6f}",
               r->device, r->dim, (unsigned long long)r->valid, r->computed.median_ms, r->computed.min_ms,
               per_second(d->k, r->computed.median_ms), r->given.median_ms, r->given.min_ms,
               per_second(d->k, r->given.median_ms), r->computed.median_ms - r->given.median_ms);
    }
    printf("]}\n");
}

int bench_descriptors(const bench_options *b)
{
    bench_plugin bp;
    bench_data d;
    int rc = bench_plugin_open(b, &bp);
    if (rc != 0)
        return rc;
    if ((rc = make_data(b, &d)) != 0) {
        bench_plugin_close(&bp);
        return rc;
    }
    const uint32_t n = bp.n_impls;
    int repeat = b->repeat ? b->repeat : DEFAULT_REPEAT;
    descriptor_result *res = calloc(n, sizeof *res);
    if (!res) {
        fprintf(stderr, "grip-host: bench: out of memory\n");
        rc = 1;
    } else if (!b->json) {
        print_header(&d, repeat);
        fflush(stdout);
    }
    for (uint32_t i = 0; res && i < n && rc != 2; i++) {
        int one = bench_impl(&bp, b, &d, bp.impls[i], &res[i]);
        rc = one > rc ? one : rc;
        if (one != 2 && !b->json) {
            print_line(&d, &res[i]);
            fflush(stdout);
        }
    }
    if (res && rc != 2 && b->json)
        print_json(&d, repeat, res, n);
    free(res);
    bench_data_free(&d);
    bench_plugin_close(&bp);
    return rc;
}
