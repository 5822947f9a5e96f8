/* test_group_cuda.c (gpu) -- Hough 3D voting and geometric consistency on the GPU against their CPU twins.
 * The claims: the same clusters (members, in the same order), bin values equal to the bit (the GPU sums each bin in
 * the CPU's order; hough3d_cuda.h), and after RANSAC (the same host code on the same members) poses within 1e-4 --
 * in fact equal, which is printed.
 *  - PCL's tutorial (PCL's keypoints, correspondences and BOARD frames; Hough: bin 0.01, threshold 5; GC: size
 *    0.01, threshold 5), when the data is present, and on it PCL's instance for both;
 *  - random data: two rigid instances among outliers, descriptor distances drawn from a few values (ties in GC's
 *    visiting order), Hough with and without interpolation, distance weights and a relative threshold;
 *  - many kept sets (the GPU grows 32 seeds at once and grows again those after a kept one): 64 clustered instances
 *    in overlapping pairs, shuffled among outliers, threshold 5 and 0, candidate bits in shared and global memory;
 *  - bad input: no correspondences, fewer than three, collinear ones (a clear result, no NaN pose), an out-of-range
 *    correspondence (GRIP_EINVAL), and the context usable after each.
 * Skips (77) without a usable device. */
#include "group_tutorial.h"
#include "group/gc_cuda.h"
#include "group/hough3d_cuda.h"
#include "host_util.h"

#define POSE_TOLERANCE 1e-4

typedef grip_status (*hough_fn)(grip_ctx *, const grip_hough3d_params *, const float *, const float *, size_t,
                                const float *, const float *, size_t, const grip_corr *, size_t, grip_cluster **,
                                size_t *);
typedef grip_status (*gc_fn)(grip_ctx *, const grip_gc_params *, const float *, size_t, const float *, size_t,
                             const grip_corr *, size_t, grip_cluster **, size_t *);

/* Same clusters: same count, same members in the same order, same votes (bits), poses within POSE_TOLERANCE and
 * finite. Returns the number of clusters. */
static size_t assert_same_clusters(const char *name, const grip_cluster *cpu, size_t n_cpu, const grip_cluster *gpu,
                                   size_t n_gpu)
{
    ck_assert_msg(n_cpu == n_gpu, "%s: %zu clusters on the CPU, %zu on the GPU", name, n_cpu, n_gpu);
    double worst = 0.0;
    for (size_t c = 0; c < n_cpu; ++c) {
        ck_assert_msg(cpu[c].n_members == gpu[c].n_members, "%s cluster %zu: %u members on the CPU, %u on the GPU",
                      name, c, cpu[c].n_members, gpu[c].n_members);
        for (uint32_t i = 0; i < cpu[c].n_members; ++i)
            ck_assert_msg(cpu[c].members[i] == gpu[c].members[i], "%s cluster %zu member %u: %u vs %u", name, c, i,
                          cpu[c].members[i], gpu[c].members[i]);
        ck_assert_msg(cpu[c].votes == gpu[c].votes, "%s cluster %zu: votes %.17g vs %.17g", name, c, cpu[c].votes,
                      gpu[c].votes);
        for (int k = 0; k < 16; ++k) {
            ck_assert(isfinite(gpu[c].pose[k]));
            worst = fmax(worst, fabs(cpu[c].pose[k] - gpu[c].pose[k]));
        }
    }
    fprintf(stderr, "%s: %zu clusters alike, pose max |diff| %.3g\n", name, n_cpu, worst);
    ck_assert_double_le(worst, POSE_TOLERANCE);
    return n_cpu;
}

static size_t compare_hough(const char *name, hough_fn cpu_fn, hough_fn gpu_fn, const grip_hough3d_params *p,
                            const float *model, const float *model_rf, size_t n_model, const float *scene,
                            const float *scene_rf, size_t n_scene, const grip_corr *corr, size_t n_corr)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_cluster *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    double t0 = host_now_ms();
    ck_assert_int_eq(cpu_fn(ctx, p, model, model_rf, n_model, scene, scene_rf, n_scene, corr, n_corr, &a, &na),
                     GRIP_OK);
    double t1 = host_now_ms();
    grip_status st = gpu_fn(ctx, p, model, model_rf, n_model, scene, scene_rf, n_scene, corr, n_corr, &b, &nb);
    double t2 = host_now_ms();
    ck_assert_msg(st == GRIP_OK, "%s: %s", name, grip_ctx_error_text(ctx));
    fprintf(stderr, "%s: cpu %.2f ms, gpu %.2f ms\n", name, t1 - t0, t2 - t1);
    size_t n = assert_same_clusters(name, a, na, b, nb);
    grip_clusters_free(a, na);
    grip_clusters_free(b, nb);
    grip_ctx_free(ctx);
    return n;
}

