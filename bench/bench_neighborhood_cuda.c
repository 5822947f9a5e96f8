/* bench_neighborhood_cuda.c -- times the device surface build (grip_surface_cuda_create: upload, bounds, k-nearest
 * grid) and the radius lists (grip_neighborhoods_cuda_radius: count, scan, fill, sort, gather) on
 *  - the tutorial scene (307,200 points) at radius 0.02 on its 3,747 uniform-sampling keypoints (leaf 0.03), and
 *    its k = 10 lists of every point;
 *  - a generated surface of 1e6 points (a wavy height field, 1 mm apart) with 1e5 queries at a radius of ~200
 *    neighbours, with and without normals, and capped at 64.
 * CUDA events around each call, 2 warm-ups, the median of 20 runs. One line per measurement:
 *   neighborhood <case> <what> ms=<median> min=<min> [entries=... per_query=...]
 * Usage: bench_neighborhood_cuda [scene.pcd] (default: $GRIP_DATA_DIR/pcl/milk_cartoon_all_small_clorox.pcd; the
 * scene case is skipped when it cannot be read). Not a test: exits 1 on a failure. */
#include "io/cloud_io.h"
#include "core/ctx.h"
#include "core/cuda_bridge.h"
#include "descriptor/uniform_sampling.h"
#include "spatial/neighborhood_cuda.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 20
#define WARMUPS 2

typedef enum { OP_BUILD, OP_RADIUS, OP_KNN } bench_op;

typedef struct bench_job {
    const char *name;
    const float *xyz;     /* host, for OP_BUILD */
    size_t n;
    grip_surface_cuda *s; /* for the searches */
    const float *queries; /* device, or NULL for every point */
    uint32_t m, cap, k;
    float radius;
} bench_job;

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* One call of the job; the lists it made are freed after the clock stopped. */
static grip_status bench_call(grip_ctx *ctx, const bench_job *j, grip_neighborhoods_cuda *nb,
                              grip_surface_cuda **built)
{
    switch (j->k ? OP_KNN : (j->s ? OP_RADIUS : OP_BUILD)) {
    case OP_BUILD:
        return grip_surface_cuda_create(ctx, j->xyz, j->n, built);
    case OP_RADIUS:
        return grip_neighborhoods_cuda_radius(ctx, j->s, j->queries, j->m, j->radius, j->cap, nb);
    default:
        return grip_neighborhoods_cuda_knn(ctx, j->s, j->queries, j->m, j->k, nb);
    }
}

/* Times the job; prints its line. Returns 0, or 1 when a call failed. */
static int bench(grip_ctx *ctx, const bench_job *j, const char *what)
{
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    float ms[REPS];
    size_t entries = 0;
    int rc = 0;
    for (int r = -WARMUPS; r < REPS && rc == 0; ++r) {
        grip_neighborhoods_cuda nb;
        grip_surface_cuda *built = NULL;
        memset(&nb, 0, sizeof nb);
        cudaEventRecord(start, 0);
        grip_status st = bench_call(ctx, j, &nb, &built);
        cudaEventRecord(stop, 0);
        cudaEventSynchronize(stop);
        if (st != GRIP_OK) {
            fprintf(stderr, "%s %s failed: %s\n", j->name, what, ctx->last_error);
            rc = 1;
        }
        float t = 0.0f;
        cudaEventElapsedTime(&t, start, stop);
        if (r >= 0)
            ms[r] = t;
        entries = nb.entries;
        grip_neighborhoods_cuda_free(&nb);
        grip_surface_cuda_free(built);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (rc != 0)
        return rc;
    qsort(ms, REPS, sizeof ms[0], compare_floats);
    printf("neighborhood %s %s ms=%.4f min=%.4f", j->name, what, (double)ms[REPS / 2], (double)ms[0]);
    if (j->s)
        printf(" queries=%u entries=%zu per_query=%.1f", j->m, entries, j->m ? (double)entries / j->m : 0.0);
    printf("\n");
    return 0;
}

/* The tutorial scene: its surface, its keypoints as device queries, radius 0.02; k = 10 of every point. */
static int bench_scene(grip_ctx *ctx, const char *path)
{
    char err[512];
    host_cloud c;
    memset(&c, 0, sizeof c);
    if (cloud_read(path, &c, err, sizeof err) != 0) {
        printf("neighborhood scene skipped: %s\n", err);
        return 0;
    }
    uint32_t *keys = NULL;
    size_t m = 0;
    grip_surface_cuda *s = NULL;
    void *dev_keys = NULL, *dev_q = NULL;
    int device = -1, rc = 1;
    if (grip_uniform_sampling(ctx, c.xyz, c.n, 0.03f, &keys, &m) == GRIP_OK &&
        grip_surface_cuda_create(ctx, c.xyz, c.n, &s) == GRIP_OK &&
        grip_cuda_upload(ctx, keys, m * sizeof *keys, &dev_keys, &device) == GRIP_OK &&
        grip_cuda_alloc(ctx, m * 3 * sizeof(float), &dev_q) == GRIP_OK &&
        grip_surface_cuda_gather(ctx, s, dev_keys, m, dev_q) == GRIP_OK) {
        bench_job build = {"scene", c.xyz, c.n, NULL, NULL, 0, 0, 0, 0.0f};
        bench_job radius = {"scene", NULL, c.n, s, dev_q, (uint32_t)m, 0, 0, 0.02f};
        bench_job knn = {"scene", NULL, c.n, s, NULL, (uint32_t)c.n, 0, 10, 0.0f};
        rc = bench(ctx, &build, "surface_build") || bench(ctx, &radius, "radius_0.02_keypoints") ||
             bench(ctx, &knn, "knn_10_every_point");
    } else {
        fprintf(stderr, "scene set-up failed: %s\n", ctx->last_error);
    }
    grip_cuda_free(dev_q);
    grip_cuda_free(dev_keys);
    grip_surface_cuda_free(s);
    free(keys);
    host_cloud_free(&c);
    return rc;
}

/* side x side points of the height field z = 0.05 sin(6x) cos(5y) over [0, 1)^2, 1/side apart, jittered by a
 * quarter of that; every 3 x 3 block's centre point is also a query (1e5 of 1e6 when side = 1000). */
static float *height_field(size_t side, float **queries, uint32_t *m)
{
    const size_t n = side * side;
    float *xyz = malloc(n * 3 * sizeof *xyz), *q = malloc(n * 3 * sizeof *q);
    if (!xyz || !q) {
        free(xyz);
        free(q);
        return NULL;
    }
    uint64_t state = 0x9E3779B97F4A7C15ull;
    uint32_t count = 0;
    for (size_t i = 0; i < n; ++i) {
        float jitter[2];
        for (int a = 0; a < 2; ++a) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            jitter[a] = ((float)(state >> 40) / 16777216.0f - 0.5f) * 0.5f;
        }
        const float x = ((float)(i % side) + jitter[0]) / (float)side,
                    y = ((float)(i / side) + jitter[1]) / (float)side;
        xyz[3 * i] = x;
        xyz[3 * i + 1] = y;
        xyz[3 * i + 2] = 0.05f * sinf(6.0f * x) * cosf(5.0f * y);
        if ((i % side) % 3 == 1 && (i / side) % 3 == 1 && count < 100000)
            memcpy(q + 3 * (size_t)count++, xyz + 3 * i, 3 * sizeof *q);
    }
    *queries = q;
    *m = count;
    return xyz;
}

