/* test_descriptor_front.c -- the descriptor front's host side (stages/descriptor_front.h), what every descriptor
 * stage starts from: the shared parameters spliced into a table, the keypoints (uniform sampling per role, every
 * finite point, the host's, checked), the normals (computed by the CPU twin from k nearest or a radius and flipped
 * toward the cloud's viewpoint, or -- a model under model_normals = outward -- away from its centroid; or the host's
 * own, 3 or 4 columns, as given), the kd-tree, and the features handed over by
 * describe() in host memory; bad roles, clouds, keypoints and normals parameters fail with the documented codes
 * and leave nothing allocated (run under valgrind once). Also: result arrays allocated on and placed in host
 * memory, and a CPU-only build's refusal of device memory. The support cloud (support_leaf): 0 leaves every
 * result as it was, bit for bit; above 0 the support is the voxel grid's centroids with normals computed over them
 * (each cloud point taking its voxel's) or the cloud's own averaged per voxel, the keypoints still the cloud's; bad
 * leaves are refused by name. */
#include "test_support.h"
#include "closed_shapes.h"
#include "descriptor/normals_propagate.h"
#include "descriptor/normals.h"
#include "descriptor/uniform_sampling.h"
#include "descriptor/voxel_grid.h"
#include "stages/descriptor_front.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const grip_param_info front_params[] = {
    GRIP_DESCRIPTOR_FRONT_PARAMS,
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "radius", "0.1", 0, 100, NULL, "a stage's own key"},
};

static const grip_stage_impl front_impl = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_DESCRIPTOR,
    .name = "front_test",
    .summary = "the descriptor front alone",
    .backends = GRIP_BACKEND_CPU,
    .n_params = sizeof front_params / sizeof front_params[0],
    .params = front_params,
};

#define N_POINTS 3000

/* A wavy sheet of N_POINTS points with a NaN row every 17, seen from (0, 0, 5). */
typedef struct sheet {
    float xyz[3 * N_POINTS];
    grip_cloud cloud;
} sheet;

static void sheet_make(sheet *s)
{
    uint64_t seed = 801;
    for (size_t i = 0; i < N_POINTS; ++i) {
        float x = grip_test_uniform(&seed, -1.0f, 1.0f), y = grip_test_uniform(&seed, -1.0f, 1.0f);
        s->xyz[3 * i] = x;
        s->xyz[3 * i + 1] = y;
        s->xyz[3 * i + 2] = 0.1f * sinf(3.0f * x) * cosf(2.0f * y);
        if (i % 17 == 5)
            s->xyz[3 * i + 1] = NAN;
    }
    memset(&s->cloud, 0, sizeof s->cloud);
    s->cloud.struct_size = sizeof s->cloud;
    s->cloud.width = N_POINTS;
    s->cloud.height = 1;
    s->cloud.xyz = grip_array_host_view(GRIP_F32, N_POINTS, 3, s->xyz);
    s->cloud.viewpoint[2] = 5.0f;
}

static grip_stage *stage_new(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv)
{
    grip_stage *st = NULL;
    ck_assert_msg(grip_stage_create(&front_impl, ctx, kv, n_kv, &st) == GRIP_OK, "%s", ctx->last_error);
    return st;
}

START_TEST(shared_parameters_splice_into_a_table)
{
    static const char *keys[] = {"device",        "fallback",    "clouds_in_flight", "normals",    "normals_k",
                                 "normals_radius", "model_normals", "propagate_k",   "keypoints",  "model_leaf",
                                 "scene_leaf",     "support_leaf",  "radius"};
    ck_assert_uint_eq(front_impl.n_params, 13);
    for (size_t i = 0; i < 13; ++i)
        ck_assert_str_eq(front_params[i].key, keys[i]);
    grip_ctx *ctx = grip_test_ctx();
    grip_kv bad[] = {{"keypoints", "some"}};
    grip_stage *st = NULL;
    ck_assert_int_eq(grip_stage_create(&front_impl, ctx, bad, 1, &st), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "keypoints"));
    grip_ctx_free(ctx);
}
END_TEST

/* count floats alike: bit for bit, or both NaN (an undefined normal may be any NaN) */
static int same_floats(const float *a, const float *b, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        if (!(isnan(a[i]) && isnan(b[i])) && memcmp(a + i, b + i, sizeof *a) != 0)
            return 0;
    return 1;
}

/* The host side for kv: keypoints as expect_idx, normals as expect_normals (bit for bit, but for NaN bits). */
static void check_front(const grip_kv *kv, uint32_t n_kv, const grip_cloud *cloud, uint32_t role,
                        const grip_array *given, const uint32_t *expect_idx, size_t expect_k,
                        const float *expect_normals)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_stage *st = stage_new(ctx, kv, n_kv);
    grip_descriptor_front f;
    ck_assert_msg(grip_descriptor_front_open(st, cloud, role, given, 352, &f) == GRIP_OK, "%s", ctx->last_error);
    ck_assert_int_eq(f.on_device, 0);
    ck_assert_ptr_nonnull(f.tree);
    ck_assert_ptr_null(f.surface);
    ck_assert_ptr_null(f.keypoints_dev);
    ck_assert_uint_eq(f.features->descriptor_dim, 352);
    ck_assert_uint_eq(f.n_keypoints, expect_k);
    ck_assert_int_eq(memcmp(f.keypoints, expect_idx, expect_k * sizeof *expect_idx), 0);
    for (size_t i = 0; i < expect_k; ++i)
        ck_assert_int_eq(memcmp(f.keypoint_xyz + 3 * i, f.in.xyz + 3 * (size_t)expect_idx[i], 3 * sizeof(float)), 0);
    ck_assert(same_floats(f.normals, expect_normals, N_POINTS * 4));
    ck_assert_ptr_eq(f.normals, f.features->normals.data);
    ck_assert_ptr_eq(f.keypoints, f.features->keypoints.data);
    /* no support_leaf: the support is the cloud itself */
    ck_assert_ptr_eq(f.support_xyz, f.in.xyz);
    ck_assert_uint_eq(f.n_support, f.in.n);
    ck_assert_ptr_eq(f.support_normals, f.normals);
    grip_descriptor_front_close(&f);
    grip_stage_destroy(st);
    grip_ctx_free(ctx);
}

