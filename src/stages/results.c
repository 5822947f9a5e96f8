/* results.c -- see results.h. */
#include "stages/results.h"
#include "stages/cloud_input.h"
#include "stages/stage.h"

#include <pthread.h>
#include <stdlib.h>

/* The cookies of live objects, one per type, so that an object is never taken for one of another type. */
#define FEATURES_LIVE 0x74616546u
#define MATCHES_LIVE 0x6374614du
#define HYPOTHESES_LIVE 0x70796848u
#define VERDICTS_LIVE 0x64726556u

/* Each object: its public struct first (the host sees only it), then its cookie. */
typedef struct features_object {
    grip_features pub;
    uint32_t live;
    /* the described cloud's device surface, kept for the later stages (grip_features_keep_surface), or NULL; while
       set, the object is on the kept list below, and xyz_data and normals_data are what pub's arrays held then */
    grip_surface_cuda *surface;
    const void *xyz_data, *normals_data;
    struct features_object *next_kept;
} features_object;

typedef struct matches_object {
    grip_matches pub;
    uint32_t live;
} matches_object;

typedef struct hypotheses_object {
    grip_hypotheses pub;
    uint32_t live;
} hypotheses_object;

typedef struct verdicts_object {
    grip_verdicts pub;
    uint32_t live;
} verdicts_object;

/* ---- surfaces kept with features ---------------------------------------------------------------------------- */

/* The features objects that keep a surface. A list for the whole plugin, not one per context: an object may be
 * released from any thread, after its context is gone. It is found by the public struct's address, so a lookup
 * never reads past what a host handed in. */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static features_object *kept_first;

static void kept_remove(features_object *o)
{
    pthread_mutex_lock(&kept_lock);
    for (features_object **p = &kept_first; *p; p = &(*p)->next_kept)
        if (*p == o) {
            *p = o->next_kept;
            break;
        }
    pthread_mutex_unlock(&kept_lock);
    grip_surface_cuda_free(o->surface);
    o->surface = NULL;
}

/* ---- release ----------------------------------------------------------------------------------------------- */

static void features_release(grip_features *f)
{
    features_object *o = (features_object *)f;
    if (!o || o->live != FEATURES_LIVE)
        return;
    grip_cookie_clear(&o->live);
    if (o->surface)
        kept_remove(o);
    grip_result_array_free(&f->keypoints);
    grip_result_array_free(&f->keypoint_xyz);
    grip_result_array_free(&f->normals);
    grip_result_array_free(&f->frames);
    grip_result_array_free(&f->descriptors);
    grip_result_array_free(&f->xyz);
    free(o);
}

static void matches_release(grip_matches *m)
{
    matches_object *o = (matches_object *)m;
    if (!o || o->live != MATCHES_LIVE)
        return;
    grip_cookie_clear(&o->live);
    grip_result_array_free(&m->query);
    grip_result_array_free(&m->reference);
    grip_result_array_free(&m->model_id);
    grip_result_array_free(&m->sqdist);
    free(o);
}

static void hypotheses_release(grip_hypotheses *h)
{
    hypotheses_object *o = (hypotheses_object *)h;
    if (!o || o->live != HYPOTHESES_LIVE)
        return;
    grip_cookie_clear(&o->live);
    for (uint32_t i = 0; i < h->count; i++)
        free((void *)h->items[i].members);
    free(h->items);
    free(o);
}

static void verdicts_release(grip_verdicts *v)
{
    verdicts_object *o = (verdicts_object *)v;
    if (!o || o->live != VERDICTS_LIVE)
        return;
    grip_cookie_clear(&o->live);
    free(v->items);
    free(o);
}

/* ---- making ------------------------------------------------------------------------------------------------ */

