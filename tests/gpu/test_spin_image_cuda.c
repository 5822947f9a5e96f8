/* test_spin_image_cuda.c (gpu) -- grip_spin_image_cuda against its CPU twin grip_spin_image_describe: the same NaN
 * rows and every other value within 1e-4, for the four PCL variants (rectangular / radial, density / angular),
 * with and without the support angle, with a minimum support, at widths 1, 8 and 32, on random clouds with NaN
 * points, exact duplicates, NaN normals, NaN keypoints and keypoint normals, and on PCL's tutorial scene
 * (its 3,747 keypoints and PCL's normals). The neighbour lists are the CPU twin's supports, built on the host
 * and uploaded (the kernel is tested alone); the scene is also described over lists from the device's own radius
 * search (grip_neighborhoods_cuda_radius). The `spin_image` stage gives the same descriptors on both devices.
 * Skips (77) without a usable device; the scene case passes without
 * checking anything when the data is absent (it says so). */
#include "test_support.h"
#include "core/cuda_bridge.h"
#include "descriptor/normals.h"
#include "descriptor/spin_image.h"
#include "descriptor/spin_image_cuda.h"
#include "spatial/kdtree3d.h"
#include "core/array.h"
#include "stages/registry.h"
#include "spatial/neighborhood_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE 1e-4f

static void *upload(grip_ctx *ctx, const void *host, size_t bytes)
{
    void *dev = NULL;
    int device = -1;
    ck_assert_msg(grip_cuda_upload(ctx, host, bytes, &dev, &device) == GRIP_OK, "%s", ctx->last_error);
    return dev;
}

/* The CPU twin's supports of the k keypoints (radius lists, nearest first), uploaded as device neighbourhoods.
 * Free with free_lists. */
static grip_neighborhoods_cuda host_built_lists(grip_ctx *ctx, const grip_kdtree3d *tree, const float *xyz,
                                                const float *normals, const float *keys, size_t k, float radius)
{
    uint64_t *offsets = malloc((k + 1) * sizeof *offsets);
    ck_assert_ptr_nonnull(offsets);
    grip_neighbors nb = {0};
    offsets[0] = 0;
    for (size_t i = 0; i < k; ++i) {
        ck_assert_int_eq(grip_kdtree3d_radius(tree, keys + 3 * i, radius, &nb), GRIP_OK);
        offsets[i + 1] = offsets[i] + nb.count;
    }
    size_t entries = offsets[k];
    float *soa = malloc((6 * entries + 1) * sizeof *soa);
    ck_assert_ptr_nonnull(soa);
    for (size_t i = 0; i < k; ++i) {
        ck_assert_int_eq(grip_kdtree3d_radius(tree, keys + 3 * i, radius, &nb), GRIP_OK);
        for (size_t j = 0; j < nb.count; ++j) {
            size_t e = offsets[i] + j, q = nb.idx[j];
            for (int c = 0; c < 3; ++c) {
                soa[c * entries + e] = xyz[3 * q + c];
                soa[(3 + c) * entries + e] = normals[4 * q + c];
            }
        }
    }
    grip_neighborhoods_cuda out = {0};
    out.m = (uint32_t)k;
    out.entries = entries;
    out.offsets = upload(ctx, offsets, (k + 1) * sizeof *offsets);
    float **arrays[6] = {&out.x, &out.y, &out.z, &out.nx, &out.ny, &out.nz};
    for (int c = 0; c < 6; ++c)
        *arrays[c] = upload(ctx, soa + c * entries, entries * sizeof *soa);
    grip_neighbors_free(&nb);
    free(soa);
    free(offsets);
    return out;
}

static void free_lists(grip_neighborhoods_cuda *nb)
{
    float *arrays[6] = {nb->x, nb->y, nb->z, nb->nx, nb->ny, nb->nz};
    for (int c = 0; c < 6; ++c)
        grip_cuda_free(arrays[c]);
    grip_cuda_free(nb->offsets);
    memset(nb, 0, sizeof *nb);
}

typedef struct compare_stats {
    size_t nan_rows;
    float max_diff;
} compare_stats;

