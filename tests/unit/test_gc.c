/* test_gc.c -- geometric-consistency grouping and the RANSAC every grouping runs on its clusters.
 *
 * On PCL's tutorial (pcl_reference/tutorial: PCL's keypoints and correspondences, GC size 0.01, threshold 5)
 * the consensus sets contain PCL's instances, and after RANSAC the clusters are PCL's (same members, poses equal
 * to float precision), because the RANSAC replays PCL's mt19937 draws. The generator itself is checked against
 * the C++ standard's reference values; RANSAC's edge cases (fewer than 3 members, all inliers, outliers) and
 * bad input (no correspondences, keypoint numbers out of range, NaN distances) are checked on synthetic data, and
 * so is the parallel RANSAC: over many clusters the same clusters, in the same order, for any thread count, and on
 * one large cluster the clusters of PCL's plain loop (written out below) on 1, 2, 4 and 7 threads; its sample stream
 * is the plain loop's draw for draw, to the same end. */
#include "group_tutorial.h"
#include <float.h>
#include "group/gc.h"
#include "group/mt19937.h"
#include "group/ransac_draws.h"
#include "math/horn.h"
#include "math/sym3_eigen.h"
#include "ransac_clusters.h"

static grip_gc_params tutorial_params(void)
{
    grip_gc_params p = grip_gc_params_default();
    p.size = (double)0.01f; /* the tutorial passes float literals to PCL's double setters */
    p.threshold = 5;
    return p;
}

/* ---- tests -------------------------------------------------------------------------------------------------- */

