/* test_board_cuda.c (gpu) -- BOARD frames on the GPU (grip_board_lrf_cuda_host) against the CPU twin with the same
 * tie order (grip_board_lrf_ties, GRIP_BOARD_TIES_NEAREST): the same NaN rows, and every value within 2e-6.
 * Why 2e-6 and not 0: both run the same code (board_lrf_math.h) on the same support in the same order, so z and the
 * chosen x candidate are the same bits; only a frame whose x points into a hole turns it by cosf/sinf, which on the
 * device are within 2 ulp of glibc's, and that difference (~2.4e-7 a term) goes through Rodrigues' three terms and
 * y = z x x. The test counts and prints the frames that are not the same bits.
 *  - PCL's tutorial clouds (PCL's normals and keypoints, radius 0.015, holes on), when the data is present;
 *  - random surfaces with NaN points and normals drawn from a handful of values (so that many candidates tie, and
 *    the tie order is what is tested), holes on and off, radii giving tiny and large supports;
 *  - bad input: no keypoints, a bad radius (a clear error, the context usable after).
 * Skips (77) without a usable device. */
#include "group_tutorial.h"
#include "group/board_lrf.h"
#include "group/board_lrf_cuda.h"
#include "host_util.h"

#define FRAME_TOLERANCE 2e-6

typedef struct frame_diff {
    size_t nan_mismatch, not_same_bits, beyond;
    double worst;
} frame_diff;

static frame_diff compare_frames(const char *name, const float *cpu, const float *gpu, size_t k)
{
    frame_diff d = {0, 0, 0, 0.0};
    for (size_t i = 0; i < k; ++i) {
        const float *a = cpu + i * 9, *b = gpu + i * 9;
        int same_bits = 1;
        for (int j = 0; j < 9; ++j) {
            if (isnan(a[j]) != isnan(b[j])) {
                ++d.nan_mismatch;
                same_bits = 0;
                break;
            }
            if (isnan(a[j]))
                continue;
            double diff = fabs((double)a[j] - (double)b[j]);
            if (grip_test_float_bits(a[j]) != grip_test_float_bits(b[j]))
                same_bits = 0;
            if (diff > FRAME_TOLERANCE && d.beyond++ < 5)
                fprintf(stderr, "%s keypoint %zu value %d: cpu %.9g gpu %.9g\n", name, i, j, a[j], b[j]);
            if (diff > d.worst)
                d.worst = diff;
        }
        d.not_same_bits += !same_bits;
    }
    fprintf(stderr, "%s: %zu frames, %zu NaN mismatches, %zu not the same bits, %zu beyond %.0e, max |diff| %.3g\n",
            name, k, d.nan_mismatch, d.not_same_bits, d.beyond, FRAME_TOLERANCE, d.worst);
    return d;
}

static void check_gpu_against_cpu(const char *name, const float *xyz, const float *normals, size_t n, const float *kp,
                                  size_t k, float radius, int holes)
{
    grip_ctx *ctx = grip_test_ctx();
    float *cpu = malloc(k * 9 * sizeof *cpu + 1), *gpu = malloc(k * 9 * sizeof *gpu + 1);
    ck_assert(cpu && gpu);
    double t0 = host_now_ms();
    ck_assert_int_eq(
        grip_board_lrf_ties(ctx, xyz, normals, n, NULL, kp, k, radius, holes, GRIP_BOARD_TIES_NEAREST, cpu), GRIP_OK);
    double t1 = host_now_ms();
    grip_status st = grip_board_lrf_cuda_host(ctx, xyz, GRIP_MEM_HOST, normals, GRIP_MEM_HOST, n, kp, k, radius, holes, gpu);
    double t2 = host_now_ms();
    ck_assert_msg(st == GRIP_OK, "%s: %s", name, grip_ctx_error_text(ctx));
    fprintf(stderr, "%s: cpu %.1f ms, gpu (upload, grid, supports, frames, download) %.1f ms\n", name, t1 - t0,
            t2 - t1);
    frame_diff d = compare_frames(name, cpu, gpu, k);
    ck_assert_uint_eq(d.nan_mismatch, 0);
    ck_assert_uint_eq(d.beyond, 0);
    free(cpu);
    free(gpu);
    grip_ctx_free(ctx);
}

static void tutorial_case(const char *name, const char *cloud_rel, const char *normals_rel, const char *keypoints_rel)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, keypoints_rel) || !grip_test_data_path(path, sizeof path, cloud_rel)) {
        fprintf(stderr, "%s: the tutorial data is absent, nothing checked\n", name);
        return;
    }
    host_cloud cloud = grip_test_read_cloud(cloud_rel);
    float *normals = read_f32(normals_rel, cloud.n, 4);
    size_t k = 0;
    float *kp = keypoints_xyz(cloud_rel, keypoints_rel, &k);
    check_gpu_against_cpu(name, cloud.xyz, normals, cloud.n, kp, k, 0.015f, 1);
    free(kp);
    free(normals);
    host_cloud_free(&cloud);
}

START_TEST(tutorial_frames_equal_cpu_twin)
{
    tutorial_case("tutorial model", MODEL_CLOUD, TUTORIAL "model_normals.f32.gz", TUTORIAL "model_keypoints.u32.gz");
    tutorial_case("tutorial scene", SCENE_CLOUD, TUTORIAL "scene_normals.f32.gz", TUTORIAL "scene_keypoints.u32.gz");
}
END_TEST

