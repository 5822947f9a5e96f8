/* fault_walk.c -- see fault_walk.h. */
#include "fault_walk.h"
#include "test_support.h"
#include "synth/synth.h"
#include "pipeline.h"
#include "core/array.h"
#include "stages/stage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the scene and the stages ------------------------------------------------------------------------------ */

/* What the pipeline looks at: two catalogue objects' complete surfaces as the models (synth, sampled 7 mm apart,
 * with normals) and, as the scene, both models moved to known poses with 0.5 mm of noise and without normals: a
 * few thousand points in all, so that a whole pipeline runs in tens of milliseconds on one CPU thread, and one in
 * which every stage has work (hypotheses to verify). */
typedef struct fault_scene {
    synth_scene synth;
    host_cloud scene;
} fault_scene;

static void scene_make(fault_pipeline *p)
{
    synth_params sp;
    synth_params_default(&sp);
    sp.seed = 3;
    sp.n_objects = 2;
    sp.width = 64;
    sp.height = 48;
    sp.model_spacing = 0.007;
    fault_scene *fs = calloc(1, sizeof *fs);
    ck_assert_ptr_nonnull(fs);
    char err[256] = "";
    ck_assert_msg(synth_generate(&sp, &fs->synth, err, sizeof err) == 0, "synth_generate: %s", err);
    size_t n = 0;
    for (uint32_t m = 0; m < fs->synth.n_models; m++)
        n += fs->synth.models[m].n;
    host_cloud *c = &fs->scene;
    c->width = (uint32_t)n;
    c->height = 1;
    c->n = n;
    c->xyz = malloc(n * 3 * sizeof(float));
    ck_assert_ptr_nonnull(c->xyz);
    uint64_t seed = 11;
    size_t at = 0;
    for (uint32_t m = 0; m < fs->synth.n_models; m++) {
        const host_cloud *model = &fs->synth.models[m];
        double yaw = 0.7 + 1.9 * m, cy = cos(yaw), sy = sin(yaw);
        const double t[3] = {0.3 * m - 0.15, 0.05, 0.8};
        for (size_t i = 0; i < model->n; i++, at++) {
            const float *q = model->xyz + 3 * i;
            float *out = c->xyz + 3 * at;
            out[0] = (float)(cy * q[0] - sy * q[1] + t[0]) + grip_test_uniform(&seed, -5e-4f, 5e-4f);
            out[1] = (float)(sy * q[0] + cy * q[1] + t[1]) + grip_test_uniform(&seed, -5e-4f, 5e-4f);
            out[2] = (float)(q[2] + t[2]) + grip_test_uniform(&seed, -5e-4f, 5e-4f);
        }
    }
    p->scene = fs;
    p->models = fs->synth.models;
    p->n_models = fs->synth.n_models;
    p->scene_cloud = &fs->scene;
}

static void scene_free(void *scene)
{
    fault_scene *fs = scene;
    if (!fs)
        return;
    synth_scene_free(&fs->synth);
    free(fs->scene.xyz);
    free(fs);
}

static const grip_stage_impl *find_impl(const grip_plugin *g, uint32_t kind, const char *name)
{
    for (uint32_t i = 0; i < g->n_stages; i++)
        if (g->stages[i]->kind == kind && (!name || strcmp(g->stages[i]->name, name) == 0))
            return g->stages[i];
    return NULL;
}

void fault_pipeline_open(fault_pipeline *p, const char *const *settings, uint32_t threads, uint32_t features_memory)
{
    memset(p, 0, sizeof *p);
    p->features_memory = features_memory;
    p->plugin = grip_plugin_get(GRIP_ABI_MAJOR, GRIP_ABI_MINOR);
    ck_assert_ptr_nonnull(p->plugin);
    grip_ctx_options opts = {sizeof opts, -1, threads};
    ck_assert_int_eq(p->plugin->ctx_create(&opts, &p->ctx), GRIP_OK);
    scene_make(p);
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++) {
        const char *kind = grip_stage_kind_name(k);
        size_t kind_len = strlen(kind);
        char keys[16][64], values[16][64], impl_name[64];
        grip_kv kv[16];
        uint32_t n = 0;
        const char *impl = NULL;
        for (const char *const *s = settings; *s; s++) {
            const char *dot = strchr(*s, '.'), *eq = strchr(*s, '=');
            ck_assert_msg(dot && eq && dot < eq, "setting '%s' is not stage.key=value", *s);
            if ((size_t)(dot - *s) != kind_len || strncmp(*s, kind, kind_len) != 0)
                continue;
            ck_assert_uint_lt(n, 16);
            snprintf(keys[n], sizeof keys[n], "%.*s", (int)(eq - dot - 1), dot + 1);
            snprintf(values[n], sizeof values[n], "%s", eq + 1);
            if (strcmp(keys[n], "impl") == 0) {
                snprintf(impl_name, sizeof impl_name, "%s", values[n]);
                impl = impl_name;
                continue;
            }
            kv[n] = (grip_kv){keys[n], values[n]};
            n++;
        }
        p->impl[k] = find_impl(p->plugin, k, impl);
        ck_assert_msg(p->impl[k] != NULL, "no %s stage '%s'", kind, impl ? impl : "(default)");
        grip_status s = p->impl[k]->create(p->ctx, kv, n, &p->stage[k]);
        ck_assert_msg(s == GRIP_OK, "%s create: %s", kind, p->plugin->ctx_last_error(p->ctx));
    }
}

