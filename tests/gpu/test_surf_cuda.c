/* test_surf_cuda.c (gpu) -- grip_surf_cuda against its CPU twin grip_surf_run: the same counts (found, dropped for
 * depth, kept), the same keypoints in the same order (position within 0.1 px, scale within 1 %, orientation within
 * 1e-4 rad, the same sign of the Laplacian and pixel), the same lifted points, and descriptors within 1e-4, on
 * synthetic frames of several sizes (odd ones included) with depth holes, upright, extended with the sign column,
 * other scale spaces
 * (init_step 1, 3 octaves of 5 intervals), a constant image, a capacity overflow (the same error and count), and
 * the real frame milk_cartoon_all_small_clorox.pcd (when the shared data is present), also through the `surf`
 * stage on both devices. Skips (77) without a usable device. */
#include "test_support.h"
#include "surf_scene.h"
#include "core/cuda_bridge.h"
#include "descriptor/surf.h"
#include "descriptor/surf_cuda.h"
#include "stages/registry.h"
#include "stages/stage.h"

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

static void *download(grip_ctx *ctx, const void *dev, size_t bytes)
{
    void *host = malloc(bytes ? bytes : 1);
    ck_assert_ptr_nonnull(host);
    ck_assert_msg(grip_cuda_copy_to_host(ctx, host, dev, bytes) == GRIP_OK, "%s", ctx->last_error);
    return host;
}

/* Runs both sides on grey (and xyz unless NULL) and compares everything; returns the kept count. */
static size_t compare(grip_ctx *ctx, const char *what, const uint8_t *grey, const float *xyz, uint32_t w, uint32_t h,
                      const grip_surf_params *p)
{
    const size_t n = (size_t)w * h;
    grip_surf_result cpu;
    ck_assert_msg(grip_surf_run(ctx, grey, xyz, w, h, p, &cpu) == GRIP_OK, "%s: cpu: %s", what, ctx->last_error);
    void *grey_dev = upload(ctx, grey, n), *xyz_dev = xyz ? upload(ctx, xyz, 3 * n * sizeof(float)) : NULL;
    grip_surf_cuda_result gpu;
    ck_assert_msg(grip_surf_cuda(ctx, grey_dev, xyz_dev, w, h, p, &gpu) == GRIP_OK, "%s: gpu: %s", what,
                  ctx->last_error);
    ck_assert_msg(gpu.n_found == cpu.n_found && gpu.n_no_depth == cpu.n_no_depth && gpu.count == cpu.count,
                  "%s: gpu found %zu (%zu without depth), cpu %zu (%zu)", what, gpu.n_found, gpu.n_no_depth,
                  cpu.n_found, cpu.n_no_depth);
    const size_t k = cpu.count, dim = grip_surf_dim(p);
    grip_surf_keypoint *kps = download(ctx, gpu.keypoints, k * sizeof *kps);
    uint32_t *pixels = download(ctx, gpu.pixels, k * sizeof *pixels);
    float *desc = download(ctx, gpu.descriptors, k * dim * sizeof *desc);
    float *kxyz = xyz ? download(ctx, gpu.xyz, 3 * k * sizeof *kxyz) : NULL;
    float worst = 0.0f;
    for (size_t i = 0; i < k; ++i) {
        const grip_surf_keypoint *a = &cpu.keypoints[i], *b = &kps[i];
        ck_assert_msg(fabsf(a->x - b->x) <= 0.1f && fabsf(a->y - b->y) <= 0.1f &&
                          fabsf(a->scale - b->scale) <= 0.01f * a->scale,
                      "%s: keypoint %zu at (%g, %g) scale %g on the cpu, (%g, %g) scale %g on the gpu", what, i,
                      (double)a->x, (double)a->y, (double)a->scale, (double)b->x, (double)b->y, (double)b->scale);
        ck_assert_msg(fabsf(a->orientation - b->orientation) <= TOLERANCE, "%s: keypoint %zu orientation %g / %g", what,
                      i, (double)a->orientation, (double)b->orientation);
        ck_assert_int_eq(a->laplacian, b->laplacian);
        ck_assert_uint_eq(a->pixel, b->pixel);
        ck_assert_uint_eq(a->slot, b->slot);
        ck_assert_uint_eq(pixels[i], a->pixel);
        if (xyz)
            ck_assert_mem_eq(kxyz + 3 * i, xyz + 3 * (size_t)a->pixel, 3 * sizeof(float));
        for (size_t j = 0; j < dim; ++j) {
            const float x = cpu.descriptors[i * dim + j], y = desc[i * dim + j];
            ck_assert_msg(isnan(x) == isnan(y), "%s: keypoint %zu value %zu: %g / %g", what, i, j, (double)x,
                          (double)y);
            if (!isnan(x) && fabsf(x - y) > worst)
                worst = fabsf(x - y);
        }
    }
    ck_assert_msg(worst <= TOLERANCE, "%s: descriptors differ by %g", what, (double)worst);
    free(kps);
    free(pixels);
    free(desc);
    free(kxyz);
    grip_surf_cuda_result_free(&gpu);
    grip_cuda_free(grey_dev);
    grip_cuda_free(xyz_dev);
    grip_surf_result_free(&cpu);
    return k;
}

