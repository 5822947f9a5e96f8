/* test_free_space_cuda.c (gpu) -- the free-space check on the GPU (grip_free_space_violations_cuda) gives the CPU
 * twin's fractions bit for bit: on rendered range images of a bumpy surface with holes, for poses that put a model
 * in front of it (violations), on it (seen), behind it (occluded), partly off the image and behind the camera,
 * several poses sharing a model, with the scene's rows of 3 and of 4 floats; NaN for every pose of an unorganized
 * scene; bad arguments refused, the context usable after. Skips (77) without a usable device. */
#include "test_support.h"
#include "core/cuda_bridge.h"
#include "verify/free_space.h"
#include "verify/free_space_cuda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { W = 320, H = 240 };
static const double FX = 262.5, FY = 262.5, CX = 159.5, CY = 119.5;

/* A bumpy surface about depth 1 seen through the pinhole, holes (NaN) scattered, rows of `stride` floats. */
static float *render(uint64_t *rng, size_t stride)
{
    float *xyz = malloc(sizeof(float) * stride * W * H);
    ck_assert_ptr_nonnull(xyz);
    for (int v = 0; v < H; v++)
        for (int u = 0; u < W; u++) {
            float *p = xyz + stride * (size_t)(v * W + u);
            for (size_t k = 3; k < stride; k++)
                p[k] = 0.0f;
            if (grip_test_uniform(rng, 0.0f, 1.0f) < 0.05f) {
                p[0] = p[1] = p[2] = NAN;
                continue;
            }
            const double z = 1.0 + 0.05 * sin(u * 0.07) * cos(v * 0.05) + grip_test_uniform(rng, -0.001f, 0.001f);
            p[0] = (float)((u - CX) / FX * z);
            p[1] = (float)((v - CY) / FY * z);
            p[2] = (float)z;
        }
    return xyz;
}

/* A random blob of n points about the origin, 5 cm across, a few NaN rows. */
static float *blob(uint64_t *rng, size_t n)
{
    float *m = malloc(sizeof(float) * 3 * n);
    ck_assert_ptr_nonnull(m);
    for (size_t i = 0; i < 3 * n; i++)
        m[i] = i % 997 == 5 ? NAN : grip_test_uniform(rng, -0.025f, 0.025f);
    return m;
}

/* A pose: a small random rotation, the blob's centre at (x, y, z). */
static void random_pose(uint64_t *rng, double x, double y, double z, double pose[16])
{
    const double a = grip_test_uniform(rng, -0.5f, 0.5f), b = grip_test_uniform(rng, -0.5f, 0.5f);
    const double r[9] = {cos(a), -sin(a) * cos(b), sin(a) * sin(b), sin(a), cos(a) * cos(b), -cos(a) * sin(b),
                         0,      sin(b),           cos(b)};
    memset(pose, 0, 16 * sizeof *pose);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            pose[4 * i + j] = r[3 * i + j];
    pose[3] = x;
    pose[7] = y;
    pose[11] = z;
    pose[15] = 1;
}

