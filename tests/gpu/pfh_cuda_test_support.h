/* pfh_cuda_test_support.h -- what the FPFH and PFH GPU tests share: a GPU descriptor run against its CPU twin on the
 * same cloud, normals, keypoints and radius (same NaN rows, every other value within 1e-4), random clouds with NaN
 * points, duplicates and NaN normals, the tutorial scene with PCL's normals and keypoints, and the comparisons both
 * tests make on the small clouds, the bunny and that scene. Header-only. */
#ifndef GRIP_TEST_PFH_CUDA_SUPPORT_H
#define GRIP_TEST_PFH_CUDA_SUPPORT_H

#include "../unit/pfh_test_support.h"
#include "core/cuda_bridge.h"
#include "spatial/neighborhood_cuda.h"

#include <stdio.h>

#define PFH_CUDA_TOLERANCE 1e-4

typedef grip_status (*pfh_gpu_describe_fn)(grip_ctx *ctx, const grip_surface_cuda *s, const float *keypoint_xyz,
                                           uint32_t k, float radius, float *out);

/* A GPU descriptor of dim values a row and its CPU twin. */
typedef struct pfh_cuda_twins {
    size_t dim;
    pfh_test_describe_fn cpu;
    pfh_gpu_describe_fn gpu;
} pfh_cuda_twins;

typedef struct pfh_cuda_stats {
    size_t nan_rows, exact_rows; /* rows NaN on both sides; rows equal to the bit */
    double max_diff;
} pfh_cuda_stats;

/* The surface xyz (n x 3) with normals (n x 4) on the device. Free with grip_surface_cuda_free. */
static inline grip_surface_cuda *pfh_cuda_surface(grip_ctx *ctx, const float *xyz, const float *normals, size_t n)
{
    grip_surface_cuda *s = NULL;
    ck_assert_msg(grip_surface_cuda_create(ctx, xyz, n, &s) == GRIP_OK, "%s", ctx->last_error);
    ck_assert_msg(grip_surface_cuda_set_normals(ctx, s, normals, 4) == GRIP_OK, "%s", ctx->last_error);
    return s;
}

/* Host bytes on the device (NULL for 0 bytes). Free with grip_cuda_free. */
static inline void *pfh_cuda_upload(grip_ctx *ctx, const void *host, size_t bytes)
{
    void *dev = NULL;
    int device = -1;
    if (bytes > 0)
        ck_assert_msg(grip_cuda_upload(ctx, host, bytes, &dev, &device) == GRIP_OK, "%s", ctx->last_error);
    return dev;
}

/* Runs both twins and compares them row by row; prints and returns the statistics. */
static inline pfh_cuda_stats pfh_cuda_compare(const pfh_cuda_twins *t, const char *name, const float *xyz,
                                              const float *normals, size_t n, const float *keys, size_t k,
                                              float radius)
{
    const size_t dim = t->dim;
    grip_ctx *ctx = grip_test_ctx();
    float *cpu = malloc((k ? k : 1) * dim * sizeof *cpu), *gpu = malloc((k ? k : 1) * dim * sizeof *gpu);
    ck_assert(cpu && gpu);
    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, n);
    ck_assert_msg(t->cpu(ctx, xyz, normals, n, tree, keys, k, radius, cpu) == GRIP_OK, "%s", ctx->last_error);
    grip_surface_cuda *s = pfh_cuda_surface(ctx, xyz, normals, n);
    float *keys_dev = pfh_cuda_upload(ctx, keys, k * 3 * sizeof(float));
    float *out_dev = NULL;
    ck_assert_int_eq(grip_cuda_alloc(ctx, k * dim * sizeof(float), (void **)&out_dev), GRIP_OK);
    ck_assert_msg(t->gpu(ctx, s, keys_dev, (uint32_t)k, radius, out_dev) == GRIP_OK, "%s: %s", name, ctx->last_error);
    if (k > 0)
        ck_assert_int_eq(grip_cuda_copy_to_host(ctx, gpu, out_dev, k * dim * sizeof(float)), GRIP_OK);
    pfh_cuda_stats st = {0, 0, 0.0};
    for (size_t i = 0; i < k; ++i) {
        const float *a = cpu + i * dim, *b = gpu + i * dim;
        int nan_a = grip_test_row_is_nan(a, dim), nan_b = grip_test_row_is_nan(b, dim);
        ck_assert_msg(nan_a == nan_b, "%s: row %zu is NaN on the %s only", name, i, nan_a ? "CPU" : "GPU");
        if (nan_a) {
            ++st.nan_rows;
            continue;
        }
        st.exact_rows += memcmp(a, b, dim * sizeof *a) == 0;
        for (size_t d = 0; d < dim; ++d) {
            double diff = fabs((double)a[d] - (double)b[d]);
            ck_assert_msg(diff <= PFH_CUDA_TOLERANCE, "%s: row %zu bin %zu: CPU %.9g, GPU %.9g", name, i, d,
                          (double)a[d], (double)b[d]);
            st.max_diff = diff > st.max_diff ? diff : st.max_diff;
        }
    }
    printf("%s: n=%zu k=%zu radius=%g: max |diff| %.3g, rows equal to the bit %zu of %zu, NaN rows %zu\n", name, n, k,
           (double)radius, st.max_diff, st.exact_rows, k - st.nan_rows, st.nan_rows);
    grip_cuda_free(out_dev);
    grip_cuda_free(keys_dev);
    grip_surface_cuda_free(s);
    grip_kdtree3d_free(tree);
    free(gpu);
    free(cpu);
    grip_ctx_free(ctx);
    return st;
}