START_TEST(keypoints_and_normals)
{
    static sheet s;
    sheet_make(&s);
    grip_ctx *ctx = grip_test_ctx();
    static float knn10[N_POINTS * 4], knn6[N_POINTS * 4], radius[N_POINTS * 4];
    ck_assert_int_eq(grip_normals_compute(ctx, s.xyz, N_POINTS, NULL, 10, 0.0f, s.cloud.viewpoint, knn10), GRIP_OK);
    ck_assert_int_eq(grip_normals_compute(ctx, s.xyz, N_POINTS, NULL, 6, 0.0f, s.cloud.viewpoint, knn6), GRIP_OK);
    ck_assert_int_eq(grip_normals_compute(ctx, s.xyz, N_POINTS, NULL, 0, 0.15f, s.cloud.viewpoint, radius), GRIP_OK);
    for (size_t i = 0; i < N_POINTS; ++i) /* flipped toward (0, 0, 5) */
        ck_assert(isnan(knn10[4 * i]) || knn10[4 * i + 2] > 0.0f);
    uint32_t *scene = NULL, *model = NULL, all[N_POINTS];
    size_t n_scene = 0, n_model = 0, n_all = 0;
    ck_assert_int_eq(grip_uniform_sampling(ctx, s.xyz, N_POINTS, 0.5f, &scene, &n_scene), GRIP_OK);
    ck_assert_int_eq(grip_uniform_sampling(ctx, s.xyz, N_POINTS, 0.2f, &model, &n_model), GRIP_OK);
    for (size_t i = 0; i < N_POINTS; ++i)
        if (!isnan(s.xyz[3 * i + 1]))
            all[n_all++] = (uint32_t)i;
    ck_assert_uint_lt(n_scene, n_model);
    grip_kv kv[] = {{"scene_leaf", "0.5"}, {"model_leaf", "0.2"}, {"normals_k", "10"}};
    check_front(kv, 3, &s.cloud, GRIP_ROLE_SCENE, NULL, scene, n_scene, knn10);
    check_front(kv, 3, &s.cloud, GRIP_ROLE_MODEL, NULL, model, n_model, knn10);
    grip_kv kv_leaf0[] = {{"scene_leaf", "0.5"}, {"model_leaf", "0.2"}, {"normals_k", "10"}, {"support_leaf", "0"}};
    check_front(kv_leaf0, 4, &s.cloud, GRIP_ROLE_SCENE, NULL, scene, n_scene, knn10); /* 0: as before, bit for bit */
    grip_kv kv_all[] = {{"keypoints", "all"}, {"normals_k", "6"}};
    check_front(kv_all, 2, &s.cloud, GRIP_ROLE_SCENE, NULL, all, n_all, knn6);
    grip_kv kv_radius[] = {{"scene_leaf", "0.5"}, {"normals_k", "0"}, {"normals_radius", "0.15"}};
    check_front(kv_radius, 3, &s.cloud, GRIP_ROLE_SCENE, NULL, scene, n_scene, radius);
    /* host-given keypoints win over the stage's selection, in the host's order */
    uint32_t given_idx[3] = {all[7], all[2], all[100]};
    grip_array given = grip_array_host_view(GRIP_U32, 3, 1, given_idx);
    check_front(kv, 3, &s.cloud, GRIP_ROLE_SCENE, &given, given_idx, 3, knn10);
    /* the host's normals win: 4 columns as given; 3 columns with a NaN curvature */
    static float given3[N_POINTS * 3], expect3[N_POINTS * 4];
    for (size_t i = 0; i < N_POINTS; ++i) {
        memcpy(given3 + 3 * i, knn6 + 4 * i, 3 * sizeof(float));
        memcpy(expect3 + 4 * i, knn6 + 4 * i, 3 * sizeof(float));
        expect3[4 * i + 3] = NAN;
    }
    s.cloud.normals = grip_array_host_view(GRIP_F32, N_POINTS, 4, knn6);
    check_front(kv, 3, &s.cloud, GRIP_ROLE_SCENE, NULL, scene, n_scene, knn6);
    s.cloud.normals = grip_array_host_view(GRIP_F32, N_POINTS, 3, given3);
    check_front(kv, 3, &s.cloud, GRIP_ROLE_SCENE, NULL, scene, n_scene, expect3);
    /* ... even with normals_k 0 and no radius, which would not compute any */
    grip_kv kv_none[] = {{"scene_leaf", "0.5"}, {"normals_k", "0"}};
    check_front(kv_none, 2, &s.cloud, GRIP_ROLE_SCENE, NULL, scene, n_scene, expect3);
    free(scene);
    free(model);
    grip_ctx_free(ctx);
}
END_TEST

