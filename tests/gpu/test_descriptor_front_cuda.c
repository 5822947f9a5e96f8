/* test_descriptor_front_cuda.c (gpu) -- the descriptor front's device side and device-resident results:
 *  - the front of a stage on CUDA gives the host side's keypoints and keypoint_xyz bit for bit (uniform sampling
 *    for both roles, every point, host-given), the GPU normals of the cloud (grip_normals_cuda's, bit for bit; the
 *    host's own normals uploaded as given; the CPU twin's for a k the GPU does not keep), and each keypoint's row
 *    of them, all in device memory; the `normals` choice (auto | compute | file) decided as on the host side;
 *  - model_normals = outward: a model's normals are the GPU normals from the centroid turned around, bit for bit
 *    (and, for a k the GPU does not keep, the host front's, bit for bit); a scene keeps its viewpoint;
 *  - describe() with a body that writes its descriptors on the device hands every array back in device memory
 *    when asked (no round trip) and in host memory otherwise, with the same values;
 *  - features left on the device keep the cloud's surface (points, normals, grid) for the later stages, found only
 *    from the struct handed out and while its arrays are the described ones;
 *  - the bruteforce index on CUDA accepts its reference rows in device memory (copied on the device: the caller
 *    may free its own) and answers host or device queries into host or device outputs exactly as the CPU index,
 *    also for a k the GPU does not keep.
 * Uses the tutorial scene when the shared data is there, a random cloud otherwise. Skips (77) without a device. */
#include "test_support.h"
#include "front_stage.h"
#include "core/cuda_bridge.h"
#include "descriptor/normals.h"
#include "descriptor/normals_cuda.h"
#include "stages/descriptor_front.h"
#include "stages/registry.h"
#include "stages/results.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cloud the cases run on: the tutorial scene, or 30,000 random points with NaN rows. */
typedef struct test_cloud {
    host_cloud host;
    grip_cloud cloud;
} test_cloud;

static void cloud_load(test_cloud *t)
{
    memset(t, 0, sizeof *t);
    char path[4096];
    if (grip_test_data_path(path, sizeof path, "pcl/milk_cartoon_all_small_clorox.pcd")) {
        t->host = grip_test_read_cloud("pcl/milk_cartoon_all_small_clorox.pcd");
    } else {
        uint64_t s = 701;
        t->host.n = 30000;
        t->host.width = 30000;
        t->host.height = 1;
        t->host.xyz = grip_test_uniform_rows(&s, t->host.n, 3, -0.5f, 0.5f);
        for (size_t i = 7; i < t->host.n; i += 41)
            t->host.xyz[3 * i] = NAN;
        printf("tutorial scene absent: a random cloud instead\n");
    }
    t->cloud.struct_size = sizeof t->cloud;
    t->cloud.width = t->host.width;
    t->cloud.height = t->host.height;
    t->cloud.xyz = grip_array_host_view(GRIP_F32, t->host.n, 3, t->host.xyz);
    memcpy(t->cloud.viewpoint, t->host.viewpoint, sizeof t->cloud.viewpoint);
}

static grip_stage *stage_new(grip_ctx *ctx, const grip_stage_impl *impl, const char *device, const char *keypoints,
                             const char *normals_k)
{
    grip_kv kv[] = {{"device", device}, {"keypoints", keypoints}, {"normals_k", normals_k}};
    grip_stage *st = NULL;
    uint32_t n_kv = impl == &grip_test_front_stage ? 3 : 1;
    ck_assert_msg(grip_stage_create(impl, ctx, kv, n_kv, &st) == GRIP_OK, "%s", ctx->last_error);
    return st;
}

/* A device array's bytes, downloaded (malloc'd). */
static void *download(grip_ctx *ctx, const void *dev, size_t bytes)
{
    void *host = malloc(bytes + 1);
    ck_assert_ptr_nonnull(host);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, host, dev, bytes), GRIP_OK);
    return host;
}

/* count floats alike: bit for bit, or both NaN (a NaN curvature may be any NaN) */
static int same_floats(const float *a, const float *b, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        if (!(isnan(a[i]) && isnan(b[i])) && memcmp(a + i, b + i, sizeof *a) != 0)
            return 0;
    return 1;
}

/* The device front against the host front of the same parameters; returns the keypoint count. expect_normals
 * (n x 4, host) is what the device normals must be, bit for bit but for the bits of NaNs. */
