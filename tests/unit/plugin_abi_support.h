/* plugin_abi_support.h -- what the tests that drive libgrip.so through its ABI alone share (test_hostile_host,
 * test_threads): loading the plugin ($GRIP_PLUGIN, which ctest sets) with dlopen, its stages by kind, a small
 * synthetic cloud made here (a floor, a wall and two balls, sampled on lattices), and a whole pipeline
 * (descriptor -> index -> match -> group -> verify) run through the table with every kind's default stage on the
 * CPU, summarised by counts and a digest of every output byte. Header-only (static inline). */
#ifndef GRIP_TEST_PLUGIN_ABI_SUPPORT_H
#define GRIP_TEST_PLUGIN_ABI_SUPPORT_H

#include "test_support.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the plugin ------------------------------------------------------------------------------------------ */

typedef struct abi_plugin {
    void *handle;
    const grip_plugin *api;
} abi_plugin;

/* dlopen()s $GRIP_PLUGIN and asks for its table; 0 on success, else -1 with the reason in err. Safe from any
 * thread: it fails no Check assertion. */
static inline int abi_plugin_open(abi_plugin *pl, char *err, size_t errlen)
{
    memset(pl, 0, sizeof *pl);
    const char *path = getenv("GRIP_PLUGIN");
    if (!path || !*path) {
        snprintf(err, errlen, "GRIP_PLUGIN is not set (ctest sets it)");
        return -1;
    }
    pl->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!pl->handle) {
        const char *why = dlerror();
        snprintf(err, errlen, "dlopen %s: %s", path, why ? why : "failed");
        return -1;
    }
    void *sym = dlsym(pl->handle, GRIP_PLUGIN_ENTRY);
    grip_plugin_get_fn get = NULL;
    memcpy(&get, &sym, sizeof get); /* POSIX: a data pointer from dlsym converts to a function pointer */
    pl->api = get ? get(GRIP_ABI_MAJOR, GRIP_ABI_MINOR) : NULL;
    if (!pl->api) {
        snprintf(err, errlen, "%s: no %s or no table for ABI %d", path, GRIP_PLUGIN_ENTRY, GRIP_ABI_MAJOR);
        dlclose(pl->handle);
        memset(pl, 0, sizeof *pl);
        return -1;
    }
    return 0;
}

static inline void abi_plugin_close(abi_plugin *pl)
{
    if (pl->handle)
        dlclose(pl->handle);
    memset(pl, 0, sizeof *pl);
}

/* The plugin's default stage of a kind (the first of it in its table), NULL when it has none. */
static inline const grip_stage_impl *abi_default_stage(const grip_plugin *api, uint32_t kind)
{
    for (uint32_t i = 0; i < api->n_stages; i++)
        if (api->stages[i]->kind == kind)
            return api->stages[i];
    return NULL;
}

/* Whether the implementation's parameter table has `key` (entries params[0].struct_size apart). */
static inline int abi_has_param(const grip_stage_impl *impl, const char *key)
{
    for (uint32_t i = 0; i < impl->n_params; i++) {
        const grip_param_info *p =
            (const grip_param_info *)((const char *)impl->params + i * impl->params[0].struct_size);
        if (strcmp(p->key, key) == 0)
            return 1;
    }
    return 0;
}

/* A grip_array over host memory the caller owns. */
static inline grip_array abi_array(uint32_t dtype, uint64_t rows, uint64_t cols, void *data)
{
    grip_array a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.dtype = dtype;
    a.memory = GRIP_MEM_HOST;
    a.device = -1;
    a.rows = rows;
    a.cols = cols;
    a.data = data;
    return a;
}

/* ---- a synthetic cloud ----------------------------------------------------------------------------------- */

typedef struct abi_cloud {
    size_t n;
    float *xyz;       /* n x 3, malloc'd */
    grip_cloud cloud; /* over xyz, unorganized, viewpoint above the floor */
} abi_cloud;

/* p -> T p for a row-major rigid 4x4 T (NULL: identity). */
static inline void abi_pose_apply(const float T[16], const float p[3], float *out)
{
    if (!T) {
        memcpy(out, p, 3 * sizeof *out);
        return;
    }
    for (int r = 0; r < 3; r++)
        out[r] = T[4 * r] * p[0] + T[4 * r + 1] * p[1] + T[4 * r + 2] * p[2] + T[4 * r + 3];
}