/* Descriptors: the keypoint's x coordinate in every column; frames left absent. */
static grip_status x_body(grip_stage *st, grip_descriptor_front *front)
{
    grip_features *f = front->features;
    grip_status s = grip_result_array_alloc(st->ctx, &f->descriptors, GRIP_MEM_HOST, GRIP_F32, front->n_keypoints, 2);
    for (size_t i = 0; !s && i < front->n_keypoints; ++i) {
        float *row = (float *)f->descriptors.data + 2 * i;
        row[0] = row[1] = front->keypoint_xyz[3 * i];
    }
    return s;
}

static grip_status failing_body(grip_stage *st, grip_descriptor_front *front)
{
    grip_status s = grip_array_alloc_host(st->ctx, &front->features->descriptors, GRIP_F32, front->n_keypoints, 2);
    return s ? s : grip_fail(st->ctx, GRIP_EINTERNAL, "descriptor.test: the body gave up");
}

START_TEST(describe_hands_over_the_features)
{
    static sheet s;
    sheet_make(&s);
    grip_ctx *ctx = grip_test_ctx();
    grip_kv kv[] = {{"scene_leaf", "0.5"}};
    grip_stage *st = stage_new(ctx, kv, 1);
    grip_features *f = NULL;
    ck_assert_int_eq(grip_descriptor_front_describe(st, &s.cloud, GRIP_ROLE_SCENE, NULL, GRIP_MEM_HOST, 2, x_body, &f),
                     GRIP_OK);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(f->descriptor_dim, 2);
    ck_assert_uint_gt(f->keypoints.rows, 0);
    ck_assert_uint_eq(f->descriptors.rows, f->keypoints.rows);
    ck_assert_uint_eq(f->frames.rows, 0);
    ck_assert_uint_eq(f->normals.rows, N_POINTS);
    const float *xyz = f->keypoint_xyz.data, *d = f->descriptors.data;
    for (size_t i = 0; i < f->keypoints.rows; ++i)
        ck_assert(d[2 * i] == xyz[3 * i] && d[2 * i + 1] == xyz[3 * i]);
    f->release(f);
    /* a failing body: its error, no features, nothing leaked */
    f = (grip_features *)&s; /* overwritten with NULL */
    ck_assert_int_eq(grip_descriptor_front_describe(st, &s.cloud, GRIP_ROLE_SCENE, NULL, GRIP_MEM_HOST, 2,
                                                    failing_body, &f), GRIP_EINTERNAL);
    ck_assert_ptr_null(f);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "gave up"));
    /* a CPU-only build has no device memory to put them in */
    if (grip_ctx_device_count(ctx) == 0) {
        ck_assert_int_eq(grip_descriptor_front_describe(st, &s.cloud, GRIP_ROLE_SCENE, NULL, GRIP_MEM_CUDA, 2, x_body,
                                                        &f), GRIP_ENODEV);
        ck_assert_ptr_null(f);
    }
    grip_stage_destroy(st);
    grip_ctx_free(ctx);
}
END_TEST

/* open fails with `want` and a text holding `needle`; close after it is safe. */
static void expect_open_failure(grip_stage *st, const grip_cloud *cloud, uint32_t role, const grip_array *given,
                                grip_status want, const char *needle)
{
    grip_descriptor_front f;
    ck_assert_int_eq(grip_descriptor_front_open(st, cloud, role, given, 8, &f), want);
    ck_assert_msg(strstr(st->ctx->last_error, needle) != NULL, "'%s' lacks '%s'", st->ctx->last_error, needle);
    grip_descriptor_front_close(&f);
    ck_assert_ptr_null(f.features);
}

START_TEST(bad_input_fails_cleanly)
{
    static sheet s;
    sheet_make(&s);
    grip_ctx *ctx = grip_test_ctx();
    grip_kv no_normals[] = {{"normals_k", "0"}, {"normals_radius", "0"}};
    grip_stage *st = stage_new(ctx, no_normals, 2);
    expect_open_failure(st, &s.cloud, GRIP_ROLE_SCENE, NULL, GRIP_ECONFIG, "normals_radius");
    expect_open_failure(st, &s.cloud, 7, NULL, GRIP_EINVAL, "role 7");
    expect_open_failure(st, NULL, GRIP_ROLE_SCENE, NULL, GRIP_EINVAL, "cloud is NULL");
    grip_stage_destroy(st);
    st = stage_new(ctx, NULL, 0);
    uint32_t out_of_range[2] = {1, N_POINTS}, nan_point[1] = {5};
    grip_array given = grip_array_host_view(GRIP_U32, 2, 1, out_of_range);
    expect_open_failure(st, &s.cloud, GRIP_ROLE_SCENE, &given, GRIP_EINVAL, "the cloud has 3000 points");
    given = grip_array_host_view(GRIP_U32, 1, 1, nan_point);
    expect_open_failure(st, &s.cloud, GRIP_ROLE_SCENE, &given, GRIP_EINVAL, "NaN");
    given = grip_array_host_view(GRIP_F32, 1, 1, nan_point);
    expect_open_failure(st, &s.cloud, GRIP_ROLE_SCENE, &given, GRIP_EINVAL, "dtype");
    s.cloud.normals = grip_array_host_view(GRIP_F32, 10, 3, s.xyz);
    expect_open_failure(st, &s.cloud, GRIP_ROLE_SCENE, NULL, GRIP_EINVAL, "normals must be");
    grip_features *f = NULL;
    ck_assert_int_eq(grip_descriptor_front_describe(NULL, &s.cloud, GRIP_ROLE_SCENE, NULL, GRIP_MEM_HOST, 2, x_body,
                                                    &f), GRIP_EINVAL);
    ck_assert_int_eq(grip_descriptor_front_describe(st, &s.cloud, GRIP_ROLE_SCENE, NULL, 9, 2, x_body, &f),
                     GRIP_EINVAL);
    grip_stage_destroy(st);
    grip_ctx_free(ctx);
}
END_TEST

