/* bench_shot_cuda.c -- times SHOT on the GPU for PCL's correspondence-grouping tutorial pair, as PCL's tutorial
 * computes it: the model's keypoints (uniform sampling, leaf 0.01) and the scene's (leaf 0.03), radius 0.02, normals
 * from the 10 nearest (the CPU twin's, uploaded). Timed, with CUDA events after 2 warm-ups, the median of 20 runs:
 * for both clouds, the keypoints' radius lists (grip_neighborhoods_cuda_radius), their frames and their
 * descriptors -- exact SHOT, then approximate G-SHOT with the cap at the median support (Hu 2017). Not timed: the
 * uploads (cloud, normals, keypoints). Also times the CPU twin once (all OpenMP threads) and prints the support
 * statistics. PCL 1.13's SHOTEstimationOMP took 146-166 ms for both clouds on 16 cores.
 * Usage: bench_shot_cuda [model.pcd scene.pcd] (default: $GRIP_DATA_DIR/pcl/...). One line per measurement;
 * exits 1 on a failure. */
#define _POSIX_C_SOURCE 200809L
#include "io/cloud_io.h"
#include "host_util.h"
#include "core/cuda_bridge.h"
#include "descriptor/normals.h"
#include "descriptor/shot.h"
#include "descriptor/shot_cuda.h"
#include "descriptor/uniform_sampling.h"
#include "spatial/kdtree3d.h"
#include "spatial/neighborhood_cuda.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 20
#define WARMUPS 2
#define RADIUS 0.02f
#define NORMALS_K 10

/* One cloud of the pair: on the host its points, normals and keypoints; on the device its surface (with the
 * normals) and keypoint coordinates; the buffers for its frames and descriptors. */
typedef struct bench_cloud {
    const char *name;
    float leaf;
    host_cloud cloud;
    float *normals;
    uint32_t *keypoints;
    size_t k;
    float *keypoint_xyz;
    grip_surface_cuda *surface;
    void *keypoint_dev, *frames_dev, *descriptors_dev;
} bench_cloud;

/* Phases of one run, in milliseconds, summed over the clouds. */
typedef struct phase_ms {
    float search, lrf, shot, total;
} phase_ms;

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int fail(grip_ctx *ctx, const char *what)
{
    fprintf(stderr, "%s failed: %s\n", what, ctx->last_error);
    return 1;
}

