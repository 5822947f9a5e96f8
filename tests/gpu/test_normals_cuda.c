/* test_normals_cuda.c (gpu) -- the GPU normals against their CPU twin grip_normals_compute: the same NaN rows,
 * and every value within 1e-4 on every other row.
 *  - k nearest, host in/out (grip_normals_cuda): random clouds with NaN points and exact duplicates (k = 3, 10, 32,
 *    two viewpoints), tiny and empty clouds, and the tutorial scene (k = 10, as PCL's tutorial). A row may differ
 *    only where the CPU's k+1 nearest hold equal distances (the GPU breaks ties by index, PCL/FLANN by its
 *    traversal): such rows are counted and printed, and every differing row must be one (the tutorial scene's
 *    depth steps make a fifth of its rows tie rows; a few percent of those differ).
 *  - the surface entry (grip_normals_cuda_surface): bit for bit what the host entry gives, the surface marked as
 *    having normals; radius normals (no ties to excuse: the radius set is the same, summed in the CPU's order) on
 *    random clouds (one radius at which some points have more neighbours than GRIP_NORMALS_CUDA_LIST_CAP and
 *    others fewer), PCL's 397-point bunny (radius 0.03, as PCL's FPFH test) and the tutorial scene (radius 0.01).
 *  - grip_normals_cuda_turn_around: the surface's normals negated on the device as grip_normals_turn_around does
 *    on the host, bit for bit (NaN rows stay NaN, curvature kept); refused on a surface without normals.
 * Skips (77) without a usable device; the data cases pass without checking anything when the data is absent (they
 * say so). */
#include "test_support.h"
#include "core/cuda_bridge.h"
#include "descriptor/normals.h"
#include "descriptor/normals_cuda.h"
#include "spatial/kdtree3d.h"
#include "spatial/neighborhood_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE 1e-4f

typedef struct compare_stats {
    size_t nan_rows, tie_rows, differing, differing_untied;
    float max_diff; /* over the rows that agree */
} compare_stats;

/* 1 when the CPU's k+1 nearest of point i hold two equal distances (which ones PCL keeps, or their order,
 * then depends on FLANN's traversal). */
static int is_tie_row(const grip_kdtree3d *tree, const float *p, uint32_t k)
{
    uint32_t idx[GRIP_NORMALS_CUDA_MAX_K + 1];
    float d[GRIP_NORMALS_CUDA_MAX_K + 1];
    size_t m = grip_kdtree3d_knn(tree, p, k + 1, idx, d);
    for (size_t j = 1; j < m; ++j)
        if (d[j] == d[j - 1])
            return 1;
    return 0;
}

/* Row difference: INFINITY when their NaN patterns differ, else the largest |cpu - gpu| of the finite values. */
static float row_diff(const float *a, const float *b)
{
    float worst = 0.0f;
    for (int c = 0; c < 4; ++c) {
        if (isnan(a[c]) != isnan(b[c]))
            return INFINITY;
        if (!isnan(a[c]) && fabsf(a[c] - b[c]) > worst)
            worst = fabsf(a[c] - b[c]);
    }
    return worst;
}