/* The front's normals and where it says they came from, on the host side (keypoints: every finite point). */
static void check_normals(const grip_cloud *cloud, const char *choice, const float *expect, uint32_t source)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_kv kv[] = {{"keypoints", "all"}, {"normals_k", "10"}, {"normals", choice}};
    grip_stage *st = stage_new(ctx, kv, 3);
    grip_descriptor_front f;
    ck_assert_msg(grip_descriptor_front_open(st, cloud, GRIP_ROLE_SCENE, NULL, 8, &f) == GRIP_OK, "%s",
                  ctx->last_error);
    ck_assert_msg(same_floats(f.normals, expect, N_POINTS * 4), "normals = %s", choice);
    ck_assert_uint_eq(f.features->normals_source, source);
    grip_descriptor_front_close(&f);
    grip_stage_destroy(st);
    grip_ctx_free(ctx);
}

/* normals = auto | compute | file on a cloud whose own normals are 2 pi long (as some scanning tools export them):
 * auto and file rescale them to unit length, compute ignores them; over a tenth unusable, auto computes them and
 * file keeps the usable ones; file on a cloud without normals, or with none usable, is a config error. */
START_TEST(normals_choice)
{
    static sheet s;
    sheet_make(&s);
    grip_ctx *ctx = grip_test_ctx();
    static float knn10[N_POINTS * 4], long3[N_POINTS * 3], unit[N_POINTS * 4];
    ck_assert_int_eq(grip_normals_compute(ctx, s.xyz, N_POINTS, NULL, 10, 0.0f, s.cloud.viewpoint, knn10), GRIP_OK);
    const float two_pi = 6.2831853f;
    for (size_t i = 0; i < N_POINTS; ++i) {
        for (int c = 0; c < 3; ++c)
            long3[3 * i + c] = two_pi * knn10[4 * i + c];
        unit[4 * i + 3] = NAN;
        double len = 0;
        for (int c = 0; c < 3; ++c)
            len += (double)long3[3 * i + c] * long3[3 * i + c];
        for (int c = 0; c < 3; ++c) /* the same arithmetic as normals_given.c, written out again */
            unit[4 * i + c] = (float)(long3[3 * i + c] / sqrt(len));
        if (!isnan(knn10[4 * i])) /* within float rounding of the normal it was made from */
            for (int c = 0; c < 3; ++c)
                ck_assert_float_eq_tol(unit[4 * i + c], knn10[4 * i + c], 1e-6f);
    }
    /* no normals on the cloud: auto and compute compute them */
    check_normals(&s.cloud, "auto", knn10, GRIP_NORMALS_COMPUTED);
    check_normals(&s.cloud, "compute", knn10, GRIP_NORMALS_COMPUTED);
    grip_kv file[] = {{"normals", "file"}};
    grip_stage *st = stage_new(ctx, file, 1);
    s.cloud.name = "scan.ply";
    expect_open_failure(st, &s.cloud, GRIP_ROLE_SCENE, NULL, GRIP_ECONFIG,
                        "descriptor.normals = file: cloud scan.ply carries no normals");
    /* 2 pi long */
    s.cloud.normals = grip_array_host_view(GRIP_F32, N_POINTS, 3, long3);
    check_normals(&s.cloud, "auto", unit, GRIP_NORMALS_CLOUD_RESCALED);
    check_normals(&s.cloud, "file", unit, GRIP_NORMALS_CLOUD_RESCALED);
    check_normals(&s.cloud, "compute", knn10, GRIP_NORMALS_COMPUTED);
    /* already unit long (within 1e-4): taken bit for bit */
    s.cloud.normals = grip_array_host_view(GRIP_F32, N_POINTS, 4, knn10);
    check_normals(&s.cloud, "auto", knn10, GRIP_NORMALS_CLOUD);
    /* one point in twelve without a usable normal (0 or inf; 9 % of the finite points): auto still takes them,
       undefined there; one in five (21 %): auto computes them all, file keeps the usable ones */
    static const size_t everies[2] = {12, 5};
    for (int e = 0; e < 2; ++e) {
        const size_t every = everies[e];
        static float spoiled[N_POINTS * 3], expect[N_POINTS * 4];
        memcpy(spoiled, long3, sizeof spoiled);
        memcpy(expect, unit, sizeof expect);
        for (size_t i = 0; i < N_POINTS; i += every) {
            spoiled[3 * i] = spoiled[3 * i + 1] = spoiled[3 * i + 2] = 0.0f;
            if (i % 3 == 0)
                spoiled[3 * i + 1] = INFINITY;
            expect[4 * i] = expect[4 * i + 1] = expect[4 * i + 2] = NAN;
        }
        s.cloud.normals = grip_array_host_view(GRIP_F32, N_POINTS, 3, spoiled);
        check_normals(&s.cloud, "file", expect, GRIP_NORMALS_CLOUD_RESCALED);
        if (every == 12)
            check_normals(&s.cloud, "auto", expect, GRIP_NORMALS_CLOUD_RESCALED);
        else
            check_normals(&s.cloud, "auto", knn10, GRIP_NORMALS_RECOMPUTED);
    }
    /* none usable: file refuses */
    static float zeros[N_POINTS * 3];
    s.cloud.normals = grip_array_host_view(GRIP_F32, N_POINTS, 3, zeros);
    expect_open_failure(st, &s.cloud, GRIP_ROLE_SCENE, NULL, GRIP_ECONFIG, "none of the");
    check_normals(&s.cloud, "auto", knn10, GRIP_NORMALS_RECOMPUTED);
    grip_kv bad[] = {{"normals", "mesh"}};
    grip_stage *none = NULL;
    ck_assert_int_eq(grip_stage_create(&front_impl, ctx, bad, 1, &none), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "normals"));
    grip_stage_destroy(st);
    grip_ctx_free(ctx);
}
END_TEST