static size_t compare_gc(const char *name, gc_fn cpu_fn, gc_fn gpu_fn, const grip_gc_params *p, const float *model,
                         size_t n_model, const float *scene, size_t n_scene, const grip_corr *corr, size_t n_corr)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_cluster *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    double t0 = host_now_ms();
    ck_assert_int_eq(cpu_fn(ctx, p, model, n_model, scene, n_scene, corr, n_corr, &a, &na), GRIP_OK);
    double t1 = host_now_ms();
    grip_status st = gpu_fn(ctx, p, model, n_model, scene, n_scene, corr, n_corr, &b, &nb);
    double t2 = host_now_ms();
    ck_assert_msg(st == GRIP_OK, "%s: %s", name, grip_ctx_error_text(ctx));
    fprintf(stderr, "%s: cpu %.2f ms, gpu %.2f ms\n", name, t1 - t0, t2 - t1);
    size_t n = assert_same_clusters(name, a, na, b, nb);
    grip_clusters_free(a, na);
    grip_clusters_free(b, nb);
    grip_ctx_free(ctx);
    return n;
}

/* ---- PCL's tutorial ----------------------------------------------------------------------------------------- */

static int tutorial_present(void)
{
    char path[4096];
    if (grip_test_data_path(path, sizeof path, TUTORIAL "correspondences.tsv") &&
        grip_test_data_path(path, sizeof path, TUTORIAL "scene_board_rf.f32.gz"))
        return 1;
    fprintf(stderr, "the tutorial data is absent, nothing checked\n");
    return 0;
}

START_TEST(tutorial_hough_equals_cpu_twin)
{
    if (!tutorial_present())
        return;
    tutorial t = tutorial_load();
    float *model_rf = read_f32(TUTORIAL "model_board_rf.f32.gz", t.n_model_kp, 9);
    float *scene_rf = read_f32(TUTORIAL "scene_board_rf.f32.gz", t.n_scene_kp, 9);
    grip_hough3d_params p = grip_hough3d_params_default();
    p.bin_size = (double)0.01f;
    p.threshold = (double)5.0f;
    compare_hough("tutorial hough votes", grip_hough3d_vote, grip_hough3d_vote_cuda, &p, t.model_kp, model_rf,
                  t.n_model_kp, t.scene_kp, scene_rf, t.n_scene_kp, t.corr, t.n_corr);
    ck_assert_uint_eq(compare_hough("tutorial hough instances", grip_hough3d_cluster, grip_hough3d_cluster_cuda, &p,
                                    t.model_kp, model_rf, t.n_model_kp, t.scene_kp, scene_rf, t.n_scene_kp, t.corr,
                                    t.n_corr),
                      1);
    free(model_rf);
    free(scene_rf);
    tutorial_free(&t);
}
END_TEST

START_TEST(tutorial_gc_equals_cpu_twin)
{
    if (!tutorial_present())
        return;
    tutorial t = tutorial_load();
    grip_gc_params p = grip_gc_params_default();
    p.size = (double)0.01f;
    p.threshold = 5;
    compare_gc("tutorial gc sets", grip_gc_consensus, grip_gc_consensus_cuda, &p, t.model_kp, t.n_model_kp, t.scene_kp,
               t.n_scene_kp, t.corr, t.n_corr);
    compare_gc("tutorial gc instances", grip_gc_cluster, grip_gc_cluster_cuda, &p, t.model_kp, t.n_model_kp, t.scene_kp,
               t.n_scene_kp, t.corr, t.n_corr);
    tutorial_free(&t);
}
END_TEST

/* ---- random data -------------------------------------------------------------------------------------------- */