START_TEST(gpu_fractions_are_the_cpu_twins)
{
    grip_ctx *ctx = grip_test_ctx();
    uint64_t rng = 1234;
    enum { N_MODELS = 3, N_POSES = 60 };
    const size_t n_model[N_MODELS] = {5000, 1, 70000};
    float *model[N_MODELS];
    for (int m = 0; m < N_MODELS; m++)
        model[m] = blob(&rng, n_model[m]);
    double poses[N_POSES][16];
    grip_free_space_job jobs[N_POSES];
    for (int k = 0; k < N_POSES; k++) {
        /* in front of the surface, on it, behind it; a tenth partly off the image or behind the camera */
        const double depth = k % 10 == 9 ? (k % 20 == 9 ? -0.01 : 0.9) : 0.9 + 0.05 * (k % 5);
        const double x = k % 10 == 9 ? 0.55 : grip_test_uniform(&rng, -0.4f, 0.4f);
        random_pose(&rng, x, grip_test_uniform(&rng, -0.3f, 0.3f), depth, poses[k]);
        jobs[k] = (grip_free_space_job){model[k % N_MODELS], n_model[k % N_MODELS], poses[k]};
    }
    for (size_t stride = 3; stride <= 4; stride++) {
        float *scene = render(&rng, stride), *scene3 = malloc(sizeof(float) * 3 * W * H);
        ck_assert_ptr_nonnull(scene3);
        for (size_t i = 0; i < (size_t)W * H; i++)
            memcpy(scene3 + 3 * i, scene + stride * i, 3 * sizeof(float));
        grip_pinhole cam;
        grip_pinhole_estimate(scene3, W, H, 4, &cam);
        ck_assert(cam.valid);
        void *dev = NULL;
        int device = -1;
        ck_assert_int_eq(grip_cuda_upload(ctx, scene, sizeof(float) * stride * W * H, &dev, &device), GRIP_OK);
        for (int tol = 0; tol < 2; tol++) {
            const double tolerance = tol ? 0.01 : 0.003;
            float cpu[N_POSES], gpu[N_POSES];
            ck_assert_int_eq(grip_free_space_violations(ctx, &cam, scene3, W, H, jobs, N_POSES, tolerance, cpu),
                             GRIP_OK);
            ck_assert_int_eq(
                grip_free_space_violations_cuda(ctx, &cam, dev, stride, W, H, jobs, N_POSES, tolerance, gpu), GRIP_OK);
            int violating = 0, clean = 0;
            for (int k = 0; k < N_POSES; k++) {
                ck_assert_msg(!memcmp(&cpu[k], &gpu[k], sizeof cpu[k]),
                              "pose %d (stride %zu, tolerance %g): CPU %.9g, GPU %.9g", k, stride, tolerance, cpu[k],
                              gpu[k]);
                violating += cpu[k] > 0.5f;
                clean += cpu[k] == 0.0f;
            }
            ck_assert_int_gt(violating, 5); /* the test sees both kinds */
            ck_assert_int_gt(clean, 5);
        }
        grip_cuda_free(dev);
        free(scene);
        free(scene3);
    }
    for (int m = 0; m < N_MODELS; m++)
        free(model[m]);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(unorganized_scene_and_bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    uint64_t rng = 99;
    float *m = blob(&rng, 100);
    double pose[16];
    random_pose(&rng, 0, 0, 1, pose);
    const grip_free_space_job jobs[2] = {{m, 100, pose}, {m, 100, pose}};
    grip_pinhole no_camera;
    memset(&no_camera, 0, sizeof no_camera); /* what an unorganized scene gets */
    float v[2] = {0, 0};
    ck_assert_int_eq(grip_free_space_violations_cuda(ctx, &no_camera, NULL, 3, 100, 1, jobs, 2, 0.01, v), GRIP_OK);
    ck_assert(isnan(v[0]) && isnan(v[1]));
    grip_pinhole cam = {FX, FY, CX, CY, 0.1, 1};
    ck_assert_int_eq(grip_free_space_violations_cuda(ctx, &cam, NULL, 3, W, H, jobs, 2, 0.01, v), GRIP_EINVAL);
    ck_assert_int_eq(grip_free_space_violations_cuda(ctx, &cam, (const float *)m, 2, W, H, jobs, 2, 0.01, v),
                     GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "stride 2"));
    ck_assert_int_eq(grip_free_space_violations_cuda(ctx, NULL, NULL, 3, W, H, jobs, 2, 0.01, v), GRIP_EINVAL);
    /* still usable: no pose at all */
    ck_assert_int_eq(grip_free_space_violations_cuda(ctx, &cam, (const float *)m, 3, W, H, jobs, 0, 0.01, v), GRIP_OK);
    free(m);
    grip_ctx_free(ctx);
}
END_TEST

static Suite *free_space_cuda_suite(void)
{
    Suite *s = suite_create("free_space_cuda");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, gpu_fractions_are_the_cpu_twins);
    tcase_add_test(tc, unorganized_scene_and_bad_arguments);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return grip_test_run_gpu(free_space_cuda_suite());
}
