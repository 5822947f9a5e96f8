/* test_board.c -- BOARD local reference frames against PCL 1.13 on the tutorial's clouds (radius 0.015, find
 * holes on, PCL's normals and keypoints): the same NaN rows and every other frame within 1e-4. */
#include "group_tutorial.h"
#include "group/board_lrf.h"

#include <time.h>

typedef struct board_case {
    host_cloud cloud;
    float *normals, *keypoints, *expected;
    size_t k;
} board_case;

static board_case board_case_load(const char *cloud_rel, const char *normals_rel, const char *keypoints_rel,
                                  const char *frames_rel)
{
    board_case b;
    char path[4096], err[512];
    ck_assert(grip_test_data_path(path, sizeof path, cloud_rel));
    ck_assert_msg(cloud_read(path, &b.cloud, err, sizeof err) == 0, "%s", err);
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

/* Computes the frames and compares them row by row with PCL's. */
static void check_against_pcl(const char *name, const char *cloud_rel, const char *normals_rel,
                              const char *keypoints_rel, const char *frames_rel)
{
    grip_ctx *ctx = grip_test_ctx();
    board_case b = board_case_load(cloud_rel, normals_rel, keypoints_rel, frames_rel);
    float *frames = malloc(b.k * 9 * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(grip_board_lrf(ctx, b.cloud.xyz, b.normals, b.cloud.n, NULL, b.keypoints, b.k, 0.015f, 1, frames),
                     GRIP_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    size_t nan_rows = 0, nan_mismatch = 0, off = 0;
    double worst = 0.0;
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
        if (row > 1e-4) {
            ++off;
            fprintf(stderr, "%s keypoint %zu: max |diff| %.3g\n  got  %+.5f %+.5f %+.5f | %+.5f %+.5f %+.5f | %+.5f %+.5f %+.5f\n"
                            "  want %+.5f %+.5f %+.5f | %+.5f %+.5f %+.5f | %+.5f %+.5f %+.5f\n", name, i, row,
                    got[0], got[1], got[2], got[3], got[4], got[5], got[6], got[7], got[8],
                    want[0], want[1], want[2], want[3], want[4], want[5], want[6], want[7], want[8]);
        } else {
            worst = fmax(worst, row);
        }
    }
    fprintf(stderr, "%s: %zu frames in %.1f ms, %zu NaN (PCL), %zu NaN mismatches, %zu beyond 1e-4, max |diff| of the rest %.3g\n",
            name, b.k, (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6, nan_rows,
            nan_mismatch, off, worst);
    ck_assert_uint_eq(nan_mismatch, 0);
    ck_assert_uint_eq(off, 0);
    free(frames);
    board_case_free(&b);
    grip_ctx_free(ctx);
}

START_TEST(model_frames_equal_pcl)
{
    check_against_pcl("model", MODEL_CLOUD, TUTORIAL "model_normals.f32.gz", TUTORIAL "model_keypoints.u32.gz",
                      TUTORIAL "model_board_rf.f32.gz");
}
END_TEST

START_TEST(scene_frames_equal_pcl)
{
    check_against_pcl("scene", SCENE_CLOUD, TUTORIAL "scene_normals.f32.gz", TUTORIAL "scene_keypoints.u32.gz",
                      TUTORIAL "scene_board_rf.f32.gz");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("board");
    TCase *pcl = tcase_create("pcl_tutorial");
    tcase_set_timeout(pcl, 120);
    tcase_add_test(pcl, model_frames_equal_pcl);
    tcase_add_test(pcl, scene_frames_equal_pcl);
    suite_add_tcase(s, pcl);
    return s;
}

int main(void) { return grip_test_run_with_data(suite(), TUTORIAL "scene_board_rf.f32.gz"); }