static size_t compare_fronts(grip_ctx *ctx, const grip_cloud *cloud, uint32_t role, const grip_array *given,
                             const char *keypoints, const char *normals_k, const float *expect_normals)
{
    grip_stage *cpu = stage_new(ctx, &grip_test_front_stage, "cpu", keypoints, normals_k);
    grip_stage *gpu = stage_new(ctx, &grip_test_front_stage, "cuda", keypoints, normals_k);
    grip_descriptor_front h, d;
    ck_assert_msg(grip_descriptor_front_open(cpu, cloud, role, given, 8, &h) == GRIP_OK, "%s", ctx->last_error);
    ck_assert_msg(grip_descriptor_front_open(gpu, cloud, role, given, 8, &d) == GRIP_OK, "%s", ctx->last_error);
    ck_assert_int_eq(h.on_device, 0);
    ck_assert_int_eq(d.on_device, 1);
    ck_assert_ptr_null(d.tree);
    ck_assert_ptr_null(h.surface);
    size_t k = h.n_keypoints, n = h.in.n;
    ck_assert_uint_eq(d.n_keypoints, k);
    ck_assert_uint_gt(k, 0);
    const grip_features *f = d.features;
    ck_assert_int_eq(f->keypoints.memory, GRIP_MEM_CUDA);
    ck_assert_int_eq(f->keypoint_xyz.memory, GRIP_MEM_CUDA);
    ck_assert_int_eq(f->normals.memory, GRIP_MEM_CUDA);
    ck_assert(f->keypoints.rows == k && f->keypoint_xyz.rows == k && f->normals.rows == n && f->normals.cols == 4);
    ck_assert_ptr_eq(d.keypoints_dev, f->keypoints.data);
    ck_assert_ptr_eq(d.keypoint_xyz_dev, f->keypoint_xyz.data);
    uint32_t *kp = download(ctx, d.keypoints_dev, k * sizeof *kp);
    float *xyz = download(ctx, d.keypoint_xyz_dev, k * 3 * sizeof *xyz);
    float *nrm = download(ctx, f->normals.data, n * 4 * sizeof *nrm);
    float *kn = download(ctx, d.keypoint_normals_dev, k * 4 * sizeof *kn);
    grip_surface_cuda_view v = grip_surface_cuda_get_view(d.surface);
    ck_assert_int_eq(v.has_normals, 1);
    float *surface_nrm = download(ctx, v.normals, n * 4 * sizeof *surface_nrm);
    ck_assert_int_eq(memcmp(kp, h.keypoints, k * sizeof *kp), 0);
    ck_assert_int_eq(memcmp(xyz, h.keypoint_xyz, k * 3 * sizeof *xyz), 0);
    ck_assert(same_floats(nrm, expect_normals, n * 4));
    ck_assert_int_eq(memcmp(nrm, surface_nrm, n * 4 * sizeof *nrm), 0);
    for (size_t i = 0; i < k; ++i)
        ck_assert_int_eq(memcmp(kn + 4 * i, nrm + 4 * (size_t)kp[i], 4 * sizeof *kn), 0);
    free(kp);
    free(xyz);
    free(nrm);
    free(kn);
    free(surface_nrm);
    grip_descriptor_front_close(&h);
    grip_descriptor_front_close(&d);
    ck_assert_ptr_null(d.features); /* close zeroes the front */
    grip_stage_destroy(cpu);
    grip_stage_destroy(gpu);
    return k;
}

