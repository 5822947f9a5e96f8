/* describe_many_cases.c -- see describe_many_cases.h. */
#include "describe_many_cases.h"
#include "core/cuda_bridge.h"
#include "stages/registry.h"
#include "stages/stage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_CLOUDS 5
#define MAX_POINTS 6000

static const char *case_device = "cpu";

/* Five wavy sheets of 1,500-6,000 points (NaN rows in two), models and scenes in turn. */
typedef struct cloud_set {
    float xyz[N_CLOUDS][3 * MAX_POINTS];
    uint32_t given[64];
    grip_array given_keypoints;
    grip_cloud clouds[N_CLOUDS];
    const grip_cloud *each[N_CLOUDS];
    uint32_t roles[N_CLOUDS];
    const grip_array *keypoints[N_CLOUDS];
} cloud_set;

static cloud_set *cloud_set_new(void)
{
    cloud_set *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    static const uint32_t sizes[N_CLOUDS] = {3000, 1500, 6000, 2500, 4000};
    for (uint32_t c = 0; c < N_CLOUDS; c++) {
        uint64_t seed = 900 + c;
        float *xyz = s->xyz[c];
        for (uint32_t i = 0; i < sizes[c]; i++) {
            float x = grip_test_uniform(&seed, -1.0f, 1.0f), y = grip_test_uniform(&seed, -1.0f, 1.0f);
            xyz[3 * i] = x;
            xyz[3 * i + 1] = y;
            xyz[3 * i + 2] = 0.2f * sinf(3.0f * x + (float)c) * cosf(2.0f * y);
            if (c % 2 == 0 && i % 23 == 4)
                xyz[3 * i + 2] = NAN;
        }
        grip_cloud *g = &s->clouds[c];
        g->struct_size = sizeof *g;
        g->width = sizes[c];
        g->height = 1;
        g->xyz = grip_array_host_view(GRIP_F32, sizes[c], 3, xyz);
        g->viewpoint[2] = 4.0f;
        g->name = "sheet";
        s->each[c] = g;
        s->roles[c] = c % 2 ? GRIP_ROLE_SCENE : GRIP_ROLE_MODEL;
    }
    for (uint32_t i = 0; i < 64; i++) /* the host's keypoints for cloud 3: every 37th point */
        s->given[i] = 37 * i + 1;
    s->given_keypoints = grip_array_host_view(GRIP_U32, 64, 1, s->given);
    s->keypoints[3] = &s->given_keypoints;
    return s;
}

static grip_stage *stage_new(grip_ctx *ctx, const grip_stage_impl *impl, const char *in_flight)
{
    grip_kv kv[] = {{"device", case_device}, {"radius", "0.25"},  {"model_leaf", "0.15"},
                    {"scene_leaf", "0.2"},   {"normals_k", "12"}, {"clouds_in_flight", in_flight}};
    grip_stage *st = NULL;
    ck_assert_msg(grip_stage_create(impl, ctx, kv, sizeof kv / sizeof kv[0], &st) == GRIP_OK, "%s", ctx->last_error);
    return st;
}

/* An array's bytes in host memory (malloc'd; downloaded when it lives on the device). */
static void *host_bytes(grip_ctx *ctx, const grip_array *a, size_t *bytes)
{
    *bytes = (size_t)(a->rows * a->cols) * 4; /* F32 and U32 alike */
    void *h = malloc(*bytes + 1);
    ck_assert_ptr_nonnull(h);
    if (a->memory == GRIP_MEM_CUDA)
        ck_assert_int_eq(grip_cuda_copy_to_host(ctx, h, a->data, *bytes), GRIP_OK);
    else if (*bytes)
        memcpy(h, a->data, *bytes);
    return h;
}