/* Describes the keypoints on the GPU over nb and on the CPU, and checks that they agree. */
static compare_stats compare_with_cpu(grip_ctx *ctx, const char *name, const grip_neighborhoods_cuda *nb,
                                      const grip_kdtree3d *tree, const float *xyz, const float *normals, size_t n,
                                      const float *keys, const float *key_normals, size_t k,
                                      const grip_spin_image_params *p)
{
    const size_t dim = grip_spin_image_dim(p->width), cells = dim * k;
    float *cpu = malloc(cells * sizeof *cpu), *gpu = malloc(cells * sizeof *gpu);
    ck_assert(cpu && gpu);
    ck_assert_int_eq(grip_spin_image_describe(ctx, xyz, normals, n, tree, keys, key_normals, k, p, cpu), GRIP_OK);
    float *d_keys = upload(ctx, keys, k * 3 * sizeof *keys), *d_normals = upload(ctx, key_normals, k * 16);
    float *d_out = NULL;
    ck_assert_int_eq(grip_cuda_alloc(ctx, cells * sizeof *d_out, (void **)&d_out), GRIP_OK);
    ck_assert_msg(grip_spin_image_cuda(ctx, nb, d_keys, d_normals, (uint32_t)k, p, d_out) == GRIP_OK, "%s: %s",
                  name, ctx->last_error);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, gpu, d_out, cells * sizeof *gpu), GRIP_OK);
    /* the same bits on a second run: the images' sums do not depend on the order the lanes vote in */
    float *again = malloc(cells * sizeof *again);
    ck_assert_ptr_nonnull(again);
    ck_assert_int_eq(grip_spin_image_cuda(ctx, nb, d_keys, d_normals, (uint32_t)k, p, d_out), GRIP_OK);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, again, d_out, cells * sizeof *again), GRIP_OK);
    ck_assert_int_eq(memcmp(gpu, again, cells * sizeof *gpu), 0);
    free(again);
    compare_stats s = {0, 0.0f};
    size_t nan_mismatch = 0; /* counted here and asserted once: a Check assertion per bin would cost a syscall */
    for (size_t i = 0; i < k; ++i) {
        const float *a = cpu + dim * i, *b = gpu + dim * i;
        s.nan_rows += isnan(a[0]);
        for (size_t j = 0; j < dim; ++j) {
            if (isnan(a[j]) != isnan(b[j]) && nan_mismatch++ < 5)
                fprintf(stderr, "%s: keypoint %zu bin %zu: cpu %g gpu %g\n", name, i, j, (double)a[j],
                        (double)b[j]);
            if (!isnan(a[j]) && !isnan(b[j]))
                s.max_diff = fmaxf(s.max_diff, fabsf(a[j] - b[j]));
        }
    }
    printf("%s: %zu keypoints, width %u, radial %d, angular %d, support cos %.2f, min %u: max |gpu - cpu| %.3g, "
           "NaN rows %zu\n", name, k, p->width, p->radial, p->angular, (double)p->support_angle_cos,
           p->min_neighbors, (double)s.max_diff, s.nan_rows);
    ck_assert_uint_eq(nan_mismatch, 0);
    ck_assert_float_le(s.max_diff, TOLERANCE);
    grip_cuda_free(d_out);
    grip_cuda_free(d_normals);
    grip_cuda_free(d_keys);
    free(gpu);
    free(cpu);
    return s;
}

/* Every variant over one set of lists: the four structures / domains, support angle off and on, and then a
 * minimum support (the mean support of the lists: some rows fall below it). */