START_TEST(device_front_equals_host_front)
{
    grip_ctx *ctx = grip_test_ctx();
    test_cloud t;
    cloud_load(&t);
    size_t n = t.host.n;
    float *gpu_normals = malloc(n * 4 * sizeof(float)), *cpu_normals = malloc(n * 4 * sizeof(float));
    ck_assert(gpu_normals && cpu_normals);
    ck_assert_int_eq(grip_normals_cuda(ctx, t.host.xyz, n, 10, t.cloud.viewpoint, gpu_normals), GRIP_OK);
    size_t scene = compare_fronts(ctx, &t.cloud, GRIP_ROLE_SCENE, NULL, "uniform", "10", gpu_normals);
    size_t model = compare_fronts(ctx, &t.cloud, GRIP_ROLE_MODEL, NULL, "uniform", "10", gpu_normals);
    printf("uniform keypoints: %zu (scene leaf), %zu (model leaf)\n", scene, model);
    ck_assert_uint_gt(model, scene);
    ck_assert_uint_eq(compare_fronts(ctx, &t.cloud, GRIP_ROLE_SCENE, NULL, "all", "10", gpu_normals),
                      host_cloud_count_finite(&t.host));
    /* host-given keypoints, on the host and on the device */
    uint32_t given[5] = {0, 0, 0, 0, 0};
    for (size_t i = 0, found = 0; found < 5; i = (i + 7919) % n) { /* finite points spread over the cloud */
        const float *p = t.host.xyz + 3 * i;
        if (isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]))
            given[found++] = (uint32_t)i;
    }
    grip_array kp = grip_array_host_view(GRIP_U32, 5, 1, given);
    ck_assert_uint_eq(compare_fronts(ctx, &t.cloud, GRIP_ROLE_SCENE, &kp, "uniform", "10", gpu_normals), 5);
    void *dev = NULL;
    ck_assert_int_eq(grip_cuda_upload(ctx, given, sizeof given, &dev, &kp.device), GRIP_OK);
    kp.data = dev;
    kp.memory = GRIP_MEM_CUDA;
    ck_assert_uint_eq(compare_fronts(ctx, &t.cloud, GRIP_ROLE_SCENE, &kp, "uniform", "10", gpu_normals), 5);
    grip_cuda_free(dev);
    /* k beyond the GPU's: the CPU twin's normals, uploaded */
    ck_assert_int_eq(grip_normals_compute(ctx, t.host.xyz, n, NULL, 40, 0.0f, t.cloud.viewpoint, cpu_normals),
                     GRIP_OK);
    compare_fronts(ctx, &t.cloud, GRIP_ROLE_SCENE, NULL, "uniform", "40", cpu_normals);
    /* the host's normals win: 3 columns (curvature NaN), then 4 */
    float *given_normals = malloc(n * 3 * sizeof(float));
    ck_assert_ptr_nonnull(given_normals);
    for (size_t i = 0; i < n; ++i) {
        memcpy(given_normals + 3 * i, gpu_normals + 4 * i, 3 * sizeof(float));
        cpu_normals[4 * i + 3] = NAN;
        memcpy(cpu_normals + 4 * i, gpu_normals + 4 * i, 3 * sizeof(float));
    }
    t.cloud.normals = grip_array_host_view(GRIP_F32, n, 3, given_normals);
    compare_fronts(ctx, &t.cloud, GRIP_ROLE_SCENE, NULL, "uniform", "10", cpu_normals);
    t.cloud.normals = grip_array_host_view(GRIP_F32, n, 4, gpu_normals);
    compare_fronts(ctx, &t.cloud, GRIP_ROLE_SCENE, NULL, "uniform", "10", gpu_normals);
    free(given_normals);
    free(gpu_normals);
    free(cpu_normals);
    host_cloud_free(&t.host);
    grip_ctx_free(ctx);
}
END_TEST

/* A front stage on `device` with normals = choice and every finite point a keypoint. */
static grip_stage *choice_stage(grip_ctx *ctx, const char *device, const char *choice)
{
    grip_kv kv[] = {{"device", device}, {"keypoints", "all"}, {"normals_k", "10"}, {"normals", choice}};
    grip_stage *st = NULL;
    ck_assert_msg(grip_stage_create(&grip_test_front_stage, ctx, kv, 4, &st) == GRIP_OK, "%s", ctx->last_error);
    return st;
}

/* The normals of st's front over cloud in role (n x 4, a host copy, malloc'd; downloaded when the front is on the
 * device, which it must be exactly when on_device); *source: what the front says they are. Destroys st. */
static float *front_normals(grip_ctx *ctx, grip_stage *st, const grip_cloud *cloud, uint32_t role, int on_device,
                            uint32_t *source)
{
    grip_descriptor_front f;
    ck_assert_msg(grip_descriptor_front_open(st, cloud, role, NULL, 8, &f) == GRIP_OK, "%s", ctx->last_error);
    ck_assert_int_eq(f.on_device, on_device);
    size_t bytes = f.in.n * 4 * sizeof(float);
    float *out = f.on_device ? download(ctx, f.features->normals.data, bytes) : malloc(bytes);
    ck_assert_ptr_nonnull(out);
    if (!f.on_device)
        memcpy(out, f.normals, bytes);
    *source = f.features->normals_source;
    grip_descriptor_front_close(&f);
    grip_stage_destroy(st);
    return out;
}