grip_status grip_features_new(grip_ctx *ctx, uint32_t descriptor_dim, grip_features **out)
{
    features_object *o = calloc(1, sizeof *o);
    if (!o)
        return grip_fail(ctx, GRIP_ENOMEM, "descriptor: out of memory");
    grip_features *f = &o->pub;
    f->struct_size = sizeof *f;
    f->descriptor_dim = descriptor_dim;
    grip_array *arrays[] = {&f->keypoints, &f->keypoint_xyz, &f->normals, &f->frames, &f->descriptors, &f->xyz};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        *arrays[i] = grip_array_host_view(GRIP_F32, 0, 0, NULL);
    f->keypoints.dtype = GRIP_U32;
    f->release = features_release;
    o->live = FEATURES_LIVE;
    *out = f;
    return GRIP_OK;
}

grip_status grip_matches_new(grip_ctx *ctx, grip_matches **out)
{
    matches_object *o = calloc(1, sizeof *o);
    if (!o)
        return grip_fail(ctx, GRIP_ENOMEM, "match: out of memory");
    grip_matches *m = &o->pub;
    m->struct_size = sizeof *m;
    m->query = grip_array_host_view(GRIP_U32, 0, 0, NULL);
    m->reference = grip_array_host_view(GRIP_U32, 0, 0, NULL);
    m->model_id = grip_array_host_view(GRIP_U32, 0, 0, NULL);
    m->sqdist = grip_array_host_view(GRIP_F32, 0, 0, NULL);
    m->release = matches_release;
    o->live = MATCHES_LIVE;
    *out = m;
    return GRIP_OK;
}

grip_status grip_hypotheses_new(grip_ctx *ctx, grip_hypotheses **out)
{
    hypotheses_object *o = calloc(1, sizeof *o);
    if (!o)
        return grip_fail(ctx, GRIP_ENOMEM, "group: out of memory");
    grip_hypotheses *h = &o->pub;
    h->struct_size = sizeof *h;
    h->item_size = sizeof(grip_hypothesis);
    h->release = hypotheses_release;
    o->live = HYPOTHESES_LIVE;
    *out = h;
    return GRIP_OK;
}

grip_status grip_verdicts_new(grip_ctx *ctx, uint32_t count, grip_verdicts **out)
{
    verdicts_object *o = calloc(1, sizeof *o);
    if (o)
        o->pub.items = calloc((size_t)count + 1, sizeof *o->pub.items);
    if (!o || !o->pub.items) {
        free(o);
        return grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory for %u verdicts", count);
    }
    grip_verdicts *v = &o->pub;
    v->struct_size = sizeof *v;
    v->count = count;
    v->item_size = sizeof *v->items;
    v->release = verdicts_release;
    o->live = VERDICTS_LIVE;
    *out = v;
    return GRIP_OK;
}

/* ---- surfaces kept with features ---------------------------------------------------------------------------- */

void grip_features_keep_surface(grip_features *f, grip_surface_cuda *surface)
{
    features_object *o = (features_object *)f;
    if (o->surface)
        kept_remove(o);
    o->surface = surface;
    o->xyz_data = f->xyz.data;
    o->normals_data = f->normals.data;
    pthread_mutex_lock(&kept_lock);
    o->next_kept = kept_first;
    kept_first = o;
    pthread_mutex_unlock(&kept_lock);
}

const grip_surface_cuda *grip_features_kept_surface(const grip_ctx *ctx, const grip_features *f, size_t n)
{
    if (!f)
        return NULL;
    const grip_surface_cuda *found = NULL;
    pthread_mutex_lock(&kept_lock);
    for (const features_object *o = kept_first; o; o = o->next_kept)
        if (&o->pub == f) {
            found = o->surface;
            /* the arrays still the ones described, on this context's device, of the cloud's rows */
            if (f->xyz.data != o->xyz_data || f->normals.data != o->normals_data ||
                !grip_array_on_ctx_device(ctx, &f->xyz) || f->xyz.rows != n || f->normals.rows != n ||
                grip_surface_cuda_get_view(o->surface).n != n)
                found = NULL;
            break;
        }
    pthread_mutex_unlock(&kept_lock);
    return found;
}
