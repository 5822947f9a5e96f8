/* test_shot_cuda.c (gpu) -- grip_shot_lrf_cuda and grip_shot_describe_cuda against their CPU twins grip_shot_lrf
 * and grip_shot_describe, with the supports from grip_neighborhoods_cuda_radius over a device surface whose
 * normals are the host's (grip_surface_cuda_set_normals): the frames are the CPU's to the bit, the descriptors
 * within 1e-4 (float rounding of the histogram sums apart, they are the same votes), and NaN rows are the same,
 * on
 *  - a bumpy sphere with NaN points, duplicated points (copies of a keypoint in its support), NaN normals,
 *    keypoints off the surface and supports from empty to about a hundred points, exact and capped (approximate
 *    G-SHOT: the same cap on both sides);
 *  - flat grids, where distances and the frames' sign votes tie (the median tie-breakers decide);
 *  - a single point, four points, all NaN, no keypoints;
 *  - the tutorial pair (PCL's normals and keypoints, radius 0.02), exact and capped at the median support;
 *  - the `shot` stage on CUDA against the stage on the CPU (same keypoints, same frames, descriptors within 1e-4),
 *    given the cloud's normals, exact, capped, and with a frame radius of its own;
 * plus the argument checks. Skips (77) without a usable device; the tutorial case passes without checking
 * anything when the data is absent (it says so). */
#include "test_support.h"
#include "core/cuda_bridge.h"
#include "descriptor/normals.h"
#include "descriptor/shot.h"
#include "descriptor/shot_cuda.h"
#include "spatial/kdtree3d.h"
#include "spatial/neighborhood_cuda.h"
#include "stages/registry.h"
#include "stages/stage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOLERANCE 1e-4

/* One comparison: a surface with its normals, keypoints, a radius and a cap (0: exact SHOT). */
typedef struct shot_case {
    const char *name;
    const float *xyz;       /* n x 3 */
    const float *normals;   /* n x 4 */
    size_t n;
    const float *keypoints; /* k x 3 */
    size_t k;
    float radius;
    uint32_t cap;
} shot_case;

typedef struct shot_output {
    float *frames, *descriptors;
} shot_output;

typedef struct compare_stats {
    size_t nan_frames, nan_descriptors; /* rows NaN on both sides */
    size_t frames_differing;            /* valid frames not equal bit for bit */
    size_t descriptors_over;            /* rows beyond TOLERANCE, or NaN on one side only */
    double descriptor_max;              /* over the rows within tolerance */
    uint32_t truncated;                 /* keypoints whose support the cap shortened (GPU lists) */
} compare_stats;

static shot_output output_alloc(size_t k)
{
    size_t rows = k > 0 ? k : 1;
    shot_output o = {malloc(rows * 9 * sizeof(float)), malloc(rows * GRIP_SHOT_DIM * sizeof(float))};
    ck_assert(o.frames && o.descriptors);
    memset(o.frames, 0xa5, rows * 9 * sizeof(float)); /* poison: every value must be written */
    memset(o.descriptors, 0xa5, rows * GRIP_SHOT_DIM * sizeof(float));
    return o;
}

static void output_free(shot_output *o)
{
    free(o->frames);
    free(o->descriptors);
}

static void cpu_run(grip_ctx *ctx, const shot_case *c, shot_output *o)
{
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, c->xyz, c->n, &tree), GRIP_OK);
    ck_assert_int_eq(grip_shot_lrf(ctx, c->xyz, c->n, tree, c->keypoints, c->k, c->radius, c->cap, o->frames),
                     GRIP_OK);
    ck_assert_int_eq(grip_shot_describe(ctx, c->xyz, c->normals, c->n, tree, c->keypoints, c->k, o->frames,
                                        c->radius, c->cap, o->descriptors),
                     GRIP_OK);
    grip_kdtree3d_free(tree);
}

/* Device copies of the case's keypoints, its surface with the host's normals, and the support lists. */
typedef struct device_case {
    grip_surface_cuda *surface;
    float *keypoints;
    grip_neighborhoods_cuda support;
} device_case;