/* The device front's normals (downloaded, malloc'd) under normals = choice; *source: what it says they are. */
static float *device_normals(grip_ctx *ctx, const grip_cloud *cloud, const char *choice, uint32_t *source)
{
    return front_normals(ctx, choice_stage(ctx, "cuda", choice), cloud, GRIP_ROLE_SCENE, 1, source);
}

/* normals = auto | compute | file on the device side, against the host side: the cloud's own normals, 2 pi long,
 * come out of both rescaled alike, bit for bit, and both say so; compute ignores them (grip_normals_cuda's); a
 * tenth and more unusable, auto computes them; file on a cloud without normals fails on the device as on the host. */
START_TEST(device_front_honours_the_normals_choice)
{
    grip_ctx *ctx = grip_test_ctx();
    test_cloud t;
    cloud_load(&t);
    size_t n = t.host.n;
    float *gpu_normals = malloc(n * 4 * sizeof(float)), *long3 = malloc(n * 3 * sizeof(float));
    ck_assert(gpu_normals && long3);
    ck_assert_int_eq(grip_normals_cuda(ctx, t.host.xyz, n, 10, t.cloud.viewpoint, gpu_normals), GRIP_OK);
    for (size_t i = 0; i < n; ++i)
        for (int c = 0; c < 3; ++c)
            long3[3 * i + c] = 6.2831853f * gpu_normals[4 * i + c];
    const char *choices[] = {"auto", "file", "compute"};
    for (int spoil = 0; spoil < 2; ++spoil) {
        if (spoil) /* one point in five without a normal */
            for (size_t i = 0; i < n; i += 5)
                long3[3 * i] = long3[3 * i + 1] = long3[3 * i + 2] = 0.0f;
        t.cloud.normals = grip_array_host_view(GRIP_F32, n, 3, long3);
        for (int c = 0; c < 3; ++c) {
            uint32_t source = 0;
            float *dev = device_normals(ctx, &t.cloud, choices[c], &source);
            grip_stage *cpu = choice_stage(ctx, "cpu", choices[c]);
            grip_descriptor_front h;
            ck_assert_msg(grip_descriptor_front_open(cpu, &t.cloud, GRIP_ROLE_SCENE, NULL, 8, &h) == GRIP_OK, "%s",
                          ctx->last_error);
            const int computed = c == 2 || (spoil && c == 0);
            if (computed) { /* the GPU's normals, which the CPU twin's match within their tolerance only */
                ck_assert(same_floats(dev, gpu_normals, n * 4));
                ck_assert_uint_eq(source, c == 2 ? GRIP_NORMALS_COMPUTED : GRIP_NORMALS_RECOMPUTED);
            } else {
                ck_assert_msg(same_floats(dev, h.normals, n * 4), "normals = %s", choices[c]);
                ck_assert_uint_eq(source, GRIP_NORMALS_CLOUD_RESCALED);
            }
            ck_assert_uint_eq(h.features->normals_source, source);
            grip_descriptor_front_close(&h);
            grip_stage_destroy(cpu);
            free(dev);
        }
    }
    t.cloud.normals = grip_array_host_view(GRIP_F32, 0, 0, NULL);
    grip_stage *st = choice_stage(ctx, "cuda", "file");
    grip_descriptor_front d;
    ck_assert_int_eq(grip_descriptor_front_open(st, &t.cloud, GRIP_ROLE_SCENE, NULL, 8, &d), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "descriptor.normals = file"));
    grip_descriptor_front_close(&d);
    grip_stage_destroy(st);
    free(gpu_normals);
    free(long3);
    host_cloud_free(&t.host);
    grip_ctx_free(ctx);
}
END_TEST

/* The front's normals on `device` (n x 4, host copy, malloc'd) with normals_k and model_normals, in role. */
static float *oriented_normals(grip_ctx *ctx, const grip_cloud *cloud, uint32_t role, const char *device,
                               const char *normals_k, const char *model_normals)
{
    grip_kv kv[] = {{"device", device}, {"normals_k", normals_k}, {"model_normals", model_normals}};
    grip_stage *st = NULL;
    ck_assert_msg(grip_stage_create(&grip_test_front_stage, ctx, kv, 3, &st) == GRIP_OK, "%s", ctx->last_error);
    uint32_t source = 0;
    float *out = front_normals(ctx, st, cloud, role, strcmp(device, "cuda") == 0, &source);
    ck_assert_uint_eq(source, GRIP_NORMALS_COMPUTED);
    return out;
}