static const grip_surf_params defaults = {4, 4, 2, 0.0004f, 0, 0, 20000, 0};

static uint8_t *grey_of(const uint8_t *rgb, size_t n)
{
    uint8_t *g = malloc(n);
    ck_assert_ptr_nonnull(g);
    grip_surf_grey_image(rgb, n, g);
    return g;
}

START_TEST(synthetic_frames_match_the_twin)
{
    grip_ctx *ctx = grip_test_ctx();
    /* under the sanitizer (grip_test_small_sizes) the two smallest frames: they launch every kernel on the same
     * paths as the larger ones (an odd width, a height not a multiple of the column scan's 32 segments) */
    const uint32_t sizes[][2] = {{320, 240}, {256, 199}, {401, 333}, {640, 480}};
    const size_t n_sizes = grip_test_size(sizeof sizes / sizeof sizes[0], 2);
    for (size_t t = 0; t < n_sizes; ++t) {
        grip_surf_scene sc = grip_surf_scene_make(sizes[t][0], sizes[t][1], 24, 100 + t);
        ck_assert_ptr_nonnull(sc.rgb);
        /* depth holes: a block and every 7th pixel of a band */
        for (uint32_t y = 40; y < 120 && y < sc.height; ++y)
            for (uint32_t x = 30; x < 110; ++x)
                sc.xyz[3 * ((size_t)y * sc.width + x) + 2] = NAN;
        for (size_t i = 0; i < (size_t)sc.width * 60; i += 7)
            sc.xyz[3 * (((size_t)sc.height / 2) * sc.width + i)] = NAN;
        uint8_t *g = grey_of(sc.rgb, (size_t)sc.width * sc.height);
        grip_surf_params up = defaults, ext = defaults, fine = defaults, deep = defaults;
        up.upright = 1;
        ext.extended = 1;
        ext.sign_column = 1;
        fine.init_step = 1;
        fine.threshold = 0.0002f;
        deep.octaves = 3;
        deep.intervals = 5;
        ck_assert_uint_gt(compare(ctx, "defaults", g, sc.xyz, sc.width, sc.height, &defaults), 0);
        compare(ctx, "no cloud", g, NULL, sc.width, sc.height, &defaults);
        compare(ctx, "upright", g, sc.xyz, sc.width, sc.height, &up);
        compare(ctx, "extended, sign column", g, sc.xyz, sc.width, sc.height, &ext);
        compare(ctx, "init_step 1", g, sc.xyz, sc.width, sc.height, &fine);
        compare(ctx, "3 x 5", g, sc.xyz, sc.width, sc.height, &deep);
        if (t == 0) {
            memset(g, 77, (size_t)sc.width * sc.height);
            ck_assert_uint_eq(compare(ctx, "constant", g, sc.xyz, sc.width, sc.height, &defaults), 0);
        }
        free(g);
        grip_surf_scene_free(&sc);
    }
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(overflow_is_reported_alike)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_surf_scene sc = grip_surf_scene_make(320, 240, 20, 7);
    ck_assert_ptr_nonnull(sc.rgb);
    const size_t n = (size_t)sc.width * sc.height;
    uint8_t *g = grey_of(sc.rgb, n);
    grip_surf_params p = defaults;
    p.capacity = 3;
    grip_surf_result cpu;
    ck_assert_int_eq(grip_surf_run(ctx, g, sc.xyz, sc.width, sc.height, &p, &cpu), GRIP_ECONFIG);
    ck_assert_uint_gt(cpu.n_found, 3);
    void *grey_dev = upload(ctx, g, n);
    grip_surf_cuda_result gpu;
    ck_assert_int_eq(grip_surf_cuda(ctx, grey_dev, NULL, sc.width, sc.height, &p, &gpu), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "capacity"));
    ck_assert_uint_eq(gpu.n_found, cpu.n_found);
    ck_assert_ptr_null(gpu.keypoints);
    grip_surf_cuda_result_free(&gpu);
    /* too small an image: the twin's refusal */
    ck_assert_int_eq(grip_surf_cuda(ctx, grey_dev, NULL, 150, 150, &defaults, &gpu), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "largest filter"));
    grip_cuda_free(grey_dev);
    free(g);
    grip_surf_scene_free(&sc);
    grip_ctx_free(ctx);
}
END_TEST

