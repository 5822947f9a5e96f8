/* pfh_test_support.h -- what the FPFH and PFH tests (CPU and GPU) share: PCL's bunny with its own normals, the small
 * clouds whose histograms are known by hand, the runs of a CPU twin on them that both tests check, and the stage
 * against its twin. Header-only (static inline). */
#ifndef GRIP_TEST_PFH_SUPPORT_H
#define GRIP_TEST_PFH_SUPPORT_H

#include "test_support.h"
#include "core/array.h"
#include "spatial/kdtree3d.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PCL's test/bun0.pcd: 397 points with the normals PCL's feature tests use. */
#define PFH_TEST_BUNNY_NORMALS "pcl/bun0.pcd"
#define PFH_TEST_BUNNY_POINTS 397

/* The cloud <data>/rel, which must carry normals: xyz (n x 3) and normals (n x 4, curvature NaN), malloc'd. */
static inline float *pfh_test_read_with_normals(const char *rel, size_t *n, float **normals)
{
    host_cloud c = grip_test_read_cloud(rel);
    ck_assert_ptr_nonnull(c.normals);
    *normals = malloc(c.n * 4 * sizeof **normals);
    ck_assert_ptr_nonnull(*normals);
    for (size_t i = 0; i < c.n; ++i) {
        memcpy(*normals + 4 * i, c.normals + 3 * i, 3 * sizeof(float));
        (*normals)[4 * i + 3] = NAN;
    }
    float *xyz = c.xyz;
    c.xyz = NULL;
    *n = c.n;
    host_cloud_free(&c);
    return xyz;
}

/* Three points: p and its duplicate p' at the origin with normal +z, q 1 cm along x with normal +y. Every pair
 * of p (or p') with q has features theta 0, alpha -1, phi 0; the pair (p, p') has all features 0. */
#define PFH_TEST_TRIPLET 3
static inline void pfh_test_triplet(float xyz[3 * PFH_TEST_TRIPLET], float normals[4 * PFH_TEST_TRIPLET])
{
    static const float points[3 * PFH_TEST_TRIPLET] = {0, 0, 0, 0, 0, 0, 0.01f, 0, 0};
    static const float dirs[4 * PFH_TEST_TRIPLET] = {0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0};
    memcpy(xyz, points, sizeof points);
    memcpy(normals, dirs, sizeof dirs);
}

/* A noisy 12 x 12 patch of a curved surface (about 1 cm spacing) with its normals: n = 144 points. */
#define PFH_TEST_PATCH 144
static inline void pfh_test_patch(uint64_t seed, float xyz[3 * PFH_TEST_PATCH], float normals[4 * PFH_TEST_PATCH])
{
    for (int a = 0; a < 12; ++a)
        for (int b = 0; b < 12; ++b) {
            size_t i = (size_t)(12 * a + b);
            float x = 0.01f * (float)a + grip_test_uniform(&seed, -0.002f, 0.002f);
            float y = 0.01f * (float)b + grip_test_uniform(&seed, -0.002f, 0.002f);
            float z = 2.0f * x * x - 1.5f * y * y + x * y;
            float gx = 4.0f * x + y, gy = -3.0f * y + x, len = sqrtf(gx * gx + gy * gy + 1.0f);
            xyz[3 * i] = x;
            xyz[3 * i + 1] = y;
            xyz[3 * i + 2] = z;
            normals[4 * i] = -gx / len;
            normals[4 * i + 1] = -gy / len;
            normals[4 * i + 2] = 1.0f / len;
            normals[4 * i + 3] = 0.0f;
        }
}

/* The CPU twin of a descriptor, as the stage calls it. */
typedef grip_status (*pfh_test_describe_fn)(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals,
                                            size_t n, const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k,
                                            float radius, float *out);

/* The twin on the triplet: at q, p, a far keypoint and a NaN one with radius 0.02 into out[0, 4 dim), whose last
 * two rows must be NaN; then at q and p with radius 5 mm into out[4 dim, 6 dim). */