/* model_normals = outward on the device: the GPU normals flipped toward the centroid of the finite points and
 * turned around (on the device), bit for bit; for k = 40 (the CPU twin's, uploaded, turned around on the device)
 * the host front's bit for bit; a scene ignores the setting. */
START_TEST(device_front_points_models_outward)
{
    grip_ctx *ctx = grip_test_ctx();
    test_cloud t;
    cloud_load(&t);
    size_t n = t.host.n;
    float centroid[3], *expect = malloc(n * 4 * sizeof(float));
    ck_assert_ptr_nonnull(expect);
    grip_normals_centroid(t.host.xyz, n, centroid);
    ck_assert_int_eq(grip_normals_cuda(ctx, t.host.xyz, n, 10, centroid, expect), GRIP_OK);
    grip_normals_turn_around(expect, n);
    float *dev = oriented_normals(ctx, &t.cloud, GRIP_ROLE_MODEL, "cuda", "10", "outward");
    ck_assert(same_floats(dev, expect, n * 4));
    size_t turned = 0, defined = 0; /* against the viewpoint's: how many the setting turned */
    float *dev_viewpoint = oriented_normals(ctx, &t.cloud, GRIP_ROLE_MODEL, "cuda", "10", "viewpoint");
    for (size_t i = 0; i < n; ++i)
        if (!isnan(dev[4 * i])) {
            ++defined;
            turned += dev[4 * i] == -dev_viewpoint[4 * i] && dev[4 * i] != 0.0f;
        }
    printf("outward model normals (k = 10): %zu of %zu defined rows turned from the viewpoint's\n", turned, defined);
    free(dev);
    /* a scene: the viewpoint's, whatever model_normals says */
    dev = oriented_normals(ctx, &t.cloud, GRIP_ROLE_SCENE, "cuda", "10", "outward");
    ck_assert(same_floats(dev, dev_viewpoint, n * 4));
    ck_assert_int_eq(grip_normals_cuda(ctx, t.host.xyz, n, 10, t.cloud.viewpoint, expect), GRIP_OK);
    ck_assert(same_floats(dev, expect, n * 4));
    free(dev);
    free(dev_viewpoint);
    /* k beyond the GPU's: the CPU twin's from the centroid, turned around on the device = the host front's */
    dev = oriented_normals(ctx, &t.cloud, GRIP_ROLE_MODEL, "cuda", "40", "outward");
    float *host = oriented_normals(ctx, &t.cloud, GRIP_ROLE_MODEL, "cpu", "40", "outward");
    ck_assert(same_floats(dev, host, n * 4));
    ck_assert_int_eq(grip_normals_compute(ctx, t.host.xyz, n, NULL, 40, 0.0f, centroid, expect), GRIP_OK);
    grip_normals_turn_around(expect, n);
    ck_assert(same_floats(host, expect, n * 4));
    free(dev);
    free(host);
    free(expect);
    host_cloud_free(&t.host);
    grip_ctx_free(ctx);
}
END_TEST

/* Descriptors (D = 4): each keypoint's normal row, written where the front's side lives. */
static grip_status normals_body(grip_stage *st, grip_descriptor_front *front)
{
    grip_features *f = front->features;
    size_t k = front->n_keypoints;
    grip_status s = grip_result_array_alloc(st->ctx, &f->descriptors, front->on_device ? GRIP_MEM_CUDA : GRIP_MEM_HOST,
                                            GRIP_F32, k, 4);
    if (s || !front->on_device) {
        for (size_t i = 0; !s && i < k; ++i)
            memcpy((float *)f->descriptors.data + 4 * i, front->normals + 4 * (size_t)front->keypoints[i],
                   4 * sizeof(float));
        return s;
    }
    return grip_cuda_copy_on_device(st->ctx, f->descriptors.data, front->keypoint_normals_dev, k * 4 * sizeof(float));
}

static void expect_memory(const grip_features *f, uint32_t memory)
{
    const grip_array *a[] = {&f->keypoints, &f->keypoint_xyz, &f->normals, &f->frames, &f->descriptors};
    for (size_t i = 0; i < 5; ++i)
        ck_assert_int_eq(a[i]->memory, memory);
}

