/* descriptor_cases.c -- see descriptor_cases.h. */
#include "descriptor_cases.h"
#include "stages/registry.h"
#include "stages/stage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CASE_MAX_POINTS 1200
#define CASE_TOLERANCE 1e-4f

/* A cloud of a case, and the keypoints the host gives (none: the stage's own selection). */
typedef struct case_cloud {
    const char *name;
    float xyz[3 * CASE_MAX_POINTS];
    uint32_t n;
    uint32_t keypoints[2 * CASE_MAX_POINTS];
    uint32_t n_keypoints;
    const char *radius; /* the stage's support radius for this case */
} case_cloud;

/* A wavy sheet of n points (spacing about 2 / sqrt(n)), the base of most cases. */
static void sheet(case_cloud *c, uint32_t n, uint64_t seed)
{
    c->n = n;
    for (uint32_t i = 0; i < n; ++i) {
        float x = grip_test_uniform(&seed, -1.0f, 1.0f), y = grip_test_uniform(&seed, -1.0f, 1.0f);
        c->xyz[3 * i] = x;
        c->xyz[3 * i + 1] = y;
        c->xyz[3 * i + 2] = 0.2f * sinf(3.0f * x) * cosf(2.0f * y);
    }
}

static void case_nan_points(case_cloud *c)
{
    c->name = "a third of the points NaN";
    sheet(c, 900, 11);
    for (uint32_t i = 0; i < c->n; i += 3)
        c->xyz[3 * i + (i % 3)] = NAN;
    c->radius = "0.3";
}

static void case_duplicates(case_cloud *c)
{
    c->name = "every point twice";
    sheet(c, 500, 12);
    memcpy(c->xyz + 3 * 500, c->xyz, 500 * 3 * sizeof(float));
    c->n = 1000;
    c->radius = "0.3";
}

static void case_single_point(case_cloud *c)
{
    c->name = "a single point";
    c->n = 1;
    c->xyz[0] = 0.5f, c->xyz[1] = -0.25f, c->xyz[2] = 2.0f;
    c->radius = "0.3";
}

static void case_one_voxel(case_cloud *c)
{
    c->name = "all points in one voxel";
    uint64_t seed = 13;
    c->n = 200;
    for (uint32_t i = 0; i < 3 * c->n; ++i)
        c->xyz[i] = 0.51f + grip_test_uniform(&seed, 0.0f, 1e-3f);
    c->radius = "0.3";
}

static void case_huge_radius(case_cloud *c)
{
    c->name = "a radius holding the whole cloud";
    sheet(c, 300, 14);
    c->radius = "100";
}

static void case_more_keypoints(case_cloud *c)
{
    c->name = "more keypoints than points (each given twice)";
    sheet(c, 400, 15);
    for (uint32_t i = 0; i < 2 * c->n; ++i)
        c->keypoints[i] = (i * 7) % c->n;
    c->n_keypoints = 2 * c->n;
    c->radius = "0.3";
}

typedef void (*case_make)(case_cloud *c);
static const case_make cases[] = {case_nan_points, case_duplicates,  case_single_point,
                                  case_one_voxel,  case_huge_radius, case_more_keypoints};

static grip_cloud cloud_of(const case_cloud *c)
{
    grip_cloud cloud;
    memset(&cloud, 0, sizeof cloud);
    cloud.struct_size = sizeof cloud;
    cloud.width = c->n;
    cloud.height = 1;
    cloud.xyz = grip_array_host_view(GRIP_F32, c->n, 3, (void *)c->xyz);
    cloud.name = c->name;
    cloud.viewpoint[2] = 5.0f;
    return cloud;
}

/* The support leaves every case runs with: the cloud itself, and a voxel grid of about twice the 900-point sheet's
 * spacing (which merges the duplicates, and the one-voxel case to a handful of support points). */
static const char *const support_leaves[] = {"0", "0.12"};

/* describe() of the case on `device` with support_leaf, features in host memory; the stage is made and freed
 * here. */