static compare_stats compare_with_cpu(const char *name, const float *xyz, size_t n, uint32_t k, const float *vp)
{
    grip_ctx *ctx = grip_test_ctx();
    size_t cells = 4 * (n > 0 ? n : 1);
    float *cpu = malloc(cells * sizeof *cpu), *gpu = malloc(cells * sizeof *gpu);
    ck_assert_ptr_nonnull(cpu);
    ck_assert_ptr_nonnull(gpu);
    memset(gpu, 0xa5, cells * sizeof *gpu); /* poison: every cell must be written */
    ck_assert_int_eq(grip_normals_compute(ctx, xyz, n, NULL, k, 0.0f, vp, cpu), GRIP_OK);
    ck_assert_msg(grip_normals_cuda(ctx, xyz, n, k, vp, gpu) == GRIP_OK, "%s: %s", name, ctx->last_error);
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, xyz, n, &tree), GRIP_OK);
    compare_stats s = {0, 0, 0, 0, 0.0f};
    for (size_t i = 0; i < n; ++i) {
        const float *a = cpu + 4 * i, *b = gpu + 4 * i;
        s.nan_rows += isnan(a[0]);
        int tie = isfinite(xyz[3 * i]) && isfinite(xyz[3 * i + 1]) && isfinite(xyz[3 * i + 2]) &&
                  is_tie_row(tree, xyz + 3 * i, k);
        s.tie_rows += (size_t)tie;
        float d = row_diff(a, b);
        if (d <= TOLERANCE) {
            if (d > s.max_diff)
                s.max_diff = d;
            continue;
        }
        ++s.differing;
        if (!tie) {
            if (s.differing_untied < 5)
                fprintf(stderr, "%s k=%u: row %zu differs on a row without ties: cpu (%.9g %.9g %.9g %.9g) gpu "
                        "(%.9g %.9g %.9g %.9g)\n", name, k, i, (double)a[0], (double)a[1], (double)a[2],
                        (double)a[3], (double)b[0], (double)b[1], (double)b[2], (double)b[3]);
            ++s.differing_untied;
        }
    }
    printf("%s n=%zu k=%u: max |diff| %.3g on agreeing rows, NaN rows %zu, tie rows %zu, differing rows %zu "
           "(untied %zu)\n", name, n, k, (double)s.max_diff, s.nan_rows, s.tie_rows, s.differing,
           s.differing_untied);
    ck_assert_uint_eq(s.differing_untied, 0);
    grip_kdtree3d_free(tree);
    free(cpu);
    free(gpu);
    grip_ctx_free(ctx);
    return s;
}

/* n points uniform in [-1, 1]^3; every 37th a NaN point (an inf every third time), every 11th a copy of an
 * earlier point. */
static float *random_cloud(uint64_t *s, size_t n)
{
    float *xyz = grip_test_uniform_rows(s, n, 3, -1.0f, 1.0f);
    for (size_t i = 1; i < n; ++i)
        if (i % 11 == 0) {
            size_t from = (size_t)grip_test_uniform(s, 0.0f, (float)i) % i;
            memcpy(xyz + 3 * i, xyz + 3 * from, 3 * sizeof *xyz);
        }
    for (size_t i = 5, t = 0; i < n; i += 37, ++t)
        xyz[3 * i + t % 3] = t % 3 == 2 ? INFINITY : NAN;
    return xyz;
}

/* Small sizes (compute-sanitizer, grip_test_size): a fifth of the random points, radii grown by the cube root of 5
 * so that a point has as many neighbours as at full size: the same kernels on the same paths. */
static size_t random_points(void)
{
    return grip_test_size(20000, 4000);
}
static float radius_of(float full_size_radius)
{
    return full_size_radius * cbrtf(20000.0f / (float)random_points());
}

START_TEST(random_clouds_with_nan_points_and_duplicates)
{
    static const uint32_t ks[] = {3, 10, 32};
    static const float vp_far[3] = {5.0f, -3.0f, 2.0f};
    uint64_t s = 301;
    const size_t n = random_points(), nc = n * 3 / 5; /* clustered: 12000 at full size */
    float *xyz = random_cloud(&s, n);
    for (size_t ki = 0; ki < 3; ++ki) {
        compare_stats st = compare_with_cpu("uniform", xyz, n, ks[ki], NULL);
        ck_assert_uint_ge(st.nan_rows, n / 37); /* the NaN points at least (k = 3 adds collinear duplicates) */
        ck_assert_uint_gt(st.tie_rows, 0);      /* the duplicates tie: the case is not vacuous */
    }
    compare_with_cpu("uniform, far viewpoint", xyz, n, 10, vp_far);
    free(xyz);
    /* clustered: a dense cloud in 7 blobs, many points per grid cell */
    xyz = grip_test_clustered_rows(&s, nc, 3, 7);
    compare_with_cpu("clustered", xyz, nc, 10, vp_far);
    free(xyz);
}
END_TEST