START_TEST(descriptors_stay_on_the_device)
{
    grip_ctx *ctx = grip_test_ctx();
    test_cloud t;
    cloud_load(&t);
    float *vp = t.cloud.viewpoint;
    size_t n = t.host.n;
    float *normals = malloc(n * 4 * sizeof(float));
    ck_assert_ptr_nonnull(normals);
    ck_assert_int_eq(grip_normals_cuda(ctx, t.host.xyz, n, 10, vp, normals), GRIP_OK);
    t.cloud.normals = grip_array_host_view(GRIP_F32, n, 4, normals); /* both sides then agree bit for bit */
    grip_stage *cpu = stage_new(ctx, &grip_test_front_stage, "cpu", "uniform", "10");
    grip_stage *gpu = stage_new(ctx, &grip_test_front_stage, "cuda", "uniform", "10");
    grip_features *on_host = NULL, *on_device = NULL, *device_to_host = NULL;
    ck_assert_int_eq(grip_descriptor_front_describe(cpu, &t.cloud, GRIP_ROLE_SCENE, NULL, GRIP_MEM_HOST, 4,
                                                    normals_body, &on_host), GRIP_OK);
    ck_assert_int_eq(grip_descriptor_front_describe(gpu, &t.cloud, GRIP_ROLE_SCENE, NULL, GRIP_MEM_CUDA, 4,
                                                    normals_body, &on_device), GRIP_OK);
    ck_assert_int_eq(grip_descriptor_front_describe(gpu, &t.cloud, GRIP_ROLE_SCENE, NULL, GRIP_MEM_HOST, 4,
                                                    normals_body, &device_to_host), GRIP_OK);
    expect_memory(on_host, GRIP_MEM_HOST);
    expect_memory(on_device, GRIP_MEM_CUDA);
    expect_memory(device_to_host, GRIP_MEM_HOST);
    size_t k = (size_t)on_host->keypoints.rows;
    ck_assert(on_device->descriptors.rows == k && on_device->descriptors.cols == 4 && on_device->descriptor_dim == 4);
    ck_assert_uint_eq(on_device->frames.rows, 0);
    float *d = download(ctx, on_device->descriptors.data, k * 4 * sizeof *d);
    ck_assert_int_eq(memcmp(d, on_host->descriptors.data, k * 4 * sizeof *d), 0);
    ck_assert_int_eq(memcmp(device_to_host->descriptors.data, on_host->descriptors.data, k * 4 * sizeof *d), 0);
    ck_assert_int_eq(memcmp(device_to_host->normals.data, on_host->normals.data, n * 4 * sizeof *d), 0);
    ck_assert_int_eq(memcmp(device_to_host->keypoint_xyz.data, on_host->keypoint_xyz.data, k * 3 * sizeof *d), 0);
    free(d);
    /* placing a device array on the device leaves it; on the host, downloads it */
    void *before = on_device->descriptors.data;
    ck_assert_int_eq(grip_result_array_place(ctx, &on_device->descriptors, GRIP_MEM_CUDA), GRIP_OK);
    ck_assert_ptr_eq(on_device->descriptors.data, before);
    ck_assert_int_eq(grip_result_array_place(ctx, &on_device->descriptors, GRIP_MEM_HOST), GRIP_OK);
    ck_assert_int_eq(on_device->descriptors.memory, GRIP_MEM_HOST);
    ck_assert_int_eq(on_device->descriptors.device, -1);
    ck_assert_int_eq(memcmp(on_device->descriptors.data, on_host->descriptors.data, k * 4 * sizeof(float)), 0);
    on_host->release(on_host);
    on_device->release(on_device);
    device_to_host->release(device_to_host);
    grip_stage_destroy(cpu);
    grip_stage_destroy(gpu);
    free(normals);
    host_cloud_free(&t.host);
    grip_ctx_free(ctx);
}
END_TEST

/* Features described into device memory keep the cloud's surface for the group and verify stages: found from the
 * very struct handed out, with the cloud's points and the features' normals, bit for bit; not from a copy of the
 * struct, nor for another row count, nor once the features' arrays are not the described ones; host features keep
 * none. */