static device_case device_case_make(grip_ctx *ctx, const shot_case *c, int with_normals)
{
    device_case d = {NULL, NULL, {0}};
    ck_assert_msg(grip_surface_cuda_create(ctx, c->xyz, c->n, &d.surface) == GRIP_OK, "%s: %s", c->name,
                  ctx->last_error);
    if (with_normals)
        ck_assert_msg(grip_surface_cuda_set_normals(ctx, d.surface, c->normals, 4) == GRIP_OK, "%s: %s", c->name,
                      ctx->last_error);
    int device = -1;
    void *kp = NULL;
    ck_assert_int_eq(grip_cuda_upload(ctx, c->keypoints, c->k * 3 * sizeof(float), &kp, &device), GRIP_OK);
    d.keypoints = kp;
    ck_assert_msg(grip_neighborhoods_cuda_radius(ctx, d.surface, d.keypoints, (uint32_t)c->k, c->radius, c->cap,
                                                 &d.support) == GRIP_OK,
                  "%s: %s", c->name, ctx->last_error);
    return d;
}

static void device_case_free(device_case *d)
{
    grip_neighborhoods_cuda_free(&d->support);
    grip_cuda_free(d->keypoints);
    grip_surface_cuda_free(d->surface);
}

static void gpu_run(grip_ctx *ctx, const shot_case *c, shot_output *o, uint32_t *truncated)
{
    device_case d = device_case_make(ctx, c, 1);
    void *frames = NULL, *descriptors = NULL;
    ck_assert_int_eq(grip_cuda_alloc(ctx, c->k * 9 * sizeof(float), &frames), GRIP_OK);
    ck_assert_int_eq(grip_cuda_alloc(ctx, c->k * GRIP_SHOT_DIM * sizeof(float), &descriptors), GRIP_OK);
    ck_assert_msg(grip_shot_lrf_cuda(ctx, &d.support, d.keypoints, (uint32_t)c->k, c->radius, frames) == GRIP_OK,
                  "%s: %s", c->name, ctx->last_error);
    ck_assert_msg(grip_shot_describe_cuda(ctx, &d.support, d.keypoints, frames, (uint32_t)c->k, c->radius,
                                          descriptors) == GRIP_OK,
                  "%s: %s", c->name, ctx->last_error);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, o->frames, frames, c->k * 9 * sizeof(float)), GRIP_OK);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, o->descriptors, descriptors, c->k * GRIP_SHOT_DIM * sizeof(float)),
                     GRIP_OK);
    *truncated = d.support.truncated;
    grip_cuda_free(frames);
    grip_cuda_free(descriptors);
    device_case_free(&d);
}

/* INFINITY when the NaN patterns of the rows differ, else the largest |a - b| over their finite values. */
static double row_diff(const float *a, const float *b, size_t cols)
{
    double worst = 0.0;
    for (size_t j = 0; j < cols; ++j) {
        if (isnan(a[j]) != isnan(b[j]))
            return INFINITY;
        if (!isnan(a[j]))
            worst = fmax(worst, fabs((double)a[j] - (double)b[j]));
    }
    return worst;
}

/* Every value the same bit for bit, or NaN on both sides. */
static int frames_identical(const float *a, const float *b)
{
    for (int j = 0; j < 9; ++j)
        if (!(isnan(a[j]) && isnan(b[j])) && grip_test_float_bits(a[j]) != grip_test_float_bits(b[j]))
            return 0;
    return 1;
}

