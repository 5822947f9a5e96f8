/* test_board.c -- BOARD local reference frames.
 *
 * Against PCL 1.13 on the tutorial's clouds (radius 0.015, find holes on, PCL's normals and keypoints): the same
 * NaN rows, every z axis within 1e-4, and every frame within 1e-4 but for 1 model and 22 scene frames (of 686 and
 * 3747) whose x axis PCL picks among near-equal candidates by float rounding: support points at the same angle
 * around z (the collinear points of a range image's scan lines) or normals at the same angle to z (|diff| < 1e-6),
 * whose order PCL's float SVD and its rand() sector origin decide. Each of those was traced through PCL's own code.
 * With nearest-first ties (GRIP_BOARD_TIES_NEAREST, the order the GPU shares): the same NaN rows and z axes.
 * Synthetic patches check the axes' geometry. */
#include "group_tutorial.h"
#include "group/board_lrf.h"
#include "group/board_lrf_math.h"
#include "host_util.h"

typedef struct board_case {
    host_cloud cloud;
    float *normals, *keypoints, *expected;
    size_t k;
} board_case;

static board_case board_case_load(const char *cloud_rel, const char *normals_rel, const char *keypoints_rel,
                                  const char *frames_rel)
{
    board_case b;
    b.cloud = grip_test_read_cloud(cloud_rel);
    b.normals = read_f32(normals_rel, b.cloud.n, 4);
    b.keypoints = keypoints_xyz(cloud_rel, keypoints_rel, &b.k);
    b.expected = read_f32(frames_rel, b.k, 9);
    return b;
}

static void board_case_free(board_case *b)
{
    host_cloud_free(&b->cloud);
    free(b->normals);
    free(b->keypoints);
    free(b->expected);
}

static int row_is_nan(const float *f)
{
    for (int i = 0; i < 9; ++i)
        if (!isnan(f[i]))
            return 0;
    return 1;
}

/* Computes the frames (ties decided as `ties` says) and compares them row by row with PCL's: the same NaN rows,
 * every z axis within 1e-4, and at most max_off frames beyond 1e-4. */