void fault_pipeline_close(fault_pipeline *p)
{
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++)
        if (p->stage[k])
            p->impl[k]->destroy(p->stage[k]);
    if (p->ctx)
        p->plugin->ctx_destroy(p->ctx);
    scene_free(p->scene);
    memset(p, 0, sizeof *p);
}

/* ---- one run -------------------------------------------------------------------------------------------- */

void fault_run_free(fault_run *s)
{
    if (s->verdicts)
        s->verdicts->release(s->verdicts);
    if (s->hypotheses)
        s->hypotheses->release(s->hypotheses);
    if (s->matches)
        s->matches->release(s->matches);
    if (s->index)
        s->index->release(s->index);
    for (uint32_t i = 0; s->features && i <= s->n_models; i++)
        if (s->features[i])
            s->features[i]->release(s->features[i]);
    free(s->features);
    free(s->clouds);
    free(s->views);
    free(s->reference);
    free(s->model_ids);
    memset(s, 0, sizeof *s);
}

/* An object a failed call returned must be NULL (plugin.h: outputs are left NULL on failure). */
static grip_status stage_done(fault_run *s, uint32_t kind, grip_fault_kind walked, grip_status st, const void *out)
{
    s->calls_after[kind] = grip_fault_calls(walked);
    if (st != GRIP_OK) {
        s->failed = (int)kind;
        ck_assert_msg(out == NULL, "%s failed (%d) but returned an object", grip_stage_kind_name(kind), st);
    }
    return st;
}

static grip_status run_index(fault_pipeline *p, fault_run *s, grip_fault_kind walked)
{
    grip_array ref, ids;
    /* one model's descriptors as they are, in whatever memory they live (on the device: the first model only, as a
     * host would need device copies to join them) */
    if (s->n_models == 1 || s->features[0]->descriptors.memory != GRIP_MEM_HOST) {
        ref = s->features[0]->descriptors;
        ids = grip_array_host_view(GRIP_U32, 0, 1, NULL);
    } else {
        uint32_t dim = s->features[0]->descriptor_dim;
        uint64_t rows = 0;
        for (uint32_t m = 0; m < s->n_models; m++) {
            ck_assert_int_eq(s->features[m]->descriptors.memory, GRIP_MEM_HOST);
            rows += s->features[m]->descriptors.rows;
        }
        s->reference = malloc((size_t)rows * dim * sizeof(float) + 1);
        s->model_ids = malloc((size_t)rows * sizeof(uint32_t) + 1);
        ck_assert(s->reference && s->model_ids);
        uint64_t at = 0;
        for (uint32_t m = 0; m < s->n_models; m++) {
            const grip_array *d = &s->features[m]->descriptors;
            memcpy(s->reference + at * dim, d->data, (size_t)d->rows * dim * sizeof(float));
            for (uint64_t r = 0; r < d->rows; r++)
                s->model_ids[at + r] = m;
            at += d->rows;
        }
        ref = grip_array_host_view(GRIP_F32, rows, dim, s->reference);
        ids = grip_array_host_view(GRIP_U32, rows, 1, s->model_ids);
    }
    grip_status st = p->impl[GRIP_STAGE_INDEX]->build(p->stage[GRIP_STAGE_INDEX], &ref, ids.rows ? &ids : NULL,
                                                      &s->index);
    return stage_done(s, GRIP_STAGE_INDEX, walked, st, s->index);
}

/* Runs the five stages; stops at the first failure (s->failed names its stage); s->calls_after counts the walked
 * kind's fault points. */