/* Runs the case on both sides, prints the comparison, and asserts the twins agree. */
static compare_stats compare_with_cpu(const shot_case *c)
{
    grip_ctx *ctx = grip_test_ctx();
    shot_output cpu = output_alloc(c->k), gpu = output_alloc(c->k), again = output_alloc(c->k);
    compare_stats s = {0, 0, 0, 0, 0.0, 0};
    cpu_run(ctx, c, &cpu);
    gpu_run(ctx, c, &gpu, &s.truncated);
    uint32_t truncated_again = 0;
    gpu_run(ctx, c, &again, &truncated_again);
    /* the same bits on a second run: the histogram's sums do not depend on the order the threads vote in */
    ck_assert_int_eq(memcmp(gpu.frames, again.frames, c->k * 9 * sizeof *gpu.frames), 0);
    ck_assert_int_eq(memcmp(gpu.descriptors, again.descriptors, c->k * GRIP_SHOT_DIM * sizeof *gpu.descriptors), 0);
    output_free(&again);
    for (size_t i = 0; i < c->k; ++i) {
        const float *fa = cpu.frames + 9 * i, *fb = gpu.frames + 9 * i;
        s.nan_frames += isnan(fa[0]) && isnan(fb[0]);
        if (!frames_identical(fa, fb) && s.frames_differing++ < 3)
                fprintf(stderr, "%s: frame %zu differs: cpu x (%.9g %.9g %.9g) gpu x (%.9g %.9g %.9g)\n", c->name, i,
                        (double)fa[0], (double)fa[1], (double)fa[2], (double)fb[0], (double)fb[1], (double)fb[2]);
        const float *da = cpu.descriptors + (size_t)GRIP_SHOT_DIM * i,
                    *db = gpu.descriptors + (size_t)GRIP_SHOT_DIM * i;
        s.nan_descriptors += isnan(da[0]) && isnan(db[0]);
        double d = row_diff(da, db, GRIP_SHOT_DIM);
        if (d <= TOLERANCE) {
            s.descriptor_max = fmax(s.descriptor_max, d);
        } else if (s.descriptors_over++ < 3) {
            fprintf(stderr, "%s: descriptor %zu differs by %.3g\n", c->name, i, d);
        }
    }
    printf("%s: k=%zu radius=%g cap=%u: frames bit-identical but %zu, NaN frames %zu, NaN descriptors %zu, "
           "descriptor max |diff| %.3g, rows over %.0e %zu, truncated supports %u\n",
           c->name, c->k, (double)c->radius, c->cap, s.frames_differing, s.nan_frames, s.nan_descriptors,
           s.descriptor_max, TOLERANCE, s.descriptors_over, s.truncated);
    ck_assert_uint_eq(s.frames_differing, 0);
    ck_assert_uint_eq(s.descriptors_over, 0);
    output_free(&cpu);
    output_free(&gpu);
    grip_ctx_free(ctx);
    return s;
}

/* n points on the sphere of radius 1 + 0.1 sin(3 theta) cos(2 phi), on a spiral; every 37th NaN (an inf every
 * third time), every 11th a copy of an earlier point. */
static float *bumpy_sphere(uint64_t *state, size_t n)
{
    float *xyz = malloc(n * 3 * sizeof *xyz);
    ck_assert_ptr_nonnull(xyz);
    for (size_t i = 0; i < n; ++i) {
        float t = ((float)i + 0.5f) / (float)n;
        float theta = acosf(1.0f - 2.0f * t), phi = (float)i * 2.39996323f;
        float r = 1.0f + 0.1f * sinf(3.0f * theta) * cosf(2.0f * phi) + grip_test_uniform(state, -0.002f, 0.002f);
        xyz[3 * i] = r * sinf(theta) * cosf(phi);
        xyz[3 * i + 1] = r * sinf(theta) * sinf(phi);
        xyz[3 * i + 2] = r * cosf(theta);
    }
    for (size_t i = 11; i < n; i += 11) {
        size_t from = (size_t)grip_test_uniform(state, 0.0f, (float)i) % i;
        memcpy(xyz + 3 * i, xyz + 3 * from, 3 * sizeof *xyz);
    }
    for (size_t i = 5, t = 0; i < n; i += 37, ++t)
        xyz[3 * i + t % 3] = t % 3 == 2 ? INFINITY : NAN;
    return xyz;
}