/* Points on a sphere, `spacing` apart on a Fibonacci lattice, posed by T, appended to c. */
static inline void abi_cloud_ball(abi_cloud *c, const float centre[3], float radius, float spacing, const float T[16])
{
    const size_t n = (size_t)(4.0f * 3.14159265f * radius * radius / (spacing * spacing));
    for (size_t i = 0; i < n; i++) {
        float z = 1.0f - 2.0f * ((float)i + 0.5f) / (float)n, r = sqrtf(1.0f - z * z);
        float phi = 2.39996323f * (float)i; /* the golden angle */
        float p[3] = {centre[0] + radius * r * cosf(phi), centre[1] + radius * r * sinf(phi), centre[2] + radius * z};
        abi_pose_apply(T, p, c->xyz + 3 * c->n++);
    }
}

/* A floor (size x size), a wall along one side of it (size x 0.75 size) and two balls (radii size / 4 and size / 8)
 * standing on the floor, sampled `spacing` apart, posed by T (NULL: as built). Free with abi_cloud_free. */
static inline void abi_cloud_make(abi_cloud *c, float size, float spacing, const float T[16])
{
    const size_t side = (size_t)(size / spacing), wall = (size_t)(0.75f * size / spacing);
    const float big = 0.25f * size, small = 0.125f * size;
    const float big_centre[3] = {0.6f * size, 0.55f * size, big}, small_centre[3] = {0.25f * size, 0.2f * size, small};
    const size_t balls = (size_t)(4.0f * 3.14159265f * (big * big + small * small) / (spacing * spacing)) + 2;
    memset(c, 0, sizeof *c);
    c->xyz = malloc((side * side + side * wall + balls) * 3 * sizeof *c->xyz);
    ck_assert_ptr_nonnull(c->xyz);
    float p[3];
    for (size_t i = 0; i < side; i++)
        for (size_t j = 0; j < side; j++) {
            p[0] = (float)i * spacing, p[1] = (float)j * spacing, p[2] = 0.0f;
            abi_pose_apply(T, p, c->xyz + 3 * c->n++);
        }
    for (size_t j = 0; j < side; j++)
        for (size_t k = 1; k <= wall; k++) {
            p[0] = 0.0f, p[1] = (float)j * spacing, p[2] = (float)k * spacing;
            abi_pose_apply(T, p, c->xyz + 3 * c->n++);
        }
    abi_cloud_ball(c, big_centre, big, spacing, T);
    abi_cloud_ball(c, small_centre, small, spacing, T);
    c->cloud.struct_size = sizeof c->cloud;
    c->cloud.width = (uint32_t)c->n;
    c->cloud.height = 1;
    c->cloud.xyz = abi_array(GRIP_F32, c->n, 3, c->xyz);
    const float eye[3] = {0.5f * size, 0.5f * size, 4.0f * size};
    abi_pose_apply(T, eye, c->cloud.viewpoint);
}

static inline void abi_cloud_free(abi_cloud *c)
{
    free(c->xyz);
    memset(c, 0, sizeof *c);
}

/* ---- a whole pipeline -------------------------------------------------------------------------------------- */

typedef struct abi_run {
    uint64_t model_keypoints, scene_keypoints, matches;
    uint32_t hypotheses, accepted;
    uint64_t digest; /* FNV-1a over every output byte, in pipeline order */
} abi_run;

static inline void abi_digest(uint64_t *h, const void *data, size_t bytes)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < bytes; i++)
        *h = (*h ^ b[i]) * 0x100000001b3ull;
}

static inline void abi_digest_array(uint64_t *h, const grip_array *a)
{
    abi_digest(h, &a->rows, sizeof a->rows);
    abi_digest(h, &a->cols, sizeof a->cols);
    if (a->rows && a->data)
        abi_digest(h, a->data, (size_t)(a->rows * a->cols) * (a->dtype == GRIP_U8 ? 1 : 4));
}

static inline void abi_digest_features(uint64_t *h, const grip_features *f)
{
    abi_digest_array(h, &f->keypoints);
    abi_digest_array(h, &f->keypoint_xyz);
    abi_digest_array(h, &f->normals);
    abi_digest_array(h, &f->frames);
    abi_digest_array(h, &f->descriptors);
}