static grip_status run(fault_pipeline *p, fault_run *s, grip_fault_kind walked)
{
    memset(s, 0, sizeof *s);
    s->failed = -1;
    s->n_models = p->n_models;
    s->clouds = calloc(p->n_models + 1, sizeof *s->clouds);
    s->features = calloc(p->n_models + 1, sizeof *s->features);
    s->views = calloc(p->n_models + 1, sizeof *s->views);
    ck_assert(s->clouds && s->features && s->views);
    const grip_stage_impl *const *impl = p->impl;
    grip_stage *const *stage = p->stage;
    grip_status st = GRIP_OK;
    /* the models in one describe_many call, as grip-host describes them (a fault in a later model's description
     * must release the earlier ones'), then the scene */
    const grip_cloud **models = calloc(p->n_models + 1, sizeof *models);
    uint32_t *roles = calloc(p->n_models + 1, sizeof *roles);
    ck_assert(models && roles);
    for (uint32_t i = 0; i <= p->n_models; i++) {
        s->clouds[i] = pipeline_cloud_view(i < p->n_models ? &p->models[i] : p->scene_cloud);
        models[i] = &s->clouds[i];
        roles[i] = GRIP_ROLE_MODEL;
    }
    uint32_t failed = 0;
    st = impl[GRIP_STAGE_DESCRIPTOR]->describe_many(stage[GRIP_STAGE_DESCRIPTOR], models, roles, NULL, p->n_models,
                                                    p->features_memory, s->features, &failed);
    for (uint32_t i = 0; st != GRIP_OK && i < p->n_models; i++)
        ck_assert_msg(s->features[i] == NULL, "describe_many failed (%d) but returned features of model %u", st, i);
    /* a fault fails one model's description, which the call names */
    ck_assert_msg(st == GRIP_OK ? failed == p->n_models : failed < p->n_models, "failed = %u", failed);
    st = stage_done(s, GRIP_STAGE_DESCRIPTOR, walked, st, NULL);
    free(models);
    free(roles);
    if (st == GRIP_OK) {
        st = impl[GRIP_STAGE_DESCRIPTOR]->describe(stage[GRIP_STAGE_DESCRIPTOR], &s->clouds[p->n_models],
                                                   GRIP_ROLE_SCENE, NULL, p->features_memory,
                                                   &s->features[p->n_models]);
        st = stage_done(s, GRIP_STAGE_DESCRIPTOR, walked, st, s->features[p->n_models]);
    }
    for (uint32_t i = 0; i <= p->n_models; i++)
        s->views[i] = (grip_view){sizeof(grip_view), &s->clouds[i], s->features[i]};
    if (st == GRIP_OK)
        st = run_index(p, s, walked);
    if (st == GRIP_OK) {
        st = impl[GRIP_STAGE_MATCH]->match(stage[GRIP_STAGE_MATCH], s->index, &s->features[p->n_models]->descriptors,
                                           GRIP_MEM_HOST, &s->matches);
        st = stage_done(s, GRIP_STAGE_MATCH, walked, st, s->matches);
    }
    if (st == GRIP_OK) {
        st = impl[GRIP_STAGE_GROUP]->group(stage[GRIP_STAGE_GROUP], s->views, p->n_models, &s->views[p->n_models],
                                           s->matches, &s->hypotheses);
        st = stage_done(s, GRIP_STAGE_GROUP, walked, st, s->hypotheses);
    }
    if (st == GRIP_OK) {
        st = impl[GRIP_STAGE_VERIFY]->verify(stage[GRIP_STAGE_VERIFY], s->views, p->n_models, &s->views[p->n_models],
                                             s->hypotheses, &s->verdicts);
        st = stage_done(s, GRIP_STAGE_VERIFY, walked, st, s->verdicts);
    }
    return st;
}

grip_status fault_pipeline_run(fault_pipeline *p, fault_run *out)
{
    return run(p, out, GRIP_FAULT_DEVICE_ALLOC);
}

/* ---- what a run found, as bytes to compare ------------------------------------------------------------------ */

static void put(fault_digest *d, const void *data, size_t n)
{
    if (d->n + n > d->cap) {
        size_t cap = 2 * (d->n + n) + 256;
        unsigned char *b = realloc(d->bytes, cap);
        ck_assert_ptr_nonnull(b);
        d->bytes = b;
        d->cap = cap;
    }
    if (n)
        memcpy(d->bytes + d->n, data, n);
    d->n += n;
}

/* An array's shape and bytes, brought to the host first when it lives on the device. */
static void put_array(fault_pipeline *p, fault_digest *d, const grip_array *a)
{
    put(d, &a->rows, sizeof a->rows);
    put(d, &a->cols, sizeof a->cols);
    grip_array host;
    int owned = 0;
    ck_assert_int_eq(grip_array_to_host(p->ctx, a, &host, &owned, "digest"), GRIP_OK);
    put(d, host.data, (size_t)(a->rows * a->cols) * grip_dtype_size(a->dtype));
    if (owned)
        grip_array_free_host(&host);
}

