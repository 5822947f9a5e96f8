/* test_voxel_grid_cuda.c (gpu) -- the voxel grid on the GPU (descriptor/voxel_grid_cuda.h) against its CPU twin,
 * bit for bit: the voxels' order, start and each point's voxel, the centroids, the mean normals and the spread rows,
 * on random clouds with NaN and infinite points (4,000 points, and 300,000 so that many blocks share the sorts),
 * a leaf larger than the cloud, an all-NaN cloud and the tutorial scene; bad leaves and a point too far out fail
 * with the CPU twin's very text. Then the descriptor front and the stages under support_leaf:
 *  - the device front gives the host front's keypoints, keypoint_xyz and support points bit for bit, and normals
 *    that are grip_normals_cuda's over the support points spread to the cloud's (bit for bit), or the cloud's own
 *    and their voxel means (bit for bit);
 *  - the fpfh and shot stages on CUDA give the keypoints of the stages on the CPU and descriptors within 1e-4 (the
 *    tolerance of every descriptor's GPU test), given the cloud's normals.
 * Uses the tutorial scene and model when the shared data is there, random clouds otherwise. Skips (77) without a
 * device. Each test is a case of its own (CK_RUN_CASE = grid | errors | front | stages). */
#include "test_support.h"
#include "front_stage.h"
#include "core/cuda_bridge.h"
#include "descriptor/normals_cuda.h"
#include "descriptor/voxel_grid.h"
#include "descriptor/voxel_grid_cuda.h"
#include "stages/descriptor_front.h"
#include "stages/registry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DESCRIPTOR_TOLERANCE 1e-4

/* A device array's bytes, downloaded (malloc'd). */
static void *download(grip_ctx *ctx, const void *dev, size_t bytes)
{
    void *host = malloc(bytes + 1);
    ck_assert_ptr_nonnull(host);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, host, dev, bytes), GRIP_OK);
    return host;
}

static void *upload(grip_ctx *ctx, const void *host, size_t bytes)
{
    void *dev = NULL;
    int device = -1;
    ck_assert_int_eq(grip_cuda_upload(ctx, host, bytes ? bytes : 1, &dev, &device), GRIP_OK);
    return dev;
}

/* count floats alike: bit for bit, or both NaN */
static int same_floats(const float *a, const float *b, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        if (!(isnan(a[i]) && isnan(b[i])) && memcmp(a + i, b + i, sizeof *a) != 0)
            return 0;
    return 1;
}

/* n points in [lo, hi)^3 (every 31st NaN, every 37th infinite) and random normals (every 11th NaN). */
static void random_cloud(uint64_t seed, size_t n, float lo, float hi, float **xyz, float **normals)
{
    *xyz = grip_test_uniform_rows(&seed, n, 3, lo, hi);
    *normals = grip_test_uniform_rows(&seed, n, 4, -1.0f, 1.0f);
    for (size_t i = 0; i < n; ++i) {
        if (i % 31 == 6)
            (*xyz)[3 * i] = NAN;
        if (i % 37 == 9)
            (*xyz)[3 * i + 2] = -INFINITY;
        if (i % 11 == 3)
            (*normals)[4 * i + 1] = NAN;
    }
}