START_TEST(consensus_sets_contain_pcl_instances)
{
    grip_ctx *ctx = grip_test_ctx();
    tutorial t = tutorial_load();
    pcl_instance pcl[4];
    ck_assert_uint_eq(read_instances("gc", pcl, 4), 2);
    grip_gc_params p = tutorial_params();
    grip_cluster *sets = NULL;
    size_t n = 0;
    ck_assert_int_eq(grip_gc_consensus(ctx, &p, t.model_kp, t.n_model_kp, t.scene_kp, t.n_scene_kp, t.corr, t.n_corr,
                                       &sets, &n), GRIP_OK);
    ck_assert_uint_eq(n, 2);
    for (size_t i = 0; i < n; ++i) {
        fprintf(stderr, "gc consensus set %zu: %u members (PCL after RANSAC: %zu)\n", i, sets[i].n_members, pcl[i].n);
        ck_assert_uint_gt(sets[i].n_members, 5);
        ck_assert_double_eq(sets[i].votes, sets[i].n_members);
        assert_has_pcl_members("gc consensus set", i, &sets[i], t.corr, &pcl[i]);
    }
    grip_clusters_free(sets, n);
    tutorial_free(&t);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(clusters_after_ransac_are_pcl_instances)
{
    grip_ctx *ctx = grip_test_ctx();
    tutorial t = tutorial_load();
    pcl_instance pcl[4];
    ck_assert_uint_eq(read_instances("gc", pcl, 4), 2);
    grip_gc_params p = tutorial_params();
    grip_cluster *c = NULL;
    size_t n = 0;
    ck_assert_int_eq(grip_gc_cluster(ctx, &p, t.model_kp, t.n_model_kp, t.scene_kp, t.n_scene_kp, t.corr, t.n_corr,
                                     &c, &n), GRIP_OK);
    ck_assert_uint_eq(n, 2);
    for (size_t i = 0; i < n; ++i)
        assert_is_pcl_instance("gc cluster", i, &c[i], &pcl[i], &t);
    grip_clusters_free(c, n);
    tutorial_free(&t);
    grip_ctx_free(ctx);
}
END_TEST

/* ---- synthetic ---------------------------------------------------------------------------------------------- */

START_TEST(mt19937_matches_the_standard)
{
    grip_mt19937 mt;
    grip_mt19937_seed(&mt, 5489u);
    uint32_t v = 0;
    for (int i = 0; i < 10000; ++i)
        v = grip_mt19937_next(&mt);
    ck_assert_uint_eq(v, 4123659995u); /* C++11 [rand.predef]: the 10000th output of a default mt19937 */
    grip_mt19937_seed(&mt, 12345u);    /* PCL's seed; values from std::mt19937(12345) */
    ck_assert_uint_eq(grip_mt19937_next(&mt), 3992670690u);
    ck_assert_uint_eq(grip_mt19937_next(&mt), 3823185381u);
    ck_assert_int_eq(grip_mt19937_next_int31(&mt), (int32_t)(1358822685u >> 1));
}
END_TEST

/* A model of n random keypoints and a scene made of its image under `pose` plus n_out unrelated points;
 * correspondence i pairs model i with scene i. */
typedef struct synthetic {
    float model[64 * 3], scene[64 * 3];
    grip_corr corr[64];
    double pose[16];
} synthetic;

static void synthetic_make(synthetic *s, size_t n, size_t n_out, uint64_t seed)
{
    uint64_t rng = seed;
    double a = 0.7, ca = cos(a), sa = sin(a);
    double pose[16] = {ca, -sa, 0, 0.3, sa, ca, 0, -0.2, 0, 0, 1, 1.1, 0, 0, 0, 1};
    memcpy(s->pose, pose, sizeof pose);
    for (size_t i = 0; i < n + n_out; ++i) {
        for (int d = 0; d < 3; ++d)
            s->model[i * 3 + d] = grip_test_uniform(&rng, -0.1f, 0.1f);
        for (int d = 0; d < 3; ++d)
            s->scene[i * 3 + d] = i < n ? (float)(pose[d * 4 + 0] * s->model[i * 3 + 0] +
                                                  pose[d * 4 + 1] * s->model[i * 3 + 1] +
                                                  pose[d * 4 + 2] * s->model[i * 3 + 2] + pose[d * 4 + 3])
                                        : grip_test_uniform(&rng, -1.0f, 1.0f);
        s->corr[i] = (grip_corr){(uint32_t)i, (uint32_t)i, 0.01f * (float)((i * 7) % 13)};
    }
}

START_TEST(ransac_keeps_the_inliers_and_finds_the_pose)
{
    grip_ctx *ctx = grip_test_ctx();
    synthetic s;
    synthetic_make(&s, 30, 10, 42);
    grip_cluster c = {malloc(40 * sizeof(uint32_t)), 40, {0}, 40};
    for (uint32_t i = 0; i < 40; ++i)
        c.members[i] = i;
    grip_ransac_params rp = {0.005, GRIP_RANSAC_PCL_ITERATIONS, GRIP_RANSAC_PCL_SEED};
    ck_assert_int_eq(grip_cluster_ransac(ctx, &rp, s.model, s.scene, s.corr, &c), GRIP_OK);
    ck_assert_uint_eq(c.n_members, 30);
    for (uint32_t i = 0; i < 30; ++i)
        ck_assert_uint_eq(c.members[i], i);
    for (int k = 0; k < 16; ++k)
        ck_assert_double_le(fabs(c.pose[k] - s.pose[k]), 1e-5);
    free(c.members);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(ransac_without_a_model_leaves_the_cluster_with_identity)
{
    grip_ctx *ctx = grip_test_ctx();
    synthetic s;
    synthetic_make(&s, 2, 0, 7);
    grip_cluster c = {malloc(2 * sizeof(uint32_t)), 2, {0}, 2};
    c.members[0] = 0;
    c.members[1] = 1;
    grip_ransac_params rp = {0.005, GRIP_RANSAC_PCL_ITERATIONS, GRIP_RANSAC_PCL_SEED};
    ck_assert_int_eq(grip_cluster_ransac(ctx, &rp, s.model, s.scene, s.corr, &c), GRIP_OK);
    ck_assert_uint_eq(c.n_members, 2); /* PCL: fewer than 3 correspondences stay unfiltered, pose identity */
    for (int k = 0; k < 16; ++k)
        ck_assert_double_eq(c.pose[k], (k % 5 == 0) ? 1.0 : 0.0);
    free(c.members);
    grip_ctx_free(ctx);
}
END_TEST

/* A cluster holding two rigid motions, as a symmetric object's does: 20 correspondences under pose A, 12 under B
 * (A turned 60 degrees about the scene's z axis through the model centre's image), 6 unrelated. One round keeps
 * A's set, as PCL does; more rounds add B's set as a cluster of its own, unless it is smaller than min_extra. */
START_TEST(ransac_rounds_find_a_second_motion)
{
    grip_ctx *ctx = grip_test_ctx();
    synthetic s;
    synthetic_make(&s, 20, 18, 5);
    const double b = acos(-1.0) / 3.0, cb = cos(b), sb = sin(b); /* 60 degrees */
    for (size_t i = 20; i < 32; ++i) { /* B: A, then a turn about z through A's image of the model origin */
        float *q = &s.scene[i * 3];
        for (int d = 0; d < 3; ++d)
            q[d] = (float)(s.pose[d * 4 + 0] * s.model[i * 3 + 0] + s.pose[d * 4 + 1] * s.model[i * 3 + 1] +
                           s.pose[d * 4 + 2] * s.model[i * 3 + 2]);
        const float x = q[0], y = q[1];
        q[0] = (float)(cb * x - sb * y + s.pose[3]);
        q[1] = (float)(sb * x + cb * y + s.pose[7]);
        q[2] += (float)s.pose[11];
    }
    for (uint32_t rounds = 1; rounds <= 3; rounds += 2)
        for (uint32_t min_extra = 6; min_extra <= 13; min_extra += 7) {
            grip_cluster *c = malloc(sizeof *c);
            ck_assert_ptr_nonnull(c);
            *c = (grip_cluster){malloc(38 * sizeof(uint32_t)), 38, {0}, 38};
            for (uint32_t i = 0; i < 38; ++i)
                c->members[i] = i;
            size_t n = 1;
            const grip_ransac_params rp = {0.005, GRIP_RANSAC_PCL_ITERATIONS, GRIP_RANSAC_PCL_SEED, rounds, min_extra};
            ck_assert_int_eq(grip_clusters_ransac(ctx, &rp, s.model, s.scene, s.corr, &c, &n), GRIP_OK);
            const size_t want = rounds > 1 && min_extra <= 12 ? 2 : 1;
            ck_assert_uint_eq(n, want);
            ck_assert_uint_eq(c[0].n_members, 20);
            for (uint32_t i = 0; i < 20; ++i)
                ck_assert_uint_eq(c[0].members[i], i);
            for (int k = 0; k < 16; ++k)
                ck_assert_double_le(fabs(c[0].pose[k] - s.pose[k]), 1e-5);
            ck_assert_double_eq(c[0].votes, 38);
            if (n == 2) {
                ck_assert_uint_eq(c[1].n_members, 12);
                for (uint32_t i = 0; i < 12; ++i)
                    ck_assert_uint_eq(c[1].members[i], 20 + i);
                ck_assert_double_eq_tol(c[1].votes, 38.0 * 12.0 / 20.0, 1e-12);
                /* B's rotation: z turned by 60 degrees after A's */
                ck_assert_double_le(fabs(c[1].pose[0] - (cb * s.pose[0] - sb * s.pose[4])), 1e-5);
                ck_assert_double_le(fabs(c[1].pose[4] - (sb * s.pose[0] + cb * s.pose[4])), 1e-5);
                ck_assert_double_le(fabs(c[1].pose[10] - s.pose[10]), 1e-5);
            }
            grip_clusters_free(c, n);
        }
    grip_ctx_free(ctx);
}
END_TEST

static void assert_same_clusters(const char *what, const grip_cluster *a, size_t n_a, const grip_cluster *b, size_t n_b)
{
    ck_assert_msg(n_a == n_b, "%s: %zu clusters against %zu", what, n_a, n_b);
    for (size_t i = 0; i < n_a; ++i) {
        ck_assert_msg(a[i].n_members == b[i].n_members, "%s: cluster %zu: %u members against %u", what, i,
                      a[i].n_members, b[i].n_members);
        ck_assert_msg(!memcmp(a[i].members, b[i].members, a[i].n_members * sizeof(uint32_t)),
                      "%s: cluster %zu: other members", what, i);
        ck_assert_msg(!memcmp(a[i].pose, b[i].pose, sizeof a[i].pose), "%s: cluster %zu: another pose", what, i);
        ck_assert_msg(!memcmp(&a[i].votes, &b[i].votes, sizeof a[i].votes), "%s: cluster %zu: other votes", what, i);
    }
}

/* The sequential definition: grip_clusters_ransac on each of the scene's clusters alone, in turn, the sets of each
 * following one another. *n gets their count. */
static grip_cluster *clusters_one_by_one(grip_ctx *ctx, const grip_ransac_params *rp, const grip_ransac_scene *sc,
                                         size_t *n)
{
    grip_cluster *in = grip_ransac_scene_clusters(sc), *out = malloc(sc->n_clusters * rp->rounds * sizeof *out);
    ck_assert(in && out);
    *n = 0;
    for (size_t i = 0; i < sc->n_clusters; ++i) {
        grip_cluster *one = malloc(sizeof *one);
        ck_assert_ptr_nonnull(one);
        *one = in[i];
        size_t n_one = 1;
        ck_assert_int_eq(grip_clusters_ransac(ctx, rp, sc->model_kp, sc->scene_kp, sc->corr, &one, &n_one), GRIP_OK);
        memcpy(out + *n, one, n_one * sizeof *one);
        *n += n_one;
        free(one);
    }
    free(in); /* its members moved to out */
    return out;
}

/* grip_clusters_ransac on 40 clusters (2 to 160 members, a third of them holding several motions) with 1 and with 4
 * threads: the same clusters bit for bit, in the same order, as the clusters run one by one give. */
START_TEST(ransac_over_clusters_is_the_same_for_any_thread_count)
{
    grip_ctx *one = grip_test_ctx_threads(1), *four = grip_test_ctx_threads(4);
    grip_ransac_scene sc;
    ck_assert(grip_ransac_scene_make(23, 40, 2, 160, &sc));
    for (uint32_t rounds = 1; rounds <= 3; rounds += 2) {
        const grip_ransac_params rp = {0.01, GRIP_RANSAC_PCL_ITERATIONS, GRIP_RANSAC_PCL_SEED, rounds, 5};
        grip_cluster *c1 = grip_ransac_scene_clusters(&sc), *c4 = grip_ransac_scene_clusters(&sc);
        ck_assert(c1 && c4);
        size_t n1 = sc.n_clusters, n4 = sc.n_clusters;
        ck_assert_int_eq(grip_clusters_ransac(one, &rp, sc.model_kp, sc.scene_kp, sc.corr, &c1, &n1), GRIP_OK);
        ck_assert_int_eq(grip_clusters_ransac(four, &rp, sc.model_kp, sc.scene_kp, sc.corr, &c4, &n4), GRIP_OK);
        assert_same_clusters(rounds == 1 ? "1 round, 1 thread against 4" : "3 rounds, 1 thread against 4", c1, n1, c4,
                             n4);
        size_t posed = 0; /* the input exercises the RANSAC: most clusters get a pose, and 3 rounds find more sets */
        for (size_t i = 0; i < n1; ++i)
            posed += c1[i].pose[0] != 1.0 || c1[i].pose[3] != 0.0;
        fprintf(stderr, "ransac over %zu clusters, %u round(s): %zu clusters out, %zu with a pose\n", sc.n_clusters,
                rounds, n1, posed);
        ck_assert_uint_ge(posed, 35);
        ck_assert_uint_ge(n1, rounds == 1 ? 40 : 50);
        size_t n_seq = 0;
        grip_cluster *seq = clusters_one_by_one(one, &rp, &sc, &n_seq);
        assert_same_clusters("one by one against 4 threads", seq, n_seq, c4, n4);
        grip_clusters_free(seq, n_seq);
        grip_clusters_free(c1, n1);
        grip_clusters_free(c4, n4);
    }
    grip_ransac_scene_free(&sc);
    grip_ctx_free(one);
    grip_ctx_free(four);
}
END_TEST

/* ---- the plain RANSAC loop, the reference for the chunked one ------------------------------------------------ */

/* PCL's RandomSampleConsensus::computeModel written as PCL writes it, one iteration after another (draw, fit, count,
 * update the iteration bound, stop), on one cluster of the scene, with its further rounds (grip_clusters_ransac's
 * definition): an independent account of what the library's chunked search must give. */
typedef struct plain_set {
    uint32_t m;
    float (*src)[3], (*dst)[3];
    uint32_t *target, *order;
} plain_set;

static void plain_set_make(const grip_ransac_scene *sc, const uint32_t *members, uint32_t m, plain_set *s)
{
    s->m = m;
    s->src = malloc(m * sizeof *s->src);
    s->dst = malloc(m * sizeof *s->dst);
    s->target = malloc(m * sizeof *s->target);
    s->order = malloc(m * sizeof *s->order);
    ck_assert(s->src && s->dst && s->target && s->order);
    for (uint32_t i = 0; i < m; ++i) {
        const grip_corr *c = &sc->corr[members[i]];
        memcpy(s->src[i], sc->model_kp + 3 * (size_t)c->model, sizeof s->src[i]);
        memcpy(s->dst[i], sc->scene_kp + 3 * (size_t)c->scene, sizeof s->dst[i]);
        s->order[i] = s->target[i] = i;
        for (uint32_t j = i + 1; j < m; ++j) /* PCL's map keeps the last member of a model keypoint */
            if (sc->corr[members[j]].model == c->model)
                s->target[i] = j;
    }
}

static void plain_set_free(plain_set *s)
{
    free(s->src);
    free(s->dst);
    free(s->target);
    free(s->order);
}

static float plain_gap(const float a[3], const float b[3])
{
    const float x = a[0] - b[0], y = a[1] - b[1], z = a[2] - b[2];
    return x * x + y * y + z * z;
}

static uint32_t plain_inliers(const plain_set *s, const double pose[16], double threshold, uint32_t *inliers)
{
    float t[12];
    for (int i = 0; i < 12; ++i)
        t[i] = (float)pose[i];
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->m; ++i) {
        float r[3];
        for (int d = 0; d < 3; ++d)
            r[d] = t[d * 4] * s->src[i][0] + t[d * 4 + 1] * s->src[i][1] + t[d * 4 + 2] * s->src[i][2] + t[d * 4 + 3] -
                   s->dst[i][d];
        if ((double)((r[0] * r[0] + r[2] * r[2]) + r[1] * r[1]) < threshold * threshold) {
            if (inliers)
                inliers[n] = i;
            ++n;
        }
    }
    return n;
}

/* PCL's getSamples over a plain_set, one draw at a time: the spread test's threshold (sample_dist_thresh_) and the
 * generator. */
typedef struct plain_stream {
    plain_set *s;
    grip_mt19937 mt;
    double spread;
} plain_stream;

static void plain_stream_start(plain_stream *p, plain_set *s, uint32_t seed)
{
    const uint32_t m = s->m;
    double mean[3] = {0, 0, 0}, cov[9] = {0}, values[3], vecs[9], spread = 0.0;
    for (uint32_t i = 0; i < m; ++i)
        for (int d = 0; d < 3; ++d)
            mean[d] += s->src[i][d];
    for (int d = 0; d < 3; ++d)
        mean[d] /= m;
    for (uint32_t i = 0; i < m; ++i)
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                cov[r * 3 + c] += (s->src[i][r] - mean[r]) * (s->src[i][c] - mean[c]);
    for (int i = 0; i < 9; ++i)
        cov[i] /= m;
    grip_sym3_eigen(cov, values, vecs);
    for (int i = 0; i < 3; ++i)
        spread += sqrt(values[i] > 0.0 ? values[i] : 0.0);
    p->s = s;
    p->spread = (spread / 3.0) * (spread / 3.0);
    grip_mt19937_seed(&p->mt, seed);
}

/* The next good sample: 1, or 0 when 1000 draws in a row fail the spread test (PCL's getSamples gives up). */
static int plain_stream_next(plain_stream *p, uint32_t sample[3])
{
    plain_set *s = p->s;
    for (int tries = 0; tries < 1000; ++tries) {
        for (uint32_t i = 0; i < 3; ++i) { /* a partial Fisher-Yates shuffle that persists across draws */
            const uint32_t j = i + (uint32_t)grip_mt19937_next_int31(&p->mt) % (s->m - i), t = s->order[i];
            s->order[i] = s->order[j];
            s->order[j] = t;
            sample[i] = s->order[i];
        }
        if ((double)plain_gap(s->src[sample[1]], s->src[sample[0]]) > p->spread &&
            (double)plain_gap(s->src[sample[2]], s->src[sample[0]]) > p->spread &&
            (double)plain_gap(s->src[sample[2]], s->src[sample[1]]) > p->spread)
            return 1;
    }
    return 0;
}

/* One RANSAC on `members`: 1 and the consensus set (positions into members, malloc'd) and pose when a model with 3 or
 * more inliers is found, else 0. *iterations gets the iterations the loop ran. */
static int plain_ransac(grip_ctx *ctx, const grip_ransac_params *rp, const grip_ransac_scene *sc,
                        const uint32_t *members, uint32_t m, uint32_t **set, uint32_t *n_set, double pose[16],
                        uint64_t *iterations)
{
    *iterations = 0;
    if (m < 3)
        return 0;
    plain_set s;
    plain_set_make(sc, members, m, &s);
    plain_stream stream;
    plain_stream_start(&stream, &s, rp->seed);
    double k = DBL_MAX, best_pose[16];
    uint32_t best = 0;
    for (;;) {
        uint32_t sample[3];
        if (!plain_stream_next(&stream, sample))
            break;
        double src[9], dst[9], fitted[16];
        for (int i = 0; i < 3; ++i)
            for (int d = 0; d < 3; ++d) {
                src[i * 3 + d] = s.src[sample[i]][d];
                dst[i * 3 + d] = s.dst[s.target[sample[i]]][d];
            }
        grip_horn_fit(src, dst, 3, fitted);
        const uint32_t n = plain_inliers(&s, fitted, rp->inlier_threshold, NULL);
        if (n > best) {
            best = n;
            memcpy(best_pose, fitted, sizeof fitted);
            const double p = fmax(DBL_EPSILON, fmin(1.0 - DBL_EPSILON, 1.0 - pow((double)n / m, 3)));
            k = log(1.0 - 0.99) / log(p);
        }
        if ((double)++*iterations > k || *iterations > rp->max_iterations)
            break;
    }
    int kept = 0;
    if (best > 0) {
        *set = malloc(m * sizeof **set);
        ck_assert_ptr_nonnull(*set);
        *n_set = plain_inliers(&s, best_pose, rp->inlier_threshold, *set);
        kept = *n_set >= 3;
        if (kept)
            memcpy(pose, best_pose, sizeof best_pose);
        else
            free(*set);
    }
    plain_set_free(&s);
    return kept;
}

/* The clusters grip_clusters_ransac must make of the scene's lone cluster: its first consensus set, then up to
 * rounds - 1 further sets of the members no set took, each of at least min_extra (and 3) inliers. *n gets their
 * count, *first_iterations the first search's iterations. */
static grip_cluster *plain_clusters(grip_ctx *ctx, const grip_ransac_params *rp, const grip_ransac_scene *sc, size_t *n,
                                    uint64_t *first_iterations)
{
    ck_assert_uint_eq(sc->n_clusters, 1);
    grip_cluster *out = grip_ransac_scene_clusters(sc);
    ck_assert_ptr_nonnull(out);
    *n = 1;
    grip_pose_identity(out[0].pose);
    uint32_t *set, n_set, *rest = malloc(out[0].n_members * sizeof *rest), n_rest = out[0].n_members;
    ck_assert_ptr_nonnull(rest);
    memcpy(rest, out[0].members, n_rest * sizeof *rest);
    uint64_t iterations;
    int kept = plain_ransac(ctx, rp, sc, rest, n_rest, &set, &n_set, out[0].pose, first_iterations);
    if (kept) {
        for (uint32_t i = 0; i < n_set; ++i)
            out[0].members[i] = rest[set[i]];
        out[0].n_members = n_set;
    }
    const uint32_t need = rp->min_extra > 3 ? rp->min_extra : 3;
    for (uint32_t round = 1; kept && round < rp->rounds; ++round) {
        uint32_t w = 0;
        for (uint32_t r = 0, t = 0; r < n_rest; ++r) /* the members the last set did not take */
            if (t < n_set && r == set[t])
                ++t;
            else
                rest[w++] = rest[r];
        n_rest = w;
        free(set);
        grip_cluster extra = {NULL, 0, {0}, 0};
        grip_pose_identity(extra.pose);
        kept = n_rest >= need && plain_ransac(ctx, rp, sc, rest, n_rest, &set, &n_set, extra.pose, &iterations);
        if (kept && n_set < need) {
            free(set);
            kept = 0;
        }
        if (kept) {
            extra.members = malloc(n_set * sizeof *extra.members);
            ck_assert_ptr_nonnull(extra.members);
            for (uint32_t i = 0; i < n_set; ++i)
                extra.members[i] = rest[set[i]];
            extra.n_members = n_set;
            extra.votes = out[0].votes * (double)n_set / (double)out[0].n_members;
            out = realloc(out, (*n + 1) * sizeof *out);
            ck_assert_ptr_nonnull(out);
            out[(*n)++] = extra;
        }
    }
    if (kept)
        free(set);
    free(rest);
    return out;
}

/* One cluster of 300 members, then one of 40 (45 % under one pose, the rest outliers), its RANSAC's iterations in
 * parallel chunks, the next chunk drawn meanwhile. With a 0.01 threshold the first search stops after a few dozen
 * iterations, amid a chunk, and the leftover sets of rounds 2 and 3 run to the cap; with 1e-4 hardly any member is
 * an inlier and the first search runs to the 10,000-iteration cap through many full chunks (the 40-member cluster's
 * draws then test the spread by its table of pairs). On 1, 2, 4 and 7 threads the clusters are the plain loop's,
 * bit for bit, for 1 and 3 rounds. */
START_TEST(one_big_cluster_is_the_plain_loops_for_any_thread_count)
{
    static const uint32_t threads[] = {1, 2, 4, 7}, members[] = {300, 40};
    const uint32_t m = members[_i]; /* a loop test: _i picks the cluster's size */
    grip_ctx *ctx[4];
    for (size_t i = 0; i < 4; ++i)
        ctx[i] = grip_test_ctx_threads(threads[i]);
    grip_ransac_scene sc;
    ck_assert(grip_ransac_scene_make(31, 1, m, m, &sc));
    static const double thresholds[] = {0.01, 1e-4};
    for (size_t t = 0; t < 2; ++t)
        for (uint32_t rounds = 1; rounds <= 3; rounds += 2) {
            const grip_ransac_params rp = {thresholds[t], GRIP_RANSAC_PCL_ITERATIONS, GRIP_RANSAC_PCL_SEED, rounds, 5};
            size_t n_plain = 0;
            uint64_t iterations = 0;
            grip_cluster *plain = plain_clusters(ctx[0], &rp, &sc, &n_plain, &iterations);
            fprintf(stderr,
                    "one cluster of %u, threshold %g, %u round(s): %zu sets, the first of %u members after %llu "
                    "iterations\n",
                    m, thresholds[t], rounds, n_plain, plain[0].n_members, (unsigned long long)iterations);
            if (t == 0)
                ck_assert(iterations > 16 && iterations < 200); /* past the first chunk, short of the cap */
            else
                ck_assert_uint_eq(iterations, GRIP_RANSAC_PCL_ITERATIONS + 1);
            for (size_t i = 0; i < 4; ++i) {
                grip_cluster *c = grip_ransac_scene_clusters(&sc);
                ck_assert_ptr_nonnull(c);
                size_t n = 1;
                ck_assert_int_eq(grip_clusters_ransac(ctx[i], &rp, sc.model_kp, sc.scene_kp, sc.corr, &c, &n), GRIP_OK);
                char what[64];
                snprintf(what, sizeof what, "plain loop against %u threads", threads[i]);
                assert_same_clusters(what, plain, n_plain, c, n);
                grip_clusters_free(c, n);
            }
            grip_clusters_free(plain, n_plain);
        }
    grip_ransac_scene_free(&sc);
    for (size_t i = 0; i < 4; ++i)
        grip_ctx_free(ctx[i]);
}
END_TEST

/* A cluster whose good samples are rare: model keypoints A and B 5 cm apart and every other member's on one point C,
 * so a draw passes the spread test only when it holds A, B and one of the others (about 1 in 260 draws), and a gap of
 * 1000 draws between good ones comes (about 1 in 47): the stream ends. The scene keypoints do not matter to it. */
static void rare_good_scene(uint32_t m, grip_ransac_scene *sc)
{
    memset(sc, 0, sizeof *sc);
    sc->model_kp = calloc(3 * (size_t)m, sizeof *sc->model_kp);
    sc->scene_kp = calloc(3 * (size_t)m, sizeof *sc->scene_kp);
    sc->corr = malloc(m * sizeof *sc->corr);
    sc->first = calloc(1, sizeof *sc->first);
    sc->size = malloc(sizeof *sc->size);
    ck_assert(sc->model_kp && sc->scene_kp && sc->corr && sc->first && sc->size);
    sc->n_corr = m;
    sc->n_clusters = 1;
    sc->size[0] = m;
    sc->model_kp[0] = 0.05f;
    sc->model_kp[4] = 0.05f;
    for (uint32_t i = 0; i < m; ++i)
        sc->corr[i] = (grip_corr){i, i, 0.0f};
}

/* The stream (group/ransac_draws.h) is the plain loop's draw for draw (plain_stream_next), to the same end, whatever
 * the sizes of the takes: a stream's failed draws count toward PCL's 1000 across takes. On clusters of 40 and 130
 * whose streams run on (the spread test tabulated after 256 draws, in rows of one word and of three), one of 300
 * (gaps computed), and clusters where good
 * samples are rare on five seeds: three in a row, 557, whose stream has a gap of 999 failed draws between good ones
 * (it goes on), and 2451, whose stream ends at a gap of exactly 1000 (the next draw would have been good). */
START_TEST(the_sample_stream_is_the_plain_loops)
{
    enum { WANT = 3000 };
    static const uint32_t rare_seeds[] = {GRIP_RANSAC_PCL_SEED, GRIP_RANSAC_PCL_SEED + 1, GRIP_RANSAC_PCL_SEED + 2, 557,
                                          2451};
    static const size_t takes[] = {1, 17, 512, 100};
    uint32_t(*plain)[3] = malloc(WANT * sizeof *plain), (*got)[3] = malloc(WANT * sizeof *got);
    uint32_t *members = malloc(300 * sizeof *members);
    ck_assert(plain && got && members);
    for (uint32_t i = 0; i < 300; ++i)
        members[i] = i;
    size_t ended = 0;
    static const uint32_t sizes[] = {40, 130, 300};
    for (int c = 0; c < 4; ++c) {
        grip_ransac_scene sc;
        if (c < 3)
            ck_assert(grip_ransac_scene_make(31, 1, sizes[c], sizes[c], &sc));
        else
            rare_good_scene(40, &sc);
        const uint32_t m = sc.size[0];
        for (size_t k = 0; k < (c == 3 ? sizeof rare_seeds / sizeof rare_seeds[0] : 1); ++k) {
            const uint32_t seed = c == 3 ? rare_seeds[k] : GRIP_RANSAC_PCL_SEED;
            plain_set ps;
            plain_set_make(&sc, members, m, &ps);
            plain_stream p;
            plain_stream_start(&p, &ps, seed);
            size_t n_plain = 0;
            while (n_plain < WANT && plain_stream_next(&p, plain[n_plain]))
                ++n_plain;
            ck_assert(c == 3 || n_plain == WANT);
            ended += n_plain < WANT;
            grip_ransac_draws *d = grip_ransac_draws_new((const float(*)[3])ps.src, m, seed);
            ck_assert_ptr_nonnull(d);
            size_t n = 0;
            for (size_t i = 0; n < WANT; ++i) {
                const size_t ask = takes[i % 4] < WANT - n ? takes[i % 4] : WANT - n;
                const size_t g = grip_ransac_draws_take(d, got + n, ask);
                n += g;
                if (g < ask) {
                    ck_assert_uint_eq(grip_ransac_draws_take(d, got + n, 1), 0); /* ended for good */
                    break;
                }
            }
            ck_assert_msg(n == n_plain, "%u members, seed %u: %zu samples against the plain %zu", m, seed, n, n_plain);
            ck_assert_msg(!memcmp(got, plain, n * sizeof *got), "%u members, seed %u: other samples", m, seed);
            grip_ransac_draws_free(d);
            plain_set_free(&ps);
        }
        grip_ransac_scene_free(&sc);
    }
    ck_assert_uint_ge(ended, 3); /* the rare streams end: 557 and 2451 for sure */
    free(plain);
    free(got);
    free(members);
}
END_TEST

/* A failure in one cluster fails the whole call once, with its text, and leaves nothing. */
START_TEST(a_failing_cluster_fails_the_whole_parallel_call)
{
    grip_ctx *ctx = grip_test_ctx_threads(4);
    grip_ransac_scene sc;
    ck_assert(grip_ransac_scene_make(5, 40, 2, 160, &sc));
    for (uint32_t rounds = 1; rounds <= 3; rounds += 2) {
        grip_ransac_params rp = {0.01, GRIP_RANSAC_PCL_ITERATIONS, GRIP_RANSAC_PCL_SEED, rounds, 5};
        grip_cluster *c = grip_ransac_scene_clusters(&sc);
        ck_assert_ptr_nonnull(c);
        free(c[17].members); /* a cluster with members but no member list */
        c[17].members = NULL;
        size_t n = sc.n_clusters;
        ck_assert_int_eq(grip_clusters_ransac(ctx, &rp, sc.model_kp, sc.scene_kp, sc.corr, &c, &n), GRIP_EINVAL);
        ck_assert_str_eq(ctx->last_error, "group.ransac: parameters, cluster and its inputs must not be NULL");
        ck_assert_ptr_null(c);
        ck_assert_uint_eq(n, 0);
        rp.inlier_threshold = 0.0;
        c = grip_ransac_scene_clusters(&sc);
        ck_assert_ptr_nonnull(c);
        n = sc.n_clusters;
        ck_assert_int_eq(grip_clusters_ransac(ctx, &rp, sc.model_kp, sc.scene_kp, sc.corr, &c, &n), GRIP_EINVAL);
        ck_assert_str_eq(ctx->last_error, "group.ransac: inlier threshold 0 must be finite and > 0");
        ck_assert_ptr_null(c);
        ck_assert_uint_eq(n, 0);
    }
    grip_ransac_scene_free(&sc);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(gc_groups_the_consistent_correspondences)
{
    grip_ctx *ctx = grip_test_ctx();
    synthetic s;
    synthetic_make(&s, 12, 6, 3);
    grip_gc_params p = grip_gc_params_default();
    p.size = 0.002;
    p.threshold = 5;
    grip_cluster *c = NULL;
    size_t n = 0;
    ck_assert_int_eq(grip_gc_cluster(ctx, &p, s.model, 18, s.scene, 18, s.corr, 18, &c, &n), GRIP_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(c[0].n_members, 12);
    ck_assert_double_eq(c[0].votes, 12.0);
    for (uint32_t i = 0; i < 12; ++i)
        ck_assert(c[0].members[i] < 12);
    for (int k = 0; k < 16; ++k)
        ck_assert_double_le(fabs(c[0].pose[k] - s.pose[k]), 1e-5);
    grip_clusters_free(c, n);
    p.threshold = 12; /* a set must have MORE members than the threshold */
    ck_assert_int_eq(grip_gc_cluster(ctx, &p, s.model, 18, s.scene, 18, s.corr, 18, &c, &n), GRIP_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(c);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(bad_input_is_refused_clearly)
{
    grip_ctx *ctx = grip_test_ctx();
    synthetic s;
    synthetic_make(&s, 10, 0, 1);
    grip_gc_params p = grip_gc_params_default();
    grip_cluster sentinel;
    grip_cluster *c = &sentinel; /* must come back NULL */
    size_t n = 99;
    ck_assert_int_eq(grip_gc_cluster(ctx, &p, s.model, 10, s.scene, 10, NULL, 0, &c, &n), GRIP_OK);
    ck_assert_ptr_null(c); /* no correspondences: no clusters, not an error */
    ck_assert_uint_eq(n, 0);
    s.corr[4].model = 10;
    ck_assert_int_eq(grip_gc_cluster(ctx, &p, s.model, 10, s.scene, 10, s.corr, 10, &c, &n), GRIP_EINVAL);
    ck_assert_ptr_nonnull(
        strstr(ctx->last_error, "group.gc: correspondence 4: model keypoint 10 is out of range (10 keypoints)"));
    s.corr[4].model = 4;
    s.corr[6].scene = 12;
    ck_assert_int_eq(grip_gc_cluster(ctx, &p, s.model, 10, s.scene, 10, s.corr, 10, &c, &n), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "scene keypoint 12 is out of range"));
    s.corr[6].scene = 6;
    s.corr[2].sqdist = NAN;
    ck_assert_int_eq(grip_gc_cluster(ctx, &p, s.model, 10, s.scene, 10, s.corr, 10, &c, &n), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "correspondence 2: squared distance is NaN"));
    s.corr[2].sqdist = 0.1f;
    p.size = 0.0;
    ck_assert_int_eq(grip_gc_cluster(ctx, &p, s.model, 10, s.scene, 10, s.corr, 10, &c, &n), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "group.gc.size"));
    ck_assert_ptr_null(c);
    ck_assert_uint_eq(n, 0);
    grip_ctx_free(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gc");
    char path[4096];
    if (grip_test_data_path(path, sizeof path, TUTORIAL "correspondences.tsv")) { /* PCL's values, when present */
        TCase *pcl = tcase_create("pcl_tutorial");
        tcase_add_test(pcl, consensus_sets_contain_pcl_instances);
        tcase_add_test(pcl, clusters_after_ransac_are_pcl_instances);
        suite_add_tcase(s, pcl);
    } else {
        fprintf(stderr, "pcl_tutorial cases skipped: the shared data is absent\n");
    }
    TCase *syn = tcase_create("synthetic");
    tcase_add_test(syn, mt19937_matches_the_standard);
    tcase_add_test(syn, ransac_keeps_the_inliers_and_finds_the_pose);
    tcase_add_test(syn, ransac_without_a_model_leaves_the_cluster_with_identity);
    tcase_add_test(syn, ransac_rounds_find_a_second_motion);
    tcase_add_test(syn, ransac_over_clusters_is_the_same_for_any_thread_count);
    tcase_add_loop_test(syn, one_big_cluster_is_the_plain_loops_for_any_thread_count, 0, 2);
    tcase_add_test(syn, the_sample_stream_is_the_plain_loops);
    tcase_add_test(syn, a_failing_cluster_fails_the_whole_parallel_call);
    tcase_add_test(syn, gc_groups_the_consistent_correspondences);
    tcase_add_test(syn, bad_input_is_refused_clearly);
    suite_add_tcase(s, syn);
    return s;
}

int main(void) { return grip_test_run(suite()); }