static inline void abi_digest_results(uint64_t *h, const grip_matches *m, const grip_hypotheses *hy,
                                      const grip_verdicts *v)
{
    abi_digest_array(h, &m->query);
    abi_digest_array(h, &m->reference);
    abi_digest_array(h, &m->model_id);
    abi_digest_array(h, &m->sqdist);
    for (uint32_t i = 0; i < hy->count; i++) {
        const grip_hypothesis *x = (const grip_hypothesis *)((const char *)hy->items + (size_t)i * hy->item_size);
        abi_digest(h, &x->model_id, sizeof x->model_id);
        abi_digest(h, x->pose, sizeof x->pose);
        abi_digest(h, &x->votes, sizeof x->votes);
        abi_digest(h, x->members, x->n_members * sizeof *x->members);
    }
    for (uint32_t i = 0; i < v->count; i++) {
        const grip_verdict *x = (const grip_verdict *)((const char *)v->items + (size_t)i * v->item_size);
        abi_digest(h, &x->hypothesis,
                   offsetof(grip_verdict, reason) + sizeof x->reason - offsetof(grip_verdict, hypothesis));
    }
}

/* Runs the pipeline with the default stage of every kind (default parameters, but device = cpu where the stage has
 * that key: GPU kernels that accumulate with float atomics, as SHOT's, are not bit-reproducible from run to run) on
 * one model and one scene in ctx, all outputs in host memory, and summarises it in *run. Returns the first failure's
 * status (the context's text says why). Safe from any thread: it fails no Check assertion. */
static inline grip_status abi_pipeline_run(const grip_plugin *api, grip_ctx *ctx, const grip_cloud *model,
                                           const grip_cloud *scene, abi_run *run)
{
    memset(run, 0, sizeof *run);
    run->digest = 0xcbf29ce484222325ull;
    const grip_stage_impl *impl[GRIP_STAGE_KIND_COUNT];
    grip_stage *st[GRIP_STAGE_KIND_COUNT] = {NULL};
    grip_status s = GRIP_OK;
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT && !s; k++) {
        static const grip_kv on_cpu[] = {{"device", "cpu"}};
        impl[k] = abi_default_stage(api, k);
        if (!impl[k])
            s = GRIP_EUNSUPPORTED;
        else
            s = impl[k]->create(ctx, on_cpu, abi_has_param(impl[k], "device") ? 1 : 0, &st[k]);
    }
    grip_features *mf = NULL, *sf = NULL;
    grip_index *index = NULL;
    grip_matches *m = NULL;
    grip_hypotheses *h = NULL;
    grip_verdicts *v = NULL;
    if (!s)
        s = impl[GRIP_STAGE_DESCRIPTOR]->describe(st[GRIP_STAGE_DESCRIPTOR], model, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST,
                                                  &mf);
    if (!s)
        s = impl[GRIP_STAGE_DESCRIPTOR]->describe(st[GRIP_STAGE_DESCRIPTOR], scene, GRIP_ROLE_SCENE, NULL, GRIP_MEM_HOST,
                                                  &sf);
    if (!s)
        s = impl[GRIP_STAGE_INDEX]->build(st[GRIP_STAGE_INDEX], &mf->descriptors, NULL, &index);
    if (!s)
        s = impl[GRIP_STAGE_MATCH]->match(st[GRIP_STAGE_MATCH], index, &sf->descriptors, GRIP_MEM_HOST, &m);
    grip_view mv = {sizeof mv, model, mf}, sv = {sizeof sv, scene, sf};
    if (!s)
        s = impl[GRIP_STAGE_GROUP]->group(st[GRIP_STAGE_GROUP], &mv, 1, &sv, m, &h);
    if (!s)
        s = impl[GRIP_STAGE_VERIFY]->verify(st[GRIP_STAGE_VERIFY], &mv, 1, &sv, h, &v);
    if (!s) {
        run->model_keypoints = mf->keypoints.rows;
        run->scene_keypoints = sf->keypoints.rows;
        run->matches = m->count;
        run->hypotheses = h->count;
        for (uint32_t i = 0; i < v->count; i++)
            run->accepted += v->items[i].accepted;
        abi_digest_features(&run->digest, mf);
        abi_digest_features(&run->digest, sf);
        abi_digest_results(&run->digest, m, h, v);
    }
    if (v)
        v->release(v);
    if (h)
        h->release(h);
    if (m)
        m->release(m);
    if (index)
        index->release(index);
    if (sf)
        sf->release(sf);
    if (mf)
        mf->release(mf);
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++)
        if (st[k])
            impl[k]->destroy(st[k]);
    return s;
}

#endif
