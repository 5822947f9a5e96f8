/* bench_spin_image_cuda.c -- times grip_spin_image_cuda on a generated surface: 1e6 points on a 1000 x 1000 jittered
 * grid of a wavy sheet (1 mm spacing, analytic normals), 1e5 keypoints (every 10th point), radius 8.6 mm (about 200
 * neighbours each). The neighbour lists are the CPU twin's supports, uploaded once; the kernel alone is timed with
 * CUDA events (device lists in, device descriptors out), 2 warm-ups, the median of 20 runs. Also the CPU twin
 * grip_spin_image_describe once (wall clock, all OpenMP threads, its own radius search included) and the largest
 * difference between the two. One line per variant.
 * Not a test: prints a line and exits 1 on a failure. */
#define _POSIX_C_SOURCE 200809L
#include "core/ctx.h"
#include "core/cuda_bridge.h"
#include "descriptor/spin_image.h"
#include "descriptor/spin_image_cuda.h"
#include "spatial/kdtree3d.h"
#include "host_util.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIDE 1000
#define POINTS (SIDE * SIDE)
#define KEY_STEP 10
#define KEYPOINTS (POINTS / KEY_STEP)
#define RADIUS 0.0086f
#define REPS 20
#define PI_F 3.14159265f

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The sheet z = 0.05 sin(6 pi x) cos(4 pi y) over a jittered grid, with its unit normals (n x 4). */
static void make_surface(float *xyz, float *normals)
{
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < POINTS; ++i) {
        float jitter[2];
        for (int c = 0; c < 2; ++c) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            jitter[c] = ((float)(s >> 40) / (float)(1u << 24) - 0.5f) * 0.6f;
        }
        float x = ((float)(i % SIDE) + jitter[0]) / SIDE, y = ((float)(i / SIDE) + jitter[1]) / SIDE;
        float dzdx = 0.05f * 6 * PI_F * cosf(6 * PI_F * x) * cosf(4 * PI_F * y);
        float dzdy = -0.05f * 4 * PI_F * sinf(6 * PI_F * x) * sinf(4 * PI_F * y);
        float len = sqrtf(dzdx * dzdx + dzdy * dzdy + 1.0f);
        xyz[3 * i] = x;
        xyz[3 * i + 1] = y;
        xyz[3 * i + 2] = 0.05f * sinf(6 * PI_F * x) * cosf(4 * PI_F * y);
        normals[4 * i] = -dzdx / len;
        normals[4 * i + 1] = -dzdy / len;
        normals[4 * i + 2] = 1.0f / len;
        normals[4 * i + 3] = 0.0f;
    }
}

/* Device lists of the keypoints' supports (coordinates and normals, structure of arrays). Host scratch is freed
 * here; the device arrays are freed by free_lists. */
static grip_status upload_lists(grip_ctx *ctx, const grip_kdtree3d *tree, const float *xyz, const float *normals,
                                const float *keys, grip_neighborhoods_cuda *nb)
{
    uint64_t *offsets = malloc((KEYPOINTS + 1) * sizeof *offsets);
    grip_neighbors found = {0};
    grip_status st = offsets ? GRIP_OK : GRIP_ENOMEM;
    if (offsets)
        offsets[0] = 0;
    for (size_t i = 0; st == GRIP_OK && i < KEYPOINTS; ++i) {
        st = grip_kdtree3d_radius(tree, keys + 3 * i, RADIUS, &found);
        offsets[i + 1] = offsets[i] + found.count;
    }
    size_t entries = st == GRIP_OK ? offsets[KEYPOINTS] : 0;
    float *soa = st == GRIP_OK ? malloc(6 * entries * sizeof *soa) : NULL;
    st = soa ? st : GRIP_ENOMEM;
    for (size_t i = 0; st == GRIP_OK && i < KEYPOINTS; ++i) {
        st = grip_kdtree3d_radius(tree, keys + 3 * i, RADIUS, &found);
        for (size_t j = 0; st == GRIP_OK && j < found.count; ++j)
            for (int c = 0; c < 3; ++c) {
                soa[c * entries + offsets[i] + j] = xyz[3 * (size_t)found.idx[j] + c];
                soa[(3 + c) * entries + offsets[i] + j] = normals[4 * (size_t)found.idx[j] + c];
            }
    }
    memset(nb, 0, sizeof *nb);
    nb->m = KEYPOINTS;
    nb->entries = entries;
    int device = -1;
    float **arrays[6] = {&nb->x, &nb->y, &nb->z, &nb->nx, &nb->ny, &nb->nz};
    if (st == GRIP_OK)
        st = grip_cuda_upload(ctx, offsets, (KEYPOINTS + 1) * sizeof *offsets, (void **)&nb->offsets, &device);
    for (int c = 0; st == GRIP_OK && c < 6; ++c)
        st = grip_cuda_upload(ctx, soa + c * entries, entries * sizeof *soa, (void **)arrays[c], &device);
    grip_neighbors_free(&found);
    free(soa);
    free(offsets);
    return st;
}

static void free_lists(grip_neighborhoods_cuda *nb)
{
    float *arrays[6] = {nb->x, nb->y, nb->z, nb->nx, nb->ny, nb->nz};
    for (int c = 0; c < 6; ++c)
        grip_cuda_free(arrays[c]);
    grip_cuda_free(nb->offsets);
}