static void check_against_pcl_ties(const char *name, const char *cloud_rel, const char *normals_rel,
                                   const char *keypoints_rel, const char *frames_rel, grip_board_ties ties,
                                   size_t max_off)
{
    grip_ctx *ctx = grip_test_ctx();
    board_case b = board_case_load(cloud_rel, normals_rel, keypoints_rel, frames_rel);
    float *frames = malloc(b.k * 9 * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    double t0 = host_now_ms();
    ck_assert_int_eq(
        grip_board_lrf_ties(ctx, b.cloud.xyz, b.normals, b.cloud.n, NULL, b.keypoints, b.k, 0.015f, 1, ties, frames),
        GRIP_OK);
    double ms = host_now_ms() - t0;
    size_t nan_rows = 0, nan_mismatch = 0, off = 0;
    double worst = 0.0, worst_z = 0.0;
    for (size_t i = 0; i < b.k; ++i) {
        const float *got = frames + i * 9, *want = b.expected + i * 9;
        int gn = row_is_nan(got), wn = row_is_nan(want);
        nan_rows += wn;
        if (gn != wn) {
            ++nan_mismatch;
            fprintf(stderr, "%s keypoint %zu: NaN here %d, in PCL %d\n", name, i, gn, wn);
            continue;
        }
        if (wn)
            continue;
        double row = 0.0;
        for (int j = 0; j < 9; ++j)
            row = fmax(row, fabs((double)got[j] - (double)want[j]));
        for (int j = 6; j < 9; ++j)
            worst_z = fmax(worst_z, fabs((double)got[j] - (double)want[j]));
        if (row > 1e-4) {
            if (off++ < max_off || ties == GRIP_BOARD_TIES_PCL)
                fprintf(stderr, "%s keypoint %zu: x axis differs by %.3g\n", name, i, row);
        } else {
            worst = fmax(worst, row);
        }
    }
    fprintf(stderr,
            "%s: %zu frames in %.1f ms, %zu NaN (PCL), %zu NaN mismatches, %zu beyond 1e-4, max |diff| of the "
            "rest %.3g, of all z axes %.3g\n",
            name, b.k, ms, nan_rows, nan_mismatch, off, worst, worst_z);
    ck_assert_uint_eq(nan_mismatch, 0);
    ck_assert_double_le(worst_z, 1e-4);
    ck_assert_double_le(worst, 1e-4);
    ck_assert_uint_le(off, max_off);
    free(frames);
    board_case_free(&b);
    grip_ctx_free(ctx);
}

static void check_against_pcl(const char *name, const char *cloud_rel, const char *normals_rel,
                              const char *keypoints_rel, const char *frames_rel, size_t max_off)
{
    check_against_pcl_ties(name, cloud_rel, normals_rel, keypoints_rel, frames_rel, GRIP_BOARD_TIES_PCL, max_off);
}

START_TEST(model_frames_equal_pcl)
{
    check_against_pcl("model", MODEL_CLOUD, TUTORIAL "model_normals.f32.gz", TUTORIAL "model_keypoints.u32.gz",
                      TUTORIAL "model_board_rf.f32.gz", 1);
}
END_TEST

START_TEST(scene_frames_equal_pcl)
{
    check_against_pcl("scene", SCENE_CLOUD, TUTORIAL "scene_normals.f32.gz", TUTORIAL "scene_keypoints.u32.gz",
                      TUTORIAL "scene_board_rf.f32.gz", 22);
}
END_TEST

/* Nearest-first ties (the GPU's order): the plane and its orientation are PCL's (every z axis within 1e-4, the
 * same NaN rows); the x axis is built on another of equal candidates wherever neighbouring points share a normal,
 * which on the range-image scene is one frame in eight (450 of 3747; the model: 1, as with PCL's ties). */
START_TEST(nearest_ties_keep_pcl_z_axes)
{
    check_against_pcl_ties("model, nearest ties", MODEL_CLOUD, TUTORIAL "model_normals.f32.gz",
                           TUTORIAL "model_keypoints.u32.gz", TUTORIAL "model_board_rf.f32.gz", GRIP_BOARD_TIES_NEAREST,
                           1);
    check_against_pcl_ties("scene, nearest ties", SCENE_CLOUD, TUTORIAL "scene_normals.f32.gz",
                           TUTORIAL "scene_keypoints.u32.gz", TUTORIAL "scene_board_rf.f32.gz", GRIP_BOARD_TIES_NEAREST,
                           450);
}
END_TEST

/* ---- synthetic ---------------------------------------------------------------------------------------------- */

/* A 1 mm grid patch on the plane z = 0 around the origin (the keypoint), within `r` and with y >= y_min, whose
 * normals lean outwards by `lean` per metre of distance, turned to point along sign * z. */
typedef struct patch {
    float xyz[1024 * 3], normals[1024 * 4];
    size_t n;
} patch;

static void patch_make(patch *p, float r, float y_min, float lean, float sign)
{
    p->n = 0;
    for (int i = -15; i <= 15; ++i)
        for (int j = -15; j <= 15; ++j) {
            float x = 0.001f * (float)i, y = 0.001f * (float)j;
            if (x * x + y * y >= r * r || y < y_min)
                continue;
            float nx = lean * x, ny = lean * y, nz = 1.0f, len = sqrtf(nx * nx + ny * ny + 1.0f);
            float *q = p->xyz + p->n * 3, *nrm = p->normals + p->n * 4;
            q[0] = x;
            q[1] = y;
            q[2] = 0.0f;
            nrm[0] = sign * nx / len;
            nrm[1] = sign * ny / len;
            nrm[2] = sign * nz / len;
            nrm[3] = 0.0f;
            ++p->n;
        }
}

static void assert_axis(const float *got, float x, float y, float z, double tol)
{
    ck_assert_double_le(fabs(got[0] - x), tol);
    ck_assert_double_le(fabs(got[1] - y), tol);
    ck_assert_double_le(fabs(got[2] - z), tol);
}

/* z is the plane's normal turned toward the normals; x points to the most tilted normal; y = z x x. */
START_TEST(axes_follow_plane_and_most_tilted_normal)
{
    grip_ctx *ctx = grip_test_ctx();
    static patch p;
    patch_make(&p, 0.0105f, -1.0f, 0.0f, 1.0f);
    size_t tilted = 0; /* the point (0.006, 0.008): its normal leans most */
    for (size_t i = 0; i < p.n; ++i)
        if (fabsf(p.xyz[i * 3] - 0.006f) < 1e-6f && fabsf(p.xyz[i * 3 + 1] - 0.008f) < 1e-6f)
            tilted = i;
    p.normals[tilted * 4 + 0] = 0.6f;
    p.normals[tilted * 4 + 2] = 0.8f;
    const float origin[3] = {0.0f, 0.0f, 0.0f};
    float f[9];
    for (int holes = 0; holes < 2; ++holes) {
        ck_assert_int_eq(grip_board_lrf(ctx, p.xyz, p.normals, p.n, NULL, origin, 1, 0.015f, holes, f), GRIP_OK);
        assert_axis(f + 6, 0.0f, 0.0f, 1.0f, 1e-6);
        assert_axis(f + 0, 0.6f, 0.8f, 0.0f, 1e-6);
        assert_axis(f + 3, -0.8f, 0.6f, 0.0f, 1e-6);
    }
    for (size_t i = 0; i < p.n * 4; ++i) /* normals pointing down turn z down */
        p.normals[i] = -p.normals[i];
    ck_assert_int_eq(grip_board_lrf(ctx, p.xyz, p.normals, p.n, NULL, origin, 1, 0.015f, 1, f), GRIP_OK);
    assert_axis(f + 6, 0.0f, 0.0f, -1.0f, 1e-6);
    grip_ctx_free(ctx);
}
END_TEST

/* A half disc (y >= 3 mm) of a dome: the support has a gap of half the circle with steep edges, and with
 * find_holes x points into its middle, (0, -1, 0); without, x points to a most tilted normal on the rim. */
START_TEST(x_points_into_the_hole_of_a_border_support)
{
    grip_ctx *ctx = grip_test_ctx();
    static patch p;
    patch_make(&p, 0.0145f, 0.003f, 20.0f, 1.0f);
    const float origin[3] = {0.0f, 0.0f, 0.0f};
    float f[9];
    ck_assert_int_eq(grip_board_lrf(ctx, p.xyz, p.normals, p.n, NULL, origin, 1, 0.015f, 1, f), GRIP_OK);
    assert_axis(f + 0, 0.0f, -1.0f, 0.0f, 1e-3);
    ck_assert_int_eq(grip_board_lrf(ctx, p.xyz, p.normals, p.n, NULL, origin, 1, 0.015f, 0, f), GRIP_OK);
    ck_assert_float_gt(f[1], 0.0f); /* toward the rim of the half disc */
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(too_small_or_normal_less_support_gives_nan)
{
    grip_ctx *ctx = grip_test_ctx();
    static patch p;
    patch_make(&p, 0.0105f, -1.0f, 1.0f, 1.0f);
    const float kp[6] = {0.0f, 0.0f, 0.0f, 0.05f, 0.0f, 0.0f}; /* the second sees 0 points within 1.5 cm */
    float f[18];
    ck_assert_int_eq(grip_board_lrf(ctx, p.xyz, p.normals, p.n, NULL, kp, 2, 0.015f, 1, f), GRIP_OK);
    ck_assert(!isnan(f[0]));
    for (int i = 9; i < 18; ++i)
        ck_assert(isnan(f[i]));
    for (size_t i = 0; i < p.n * 4; ++i)
        p.normals[i] = NAN;
    ck_assert_int_eq(grip_board_lrf(ctx, p.xyz, p.normals, p.n, NULL, kp, 1, 0.015f, 1, f), GRIP_OK);
    for (int i = 0; i < 9; ++i)
        ck_assert(isnan(f[i]));
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(bad_input_is_refused_clearly)
{
    grip_ctx *ctx = grip_test_ctx();
    static patch p;
    patch_make(&p, 0.0105f, -1.0f, 1.0f, 1.0f);
    const float kp[3] = {0.0f, 0.0f, 0.0f};
    float f[9];
    ck_assert_int_eq(grip_board_lrf(ctx, p.xyz, p.normals, p.n, NULL, kp, 0, 0.015f, 1, NULL), GRIP_OK);
    ck_assert_int_eq(grip_board_lrf(ctx, p.xyz, p.normals, p.n, NULL, kp, 1, 0.0f, 1, f), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "board.radius"));
    ck_assert_int_eq(grip_board_lrf(ctx, p.xyz, NULL, p.n, NULL, kp, 1, 0.015f, 1, f), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "normals must not be NULL"));
    ck_assert_int_eq(grip_board_lrf(ctx, p.xyz, p.normals, p.n, NULL, kp, 1, 0.015f, 1, NULL), GRIP_EINVAL);
    grip_ctx_free(ctx);
}
END_TEST

/* ---- the GPU's order of work (cuda/group/board_lrf.cu), replayed on the CPU ------------------------------------ */

static const float *sort_sqdist; /* qsort has no context: the squared distances of the list being sorted */

static int nearest_then_lower_index(const void *a, const void *b)
{
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    if (sort_sqdist[i] != sort_sqdist[j])
        return sort_sqdist[i] < sort_sqdist[j] ? -1 : 1;
    return (i > j) - (i < j);
}

/* The kernel's steps over a copy of the support in list order (idx NULL), its margin entries measured out of
 * order (lane by lane, strided as 32 lanes do, last lane first) and then folded; the same bits as the walk over the
 * surface with idx (the CPU twin's), which the GPU's test can only bound by its tolerance for cosf/sinf. */
static void assert_staged_equals_direct(const float *xyz, const float *normals, size_t n, const float *kp, float radius,
                                        int holes)
{
    float *sqdist_all = malloc(n * sizeof(float)), *sqdist = malloc(n * sizeof(float));
    float *staged_xyz = malloc(n * 3 * sizeof(float)), *staged_normals = malloc(n * 4 * sizeof(float));
    float *measured_cos = malloc(n * sizeof(float)), *measured_angle = malloc(n * sizeof(float));
    uint32_t *idx = malloc(n * sizeof(uint32_t)), count = 0;
    ck_assert(sqdist_all && sqdist && staged_xyz && staged_normals && measured_cos && measured_angle && idx);
    for (size_t i = 0; i < n; ++i) {
        const float d[3] = {xyz[i * 3] - kp[0], xyz[i * 3 + 1] - kp[1], xyz[i * 3 + 2] - kp[2]};
        sqdist_all[i] = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        if (sqdist_all[i] <= radius * radius)
            idx[count++] = (uint32_t)i;
    }
    sort_sqdist = sqdist_all;
    qsort(idx, count, sizeof *idx, nearest_then_lower_index);
    for (uint32_t j = 0; j < count; ++j) {
        sqdist[j] = sqdist_all[idx[j]];
        memcpy(staged_xyz + j * 3, xyz + (size_t)idx[j] * 3, 3 * sizeof(float));
        memcpy(staged_normals + j * 4, normals + (size_t)idx[j] * 4, 4 * sizeof(float));
        measured_cos[j] = measured_angle[j] = 12345.0f; /* off the margin: must stay unread */
    }
    const grip_board_support direct = {xyz, normals, idx, sqdist, count};
    const grip_board_support staged = {staged_xyz, staged_normals, NULL, sqdist, count};
    float want[9], got[9];
    grip_board_keypoint_frame(&direct, kp, holes, want);
    ck_assert_uint_ge(count, GRIP_BOARD_MIN_SUPPORT);
    float z[3], x_ref[3];
    grip_board_axes(&staged, holes, z, x_ref);
    for (int lane = 31; lane >= 0; --lane)
        for (uint32_t j = (uint32_t)lane; j < count; j += 32)
            if (!grip_board_off_margin(&staged, j))
                grip_board_margin_measure(&staged, j, kp, z, x_ref, holes, &measured_cos[j], &measured_angle[j]);
    grip_board_frame_from_axes(&staged, kp, z, x_ref, holes, measured_cos, measured_angle, got);
    ck_assert(!isnan(want[0]));
    for (int j = 0; j < 9; ++j)
        ck_assert_uint_eq(grip_test_float_bits(got[j]), grip_test_float_bits(want[j]));
    free(sqdist_all);
    free(sqdist);
    free(staged_xyz);
    free(staged_normals);
    free(measured_cos);
    free(measured_angle);
    free(idx);
}

/* The half dome (x into its hole), and a flat patch with duplicated points and normals tied to six values
 * (candidates of equal cosine and equal angle, where "first in list order" decides), keypoints across it. */
START_TEST(gpu_order_of_work_gives_the_same_bits)
{
    static patch p;
    const float origin[3] = {0.0f, 0.0f, 0.0f};
    patch_make(&p, 0.0145f, 0.003f, 20.0f, 1.0f);
    for (int holes = 0; holes < 2; ++holes)
        assert_staged_equals_direct(p.xyz, p.normals, p.n, origin, 0.015f, holes);

    static const float choices[6][3] = {{0, 0, 1},        {0.6f, 0, 0.8f},  {0, 0.6f, 0.8f},
                                        {-0.6f, 0, 0.8f}, {0, -0.8f, 0.6f}, {0.48f, 0.6f, 0.64f}};
    patch_make(&p, 0.0155f, -1.0f, 0.0f, 1.0f);
    for (size_t i = 0; i < p.n; ++i) {
        memcpy(p.normals + i * 4, choices[(i * 7) % 6], 3 * sizeof(float));
        if (i % 11 == 5) /* a duplicate of the point before it */
            memcpy(p.xyz + i * 3, p.xyz + (i - 1) * 3, 3 * sizeof(float));
    }
    for (size_t i = 0; i < p.n; i += 37)
        for (int holes = 0; holes < 2; ++holes)
            assert_staged_equals_direct(p.xyz, p.normals, p.n, p.xyz + i * 3, 0.006f, holes);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("board");
    TCase *pcl = tcase_create("pcl_tutorial");
    tcase_set_timeout(pcl, 120);
    tcase_add_test(pcl, model_frames_equal_pcl);
    tcase_add_test(pcl, scene_frames_equal_pcl);
    tcase_add_test(pcl, nearest_ties_keep_pcl_z_axes);
    suite_add_tcase(s, pcl);
    TCase *syn = tcase_create("synthetic");
    tcase_add_test(syn, axes_follow_plane_and_most_tilted_normal);
    tcase_add_test(syn, x_points_into_the_hole_of_a_border_support);
    tcase_add_test(syn, too_small_or_normal_less_support_gives_nan);
    tcase_add_test(syn, bad_input_is_refused_clearly);
    tcase_add_test(syn, gpu_order_of_work_gives_the_same_bits);
    suite_add_tcase(s, syn);
    return s;
}

int main(void)
{
    return grip_test_run_with_data(suite(), TUTORIAL "scene_board_rf.f32.gz");
}