/* The GPU grid of xyz equals the CPU's in every output; returns the voxels. */
static size_t compare_grids(const char *name, const float *xyz, const float *normals, size_t n, float leaf)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_voxel_grid c, g;
    ck_assert_msg(grip_voxel_grid_build(ctx, "t", xyz, n, leaf, &c) == GRIP_OK, "%s", ctx->last_error);
    float *xyz_dev = upload(ctx, xyz, n * 3 * sizeof(float)), *nrm_dev = upload(ctx, normals, n * 4 * sizeof(float));
    ck_assert_msg(grip_voxel_grid_cuda_build(ctx, "t", xyz_dev, n, leaf, &g) == GRIP_OK, "%s: %s", name,
                  ctx->last_error);
    printf("%s n=%zu leaf=%g: %zu voxels on the CPU, %zu on the GPU\n", name, n, (double)leaf, c.voxels, g.voxels);
    ck_assert_uint_eq(g.n, n);
    ck_assert_uint_eq(g.voxels, c.voxels);
    ck_assert_uint_eq(g.finite, c.finite);
    size_t m = c.voxels;
    uint32_t *order = download(ctx, g.order, c.finite * sizeof *order);
    uint32_t *start = download(ctx, g.start, (m + 1) * sizeof *start);
    uint32_t *voxel_of = download(ctx, g.voxel_of, n * sizeof *voxel_of);
    ck_assert_int_eq(memcmp(order, c.order, c.finite * sizeof *order), 0);
    ck_assert_int_eq(memcmp(start, c.start, (m + 1) * sizeof *start), 0);
    ck_assert_int_eq(memcmp(voxel_of, c.voxel_of, n * sizeof *voxel_of), 0);
    float *rows_c = malloc((m + 1) * 4 * sizeof(float)), *spread_c = malloc((n + 1) * 4 * sizeof(float));
    float *rows_dev = NULL, *spread_dev = NULL;
    ck_assert_int_eq(grip_cuda_alloc(ctx, (m + 1) * 4 * sizeof(float), (void **)&rows_dev), GRIP_OK);
    ck_assert_int_eq(grip_cuda_alloc(ctx, (n + 1) * 4 * sizeof(float), (void **)&spread_dev), GRIP_OK);
    /* centroids */
    grip_voxel_grid_centroids(&c, xyz, rows_c);
    ck_assert_int_eq(grip_voxel_grid_cuda_centroids(ctx, &g, xyz_dev, rows_dev), GRIP_OK);
    float *rows_g = download(ctx, rows_dev, m * 3 * sizeof(float));
    ck_assert_int_eq(memcmp(rows_g, rows_c, m * 3 * sizeof(float)), 0);
    free(rows_g);
    /* mean normals, then spread back */
    grip_voxel_grid_mean_normals(&c, normals, rows_c);
    ck_assert_int_eq(grip_voxel_grid_cuda_mean_normals(ctx, &g, nrm_dev, rows_dev), GRIP_OK);
    rows_g = download(ctx, rows_dev, m * 4 * sizeof(float));
    ck_assert(same_floats(rows_g, rows_c, m * 4));
    grip_voxel_grid_spread(&c, rows_c, spread_c);
    ck_assert_int_eq(grip_voxel_grid_cuda_spread(ctx, &g, rows_dev, spread_dev), GRIP_OK);
    float *spread_g = download(ctx, spread_dev, n * 4 * sizeof(float));
    ck_assert(same_floats(spread_g, spread_c, n * 4));
    free(rows_g);
    free(spread_g);
    free(rows_c);
    free(spread_c);
    free(order);
    free(start);
    free(voxel_of);
    grip_cuda_free(rows_dev);
    grip_cuda_free(spread_dev);
    grip_cuda_free(xyz_dev);
    grip_cuda_free(nrm_dev);
    grip_voxel_grid_cuda_free(&g);
    ck_assert_ptr_null(g.order);
    grip_voxel_grid_free(&c);
    grip_ctx_free(ctx);
    return m;
}

START_TEST(grid_equals_the_cpu_twin)
{
    float *xyz = NULL, *normals = NULL;
    random_cloud(25, 4000, -1.0f, 1.0f, &xyz, &normals);
    ck_assert_uint_gt(compare_grids("random", xyz, normals, 4000, 0.1f), 1000);
    ck_assert_uint_eq(compare_grids("random, leaf > cloud", xyz, normals, 4000, 100.0f), 8); /* split at 0 */
    for (size_t i = 0; i < 3 * 4000; ++i)
        xyz[i] = NAN;
    ck_assert_uint_eq(compare_grids("all NaN", xyz, normals, 4000, 0.1f), 0);
    free(xyz);
    free(normals);
    size_t big = grip_test_size(300000, 20000);
    random_cloud(26, big, -3.0f, 2.0f, &xyz, &normals);
    const float leaves[] = {0.02f, 0.05f, 0.3f};
    for (size_t l = 0; l < 3; ++l)
        compare_grids("large random", xyz, normals, big, leaves[l]);
    free(xyz);
    free(normals);
    char path[4096];
    if (grip_test_data_path(path, sizeof path, "pcl/milk_cartoon_all_small_clorox.pcd")) {
        host_cloud scene = grip_test_read_cloud("pcl/milk_cartoon_all_small_clorox.pcd");
        uint64_t seed = 3;
        float *nrm = grip_test_uniform_rows(&seed, scene.n, 4, -1.0f, 1.0f);
        compare_grids("tutorial scene", scene.xyz, nrm, scene.n, 0.005f);
        free(nrm);
        host_cloud_free(&scene);
    }
}
END_TEST

