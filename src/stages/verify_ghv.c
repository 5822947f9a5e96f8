/* verify_ghv.c -- the `ghv` verify stage: global hypotheses verification (verify/ghv.h). The hypotheses are ranked
 * by votes and capped, each refined by a few ICP iterations (as PCL's GHV tutorial does), and the subset that best
 * explains the scene is accepted. Lengths default to multiples of the scene's measured resolution, so the same
 * settings serve data in metres and in millimetres. The terms are computed on the GPU or by the CPU twin; the
 * search over subsets runs on the host for both. Each model's sampled points are kept by the stage for its later
 * calls while the model and the leaf are unchanged (stages/verify_model_cache.h). */
#include "stages/stage.h"
#include "stages/cloud_input.h"
#include "stages/registry.h"
#include "stages/results.h"
#include "stages/verify_common.h"
#include "stages/verify_model_cache.h"
#include "verify/free_space.h"
#include "verify/ghv.h"
#include "verify/ghv_cuda.h"
#include "verify/icp.h"
#include "verify/icp_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const grip_param_info ghv_params[] = {
    GRIP_PARAM_DEVICE,
    GRIP_PARAM_FALLBACK,
    {sizeof(grip_param_info), GRIP_PARAM_INT, "icp_iterations", "5", 0, 1000, NULL,
     "ICP iterations refining each hypothesis before verification (PCL's GHV tutorial: 5; 0: off)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "icp_distance", "0", 0, 1e9, NULL,
     "ICP pairs farther apart are dropped (cloud units; 0: the inlier threshold)", GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "leaf", "0", 0, 1e9, NULL,
     "scene and models are sampled to one point per voxel of this size (0: 3 scene resolutions)", GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "inlier_threshold", "0", 0, 1e9, NULL,
     "a model point is supported, a scene point explained, within this distance (0: 3 scene resolutions)", GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "clutter_radius", "0", 0, 1e9, NULL,
     "unexplained scene points this close to an explained one are clutter (0: 9 scene resolutions)", GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "occlusion_threshold", "0", 0, 1e9, NULL,
     "model points this far behind the surface of an organized scene are hidden (0: 6 scene resolutions)", GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "regularizer", "3", 0, 1e9, NULL,
     "cost of a visible model point with no scene support, against 1 per explained scene point"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "clutter_regularizer", "5", 0, 1e9, NULL,
     "cost of an unexplained scene point next to an explained one (falls off with distance)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "max_hypotheses", "500", 1, 100000000, NULL,
     "at most this many hypotheses, those of most votes, are verified; the others are rejected"},
    {sizeof(grip_param_info), GRIP_PARAM_ENUM, "search", "local", 0, 0, "local|annealing",
     "after the greedy start: local search by single flips, or simulated annealing then local search"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "annealing_iterations", "2000", 0, 100000000, NULL,
     "random flips of the annealing"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "initial_temperature", "1000", 0, 1e12, NULL,
     "the annealing's starting temperature, in cost units (cooled linearly to 0)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "seed", "1", 0, 2147483647, NULL, "the annealing's random seed"},
};

static grip_ghv_params ghv_params_of(const grip_stage *st)
{
    grip_ghv_params p;
    memset(&p, 0, sizeof p);
    p.leaf = grip_stage_number(st, "leaf");
    p.inlier_threshold = grip_stage_number(st, "inlier_threshold");
    p.clutter_radius = grip_stage_number(st, "clutter_radius");
    p.occlusion_threshold = grip_stage_number(st, "occlusion_threshold");
    p.regularizer = grip_stage_number(st, "regularizer");
    p.clutter_regularizer = grip_stage_number(st, "clutter_regularizer");
    p.search = (uint32_t)grip_stage_choice(st, "search");
    p.annealing_iterations = (uint32_t)grip_stage_integer(st, "annealing_iterations");
    p.initial_temperature = grip_stage_number(st, "initial_temperature");
    p.seed = (uint64_t)grip_stage_integer(st, "seed");
    return p;
}