/* A complete closed surface: N_POINTS points spread evenly over a sphere of radius 0.25 around (0.4, -0.3, 1.2)
 * (a Fibonacci lattice), a NaN row every 17; the viewpoint is left at the origin, outside the sphere, from where
 * only a cap of it is visible. */
typedef struct ball {
    float xyz[3 * N_POINTS];
    grip_cloud cloud;
} ball;

static const float ball_centre[3] = {0.4f, -0.3f, 1.2f};

static void ball_make(ball *b)
{
    const double golden = 2.39996322972865332; /* pi (3 - sqrt 5) */
    for (size_t i = 0; i < N_POINTS; ++i) {
        double z = 1.0 - (2.0 * (double)i + 1.0) / N_POINTS, r = sqrt(1.0 - z * z), phi = golden * (double)i;
        b->xyz[3 * i] = ball_centre[0] + (float)(0.25 * r * cos(phi));
        b->xyz[3 * i + 1] = ball_centre[1] + (float)(0.25 * r * sin(phi));
        b->xyz[3 * i + 2] = ball_centre[2] + (float)(0.25 * z);
        if (i % 17 == 5)
            b->xyz[3 * i] = NAN;
    }
    memset(&b->cloud, 0, sizeof b->cloud);
    b->cloud.struct_size = sizeof b->cloud;
    b->cloud.width = N_POINTS;
    b->cloud.height = 1;
    b->cloud.xyz = grip_array_host_view(GRIP_F32, N_POINTS, 3, b->xyz);
}

/* The host front's normals (n x 4 into out) for kv on cloud in role; returns the normals_source it says. */
static uint32_t front_normals(const grip_kv *kv, uint32_t n_kv, const grip_cloud *cloud, uint32_t role, float *out)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_stage *st = stage_new(ctx, kv, n_kv);
    grip_descriptor_front f;
    ck_assert_msg(grip_descriptor_front_open(st, cloud, role, NULL, 8, &f) == GRIP_OK, "%s", ctx->last_error);
    memcpy(out, f.normals, N_POINTS * 4 * sizeof *out);
    uint32_t source = f.features->normals_source;
    grip_descriptor_front_close(&f);
    grip_stage_destroy(st);
    grip_ctx_free(ctx);
    return source;
}

/* Of the defined normals, how many point away from the sphere's centre ((p - c) . n > 0); *defined: their count. */
static size_t count_outward(const float *xyz, const float *normals, size_t *defined)
{
    size_t out = 0;
    *defined = 0;
    for (size_t i = 0; i < N_POINTS; ++i) {
        const float *p = xyz + 3 * i, *nrm = normals + 4 * i;
        if (isnan(nrm[0]))
            continue;
        ++*defined;
        double dot = 0;
        for (int a = 0; a < 3; ++a)
            dot += ((double)p[a] - ball_centre[a]) * nrm[a];
        out += dot > 0;
    }
    return out;
}

/* model_normals = viewpoint | outward on a complete closed surface seen from outside it: flipped toward the
 * viewpoint, the far side of the sphere points inward; outward, every normal points away from the centre, bit for
 * bit the viewpoint computation from the centroid turned around (so the GPU twin agrees as for any viewpoint).
 * A scene ignores the setting; a cloud's own normals are used as given; an unknown value is a config error. */
