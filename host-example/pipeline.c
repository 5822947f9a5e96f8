/* pipeline.c -- see pipeline.h. */
#include "pipeline.h"
#include "host_util.h"
#include "model_merge.h"
#include "common/param_value.h"

#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- opening ---------------------------------------------------------------------------------------------- */

static int load_plugins(grip_pipeline *p, const char *plugin_path, const grip_config *cfg, grip_diag *diag)
{
    char err[1024], path[4096];
    if (grip_loader_open(plugin_path, &p->plugins[0], err, sizeof err) != 0) {
        grip_diag_add(diag, "%s", err);
        return -1;
    }
    int bad = 0;
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++) {
        p->of_stage[k] = 0;
        if (!grip_config_stage_plugin(cfg, k, path, sizeof path))
            continue;
        if (grip_loader_open(path, &p->plugins[1 + k], err, sizeof err) != 0) {
            grip_config_report(diag, grip_config_find(cfg, grip_loader_kind_name(k), "plugin"), "%s", err);
            bad = 1;
            continue;
        }
        p->of_stage[k] = 1 + (int)k;
    }
    return bad ? -1 : 0;
}

static int create_contexts(grip_pipeline *p, const grip_config *cfg, grip_diag *diag)
{
    grip_pipeline_settings settings;
    grip_config_pipeline(cfg, &settings);
    grip_ctx_options opts = {sizeof opts, settings.cuda_device, settings.threads};
    for (int i = 0; i < 1 + GRIP_STAGE_KIND_COUNT; i++) {
        const grip_plugin *t = &p->plugins[i].table;
        if (!p->plugins[i].handle)
            continue;
        grip_status s = t->ctx_create(&opts, &p->ctxs[i]);
        if (s != GRIP_OK) {
            grip_diag_add(diag, "%s: cannot create a context: %s", p->plugins[i].path, t->status_str(s));
            return -1;
        }
    }
    return 0;
}

/* The value `key` gets in a stage created from kv: kv's, else the table's default; "" when the stage has no such
 * key. Copied into out (EXPLAIN_VALUE_SIZE bytes). */
static void setting_of(const grip_stage_impl *impl, const grip_kv *kv, uint32_t n_kv, const char *key, char *out)
{
    const char *value = "";
    for (uint32_t i = 0; i < impl->n_params; i++)
        if (strcmp(impl->params[i].key, key) == 0)
            value = impl->params[i].default_value ? impl->params[i].default_value : "";
    for (uint32_t i = 0; *value && i < n_kv; i++)
        if (strcmp(kv[i].key, key) == 0)
            value = kv[i].value;
    snprintf(out, EXPLAIN_VALUE_SIZE, "%s", value);
}

/* The settings a run's explanations name (explain.h), from the stage of kind k as created from kv. */
static void remember_settings(grip_pipeline *p, uint32_t k, const grip_kv *kv, uint32_t n_kv)
{
    if (k == GRIP_STAGE_DESCRIPTOR)
        setting_of(p->impl[k], kv, n_kv, "radius", p->explain.descriptor_radius);
    for (uint32_t reason = 0; k == GRIP_STAGE_VERIFY && reason < EXPLAIN_REASONS; reason++)
        setting_of(p->impl[k], kv, n_kv, explain_reason_key(reason), p->explain.value[reason]);
}