/* n points uniform in [0, 1]^3 with unit normals in random directions; every 11th point a copy of an earlier one,
 * every 37th a NaN (or inf) point, every 53rd normal NaN. */
static inline void pfh_cuda_random_cloud(uint64_t *seed, size_t n, float **xyz, float **normals)
{
    *xyz = grip_test_uniform_rows(seed, n, 3, 0.0f, 1.0f);
    *normals = malloc(n * 4 * sizeof **normals);
    ck_assert_ptr_nonnull(*normals);
    for (size_t i = 0; i < n; ++i) {
        float v[3], len = 0.0f;
        do {
            for (int a = 0; a < 3; ++a)
                v[a] = grip_test_uniform(seed, -1.0f, 1.0f);
            len = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        } while (len < 0.1f || len > 1.0f);
        for (int a = 0; a < 3; ++a)
            (*normals)[4 * i + a] = i % 53 == 7 ? NAN : v[a] / len;
        (*normals)[4 * i + 3] = 0.0f;
        if (i > 0 && i % 11 == 0) {
            size_t from = (size_t)grip_test_uniform(seed, 0.0f, (float)i) % i;
            memcpy(*xyz + 3 * i, *xyz + 3 * from, 3 * sizeof(float));
        }
    }
    for (size_t i = 5, t = 0; i < n; i += 37, ++t)
        (*xyz)[3 * i + t % 3] = t % 3 == 2 ? INFINITY : NAN;
}

/* Keypoints: every step-th point of the cloud (NaN ones included), then a point far outside, a NaN point, and
 * `extra` random points in the cloud's box that are no cloud points. k x 3, malloc'd. */
static inline float *pfh_cuda_keypoints(uint64_t *seed, const float *xyz, size_t n, size_t step, size_t extra,
                                        size_t *k)
{
    size_t from_cloud = (n + step - 1) / step;
    *k = from_cloud + 2 + extra;
    float *keys = malloc(*k * 3 * sizeof *keys);
    ck_assert_ptr_nonnull(keys);
    for (size_t i = 0; i < from_cloud; ++i)
        memcpy(keys + 3 * i, xyz + 3 * (i * step), 3 * sizeof(float));
    float *tail = keys + 3 * from_cloud;
    tail[0] = tail[1] = tail[2] = 50.0f;
    tail[3] = NAN;
    tail[4] = tail[5] = 0.5f;
    for (size_t i = 0; i < 3 * extra; ++i)
        tail[6 + i] = grip_test_uniform(seed, 0.0f, 1.0f);
    return keys;
}

#define PFH_CUDA_SCENE "pcl/milk_cartoon_all_small_clorox.pcd"
#define PFH_CUDA_SCENE_NORMALS "pcl_reference/tutorial/scene_normals.f32.gz"
#define PFH_CUDA_SCENE_KEYPOINTS "pcl_reference/tutorial/scene_keypoints.u32.gz"