/* The CPU's normals (10 nearest, seen from the centre), every 13th made NaN: such points cast no vote. */
static float *surface_normals(const float *xyz, size_t n)
{
    grip_ctx *ctx = grip_test_ctx();
    float *normals = malloc((n > 0 ? n : 1) * 4 * sizeof *normals);
    ck_assert_ptr_nonnull(normals);
    ck_assert_int_eq(grip_normals_compute(ctx, xyz, n, NULL, 10, 0.0f, NULL, normals), GRIP_OK);
    for (size_t i = 3; i < n; i += 13)
        normals[4 * i + 1] = NAN;
    grip_ctx_free(ctx);
    return normals;
}

/* Every `step`-th point of the cloud, then a point off the surface (an empty support) and a NaN keypoint. */
static float *pick_keypoints(const float *xyz, size_t n, size_t step, size_t *k)
{
    size_t m = (n + step - 1) / step;
    float *kp = malloc((m + 2) * 3 * sizeof *kp);
    ck_assert_ptr_nonnull(kp);
    for (size_t i = 0; i < m; ++i)
        memcpy(kp + 3 * i, xyz + 3 * i * step, 3 * sizeof *kp);
    const float off[6] = {5.0f, 5.0f, 5.0f, 0.0f, NAN, 0.0f};
    memcpy(kp + 3 * m, off, sizeof off);
    *k = m + 2;
    return kp;
}

START_TEST(bumpy_sphere_exact_and_capped)
{
    uint64_t state = 401;
    const size_t n = 20000;
    float *xyz = bumpy_sphere(&state, n);
    float *normals = surface_normals(xyz, n);
    size_t k = 0;
    float *kp = pick_keypoints(xyz, n, 5, &k);
    size_t without_support = 0; /* NaN keypoints and the one off the surface */
    for (size_t i = 0; i < k; ++i)
        without_support += !isfinite(kp[3 * i]) || !isfinite(kp[3 * i + 1]) || !isfinite(kp[3 * i + 2]) ||
                           kp[3 * i] == 5.0f;
    ck_assert_uint_gt(without_support, 100);
    /* mean spacing 0.025: radius 0.04 gives supports of 0 to ~15 points (many too small), 0.12 about 70 */
    static const float radii[] = {0.04f, 0.12f};
    static const uint32_t caps[] = {0, 16, 40};
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 3; ++c) {
            shot_case sc = {"bumpy sphere", xyz, normals, n, kp, k, radii[r], caps[c]};
            compare_stats st = compare_with_cpu(&sc);
            ck_assert_uint_ge(st.nan_frames, without_support); /* and the supports too small */
            ck_assert_uint_lt(st.nan_descriptors, k);
            if (caps[c] > 0 && r == 1)
                ck_assert_uint_gt(st.truncated, k / 2); /* the cap is exercised */
        }
    free(kp);
    free(normals);
    free(xyz);
}
END_TEST

/* A side x side grid of spacing 1 cm in the plane z = 0 (tilted by `tilt` along x), normals up: every distance
 * ties with others, and the frames' sign votes tie. */
static float *flat_grid(int side, float tilt, float **normals)
{
    size_t n = (size_t)side * (size_t)side;
    float *xyz = malloc(n * 3 * sizeof *xyz);
    *normals = malloc(n * 4 * sizeof **normals);
    ck_assert(xyz && *normals);
    float len = sqrtf(1.0f + tilt * tilt);
    for (size_t i = 0; i < n; ++i) {
        float x = 0.01f * (float)(i % (size_t)side), y = 0.01f * (float)(i / (size_t)side);
        xyz[3 * i] = x;
        xyz[3 * i + 1] = y;
        xyz[3 * i + 2] = tilt * x;
        (*normals)[4 * i] = -tilt / len;
        (*normals)[4 * i + 1] = 0.0f;
        (*normals)[4 * i + 2] = 1.0f / len;
        (*normals)[4 * i + 3] = 0.0f;
    }
    return xyz;
}