START_TEST(tiny_and_degenerate_clouds)
{
    float two[6] = {0, 0, 0, 1, 0, 0};
    compare_stats st = compare_with_cpu("two points", two, 2, 10, NULL);
    ck_assert_uint_eq(st.nan_rows, 2);
    uint64_t s = 302;
    float *five = grip_test_uniform_rows(&s, 5, 3, -1.0f, 1.0f);
    st = compare_with_cpu("five points", five, 5, 32, NULL);
    ck_assert_uint_eq(st.nan_rows, 0);
    for (size_t i = 0; i < 15; ++i)
        five[i] = NAN;
    st = compare_with_cpu("all NaN", five, 5, 4, NULL);
    ck_assert_uint_eq(st.nan_rows, 5);
    free(five);
    /* all copies of one point: NaN normals, curvature 0, as PCL */
    float same[30];
    for (size_t i = 0; i < 30; ++i)
        same[i] = (float)(i % 3) * 0.5f - 0.25f;
    compare_with_cpu("one point ten times", same, 10, 5, NULL);
    /* collinear points along a line off the axes, and a flat square grid (many exact distance ties) */
    float *line = malloc(300 * 3 * sizeof *line), *flat = malloc(400 * 3 * sizeof *flat);
    ck_assert_ptr_nonnull(line);
    ck_assert_ptr_nonnull(flat);
    for (size_t i = 0; i < 300; ++i) {
        line[3 * i] = 0.01f * (float)i;
        line[3 * i + 1] = 0.02f * (float)i;
        line[3 * i + 2] = -0.005f * (float)i;
    }
    compare_with_cpu("line", line, 300, 8, NULL);
    for (size_t i = 0; i < 400; ++i) {
        flat[3 * i] = 0.125f * (float)(i % 20);
        flat[3 * i + 1] = 0.125f * (float)(i / 20);
        flat[3 * i + 2] = 1.0f;
    }
    compare_with_cpu("flat grid", flat, 400, 9, NULL);
    free(line);
    free(flat);
    grip_ctx *ctx = grip_test_ctx();
    ck_assert_int_eq(grip_normals_cuda(ctx, NULL, 0, 10, NULL, NULL), GRIP_OK);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(tutorial_scene)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, "pcl/milk_cartoon_all_small_clorox.pcd")) {
        printf("tutorial scene: data absent, not checked\n");
        return;
    }
    host_cloud c = grip_test_read_cloud("pcl/milk_cartoon_all_small_clorox.pcd");
    grip_test_sanitizer_crop(&c, 48); /* small sizes: 48 of the 480 rows */
    compare_stats st = compare_with_cpu("tutorial scene", c.xyz, c.n, 10, c.viewpoint);
    ck_assert_uint_ge(st.nan_rows, c.n - host_cloud_count_finite(&c)); /* NaN points give NaN rows */
    ck_assert_uint_lt(st.differing, c.n / 100); /* H100: 2352 of 64327 tie rows differ (0.77 % of the scene) */
    host_cloud_free(&c);
}
END_TEST

START_TEST(bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0}, out[12];
    ck_assert_int_eq(grip_normals_cuda(ctx, xyz, 3, 0, NULL, out), GRIP_EINVAL);
    ck_assert_int_eq(grip_normals_cuda(ctx, NULL, 3, 3, NULL, out), GRIP_EINVAL);
    ck_assert_int_eq(grip_normals_cuda(ctx, xyz, 3, 3, NULL, NULL), GRIP_EINVAL);
    ck_assert_int_eq(grip_normals_cuda(ctx, xyz, 3, 33, NULL, out), GRIP_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "k = 33"));
    ck_assert_int_eq(grip_normals_cuda(ctx, xyz, 3, 3, NULL, out), GRIP_OK);
    grip_ctx_free(ctx);
}
END_TEST