static int create_stages(grip_pipeline *p, const grip_config *cfg, grip_diag *diag)
{
    int bad = 0;
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++) {
        int slot = p->of_stage[k];
        const grip_plugin *t = &p->plugins[slot].table;
        uint32_t n_kv = 0;
        const grip_kv *kv = grip_config_stage_kv(cfg, k, &n_kv);
        p->impl[k] = grip_config_stage_impl(cfg, k);
        if (!p->impl[k]) {
            grip_diag_add(diag, "%s: %s: the plugin has no %s stage", p->plugins[slot].path, grip_loader_kind_name(k),
                          grip_loader_kind_name(k));
            bad = 1;
            continue;
        }
        remember_settings(p, k, kv, n_kv);
        grip_status s = p->impl[k]->create(p->ctxs[slot], kv, n_kv, &p->stage[k]);
        if (s != GRIP_OK) {
            grip_diag_add(diag, "%s '%s': %s: %s", grip_loader_kind_name(k), p->impl[k]->name, t->status_str(s),
                          t->ctx_last_error(p->ctxs[slot]));
            p->stage[k] = NULL;
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}

static grip_cloud cloud_of(const host_cloud *c);

/* The resolution of c measured by the plugin lp in a context of its own; 0 when it cannot (why into err). */
static double measure_cloud(const grip_loaded_plugin *lp, const host_cloud *c, char *err, size_t errlen)
{
    const grip_plugin *t = &lp->table;
    double resolution = 0;
    snprintf(err, errlen, "the plugin cannot measure a resolution (ABI 1.0)");
    if (!t->cloud_resolution)
        return 0;
    grip_ctx *ctx = NULL;
    grip_cloud cloud = cloud_of(c);
    grip_status s = t->ctx_create(NULL, &ctx);
    if (s == GRIP_OK)
        s = t->cloud_resolution(ctx, &cloud, &resolution);
    if (s != GRIP_OK) {
        snprintf(err, errlen, "%s", ctx ? t->ctx_last_error(ctx) : t->status_str(s));
        resolution = 0;
    }
    t->ctx_destroy(ctx);
    return resolution;
}

double pipeline_cloud_resolution(const grip_pipeline *p, const host_cloud *c)
{
    char err[512];
    return p->plugins[0].handle ? measure_cloud(&p->plugins[0], c, err, sizeof err) : 0;
}

/* Whether some entry of cfg is written in mr. */
static int config_uses_mr(const grip_config *cfg)
{
    double m;
    for (size_t i = 0; i < cfg->count; i++)
        if (grip_param_split_mr(cfg->entries[i].value, &m))
            return 1;
    return 0;
}

/* cfg->resolution from the scene when some entry is written in mr (measuring a large scene on the CPU costs more
 * than a whole GPU run, so a config in plain lengths does not pay for it); 0 when not measured or the plugin cannot
 * measure it. A failure is reported (validation then names each mr key). */
static void measure_resolution(const grip_loaded_plugin *lp, const host_cloud *scene, grip_config *cfg,
                               grip_diag *diag)
{
    char err[512];
    cfg->resolution = 0;
    if (!config_uses_mr(cfg))
        return;
    cfg->resolution = scene ? measure_cloud(lp, scene, err, sizeof err) : 0;
    if (scene && !(cfg->resolution > 0))
        grip_diag_add(diag, "%s: cannot measure the resolution: %s", scene->path ? scene->path : "scene", err);
}

int pipeline_open_for(grip_pipeline *p, const char *plugin_path, grip_config *cfg, const host_cloud *scene,
                      grip_diag *diag)
{
    memset(p, 0, sizeof *p);
    const grip_loaded_plugin *of_kind[GRIP_STAGE_KIND_COUNT];
    int ok = load_plugins(p, plugin_path, cfg, diag) == 0;
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++)
        of_kind[k] = p->plugins[p->of_stage[k]].handle ? &p->plugins[p->of_stage[k]] : NULL;
    if (p->plugins[0].handle)
        measure_resolution(&p->plugins[0], scene, cfg, diag);
    if (p->plugins[0].handle && grip_config_validate(cfg, of_kind, diag) != 0)
        ok = 0;
    if (ok)
        ok = create_contexts(p, cfg, diag) == 0 && create_stages(p, cfg, diag) == 0;
    if (!ok) {
        pipeline_close(p);
        return -1;
    }
    return 0;
}

int pipeline_open(grip_pipeline *p, const char *plugin_path, grip_config *cfg, grip_diag *diag)
{
    return pipeline_open_for(p, plugin_path, cfg, NULL, diag);
}

void pipeline_close(grip_pipeline *p)
{
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++)
        if (p->stage[k])
            p->impl[k]->destroy(p->stage[k]);
    for (int i = 0; i < 1 + GRIP_STAGE_KIND_COUNT; i++) {
        if (p->ctxs[i])
            p->plugins[i].table.ctx_destroy(p->ctxs[i]);
        grip_loader_close(&p->plugins[i]);
    }
    memset(p, 0, sizeof *p);
}

/* ---- running ---------------------------------------------------------------------------------------------- */

static grip_cloud cloud_of(const host_cloud *c)
{
    grip_cloud g;
    memset(&g, 0, sizeof g);
    g.struct_size = sizeof g;
    g.width = c->width;
    g.height = c->height;
    g.xyz = host_array(GRIP_F32, c->n, 3, c->xyz);
    g.normals = host_array(GRIP_F32, c->normals ? c->n : 0, 3, c->normals);
    g.rgb = host_array(GRIP_U8, c->rgb ? c->n : 0, 3, c->rgb);
    g.name = c->path;
    memcpy(g.viewpoint, c->viewpoint, sizeof g.viewpoint);
    return g;
}