static inline void pfh_test_triplet_describe(grip_ctx *ctx, pfh_test_describe_fn twin, size_t dim, float *out)
{
    float xyz[3 * PFH_TEST_TRIPLET], normals[4 * PFH_TEST_TRIPLET];
    pfh_test_triplet(xyz, normals);
    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, PFH_TEST_TRIPLET);
    const float keys[4 * 3] = {0.01f, 0, 0, 0, 0, 0, 5.0f, 5.0f, 5.0f, NAN, 0, 0};
    ck_assert_int_eq(twin(ctx, xyz, normals, PFH_TEST_TRIPLET, tree, keys, 4, 0.02f, out), GRIP_OK);
    ck_assert(grip_test_row_is_nan(out + 2 * dim, dim));
    ck_assert(grip_test_row_is_nan(out + 3 * dim, dim));
    ck_assert_int_eq(twin(ctx, xyz, normals, PFH_TEST_TRIPLET, tree, keys, 2, 0.005f, out + 4 * dim), GRIP_OK);
    grip_kdtree3d_free(tree);
}

/* The twin on the curved patch (seed), every point a keypoint, into *ref (PFH_TEST_PATCH x dim, malloc'd); then
 * again into *out (as large, malloc'd) with a NaN point appended to the surface (the first point's normal), which
 * must change no bit, since a NaN point is in no neighbourhood. xyz and normals hold PFH_TEST_PATCH + 1 points and
 * are left holding that surface; returns a tree over it (grip_kdtree3d_free). */
static inline grip_kdtree3d *pfh_test_nan_point_changes_nothing(grip_ctx *ctx, pfh_test_describe_fn twin, size_t dim,
                                                                uint64_t seed, float radius, float *xyz,
                                                                float *normals, float **ref, float **out)
{
    const size_t n = PFH_TEST_PATCH;
    *ref = malloc(n * dim * sizeof **ref);
    *out = malloc(n * dim * sizeof **out);
    ck_assert(*ref && *out);
    pfh_test_patch(seed, xyz, normals);
    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, n);
    ck_assert_int_eq(twin(ctx, xyz, normals, n, tree, xyz, n, radius, *ref), GRIP_OK);
    grip_kdtree3d_free(tree);
    const float nan_point[3] = {NAN, NAN, NAN};
    memcpy(xyz + 3 * n, nan_point, sizeof nan_point);
    memcpy(normals + 4 * n, normals, 4 * sizeof(float));
    tree = grip_test_kdtree(ctx, xyz, n + 1);
    ck_assert_int_eq(twin(ctx, xyz, normals, n + 1, tree, xyz, n, radius, *out), GRIP_OK);
    ck_assert_int_eq(memcmp(*ref, *out, n * dim * sizeof **out), 0);
    return tree;
}

/* The twin (whose errors start "<name>: ") refuses a radius of 0 (naming it), below 0, NaN or infinite, NULL
 * normals or tree, and a tree over more points than the surface has; no keypoints at all is fine. */
static inline void pfh_test_bad_arguments_refused(pfh_test_describe_fn twin, size_t dim, const char *name)
{
    grip_ctx *ctx = grip_test_ctx();
    float xyz[3 * PFH_TEST_TRIPLET], normals[4 * PFH_TEST_TRIPLET], *desc = malloc(dim * sizeof *desc);
    ck_assert_ptr_nonnull(desc);
    pfh_test_triplet(xyz, normals);
    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, PFH_TEST_TRIPLET);
    char radius_error[64];
    snprintf(radius_error, sizeof radius_error, "%s: radius", name);
    ck_assert_int_eq(twin(ctx, xyz, normals, 3, tree, xyz, 1, 0.0f, desc), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, radius_error));
    const float bad_radii[] = {-0.5f, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_radii / sizeof *bad_radii; ++i)
        ck_assert_int_eq(twin(ctx, xyz, normals, 3, tree, xyz, 1, bad_radii[i], desc), GRIP_EINVAL);
    ck_assert_int_eq(twin(ctx, xyz, NULL, 3, tree, xyz, 1, 0.02f, desc), GRIP_EINVAL);
    ck_assert_int_eq(twin(ctx, xyz, normals, 3, NULL, xyz, 1, 0.02f, desc), GRIP_EINVAL);
    ck_assert_int_eq(twin(ctx, xyz, normals, 2, tree, xyz, 1, 0.02f, desc), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "surface has only"));
    ck_assert_int_eq(twin(ctx, xyz, normals, 3, tree, NULL, 0, 0.02f, NULL), GRIP_OK);
    grip_kdtree3d_free(tree);
    free(desc);
    grip_ctx_free(ctx);
}