/* The normals of a fresh surface over xyz, downloaded into out (n x 4); the surface must say it has them. */
static grip_status surface_normals(grip_ctx *ctx, const float *xyz, size_t n, uint32_t k, float radius,
                                   const float *vp, float *out)
{
    grip_surface_cuda *s = NULL;
    ck_assert_msg(grip_surface_cuda_create(ctx, xyz, n, &s) == GRIP_OK, "%s", ctx->last_error);
    ck_assert_int_eq(grip_surface_cuda_get_view(s).has_normals, 0);
    grip_status st = grip_normals_cuda_surface(ctx, s, k, radius, vp);
    grip_surface_cuda_view v = grip_surface_cuda_get_view(s);
    if (st == GRIP_OK) {
        ck_assert_int_eq(v.has_normals, 1);
        ck_assert_int_eq(grip_cuda_copy_to_host(ctx, out, v.normals, n * 4 * sizeof *out), GRIP_OK);
    } else {
        ck_assert_int_eq(v.has_normals, 0);
    }
    grip_surface_cuda_free(s);
    return st;
}

/* Radius normals on the surface against the CPU twin: same NaN rows, all values within TOLERANCE. Returns the
 * number of NaN rows. */
static size_t compare_radius_with_cpu(const char *name, const float *xyz, size_t n, float radius, const float *vp)
{
    grip_ctx *ctx = grip_test_ctx();
    float *cpu = malloc(4 * n * sizeof *cpu), *gpu = malloc(4 * n * sizeof *gpu);
    ck_assert(cpu && gpu);
    ck_assert_int_eq(grip_normals_compute(ctx, xyz, n, NULL, 0, radius, vp, cpu), GRIP_OK);
    ck_assert_msg(surface_normals(ctx, xyz, n, 0, radius, vp, gpu) == GRIP_OK, "%s: %s", name, ctx->last_error);
    size_t nan_rows = 0, differing = 0;
    float worst = 0.0f;
    for (size_t i = 0; i < n; ++i) {
        float d = row_diff(cpu + 4 * i, gpu + 4 * i);
        nan_rows += isnan(cpu[4 * i]);
        if (d > TOLERANCE && differing++ < 5)
            fprintf(stderr, "%s r=%g: row %zu differs: cpu (%.9g %.9g %.9g %.9g) gpu (%.9g %.9g %.9g %.9g)\n", name,
                    (double)radius, i, (double)cpu[4 * i], (double)cpu[4 * i + 1], (double)cpu[4 * i + 2],
                    (double)cpu[4 * i + 3], (double)gpu[4 * i], (double)gpu[4 * i + 1], (double)gpu[4 * i + 2],
                    (double)gpu[4 * i + 3]);
        else if (d <= TOLERANCE && d > worst)
            worst = d;
    }
    printf("%s n=%zu radius=%g: max |diff| %.3g, NaN rows %zu, differing rows %zu\n", name, n, (double)radius,
           (double)worst, nan_rows, differing);
    ck_assert_uint_eq(differing, 0);
    free(cpu);
    free(gpu);
    grip_ctx_free(ctx);
    return nan_rows;
}

START_TEST(surface_entry_equals_the_host_entry)
{
    uint64_t s = 303;
    const size_t n = random_points();
    float *xyz = random_cloud(&s, n);
    float *host = malloc(4 * n * sizeof *host), *surf = malloc(4 * n * sizeof *surf);
    ck_assert(host && surf);
    grip_ctx *ctx = grip_test_ctx();
    static const float vp[3] = {1.0f, 2.0f, -3.0f};
    static const uint32_t ks[] = {3, 10, 32};
    for (size_t i = 0; i < 3; ++i) {
        ck_assert_int_eq(grip_normals_cuda(ctx, xyz, n, ks[i], vp, host), GRIP_OK);
        ck_assert_int_eq(surface_normals(ctx, xyz, n, ks[i], 0.0f, vp, surf), GRIP_OK);
        ck_assert_int_eq(memcmp(host, surf, 4 * n * sizeof *host), 0);
    }
    /* k wins over a radius given beside it */
    ck_assert_int_eq(surface_normals(ctx, xyz, n, 10, 0.5f, vp, surf), GRIP_OK);
    ck_assert_int_eq(grip_normals_cuda(ctx, xyz, n, 10, vp, host), GRIP_OK);
    ck_assert_int_eq(memcmp(host, surf, 4 * n * sizeof *host), 0);
    /* a surface without finite points: NaN rows */
    for (size_t i = 0; i < 3 * 100; ++i)
        xyz[i] = NAN;
    ck_assert_int_eq(surface_normals(ctx, xyz, 100, 10, 0.0f, NULL, surf), GRIP_OK);
    for (size_t i = 0; i < 4 * 100; ++i)
        ck_assert(isnan(surf[i]));
    grip_ctx_free(ctx);
    free(host);
    free(surf);
    free(xyz);
}
END_TEST