/* What one run holds; released by run_state_free whatever happened. */
typedef struct run_state {
    uint32_t n_clouds;           /* model clouds (views) */
    uint32_t n_models;
    grip_cloud *clouds;          /* n_clouds model clouds, then the scene */
    grip_features **features;    /* likewise */
    grip_view *views;            /* likewise */
    merged_model *merged;        /* n_models: each model's views merged (used only when clouds are views) */
    grip_view *models;           /* n_models: what index, group and verify see of each model */
    float *reference;            /* all models' descriptors, concatenated */
    uint32_t *model_ids;
    grip_index *index;
    grip_matches *matches;
    grip_hypotheses *hypotheses;
    grip_verdicts *verdicts;
} run_state;

static void run_state_free(run_state *s)
{
    if (s->verdicts)
        s->verdicts->release(s->verdicts);
    if (s->hypotheses)
        s->hypotheses->release(s->hypotheses);
    if (s->matches)
        s->matches->release(s->matches);
    if (s->index)
        s->index->release(s->index);
    for (uint32_t i = 0; s->features && i <= s->n_clouds; i++)
        if (s->features[i])
            s->features[i]->release(s->features[i]);
    for (uint32_t m = 0; s->merged && m < s->n_models; m++)
        model_merge_free(&s->merged[m]);
    free(s->merged);
    free(s->models);
    free(s->features);
    free(s->views);
    free(s->clouds);
    free(s->reference);
    free(s->model_ids);
}

/* The stage's status and its plugin's error text, into diag. */
static int stage_failed(grip_pipeline *p, uint32_t kind, grip_status s, const char *what, grip_diag *diag)
{
    int slot = p->of_stage[kind];
    grip_diag_add(diag, "%s '%s' failed on %s: %s: %s", grip_loader_kind_name(kind), p->impl[kind]->name, what,
                  p->plugins[slot].table.status_str(s), p->plugins[slot].table.ctx_last_error(p->ctxs[slot]));
    return -1;
}

static int run_descriptors(grip_pipeline *p, run_state *st, const host_cloud *models, const host_cloud *scene,
                           grip_diag *diag)
{
    const grip_stage_impl *d = p->impl[GRIP_STAGE_DESCRIPTOR];
    for (uint32_t i = 0; i <= st->n_clouds; i++) {
        const host_cloud *c = i < st->n_clouds ? &models[i] : scene;
        st->clouds[i] = cloud_of(c);
        uint32_t role = i < st->n_clouds ? GRIP_ROLE_MODEL : GRIP_ROLE_SCENE;
        grip_status s = d->describe(p->stage[GRIP_STAGE_DESCRIPTOR], &st->clouds[i], role, NULL, GRIP_MEM_HOST,
                                    &st->features[i]);
        if (s != GRIP_OK)
            return stage_failed(p, GRIP_STAGE_DESCRIPTOR, s, c->path, diag);
        st->views[i] = (grip_view){sizeof(grip_view), &st->clouds[i], st->features[i]};
    }
    return 0;
}

/* The models index, group and verify see: each cloud, or the merge of each model's views. */
static int build_models(run_state *st, const uint32_t *model_of_cloud, grip_diag *diag)
{
    if (!model_of_cloud) {
        memcpy(st->models, st->views, st->n_models * sizeof *st->models);
        return 0;
    }
    const grip_cloud **clouds = calloc(st->n_clouds + 1, sizeof *clouds);
    const grip_features **feats = calloc(st->n_clouds + 1, sizeof *feats);
    int rc = clouds && feats ? 0 : -1;
    for (uint32_t m = 0; m < st->n_models && rc == 0; m++) {
        uint32_t n = 0;
        for (uint32_t c = 0; c < st->n_clouds; c++)
            if (model_of_cloud[c] == m) {
                clouds[n] = &st->clouds[c];
                feats[n++] = st->features[c];
            }
        if (n == 0 || model_merge(clouds, feats, n, &st->merged[m]) != 0)
            rc = -1;
        else
            st->models[m] = (grip_view){sizeof(grip_view), &st->merged[m].cloud, &st->merged[m].features};
    }
    if (rc != 0)
        grip_diag_add(diag, "cannot merge the model views (a model without views, or out of memory)");
    free(clouds);
    free(feats);
    return rc;
}