static grip_status describe_with(grip_ctx *ctx, const grip_stage_impl *impl, const case_cloud *c, const char *device,
                                 const char *support_leaf, grip_features **f)
{
    grip_kv kv[] = {{"device", device}, {"radius", c->radius}, {"scene_leaf", "0.1"}, {"support_leaf", support_leaf}};
    grip_stage *st = NULL;
    grip_status s = grip_stage_create(impl, ctx, kv, 4, &st);
    ck_assert_msg(s == GRIP_OK, "%s: create: %s", impl->name, ctx->last_error);
    grip_cloud cloud = cloud_of(c);
    grip_array given = grip_array_host_view(GRIP_U32, c->n_keypoints, 1, (void *)c->keypoints);
    s = impl->describe(st, &cloud, GRIP_ROLE_SCENE, c->n_keypoints ? &given : NULL, GRIP_MEM_HOST, f);
    grip_stage_destroy(st);
    return s;
}

static grip_status describe(grip_ctx *ctx, const grip_stage_impl *impl, const case_cloud *c, const char *device,
                           grip_features **f)
{
    return describe_with(ctx, impl, c, device, support_leaves[0], f);
}

/* Same NaN rows, values within tolerance; returns the largest difference. */
static float compare_rows(const char *what, const grip_features *a, const grip_features *b)
{
    ck_assert_uint_eq(a->descriptors.rows, b->descriptors.rows);
    ck_assert_uint_eq(a->descriptors.cols, b->descriptors.cols);
    const float *x = a->descriptors.data, *y = b->descriptors.data;
    float worst = 0.0f;
    for (size_t i = 0; i < a->descriptors.rows * a->descriptors.cols; ++i) {
        ck_assert_msg(isnan(x[i]) == isnan(y[i]), "%s: value %zu is %g on the CPU, %g on the GPU", what, i,
                      (double)x[i], (double)y[i]);
        if (!isnan(x[i]) && fabsf(x[i] - y[i]) > worst)
            worst = fabsf(x[i] - y[i]);
    }
    ck_assert_msg(worst <= CASE_TOLERANCE, "%s: GPU differs from the CPU twin by %g", what, (double)worst);
    return worst;
}

/* How far apart the two rows of one keypoint given twice may be. The CPU twins add in a fixed order: bit for bit.
 * The GPU SHOT kernel adds its votes with shared-memory float atomics, whose order the scheduler decides: the same
 * row can round differently in its last bits from one run to the next (seen under compute-sanitizer), so on a
 * device the two rows must agree to rounding, 1e-6, not to the bit. */
#define CASE_REPEAT_TOLERANCE_DEVICE 1e-6f

/* The rows of a case are well formed: one per keypoint, and where the host gave every keypoint twice (the second
 * half repeats the first), the two rows of a point are the same (NaN rows alike). */
static void check_rows(const char *what, const case_cloud *c, const grip_features *f, int on_device)
{
    ck_assert_uint_eq(f->descriptors.rows, f->keypoints.rows);
    if (!c->n_keypoints) {
        ck_assert_uint_ge(f->keypoints.rows, 1);
        return;
    }
    ck_assert_uint_eq(f->keypoints.rows, c->n_keypoints);
    const uint32_t half = c->n_keypoints / 2;
    const float *d = f->descriptors.data;
    const size_t dim = f->descriptors.cols;
    for (uint32_t i = 0; i < half; ++i) {
        const float *a = d + dim * i, *b = d + dim * (i + half);
        if (!on_device) {
            ck_assert_msg(memcmp(a, b, dim * sizeof *d) == 0, "%s: point %u given twice got two different rows",
                          what, c->keypoints[i]);
            continue;
        }
        for (size_t j = 0; j < dim; ++j)
            ck_assert_msg(isnan(a[j]) == isnan(b[j]) &&
                              (isnan(a[j]) || fabsf(a[j] - b[j]) <= CASE_REPEAT_TOLERANCE_DEVICE),
                          "%s: point %u given twice: value %zu is %g and %g", what, c->keypoints[i], j, (double)a[j],
                          (double)b[j]);
    }
}