/* The rows of xyz with more than cap neighbours within radius (the CPU's radius search). */
static size_t rows_past(const float *xyz, size_t n, float radius, size_t cap)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, xyz, n, &tree), GRIP_OK);
    grip_neighbors nb = {0};
    size_t past = 0;
    for (size_t i = 0; i < n; ++i) {
        ck_assert_int_eq(grip_kdtree3d_radius(tree, xyz + 3 * i, radius, &nb), GRIP_OK);
        past += nb.count > cap;
    }
    grip_neighbors_free(&nb);
    grip_kdtree3d_free(tree);
    grip_ctx_free(ctx);
    return past;
}

START_TEST(radius_normals_on_random_clouds)
{
    uint64_t s = 304;
    const size_t n = random_points(), nc = n * 3 / 5;
    float *xyz = random_cloud(&s, n);
    static const float vp_far[3] = {5.0f, -3.0f, 2.0f};
    compare_radius_with_cpu("uniform", xyz, n, radius_of(0.1f), NULL);
    /* a radius small enough that many points have fewer than 3 neighbours */
    ck_assert_uint_gt(compare_radius_with_cpu("uniform, small radius", xyz, n, radius_of(0.03f), vp_far), n / 37 + 100);
    /* a radius at which inner points have more neighbours than the GPU sorts in shared memory and points near the
     * cube's faces fewer: both paths in one call */
    const size_t past = rows_past(xyz, n, radius_of(0.3f), GRIP_NORMALS_CUDA_LIST_CAP);
    printf("uniform, radius %g: %zu of %zu rows have more than %d neighbours\n", (double)radius_of(0.3f), past, n,
           GRIP_NORMALS_CUDA_LIST_CAP);
    ck_assert_uint_gt(past, n / 10);
    ck_assert_uint_lt(past, n - n / 10);
    compare_radius_with_cpu("uniform, long lists", xyz, n, radius_of(0.3f), vp_far);
    free(xyz);
    xyz = grip_test_clustered_rows(&s, nc, 3, 7);
    compare_radius_with_cpu("clustered", xyz, nc, radius_of(0.01f), vp_far);
    free(xyz);
}
END_TEST

START_TEST(radius_normals_on_real_data)
{
    static const struct {
        const char *rel;
        float radius;
    } clouds[] = {{"pcl/bun0.pcd", 0.03f}, {"pcl/milk_cartoon_all_small_clorox.pcd", 0.01f}};
    for (size_t c = 0; c < 2; ++c) {
        char path[4096];
        if (!grip_test_data_path(path, sizeof path, clouds[c].rel)) {
            printf("%s: data absent, not checked\n", clouds[c].rel);
            continue;
        }
        host_cloud cloud = grip_test_read_cloud(clouds[c].rel);
        /* small sizes: the scene's middle 110 rows, 70,400 points */
        grip_test_sanitizer_crop(&cloud, 110);
        size_t nan_rows = compare_radius_with_cpu(clouds[c].rel, cloud.xyz, cloud.n, clouds[c].radius,
                                                  cloud.viewpoint);
        ck_assert_uint_ge(nan_rows, cloud.n - host_cloud_count_finite(&cloud));
        host_cloud_free(&cloud);
    }
}
END_TEST