/* Every model's descriptor rows, concatenated in model order and tagged by model id. */
static int gather_reference(run_state *st, uint32_t dim, uint64_t *rows, grip_diag *diag)
{
    uint64_t n = 0;
    for (uint32_t m = 0; m < st->n_models; m++)
        n += st->models[m].features->descriptors.rows;
    st->reference = malloc((size_t)n * dim * sizeof(float) + 1);
    st->model_ids = malloc((size_t)n * sizeof(uint32_t) + 1);
    if (!st->reference || !st->model_ids) {
        grip_diag_add(diag, "index: out of host memory for %llu reference rows", (unsigned long long)n);
        return -1;
    }
    uint64_t at = 0;
    for (uint32_t m = 0; m < st->n_models; m++) {
        const grip_array *dsc = &st->models[m].features->descriptors;
        memcpy(st->reference + at * dim, dsc->data, (size_t)dsc->rows * dim * sizeof(float));
        for (uint64_t r = 0; r < dsc->rows; r++)
            st->model_ids[at + r] = m;
        at += dsc->rows;
    }
    *rows = n;
    return 0;
}

static int run_index_and_match(grip_pipeline *p, run_state *st, pipeline_result *r, grip_diag *diag)
{
    uint32_t dim = st->features[st->n_clouds]->descriptor_dim;
    uint64_t rows = 0;
    if (gather_reference(st, dim, &rows, diag) != 0)
        return -1;
    double t0 = host_now_ms();
    grip_array ref = host_array(GRIP_F32, rows, dim, st->reference);
    grip_array ids = host_array(GRIP_U32, rows, 1, st->model_ids);
    grip_status s = p->impl[GRIP_STAGE_INDEX]->build(p->stage[GRIP_STAGE_INDEX], &ref, &ids, &st->index);
    if (s != GRIP_OK)
        return stage_failed(p, GRIP_STAGE_INDEX, s, "the models' descriptors", diag);
    double t1 = host_now_ms();
    const grip_array *queries = &st->features[st->n_clouds]->descriptors;
    s = p->impl[GRIP_STAGE_MATCH]->match(p->stage[GRIP_STAGE_MATCH], st->index, queries, GRIP_MEM_HOST, &st->matches);
    if (s != GRIP_OK)
        return stage_failed(p, GRIP_STAGE_MATCH, s, "the scene's descriptors", diag);
    r->timings_ms[GRIP_STAGE_INDEX] = t1 - t0;
    r->timings_ms[GRIP_STAGE_MATCH] = host_now_ms() - t1;
    return 0;
}

static const grip_verdict *verdict_at(const grip_verdicts *v, uint32_t i)
{
    return (const grip_verdict *)((const char *)v->items + (size_t)i * v->item_size);
}

static const grip_hypothesis *hypothesis_at(const grip_hypotheses *h, uint32_t i)
{
    return (const grip_hypothesis *)((const char *)h->items + (size_t)i * h->item_size);
}

static int collect_result(const run_state *st, pipeline_result *r, grip_diag *diag)
{
    r->n_models = st->n_models;
    r->model_keypoints = calloc(st->n_models + 1, sizeof *r->model_keypoints);
    r->n_hypotheses = st->hypotheses->count;
    r->hypotheses = calloc(r->n_hypotheses + 1, sizeof *r->hypotheses);
    if (!r->model_keypoints || !r->hypotheses) {
        grip_diag_add(diag, "out of host memory");
        return -1;
    }
    for (uint32_t m = 0; m < st->n_models; m++)
        r->model_keypoints[m] = (size_t)st->models[m].features->keypoints.rows;
    r->scene_keypoints = (size_t)st->features[st->n_clouds]->keypoints.rows;
    r->normals_source = calloc(st->n_clouds + 1, sizeof *r->normals_source);
    r->had_normals = calloc(st->n_clouds + 1, sizeof *r->had_normals);
    if (!r->normals_source || !r->had_normals) {
        grip_diag_add(diag, "out of host memory");
        return -1;
    }
    r->n_described = st->n_clouds + 1;
    for (uint32_t i = 0; i <= st->n_clouds; i++) {
        const grip_features *f = st->features[i];
        r->normals_source[i] = f->struct_size >= offsetof(grip_features, normals_source) + sizeof f->normals_source
                                   ? f->normals_source
                                   : GRIP_NORMALS_UNSAID;
        r->had_normals[i] = st->clouds[i].normals.rows > 0;
    }
    r->correspondences = (size_t)st->matches->count;
    for (uint32_t i = 0; i < st->hypotheses->count; i++) {
        const grip_hypothesis *h = hypothesis_at(st->hypotheses, i);
        pipeline_instance *out = &r->hypotheses[i];
        if (h->model_id >= st->n_models) { /* the printers index the model names by it */
            grip_diag_add(diag, "group: hypothesis %u names model %u, but there are %u models", i, h->model_id,
                          st->n_models);
            return -1;
        }
        out->model = h->model_id;
        out->correspondences = h->n_members;
        out->votes = h->votes;
        for (int k = 0; k < 16; k++)
            out->pose[k] = h->pose[k];
    }
    /* a verdict says which hypothesis it judges: the ABI does not promise verdict i is about hypothesis i */
    for (uint32_t j = 0; j < st->verdicts->count; j++) {
        const grip_verdict *v = verdict_at(st->verdicts, j);
        if (v->hypothesis >= st->hypotheses->count) {
            grip_diag_add(diag, "verify: verdict %u names hypothesis %u, but there are %u", j, v->hypothesis,
                          st->hypotheses->count);
            return -1;
        }
        pipeline_instance *out = &r->hypotheses[v->hypothesis];
        for (int k = 0; k < 16; k++)
            out->pose[k] = v->pose[k];
        out->fitness = v->fitness;
        out->rmse = v->rmse;
        out->violation = v->struct_size >= offsetof(grip_verdict, violation) + sizeof v->violation ? v->violation
                                                                                                  : NAN;
        out->accepted = v->accepted != 0;
        out->reason = explain_verdict_reason(v);
    }
    return 0;
}

