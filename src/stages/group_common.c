/* group_common.c -- see group_common.h. */
#include "stages/group_common.h"
#include "stages/results.h"
#include "stages/stage.h"
#include "stages/stage_workers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A view as group() reads it: the whole grip_view, a cloud (the grip_cloud at least through `name`; BOARD frames
 * check the rest when they open it) and features. `what` names it, e.g. "group: models[2]". */
static grip_status check_view(grip_ctx *ctx, const grip_view *view, const char *what)
{
    char part[128];
    grip_status s = grip_struct_check(ctx, view, sizeof *view, what, "grip_view");
    if (!s) {
        snprintf(part, sizeof part, "%s.cloud", what);
        s = grip_struct_check(ctx, view->cloud, offsetof(grip_cloud, viewpoint), part, "grip_cloud (through name)");
    }
    if (!s) {
        snprintf(part, sizeof part, "%s.features", what);
        s = grip_struct_check(ctx, view->features, sizeof *view->features, part, "grip_features");
    }
    return s;
}

static grip_status check_views(grip_ctx *ctx, const grip_view *models, uint32_t n_models, const grip_view *scene,
                               const grip_matches *matches)
{
    grip_status s = grip_struct_check(ctx, matches, sizeof *matches, "group: matches", "grip_matches");
    if (!s)
        s = check_view(ctx, scene, "group: scene");
    if (s)
        return s;
    if (n_models == 0 || !models)
        return grip_fail(ctx, GRIP_EINVAL, "group: no model views (models is %s, n_models %u)", models ? "set" : "NULL",
                         n_models);
    for (uint32_t m = 0; m < n_models && !s; m++) {
        char what[64];
        snprintf(what, sizeof what, "group: models[%u]", m);
        s = check_view(ctx, &models[m], what);
    }
    return s;
}

grip_status grip_group_keypoints_open(grip_ctx *ctx, const grip_view *view, const char *what, grip_group_keypoints *kp)
{
    memset(kp, 0, sizeof *kp);
    const grip_features *f = view->features;
    char xyz[128], index[128];
    snprintf(xyz, sizeof xyz, "%s.keypoint_xyz", what);
    snprintf(index, sizeof index, "%s.keypoints", what);
    grip_status s = grip_array_check(ctx, &f->keypoint_xyz, GRIP_F32, 3, xyz);
    if (!s)
        s = grip_array_check(ctx, &f->keypoints, GRIP_U32, 1, index);
    if (!s && f->keypoints.rows != f->keypoint_xyz.rows)
        s = grip_fail(ctx, GRIP_EINVAL, "%s: %llu keypoints but %llu keypoint positions", what,
                      (unsigned long long)f->keypoints.rows, (unsigned long long)f->keypoint_xyz.rows);
    if (!s)
        s = grip_array_to_host(ctx, &f->keypoint_xyz, &kp->xyz_host, &kp->own_xyz, what);
    if (!s)
        s = grip_array_to_host(ctx, &f->keypoints, &kp->index_host, &kp->own_index, what);
    kp->n = (size_t)f->keypoint_xyz.rows;
    kp->xyz = kp->xyz_host.data;
    kp->index = kp->index_host.data;
    return s;
}

void grip_group_keypoints_close(grip_group_keypoints *kp)
{
    if (kp->own_xyz)
        grip_array_free_host(&kp->xyz_host);
    if (kp->own_index)
        grip_array_free_host(&kp->index_host);
    memset(kp, 0, sizeof *kp);
}

void grip_group_corrs_free(grip_group_corrs *per_model, uint32_t n_models)
{
    if (!per_model)
        return;
    for (uint32_t m = 0; m < n_models; m++) {
        free(per_model[m].corr);
        free(per_model[m].match_index);
    }
    free(per_model);
}

/* Host views of the four match arrays. */
typedef struct match_arrays {
    grip_array a[4];
    int own[4];
} match_arrays;