/* Two arrays alike: shape, memory space and bytes (NaN rows compare as their bits: both come from the same code). */
static void assert_same_array(grip_ctx *ctx, const grip_array *a, const grip_array *b, const char *what, uint32_t c)
{
    ck_assert_msg(a->rows == b->rows && a->cols == b->cols && a->memory == b->memory && a->dtype == b->dtype,
                  "cloud %u: %s: shape or memory differs", c, what);
    size_t na = 0, nb = 0;
    void *ha = host_bytes(ctx, a, &na), *hb = host_bytes(ctx, b, &nb);
    ck_assert_msg(na == nb && memcmp(ha, hb, na) == 0, "cloud %u: %s differ", c, what);
    free(ha);
    free(hb);
}

static void assert_same_features(grip_ctx *ctx, const grip_features *a, const grip_features *b, uint32_t c)
{
    ck_assert_uint_eq(a->descriptor_dim, b->descriptor_dim);
    ck_assert_uint_eq(a->normals_source, b->normals_source);
    ck_assert_uint_gt(a->keypoints.rows, 0);
    assert_same_array(ctx, &a->keypoints, &b->keypoints, "keypoints", c);
    assert_same_array(ctx, &a->keypoint_xyz, &b->keypoint_xyz, "keypoint_xyz", c);
    assert_same_array(ctx, &a->normals, &b->normals, "normals", c);
    assert_same_array(ctx, &a->frames, &b->frames, "frames", c);
    assert_same_array(ctx, &a->descriptors, &b->descriptors, "descriptors", c);
    assert_same_array(ctx, &a->xyz, &b->xyz, "xyz", c);
}

static void release_all(grip_features **f, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (f[i]) {
            f[i]->release(f[i]);
            f[i] = NULL;
        }
}

/* describe_many against describe() cloud by cloud, into `memory`, with clouds_in_flight `in_flight`. */
static void compare_with_describe(const grip_stage_impl *impl, uint32_t memory, const char *in_flight,
                                  int device_clouds)
{
    grip_ctx *ctx = grip_test_ctx_threads(8); /* in_flight is capped by the threads: 8 lets 3 and 8 run at once */
    cloud_set *s = cloud_set_new();
    grip_stage *st = stage_new(ctx, impl, in_flight);
    grip_features *one[N_CLOUDS] = {0}, *many[N_CLOUDS] = {0};
    void *on_device[N_CLOUDS] = {0};
    for (uint32_t c = 0; device_clouds && c < N_CLOUDS; c++) { /* the clouds' points in device memory */
        grip_array *xyz = &s->clouds[c].xyz;
        int device = -1;
        ck_assert_int_eq(
            grip_cuda_upload(ctx, xyz->data, (size_t)xyz->rows * 3 * sizeof(float), &on_device[c], &device), GRIP_OK);
        xyz->data = on_device[c];
        xyz->memory = GRIP_MEM_CUDA;
        xyz->device = device;
    }
    /* first calls of each sort fill the pool; the counters are compared over the next */
    uint32_t failed = 0;
    for (int warm = 0; warm < 2; warm++) {
        ck_assert_msg(impl->describe_many(st, s->each, s->roles, s->keypoints, N_CLOUDS, memory, many, &failed) ==
                          GRIP_OK,
                      "%s", ctx->last_error);
        release_all(many, N_CLOUDS);
    }
    for (uint32_t c = 0; c < N_CLOUDS; c++) {
        ck_assert_msg(impl->describe(st, s->each[c], s->roles[c], s->keypoints[c], memory, &one[c]) == GRIP_OK, "%s",
                      ctx->last_error);
        one[c]->release(one[c]);
    }
    const grip_ctx_counters before_one = ctx->counters;
    for (uint32_t c = 0; c < N_CLOUDS; c++)
        ck_assert_msg(impl->describe(st, s->each[c], s->roles[c], s->keypoints[c], memory, &one[c]) == GRIP_OK, "%s",
                      ctx->last_error);
    const grip_ctx_counters before_many = ctx->counters;
    failed = 0;
    ck_assert_msg(impl->describe_many(st, s->each, s->roles, s->keypoints, N_CLOUDS, memory, many, &failed) == GRIP_OK,
                  "%s", ctx->last_error);
    const grip_ctx_counters after = ctx->counters;
    ck_assert_uint_eq(failed, N_CLOUDS);
    for (uint32_t c = 0; c < N_CLOUDS; c++) {
        ck_assert_ptr_nonnull(many[c]);
        assert_same_features(ctx, many[c], one[c], c);
    }
    /* the workers' copies are the context's: the same as the five calls' */
    ck_assert_uint_eq(after.h2d_bytes - before_many.h2d_bytes, before_many.h2d_bytes - before_one.h2d_bytes);
    ck_assert_uint_eq(after.d2h_bytes - before_many.d2h_bytes, before_many.d2h_bytes - before_one.d2h_bytes);
    ck_assert_uint_eq(after.h2d_copies - before_many.h2d_copies, before_many.h2d_copies - before_one.h2d_copies);
    ck_assert_uint_eq(after.d2h_copies - before_many.d2h_copies, before_many.d2h_copies - before_one.d2h_copies);
    ck_assert_uint_eq(after.pool_grows, before_many.pool_grows); /* a second call of its sort grows nothing */
    if (strcmp(case_device, "cuda") == 0)
        ck_assert_uint_gt(after.h2d_bytes, before_many.h2d_bytes); /* the counters were moved at all */
    release_all(one, N_CLOUDS);
    release_all(many, N_CLOUDS);
    for (uint32_t c = 0; c < N_CLOUDS; c++)
        grip_cuda_free(on_device[c]);
    grip_stage_destroy(st);
    free(s);
    grip_ctx_free(ctx);
}