START_TEST(device_features_keep_their_surface)
{
    grip_ctx *ctx = grip_test_ctx();
    test_cloud t;
    cloud_load(&t);
    size_t n = t.host.n;
    grip_stage *gpu = stage_new(ctx, &grip_test_front_stage, "cuda", "uniform", "10");
    grip_features *on_device = NULL, *on_host = NULL;
    ck_assert_int_eq(grip_descriptor_front_describe(gpu, &t.cloud, GRIP_ROLE_SCENE, NULL, GRIP_MEM_CUDA, 4,
                                                    normals_body, &on_device), GRIP_OK);
    ck_assert_int_eq(grip_descriptor_front_describe(gpu, &t.cloud, GRIP_ROLE_SCENE, NULL, GRIP_MEM_HOST, 4,
                                                    normals_body, &on_host), GRIP_OK);
    const grip_surface_cuda *kept = grip_features_kept_surface(ctx, on_device, n);
    ck_assert_ptr_nonnull(kept);
    grip_surface_cuda_view v = grip_surface_cuda_get_view(kept);
    ck_assert_uint_eq(v.n, n);
    ck_assert_int_eq(v.has_normals, 1);
    float *xyz = download(ctx, v.xyz, n * 3 * sizeof(float)), *nrm = download(ctx, v.normals, n * 4 * sizeof(float)),
          *features_nrm = download(ctx, on_device->normals.data, n * 4 * sizeof(float));
    ck_assert(same_floats(xyz, t.host.xyz, n * 3));
    ck_assert(same_floats(nrm, features_nrm, n * 4));
    grip_features copy = *on_device;
    ck_assert_ptr_null(grip_features_kept_surface(ctx, &copy, n));
    ck_assert_ptr_null(grip_features_kept_surface(ctx, on_device, n - 1));
    ck_assert_ptr_null(grip_features_kept_surface(ctx, on_host, n));
    void *described = on_device->normals.data;
    on_device->normals.data = on_device->xyz.data; /* a host that put other normals in */
    ck_assert_ptr_null(grip_features_kept_surface(ctx, on_device, n));
    on_device->normals.data = described;
    ck_assert_ptr_eq(grip_features_kept_surface(ctx, on_device, n), kept);
    free(xyz);
    free(nrm);
    free(features_nrm);
    on_device->release(on_device);
    on_host->release(on_host);
    grip_stage_destroy(gpu);
    host_cloud_free(&t.host);
    grip_ctx_free(ctx);
}
END_TEST

/* One search of ix: queries and outputs in the memory spaces asked for; the results land in ids/sqdist (host). */
static void search(grip_ctx *ctx, grip_index *ix, const float *q, size_t m, uint32_t k, uint32_t q_memory,
                   uint32_t out_memory, uint32_t *ids, float *sqdist)
{
    size_t dim = ix->dim;
    grip_array queries = grip_array_host_view(GRIP_F32, m, dim, (void *)q);
    grip_array out_ids = grip_array_host_view(GRIP_U32, m, k, ids);
    grip_array out_d = grip_array_host_view(GRIP_F32, m, k, sqdist);
    void *dq = NULL, *di = NULL, *dd = NULL;
    if (q_memory == GRIP_MEM_CUDA) {
        ck_assert_int_eq(grip_cuda_upload(ctx, q, m * dim * sizeof(float), &dq, &queries.device), GRIP_OK);
        queries.data = dq;
        queries.memory = GRIP_MEM_CUDA;
    }
    if (out_memory == GRIP_MEM_CUDA) {
        ck_assert_int_eq(grip_cuda_alloc(ctx, m * k * sizeof(float), &di), GRIP_OK);
        ck_assert_int_eq(grip_cuda_alloc(ctx, m * k * sizeof(float), &dd), GRIP_OK);
        out_ids.data = di;
        out_d.data = dd;
        out_ids.memory = out_d.memory = GRIP_MEM_CUDA;
        out_ids.device = out_d.device = ctx->device;
    }
    ck_assert_msg(ix->search(ix, &queries, k, INFINITY, &out_ids, &out_d) == GRIP_OK, "%s", ctx->last_error);
    if (out_memory == GRIP_MEM_CUDA) {
        ck_assert_int_eq(grip_cuda_copy_to_host(ctx, ids, di, m * k * sizeof(uint32_t)), GRIP_OK);
        ck_assert_int_eq(grip_cuda_copy_to_host(ctx, sqdist, dd, m * k * sizeof(float)), GRIP_OK);
    }
    grip_cuda_free(dq);
    grip_cuda_free(di);
    grip_cuda_free(dd);
}