#define MILK "pcl/milk_cartoon_all_small_clorox.pcd"

static grip_features *stage_run(grip_ctx *ctx, const grip_cloud *cloud, const char *device, uint32_t out_memory)
{
    grip_kv kv[] = {{"device", device}};
    grip_stage *st = NULL;
    ck_assert_int_eq(grip_stage_create(&grip_descriptor_surf, ctx, kv, 1, &st), GRIP_OK);
    grip_features *f = NULL;
    ck_assert_msg(grip_descriptor_surf.describe(st, cloud, GRIP_ROLE_SCENE, NULL, out_memory, &f) == GRIP_OK, "%s: %s",
                  device, ctx->last_error);
    grip_stage_destroy(st);
    return f;
}

START_TEST(real_frame_matches_the_twin)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, MILK)) {
        fprintf(stderr, "test_surf_cuda: %s absent, real frame not checked\n", MILK);
        return;
    }
    host_cloud c = grip_test_read_cloud(MILK);
    ck_assert_ptr_nonnull(c.rgb);
    grip_test_sanitizer_crop(&c, 240); /* still above the largest filter (195 px): every octave runs */
    grip_ctx *ctx = grip_test_ctx();
    uint8_t *g = grey_of(c.rgb, c.n);
    grip_surf_params ext = defaults;
    ext.extended = 1;
    ck_assert_uint_ge(compare(ctx, "milk", g, c.xyz, c.width, c.height, &defaults), grip_test_size(100, 30));
    compare(ctx, "milk extended", g, c.xyz, c.width, c.height, &ext);
    /* the stage: the same features on both devices, the GPU's left on the device */
    grip_cloud cloud;
    memset(&cloud, 0, sizeof cloud);
    cloud.struct_size = sizeof cloud;
    cloud.width = c.width;
    cloud.height = c.height;
    cloud.xyz = grip_array_host_view(GRIP_F32, c.n, 3, c.xyz);
    cloud.rgb = grip_array_host_view(GRIP_U8, c.n, 3, c.rgb);
    grip_features *a = stage_run(ctx, &cloud, "cpu", GRIP_MEM_HOST), *b = stage_run(ctx, &cloud, "cuda", GRIP_MEM_CUDA);
    ck_assert_uint_eq(b->descriptors.memory, GRIP_MEM_CUDA);
    const size_t k = a->keypoints.rows;
    ck_assert_uint_eq(b->keypoints.rows, k);
    uint32_t *idx = download(ctx, b->keypoints.data, k * sizeof *idx);
    float *d = download(ctx, b->descriptors.data, k * 64 * sizeof *d);
    float *x = download(ctx, b->keypoint_xyz.data, k * 3 * sizeof *x);
    ck_assert_mem_eq(idx, a->keypoints.data, k * sizeof *idx);
    ck_assert_mem_eq(x, a->keypoint_xyz.data, k * 3 * sizeof *x);
    const float *ad = a->descriptors.data;
    for (size_t i = 0; i < k * 64; ++i)
        ck_assert_msg(fabsf(ad[i] - d[i]) <= TOLERANCE, "stage: value %zu: %g / %g", i, (double)ad[i], (double)d[i]);
    free(idx);
    free(d);
    free(x);
    a->release(a);
    b->release(b);
    free(g);
    grip_ctx_free(ctx);
    host_cloud_free(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("surf_cuda");
    grip_test_add_case(s, "synthetic", synthetic_frames_match_the_twin);
    grip_test_add_case(s, "overflow", overflow_is_reported_alike);
    grip_test_add_case(s, "real", real_frame_matches_the_twin);
    return s;
}

int main(void)
{
    return grip_test_run_gpu(suite());
}