static void compare_variants(grip_ctx *ctx, const char *name, const grip_neighborhoods_cuda *nb,
                             const grip_kdtree3d *tree, const float *xyz, const float *normals, size_t n,
                             const float *keys, const float *key_normals, size_t k, float radius, uint32_t width,
                             size_t want_nan_rows)
{
    const uint32_t mean_support = (uint32_t)(nb->entries / k);
    for (int v = 0; v < 8; ++v) {
        grip_spin_image_params p = {radius, width, (v & 4) ? 0.5f : 0.0f, 0, v & 1, (v >> 1) & 1};
        compare_stats s = compare_with_cpu(ctx, name, nb, tree, xyz, normals, n, keys, key_normals, k, &p);
        ck_assert_uint_ge(s.nan_rows, want_nan_rows);
    }
    grip_spin_image_params p = {radius, width, 0.5f, mean_support, 1, 0};
    compare_stats s = compare_with_cpu(ctx, name, nb, tree, xyz, normals, n, keys, key_normals, k, &p);
    ck_assert_uint_gt(s.nan_rows, want_nan_rows);
    ck_assert_uint_lt(s.nan_rows, k);
}

/* n points on a wavy sheet, every 11th a copy of an earlier point, every 37th NaN; normals by PCA (k = 10:
 * some NaN where the copies make a neighbourhood degenerate, and every 53rd made NaN). Keypoints: every 5th
 * point, the first's coordinate NaN, the second's normal NaN. */
START_TEST(random_clouds)
{
    grip_ctx *ctx = grip_test_ctx();
    uint64_t s = 401;
    const size_t n = 20000;
    float *xyz = grip_test_uniform_rows(&s, n, 3, -1.0f, 1.0f), *normals = malloc(n * 4 * sizeof *normals);
    ck_assert_ptr_nonnull(normals);
    for (size_t i = 0; i < n; ++i) {
        xyz[3 * i + 2] = 0.2f * sinf(3.0f * xyz[3 * i]) * cosf(2.0f * xyz[3 * i + 1]) + 0.01f * xyz[3 * i + 2];
        if (i % 11 == 0 && i > 0)
            memcpy(xyz + 3 * i, xyz + 3 * (i / 2), 3 * sizeof *xyz);
    }
    for (size_t i = 5; i < n; i += 37)
        xyz[3 * i + i % 3] = NAN;
    ck_assert_int_eq(grip_normals_compute(ctx, xyz, n, NULL, 10, 0.0f, NULL, normals), GRIP_OK);
    for (size_t i = 0; i < n; i += 53)
        normals[4 * i + 1] = NAN;
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, xyz, n, &tree), GRIP_OK);
    const size_t k = n / 5;
    float *keys = malloc(k * 3 * sizeof *keys), *key_normals = malloc(k * 4 * sizeof *key_normals);
    ck_assert(keys && key_normals);
    for (size_t i = 0; i < k; ++i) {
        memcpy(keys + 3 * i, xyz + 3 * (5 * i + 1), 3 * sizeof *keys);
        memcpy(key_normals + 4 * i, normals + 4 * (5 * i + 1), 4 * sizeof *key_normals);
    }
    keys[1] = NAN;
    key_normals[4 + 2] = NAN;
    static const struct {
        float radius;
        uint32_t width;
    } runs[] = {{0.05f, 8}, {0.08f, 1}, {0.1f, 32}};
    for (size_t r = 0; r < 3; ++r) {
        grip_neighborhoods_cuda nb = host_built_lists(ctx, tree, xyz, normals, keys, k, runs[r].radius);
        compare_variants(ctx, "random sheet", &nb, tree, xyz, normals, n, keys, key_normals, k, runs[r].radius,
                         runs[r].width, 2);
        free_lists(&nb);
    }
    grip_kdtree3d_free(tree);
    free(key_normals);
    free(keys);
    free(normals);
    free(xyz);
    grip_ctx_free(ctx);
}
END_TEST