START_TEST(bruteforce_index_takes_device_rows)
{
    grip_ctx *ctx = grip_test_ctx();
    uint64_t s = 702;
    const size_t n = 1500, m = 300, dim = 33;
    float *ref = grip_test_clustered_rows(&s, n, dim, 12), *q = grip_test_clustered_rows(&s, m, dim, 12);
    uint32_t model_ids[1500];
    for (size_t i = 0; i < n; ++i)
        model_ids[i] = (uint32_t)(i * 3 / n);
    grip_array ids_arr = grip_array_host_view(GRIP_U32, n, 1, model_ids);
    grip_array ref_host = grip_array_host_view(GRIP_F32, n, dim, ref), ref_dev = ref_host;
    void *dev = NULL;
    ck_assert_int_eq(grip_cuda_upload(ctx, ref, n * dim * sizeof(float), &dev, &ref_dev.device), GRIP_OK);
    ref_dev.data = dev;
    ref_dev.memory = GRIP_MEM_CUDA;
    grip_stage *cpu = stage_new(ctx, &grip_index_bruteforce, "cpu", NULL, NULL);
    grip_stage *gpu = stage_new(ctx, &grip_index_bruteforce, "cuda", NULL, NULL);
    grip_index *want = NULL, *from_dev = NULL, *from_host = NULL;
    ck_assert_int_eq(grip_index_bruteforce.build(cpu, &ref_host, &ids_arr, &want), GRIP_OK);
    ck_assert_int_eq(grip_index_bruteforce.build(gpu, &ref_dev, &ids_arr, &from_dev), GRIP_OK);
    ck_assert_int_eq(grip_index_bruteforce.build(gpu, &ref_host, &ids_arr, &from_host), GRIP_OK);
    grip_cuda_free(dev); /* the index keeps its own copy */
    ck_assert_int_eq(from_dev->reference.memory, GRIP_MEM_CUDA);
    ck_assert_ptr_ne(from_dev->reference.data, dev);
    ck_assert_uint_eq(from_dev->n_models, 3);
    float *back = download(ctx, from_dev->reference.data, n * dim * sizeof(float));
    ck_assert_int_eq(memcmp(back, ref, n * dim * sizeof(float)), 0);
    free(back);
    static const uint32_t ks[] = {1, 5, 40 /* beyond the GPU's: the CPU twin over a downloaded copy */};
    uint32_t *ids_want = malloc(m * 40 * sizeof(uint32_t)), *ids_got = malloc(m * 40 * sizeof(uint32_t));
    float *d_want = malloc(m * 40 * sizeof(float)), *d_got = malloc(m * 40 * sizeof(float));
    ck_assert(ids_want && ids_got && d_want && d_got);
    grip_index *gpu_indexes[] = {from_dev, from_host};
    for (size_t ki = 0; ki < 3; ++ki) {
        uint32_t k = ks[ki];
        search(ctx, want, q, m, k, GRIP_MEM_HOST, GRIP_MEM_HOST, ids_want, d_want);
        for (size_t g = 0; g < 2; ++g)
            for (uint32_t qm = 0; qm < 2; ++qm)
                for (uint32_t om = 0; om < 2; ++om) {
                    memset(ids_got, 0xa5, m * k * sizeof(uint32_t));
                    search(ctx, gpu_indexes[g], q, m, k, qm, om, ids_got, d_got);
                    ck_assert_int_eq(memcmp(ids_got, ids_want, m * k * sizeof(uint32_t)), 0);
                    ck_assert_int_eq(memcmp(d_got, d_want, m * k * sizeof(float)), 0);
                }
    }
    free(ids_want);
    free(ids_got);
    free(d_want);
    free(d_got);
    want->release(want);
    from_dev->release(from_dev);
    from_host->release(from_host);
    grip_stage_destroy(cpu);
    grip_stage_destroy(gpu);
    free(ref);
    free(q);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("descriptor_front_cuda");
    TCase *tc = tcase_create("device");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, device_front_equals_host_front);
    tcase_add_test(tc, device_front_honours_the_normals_choice);
    tcase_add_test(tc, device_front_points_models_outward);
    tcase_add_test(tc, descriptors_stay_on_the_device);
    tcase_add_test(tc, device_features_keep_their_surface);
    tcase_add_test(tc, bruteforce_index_takes_device_rows);
    suite_add_tcase(s, tc);
    return grip_test_run_gpu(s);
}