/* The tutorial scene with PCL's normals (n x 4) and the coordinates of every step-th of PCL's uniform-sampling
 * keypoints (leaf 0.03): returns 0 (and prints so) when the data is absent. */
static inline int pfh_cuda_tutorial_scene(host_cloud *scene, float **normals, float **keys, size_t *k, size_t step)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, PFH_CUDA_SCENE) ||
        !grip_test_data_path(path, sizeof path, PFH_CUDA_SCENE_NORMALS) ||
        !grip_test_data_path(path, sizeof path, PFH_CUDA_SCENE_KEYPOINTS)) {
        printf("tutorial scene: data absent, not checked\n");
        return 0;
    }
    *scene = grip_test_read_cloud(PFH_CUDA_SCENE);
    size_t rows = 0, nk = 0;
    *normals = grip_test_read_rows(PFH_CUDA_SCENE_NORMALS, 4 * sizeof(float), &rows);
    ck_assert_uint_eq(rows, scene->n);
    uint32_t *idx = grip_test_read_rows(PFH_CUDA_SCENE_KEYPOINTS, sizeof(uint32_t), &nk);
    ck_assert_uint_gt(nk, 0);
    for (size_t i = 0; i < nk / step; ++i)
        idx[i] = idx[i * step];
    *k = nk / step;
    *keys = grip_test_gather_xyz(scene, idx, *k);
    free(idx);
    return 1;
}

/* The curved patch (patch_seed) with no NaN row, the duplicate triplet with every row equal to the bit, and a
 * one-point cloud; every point a keypoint. */
static inline void pfh_cuda_check_small_clouds(const pfh_cuda_twins *t, uint64_t patch_seed)
{
    float patch[3 * PFH_TEST_PATCH], patch_normals[4 * PFH_TEST_PATCH];
    pfh_test_patch(patch_seed, patch, patch_normals);
    pfh_cuda_stats st =
        pfh_cuda_compare(t, "curved patch", patch, patch_normals, PFH_TEST_PATCH, patch, PFH_TEST_PATCH, 0.03f);
    ck_assert_uint_eq(st.nan_rows, 0);
    float tri[3 * PFH_TEST_TRIPLET], tri_normals[4 * PFH_TEST_TRIPLET];
    pfh_test_triplet(tri, tri_normals);
    st = pfh_cuda_compare(t, "duplicate triplet", tri, tri_normals, PFH_TEST_TRIPLET, tri, PFH_TEST_TRIPLET, 0.02f);
    ck_assert_uint_eq(st.exact_rows, PFH_TEST_TRIPLET);
    pfh_cuda_compare(t, "one point", tri, tri_normals, 1, tri, 1, 0.02f);
}

/* PCL's bunny with its normals, every point a keypoint at `radius`; then its first `all_keys` points with every
 * point a neighbour. Passes (and says so) when the data is absent. */
static inline void pfh_cuda_check_bunny(const pfh_cuda_twins *t, float radius, size_t all_keys)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, PFH_TEST_BUNNY_NORMALS)) {
        printf("bunny: data absent, not checked\n");
        return;
    }
    size_t n = 0;
    float *normals = NULL;
    float *xyz = pfh_test_read_with_normals(PFH_TEST_BUNNY_NORMALS, &n, &normals);
    pfh_cuda_compare(t, "bunny", xyz, normals, n, xyz, n, radius);
    pfh_cuda_compare(t, "bunny, every point a neighbour", xyz, normals, n, xyz, all_keys, 10.0f);
    free(normals);
    free(xyz);
}

/* The tutorial scene with PCL's normals at every step-th of its keypoints: not every row NaN. Passes when the data
 * is absent. */
static inline void pfh_cuda_check_tutorial_scene(const pfh_cuda_twins *t, const char *name, size_t step, float radius)
{
    host_cloud scene;
    float *normals = NULL, *keys = NULL;
    size_t k = 0;
    if (!pfh_cuda_tutorial_scene(&scene, &normals, &keys, &k, step))
        return;
    pfh_cuda_stats st = pfh_cuda_compare(t, name, scene.xyz, normals, scene.n, keys, k, radius);
    ck_assert_uint_lt(st.nan_rows, k);
    free(keys);
    free(normals);
    host_cloud_free(&scene);
}

#endif