START_TEST(flat_grids_with_ties)
{
    static const float tilts[] = {0.0f, 0.3f};
    for (int t = 0; t < 2; ++t) {
        float *normals = NULL;
        const int side = 30;
        float *xyz = flat_grid(side, tilts[t], &normals);
        size_t n = (size_t)side * side;
        shot_case exact = {"flat grid", xyz, normals, n, xyz, n, 0.035f, 0};
        compare_with_cpu(&exact);
        shot_case capped = {"flat grid", xyz, normals, n, xyz, n, 0.05f, 20};
        compare_with_cpu(&capped);
        free(xyz);
        free(normals);
    }
}
END_TEST

START_TEST(tiny_clouds)
{
    float one[3] = {0.5f, -0.25f, 1.0f}, one_normal[4] = {0.0f, 0.0f, 1.0f, 0.0f};
    shot_case single = {"single point", one, one_normal, 1, one, 1, 0.1f, 0};
    compare_stats st = compare_with_cpu(&single);
    ck_assert_uint_eq(st.nan_frames, 1);
    ck_assert_uint_eq(st.nan_descriptors, 1);
    /* four points: a support of at most 4, too small for a frame */
    float four[12] = {0, 0, 0, 0.01f, 0, 0, 0, 0.01f, 0, 0.01f, 0.01f, 0.002f};
    float four_normals[16] = {0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0};
    shot_case small = {"four points", four, four_normals, 4, four, 4, 0.1f, 0};
    st = compare_with_cpu(&small);
    ck_assert_uint_eq(st.nan_frames, 4);
    for (int i = 0; i < 12; ++i)
        four[i] = NAN;
    shot_case all_nan = {"all NaN", four, four_normals, 4, four, 4, 0.1f, 0};
    st = compare_with_cpu(&all_nan);
    ck_assert_uint_eq(st.nan_descriptors, 4);
    grip_ctx *ctx = grip_test_ctx();
    ck_assert_int_eq(grip_shot_lrf_cuda(ctx, NULL, NULL, 0, 0.1f, NULL), GRIP_OK);
    ck_assert_int_eq(grip_shot_describe_cuda(ctx, NULL, NULL, NULL, 0, 0.1f, NULL), GRIP_OK);
    grip_ctx_free(ctx);
}
END_TEST

/* Support sizes of the keypoints on the host: the median, for the capped run. */
static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint32_t median_support(grip_ctx *ctx, const float *xyz, size_t n, const float *kp, size_t k, float radius)
{
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, xyz, n, &tree), GRIP_OK);
    uint32_t *sizes = malloc(k * sizeof *sizes);
    ck_assert_ptr_nonnull(sizes);
    grip_neighbors nb = {0};
    for (size_t i = 0; i < k; ++i) {
        ck_assert_int_eq(grip_kdtree3d_radius(tree, kp + 3 * i, radius, &nb), GRIP_OK);
        sizes[i] = (uint32_t)nb.count;
    }
    qsort(sizes, k, sizeof *sizes, compare_u32);
    uint32_t median = sizes[k / 2];
    grip_neighbors_free(&nb);
    free(sizes);
    grip_kdtree3d_free(tree);
    return median;
}