static int bench_surface(grip_ctx *ctx)
{
    const size_t side = 1000, n = side * side;
    float *q = NULL;
    uint32_t m = 0;
    float *xyz = height_field(side, &q, &m);
    if (!xyz) {
        fprintf(stderr, "no host memory for the generated surface\n");
        return 1;
    }
    float *normals = malloc(n * 3 * sizeof *normals);
    grip_surface_cuda *s = NULL;
    void *dev_q = NULL;
    int device = -1, rc = 1;
    for (size_t i = 0; normals && i < n; ++i) {
        normals[3 * i] = 0.0f;
        normals[3 * i + 1] = 0.0f;
        normals[3 * i + 2] = 1.0f;
    }
    /* 200 neighbours on a surface 1 mm apart: pi r^2 = 200e-6 */
    const float radius = sqrtf(200e-6f / 3.14159265f);
    if (normals && grip_surface_cuda_create(ctx, xyz, n, &s) == GRIP_OK &&
        grip_cuda_upload(ctx, q, (size_t)m * 3 * sizeof(float), &dev_q, &device) == GRIP_OK) {
        bench_job build = {"surface1e6", xyz, n, NULL, NULL, 0, 0, 0, 0.0f};
        bench_job plain = {"surface1e6", NULL, n, s, dev_q, m, 0, 0, radius};
        bench_job capped = {"surface1e6", NULL, n, s, dev_q, m, 64, 0, radius};
        bench_job knn = {"surface1e6", NULL, n, s, dev_q, m, 0, 32, 0.0f};
        rc = bench(ctx, &build, "surface_build") || bench(ctx, &plain, "radius_200nb") ||
             bench(ctx, &knn, "knn_32");
        if (rc == 0 && grip_surface_cuda_set_normals(ctx, s, normals, 3) == GRIP_OK)
            rc = bench(ctx, &plain, "radius_200nb_with_normals") || bench(ctx, &capped, "radius_200nb_cap64");
    } else {
        fprintf(stderr, "surface set-up failed: %s\n", ctx->last_error);
    }
    grip_cuda_free(dev_q);
    grip_surface_cuda_free(s);
    free(normals);
    free(q);
    free(xyz);
    return rc;
}

int main(int argc, char **argv)
{
    char path[4096];
    const char *dir = getenv("GRIP_DATA_DIR");
    if (argc > 1)
        snprintf(path, sizeof path, "%s", argv[1]);
    else
        snprintf(path, sizeof path, "%s/pcl/milk_cartoon_all_small_clorox.pcd", dir ? dir : ".data");
    grip_ctx *ctx = NULL;
    if (grip_ctx_new(NULL, &ctx) != GRIP_OK) {
        fprintf(stderr, "no context\n");
        return 1;
    }
    int rc = bench_scene(ctx, path) || bench_surface(ctx);
    grip_ctx_free(ctx);
    return rc;
}