static void run_cases(const grip_stage_impl *impl, const char *device)
{
    grip_ctx *ctx = grip_test_ctx();
    case_cloud *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    for (size_t run = 0; run < sizeof cases / sizeof cases[0] * 2; ++run) {
        const char *leaf = support_leaves[run % 2];
        memset(c, 0, sizeof *c);
        cases[run / 2](c);
        char what[160];
        snprintf(what, sizeof what, "%s on %s, %s, support_leaf %s", impl->name, device, c->name, leaf);
        grip_features *f = NULL;
        grip_status s = describe_with(ctx, impl, c, device, leaf, &f);
        ck_assert_msg(s == GRIP_OK, "%s: %s", what, ctx->last_error);
        check_rows(what, c, f, strcmp(device, "cpu") != 0);
        if (strcmp(device, "cpu") != 0) {
            grip_features *twin = NULL;
            ck_assert_int_eq(describe_with(ctx, impl, c, "cpu", leaf, &twin), GRIP_OK);
            float worst = compare_rows(what, twin, f);
            fprintf(stderr, "%s: %llu rows, max |GPU - CPU| %g\n", what, (unsigned long long)f->descriptors.rows,
                    (double)worst);
            twin->release(twin);
        }
        f->release(f);
    }
    free(c);
    grip_ctx_free(ctx);
}

/* Refusals: radius 0 at create (naming the key), an empty and an all-NaN cloud at describe (naming the cloud). */
static void run_refusals(const grip_stage_impl *impl, const char *device)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_kv zero[] = {{"device", device}, {"radius", "0"}};
    grip_stage *st = NULL;
    ck_assert_int_eq(grip_stage_create(impl, ctx, zero, 2, &st), GRIP_ECONFIG);
    ck_assert_msg(strstr(ctx->last_error, "radius"), "%s: radius 0 refused without naming it: %s", impl->name,
                  ctx->last_error);
    ck_assert_ptr_null(st);

    case_cloud *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    c->radius = "0.3";
    c->name = "empty cloud";
    grip_features *f = NULL;
    ck_assert_int_eq(describe(ctx, impl, c, device, &f), GRIP_EINVAL);
    ck_assert_ptr_null(f);
    ck_assert_msg(strstr(ctx->last_error, "empty cloud"), "%s: %s", impl->name, ctx->last_error);
    c->name = "all-NaN cloud";
    c->n = 50;
    for (uint32_t i = 0; i < 3 * c->n; ++i)
        c->xyz[i] = NAN;
    ck_assert_int_eq(describe(ctx, impl, c, device, &f), GRIP_EINVAL);
    ck_assert_msg(strstr(ctx->last_error, "all-NaN cloud"), "%s: %s", impl->name, ctx->last_error);
    free(c);
    grip_ctx_free(ctx);
}

static const char *case_device = "cpu";

#define DESCRIPTOR_CASE_TEST(impl_symbol)                                                                        \
    START_TEST(cases_##impl_symbol)                                                                              \
    {                                                                                                            \
        run_refusals(&impl_symbol, case_device);                                                                 \
        run_cases(&impl_symbol, case_device);                                                                    \
    }                                                                                                            \
    END_TEST

DESCRIPTOR_CASE_TEST(grip_descriptor_shot)
DESCRIPTOR_CASE_TEST(grip_descriptor_fpfh)
DESCRIPTOR_CASE_TEST(grip_descriptor_pfh)
DESCRIPTOR_CASE_TEST(grip_descriptor_spin_image)

void grip_test_add_descriptor_cases(TCase *tc, const char *device)
{
    case_device = device;
    tcase_add_test(tc, cases_grip_descriptor_shot);
    tcase_add_test(tc, cases_grip_descriptor_fpfh);
    tcase_add_test(tc, cases_grip_descriptor_pfh);
    tcase_add_test(tc, cases_grip_descriptor_spin_image);
}