void fault_digest_hypotheses(fault_digest *d, const grip_hypotheses *h)
{
    put(d, &h->count, sizeof h->count);
    for (uint32_t i = 0; i < h->count; i++) {
        const grip_hypothesis *x = (const grip_hypothesis *)((const char *)h->items + (size_t)i * h->item_size);
        put(d, &x->model_id, sizeof x->model_id);
        put(d, x->pose, sizeof x->pose);
        put(d, &x->votes, sizeof x->votes);
        put(d, &x->n_members, sizeof x->n_members);
        put(d, x->members, x->n_members * sizeof *x->members);
    }
    d->hypotheses += h->count;
}

void fault_digest_verdicts(fault_digest *d, const grip_verdicts *v)
{
    put(d, &v->count, sizeof v->count);
    for (uint32_t i = 0; i < v->count; i++) {
        const grip_verdict *x = (const grip_verdict *)((const char *)v->items + (size_t)i * v->item_size);
        put(d, &x->hypothesis, sizeof x->hypothesis);
        put(d, x->pose, sizeof x->pose);
        put(d, &x->fitness, sizeof x->fitness);
        put(d, &x->rmse, sizeof x->rmse);
        put(d, &x->iterations, sizeof x->iterations);
        put(d, &x->accepted, sizeof x->accepted);
        put(d, &x->violation, sizeof x->violation);
        d->accepted += x->accepted != 0;
    }
}

int fault_digest_equal(const fault_digest *a, const fault_digest *b)
{
    return a->n == b->n && (a->n == 0 || memcmp(a->bytes, b->bytes, a->n) == 0);
}

void fault_digest_free(fault_digest *d)
{
    free(d->bytes);
    memset(d, 0, sizeof *d);
}

static void digest_of(fault_pipeline *p, const fault_run *s, fault_digest *d)
{
    memset(d, 0, sizeof *d);
    for (uint32_t i = 0; i <= s->n_models; i++) {
        const grip_features *f = s->features[i];
        put_array(p, d, &f->keypoints);
        put_array(p, d, &f->descriptors);
        d->keypoints += f->keypoints.rows;
    }
    const grip_matches *m = s->matches;
    put_array(p, d, &m->query);
    put_array(p, d, &m->reference);
    put_array(p, d, &m->model_id);
    put_array(p, d, &m->sqdist);
    d->matches = m->count;
    fault_digest_hypotheses(d, s->hypotheses);
    fault_digest_verdicts(d, s->verdicts);
}

/* A clean run (nothing armed) on the pipeline: it must succeed; its digest goes to *d. */
static void clean_run(fault_pipeline *p, grip_fault_kind walked, fault_digest *d, fault_run *kept)
{
    fault_run s;
    grip_status st = run(p, &s, walked);
    ck_assert_msg(st == GRIP_OK, "clean run: %s failed: %s: %s", s.failed >= 0 ? grip_stage_kind_name(s.failed) : "?",
                  p->plugin->status_str(st), p->plugin->ctx_last_error(p->ctx));
    if (kept)
        memcpy(kept->calls_after, s.calls_after, sizeof s.calls_after);
    grip_fault_disarm(); /* the digest's own copies are no fault points of the run */
    digest_of(p, &s, d);
    fault_run_free(&s);
}

static void check_device(fault_device_probe probe, grip_ctx *ctx, const fault_device_usage *clean, uint64_t nth,
                         const char *kind)
{
    if (!probe)
        return;
    fault_device_usage now;
    probe(ctx, &now);
    ck_assert_msg(now.pool_used == clean->pool_used && now.device_used == clean->device_used,
                  "%s %llu: device memory in use went from %llu (pool) / %llu (device) bytes to %llu / %llu", kind,
                  (unsigned long long)nth, (unsigned long long)clean->pool_used,
                  (unsigned long long)clean->device_used, (unsigned long long)now.pool_used,
                  (unsigned long long)now.device_used);
}