static int run_stages(grip_pipeline *p, run_state *st, const host_cloud *models, const uint32_t *model_of_cloud,
                      const host_cloud *scene, pipeline_result *r, grip_diag *diag)
{
    double t0 = host_now_ms();
    if (run_descriptors(p, st, models, scene, diag) != 0 || build_models(st, model_of_cloud, diag) != 0)
        return -1;
    r->timings_ms[GRIP_STAGE_DESCRIPTOR] = host_now_ms() - t0;
    if (run_index_and_match(p, st, r, diag) != 0)
        return -1;
    const grip_view *scene_view = &st->views[st->n_clouds];
    t0 = host_now_ms();
    grip_status s = p->impl[GRIP_STAGE_GROUP]->group(p->stage[GRIP_STAGE_GROUP], st->models, st->n_models, scene_view,
                                                    st->matches, &st->hypotheses);
    if (s != GRIP_OK)
        return stage_failed(p, GRIP_STAGE_GROUP, s, "the correspondences", diag);
    double t1 = host_now_ms();
    s = p->impl[GRIP_STAGE_VERIFY]->verify(p->stage[GRIP_STAGE_VERIFY], st->models, st->n_models, scene_view,
                                           st->hypotheses, &st->verdicts);
    if (s != GRIP_OK)
        return stage_failed(p, GRIP_STAGE_VERIFY, s, "the hypotheses", diag);
    r->timings_ms[GRIP_STAGE_GROUP] = t1 - t0;
    r->timings_ms[GRIP_STAGE_VERIFY] = host_now_ms() - t1;
    return collect_result(st, r, diag);
}

int pipeline_run(grip_pipeline *p, const host_cloud *clouds, uint32_t n_clouds, const uint32_t *model_of_cloud,
                 uint32_t n_models, const host_cloud *scene, pipeline_result *r, grip_diag *diag)
{
    memset(r, 0, sizeof *r);
    run_state st;
    memset(&st, 0, sizeof st);
    st.n_clouds = n_clouds;
    st.n_models = model_of_cloud ? n_models : n_clouds;
    st.clouds = calloc(n_clouds + 1, sizeof *st.clouds);
    st.features = calloc(n_clouds + 1, sizeof *st.features);
    st.views = calloc(n_clouds + 1, sizeof *st.views);
    st.merged = calloc(st.n_models + 1, sizeof *st.merged);
    st.models = calloc(st.n_models + 1, sizeof *st.models);
    int rc = -1;
    if (!st.clouds || !st.features || !st.views || !st.merged || !st.models)
        grip_diag_add(diag, "out of host memory");
    else if (n_clouds == 0 || st.n_models == 0)
        grip_diag_add(diag, "no model to look for (give at least one --model)");
    else
        rc = run_stages(p, &st, clouds, model_of_cloud, scene, r, diag);
    if (rc == 0) {
        r->settings = p->explain;
        explain_empty_run(r->hint, sizeof r->hint, r->scene_keypoints, r->correspondences, r->n_hypotheses, clouds,
                          n_clouds, scene, &p->explain);
    }
    run_state_free(&st);
    if (rc != 0)
        pipeline_result_free(r);
    return rc;
}