typedef struct random_case {
    float *model, *scene, *model_rf, *scene_rf;
    grip_corr *corr;
    size_t n_model, n_scene, n_corr;
} random_case;

static void random_frame(uint64_t *rng, float rf[9])
{
    double a = grip_test_uniform(rng, 0.0f, 6.28f), b = grip_test_uniform(rng, -1.5f, 1.5f);
    double x[3] = {cos(a) * cos(b), sin(a) * cos(b), sin(b)}, t[3] = {-sin(a), cos(a), 0.0};
    double y[3] = {x[1] * t[2] - x[2] * t[1], x[2] * t[0] - x[0] * t[2], x[0] * t[1] - x[1] * t[0]};
    for (int d = 0; d < 3; ++d) {
        rf[d] = (float)x[d];
        rf[3 + d] = (float)t[d];
        rf[6 + d] = (float)y[d];
    }
}

/* n_model model keypoints with random frames; the first n_in of them appear twice in the scene, under two rigid
 * poses (points and frames, with noise), the rest of the n_corr correspondences are outliers; distances from 8
 * values. */
static random_case random_case_make(size_t n_model, size_t n_in, size_t n_corr, uint64_t seed)
{
    random_case r;
    uint64_t rng = seed;
    r.n_model = n_model;
    r.n_scene = n_corr;
    r.n_corr = n_corr;
    r.model = malloc(n_model * 3 * sizeof *r.model);
    r.model_rf = malloc(n_model * 9 * sizeof *r.model_rf);
    r.scene = malloc(n_corr * 3 * sizeof *r.scene);
    r.scene_rf = malloc(n_corr * 9 * sizeof *r.scene_rf);
    r.corr = malloc(n_corr * sizeof *r.corr);
    ck_assert(r.model && r.model_rf && r.scene && r.scene_rf && r.corr);
    for (size_t i = 0; i < n_model; ++i) {
        for (int d = 0; d < 3; ++d)
            r.model[i * 3 + d] = grip_test_uniform(&rng, -0.1f, 0.1f);
        random_frame(&rng, r.model_rf + i * 9);
    }
    const double angles[2] = {1.1, -0.4}, shift[2][3] = {{0.4, 0.1, 0.9}, {-0.3, 0.2, 1.1}};
    for (size_t j = 0; j < n_corr; ++j) {
        size_t inst = j / n_in, i = j % n_in;
        grip_corr *c = &r.corr[j];
        c->scene = (uint32_t)j;
        c->sqdist = 0.01f * (float)(int)grip_test_uniform(&rng, 0.0f, 7.99f);
        if (inst < 2) {
            double ca = cos(angles[inst]), sa = sin(angles[inst]);
            double R[9] = {ca, -sa, 0, sa, ca, 0, 0, 0, 1};
            c->model = (uint32_t)i;
            for (int row = 0; row < 3; ++row) {
                double p = shift[inst][row];
                for (int col = 0; col < 3; ++col)
                    p += R[row * 3 + col] * r.model[i * 3 + col];
                r.scene[j * 3 + row] = (float)p + grip_test_uniform(&rng, -0.001f, 0.001f);
                for (int axis = 0; axis < 3; ++axis) {
                    double v = 0.0;
                    for (int col = 0; col < 3; ++col)
                        v += R[row * 3 + col] * r.model_rf[i * 9 + axis * 3 + col];
                    r.scene_rf[j * 9 + axis * 3 + row] = (float)v;
                }
            }
        } else {
            c->model = (uint32_t)grip_test_uniform(&rng, 0.0f, (float)n_model - 0.01f);
            for (int d = 0; d < 3; ++d)
                r.scene[j * 3 + d] = grip_test_uniform(&rng, -1.0f, 1.0f);
            random_frame(&rng, r.scene_rf + j * 9);
        }
    }
    return r;
}

static void random_case_free(random_case *r)
{
    free(r->model);
    free(r->scene);
    free(r->model_rf);
    free(r->scene_rf);
    free(r->corr);
}

