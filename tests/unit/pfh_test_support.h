/* pfh_test_support.h -- what the FPFH and PFH tests (CPU and GPU) share: PCL's bunny with its own normals, a tree,
 * NaN rows, and the small clouds whose histograms are known by hand. Header-only (static inline). */
#ifndef GRIP_TEST_PFH_SUPPORT_H
#define GRIP_TEST_PFH_SUPPORT_H

#include "test_support.h"
#include "core/array.h"
#include "spatial/kdtree3d.h"

#include <math.h>
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

static inline grip_kdtree3d *pfh_test_tree(grip_ctx *ctx, const float *xyz, size_t n)
{
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, xyz, n, &tree), GRIP_OK);
    return tree;
}

static inline int pfh_test_row_is_nan(const float *row, size_t cols)
{
    for (size_t c = 0; c < cols; ++c)
        if (!isnan(row[c]))
            return 0;
    return 1;
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
    grip_kdtree3d *tree = pfh_test_tree(ctx, xyz, n);
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
