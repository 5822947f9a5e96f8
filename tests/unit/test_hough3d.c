/* test_hough3d.c -- Hough 3D voting grouping.
 *
 * On PCL's tutorial (PCL's keypoints, correspondences and BOARD frames; bin 0.01, threshold 5, interpolation on,
 * distance weight off) the voting finds PCL's single maximum, whose voters contain PCL's 20 members, and after
 * RANSAC the instance is PCL's (same 20 members, pose equal to float precision); on grip's own BOARD frames
 * (which differ from PCL's in 23 of 4433 x axes, see test_board.c) it is the same instance. On synthetic data: votes of
 * consistent correspondences meet in one bin whatever the frames, with and without interpolation; NaN frames
 * cast no vote; bad input is refused with a clear error. */
#include "group_tutorial.h"
#include "group/board_lrf.h"
#include "group/hough3d.h"

typedef struct hough_inputs {
    tutorial t;
    float *model_rf, *scene_rf;
} hough_inputs;

static hough_inputs hough_inputs_load(void)
{
    hough_inputs h;
    h.t = tutorial_load();
    h.model_rf = read_f32(TUTORIAL "model_board_rf.f32.gz", h.t.n_model_kp, 9);
    h.scene_rf = read_f32(TUTORIAL "scene_board_rf.f32.gz", h.t.n_scene_kp, 9);
    return h;
}

static void hough_inputs_free(hough_inputs *h)
{
    tutorial_free(&h->t);
    free(h->model_rf);
    free(h->scene_rf);
}

static grip_hough3d_params tutorial_params(void)
{
    grip_hough3d_params p = grip_hough3d_params_default();
    p.bin_size = (double)0.01f; /* the tutorial passes float literals to PCL's double setters */
    p.threshold = (double)5.0f;
    p.use_interpolation = 1;
    p.use_distance_weight = 0;
    return p;
}