START_TEST(random_hough_equals_cpu_twin)
{
    random_case r = random_case_make(400, 150, 3000, 21);
    grip_hough3d_params p = grip_hough3d_params_default();
    p.bin_size = 0.02;
    p.threshold = 5.0;
    struct {
        const char *name;
        int interpolation, distance_weight;
        double threshold;
    } variants[] = {{"random hough interpolated", 1, 0, 5.0},      {"random hough plain", 0, 0, 5.0},
                    {"random hough distance-weighted", 1, 1, 3.0}, {"random hough half of the largest", 1, 0, -0.5},
                    {"random hough the largest", 0, 0, -2.0},      {"random hough every bin", 1, 0, 0.0}};
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; ++v) {
        p.use_interpolation = variants[v].interpolation;
        p.use_distance_weight = variants[v].distance_weight;
        p.threshold = variants[v].threshold;
        compare_hough(variants[v].name, grip_hough3d_vote, grip_hough3d_vote_cuda, &p, r.model, r.model_rf, r.n_model,
                      r.scene, r.scene_rf, r.n_scene, r.corr, r.n_corr);
    }
    p.use_interpolation = 1;
    p.use_distance_weight = 0;
    p.threshold = 20.0;
    ck_assert_uint_ge(compare_hough("random hough instances", grip_hough3d_cluster, grip_hough3d_cluster_cuda, &p,
                                    r.model, r.model_rf, r.n_model, r.scene, r.scene_rf, r.n_scene, r.corr, r.n_corr),
                      2);
    random_case_free(&r);
}
END_TEST

START_TEST(random_gc_equals_cpu_twin)
{
    random_case r = random_case_make(400, 150, 2500, 5);
    grip_gc_params p = grip_gc_params_default();
    p.size = 0.005;
    p.threshold = 5;
    compare_gc("random gc sets", grip_gc_consensus, grip_gc_consensus_cuda, &p, r.model, r.n_model, r.scene, r.n_scene,
               r.corr, r.n_corr);
    p.threshold = 0; /* every set is kept, so every correspondence ends in one */
    compare_gc("random gc sets, threshold 0", grip_gc_consensus, grip_gc_consensus_cuda, &p, r.model, r.n_model,
               r.scene, r.n_scene, r.corr, r.n_corr);
    p.threshold = 20;
    ck_assert_uint_ge(compare_gc("random gc instances", grip_gc_cluster, grip_gc_cluster_cuda, &p, r.model, r.n_model,
                                 r.scene, r.n_scene, r.corr, r.n_corr),
                      2);
    random_case_free(&r);
}
END_TEST

/* ---- many kept sets ----------------------------------------------------------------------------------------- */

/* Swaps correspondences a and b with their scene keypoints (each correspondence keeps its own scene keypoint). */
static void swap_corr(random_case *r, size_t a, size_t b)
{
    grip_corr c = r->corr[a];
    r->corr[a] = r->corr[b];
    r->corr[b] = c;
    for (int d = 0; d < 3; ++d) {
        float x = r->scene[a * 3 + d];
        r->scene[a * 3 + d] = r->scene[b * 3 + d];
        r->scene[b * 3 + d] = x;
    }
    r->corr[a].scene = (uint32_t)a;
    r->corr[b].scene = (uint32_t)b;
}

/* n_clusters rigid copies of parts of a 40-point model (per_cluster correspondences each, scene noise 0.5 mm), in
 * pairs: the second of a pair is the first moved by `nudge` (about the GC size, so that some correspondences agree
 * across the pair and the greedy sets mix the two, depending on what was taken before); the pairs 2 apart; then
 * n_noise outliers in the same box. Shuffled, distances from 8 values: the clusters' seeds interleave in the
 * visiting order, several in each 32 seeds the GPU grows at once. No frames (GC reads none). */