/* Single points, empty lists and the refusals. */
START_TEST(tiny_cases_and_refusals)
{
    grip_ctx *ctx = grip_test_ctx();
    const float xyz[9] = {0, 0, 0, 0, 0, 0.8f, 0.3f, 0.1f, 0.2f};
    const float normals[12] = {0, 0, 1, 0, 0, 0, 1, 0, 0, 0, -1, 0};
    const float keys[9] = {0, 0, 0, 5, 5, 5, 0.3f, 0.1f, 0.2f};
    const float key_normals[12] = {0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0};
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, xyz, 3, &tree), GRIP_OK);
    grip_neighborhoods_cuda nb = host_built_lists(ctx, tree, xyz, normals, keys, 3, 1.0f);
    compare_variants(ctx, "three points", &nb, tree, xyz, normals, 3, keys, key_normals, 3, 1.0f, 8, 0);

    grip_spin_image_params p = {1.0f, 8, 0.5f, 0, 0, 0};
    float *d_keys = upload(ctx, keys, sizeof keys), *d_normals = upload(ctx, key_normals, sizeof key_normals);
    float *d_out = NULL;
    ck_assert_int_eq(grip_cuda_alloc(ctx, 3 * 153 * sizeof(float), (void **)&d_out), GRIP_OK);
    ck_assert_int_eq(grip_spin_image_cuda(ctx, &nb, d_keys, d_normals, 2, &p, d_out), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "3 neighbourhoods for 2 keypoints"));
    ck_assert_int_eq(grip_spin_image_cuda(ctx, &nb, d_keys, d_normals, 0, &p, d_out), GRIP_OK);
    float *nx = nb.nx;
    nb.nx = NULL;
    ck_assert_int_eq(grip_spin_image_cuda(ctx, &nb, d_keys, d_normals, 3, &p, d_out), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "normals"));
    p.support_angle_cos = 0.0f; /* the density without support angle reads no normals */
    ck_assert_int_eq(grip_spin_image_cuda(ctx, &nb, d_keys, d_normals, 3, &p, d_out), GRIP_OK);
    nb.nx = nx;
    p.width = 33;
    ck_assert_int_eq(grip_spin_image_cuda(ctx, &nb, d_keys, d_normals, 3, &p, d_out), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "width"));
    p.width = 8;
    ck_assert_int_eq(grip_spin_image_cuda(ctx, &nb, NULL, d_normals, 3, &p, d_out), GRIP_EINVAL);
    grip_cuda_free(d_out);
    grip_cuda_free(d_normals);
    grip_cuda_free(d_keys);
    free_lists(&nb);
    grip_kdtree3d_free(tree);
    grip_ctx_free(ctx);
}
END_TEST

/* PCL's tutorial scene: its 3,747 keypoints with PCL's normals, radius 2 cm; over the host-built supports and
 * over the device's own radius search. */
START_TEST(tutorial_scene)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, "pcl_reference/tutorial/scene_keypoints.u32.gz")) {
        printf("tutorial scene: data absent, not checked\n");
        return;
    }
    grip_ctx *ctx = grip_test_ctx();
    host_cloud c = grip_test_read_cloud("pcl/milk_cartoon_all_small_clorox.pcd");
    size_t rows = 0, k = 0;
    float *normals = grip_test_read_rows("pcl_reference/tutorial/scene_normals.f32.gz", 4 * sizeof(float), &rows);
    uint32_t *idx = grip_test_read_rows("pcl_reference/tutorial/scene_keypoints.u32.gz", sizeof(uint32_t), &k);
    ck_assert_uint_eq(rows, c.n);
    float *keys = grip_test_gather_xyz(&c, idx, k), *key_normals = malloc(k * 4 * sizeof *key_normals);
    ck_assert_ptr_nonnull(key_normals);
    for (size_t i = 0; i < k; ++i)
        memcpy(key_normals + 4 * i, normals + 4 * (size_t)idx[i], 4 * sizeof *key_normals);
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, c.xyz, c.n, &tree), GRIP_OK);
    const float radius = 0.02f;
    grip_neighborhoods_cuda nb = host_built_lists(ctx, tree, c.xyz, normals, keys, k, radius);
    compare_variants(ctx, "tutorial scene", &nb, tree, c.xyz, normals, c.n, keys, key_normals, k, radius, 8, 0);
    free_lists(&nb);

    grip_surface_cuda *surface = NULL;
    ck_assert_msg(grip_surface_cuda_create(ctx, c.xyz, c.n, &surface) == GRIP_OK, "%s", ctx->last_error);
    ck_assert_int_eq(grip_surface_cuda_set_normals(ctx, surface, normals, 4), GRIP_OK);
    float *d_keys = upload(ctx, keys, k * 3 * sizeof *keys);
    ck_assert_msg(grip_neighborhoods_cuda_radius(ctx, surface, d_keys, (uint32_t)k, radius, 0, &nb) == GRIP_OK,
                  "%s", ctx->last_error);
    compare_variants(ctx, "tutorial scene, device search", &nb, tree, c.xyz, normals, c.n, keys, key_normals, k,
                     radius, 8, 0);
    grip_neighborhoods_cuda_free(&nb);
    grip_cuda_free(d_keys);
    grip_surface_cuda_free(surface);
    grip_kdtree3d_free(tree);
    free(key_normals);
    free(keys);
    free(idx);
    free(normals);
    host_cloud_free(&c);
    grip_ctx_free(ctx);
}
END_TEST

