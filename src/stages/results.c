/* results.c -- see results.h. */
#include "stages/results.h"
#include "stages/stage.h"

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

/* ---- release ----------------------------------------------------------------------------------------------- */

static void features_release(grip_features *f)
{
    features_object *o = (features_object *)f;
    if (!o || o->live != FEATURES_LIVE)
        return;
    grip_cookie_clear(&o->live);
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