static random_case clusters_case_make(size_t n_clusters, size_t per_cluster, size_t n_noise, double nudge,
                                      uint64_t seed)
{
    random_case r = {0};
    uint64_t rng = seed;
    r.n_model = 40;
    r.n_corr = r.n_scene = n_clusters * per_cluster + n_noise;
    r.model = malloc(r.n_model * 3 * sizeof *r.model);
    r.scene = malloc(r.n_scene * 3 * sizeof *r.scene);
    r.corr = malloc(r.n_corr * sizeof *r.corr);
    ck_assert(r.model && r.scene && r.corr && per_cluster <= r.n_model);
    for (size_t i = 0; i < r.n_model * 3; ++i)
        r.model[i] = grip_test_uniform(&rng, -0.1f, 0.1f);
    double move[3] = {0.0, 0.0, 0.0};
    for (size_t c = 0; c < n_clusters; ++c) {
        const size_t pair = c / 2;
        const double centre[3] = {2.0 * (double)(pair % 6), 2.0 * (double)(pair / 6 % 6), 2.0 * (double)(pair / 36)};
        const double angle = 0.37 * (double)pair, ca = cos(angle), sa = sin(angle);
        const double R[9] = {ca, -sa, 0, sa, ca, 0, 0, 0, 1};
        if (c % 2 == 0) {
            double v[3], len = 0.0;
            for (int d = 0; d < 3; ++d) {
                v[d] = grip_test_uniform(&rng, -1.0f, 1.0f);
                len += v[d] * v[d];
            }
            for (int d = 0; d < 3; ++d)
                move[d] = len > 0.0 ? nudge * v[d] / sqrt(len) : 0.0;
        }
        for (size_t m = 0; m < per_cluster; ++m) {
            const size_t j = c * per_cluster + m, i = (c * 7 + m * 3) % r.n_model; /* 3 and 40 coprime: distinct */
            r.corr[j] = (grip_corr){.scene = (uint32_t)j, .model = (uint32_t)i};
            for (int row = 0; row < 3; ++row) {
                double x = centre[row] + (c % 2 ? move[row] : 0.0);
                for (int col = 0; col < 3; ++col)
                    x += R[row * 3 + col] * r.model[i * 3 + col];
                r.scene[j * 3 + row] = (float)x + grip_test_uniform(&rng, -0.0005f, 0.0005f);
            }
        }
    }
    for (size_t j = n_clusters * per_cluster; j < r.n_corr; ++j) {
        r.corr[j] = (grip_corr){.scene = (uint32_t)j, .model = (uint32_t)grip_test_uniform(&rng, 0.0f, 39.99f)};
        for (int d = 0; d < 3; ++d)
            r.scene[j * 3 + d] = grip_test_uniform(&rng, -1.0f, 11.0f);
    }
    for (size_t j = r.n_corr; j > 1; --j)
        swap_corr(&r, j - 1, (size_t)grip_test_uniform(&rng, 0.0f, (float)j - 0.01f));
    for (size_t j = 0; j < r.n_corr; ++j)
        r.corr[j].sqdist = 0.01f * (float)(int)grip_test_uniform(&rng, 0.0f, 7.99f);
    return r;
}

/* The GPU grows 32 seeds' sets at once and keeps the first kept one of them, growing the later ones again: here
 * most rounds hold several clusters' seeds (the recompute path), sets of one pair overlap, and threshold 0 keeps
 * every seed's set (a round keeps one, the rest grown again). 890 correspondences (not a multiple of 32) keep the
 * growth's candidate bits in shared memory; 13,040 (408 words of bits a set, more than the 383 that fit) in global
 * memory -- both paths, so under the sanitizer sizes too. */
START_TEST(many_gc_sets_equal_cpu_twin)
{
    grip_gc_params p = grip_gc_params_default();
    p.size = 0.005;
    const struct {
        const char *name;
        size_t n_noise;
        int threshold;
    } variants[] = {{"clustered gc sets", 250, 5},
                    {"clustered gc sets, threshold 0", 250, 0},
                    {"clustered gc sets, candidates in global memory", 12400, 5}};
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; ++v) {
        random_case r = clusters_case_make(64, 10, variants[v].n_noise, 0.006, 31 + v);
        p.threshold = variants[v].threshold;
        /* many kept sets, so many rounds that keep one and grow the rest again (the CPU twin keeps 52, 336, 49) */
        ck_assert_uint_ge(compare_gc(variants[v].name, grip_gc_consensus, grip_gc_consensus_cuda, &p, r.model,
                                     r.n_model, r.scene, r.n_scene, r.corr, r.n_corr),
                          40);
        random_case_free(&r);
    }
}
END_TEST

/* ---- bad input ---------------------------------------------------------------------------------------------- */