/* Reads the cloud, computes its normals and keypoints on the host, and uploads what the GPU needs. */
static int prepare(grip_ctx *ctx, bench_cloud *b, const char *path)
{
    char err[512];
    if (cloud_read(path, &b->cloud, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    size_t n = b->cloud.n;
    b->normals = malloc(n * 4 * sizeof(float));
    if (!b->normals)
        return 1;
    if (grip_normals_compute(ctx, b->cloud.xyz, n, NULL, NORMALS_K, 0.0f, b->cloud.viewpoint, b->normals) ||
        grip_uniform_sampling(ctx, b->cloud.xyz, n, b->leaf, &b->keypoints, &b->k))
        return fail(ctx, "normals or keypoints");
    b->keypoint_xyz = malloc((b->k > 0 ? b->k : 1) * 3 * sizeof(float));
    if (!b->keypoint_xyz)
        return 1;
    for (size_t i = 0; i < b->k; ++i)
        for (int d = 0; d < 3; ++d)
            b->keypoint_xyz[3 * i + d] = b->cloud.xyz[3 * (size_t)b->keypoints[i] + d];
    int device = -1;
    if (grip_surface_cuda_create(ctx, b->cloud.xyz, n, &b->surface) ||
        grip_surface_cuda_set_normals(ctx, b->surface, b->normals, 4) ||
        grip_cuda_upload(ctx, b->keypoint_xyz, b->k * 3 * sizeof(float), &b->keypoint_dev, &device) ||
        grip_cuda_alloc(ctx, b->k * 9 * sizeof(float), &b->frames_dev) ||
        grip_cuda_alloc(ctx, b->k * GRIP_SHOT_DIM * sizeof(float), &b->descriptors_dev))
        return fail(ctx, "upload");
    return 0;
}

static void release(bench_cloud *b)
{
    grip_cuda_free(b->keypoint_dev);
    grip_cuda_free(b->frames_dev);
    grip_cuda_free(b->descriptors_dev);
    grip_surface_cuda_free(b->surface);
    free(b->keypoint_xyz);
    free(b->keypoints);
    free(b->normals);
    host_cloud_free(&b->cloud);
}

static float elapsed(cudaEvent_t from, cudaEvent_t to)
{
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, from, to);
    return ms;
}

/* One run over both clouds: lists, frames, descriptors, each phase between events. Keeps the lists in `keep`
 * (one per cloud) when it is not NULL, else frees them. */
static int run_once(grip_ctx *ctx, bench_cloud *clouds, uint32_t cap, cudaEvent_t ev[7], phase_ms *t,
                    grip_neighborhoods_cuda *keep)
{
    *t = (phase_ms){0.0f, 0.0f, 0.0f, 0.0f};
    cudaEventRecord(ev[0], 0);
    for (int c = 0; c < 2; ++c) {
        bench_cloud *b = &clouds[c];
        grip_neighborhoods_cuda nb = {0};
        cudaEvent_t *e = ev + 3 * c;
        if (grip_neighborhoods_cuda_radius(ctx, b->surface, b->keypoint_dev, (uint32_t)b->k, RADIUS, cap, &nb))
            return fail(ctx, "grip_neighborhoods_cuda_radius");
        cudaEventRecord(e[1], 0);
        grip_status st = grip_shot_lrf_cuda(ctx, &nb, b->keypoint_dev, (uint32_t)b->k, RADIUS, b->frames_dev);
        cudaEventRecord(e[2], 0);
        if (!st)
            st = grip_shot_describe_cuda(ctx, &nb, b->keypoint_dev, b->frames_dev, (uint32_t)b->k, RADIUS,
                                         b->descriptors_dev);
        cudaEventRecord(e[3], 0);
        if (keep)
            keep[c] = nb;
        else
            grip_neighborhoods_cuda_free(&nb);
        if (st)
            return fail(ctx, "SHOT (cuda)");
    }
    cudaEventSynchronize(ev[6]);
    if (cudaGetLastError() != cudaSuccess)
        return 1;
    for (int c = 0; c < 2; ++c) {
        cudaEvent_t *e = ev + 3 * c;
        t->search += elapsed(e[0], e[1]);
        t->lrf += elapsed(e[1], e[2]);
        t->shot += elapsed(e[2], e[3]);
    }
    t->total = elapsed(ev[0], ev[6]);
    return 0;
}

/* The median of each phase over REPS runs after WARMUPS. */
static int time_runs(grip_ctx *ctx, bench_cloud *clouds, uint32_t cap, phase_ms *median)
{
    cudaEvent_t ev[7];
    for (int e = 0; e < 7; ++e)
        cudaEventCreate(&ev[e]);
    float samples[4][REPS];
    int rc = 0;
    for (int r = -WARMUPS; r < REPS && rc == 0; ++r) {
        phase_ms t;
        rc = run_once(ctx, clouds, cap, ev, &t, NULL);
        if (r >= 0) {
            samples[0][r] = t.search;
            samples[1][r] = t.lrf;
            samples[2][r] = t.shot;
            samples[3][r] = t.total;
        }
    }
    for (int e = 0; e < 7; ++e)
        cudaEventDestroy(ev[e]);
    if (rc)
        return rc;
    for (int p = 0; p < 4; ++p)
        qsort(samples[p], REPS, sizeof(float), compare_floats);
    *median = (phase_ms){samples[0][REPS / 2], samples[1][REPS / 2], samples[2][REPS / 2], samples[3][REPS / 2]};
    return 0;
}

/* Prints min, median, mean and max of n support sizes (sorts them); returns the median. */
static uint32_t support_statistics(const char *what, uint32_t *sizes, size_t n, size_t entries)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i)
        sum += sizes[i];
    qsort(sizes, n, sizeof *sizes, compare_u32);
    uint32_t median = n ? sizes[n / 2] : 0;
    printf("support %s: keypoints=%zu min=%u median=%u mean=%.1f max=%u entries=%zu\n", what, n, n ? sizes[0] : 0,
           median, n ? sum / (double)n : 0.0, n ? sizes[n - 1] : 0, entries);
    return median;
}

/* The support sizes of both clouds' keypoints, from one exact run's lists: printed per cloud and together;
 * *median gets the pair's median, the cap of the approximate runs. */