/* n points on a wavy surface with 1 in 50 NaN, normals from 6 values (ties) with 1 in 40 NaN; every 7th point a
 * keypoint. */
typedef struct random_surface {
    float *xyz, *normals, *kp;
    size_t n, k;
} random_surface;

static random_surface random_surface_make(size_t n, uint64_t seed)
{
    random_surface s;
    uint64_t rng = seed;
    s.n = n;
    s.xyz = malloc(n * 3 * sizeof *s.xyz);
    s.normals = malloc(n * 4 * sizeof *s.normals);
    s.kp = malloc((n / 7 + 1) * 3 * sizeof *s.kp);
    ck_assert(s.xyz && s.normals && s.kp);
    static const float choices[6][3] = {{0, 0, 1},        {0.6f, 0, 0.8f},  {0, 0.6f, 0.8f},
                                        {-0.6f, 0, 0.8f}, {0, -0.8f, 0.6f}, {0.48f, 0.6f, 0.64f}};
    s.k = 0;
    for (size_t i = 0; i < n; ++i) {
        float x = grip_test_uniform(&rng, -0.1f, 0.1f), y = grip_test_uniform(&rng, -0.1f, 0.1f);
        float *p = s.xyz + i * 3, *nr = s.normals + i * 4;
        p[0] = x;
        p[1] = y;
        p[2] = 0.01f * sinf(40.0f * x) * cosf(30.0f * y) + grip_test_uniform(&rng, -0.0005f, 0.0005f);
        int c = (int)grip_test_uniform(&rng, 0.0f, 5.999f);
        nr[0] = choices[c][0];
        nr[1] = choices[c][1];
        nr[2] = choices[c][2];
        nr[3] = 0.0f;
        if (i % 40 == 3)
            nr[0] = nr[1] = nr[2] = NAN;
        if (i % 7 == 0) {
            memcpy(s.kp + s.k * 3, p, 3 * sizeof *p);
            ++s.k;
        }
        if (i % 50 == 11)
            p[1] = NAN;
    }
    return s;
}

static void random_surface_free(random_surface *s)
{
    free(s->xyz);
    free(s->normals);
    free(s->kp);
}

START_TEST(random_frames_equal_cpu_twin)
{
    random_surface s = random_surface_make(20000, 7);
    const float radii[3] = {0.002f, 0.01f, 0.03f};
    for (int r = 0; r < 3; ++r)
        for (int holes = 0; holes < 2; ++holes) {
            char name[64];
            snprintf(name, sizeof name, "random r %.3f holes %d", (double)radii[r], holes);
            check_gpu_against_cpu(name, s.xyz, s.normals, s.n, s.kp, s.k, radii[r], holes);
        }
    random_surface_free(&s);
}
END_TEST

START_TEST(bad_input_is_refused_and_context_stays_usable)
{
    grip_ctx *ctx = grip_test_ctx();
    random_surface s = random_surface_make(2000, 3);
    float f[9 * 4];
    ck_assert_int_eq(grip_board_lrf_cuda_host(ctx, s.xyz, GRIP_MEM_HOST, s.normals, GRIP_MEM_HOST, s.n, s.kp, 0, 0.01f, 1, NULL),
                     GRIP_OK);
    ck_assert_int_eq(grip_board_lrf_cuda_host(ctx, s.xyz, GRIP_MEM_HOST, s.normals, GRIP_MEM_HOST, s.n, s.kp, 4, 0.0f, 1, f),
                     GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(grip_ctx_error_text(ctx), "board.radius"));
    ck_assert_int_eq(grip_board_lrf_cuda_host(ctx, s.xyz, GRIP_MEM_HOST, NULL, GRIP_MEM_HOST, s.n, s.kp, 4, 0.01f, 1, f), GRIP_EINVAL);
    ck_assert_int_eq(grip_board_lrf_cuda_host(ctx, s.xyz, GRIP_MEM_HOST, s.normals, GRIP_MEM_HOST, s.n, s.kp, 4, NAN, 1, f),
                     GRIP_EINVAL);
    /* a keypoint far from the surface gets a NaN frame; the others are computed: the context is usable */
    s.kp[0] = 10.0f;
    ck_assert_int_eq(grip_board_lrf_cuda_host(ctx, s.xyz, GRIP_MEM_HOST, s.normals, GRIP_MEM_HOST, s.n, s.kp, 4, 0.02f, 1, f),
                     GRIP_OK);
    for (int j = 0; j < 9; ++j)
        ck_assert(isnan(f[j]));
    ck_assert(!isnan(f[9 + 8]));
    random_surface_free(&s);
    grip_ctx_free(ctx);
}
END_TEST

static Suite *suite(void)
{
    /* one case each, so that CK_RUN_CASE runs one under a sanitizer */
    Suite *s = suite_create("board_cuda");
    TCase *on_tutorial = tcase_create("tutorial"), *on_random = tcase_create("random"),
          *bad = tcase_create("bad_input");
    tcase_set_timeout(on_tutorial, 300);
    tcase_set_timeout(on_random, 300);
    tcase_add_test(on_tutorial, tutorial_frames_equal_cpu_twin);
    tcase_add_test(on_random, random_frames_equal_cpu_twin);
    tcase_add_test(bad, bad_input_is_refused_and_context_stays_usable);
    suite_add_tcase(s, on_tutorial);
    suite_add_tcase(s, on_random);
    suite_add_tcase(s, bad);
    return s;
}

int main(void)
{
    return grip_test_run_gpu(suite());
}