START_TEST(tutorial_pair)
{
    static const char *pcd[2] = {"pcl/data_repo/correspondence_grouping/milk.pcd",
                                 "pcl/milk_cartoon_all_small_clorox.pcd"};
    static const char *prefix[2] = {"model", "scene"};
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, "pcl_reference/tutorial/scene_keypoints.u32.gz") ||
        !grip_test_data_path(path, sizeof path, pcd[0]) || !grip_test_data_path(path, sizeof path, pcd[1])) {
        printf("tutorial pair: data absent, not checked\n");
        return;
    }
    grip_ctx *ctx = grip_test_ctx();
    for (int m = 0; m < 2; ++m) {
        host_cloud c = grip_test_read_cloud(pcd[m]);
        char rel[256];
        size_t rows = 0, k = 0;
        snprintf(rel, sizeof rel, "pcl_reference/tutorial/%s_normals.f32.gz", prefix[m]);
        float *normals = grip_test_read_rows(rel, 4 * sizeof(float), &rows);
        ck_assert_uint_eq(rows, c.n);
        snprintf(rel, sizeof rel, "pcl_reference/tutorial/%s_keypoints.u32.gz", prefix[m]);
        uint32_t *idx = grip_test_read_rows(rel, sizeof(uint32_t), &k);
        float *kp = grip_test_gather_xyz(&c, idx, k);
        uint32_t median = median_support(ctx, c.xyz, c.n, kp, k, 0.02f);
        printf("tutorial %s: %zu points, %zu keypoints, median support %u\n", prefix[m], c.n, k, median);
        shot_case exact = {prefix[m], c.xyz, normals, c.n, kp, k, 0.02f, 0};
        compare_stats st = compare_with_cpu(&exact);
        ck_assert_uint_lt(st.nan_descriptors, k / 100 + 1);
        shot_case capped = {prefix[m], c.xyz, normals, c.n, kp, k, 0.02f, median};
        st = compare_with_cpu(&capped);
        ck_assert_uint_gt(st.truncated, k / 3); /* the keypoints beyond the median */
        free(kp);
        free(idx);
        free(normals);
        host_cloud_free(&c);
    }
    grip_ctx_free(ctx);
}
END_TEST

/* The stage's features on one side: host copies of its keypoints, frames and descriptors. */
static grip_features *stage_run(grip_ctx *ctx, const char *device, const char *cap, const char *lrf_radius,
                                const grip_cloud *cloud)
{
    grip_kv kv[] = {{"device", device}, {"max_neighbors", cap}, {"lrf_radius", lrf_radius}, {"radius", "0.02"}};
    grip_stage *st = NULL;
    ck_assert_msg(grip_stage_create(&grip_descriptor_shot, ctx, kv, 4, &st) == GRIP_OK, "%s", ctx->last_error);
    grip_features *f = NULL;
    ck_assert_msg(grip_descriptor_shot.describe(st, cloud, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, &f) == GRIP_OK, "%s",
                  ctx->last_error);
    grip_stage_destroy(st);
    return f;
}

/* The stage on CUDA gives the keypoints, frames (to the bit) and descriptors (within 1e-4) of the stage on the
 * CPU, given the cloud's normals (the tutorial model's from PCL, else the bumpy sphere's): its device branch
 * searches, caps and describes as the CPU twin does. */