static grip_status open_matches(grip_ctx *ctx, const grip_matches *m, match_arrays *h)
{
    memset(h, 0, sizeof *h);
    const grip_array *src[4] = {&m->query, &m->reference, &m->model_id, &m->sqdist};
    static const uint32_t types[4] = {GRIP_U32, GRIP_U32, GRIP_U32, GRIP_F32};
    static const char *names[4] = {"group: matches.query", "group: matches.reference", "group: matches.model_id",
                                   "group: matches.sqdist"};
    for (int i = 0; i < 4; i++) {
        grip_status s = grip_array_check(ctx, src[i], types[i], 1, names[i]);
        if (!s && src[i]->rows != m->count)
            s = grip_fail(ctx, GRIP_EINVAL, "%s has %llu rows, matches.count is %llu", names[i],
                          (unsigned long long)src[i]->rows, (unsigned long long)m->count);
        if (!s)
            s = grip_array_to_host(ctx, src[i], &h->a[i], &h->own[i], names[i]);
        if (s)
            return s;
    }
    return GRIP_OK;
}

static void close_matches(match_arrays *h)
{
    for (int i = 0; i < 4; i++)
        if (h->own[i])
            grip_array_free_host(&h->a[i]);
}

static grip_status fill_split(grip_ctx *ctx, const match_arrays *h, size_t count, uint32_t n_models,
                              grip_group_corrs *per)
{
    const uint32_t *q = h->a[0].data, *r = h->a[1].data, *mid = h->a[2].data;
    const float *d = h->a[3].data;
    for (size_t i = 0; i < count; i++) {
        if (mid[i] >= n_models)
            return grip_fail(ctx, GRIP_EINVAL, "group: match %zu names model %u, but %u model views were given", i,
                             mid[i], n_models);
        per[mid[i]].n++;
    }
    for (uint32_t m = 0; m < n_models; m++) {
        per[m].corr = malloc(per[m].n * sizeof *per[m].corr + 1);
        per[m].match_index = malloc(per[m].n * sizeof *per[m].match_index + 1);
        if (!per[m].corr || !per[m].match_index)
            return grip_fail(ctx, GRIP_ENOMEM, "group: out of memory");
        per[m].n = 0;
    }
    for (size_t i = 0; i < count; i++) {
        grip_group_corrs *c = &per[mid[i]];
        c->corr[c->n] = (grip_corr){.scene = q[i], .model = r[i], .sqdist = d[i]};
        c->match_index[c->n++] = (uint32_t)i;
    }
    return GRIP_OK;
}

grip_status grip_group_corrs_split(grip_ctx *ctx, const grip_matches *matches, uint32_t n_models,
                                   grip_group_corrs **per_model)
{
    *per_model = calloc(n_models, sizeof **per_model);
    if (!*per_model)
        return grip_fail(ctx, GRIP_ENOMEM, "group: out of memory");
    match_arrays h;
    grip_status s = open_matches(ctx, matches, &h);
    if (!s)
        s = fill_split(ctx, &h, (size_t)matches->count, n_models, *per_model);
    close_matches(&h);
    if (s) {
        grip_group_corrs_free(*per_model, n_models);
        *per_model = NULL;
    }
    return s;
}

grip_status grip_hypotheses_append(grip_ctx *ctx, grip_hypotheses *h, uint32_t model, const grip_cluster *clusters,
                                   size_t n, const grip_group_corrs *corrs)
{
    if (n == 0)
        return GRIP_OK;
    grip_hypothesis *items = realloc(h->items, (h->count + n) * sizeof *items);
    if (!items)
        return grip_fail(ctx, GRIP_ENOMEM, "group: out of memory");
    h->items = items;
    for (size_t c = 0; c < n; c++) {
        uint32_t *members = malloc(clusters[c].n_members * sizeof *members + 1);
        if (!members)
            return grip_fail(ctx, GRIP_ENOMEM, "group: out of memory");
        for (uint32_t i = 0; i < clusters[c].n_members; i++)
            members[i] = corrs->match_index[clusters[c].members[i]];
        grip_hypothesis *hy = &items[h->count++];
        memset(hy, 0, sizeof *hy);
        hy->struct_size = sizeof *hy;
        hy->model_id = model;
        for (int k = 0; k < 16; k++)
            hy->pose[k] = (float)clusters[c].pose[k];
        hy->votes = (float)clusters[c].votes;
        hy->n_members = clusters[c].n_members;
        hy->members = members;
    }
    return GRIP_OK;
}

