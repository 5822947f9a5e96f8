/* cluster.c -- see cluster.h. The RANSAC below follows PCL 1.13 step by step (RandomSampleConsensus::
 * computeModel, SampleConsensusModelRegistration; its samples come from group/ransac_draws.h, PCL's getSamples), so
 * that the same seed draws the same samples and keeps the same model. Where PCL computes in float (the model applied
 * to the points), so does this file, in PCL's order of operations. */
#include "group/cluster.h"
#include "core/error_note.h"
#include "core/line_alloc.h"
#include "group/ransac_draws.h"
#include "math/horn.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* PCL: SampleConsensus::probability_ */
#define RANSAC_PROBABILITY 0.99

void grip_clusters_free(grip_cluster *clusters, size_t n)
{
    if (!clusters)
        return;
    for (size_t i = 0; i < n; ++i)
        free(clusters[i].members);
    free(clusters);
}

void grip_pose_identity(double pose[16])
{
    for (int i = 0; i < 16; ++i)
        pose[i] = (i % 5 == 0) ? 1.0 : 0.0;
}

static int point_finite(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

grip_status grip_corr_check(grip_ctx *ctx, const char *stage, const grip_corr *corr, size_t n_corr,
                            const float *model_kp_xyz, size_t n_model_kp, const float *scene_kp_xyz, size_t n_scene_kp)
{
    if (n_corr > 0 && (!corr || !model_kp_xyz || !scene_kp_xyz))
        return grip_fail(ctx, GRIP_EINVAL, "%s: correspondences and model/scene keypoints must not be NULL", stage);
    if (n_corr > UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "%s: %zu correspondences are more than 2^32-1", stage, n_corr);
    for (size_t i = 0; i < n_corr; ++i) {
        if (corr[i].model >= n_model_kp)
            return grip_fail(ctx, GRIP_EINVAL,
                             "%s: correspondence %zu: model keypoint %u is out of range (%zu keypoints)", stage, i,
                             corr[i].model, n_model_kp);
        if (corr[i].scene >= n_scene_kp)
            return grip_fail(ctx, GRIP_EINVAL,
                             "%s: correspondence %zu: scene keypoint %u is out of range (%zu keypoints)", stage, i,
                             corr[i].scene, n_scene_kp);
        if (isnan(corr[i].sqdist))
            return grip_fail(ctx, GRIP_EINVAL, "%s: correspondence %zu: squared distance is NaN", stage, i);
        if (!point_finite(model_kp_xyz + (size_t)corr[i].model * 3) ||
            !point_finite(scene_kp_xyz + (size_t)corr[i].scene * 3))
            return grip_fail(ctx, GRIP_EINVAL, "%s: correspondence %zu: keypoint (model %u, scene %u) is not finite",
                             stage, i, corr[i].model, corr[i].scene);
    }
    return GRIP_OK;
}

/* The cluster's correspondences laid out for RANSAC. PCL keys its sample-to-target map by model keypoint, so a
 * sampled model keypoint pairs with the scene keypoint of the LAST member sharing it (sample_target); the
 * inlier test pairs every member with its own scene keypoint. */
typedef struct ransac_set {
    size_t m;
    float (*src)[3];        /* model keypoint of member i */
    float (*dst)[3];        /* scene keypoint of member i */
    uint32_t *sample_target; /* member whose scene keypoint a sample of member i's model keypoint is fitted to */
} ransac_set;

static void ransac_set_free(ransac_set *s)
{
    free(s->src);
    free(s->dst);
    free(s->sample_target);
}

static grip_status ransac_set_make(grip_error_note *err, const float *model_kp_xyz, const float *scene_kp_xyz,
                                   const grip_corr *corr, const grip_cluster *cluster, ransac_set *s)
{
    size_t m = cluster->n_members;
    memset(s, 0, sizeof *s);
    s->m = m;
    s->src = malloc(m * sizeof *s->src);
    s->dst = malloc(m * sizeof *s->dst);
    s->sample_target = malloc(m * sizeof *s->sample_target);
    if (!s->src || !s->dst || !s->sample_target) {
        ransac_set_free(s);
        return grip_note_fail(err, GRIP_ENOMEM, "group: out of memory for the RANSAC of a %zu-member cluster", m);
    }
    for (size_t i = 0; i < m; ++i) {
        const grip_corr *c = &corr[cluster->members[i]];
        memcpy(s->src[i], model_kp_xyz + (size_t)c->model * 3, sizeof s->src[i]);
        memcpy(s->dst[i], scene_kp_xyz + (size_t)c->scene * 3, sizeof s->dst[i]);
        s->sample_target[i] = (uint32_t)i;
        for (size_t j = m; j-- > i + 1;)
            if (corr[cluster->members[j]].model == c->model) {
                s->sample_target[i] = (uint32_t)j;
                break;
            }
    }
    return GRIP_OK;
}

/* PCL's fit of a sample (estimateRigidTransformationSVD): the same least-squares motion, by Horn's quaternion
 * (math/horn.h), whose last bits are its own, not an SVD's. */
static void fit_sample(const ransac_set *s, const uint32_t sample[GRIP_RANSAC_SAMPLE_SIZE], double pose[16])
{
    double src[GRIP_RANSAC_SAMPLE_SIZE * 3], dst[GRIP_RANSAC_SAMPLE_SIZE * 3];
    for (int i = 0; i < GRIP_RANSAC_SAMPLE_SIZE; ++i)
        for (int d = 0; d < 3; ++d) {
            src[i * 3 + d] = s->src[sample[i]][d];
            dst[i * 3 + d] = s->dst[s->sample_target[sample[i]]][d];
        }
    grip_horn_fit(src, dst, GRIP_RANSAC_SAMPLE_SIZE, pose);
}

/* The model as PCL tests it: a float matrix times (x, y, z, 1), summed column by column, then the squared
 * residual summed as Eigen's SSE reduction does, (x^2 + z^2) + y^2. */
static int is_inlier(const float t[12], const float p[3], const float q[3], double threshold2)
{
    float r[3];
    for (int i = 0; i < 3; ++i)
        r[i] = t[i * 4 + 0] * p[0] + t[i * 4 + 1] * p[1] + t[i * 4 + 2] * p[2] + t[i * 4 + 3] - q[i];
    float d2 = (r[0] * r[0] + r[2] * r[2]) + r[1] * r[1];
    return (double)d2 < threshold2;
}

static size_t count_inliers(const ransac_set *s, const double pose[16], double threshold2, uint32_t *inliers)
{
    float t[12];
    for (int i = 0; i < 12; ++i)
        t[i] = (float)pose[i];
    size_t n = 0;
    for (size_t i = 0; i < s->m; ++i)
        if (is_inlier(t, s->src[i], s->dst[i], threshold2)) {
            if (inliers)
                inliers[n] = (uint32_t)i;
            ++n;
        }
    return n;
}

/* RANSAC's iterations run chunk by chunk: the samples depend only on the draws (mt19937 and the persistent
 * Fisher-Yates order), never on the fits, so a chunk's samples are fitted and counted in parallel, then the
 * sequential bookkeeping is replayed in iteration order and stops where the plain loop would. The draws are
 * sequential, so while the threads fit one chunk, one of them draws the next (then joins the fits): the stream is
 * the same whoever draws it, and samples drawn past where the search stops are dropped. Chunks grow from
 * RANSAC_CHUNK_MIN to RANSAC_CHUNK_MAX so searches that stop early waste few fits. */
#define RANSAC_CHUNK_MIN 16
#define RANSAC_CHUNK_MAX 512
/* Below this many samples a fork/join costs more than it saves. */
#define RANSAC_CHUNK_PARALLEL 32

typedef struct ransac_chunk {
    uint32_t (*sample)[GRIP_RANSAC_SAMPLE_SIZE]; /* the chunk being fitted */
    uint32_t (*next)[GRIP_RANSAC_SAMPLE_SIZE];   /* the next chunk's samples, drawn meanwhile */
    double (*pose)[16];
    size_t *inliers;
} ransac_chunk;

static void ransac_chunk_free(ransac_chunk *c)
{
    free(c->sample);
    free(c->next);
    free(c->pose);
    free(c->inliers);
}

static void fit_one(const ransac_set *s, double threshold2, ransac_chunk *c, size_t i)
{
    fit_sample(s, c->sample[i], c->pose[i]);
    c->inliers[i] = count_inliers(s, c->pose[i], threshold2, NULL);
}

/* Fits and counts the chunk's n samples on up to threads threads, while one thread takes n_next samples from the
 * stream into c->next (*n_drawn: how many it gave). The fits read the members and the chunk's own samples, never what
 * the stream writes. */
static void fit_chunk_draw_next(const ransac_set *s, grip_ransac_draws *d, double threshold2, ransac_chunk *c,
                                size_t n, size_t n_next, size_t *n_drawn, uint32_t threads)
{
    if (n < RANSAC_CHUNK_PARALLEL || threads < 2) {
        for (size_t i = 0; i < n; ++i)
            fit_one(s, threshold2, c, i);
        *n_drawn = grip_ransac_draws_take(d, c->next, n_next);
        return;
    }
#pragma omp parallel num_threads(threads)
    {
#pragma omp single nowait
        *n_drawn = grip_ransac_draws_take(d, c->next, n_next);
#pragma omp for schedule(dynamic, 4)
        for (size_t i = 0; i < n; ++i)
            fit_one(s, threshold2, c, i);
    }
}

/* The iteration by which the plain loop stops at the latest, given the bound k so far: the first past k, or
 * max_iterations + 1. The best count only rises, so k only falls: no chunk need reach past what this gives at the
 * chunk's start (k > 0 always: log(1 - probability) / log(p) with p in (0, 1)). */
static uint64_t last_iteration(double k, uint32_t max_iterations)
{
    const uint64_t cap = (uint64_t)max_iterations + 1;
    return k < (double)cap ? (uint64_t)floor(k) + 1 : cap;
}

/* RandomSampleConsensus::computeModel: *found tells whether a model was found, best_pose gets it: the plain loop's
 * model bit for bit, for any thread count (test_gc writes the plain loop out and compares). A search still going
 * after `budget` iterations gives up: *over_budget is set and nothing else it made means anything. A chunk reaches no
 * further than last_iteration allows at its start, but a better model found amid it lowers the bound: the chunk's
 * samples past the stopping iteration are fitted all the same, their models dropped. Fails only for memory. */
static grip_status ransac_search(grip_error_note *err, const grip_ransac_params *params, const ransac_set *s,
                                 uint32_t threads, uint64_t budget, int *over_budget, int *found, double best_pose[16])
{
    *found = 0;
    *over_budget = 0;
    ransac_chunk c = {grip_line_alloc(RANSAC_CHUNK_MAX * sizeof *c.sample),
                      grip_line_alloc(RANSAC_CHUNK_MAX * sizeof *c.next),
                      grip_line_alloc(RANSAC_CHUNK_MAX * sizeof *c.pose),
                      grip_line_alloc(RANSAC_CHUNK_MAX * sizeof *c.inliers)};
    grip_ransac_draws *d = grip_ransac_draws_new((const float(*)[3])s->src, s->m, params->seed);
    if (!c.sample || !c.next || !c.pose || !c.inliers || !d) {
        ransac_chunk_free(&c);
        grip_ransac_draws_free(d);
        return grip_note_fail(err, GRIP_ENOMEM, "group.ransac: out of memory for %d samples", RANSAC_CHUNK_MAX);
    }
    double threshold2 = params->inlier_threshold * params->inlier_threshold;
    double log_probability = log(1.0 - RANSAC_PROBABILITY);
    double k = DBL_MAX;
    size_t best = 0;
    uint64_t iterations = 0;
    /* c.sample holds `have` samples for the iterations from `iterations` on; stream_end: the stream ends after them */
    size_t have = 0;
    int stream_end = 0;
    for (size_t size = RANSAC_CHUNK_MIN, done = 0; !done;) {
        const uint64_t bound = last_iteration(k, params->max_iterations);
        const size_t want = bound - iterations < size ? (size_t)(bound - iterations) : size;
        if (have < want && !stream_end) {
            const size_t got = grip_ransac_draws_take(d, c.sample + have, want - have);
            stream_end = got < want - have;
            have += got;
        }
        const size_t n = have < want ? have : want;
        const int exhausted = n < want; /* the plain loop ends after these n iterations, if not before */
        /* the next chunk wants no more than the next size, nor past this chunk's bound (k only falls) */
        size = size < RANSAC_CHUNK_MAX ? size * 2 : size;
        const uint64_t after = bound - iterations - n;
        const size_t ahead = exhausted || stream_end ? 0 : after < size ? (size_t)after : size;
        size_t drawn = 0;
        fit_chunk_draw_next(s, d, threshold2, &c, n, ahead, &drawn, threads);
        int stop = 0;
        for (size_t i = 0; i < n && !stop; ++i) {
            if (c.inliers[i] > best) {
                best = c.inliers[i];
                memcpy(best_pose, c.pose[i], sizeof c.pose[i]);
                *found = 1;
                double w = (double)best / (double)s->m;
                double p_no_outliers = 1.0 - pow(w, GRIP_RANSAC_SAMPLE_SIZE);
                p_no_outliers = fmax(DBL_EPSILON, fmin(1.0 - DBL_EPSILON, p_no_outliers));
                k = log_probability / log(p_no_outliers);
            }
            ++iterations;
            if ((double)iterations > k || iterations > params->max_iterations)
                stop = 1;
        }
        done = stop || exhausted;
        if (!done && iterations >= budget)
            done = *over_budget = 1;
        uint32_t(*t)[GRIP_RANSAC_SAMPLE_SIZE] = c.sample;
        c.sample = c.next;
        c.next = t;
        have = drawn;
        stream_end = stream_end || drawn < ahead;
    }
    ransac_chunk_free(&c);
    grip_ransac_draws_free(d);
    return GRIP_OK;
}

/* How a cluster's searches run: on how many threads, and how many iterations each may take before the whole job
 * gives up (UINT64_MAX: none), to be run again later (grip_clusters_ransac). */
typedef struct search_mode {
    uint32_t threads;
    uint64_t budget;
} search_mode;

/* grip_cluster_ransac, failing into err (the caller reports it to the context); *kept tells whether the members were
 * replaced by a consensus set (else they stay, and the pose is the identity). *over_budget: the search gave up, the
 * members stay and the pose is the identity. */
static grip_status cluster_ransac(grip_error_note *err, const grip_ransac_params *params, search_mode mode,
                                  const float *model_kp_xyz, const float *scene_kp_xyz, const grip_corr *corr,
                                  grip_cluster *cluster, int *kept, int *over_budget)
{
    *kept = 0;
    *over_budget = 0;
    if (!params || !cluster ||
        (cluster->n_members > 0 && (!cluster->members || !corr || !model_kp_xyz || !scene_kp_xyz)))
        return grip_note_fail(err, GRIP_EINVAL, "group.ransac: parameters, cluster and its inputs must not be NULL");
    if (!(params->inlier_threshold > 0.0) || !isfinite(params->inlier_threshold))
        return grip_note_fail(err, GRIP_EINVAL, "group.ransac: inlier threshold %g must be finite and > 0",
                              params->inlier_threshold);
    grip_pose_identity(cluster->pose);
    if (cluster->n_members < GRIP_RANSAC_SAMPLE_SIZE) /* PCL: no sample can be drawn, the cluster stays as it is */
        return GRIP_OK;
    ransac_set s;
    grip_status st = ransac_set_make(err, model_kp_xyz, scene_kp_xyz, corr, cluster, &s);
    if (st != GRIP_OK)
        return st;
    int found = 0;
    double pose[16];
    st = ransac_search(err, params, &s, mode.threads, mode.budget, over_budget, &found, pose);
    if (st == GRIP_OK && found && !*over_budget) {
        uint32_t *inliers = malloc(s.m * sizeof *inliers);
        if (!inliers) {
            st = grip_note_fail(err, GRIP_ENOMEM, "group.ransac: out of memory for %zu inliers", s.m);
        } else {
            size_t n = count_inliers(&s, pose, params->inlier_threshold * params->inlier_threshold, inliers);
            if (n >= GRIP_RANSAC_SAMPLE_SIZE) { /* PCL keeps the cluster unfiltered, with an identity pose, below 3 */
                for (size_t i = 0; i < n; ++i)
                    inliers[i] = cluster->members[inliers[i]];
                free(cluster->members);
                cluster->members = inliers;
                cluster->n_members = (uint32_t)n;
                memcpy(cluster->pose, pose, sizeof pose);
                inliers = NULL;
                *kept = 1;
            }
            free(inliers);
        }
    }
    ransac_set_free(&s);
    return st;
}

grip_status grip_cluster_ransac(grip_ctx *ctx, const grip_ransac_params *params, const float *model_kp_xyz,
                                const float *scene_kp_xyz, const grip_corr *corr, grip_cluster *cluster)
{
    grip_error_note err = {GRIP_OK};
    const search_mode mode = {grip_ctx_threads(ctx), UINT64_MAX};
    int kept, over_budget;
    cluster_ransac(&err, params, mode, model_kp_xyz, scene_kp_xyz, corr, cluster, &kept, &over_budget);
    return grip_note_report(ctx, &err);
}

/* Removes from rest (*n_rest entries, in member order) the members of `taken`, a subsequence of it. */
static void remove_taken(uint32_t *rest, uint32_t *n_rest, const grip_cluster *taken)
{
    uint32_t w = 0, t = 0;
    for (uint32_t r = 0; r < *n_rest; ++r) {
        if (t < taken->n_members && rest[r] == taken->members[t])
            ++t;
        else
            rest[w++] = rest[r];
    }
    *n_rest = w;
}

/* What one input cluster's RANSAC leaves besides the cluster itself (which it updates in place): the consensus
 * sets found after its first (params->rounds > 1), and its failure, noted for grip_clusters_ransac to report. */
typedef struct cluster_job {
    grip_cluster *extra; /* malloc'd room for rounds - 1 clusters once one is kept; n_extra hold members */
    uint32_t n_extra;
    int over_budget; /* a search gave up: the job is to be run again, without a budget */
    grip_error_note err;
} cluster_job;

static void cluster_job_clear(cluster_job *job)
{
    grip_clusters_free(job->extra, job->n_extra);
    memset(job, 0, sizeof *job);
}

static void cluster_jobs_free(cluster_job *jobs, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        cluster_job_clear(&jobs[i]);
    free(jobs);
}

/* The consensus sets of one cluster after its first (see grip_clusters_ransac): `first` is the cluster after
 * its RANSAC, `all` its members before. Each set kept is added to job->extra. */
static grip_status extra_rounds(const grip_ransac_params *params, search_mode mode, const float *model_kp_xyz,
                                const float *scene_kp_xyz, const grip_corr *corr, const grip_cluster *first,
                                uint32_t *all, uint32_t n_all, cluster_job *job)
{
    const uint32_t need = params->min_extra > GRIP_RANSAC_SAMPLE_SIZE ? params->min_extra : GRIP_RANSAC_SAMPLE_SIZE;
    remove_taken(all, &n_all, first);
    for (uint32_t round = 1; round < params->rounds && n_all >= need; ++round) {
        grip_cluster extra = {malloc((size_t)n_all * sizeof(uint32_t)), n_all, {0}, first->votes};
        if (!extra.members)
            return grip_note_fail(&job->err, GRIP_ENOMEM, "group.ransac: out of memory for %u members", n_all);
        memcpy(extra.members, all, (size_t)n_all * sizeof(uint32_t));
        int kept = 0;
        grip_status st = cluster_ransac(&job->err, params, mode, model_kp_xyz, scene_kp_xyz, corr, &extra, &kept,
                                        &job->over_budget);
        if (st != GRIP_OK || !kept || extra.n_members < need) {
            free(extra.members);
            return st; /* nothing more to find */
        }
        if (!job->extra) {
            job->extra = malloc((size_t)(params->rounds - 1) * sizeof *job->extra);
            if (!job->extra) {
                free(extra.members);
                return grip_note_fail(&job->err, GRIP_ENOMEM, "group.ransac: out of memory for %u clusters",
                                      params->rounds - 1);
            }
        }
        remove_taken(all, &n_all, &extra);
        extra.votes = first->votes * (double)extra.n_members / (double)first->n_members;
        job->extra[job->n_extra++] = extra;
    }
    return GRIP_OK;
}

/* The whole RANSAC of one input cluster: its first consensus set in place, then (rounds > 1) the further ones into
 * job, its failure noted there. */
static void cluster_job_run(const grip_ransac_params *params, search_mode mode, const float *model_kp_xyz,
                            const float *scene_kp_xyz, const grip_corr *corr, grip_cluster *cluster, cluster_job *job)
{
    uint32_t *all = NULL; /* the members before the first set takes its own */
    const uint32_t n_all = cluster->n_members;
    if (params && params->rounds > 1 && cluster->members) { /* no list: cluster_ransac refuses it below */
        all = malloc(((size_t)n_all + 1) * sizeof *all);
        if (!all) {
            grip_note_fail(&job->err, GRIP_ENOMEM, "group.ransac: out of memory for %u members", n_all);
            return;
        }
        memcpy(all, cluster->members, (size_t)n_all * sizeof *all);
    }
    int kept = 0;
    grip_status st =
        cluster_ransac(&job->err, params, mode, model_kp_xyz, scene_kp_xyz, corr, cluster, &kept, &job->over_budget);
    if (st == GRIP_OK && kept && all)
        extra_rounds(params, mode, model_kp_xyz, scene_kp_xyz, corr, cluster, all, n_all, job);
    free(all);
}

/* Replaces *clusters by the input clusters each followed by its extra sets, moving the sets out of jobs; the
 * array stays as it is when no cluster has one (always so with rounds = 1). */
static grip_status clusters_concatenate(grip_ctx *ctx, cluster_job *jobs, grip_cluster **clusters, size_t *n)
{
    size_t n_in = *n, n_out = n_in;
    for (size_t i = 0; i < n_in; ++i)
        n_out += jobs[i].n_extra;
    if (n_out == n_in)
        return GRIP_OK;
    grip_cluster *out = malloc(n_out * sizeof *out);
    if (!out)
        return grip_fail(ctx, GRIP_ENOMEM, "group.ransac: out of memory for %zu clusters", n_out);
    size_t w = 0;
    for (size_t i = 0; i < n_in; ++i) {
        out[w++] = (*clusters)[i];
        for (uint32_t e = 0; e < jobs[i].n_extra; ++e)
            out[w++] = jobs[i].extra[e];
        jobs[i].n_extra = 0; /* moved: cluster_jobs_free frees the array alone */
    }
    free(*clusters);
    *clusters = out;
    *n = n_out;
    return GRIP_OK;
}

/* Iterations a cluster's search may take in the first pass of grip_clusters_ransac, one thread a cluster: the budget
 * is checked after each chunk, and a search past it gives up; 240 is a search's first four chunks (16 + 32 + 64 +
 * 128). */
#define SHORT_SEARCH_ITERATIONS 240

/* The first pass: every cluster's job on one thread, the clusters in parallel, each search allowed
 * SHORT_SEARCH_ITERATIONS iterations. A job that completes replaces its cluster and keeps its extra sets in jobs[i]; a
 * failed one keeps its failure; one whose search gave up leaves its cluster as it was, jobs[i].over_budget set.
 * Why two passes: a search's iterations run in parallel chunks, so one long search (a leftover set of outliers, run
 * to the 10,000-iteration cap) uses every thread; but most searches stop after a few dozen iterations, too few to
 * share, and clusters in parallel serve those. A short search's result does not depend on where it ran, so the
 * clusters are the same as one after another; a long one costs its first SHORT_SEARCH_ITERATIONS iterations twice. */
static void short_jobs_in_parallel(const grip_ransac_params *params, uint32_t threads, const float *model_kp_xyz,
                                   const float *scene_kp_xyz, const grip_corr *corr, grip_cluster *in, size_t n_in,
                                   cluster_job *jobs)
{
    const search_mode one_thread = {1, SHORT_SEARCH_ITERATIONS};
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (size_t i = 0; i < n_in; ++i) {
        grip_cluster work = in[i]; /* the job's own copy of the members: a job that gives up leaves in[i] as it was */
        work.members = in[i].members ? malloc(((size_t)in[i].n_members + 1) * sizeof *work.members) : NULL;
        if (in[i].members && !work.members) {
            grip_note_fail(&jobs[i].err, GRIP_ENOMEM, "group.ransac: out of memory for %u members", in[i].n_members);
            continue;
        }
        if (work.members)
            memcpy(work.members, in[i].members, (size_t)in[i].n_members * sizeof *work.members);
        cluster_job_run(params, one_thread, model_kp_xyz, scene_kp_xyz, corr, &work, &jobs[i]);
        if (jobs[i].over_budget || jobs[i].err.status != GRIP_OK) {
            free(work.members);
        } else {
            free(in[i].members);
            in[i] = work;
        }
    }
}

grip_status grip_clusters_ransac(grip_ctx *ctx, const grip_ransac_params *params, const float *model_kp_xyz,
                                 const float *scene_kp_xyz, const grip_corr *corr, grip_cluster **clusters, size_t *n)
{
    const size_t n_in = *n;
    grip_cluster *in = *clusters;
    cluster_job *jobs = calloc(n_in + 1, sizeof *jobs);
    grip_status st = GRIP_OK;
    if (!jobs)
        st = grip_fail(ctx, GRIP_ENOMEM, "group.ransac: out of memory for the RANSAC of %zu clusters", n_in);
    const uint32_t threads = grip_ctx_threads(ctx);
    size_t first_failed = n_in;
    if (jobs) {
        if (threads > 1 && n_in > 1)
            short_jobs_in_parallel(params, threads, model_kp_xyz, scene_kp_xyz, corr, in, n_in, jobs);
        else
            for (size_t i = 0; i < n_in; ++i)
                jobs[i].over_budget = 1; /* none run yet */
        /* the rest one after another, each search on every thread; none past the first failure in cluster order */
        const search_mode all_threads = {threads, UINT64_MAX};
        for (size_t i = 0; i < n_in && first_failed == n_in; ++i) {
            if (jobs[i].over_budget) {
                cluster_job_clear(&jobs[i]);
                cluster_job_run(params, all_threads, model_kp_xyz, scene_kp_xyz, corr, &in[i], &jobs[i]);
            }
            if (jobs[i].err.status != GRIP_OK)
                first_failed = i;
        }
        if (first_failed < n_in)
            st = grip_note_report(ctx, &jobs[first_failed].err);
        else
            st = clusters_concatenate(ctx, jobs, clusters, n);
        cluster_jobs_free(jobs, n_in);
    }
    if (st != GRIP_OK) {
        grip_clusters_free(*clusters, *n);
        *clusters = NULL;
        *n = 0;
    }
    return st;
}