START_TEST(stage_on_cuda_matches_the_cpu_stage)
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
        c.n = c.width = 20000;
        c.height = 1;
        c.xyz = bumpy_sphere(&state, c.n);
        for (size_t i = 0; i < 3 * c.n; ++i) /* the tutorial model's size (0.1), for the stage's radius 0.02 */
            c.xyz[i] *= 0.1f;
        normals = surface_normals(c.xyz, c.n);
        printf("stage: tutorial model absent, the bumpy sphere (radius 0.1) instead\n");
    }
    grip_cloud cloud = {sizeof cloud, (uint32_t)c.n, 1, grip_array_host_view(GRIP_F32, c.n, 3, c.xyz),
                        grip_array_host_view(GRIP_F32, c.n, 4, normals), {0}, "model", {0.0f, 0.0f, 0.0f}};
    grip_ctx *ctx = grip_test_ctx();
    static const char *settings[3][2] = {{"0", "0"}, {"50", "0"}, {"0", "0.015"}}; /* max_neighbors, lrf_radius */
    for (int v = 0; v < 3; ++v) {
        grip_features *cpu = stage_run(ctx, "cpu", settings[v][0], settings[v][1], &cloud);
        grip_features *gpu = stage_run(ctx, "cuda", settings[v][0], settings[v][1], &cloud);
        size_t k = cpu->keypoints.rows, differing = 0, over = 0, valid = 0;
        ck_assert_uint_eq(gpu->keypoints.rows, k);
        ck_assert_uint_gt(k, 100);
        ck_assert_int_eq(memcmp(cpu->keypoints.data, gpu->keypoints.data, k * sizeof(uint32_t)), 0);
        double worst = 0.0;
        for (size_t i = 0; i < k; ++i) {
            const float *fa = (const float *)cpu->frames.data + 9 * i, *fb = (const float *)gpu->frames.data + 9 * i;
            differing += !frames_identical(fa, fb);
            const float *da = (const float *)cpu->descriptors.data + (size_t)GRIP_SHOT_DIM * i;
            const float *db = (const float *)gpu->descriptors.data + (size_t)GRIP_SHOT_DIM * i;
            double d = row_diff(da, db, GRIP_SHOT_DIM);
            over += d > TOLERANCE;
            valid += !isnan(da[0]);
            if (d <= TOLERANCE)
                worst = fmax(worst, d);
        }
        printf("stage max_neighbors=%s lrf_radius=%s: %zu keypoints (%zu described), frames differing %zu, "
               "descriptor max |diff| %.3g, rows over %.0e %zu\n",
               settings[v][0], settings[v][1], k, valid, differing, worst, TOLERANCE, over);
        ck_assert_uint_eq(differing, 0);
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

START_TEST(bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    float *normals = NULL;
    float *xyz = flat_grid(8, 0.0f, &normals);
    shot_case c = {"grid", xyz, normals, 64, xyz, 64, 0.03f, 0};
    device_case bare = device_case_make(ctx, &c, 0); /* lists searched before the surface had normals */
    void *frames = NULL, *descriptors = NULL;
    ck_assert_int_eq(grip_cuda_alloc(ctx, 64 * 9 * sizeof(float), &frames), GRIP_OK);
    ck_assert_int_eq(grip_cuda_alloc(ctx, 64 * GRIP_SHOT_DIM * sizeof(float), &descriptors), GRIP_OK);
    ck_assert_int_eq(grip_shot_lrf_cuda(ctx, &bare.support, bare.keypoints, 64, 0.03f, frames), GRIP_OK);
    ck_assert_int_eq(grip_shot_describe_cuda(ctx, &bare.support, bare.keypoints, frames, 64, 0.03f, descriptors),
                     GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "normals"));
    ck_assert_int_eq(grip_shot_lrf_cuda(ctx, &bare.support, bare.keypoints, 63, 0.03f, frames), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "shot_lrf (cuda): the support lists are for 64 keypoints"));
    ck_assert_int_eq(grip_shot_lrf_cuda(ctx, &bare.support, bare.keypoints, 64, 0.0f, frames), GRIP_EINVAL);
    ck_assert_int_eq(grip_shot_lrf_cuda(ctx, &bare.support, bare.keypoints, 64, NAN, frames), GRIP_EINVAL);
    ck_assert_int_eq(grip_shot_lrf_cuda(ctx, &bare.support, NULL, 64, 0.03f, frames), GRIP_EINVAL);
    ck_assert_int_eq(grip_shot_describe_cuda(ctx, &bare.support, bare.keypoints, NULL, 64, 0.03f, descriptors),
                     GRIP_EINVAL);
    ck_assert_int_eq(grip_shot_describe_cuda(ctx, NULL, bare.keypoints, frames, 64, 0.03f, descriptors), GRIP_EINVAL);
    grip_cuda_free(frames);
    grip_cuda_free(descriptors);
    device_case_free(&bare);
    free(xyz);
    free(normals);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shot_cuda");
    TCase *tc = tcase_create("twin");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, bumpy_sphere_exact_and_capped);
    tcase_add_test(tc, flat_grids_with_ties);
    tcase_add_test(tc, tiny_clouds);
    tcase_add_test(tc, tutorial_pair);
    tcase_add_test(tc, stage_on_cuda_matches_the_cpu_stage);
    tcase_add_test(tc, bad_arguments);
    suite_add_tcase(s, tc);
    return grip_test_run_gpu(s);
}