/* The stage `impl` (device cpu, the given radius) on PCL's bunny with its normals and every third point as a host
 * keypoint gives the twin's rows to the bit, no frames, and refuses a radius of 0 at create(). */
static inline void pfh_test_stage_matches_twin(const grip_stage_impl *impl, uint32_t dim, pfh_test_describe_fn twin,
                                               const char *radius)
{
    grip_ctx *ctx = grip_test_ctx();
    size_t n = 0;
    float *normals = NULL;
    float *xyz = pfh_test_read_with_normals(PFH_TEST_BUNNY_NORMALS, &n, &normals);
    float *normals3 = malloc(n * 3 * sizeof *normals3);
    uint32_t *kp = malloc(n * sizeof *kp);
    float *kp_xyz = malloc(n * 3 * sizeof *kp_xyz), *want = malloc(n * dim * sizeof *want);
    ck_assert(normals3 && kp && kp_xyz && want);
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        memcpy(normals3 + 3 * i, normals + 4 * i, 3 * sizeof(float));
        if (i % 3 == 0) {
            kp[k] = (uint32_t)i;
            memcpy(kp_xyz + 3 * k++, xyz + 3 * i, 3 * sizeof(float));
        }
    }
    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, n);
    ck_assert_int_eq(twin(ctx, xyz, normals, n, tree, kp_xyz, k, strtof(radius, NULL), want), GRIP_OK);

    const grip_kv kv[] = {{"device", "cpu"}, {"radius", radius}};
    grip_stage *st = NULL;
    ck_assert_msg(impl->create(ctx, kv, 2, &st) == GRIP_OK, "%s", ctx->last_error);
    grip_cloud cloud;
    memset(&cloud, 0, sizeof cloud);
    cloud.struct_size = sizeof cloud;
    cloud.width = (uint32_t)n;
    cloud.height = 1;
    cloud.xyz = grip_array_host_view(GRIP_F32, n, 3, xyz);
    cloud.normals = grip_array_host_view(GRIP_F32, n, 3, normals3);
    cloud.name = "bun0";
    grip_array keypoints = grip_array_host_view(GRIP_U32, k, 1, kp);
    grip_features *f = NULL;
    ck_assert_msg(impl->describe(st, &cloud, GRIP_ROLE_SCENE, &keypoints, GRIP_MEM_HOST, &f) == GRIP_OK, "%s",
                  ctx->last_error);
    ck_assert_uint_eq(f->descriptor_dim, dim);
    ck_assert_uint_eq(f->descriptors.rows, k);
    ck_assert_uint_eq(f->frames.rows, 0);
    ck_assert_int_eq(memcmp(f->descriptors.data, want, k * dim * sizeof *want), 0);
    f->release(f);
    impl->destroy(st);

    const grip_kv zero[] = {{"radius", "0"}};
    ck_assert_int_eq(impl->create(ctx, zero, 1, &st), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "radius"));
    grip_kdtree3d_free(tree);
    free(want);
    free(kp_xyz);
    free(kp);
    free(normals3);
    free(normals);
    free(xyz);
    grip_ctx_free(ctx);
}

#endif