START_TEST(voting_finds_pcl_maximum)
{
    grip_ctx *ctx = grip_test_ctx();
    hough_inputs h = hough_inputs_load();
    pcl_instance pcl[2];
    ck_assert_uint_eq(read_instances("hough3d", pcl, 2), 1);
    grip_hough3d_params p = tutorial_params();
    grip_cluster *c = NULL;
    size_t n = 0;
    ck_assert_int_eq(grip_hough3d_vote(ctx, &p, h.t.model_kp, h.model_rf, h.t.n_model_kp, h.t.scene_kp, h.scene_rf,
                                       h.t.n_scene_kp, h.t.corr, h.t.n_corr, &c, &n), GRIP_OK);
    ck_assert_uint_eq(n, 1);
    fprintf(stderr, "hough maximum: %u voters, value %.4f\n", c[0].n_members, c[0].votes);
    ck_assert_double_ge(c[0].votes, 5.0);
    assert_has_pcl_members("hough maximum", 0, &c[0], h.t.corr, &pcl[0]);
    for (uint32_t i = 1; i < c[0].n_members; ++i) /* voters in correspondence order */
        ck_assert_uint_lt(c[0].members[i - 1], c[0].members[i]);
    grip_clusters_free(c, n);
    hough_inputs_free(&h);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(instance_after_ransac_is_pcl_instance)
{
    grip_ctx *ctx = grip_test_ctx();
    hough_inputs h = hough_inputs_load();
    pcl_instance pcl[2];
    ck_assert_uint_eq(read_instances("hough3d", pcl, 2), 1);
    grip_hough3d_params p = tutorial_params();
    grip_cluster *c = NULL;
    size_t n = 0;
    ck_assert_int_eq(grip_hough3d_cluster(ctx, &p, h.t.model_kp, h.model_rf, h.t.n_model_kp, h.t.scene_kp, h.scene_rf,
                                          h.t.n_scene_kp, h.t.corr, h.t.n_corr, &c, &n), GRIP_OK);
    ck_assert_uint_eq(n, 1);
    assert_is_pcl_instance("hough instance", 0, &c[0], &pcl[0], &h.t);
    grip_clusters_free(c, n);
    hough_inputs_free(&h);
    grip_ctx_free(ctx);
}
END_TEST

/* BOARD frames computed here from the cloud and PCL's normals (radius 0.015, find holes). malloc'd, k x 9. */
static float *board_frames(const char *cloud_rel, const char *normals_rel, const float *keypoints, size_t k)
{
    host_cloud cloud = grip_test_read_cloud(cloud_rel);
    float *normals = read_f32(normals_rel, cloud.n, 4), *frames = malloc(k * 9 * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    grip_ctx *ctx = grip_test_ctx();
    ck_assert_int_eq(grip_board_lrf(ctx, cloud.xyz, normals, cloud.n, NULL, keypoints, k, 0.015f, 1, frames), GRIP_OK);
    grip_ctx_free(ctx);
    free(normals);
    host_cloud_free(&cloud);
    return frames;
}

START_TEST(own_board_frames_find_the_same_instance)
{
    grip_ctx *ctx = grip_test_ctx();
    tutorial t = tutorial_load();
    pcl_instance pcl[2];
    ck_assert_uint_eq(read_instances("hough3d", pcl, 2), 1);
    float *model_rf = board_frames(MODEL_CLOUD, TUTORIAL "model_normals.f32.gz", t.model_kp, t.n_model_kp);
    float *scene_rf = board_frames(SCENE_CLOUD, TUTORIAL "scene_normals.f32.gz", t.scene_kp, t.n_scene_kp);
    grip_hough3d_params p = tutorial_params();
    grip_cluster *c = NULL;
    size_t n = 0;
    ck_assert_int_eq(grip_hough3d_cluster(ctx, &p, t.model_kp, model_rf, t.n_model_kp, t.scene_kp, scene_rf,
                                          t.n_scene_kp, t.corr, t.n_corr, &c, &n), GRIP_OK);
    ck_assert_uint_ge(n, 1);
    size_t best = 0, shared = 0;
    for (size_t i = 0; i < n; ++i) { /* the instance sharing most members with PCL's */
        size_t s = 0;
        for (size_t k = 0; k < pcl[0].n; ++k)
            s += (size_t)has_pair(&c[i], t.corr, pcl[0].pairs[k][0], pcl[0].pairs[k][1]);
        if (s > shared) {
            shared = s;
            best = i;
        }
    }
    double moved = mean_displacement(c[best].pose, pcl[0].pose, t.model_kp, t.n_model_kp);
    fprintf(stderr, "hough on grip's BOARD frames: %zu instances; best %u members, %zu shared with PCL's %zu, mean "
                    "keypoint shift %.3g m\n", n, c[best].n_members, shared, pcl[0].n, moved);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(c[best].n_members, pcl[0].n);
    ck_assert_uint_eq(shared, pcl[0].n);
    ck_assert_double_le(moved, 1e-5);
    grip_clusters_free(c, n);
    free(model_rf);
    free(scene_rf);
    tutorial_free(&t);
    grip_ctx_free(ctx);
}
END_TEST

/* ---- synthetic ---------------------------------------------------------------------------------------------- */

/* n model keypoints with random frames; the first n_in appear in the scene moved by a rigid pose (points and
 * frames), the rest are matched to random scene points with random frames. */
#define SYN_MAX 64
typedef struct synthetic {
    float model[SYN_MAX * 3], scene[SYN_MAX * 3], model_rf[SYN_MAX * 9], scene_rf[SYN_MAX * 9];
    grip_corr corr[SYN_MAX];
    double pose[16];
} synthetic;

static void random_frame(uint64_t *rng, float rf[9])
{
    double a = grip_test_uniform(rng, 0.0f, 6.28f), b = grip_test_uniform(rng, -1.5f, 1.5f);
    double x[3] = {cos(a) * cos(b), sin(a) * cos(b), sin(b)};
    double t[3] = {-sin(a), cos(a), 0.0};
    double y[3] = {x[1] * t[2] - x[2] * t[1], x[2] * t[0] - x[0] * t[2], x[0] * t[1] - x[1] * t[0]};
    for (int d = 0; d < 3; ++d) {
        rf[d] = (float)x[d];
        rf[3 + d] = (float)t[d];
        rf[6 + d] = (float)y[d];
    }
}

static void synthetic_make(synthetic *s, size_t n_in, size_t n, uint64_t seed)
{
    uint64_t rng = seed;
    double a = 1.1, ca = cos(a), sa = sin(a);
    double pose[16] = {1, 0, 0, 0.4, 0, ca, -sa, 0.1, 0, sa, ca, 0.9, 0, 0, 0, 1};
    memcpy(s->pose, pose, sizeof pose);
    for (size_t i = 0; i < n; ++i) {
        for (int d = 0; d < 3; ++d)
            s->model[i * 3 + d] = grip_test_uniform(&rng, -0.1f, 0.1f);
        random_frame(&rng, s->model_rf + i * 9);
        if (i < n_in) {
            for (int r = 0; r < 3; ++r) {
                double p = pose[r * 4 + 3];
                for (int c = 0; c < 3; ++c)
                    p += pose[r * 4 + c] * s->model[i * 3 + c];
                s->scene[i * 3 + r] = (float)p;
                for (int axis = 0; axis < 3; ++axis) {
                    double v = 0.0;
                    for (int c = 0; c < 3; ++c)
                        v += pose[r * 4 + c] * s->model_rf[i * 9 + axis * 3 + c];
                    s->scene_rf[i * 9 + axis * 3 + r] = (float)v;
                }
            }
        } else {
            for (int d = 0; d < 3; ++d)
                s->scene[i * 3 + d] = grip_test_uniform(&rng, -1.0f, 1.0f);
            random_frame(&rng, s->scene_rf + i * 9);
        }
        s->corr[i] = (grip_corr){(uint32_t)i, (uint32_t)i, 0.02f * (float)(i % 7)};
    }
}

static void assert_one_instance_of_inliers(const synthetic *s, const grip_hough3d_params *p, size_t n_in, size_t n)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_cluster *c = NULL;
    size_t nc = 0;
    ck_assert_int_eq(grip_hough3d_cluster(ctx, p, s->model, s->model_rf, n, s->scene, s->scene_rf, n, s->corr, n, &c,
                                          &nc), GRIP_OK);
    ck_assert_uint_eq(nc, 1);
    ck_assert_uint_eq(c[0].n_members, n_in);
    for (uint32_t i = 0; i < n_in; ++i)
        ck_assert_uint_eq(c[0].members[i], i);
    ck_assert_double_le(pose_max_difference(c[0].pose, s->pose), 1e-5);
    grip_clusters_free(c, nc);
    grip_ctx_free(ctx);
}

START_TEST(consistent_votes_meet_in_one_bin)
{
    synthetic s;
    synthetic_make(&s, 20, 40, 11);
    grip_hough3d_params p = grip_hough3d_params_default();
    p.bin_size = 0.02;
    p.threshold = 5.0;
    assert_one_instance_of_inliers(&s, &p, 20, 40);
    p.use_interpolation = 0;
    assert_one_instance_of_inliers(&s, &p, 20, 40);
    p.use_interpolation = 1;
    p.use_distance_weight = 1;
    p.threshold = 3.0;
    assert_one_instance_of_inliers(&s, &p, 20, 40);
    p.use_distance_weight = 0;
    p.threshold = -0.5; /* half of the largest bin */
    assert_one_instance_of_inliers(&s, &p, 20, 40);
}
END_TEST

START_TEST(nan_frames_cast_no_vote)
{
    grip_ctx *ctx = grip_test_ctx();
    synthetic s;
    synthetic_make(&s, 12, 16, 5); /* 4 outliers keep the votes' box wider than one bin */
    for (size_t i = 0; i < 6; ++i)
        s.scene_rf[i * 9 + 4] = NAN;
    s.model_rf[7 * 9] = NAN;
    grip_hough3d_params p = grip_hough3d_params_default();
    p.bin_size = 0.02;
    p.threshold = 2.0;
    p.use_interpolation = 0; /* whole votes: the 5 valid inliers make a bin of 5, each outlier one of 1 */
    grip_cluster *c = NULL;
    size_t n = 0;
    ck_assert_int_eq(grip_hough3d_vote(ctx, &p, s.model, s.model_rf, 16, s.scene, s.scene_rf, 16, s.corr, 16, &c, &n),
                     GRIP_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(c[0].n_members, 5);
    for (uint32_t i = 0; i < 5; ++i)
        ck_assert(c[0].members[i] >= 6 && c[0].members[i] != 7 && c[0].members[i] < 12);
    grip_clusters_free(c, n);
    for (size_t i = 0; i < 16; ++i) /* no finite vote at all: no clusters */
        s.scene_rf[i * 9] = NAN;
    ck_assert_int_eq(grip_hough3d_cluster(ctx, &p, s.model, s.model_rf, 16, s.scene, s.scene_rf, 16, s.corr, 16, &c,
                                          &n), GRIP_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(c);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(bad_input_is_refused_clearly)
{
    grip_ctx *ctx = grip_test_ctx();
    synthetic s;
    synthetic_make(&s, 5, 10, 1);
    grip_hough3d_params p = grip_hough3d_params_default();
    p.bin_size = 0.02;
    grip_cluster sentinel;
    grip_cluster *c = &sentinel;
    size_t n = 99;
    ck_assert_int_eq(grip_hough3d_cluster(ctx, &p, s.model, s.model_rf, 10, s.scene, s.scene_rf, 10, NULL, 0, &c, &n),
                     GRIP_OK);
    ck_assert_ptr_null(c); /* no correspondences: no clusters, not an error */
    ck_assert_uint_eq(n, 0);
    s.corr[3].scene = 10;
    ck_assert_int_eq(
        grip_hough3d_cluster(ctx, &p, s.model, s.model_rf, 10, s.scene, s.scene_rf, 10, s.corr, 10, &c, &n),
        GRIP_EINVAL);
    ck_assert_ptr_nonnull(
        strstr(ctx->last_error, "group.hough3d: correspondence 3: scene keypoint 10 is out of range (10 keypoints)"));
    s.corr[3].scene = 3;
    ck_assert_int_eq(grip_hough3d_cluster(ctx, &p, s.model, NULL, 10, s.scene, s.scene_rf, 10, s.corr, 10, &c, &n),
                     GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "frames must not be NULL"));
    p.bin_size = -1.0;
    ck_assert_int_eq(
        grip_hough3d_cluster(ctx, &p, s.model, s.model_rf, 10, s.scene, s.scene_rf, 10, s.corr, 10, &c, &n),
        GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "group.hough3d.bin_size"));
    p.bin_size = 1e-12; /* a grid of more than 2^31 bins along an axis */
    ck_assert_int_eq(
        grip_hough3d_cluster(ctx, &p, s.model, s.model_rf, 10, s.scene, s.scene_rf, 10, s.corr, 10, &c, &n),
        GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "is too small"));
    ck_assert_ptr_null(c);
    ck_assert_uint_eq(n, 0);
    grip_ctx_free(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hough3d");
    TCase *pcl = tcase_create("pcl_tutorial");
    tcase_add_test(pcl, voting_finds_pcl_maximum);
    tcase_add_test(pcl, instance_after_ransac_is_pcl_instance);
    tcase_add_test(pcl, own_board_frames_find_the_same_instance);
    suite_add_tcase(s, pcl);
    TCase *syn = tcase_create("synthetic");
    tcase_add_test(syn, consistent_votes_meet_in_one_bin);
    tcase_add_test(syn, nan_frames_cast_no_vote);
    tcase_add_test(syn, bad_input_is_refused_clearly);
    suite_add_tcase(s, syn);
    return s;
}

int main(void) { return grip_test_run_with_data(suite(), TUTORIAL "correspondences.tsv"); }