START_TEST(bad_leaves_and_far_points_fail_as_on_the_cpu)
{
    grip_ctx *ctx = grip_test_ctx();
    const float xyz[] = {0, 0, 0, 1, 1, 1, 3e9f, 0, 0};
    float *xyz_dev = upload(ctx, xyz, sizeof xyz);
    const float leaves[] = {0.0f, -1.0f, NAN, INFINITY, 1.0f, 1e-12f};
    const size_t points[] = {2, 2, 2, 2, 3, 2};
    for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; ++i) {
        grip_voxel_grid c, g;
        char cpu_text[sizeof ctx->last_error];
        ck_assert_int_eq(grip_voxel_grid_build(ctx, "descriptor.support_leaf", xyz, points[i], leaves[i], &c),
                         GRIP_EINVAL);
        snprintf(cpu_text, sizeof cpu_text, "%s", ctx->last_error);
        ck_assert_int_eq(grip_voxel_grid_cuda_build(ctx, "descriptor.support_leaf", xyz_dev, points[i], leaves[i], &g),
                         GRIP_EINVAL);
        ck_assert_str_eq(ctx->last_error, cpu_text);
        ck_assert_ptr_null(g.order);
    }
    grip_cuda_free(xyz_dev);
    grip_ctx_free(ctx);
}
END_TEST

/* The tutorial scene, or 30,000 random points with NaN rows. */
static host_cloud load_scene(void)
{
    char path[4096];
    if (grip_test_data_path(path, sizeof path, "pcl/milk_cartoon_all_small_clorox.pcd"))
        return grip_test_read_cloud("pcl/milk_cartoon_all_small_clorox.pcd");
    host_cloud c = {0};
    uint64_t s = 701;
    c.n = c.width = 30000;
    c.height = 1;
    c.xyz = grip_test_uniform_rows(&s, c.n, 3, -0.5f, 0.5f);
    for (size_t i = 7; i < c.n; i += 41)
        c.xyz[3 * i] = NAN;
    printf("tutorial scene absent: a random cloud instead\n");
    return c;
}

static grip_stage *front_stage(grip_ctx *ctx, const char *device, const char *normals, const char *leaf)
{
    grip_kv kv[] = {{"device", device}, {"normals", normals}, {"support_leaf", leaf}, {"normals_k", "10"}};
    grip_stage *st = NULL;
    ck_assert_msg(grip_stage_create(&grip_test_front_stage, ctx, kv, 4, &st) == GRIP_OK, "%s", ctx->last_error);
    return st;
}

/* The device front against the host front under support_leaf = leaf; expect_support (m x 4) and expect_cloud
 * (n x 4) are what the device's support and cloud normals must be, bit for bit but for NaN bits. */