/* Median milliseconds of REPS kernel calls after 2 warm-ups, or a negative value when a call fails. */
static float time_gpu(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *d_keys, const float *d_normals,
                      const grip_spin_image_params *p, float *d_out)
{
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    float ms[REPS];
    for (int r = -2; r < REPS; ++r) {
        cudaEventRecord(start, 0);
        grip_status st = grip_spin_image_cuda(ctx, nb, d_keys, d_normals, KEYPOINTS, p, d_out);
        cudaEventRecord(stop, 0);
        cudaEventSynchronize(stop);
        if (st != GRIP_OK) {
            fprintf(stderr, "grip_spin_image_cuda failed: %s\n", ctx->last_error);
            return -1.0f;
        }
        float t = 0.0f;
        cudaEventElapsedTime(&t, start, stop);
        if (r >= 0)
            ms[r] = t;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    qsort(ms, REPS, sizeof ms[0], compare_floats);
    return ms[REPS / 2];
}

/* Times one variant and compares it with the CPU twin; 0 on success. */
static int bench_variant(grip_ctx *ctx, const char *name, const grip_spin_image_params *p, const float *xyz,
                         const float *normals, const grip_kdtree3d *tree, const float *keys, const float *key_normals,
                         const grip_neighborhoods_cuda *nb, const float *d_keys, const float *d_normals, float *d_out,
                         float *gpu, float *cpu)
{
    const size_t cells = (size_t)KEYPOINTS * grip_spin_image_dim(p->width);
    float gpu_ms = time_gpu(ctx, nb, d_keys, d_normals, p, d_out);
    if (gpu_ms < 0.0f || grip_cuda_copy_to_host(ctx, gpu, d_out, cells * sizeof *gpu) != GRIP_OK)
        return 1;
    double t0 = host_now_ms();
    if (grip_spin_image_describe(ctx, xyz, normals, POINTS, tree, keys, key_normals, KEYPOINTS, p, cpu) != GRIP_OK) {
        fprintf(stderr, "grip_spin_image_describe failed: %s\n", ctx->last_error);
        return 1;
    }
    double cpu_ms = host_now_ms() - t0;
    size_t nan_mismatch = 0;
    float worst = 0.0f;
    for (size_t i = 0; i < cells; ++i) {
        if (isnan(cpu[i]) != isnan(gpu[i]))
            ++nan_mismatch;
        else if (!isnan(cpu[i]))
            worst = fmaxf(worst, fabsf(cpu[i] - gpu[i]));
    }
    printf("spin_image variant=%s width=%u points=%d keypoints=%d mean_neighbours=%.1f gpu_median_ms=%.3f "
           "descriptors_per_s=%.3g cpu_twin_ms=%.1f max_abs_diff=%.3g nan_mismatch=%zu\n", name, p->width, POINTS,
           KEYPOINTS, (double)nb->entries / KEYPOINTS, (double)gpu_ms, KEYPOINTS / (gpu_ms * 1e-3), cpu_ms,
           (double)worst, nan_mismatch);
    return 0;
}

int main(void)
{
    float *xyz = malloc((size_t)POINTS * 3 * sizeof *xyz), *normals = malloc((size_t)POINTS * 4 * sizeof *normals);
    float *keys = malloc((size_t)KEYPOINTS * 3 * sizeof *keys);
    float *key_normals = malloc((size_t)KEYPOINTS * 4 * sizeof *key_normals);
    const size_t cells = (size_t)KEYPOINTS * grip_spin_image_dim(8);
    float *gpu = malloc(cells * sizeof *gpu), *cpu = malloc(cells * sizeof *cpu);
    grip_ctx *ctx = NULL;
    grip_kdtree3d *tree = NULL;
    grip_neighborhoods_cuda nb = {0};
    float *d_keys = NULL, *d_normals = NULL, *d_out = NULL;
    int device = -1, rc = 1;
    if (!xyz || !normals || !keys || !key_normals || !gpu || !cpu || grip_ctx_new(NULL, &ctx) != GRIP_OK)
        goto done;
    make_surface(xyz, normals);
    for (size_t i = 0; i < KEYPOINTS; ++i) {
        memcpy(keys + 3 * i, xyz + 3 * KEY_STEP * i, 3 * sizeof *keys);
        memcpy(key_normals + 4 * i, normals + 4 * KEY_STEP * i, 4 * sizeof *key_normals);
    }
    if (grip_kdtree3d_build(ctx, xyz, POINTS, &tree) != GRIP_OK || upload_lists(ctx, tree, xyz, normals, keys, &nb) ||
        grip_cuda_upload(ctx, keys, (size_t)KEYPOINTS * 3 * sizeof *keys, (void **)&d_keys, &device) ||
        grip_cuda_upload(ctx, key_normals, (size_t)KEYPOINTS * 4 * sizeof *key_normals, (void **)&d_normals,
                         &device) ||
        grip_cuda_alloc(ctx, cells * sizeof *d_out, (void **)&d_out)) {
        fprintf(stderr, "set-up failed: %s\n", ctx->last_error);
        goto done;
    }
    const grip_spin_image_params rectangular = {RADIUS, 8, 0.0f, 0, 0, 0};
    const grip_spin_image_params radial_angular = {RADIUS, 8, 0.5f, 0, 1, 1};
    rc = bench_variant(ctx, "rectangular", &rectangular, xyz, normals, tree, keys, key_normals, &nb, d_keys,
                       d_normals, d_out, gpu, cpu) ||
         bench_variant(ctx, "radial_angular_support0.5", &radial_angular, xyz, normals, tree, keys, key_normals, &nb,
                       d_keys, d_normals, d_out, gpu, cpu);
done:
    grip_cuda_free(d_out);
    grip_cuda_free(d_normals);
    grip_cuda_free(d_keys);
    free_lists(&nb);
    grip_kdtree3d_free(tree);
    grip_ctx_free(ctx);
    free(cpu);
    free(gpu);
    free(key_normals);
    free(keys);
    free(normals);
    free(xyz);
    return rc;
}