/* The arguments of prepare_models' jobs: job i prepares model which[i]. */
typedef struct prepare_args {
    const grip_group_steps *steps;
    const grip_view *models;
    const grip_group_corrs *corrs;
    const grip_group_keypoints *scene_kp;
    const float *scene_rf;
    const uint32_t *which;
    void **parts;
} prepare_args;

static grip_status prepare_item(grip_stage *worker, uint32_t i, void *arg)
{
    const prepare_args *a = arg;
    const uint32_t m = a->which[i];
    return a->steps->prepare(worker, &a->models[m], m, &a->corrs[m], a->scene_kp, a->scene_rf, &a->parts[m]);
}

static void note_model(grip_error_note *note, grip_status s, uint32_t i, const char *text)
{
    (void)i; /* the text names the model */
    grip_note_fail(note, s, "%s", text);
}

/* steps->prepare for every model with correspondences, into parts (n_models, zeroed): on a CUDA device, when the
 * steps allow it, the models at once, one a worker (no more than the context's threads); else in turn, up to the
 * first failure. */
static grip_status prepare_models(grip_stage *st, const grip_view *models, uint32_t n_models,
                                  const grip_group_corrs *corrs, const grip_group_keypoints *scene_kp,
                                  const float *scene_rf, const grip_group_steps *steps, void **parts)
{
    grip_ctx *ctx = st->ctx;
    uint32_t *which = malloc(((size_t)n_models + 1) * sizeof *which), n = 0;
    if (!which)
        return grip_fail(ctx, GRIP_ENOMEM, "group: out of memory");
    for (uint32_t m = 0; m < n_models; m++)
        if (corrs[m].n > 0)
            which[n++] = m;
    const uint32_t threads = grip_ctx_threads(ctx), in_flight = n < threads ? n : threads;
    const prepare_args args = {steps, models, corrs, scene_kp, scene_rf, which, parts};
    const grip_stage_jobs jobs = {prepare_item, note_model, (void *)&args};
    grip_status s = GRIP_OK;
    uint32_t failed;
    if (steps->prepare_at_once && grip_stage_workers_ready(st, in_flight))
        s = grip_stage_on_workers(st, n, in_flight, &jobs, &failed);
    else
        for (uint32_t i = 0; i < n && !s; i++)
            s = prepare_item(st, i, (void *)&args);
    free(which);
    return s;
}

grip_status grip_group_run(grip_stage *st, const grip_view *models, uint32_t n_models, const grip_view *scene,
                           const grip_matches *matches, const grip_group_steps *steps, grip_hypotheses **out)
{
    grip_status s = grip_stage_check_run(st, out, GRIP_MEM_HOST);
    if (s)
        return s;
    grip_ctx *ctx = st->ctx;
    s = check_views(ctx, models, n_models, scene, matches);
    if (s)
        return s;
    grip_group_corrs *corrs = NULL;
    grip_group_keypoints scene_kp;
    float *scene_rf = NULL;
    grip_hypotheses *h = NULL;
    void **parts = calloc((size_t)n_models + 1, sizeof *parts);
    if (!parts)
        return grip_fail(ctx, GRIP_ENOMEM, "group: out of memory");
    s = grip_group_keypoints_open(ctx, scene, "group: scene.features", &scene_kp);
    if (!s)
        s = grip_group_corrs_split(ctx, matches, n_models, &corrs);
    if (!s && steps->scene_frames && matches->count > 0)
        s = steps->scene_frames(st, scene, &scene_kp, &scene_rf);
    if (!s)
        s = grip_hypotheses_new(ctx, &h);
    if (!s && steps->prepare)
        s = prepare_models(st, models, n_models, corrs, &scene_kp, scene_rf, steps, parts);
    for (uint32_t m = 0; m < n_models && !s; m++)
        if (corrs[m].n > 0)
            s = steps->per_model(st, &models[m], m, &corrs[m], &scene_kp, scene_rf, parts[m], h);
    for (uint32_t m = 0; steps->part_free && m < n_models; m++)
        steps->part_free(parts[m]);
    free(parts);
    grip_group_corrs_free(corrs, n_models);
    grip_group_keypoints_close(&scene_kp);
    free(scene_rf);
    if (s) {
        if (h)
            h->release(h);
        return s;
    }
    *out = h;
    return GRIP_OK;
}