/* The `spin_image` stage on the device and on the CPU, on the bunny of PCL's test with the host's normals (radius
 * 0.04, as PCL's test computes them) and every point a keypoint: the same descriptors. */
START_TEST(stage_on_device_matches_cpu)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, "pcl_reference/bun0_397.pcd")) {
        printf("bunny: data absent, not checked\n");
        return;
    }
    grip_ctx *ctx = grip_test_ctx();
    host_cloud bunny = grip_test_read_cloud("pcl_reference/bun0_397.pcd");
    const size_t n = bunny.n;
    float *normals = malloc(n * 4 * sizeof *normals);
    ck_assert_ptr_nonnull(normals);
    ck_assert_int_eq(grip_normals_compute(ctx, bunny.xyz, n, NULL, 0, 0.04f, NULL, normals), GRIP_OK);
    grip_cloud cloud = {.struct_size = sizeof(grip_cloud), .width = (uint32_t)n, .height = 1,
                        .xyz = grip_array_host_view(GRIP_F32, n, 3, bunny.xyz),
                        .normals = grip_array_host_view(GRIP_F32, n, 4, normals), .name = "bunny"};
    grip_features *f[2] = {NULL, NULL};
    for (int d = 0; d < 2; ++d) {
        const grip_kv kv[] = {{"device", d ? "cuda" : "cpu"}, {"keypoints", "all"},     {"radius", "0.08"},
                              {"support_angle_cos", "0.5"},    {"min_neighbors", "16"}, {"angular", "true"}};
        grip_stage *stage = NULL;
        ck_assert_msg(grip_descriptor_spin_image.create(ctx, kv, 6, &stage) == GRIP_OK, "%s", ctx->last_error);
        ck_assert_msg(grip_descriptor_spin_image.describe(stage, &cloud, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST,
                                                          &f[d]) == GRIP_OK, "%s", ctx->last_error);
        grip_descriptor_spin_image.destroy(stage);
    }
    ck_assert_uint_eq(f[1]->descriptors.rows, n);
    ck_assert_uint_eq(f[1]->descriptors.memory, GRIP_MEM_HOST);
    const float *a = f[0]->descriptors.data, *b = f[1]->descriptors.data;
    float worst = 0.0f;
    size_t nan_mismatch = 0;
    for (size_t j = 0; j < n * 153; ++j) {
        nan_mismatch += isnan(a[j]) != isnan(b[j]);
        if (!isnan(a[j]) && !isnan(b[j]))
            worst = fmaxf(worst, fabsf(a[j] - b[j]));
    }
    printf("spin_image stage on the bunny: max |cuda - cpu| %.3g, NaN mismatches %zu\n", (double)worst,
           nan_mismatch);
    ck_assert_uint_eq(nan_mismatch, 0);
    ck_assert_float_le(worst, TOLERANCE);
    f[0]->release(f[0]);
    f[1]->release(f[1]);
    free(normals);
    host_cloud_free(&bunny);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("spin_image_cuda");
    TCase *tc = tcase_create("twin");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, random_clouds);
    tcase_add_test(tc, tiny_cases_and_refusals);
    tcase_add_test(tc, tutorial_scene);
    tcase_add_test(tc, stage_on_device_matches_cpu);
    suite_add_tcase(s, tc);
    return grip_test_run_gpu(s);
}