/* What one verify() call holds. */
typedef struct ghv_run {
    grip_stage *st;
    const grip_hypotheses *h;
    grip_ghv_scene_cuda *gpu_scene;
    grip_ghv_scene cpu_scene;
    grip_ghv_scene *scene; /* cpu_scene, or the GPU scene's host part */
    uint32_t n_models;
    grip_ghv_model *models; /* n_models sampled models, their points borrowed from the stage's cache */
    uint32_t *order; /* the verified hypotheses (indices into h), most votes first */
    size_t n_verified;
    double *poses;             /* n_verified x 16: refined poses */
    uint32_t *iterations;      /* n_verified */
    grip_ghv_hypothesis *hyps; /* n_verified */
} ghv_run;

typedef struct voted {
    float votes;
    uint32_t index;
} voted;

static int cmp_voted(const void *a, const void *b)
{
    const voted *x = a, *y = b;
    if (x->votes != y->votes)
        return x->votes > y->votes ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* The indices of the hypotheses to verify: the max_hypotheses of most votes, ties to the lower index. */
static grip_status rank_hypotheses(ghv_run *r)
{
    uint32_t n = r->h->count;
    r->order = malloc((size_t)n * sizeof *r->order + 1);
    voted *v = malloc((size_t)n * sizeof *v + 1);
    if (!r->order || !v) {
        free(v);
        return grip_fail(r->st->ctx, GRIP_ENOMEM, "verify: out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        float votes = grip_verify_hypothesis_at(r->h, i)->votes;
        v[i].votes = isnan(votes) ? -INFINITY : votes;
        v[i].index = i;
    }
    qsort(v, n, sizeof *v, cmp_voted);
    for (uint32_t i = 0; i < n; i++)
        r->order[i] = v[i].index;
    free(v);
    size_t cap = (size_t)grip_stage_integer(r->st, "max_hypotheses");
    r->n_verified = n < cap ? n : cap;
    return GRIP_OK;
}

/* The header of a model's key in the stage's cache (stages/verify_model_cache.h): what shapes its sampled points
 * besides the points themselves (the part after it, n x 3 floats). */
typedef struct ghv_model_key {
    uint64_t n;    /* points */
    float leaf;    /* the scene's leaf as the sampling uses it (derived from the scene's resolution when unset) */
    uint32_t zero; /* 0: an explicit field where the compiler would pad */
} ghv_model_key;
_Static_assert(sizeof(ghv_model_key) == 16, "ghv_model_key has padding: keys would compare unset bytes");

/* Model m sampled at the scene's leaf into r->models[m]: the cached points when the model's points and the leaf
 * equal those they were sampled from, else sampled now and cached. */
static grip_status sample_model(ghv_run *r, grip_model_cache *cache, uint32_t m, const grip_cloud_input *in)
{
    ghv_model_key key;
    memset(&key, 0, sizeof key);
    key.n = in->n;
    key.leaf = r->scene->leaf;
    const grip_model_key_part parts[] = {{&key, sizeof key}, {in->xyz, in->n * 3 * sizeof *in->xyz}};
    const size_t n_parts = sizeof parts / sizeof parts[0];
    const grip_prepared_model *pm = grip_model_cache_find(cache, m, parts, n_parts);
    grip_status s = GRIP_OK;
    if (!pm) {
        grip_prepared_model made;
        memset(&made, 0, sizeof made);
        s = grip_ghv_model_sample(r->st->ctx, r->scene, in->xyz, in->n, &made.xyz, &made.count);
        if (!s)
            s = grip_model_cache_store(r->st->ctx, cache, m, parts, n_parts, &made, &pm);
    }
    if (!s) {
        r->models[m].xyz = pm->xyz;
        r->models[m].n = pm->count;
    }
    return s;
}

static grip_status sample_models(ghv_run *r, const grip_view *models)
{
    grip_ctx *ctx = r->st->ctx;
    r->models = calloc((size_t)r->n_models + 1, sizeof *r->models);
    if (!r->models)
        return grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    grip_model_cache *cache = NULL;
    grip_status s = grip_verify_model_cache(r->st, &cache);
    if (!s)
        s = grip_model_cache_reserve(ctx, cache, r->n_models);
    for (uint32_t m = 0; m < r->n_models && !s; m++) {
        grip_cloud_input in;
        char what[64];
        snprintf(what, sizeof what, "verify: models[%u].cloud", m);
        s = grip_cloud_input_open(ctx, models[m].cloud, what, &in);
        if (!s)
            s = sample_model(r, cache, m, &in);
        grip_cloud_input_close(&in);
    }
    return s;
}

/* The ICP parameters of the refinement before GHV: a few iterations within the inlier threshold (PCL's GHV tutorial
 * refines each hypothesis by ICP first). */
static grip_icp_params refine_params(const ghv_run *r)
{
    grip_icp_params ip;
    memset(&ip, 0, sizeof ip);
    ip.max_iterations = (uint32_t)grip_stage_integer(r->st, "icp_iterations");
    double icp_distance = grip_stage_number(r->st, "icp_distance");
    ip.max_correspondence_distance = icp_distance > 0 ? icp_distance : r->scene->params.inlier_threshold;
    ip.inlier_distance = r->scene->params.inlier_threshold;
    ip.max_rmse = INFINITY;
    return ip;
}

/* The verified hypotheses refined on the GPU in one batch (icp_cuda.h) against the sampled scene: the twin of the
 * loop in refine() below, whose poses it gives to rounding. poses holds the initial poses and receives the refined. */
static grip_status refine_cuda(ghv_run *r, const grip_icp_params *ip)
{
    grip_ctx *ctx = r->st->ctx;
    size_t n = r->n_verified, rows = 0;
    size_t *first = malloc(((size_t)r->n_models + 1) * sizeof *first);
    uint32_t *model = malloc(n * sizeof *model + 1);
    grip_icp_result *res = malloc(n * sizeof *res + 1);
    float *xyz = NULL;
    grip_status s = first && model && res ? GRIP_OK : grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    for (uint32_t m = 0; m < r->n_models && !s; m++) {
        first[m] = rows;
        rows += r->models[m].n;
    }
    if (!s) {
        first[r->n_models] = rows;
        xyz = malloc(rows * 3 * sizeof *xyz + 1);
        if (!xyz)
            s = grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    }
    for (uint32_t m = 0; m < r->n_models && !s; m++)
        if (r->models[m].n)
            memcpy(xyz + 3 * first[m], r->models[m].xyz, r->models[m].n * 3 * sizeof *xyz);
    for (size_t i = 0; i < n && !s; i++)
        model[i] = grip_verify_hypothesis_at(r->h, r->order[i])->model_id;
    grip_icp_cuda_scene *scene = NULL;
    if (!s)
        s = grip_icp_cuda_scene_build(ctx, r->scene->xyz, NULL, NULL, r->scene->n, NULL, 0, NULL, &scene);
    if (!s) {
        grip_icp_batch b = {xyz, NULL, first, r->n_models, (uint32_t)n, model, r->poses};
        s = grip_icp_cuda_refine(ctx, ip, scene, &b, res);
    }
    grip_icp_cuda_scene_free(scene);
    for (size_t i = 0; i < n && !s; i++)
        if (r->models[model[i]].n) { /* a model with no points keeps its pose, as on the CPU */
            memcpy(r->poses + 16 * i, res[i].pose, sizeof res[i].pose);
            r->iterations[i] = res[i].iterations;
        }
    free(first);
    free(model);
    free(res);
    free(xyz);
    return s;
}

/* Each verified hypothesis refined by ICP against the sampled scene (or taken as is with icp_iterations 0). */
static grip_status refine(ghv_run *r)
{
    grip_ctx *ctx = r->st->ctx;
    size_t n = r->n_verified;
    r->poses = malloc(n * 16 * sizeof *r->poses + 1);
    r->iterations = calloc(n + 1, sizeof *r->iterations);
    r->hyps = malloc(n * sizeof *r->hyps + 1);
    if (!r->poses || !r->iterations || !r->hyps)
        return grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    grip_icp_params ip = refine_params(r);
    for (size_t i = 0; i < n; i++) {
        const grip_hypothesis *hy = grip_verify_hypothesis_at(r->h, r->order[i]);
        for (int k = 0; k < 16; k++)
            r->poses[16 * i + k] = hy->pose[k];
    }
    grip_status s = GRIP_OK;
    if (ip.max_iterations && n && r->st->use_cuda)
        s = refine_cuda(r, &ip);
    else if (ip.max_iterations && n) {
        s = grip_ghv_scene_tree(ctx, r->scene);
        for (size_t i = 0; i < n && !s; i++) {
            const grip_ghv_model *m = &r->models[grip_verify_hypothesis_at(r->h, r->order[i])->model_id];
            double *pose = r->poses + 16 * i;
            grip_icp_result res;
            if (m->n)
                s = grip_icp_refine(ctx, &ip, m->xyz, m->n, r->scene->tree, r->scene->xyz, pose, &res);
            if (!s && m->n) {
                memcpy(pose, res.pose, sizeof res.pose);
                r->iterations[i] = res.iterations;
            }
        }
    }
    for (size_t i = 0; i < n && !s; i++) {
        r->hyps[i].model = grip_verify_hypothesis_at(r->h, r->order[i])->model_id;
        for (int k = 0; k < 12; k++)
            r->hyps[i].pose[k] = (float)r->poses[16 * i + k];
    }
    return s;
}

/* The free-space violation of each verified pose into violation (n_verified, the caller's). */
static grip_status free_space_of_verified(const ghv_run *r, float *violation)
{
    const grip_ghv_scene *sc = r->scene;
    grip_free_space_job *jobs = malloc((r->n_verified + 1) * sizeof *jobs);
    if (!jobs)
        return grip_fail(r->st->ctx, GRIP_ENOMEM, "verify: out of memory for %zu free-space checks",
                         (size_t)r->n_verified);
    for (size_t k = 0; k < r->n_verified; k++) {
        const grip_ghv_model *m = &r->models[r->hyps[k].model];
        jobs[k] = (grip_free_space_job){m->xyz, m->n, r->poses + 16 * k};
    }
    grip_status s = grip_free_space_violations(r->st->ctx, &sc->camera, sc->full_xyz, sc->width, sc->height, jobs,
                                               r->n_verified, sc->params.occlusion_threshold, violation);
    free(jobs);
    return s;
}

static grip_status fill_verdicts(const ghv_run *r, const grip_ghv_terms *t, const uint32_t *accepted, grip_verdicts *v)
{
    const grip_ghv_scene *sc = r->scene;
    float *violation = malloc((r->n_verified + 1) * sizeof *violation);
    grip_status s = violation ? free_space_of_verified(r, violation)
                              : grip_fail(r->st->ctx, GRIP_ENOMEM, "verify: out of memory");
    if (s) {
        free(violation);
        return s;
    }
    for (uint32_t i = 0; i < r->h->count; i++) { /* the hypotheses left out: as given, rejected */
        grip_verdict *vd = &v->items[i];
        const grip_hypothesis *hy = grip_verify_hypothesis_at(r->h, i);
        vd->struct_size = sizeof *vd;
        vd->hypothesis = i;
        memcpy(vd->pose, hy->pose, sizeof vd->pose);
        vd->rmse = INFINITY;
        vd->violation = NAN;
        vd->reason = GRIP_VERDICT_CAP;
    }
    for (size_t k = 0; k < r->n_verified; k++) {
        grip_verdict *vd = &v->items[r->order[k]];
        uint32_t inliers = t->visible[k] - t->outliers[k];
        for (int j = 0; j < 16; j++)
            vd->pose[j] = (float)r->poses[16 * k + j];
        vd->fitness = t->visible[k] ? (float)((double)inliers / t->visible[k]) : 0.0f;
        vd->rmse = inliers ? (float)sqrt((double)t->inlier_sq_fixed[k] / 4294967296.0 * sc->inlier2 / inliers)
                           : INFINITY;
        vd->iterations = r->iterations[k];
        vd->accepted = accepted[k];
        vd->reason = accepted[k] ? GRIP_VERDICT_ACCEPTED : GRIP_VERDICT_GHV;
        vd->violation = violation[k]; /* NaN for an unorganized scene */
    }
    free(violation);
    return GRIP_OK;
}

static grip_status verify_subset(ghv_run *r, grip_verdicts *v)
{
    grip_ctx *ctx = r->st->ctx;
    grip_ghv_terms t;
    grip_status s = r->gpu_scene
                        ? grip_ghv_terms_cuda(ctx, r->gpu_scene, r->models, r->n_models, r->hyps, r->n_verified, &t)
                        : grip_ghv_terms_compute(ctx, r->scene, r->models, r->n_models, r->hyps, r->n_verified, &t);
    if (s)
        return s;
    uint32_t *accepted = calloc(r->n_verified + 1, sizeof *accepted);
    s = accepted ? grip_ghv_search(ctx, &r->scene->params, r->scene, &t, accepted, NULL)
                 : grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    if (!s)
        s = fill_verdicts(r, &t, accepted, v);
    free(accepted);
    grip_ghv_terms_free(&t);
    return s;
}

static void ghv_run_free(ghv_run *r)
{
    grip_ghv_scene_cuda_free(r->gpu_scene);
    grip_ghv_scene_free(&r->cpu_scene);
    free(r->models);
    free(r->order);
    free(r->poses);
    free(r->iterations);
    free(r->hyps);
}

/* One verify() call whose arguments were checked, on the stage's backend. */
static grip_status ghv_verify_once(grip_stage *st, const grip_view *models, uint32_t n_models, const grip_view *scene,
                                   const grip_hypotheses *h, grip_verdicts **out)
{
    grip_status s = GRIP_OK;
    grip_cloud_input sc;
    ghv_run r;
    memset(&r, 0, sizeof r);
    r.st = st;
    r.h = h;
    r.n_models = n_models;
    grip_verdicts *v = NULL;
    grip_ghv_params p = ghv_params_of(st);
    s = grip_cloud_input_open(st->ctx, scene->cloud, "verify: scene.cloud", &sc);
    if (!s && st->use_cuda) {
        s = grip_ghv_scene_cuda_create(st->ctx, sc.xyz, grip_view_device_xyz(st->ctx, scene, sc.n),
                                       grip_features_kept_surface(st->ctx, scene->features, sc.n), sc.n, sc.width,
                                       sc.height, &p, &r.gpu_scene);
        r.scene = r.gpu_scene ? grip_ghv_scene_cuda_host(r.gpu_scene) : NULL;
    } else if (!s) {
        s = grip_ghv_scene_prepare(st->ctx, sc.xyz, sc.n, sc.width, sc.height, &p, &r.cpu_scene);
        r.scene = &r.cpu_scene;
    }
    if (!s)
        s = grip_verdicts_new(st->ctx, h->count, &v);
    if (!s)
        s = rank_hypotheses(&r);
    if (!s)
        s = sample_models(&r, models);
    if (!s)
        s = refine(&r);
    if (!s)
        s = verify_subset(&r, v);
    ghv_run_free(&r);
    grip_cloud_input_close(&sc);
    if (s) {
        if (v)
            v->release(v);
        return s;
    }
    *out = v;
    return GRIP_OK;
}

static grip_status ghv_verify(grip_stage *st, const grip_view *models, uint32_t n_models, const grip_view *scene,
                              const grip_hypotheses *h, grip_verdicts **out)
{
    grip_status s = grip_stage_check_call(&grip_verify_ghv, st, out, GRIP_MEM_HOST);
    if (!s)
        s = grip_verify_check_inputs(st->ctx, models, n_models, scene, h);
    if (!s)
        GRIP_STAGE_CALL(st, s, ghv_verify_once(st, models, n_models, scene, h, out));
    return s;
}

static grip_status ghv_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_verify_ghv = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_VERIFY,
    .name = "ghv",
    .summary = "global hypotheses verification (Aldoma 2012): the subset of ICP-refined hypotheses that best explains "
               "the scene; lengths from the scene's resolution",
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
    .n_params = sizeof ghv_params / sizeof ghv_params[0],
    .params = ghv_params,
    .create = ghv_create,
    .destroy = grip_stage_destroy,
    .verify = ghv_verify,
};

static grip_status ghv_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_verify_ghv, ctx, kv, n_kv, out);
}