static void compare_fronts(grip_ctx *ctx, const grip_cloud *cloud, const char *normals, const char *leaf,
                           const float *expect_support, const float *expect_cloud)
{
    grip_stage *cpu = front_stage(ctx, "cpu", normals, leaf), *gpu = front_stage(ctx, "cuda", normals, leaf);
    grip_descriptor_front h, d;
    ck_assert_msg(grip_descriptor_front_open(cpu, cloud, GRIP_ROLE_SCENE, NULL, 8, &h) == GRIP_OK, "%s",
                  ctx->last_error);
    ck_assert_msg(grip_descriptor_front_open(gpu, cloud, GRIP_ROLE_SCENE, NULL, 8, &d) == GRIP_OK, "%s",
                  ctx->last_error);
    size_t k = h.n_keypoints, n = h.in.n, m = h.n_support;
    ck_assert_uint_lt(m, n);
    ck_assert_uint_eq(d.n_keypoints, k);
    grip_surface_cuda_view v = grip_surface_cuda_get_view(d.surface);
    ck_assert_uint_eq(v.n, m);
    ck_assert_int_eq(v.has_normals, 1);
    float *support_xyz = download(ctx, v.xyz, m * 3 * sizeof(float));
    float *support_nrm = download(ctx, v.normals, m * 4 * sizeof(float));
    uint32_t *kp = download(ctx, d.keypoints_dev, k * sizeof *kp);
    float *kp_xyz = download(ctx, d.keypoint_xyz_dev, k * 3 * sizeof(float));
    float *nrm = download(ctx, d.features->normals.data, n * 4 * sizeof(float));
    float *kn = download(ctx, d.keypoint_normals_dev, k * 4 * sizeof(float));
    ck_assert_int_eq(memcmp(support_xyz, h.support_xyz, m * 3 * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(kp, h.keypoints, k * sizeof *kp), 0);
    ck_assert_int_eq(memcmp(kp_xyz, h.keypoint_xyz, k * 3 * sizeof(float)), 0);
    ck_assert(same_floats(support_nrm, expect_support, m * 4));
    ck_assert(same_floats(nrm, expect_cloud, n * 4));
    for (size_t i = 0; i < k; ++i)
        ck_assert_int_eq(memcmp(kn + 4 * i, nrm + 4 * (size_t)kp[i], 4 * sizeof(float)), 0);
    printf("front, normals = %s, support_leaf %s: %zu points, %zu support points, %zu keypoints\n", normals, leaf, n, m,
           k);
    free(support_xyz);
    free(support_nrm);
    free(kp);
    free(kp_xyz);
    free(nrm);
    free(kn);
    grip_descriptor_front_close(&h);
    grip_descriptor_front_close(&d);
    grip_stage_destroy(cpu);
    grip_stage_destroy(gpu);
}

START_TEST(device_front_equals_host_front)
{
    grip_ctx *ctx = grip_test_ctx();
    host_cloud c = load_scene();
    grip_cloud cloud = {sizeof cloud, c.width, c.height, grip_array_host_view(GRIP_F32, c.n, 3, c.xyz),
                        {0},          {0},     "scene",  {0.0f, 0.0f, 0.0f}};
    const float leaf = 0.006f;
    grip_voxel_grid g;
    ck_assert_int_eq(grip_voxel_grid_build(ctx, "t", c.xyz, c.n, leaf, &g), GRIP_OK);
    size_t m = g.voxels;
    float *centroids = malloc(m * 3 * sizeof(float)), *support = malloc(m * 4 * sizeof(float));
    float *spread = malloc(c.n * 4 * sizeof(float));
    grip_voxel_grid_centroids(&g, c.xyz, centroids);
    /* computed: the GPU's normals of the support points, each cloud point its voxel's */
    ck_assert_int_eq(grip_normals_cuda(ctx, centroids, m, 10, cloud.viewpoint, support), GRIP_OK);
    grip_voxel_grid_spread(&g, support, spread);
    compare_fronts(ctx, &cloud, "compute", "0.006", support, spread);
    /* the cloud's own (those the GPU computed for its points, at unit length): kept per point, averaged per voxel */
    float *own = malloc(c.n * 4 * sizeof(float));
    ck_assert_int_eq(grip_normals_cuda(ctx, c.xyz, c.n, 10, cloud.viewpoint, own), GRIP_OK);
    cloud.normals = grip_array_host_view(GRIP_F32, c.n, 4, own);
    grip_stage *plain = front_stage(ctx, "cpu", "file", "0");
    grip_descriptor_front h;
    ck_assert_int_eq(grip_descriptor_front_open(plain, &cloud, GRIP_ROLE_SCENE, NULL, 8, &h), GRIP_OK);
    memcpy(spread, h.normals, c.n * 4 * sizeof(float)); /* the front's unit-length copy of them */
    grip_descriptor_front_close(&h);
    grip_stage_destroy(plain);
    grip_voxel_grid_mean_normals(&g, spread, support);
    compare_fronts(ctx, &cloud, "file", "0.006", support, spread);
    free(own);
    free(centroids);
    free(support);
    free(spread);
    grip_voxel_grid_free(&g);
    host_cloud_free(&c);
    grip_ctx_free(ctx);
}
END_TEST

/* The stage on `device` with support_leaf, its own radius, over cloud (features in host memory). */
static grip_features *stage_run(grip_ctx *ctx, const grip_stage_impl *impl, const char *device, const char *leaf,
                                const grip_cloud *cloud)
{
    grip_kv kv[] = {{"device", device}, {"support_leaf", leaf}, {"radius", "0.03"}, {"model_leaf", "0.01"}};
    grip_stage *st = NULL;
    ck_assert_msg(grip_stage_create(impl, ctx, kv, 4, &st) == GRIP_OK, "%s", ctx->last_error);
    grip_features *f = NULL;
    ck_assert_msg(impl->describe(st, cloud, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, &f) == GRIP_OK, "%s: %s", impl->name,
                  ctx->last_error);
    grip_stage_destroy(st);
    return f;
}

START_TEST(stages_on_cuda_match_the_cpu_stages)
{
    char path[4096];
    host_cloud c = {0};
    float *normals = NULL;
    if (grip_test_data_path(path, sizeof path, "pcl_reference/tutorial/model_normals.f32.gz")) {
        c = grip_test_read_cloud("pcl/data_repo/correspondence_grouping/milk.pcd");
        size_t rows = 0;
        normals = grip_test_read_rows("pcl_reference/tutorial/model_normals.f32.gz", 4 * sizeof(float), &rows);
        ck_assert_uint_eq(rows, c.n);
    } else {
        uint64_t state = 402;
        c.n = c.width = 12000;
        c.height = 1;
        c.xyz = grip_test_uniform_rows(&state, c.n, 3, -0.05f, 0.05f);
        normals = malloc(c.n * 4 * sizeof(float));
        for (size_t i = 0; i < c.n; ++i) { /* on a sphere of radius 0.05: the radial direction */
            float *p = c.xyz + 3 * i, len = sqrtf(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
            for (int a = 0; a < 3; ++a) {
                p[a] *= 0.05f / len;
                normals[4 * i + a] = p[a] / 0.05f;
            }
            normals[4 * i + 3] = 0.0f;
        }
        printf("stages: tutorial model absent, a sphere instead\n");
    }
    grip_cloud cloud = {sizeof cloud,
                        (uint32_t)c.n,
                        1,
                        grip_array_host_view(GRIP_F32, c.n, 3, c.xyz),
                        grip_array_host_view(GRIP_F32, c.n, 4, normals),
                        {0},
                        "model",
                        {0.0f, 0.0f, 0.0f}};
    grip_ctx *ctx = grip_test_ctx();
    const grip_stage_impl *impls[] = {&grip_descriptor_fpfh, &grip_descriptor_shot};
    for (size_t s = 0; s < 2; ++s) {
        grip_features *cpu = stage_run(ctx, impls[s], "cpu", "0.005", &cloud);
        grip_features *gpu = stage_run(ctx, impls[s], "cuda", "0.005", &cloud);
        size_t k = cpu->keypoints.rows, dim = cpu->descriptors.cols, over = 0, valid = 0;
        ck_assert_uint_gt(k, 100);
        ck_assert_uint_eq(gpu->keypoints.rows, k);
        ck_assert_int_eq(memcmp(cpu->keypoints.data, gpu->keypoints.data, k * sizeof(uint32_t)), 0);
        double worst = 0.0;
        for (size_t i = 0; i < k * dim; ++i) {
            const float a = ((const float *)cpu->descriptors.data)[i], b = ((const float *)gpu->descriptors.data)[i];
            if (isnan(a) || isnan(b)) {
                over += isnan(a) != isnan(b);
                continue;
            }
            valid += i % dim == 0;
            over += fabs((double)a - b) > DESCRIPTOR_TOLERANCE;
            worst = fmax(worst, fabs((double)a - b));
        }
        printf("%s support_leaf 0.005: %zu keypoints (%zu described), max |GPU - CPU| %.3g, values over %.0e: %zu\n",
               impls[s]->name, k, valid, worst, DESCRIPTOR_TOLERANCE, over);
        ck_assert_uint_eq(over, 0);
        ck_assert_uint_gt(valid, k / 2);
        cpu->release(cpu);
        gpu->release(gpu);
    }
    grip_ctx_free(ctx);
    free(normals);
    host_cloud_free(&c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("voxel_grid_cuda");
    grip_test_add_case(s, "grid", grid_equals_the_cpu_twin);
    grip_test_add_case(s, "errors", bad_leaves_and_far_points_fail_as_on_the_cpu);
    grip_test_add_case(s, "front", device_front_equals_host_front);
    grip_test_add_case(s, "stages", stages_on_cuda_match_the_cpu_stages);
    return grip_test_run_gpu(s);
}