START_TEST(model_normals_outward)
{
    static ball b;
    ball_make(&b);
    static float viewpoint[N_POINTS * 4], outward[N_POINTS * 4], expect[N_POINTS * 4];
    grip_kv kv_viewpoint[] = {{"normals_k", "10"}, {"model_normals", "viewpoint"}};
    grip_kv kv_outward[] = {{"normals_k", "10"}, {"model_normals", "outward"}};
    ck_assert_uint_eq(front_normals(kv_viewpoint, 2, &b.cloud, GRIP_ROLE_MODEL, viewpoint), GRIP_NORMALS_COMPUTED);
    ck_assert_uint_eq(front_normals(kv_outward, 2, &b.cloud, GRIP_ROLE_MODEL, outward), GRIP_NORMALS_COMPUTED);
    size_t defined = 0, away_viewpoint = count_outward(b.xyz, viewpoint, &defined);
    size_t defined_outward = 0, away_outward = count_outward(b.xyz, outward, &defined_outward);
    printf("sphere, %zu defined normals: %zu point away from the centre flipped toward the origin, %zu outward\n",
           defined, away_viewpoint, away_outward);
    ck_assert_uint_eq(defined_outward, defined);
    ck_assert_uint_gt(defined, N_POINTS * 9 / 10);
    /* the origin sees a cap of (1 - 0.25 / |c|) / 2 = 41 % of the sphere: the rest is turned inward */
    ck_assert_uint_lt(away_viewpoint, defined / 2);
    ck_assert_uint_eq(away_outward, defined);
    /* the centroid: finite rows summed in double in row order, written out again */
    double sum[3] = {0, 0, 0};
    size_t finite = 0;
    for (size_t i = 0; i < N_POINTS; ++i)
        if (!isnan(b.xyz[3 * i])) {
            for (int a = 0; a < 3; ++a)
                sum[a] += b.xyz[3 * i + a];
            ++finite;
        }
    float centroid[3];
    grip_normals_centroid(b.xyz, N_POINTS, centroid);
    for (int a = 0; a < 3; ++a) {
        ck_assert(centroid[a] == (float)(sum[a] / (double)finite));
        ck_assert_float_eq_tol(centroid[a], ball_centre[a], 1e-3f);
    }
    grip_ctx *ctx = grip_test_ctx();
    ck_assert_int_eq(grip_normals_compute(ctx, b.xyz, N_POINTS, NULL, 10, 0.0f, centroid, expect), GRIP_OK);
    grip_normals_turn_around(expect, N_POINTS);
    ck_assert(same_floats(outward, expect, N_POINTS * 4));
    for (size_t i = 0; i < N_POINTS; ++i) /* the same normal but for its sign, the same curvature */
        ck_assert(isnan(expect[4 * i]) || (expect[4 * i + 3] == viewpoint[4 * i + 3] &&
                                           fabsf(expect[4 * i + 2]) == fabsf(viewpoint[4 * i + 2])));
    /* from a radius, too */
    grip_kv kv_radius[] = {{"normals_k", "0"}, {"normals_radius", "0.06"}, {"model_normals", "outward"}};
    front_normals(kv_radius, 3, &b.cloud, GRIP_ROLE_MODEL, outward);
    ck_assert_uint_eq(count_outward(b.xyz, outward, &defined), defined);
    ck_assert_uint_gt(defined, N_POINTS * 9 / 10);
    /* a scene keeps the viewpoint */
    front_normals(kv_outward, 2, &b.cloud, GRIP_ROLE_SCENE, outward);
    ck_assert(same_floats(outward, viewpoint, N_POINTS * 4));
    /* the cloud's own normals are used as given, inward or not */
    b.cloud.normals = grip_array_host_view(GRIP_F32, N_POINTS, 4, viewpoint);
    ck_assert_uint_eq(front_normals(kv_outward, 2, &b.cloud, GRIP_ROLE_MODEL, outward), GRIP_NORMALS_CLOUD);
    ck_assert(same_floats(outward, viewpoint, N_POINTS * 4));
    grip_kv bad[] = {{"model_normals", "inward"}};
    grip_stage *st = NULL;
    ck_assert_int_eq(grip_stage_create(&front_impl, ctx, bad, 1, &st), GRIP_ECONFIG);
    ck_assert_ptr_null(st);
    ck_assert_msg(strstr(ctx->last_error, "model_normals") != NULL, "%s", ctx->last_error);
    grip_ctx_free(ctx);
}
END_TEST

/* model_normals = propagate on a torus, where pointing away from the centroid turns its inner ring inward: the
 * front's normals are the outward ones propagated over propagate_k neighbours (bit for bit), at least 99 % right; a
 * scene keeps the viewpoint; propagate_k out of range is a config error naming it. */