/* Turning a surface's normals around on the device: the host's turning, bit for bit but for NaN bits. */
START_TEST(surface_turn_around)
{
    uint64_t seed = 305;
    const size_t n = random_points();
    float *xyz = random_cloud(&seed, n);
    float *host = malloc(4 * n * sizeof *host), *dev = malloc(4 * n * sizeof *dev);
    ck_assert(host && dev);
    grip_ctx *ctx = grip_test_ctx();
    static const float vp[3] = {0.1f, -0.2f, 0.3f};
    ck_assert_int_eq(grip_normals_cuda(ctx, xyz, n, 10, vp, host), GRIP_OK);
    grip_normals_turn_around(host, n);
    grip_surface_cuda *s = NULL;
    ck_assert_msg(grip_surface_cuda_create(ctx, xyz, n, &s) == GRIP_OK, "%s", ctx->last_error);
    ck_assert_int_eq(grip_normals_cuda_turn_around(ctx, s), GRIP_EINVAL); /* nothing to turn yet */
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "no normals"));
    ck_assert_int_eq(grip_normals_cuda_surface(ctx, s, 10, 0.0f, vp), GRIP_OK);
    ck_assert_msg(grip_normals_cuda_turn_around(ctx, s) == GRIP_OK, "%s", ctx->last_error);
    grip_surface_cuda_view v = grip_surface_cuda_get_view(s);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, dev, v.normals, n * 4 * sizeof *dev), GRIP_OK);
    size_t nan_rows = 0;
    for (size_t i = 0; i < 4 * n; ++i) {
        nan_rows += i % 4 == 0 && isnan(host[i]);
        ck_assert_msg((isnan(host[i]) && isnan(dev[i])) || memcmp(host + i, dev + i, sizeof *dev) == 0,
                      "value %zu: host %.9g device %.9g", i, (double)host[i], (double)dev[i]);
    }
    ck_assert_uint_gt(nan_rows, 0);
    ck_assert_int_eq(grip_normals_cuda_turn_around(ctx, NULL), GRIP_EINVAL);
    grip_surface_cuda_free(s);
    grip_ctx_free(ctx);
    free(host);
    free(dev);
    free(xyz);
}
END_TEST

START_TEST(surface_bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0}, out[12];
    ck_assert_int_eq(grip_normals_cuda_surface(ctx, NULL, 3, 0.0f, NULL), GRIP_EINVAL);
    ck_assert_int_eq(surface_normals(ctx, xyz, 3, 33, 0.0f, NULL, out), GRIP_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "k = 33"));
    ck_assert_int_eq(surface_normals(ctx, xyz, 3, 0, 0.0f, NULL, out), GRIP_EINVAL);
    ck_assert_int_eq(surface_normals(ctx, xyz, 3, 0, -1.0f, NULL, out), GRIP_EINVAL);
    ck_assert_int_eq(surface_normals(ctx, xyz, 3, 0, NAN, NULL, out), GRIP_EINVAL);
    ck_assert_int_eq(surface_normals(ctx, xyz, 3, 0, INFINITY, NULL, out), GRIP_EINVAL);
    ck_assert_int_eq(surface_normals(ctx, xyz, 3, 0, 2.0f, NULL, out), GRIP_OK);
    ck_assert(isfinite(out[0]) && fabsf(out[2]) == 1.0f); /* three points in z = 0: the normal is +-z */
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("normals_cuda");
    grip_test_add_case(s, "random", random_clouds_with_nan_points_and_duplicates);
    grip_test_add_case(s, "tiny", tiny_and_degenerate_clouds);
    grip_test_add_case(s, "scene", tutorial_scene);
    grip_test_add_case(s, "arguments", bad_arguments);
    grip_test_add_case(s, "surface", surface_entry_equals_the_host_entry);
    grip_test_add_case(s, "radius_random", radius_normals_on_random_clouds);
    grip_test_add_case(s, "radius_data", radius_normals_on_real_data);
    grip_test_add_case(s, "surface_arguments", surface_bad_arguments);
    grip_test_add_case(s, "turn_around", surface_turn_around);
    return grip_test_run_gpu(s);
}