START_TEST(degenerate_input_gives_clear_results)
{
    random_case r = random_case_make(40, 20, 60, 9);
    grip_hough3d_params hp = grip_hough3d_params_default();
    hp.bin_size = 0.02;
    hp.threshold = 1.0;
    grip_gc_params gp = grip_gc_params_default();
    gp.size = 0.005;
    gp.threshold = 1;
    /* no correspondences: no clusters, not an error */
    ck_assert_uint_eq(compare_hough("hough, none", grip_hough3d_cluster, grip_hough3d_cluster_cuda, &hp, r.model,
                                    r.model_rf, r.n_model, r.scene, r.scene_rf, r.n_scene, NULL, 0),
                      0);
    ck_assert_uint_eq(compare_gc("gc, none", grip_gc_cluster, grip_gc_cluster_cuda, &gp, r.model, r.n_model, r.scene,
                                 r.n_scene, NULL, 0),
                      0);
    /* two correspondences: as on the CPU (a set below 3 keeps an identity pose: no RANSAC model) */
    compare_hough("hough, two", grip_hough3d_cluster, grip_hough3d_cluster_cuda, &hp, r.model, r.model_rf, r.n_model,
                  r.scene, r.scene_rf, r.n_scene, r.corr, 2);
    compare_gc("gc, two", grip_gc_cluster, grip_gc_cluster_cuda, &gp, r.model, r.n_model, r.scene, r.n_scene, r.corr,
               2);
    /* collinear correspondences: model and scene keypoints on a line */
    for (size_t i = 0; i < 8; ++i)
        for (int d = 0; d < 3; ++d) {
            r.model[i * 3 + d] = 0.01f * (float)i * (d == 0 ? 1.0f : 0.5f);
            r.scene[i * 3 + d] = r.model[i * 3 + d] + 0.3f;
        }
    for (size_t i = 0; i < 8; ++i)
        r.corr[i] = (grip_corr){(uint32_t)i, (uint32_t)i, 0.1f};
    compare_gc("gc, collinear", grip_gc_cluster, grip_gc_cluster_cuda, &gp, r.model, r.n_model, r.scene, r.n_scene,
               r.corr, 8);
    compare_hough("hough, collinear", grip_hough3d_cluster, grip_hough3d_cluster_cuda, &hp, r.model, r.model_rf,
                  r.n_model, r.scene, r.scene_rf, r.n_scene, r.corr, 8);
    /* an out-of-range correspondence: refused, the context usable after */
    grip_ctx *ctx = grip_test_ctx();
    grip_cluster *c = NULL;
    size_t n = 7;
    r.corr[3].model = 40;
    ck_assert_int_eq(grip_gc_cluster_cuda(ctx, &gp, r.model, r.n_model, r.scene, r.n_scene, r.corr, 8, &c, &n),
                     GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(grip_ctx_error_text(ctx), "group.gc: correspondence 3: model keypoint 40"));
    ck_assert_int_eq(grip_hough3d_cluster_cuda(ctx, &hp, r.model, r.model_rf, r.n_model, r.scene, r.scene_rf, r.n_scene,
                                               r.corr, 8, &c, &n),
                     GRIP_EINVAL);
    ck_assert_ptr_null(c);
    ck_assert_uint_eq(n, 0);
    r.corr[3].model = 3;
    ck_assert_int_eq(grip_gc_cluster_cuda(ctx, &gp, r.model, r.n_model, r.scene, r.n_scene, r.corr, 8, &c, &n),
                     GRIP_OK);
    grip_clusters_free(c, n);
    grip_ctx_free(ctx);
    random_case_free(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("group_cuda");
    grip_test_add_case(s, "tutorial_hough", tutorial_hough_equals_cpu_twin);
    grip_test_add_case(s, "tutorial_gc", tutorial_gc_equals_cpu_twin);
    grip_test_add_case(s, "random_hough", random_hough_equals_cpu_twin);
    grip_test_add_case(s, "random_gc", random_gc_equals_cpu_twin);
    grip_test_add_case(s, "many_gc_sets", many_gc_sets_equal_cpu_twin);
    grip_test_add_case(s, "degenerate", degenerate_input_gives_clear_results);
    return s;
}

int main(void)
{
    return grip_test_run_gpu(suite());
}