START_TEST(model_normals_propagate)
{
    uint64_t seed = 2505;
    const float centre[3] = {0.2f, 0.1f, 1.0f};
    grip_closed_shape torus;
    ck_assert(grip_closed_torus(&seed, N_POINTS, centre, 0.5f, 0.2f, &torus));
    grip_cloud cloud;
    memset(&cloud, 0, sizeof cloud);
    cloud.struct_size = sizeof cloud;
    cloud.width = N_POINTS;
    cloud.height = 1;
    cloud.xyz = grip_array_host_view(GRIP_F32, N_POINTS, 3, torus.xyz);
    static float outward[N_POINTS * 4], propagated[N_POINTS * 4], scene[N_POINTS * 4], viewpoint[N_POINTS * 4];
    grip_kv kv_outward[] = {{"normals_k", "10"}, {"model_normals", "outward"}};
    grip_kv kv_propagate[] = {{"normals_k", "10"}, {"model_normals", "propagate"}, {"propagate_k", "7"}};
    grip_kv kv_viewpoint[] = {{"normals_k", "10"}};
    front_normals(kv_outward, 2, &cloud, GRIP_ROLE_MODEL, outward);
    ck_assert_uint_eq(front_normals(kv_propagate, 3, &cloud, GRIP_ROLE_MODEL, propagated), GRIP_NORMALS_COMPUTED);
    size_t defined = 0, defined_p = 0;
    const size_t wrong_outward = grip_closed_against(&torus, outward, &defined);
    const size_t wrong_propagated = grip_closed_against(&torus, propagated, &defined_p);
    printf("torus, %zu defined normals: %zu inward pointed away from the centroid, %zu after propagation\n", defined,
           wrong_outward, wrong_propagated);
    ck_assert_uint_eq(defined_p, defined);
    ck_assert_uint_gt(wrong_outward * 5, defined);
    ck_assert_uint_le(wrong_propagated * 100, defined);
    grip_ctx *ctx = grip_test_ctx();
    float centroid[3];
    grip_normals_centroid(torus.xyz, N_POINTS, centroid);
    ck_assert_int_eq(grip_normals_propagate(ctx, torus.xyz, N_POINTS, NULL, 7, centroid, outward), GRIP_OK);
    ck_assert(same_floats(propagated, outward, N_POINTS * 4));
    front_normals(kv_propagate, 3, &cloud, GRIP_ROLE_SCENE, scene);
    front_normals(kv_viewpoint, 1, &cloud, GRIP_ROLE_MODEL, viewpoint);
    ck_assert(same_floats(scene, viewpoint, N_POINTS * 4));
    const char *bad_k[] = {"0", "64"};
    for (int b = 0; b < 2; ++b) {
        grip_kv bad[] = {{"model_normals", "propagate"}, {"propagate_k", bad_k[b]}};
        grip_stage *st = NULL;
        ck_assert_int_eq(grip_stage_create(&front_impl, ctx, bad, 2, &st), GRIP_ECONFIG);
        ck_assert_ptr_null(st);
        ck_assert_msg(strstr(ctx->last_error, "propagate_k") != NULL, "%s", ctx->last_error);
    }
    grip_kv bad[] = {{"model_normals", "propagated"}};
    grip_stage *st = NULL;
    ck_assert_int_eq(grip_stage_create(&front_impl, ctx, bad, 1, &st), GRIP_ECONFIG);
    ck_assert_msg(strstr(ctx->last_error, "model_normals") != NULL, "%s", ctx->last_error);
    grip_ctx_free(ctx);
    grip_closed_shape_free(&torus);
}
END_TEST

START_TEST(result_arrays_on_the_host)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_array a;
    ck_assert_int_eq(grip_result_array_alloc(ctx, &a, GRIP_MEM_HOST, GRIP_F32, 5, 3), GRIP_OK);
    ck_assert_int_eq(a.memory, GRIP_MEM_HOST);
    ck_assert(a.rows == 5 && a.cols == 3 && ((float *)a.data)[14] == 0.0f);
    void *before = a.data;
    ck_assert_int_eq(grip_result_array_place(ctx, &a, GRIP_MEM_HOST), GRIP_OK);
    ck_assert_ptr_eq(a.data, before);
    grip_result_array_free(&a);
    ck_assert_ptr_null(a.data);
    ck_assert_int_eq(grip_result_array_alloc(ctx, &a, GRIP_MEM_HOST, GRIP_DTYPE_NONE, 1, 1), GRIP_EINVAL);
    grip_result_array_free(&a);
    if (grip_ctx_device_count(ctx) == 0) { /* no device: a CPU-only build cannot, a CUDA build finds none */
#ifdef GRIP_HAVE_CUDA
        const grip_status no_device = GRIP_ENODEV;
#else
        const grip_status no_device = GRIP_EUNSUPPORTED;
#endif
        ck_assert_int_eq(grip_result_array_alloc(ctx, &a, GRIP_MEM_CUDA, GRIP_F32, 5, 3), no_device);
        ck_assert_ptr_null(a.data);
        grip_result_array_free(&a);
    }
    grip_ctx_free(ctx);
}
END_TEST

/* The host side under support_leaf = leaf: the support is the voxel grid's centroids (as built here), with
 * expect_support_normals; the keypoints those of uniform sampling on the cloud itself; features->normals (one row
 * per cloud point) expect_cloud_normals. */
static void check_support(const grip_kv *kv, uint32_t n_kv, const grip_cloud *cloud, const float *xyz, float leaf,
                          const float *expect_support_normals, const float *expect_cloud_normals)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_voxel_grid g;
    ck_assert_int_eq(grip_voxel_grid_build(ctx, "test", xyz, N_POINTS, leaf, &g), GRIP_OK);
    float *centroids = malloc(g.voxels * 3 * sizeof *centroids);
    grip_voxel_grid_centroids(&g, xyz, centroids);
    uint32_t *keypoints = NULL;
    size_t k = 0;
    ck_assert_int_eq(grip_uniform_sampling(ctx, xyz, N_POINTS, 0.5f, &keypoints, &k), GRIP_OK);
    grip_stage *st = stage_new(ctx, kv, n_kv);
    grip_descriptor_front f;
    ck_assert_msg(grip_descriptor_front_open(st, cloud, GRIP_ROLE_SCENE, NULL, 8, &f) == GRIP_OK, "%s",
                  ctx->last_error);
    ck_assert_uint_eq(f.n_support, g.voxels);
    ck_assert_uint_lt(f.n_support, N_POINTS / 4);
    ck_assert_int_eq(memcmp(f.support_xyz, centroids, g.voxels * 3 * sizeof *centroids), 0);
    ck_assert(same_floats(f.support_normals, expect_support_normals, g.voxels * 4));
    ck_assert(same_floats(f.normals, expect_cloud_normals, N_POINTS * 4));
    ck_assert_uint_eq(f.n_keypoints, k);
    ck_assert_int_eq(memcmp(f.keypoints, keypoints, k * sizeof *keypoints), 0);
    for (size_t i = 0; i < k; ++i) /* keypoints are cloud points, not support points */
        ck_assert_int_eq(memcmp(f.keypoint_xyz + 3 * i, xyz + 3 * (size_t)keypoints[i], 3 * sizeof(float)), 0);
    grip_descriptor_front_close(&f);
    grip_stage_destroy(st);
    free(keypoints);
    free(centroids);
    grip_voxel_grid_free(&g);
    grip_ctx_free(ctx);
}