static int median_support(grip_ctx *ctx, bench_cloud *clouds, uint32_t *median)
{
    cudaEvent_t ev[7];
    for (int e = 0; e < 7; ++e)
        cudaEventCreate(&ev[e]);
    grip_neighborhoods_cuda nb[2] = {{0}, {0}};
    phase_ms t;
    int rc = run_once(ctx, clouds, 0, ev, &t, nb);
    for (int e = 0; e < 7; ++e)
        cudaEventDestroy(ev[e]);
    size_t k0 = clouds[0].k, k1 = clouds[1].k;
    uint32_t *sizes = malloc((k0 + k1 + 1) * sizeof *sizes), *both = malloc((k0 + k1 + 1) * sizeof *both);
    if (rc == 0 && (!sizes || !both || grip_cuda_copy_to_host(ctx, sizes, nb[0].support, k0 * sizeof *sizes) ||
                    grip_cuda_copy_to_host(ctx, sizes + k0, nb[1].support, k1 * sizeof *sizes)))
        rc = 1;
    if (rc == 0) {
        memcpy(both, sizes, (k0 + k1) * sizeof *sizes);
        support_statistics(clouds[0].name, sizes, k0, nb[0].entries);
        support_statistics(clouds[1].name, sizes + k0, k1, nb[1].entries);
        *median = support_statistics("model+scene", both, k0 + k1, nb[0].entries + nb[1].entries);
    }
    free(sizes);
    free(both);
    grip_neighborhoods_cuda_free(&nb[0]);
    grip_neighborhoods_cuda_free(&nb[1]);
    return rc;
}

static double cpu_twin_ms(grip_ctx *ctx, bench_cloud *clouds)
{
    double total = 0.0;
    for (int c = 0; c < 2; ++c) {
        bench_cloud *b = &clouds[c];
        grip_kdtree3d *tree = NULL;
        float *frames = malloc(b->k * 9 * sizeof(float)), *desc = malloc(b->k * GRIP_SHOT_DIM * sizeof(float));
        grip_status st = frames && desc ? grip_kdtree3d_build(ctx, b->cloud.xyz, b->cloud.n, &tree) : GRIP_ENOMEM;
        double t0 = host_now_ms();
        if (!st)
            st = grip_shot_lrf(ctx, b->cloud.xyz, b->cloud.n, tree, b->keypoint_xyz, b->k, RADIUS, 0, frames);
        if (!st)
            st = grip_shot_describe(ctx, b->cloud.xyz, b->normals, b->cloud.n, tree, b->keypoint_xyz, b->k, frames,
                                    RADIUS, 0, desc);
        total += host_now_ms() - t0;
        grip_kdtree3d_free(tree);
        free(frames);
        free(desc);
        if (st)
            return -1.0;
    }
    return total;
}

static void print_line(const char *mode, uint32_t cap, const bench_cloud *clouds, const phase_ms *t)
{
    printf("shot_cuda mode=%s cap=%u keypoints=%zu+%zu search_ms=%.3f lrf_ms=%.3f shot_ms=%.3f total_ms=%.3f "
           "(median of %d; PCL 1.13 SHOT OMP, 16 cores: 146-166 ms)\n",
           mode, cap, clouds[0].k, clouds[1].k, (double)t->search, (double)t->lrf, (double)t->shot,
           (double)t->total, REPS);
}

int main(int argc, char **argv)
{
    const char *dir = getenv("GRIP_DATA_DIR");
    char paths[2][4096];
    snprintf(paths[0], sizeof paths[0], "%s/pcl/data_repo/correspondence_grouping/milk.pcd", dir ? dir : ".data");
    snprintf(paths[1], sizeof paths[1], "%s/pcl/milk_cartoon_all_small_clorox.pcd", dir ? dir : ".data");
    for (int c = 0; c < 2 && argc == 3; ++c)
        snprintf(paths[c], sizeof paths[c], "%s", argv[1 + c]);
    bench_cloud clouds[2] = {{.name = "model", .leaf = 0.01f}, {.name = "scene", .leaf = 0.03f}};
    grip_ctx *ctx = NULL;
    int rc = grip_ctx_new(NULL, &ctx) != GRIP_OK;
    for (int c = 0; c < 2 && rc == 0; ++c)
        rc = prepare(ctx, &clouds[c], paths[c]);
    uint32_t cap = 0;
    phase_ms exact, capped;
    if (rc == 0)
        rc = median_support(ctx, clouds, &cap);
    if (rc == 0)
        rc = time_runs(ctx, clouds, 0, &exact);
    if (rc == 0)
        rc = time_runs(ctx, clouds, cap, &capped);
    if (rc == 0) {
        print_line("exact", 0, clouds, &exact);
        print_line("capped", cap, clouds, &capped);
        printf("shot_cpu_twin keypoints=%zu+%zu frames_and_descriptors_ms=%.1f (all OpenMP threads)\n", clouds[0].k,
               clouds[1].k, cpu_twin_ms(ctx, clouds));
    }
    for (int c = 0; c < 2; ++c)
        release(&clouds[c]);
    grip_ctx_free(ctx);
    return rc;
}