void fault_walk(fault_pipeline *p, grip_fault_kind kind, grip_status want, fault_device_probe probe,
                fault_walk_report *report)
{
    memset(report, 0, sizeof *report);
    const char *kind_name = grip_fault_kind_name(kind);
    /* a first run warms the context up (device probed, pool made, kernels loaded); the second is the reference */
    fault_digest clean, again;
    fault_run counted;
    grip_fault_disarm();
    clean_run(p, kind, &clean, NULL);
    free(clean.bytes);
    grip_fault_disarm();
    clean_run(p, kind, &clean, &counted);
    report->points = counted.calls_after[GRIP_STAGE_VERIFY];
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++)
        report->by_stage[k] = counted.calls_after[k] - (k ? counted.calls_after[k - 1] : 0);
    fault_device_usage device_clean = {0, 0};
    if (probe)
        probe(p->ctx, &device_clean);
    fprintf(stderr, "%s: clean run: %llu keypoints, %llu matches, %llu hypotheses, %llu accepted\n", kind_name,
            (unsigned long long)clean.keypoints, (unsigned long long)clean.matches,
            (unsigned long long)clean.hypotheses, (unsigned long long)clean.accepted);

    int shown[GRIP_STAGE_KIND_COUNT] = {0};
    for (uint64_t nth = 1;; nth++) {
        fault_run s;
        grip_fault_arm(kind, nth);
        grip_status st = run(p, &s, kind);
        int fired = grip_fault_fired();
        grip_fault_disarm();
        if (!fired) { /* past the last fault point: a clean run */
            ck_assert_msg(st == GRIP_OK, "%s %llu fired nothing, yet %s failed: %s", kind_name,
                          (unsigned long long)nth, s.failed >= 0 ? grip_stage_kind_name(s.failed) : "?",
                          p->plugin->ctx_last_error(p->ctx));
            digest_of(p, &s, &again);
            ck_assert_msg(again.n == clean.n && memcmp(again.bytes, clean.bytes, clean.n) == 0,
                          "%s %llu fired nothing, yet the results differ from a clean run's", kind_name,
                          (unsigned long long)nth);
            free(again.bytes);
            fault_run_free(&s);
            ck_assert_msg(nth - 1 == report->points, "%s: %llu faults fired, but a clean run passes %llu points",
                          kind_name, (unsigned long long)(nth - 1), (unsigned long long)report->points);
            break;
        }
        if (st == GRIP_OK) { /* absorbed by a fallback (smaller chunks, a streamed index): the clean results */
            digest_of(p, &s, &again);
            ck_assert_msg(again.n == clean.n && memcmp(again.bytes, clean.bytes, clean.n) == 0,
                          "%s %llu was absorbed, but the results differ from a clean run's", kind_name,
                          (unsigned long long)nth);
            free(again.bytes);
            fault_run_free(&s);
            report->absorbed++;
            check_device(probe, p->ctx, &device_clean, nth, kind_name);
            continue;
        }
        ck_assert_msg(s.failed >= 0, "%s %llu: the run failed (%d) outside a stage", kind_name,
                      (unsigned long long)nth, st);
        const char *stage_name = grip_stage_kind_name(s.failed);
        const char *error = p->plugin->ctx_last_error(p->ctx);
        ck_assert_msg(st == want, "%s %llu: %s returned %s (%d), not %s: %s", kind_name, (unsigned long long)nth,
                      stage_name, p->plugin->status_str(st), st, p->plugin->status_str(want), error);
        ck_assert_msg(strncmp(error, stage_name, strlen(stage_name)) == 0,
                      "%s %llu: the last error does not name the stage that failed (%s): '%s'", kind_name,
                      (unsigned long long)nth, stage_name, error);
        if (!shown[s.failed]) { /* one example per stage, for the log */
            shown[s.failed] = 1;
            fprintf(stderr, "%s %llu: %s: %s\n", kind_name, (unsigned long long)nth, p->plugin->status_str(st), error);
        }
        fault_run_free(&s);
        check_device(probe, p->ctx, &device_clean, nth, kind_name);
        /* the same context and stages, nothing armed: the clean run's results */
        clean_run(p, kind, &again, NULL);
        ck_assert_msg(again.n == clean.n && memcmp(again.bytes, clean.bytes, clean.n) == 0,
                      "%s %llu: after the fault, a clean run on the same context gives other results", kind_name,
                      (unsigned long long)nth);
        free(again.bytes);
    }
    free(clean.bytes);
    check_device(probe, p->ctx, &device_clean, 0, kind_name);
}

void fault_walk_print(const char *label, grip_fault_kind kind, const fault_walk_report *r)
{
    fprintf(
        stderr,
        "%s: %s: %llu fault points (descriptor %llu, index %llu, match %llu, group %llu, verify %llu), %llu of them "
        "absorbed by a fallback\n",
        label, grip_fault_kind_name(kind), (unsigned long long)r->points, (unsigned long long)r->by_stage[0],
        (unsigned long long)r->by_stage[1], (unsigned long long)r->by_stage[2], (unsigned long long)r->by_stage[3],
        (unsigned long long)r->by_stage[4], (unsigned long long)r->absorbed);
}