START_TEST(support_leaf_thins_the_support)
{
    static sheet s;
    sheet_make(&s);
    grip_ctx *ctx = grip_test_ctx();
    const float leaf = 0.08f;
    grip_voxel_grid g;
    ck_assert_int_eq(grip_voxel_grid_build(ctx, "test", s.xyz, N_POINTS, leaf, &g), GRIP_OK);
    float *centroids = malloc(g.voxels * 3 * sizeof *centroids), *support = malloc(g.voxels * 4 * sizeof *support);
    static float cloud_normals[N_POINTS * 4], given[N_POINTS * 4];
    grip_voxel_grid_centroids(&g, s.xyz, centroids);
    /* computed: over the centroids, toward the viewpoint; every cloud point takes its voxel's */
    ck_assert_int_eq(grip_normals_compute(ctx, centroids, g.voxels, NULL, 10, 0.0f, s.cloud.viewpoint, support),
                     GRIP_OK);
    grip_voxel_grid_spread(&g, support, cloud_normals);
    grip_kv kv[] = {{"scene_leaf", "0.5"}, {"normals_k", "10"}, {"support_leaf", "0.08"}};
    check_support(kv, 3, &s.cloud, s.xyz, leaf, support, cloud_normals);
    /* the cloud's own (unit length, tilted per point): kept per point, averaged per voxel for the support */
    for (size_t i = 0; i < N_POINTS; ++i) {
        float tilt = 0.2f * sinf((float)i);
        float len = sqrtf(1.0f + tilt * tilt);
        given[4 * i] = tilt / len;
        given[4 * i + 1] = 0.0f;
        given[4 * i + 2] = 1.0f / len;
        given[4 * i + 3] = 0.01f * (float)(i % 5);
    }
    s.cloud.normals = grip_array_host_view(GRIP_F32, N_POINTS, 4, given);
    grip_kv kv_file[] = {{"scene_leaf", "0.5"}, {"normals", "file"}, {"support_leaf", "0.08"}};
    grip_stage *st = stage_new(ctx, kv_file, 2); /* no support_leaf: the cloud's own as the front makes them */
    grip_descriptor_front f;
    ck_assert_int_eq(grip_descriptor_front_open(st, &s.cloud, GRIP_ROLE_SCENE, NULL, 8, &f), GRIP_OK);
    memcpy(cloud_normals, f.normals, sizeof cloud_normals);
    grip_descriptor_front_close(&f);
    grip_stage_destroy(st);
    grip_voxel_grid_mean_normals(&g, cloud_normals, support);
    check_support(kv_file, 3, &s.cloud, s.xyz, leaf, support, cloud_normals);
    free(centroids);
    free(support);
    grip_voxel_grid_free(&g);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(support_leaf_bad_and_extreme_values)
{
    static sheet s;
    sheet_make(&s);
    grip_ctx *ctx = grip_test_ctx();
    const char *refused[] = {"-0.1", "nan", "inf", "101"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        grip_kv kv[] = {{"support_leaf", refused[i]}};
        grip_stage *st = NULL;
        ck_assert_int_eq(grip_stage_create(&front_impl, ctx, kv, 1, &st), GRIP_ECONFIG);
        ck_assert_msg(strstr(ctx->last_error, "support_leaf") != NULL, "%s", ctx->last_error);
    }
    /* so small that a point's voxel coordinate leaves the int range: the key and the point are named */
    grip_kv tiny[] = {{"support_leaf", "1e-12"}};
    grip_stage *st = stage_new(ctx, tiny, 1);
    expect_open_failure(st, &s.cloud, GRIP_ROLE_SCENE, NULL, GRIP_EINVAL, "descriptor.support_leaf: point ");
    grip_stage_destroy(st);
    /* larger than the cloud: a handful of support points (the voxels meet at 0), and the front still works */
    grip_kv huge[] = {{"support_leaf", "50"}, {"normals_k", "3"}};
    st = stage_new(ctx, huge, 2);
    grip_descriptor_front f;
    ck_assert_msg(grip_descriptor_front_open(st, &s.cloud, GRIP_ROLE_SCENE, NULL, 8, &f) == GRIP_OK, "%s",
                  ctx->last_error);
    ck_assert_uint_ge(f.n_support, 1);
    ck_assert_uint_le(f.n_support, 8);
    ck_assert_uint_gt(f.n_keypoints, 0);
    grip_descriptor_front_close(&f);
    grip_stage_destroy(st);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("descriptor_front");
    TCase *tc = tcase_create("host");
    tcase_add_test(tc, shared_parameters_splice_into_a_table);
    tcase_add_test(tc, keypoints_and_normals);
    tcase_add_test(tc, describe_hands_over_the_features);
    tcase_add_test(tc, bad_input_fails_cleanly);
    tcase_add_test(tc, normals_choice);
    tcase_add_test(tc, model_normals_outward);
    tcase_add_test(tc, model_normals_propagate);
    tcase_add_test(tc, result_arrays_on_the_host);
    tcase_add_test(tc, support_leaf_thins_the_support);
    tcase_add_test(tc, support_leaf_bad_and_extreme_values);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