START_TEST(same_as_describe_one_by_one)
{
    static const char *const in_flight[] = {"1", "3", "8"};
    const int cuda = strcmp(case_device, "cuda") == 0;
    for (int i = 0; i < 3; i++) {
        compare_with_describe(&grip_descriptor_shot, GRIP_MEM_HOST, in_flight[i], 0);
        if (cuda)
            compare_with_describe(&grip_descriptor_shot, GRIP_MEM_CUDA, in_flight[i], 0);
    }
    compare_with_describe(&grip_descriptor_fpfh, GRIP_MEM_HOST, "3", 0);
    if (cuda) /* clouds a host keeps on the device, read by the workers on their own streams */
        compare_with_describe(&grip_descriptor_shot, GRIP_MEM_CUDA, "3", 1);
}
END_TEST

START_TEST(a_failing_cloud_is_named_and_nothing_is_kept)
{
    grip_ctx *ctx = grip_test_ctx_threads(8);
    cloud_set *s = cloud_set_new();
    grip_stage *st = stage_new(ctx, &grip_descriptor_shot, "4");
    const uint32_t memory = strcmp(case_device, "cuda") == 0 ? GRIP_MEM_CUDA : GRIP_MEM_HOST;
    for (uint32_t i = 0; i < 3 * 1500; i++) /* cloud 2 keeps only its first 1,500 points, all NaN */
        s->xyz[2][i] = NAN;
    s->clouds[2].xyz.rows = 1500;
    s->clouds[2].width = 1500;
    s->clouds[2].name = "the NaN sheet";
    s->roles[4] = 7;
    grip_features *out[N_CLOUDS];
    for (uint32_t c = 0; c < N_CLOUDS; c++)
        out[c] = (grip_features *)s; /* anything but NULL: every entry must come back NULL */
    uint32_t failed = 99;
    ck_assert_int_eq(
        grip_descriptor_shot.describe_many(st, s->each, s->roles, s->keypoints, N_CLOUDS, memory, out, &failed),
        GRIP_EINVAL);
    ck_assert_uint_eq(failed, 2);
    for (uint32_t c = 0; c < N_CLOUDS; c++)
        ck_assert_ptr_null(out[c]);
    ck_assert_msg(strncmp(ctx->last_error, "descriptor: clouds[2]: ", 23) == 0, "%s", ctx->last_error);
    ck_assert_msg(strstr(ctx->last_error, "the NaN sheet"), "%s", ctx->last_error);
    /* the context describes again, and the bad role alone is named too */
    s->roles[4] = GRIP_ROLE_SCENE;
    s->each[2] = s->each[0];
    ck_assert_msg(grip_descriptor_shot.describe_many(st, s->each, s->roles, s->keypoints, N_CLOUDS, memory, out,
                                                     &failed) == GRIP_OK,
                  "%s", ctx->last_error);
    release_all(out, N_CLOUDS);
    s->roles[4] = 7;
    ck_assert_int_eq(
        grip_descriptor_shot.describe_many(st, s->each, s->roles, s->keypoints, N_CLOUDS, memory, out, &failed),
        GRIP_EINVAL);
    ck_assert_uint_eq(failed, 4);
    ck_assert_msg(strncmp(ctx->last_error, "descriptor: clouds[4]: ", 23) == 0 && strstr(ctx->last_error, "role 7"),
                  "%s", ctx->last_error);
    grip_stage_destroy(st);
    free(s);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
    grip_ctx *ctx = grip_test_ctx();
    cloud_set *s = cloud_set_new();
    grip_stage *st = stage_new(ctx, &grip_descriptor_shot, "2");
    grip_features *out[N_CLOUDS] = {0};
    uint32_t failed = 0;
    const grip_stage_impl *impl = &grip_descriptor_shot;
    ck_assert_int_eq(impl->describe_many(st, NULL, s->roles, NULL, 2, GRIP_MEM_HOST, out, &failed), GRIP_EINVAL);
    ck_assert_uint_eq(failed, 2);
    ck_assert_msg(strstr(ctx->last_error, "clouds is NULL"), "%s", ctx->last_error);
    ck_assert_int_eq(impl->describe_many(st, s->each, NULL, NULL, 2, GRIP_MEM_HOST, out, NULL), GRIP_EINVAL);
    ck_assert_msg(strstr(ctx->last_error, "roles is NULL"), "%s", ctx->last_error);
    ck_assert_int_eq(impl->describe_many(st, s->each, s->roles, NULL, 2, GRIP_MEM_HOST, NULL, NULL), GRIP_EINVAL);
    for (uint32_t c = 0; c < N_CLOUDS; c++)
        out[c] = (grip_features *)s; /* anything but NULL: an early refusal clears every entry too */
    ck_assert_int_eq(impl->describe_many(st, s->each, s->roles, NULL, N_CLOUDS, 9, out, NULL), GRIP_EINVAL);
    for (uint32_t c = 0; c < N_CLOUDS; c++)
        ck_assert_ptr_null(out[c]);
    ck_assert_int_eq(impl->describe_many(NULL, s->each, s->roles, NULL, 2, GRIP_MEM_HOST, out, NULL), GRIP_EINVAL);
    ck_assert_int_eq(impl->describe_many(st, NULL, NULL, NULL, 0, GRIP_MEM_HOST, out, &failed), GRIP_OK);
    ck_assert_uint_eq(failed, 0);
    grip_stage *index = NULL;
    ck_assert_int_eq(grip_stage_create(&grip_index_bruteforce, ctx, NULL, 0, &index), GRIP_OK);
    ck_assert_int_eq(impl->describe_many(index, s->each, s->roles, NULL, 2, GRIP_MEM_HOST, out, NULL), GRIP_EINVAL);
    ck_assert_msg(strstr(ctx->last_error, "not a descriptor"), "%s", ctx->last_error);
    ck_assert_ptr_null(grip_index_bruteforce.describe_many);
    grip_stage_destroy(index);
    grip_stage *zero = NULL;
    grip_kv kv[] = {{"clouds_in_flight", "0"}};
    ck_assert_int_eq(grip_stage_create(impl, ctx, kv, 1, &zero), GRIP_ECONFIG);
    ck_assert_msg(strstr(ctx->last_error, "clouds_in_flight"), "%s", ctx->last_error);
    grip_stage_destroy(st);
    free(s);
    grip_ctx_free(ctx);
}
END_TEST

void grip_test_add_describe_many_cases(TCase *tc, const char *device)
{
    case_device = device;
    tcase_add_test(tc, same_as_describe_one_by_one);
    tcase_add_test(tc, a_failing_cloud_is_named_and_nothing_is_kept);
    tcase_add_test(tc, bad_arguments_are_refused);
}
