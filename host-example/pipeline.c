/* pipeline.c -- see pipeline.h. */
#include "pipeline.h"
#include "shard/sharded_index.h"
#include "accounting.h"
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

/* Whether a descriptor key can change how a model is described. device, fallback and clouds_in_flight choose where
 * and when the same description is computed; keys named scene_* (grip's convention, e.g. scene_leaf) apply to scene
 * clouds only. */
static int describes_models(const char *key)
{
    return strcmp(key, "device") != 0 && strcmp(key, "fallback") != 0 && strcmp(key, "clouds_in_flight") != 0 &&
           strncmp(key, "scene_", 6) != 0;
}

/* The text of p->model_settings (below) into out[0..cap), NUL-terminated when cap > 0; returns its length, so
 * that a first call with cap 0 sizes it. */
static size_t write_model_settings(const grip_pipeline *p, const grip_kv *kv, uint32_t n_kv, char *out, size_t cap)
{
    const grip_stage_impl *impl = p->impl[GRIP_STAGE_DESCRIPTOR];
    const grip_plugin *t = &p->plugins[p->of_stage[GRIP_STAGE_DESCRIPTOR]].table;
    size_t len = 0;
#define APPEND(...) len += (size_t)snprintf(len < cap ? out + len : NULL, len < cap ? cap - len : 0, __VA_ARGS__)
    APPEND("plugin = %s %s\ndescriptor.impl = %s\n", t->name ? t->name : "", t->version ? t->version : "",
           impl->name);
    for (uint32_t i = 0; i < impl->n_params; i++) {
        const char *key = impl->params[i].key, *value = impl->params[i].default_value;
        if (!describes_models(key))
            continue;
        for (uint32_t j = 0; j < n_kv; j++)
            if (strcmp(kv[j].key, key) == 0)
                value = kv[j].value;
        APPEND("descriptor.%s = %s\n", key, value ? value : "");
    }
#undef APPEND
    return len;
}

/* p->model_settings: one "name = value" line for the plugin, the implementation and every key of the descriptor
 * stage (created from kv) that can change a model's description, in the table's order, each with the value the
 * stage gets (kv's, a length written in mr already resolved, else the table's default). */
static int describe_model_settings(grip_pipeline *p, const grip_kv *kv, uint32_t n_kv)
{
    size_t len = write_model_settings(p, kv, n_kv, NULL, 0);
    p->model_settings = malloc(len + 1);
    if (!p->model_settings)
        return -1;
    write_model_settings(p, kv, n_kv, p->model_settings, len + 1);
    return 0;
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
        if (k == GRIP_STAGE_DESCRIPTOR && describe_model_settings(p, kv, n_kv) != 0) {
            grip_diag_add(diag, "out of host memory");
            bad = 1;
        }
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


/* The resolution of c measured by the plugin lp in a context of its own; 0 when it cannot (why into err). */
static double measure_cloud(const grip_loaded_plugin *lp, const host_cloud *c, char *err, size_t errlen)
{
    const grip_plugin *t = &lp->table;
    double resolution = 0;
    snprintf(err, errlen, "the plugin cannot measure a resolution (ABI 1.0)");
    if (!t->cloud_resolution)
        return 0;
    grip_ctx *ctx = NULL;
    grip_cloud cloud = pipeline_cloud_view(c);
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

int pipeline_config_uses_mr(const grip_config *cfg)
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
    if (!pipeline_config_uses_mr(cfg))
        return;
    cfg->resolution = scene ? measure_cloud(lp, scene, err, sizeof err) : 0;
    if (scene && !(cfg->resolution > 0))
        grip_diag_add(diag, "%s: cannot measure the resolution: %s", scene->path ? scene->path : "scene", err);
}

/* Where the scene's features go between the stages. On the device when one plugin runs every stage (plugin.h lets
 * a stage take device arrays of its own plugin's context, not another's), that plugin sees a CUDA device, and its
 * descriptor stage has a device key not set to the CPU (a CPU descriptor's features would only be uploaded for the
 * next stage to fetch back): the descriptors then go straight from describe() to the index's search, and nothing
 * the scene's features hold crosses PCIe unless a stage reads it on the host. Else in host memory. */
static uint32_t scene_features_memory(const grip_pipeline *p, const grip_config *cfg)
{
    int slot = p->of_stage[GRIP_STAGE_DESCRIPTOR];
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++)
        if (p->of_stage[k] != slot)
            return GRIP_MEM_HOST;
    const grip_plugin *t = &p->plugins[slot].table;
    if (!(t->capabilities & GRIP_CAP_CUDA) || !t->device_count || t->device_count(p->ctxs[slot]) <= 0)
        return GRIP_MEM_HOST;
    uint32_t n_kv = 0;
    const grip_kv *kv = grip_config_stage_kv(cfg, GRIP_STAGE_DESCRIPTOR, &n_kv);
    char device[EXPLAIN_VALUE_SIZE];
    setting_of(p->impl[GRIP_STAGE_DESCRIPTOR], kv, n_kv, "device", device);
    return !*device || strcmp(device, "cpu") == 0 ? GRIP_MEM_HOST : GRIP_MEM_CUDA; /* no device key: a CPU stage */
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
    if (ok)
        p->scene_memory = scene_features_memory(p, cfg);
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
    free(p->model_settings);
    memset(p, 0, sizeof *p);
}

/* ---- running ---------------------------------------------------------------------------------------------- */

grip_cloud pipeline_cloud_view(const host_cloud *c)
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

/* The model clouds described, before they are copied into a model set; released by described_free. */
typedef struct described {
    uint32_t n_clouds;
    grip_cloud *clouds;       /* n_clouds */
    grip_features **features; /* n_clouds, owned by the descriptor stage's plugin */
    grip_view *views;         /* n_models: each cloud, or each model's views merged */
    merged_model *merged;     /* n_models, used when clouds are views */
    uint32_t n_models;
} described;

static void described_free(described *d)
{
    for (uint32_t i = 0; d->features && i < d->n_clouds; i++)
        if (d->features[i])
            d->features[i]->release(d->features[i]);
    for (uint32_t m = 0; d->merged && m < d->n_models; m++)
        model_merge_free(&d->merged[m]);
    free(d->clouds);
    free(d->features);
    free(d->views);
    free(d->merged);
}

/* The stage's status and its plugin's error text, into diag. */
static int stage_failed(grip_pipeline *p, uint32_t kind, grip_status s, const char *what, grip_diag *diag)
{
    int slot = p->of_stage[kind];
    grip_diag_add(diag, "%s '%s' failed on %s: %s: %s", grip_loader_kind_name(kind), p->impl[kind]->name, what,
                  p->plugins[slot].table.status_str(s), p->plugins[slot].table.ctx_last_error(p->ctxs[slot]));
    return -1;
}

/* describe() on c, its features into `memory`. */
static int describe_into(grip_pipeline *p, const grip_cloud *c, uint32_t role, const char *what, uint32_t memory,
                         grip_features **out, grip_diag *diag)
{
    grip_status s = p->impl[GRIP_STAGE_DESCRIPTOR]->describe(p->stage[GRIP_STAGE_DESCRIPTOR], c, role, NULL, memory,
                                                             out);
    return s == GRIP_OK ? 0 : stage_failed(p, GRIP_STAGE_DESCRIPTOR, s, what, diag);
}

/* describe() on the scene c: its features where p->scene_memory says, but on the host for an index sharded across
 * ranks (its merge reads the queries). */
static int describe_scene(grip_pipeline *p, const grip_cloud *c, const char *what, grip_features **out,
                          grip_diag *diag)
{
    return describe_into(p, c, GRIP_ROLE_SCENE, what, !p->comm ? p->scene_memory : GRIP_MEM_HOST, out, diag);
}

/* The model clouds described (names[i] naming cloud i in a failure), their features into host memory (a model set
 * copies them): in one describe_many call when the descriptor's plugin has it (ABI 1.4; on a GPU it describes
 * several clouds at once), else one describe() a cloud. After a failure, out holds the features of the clouds
 * described before it, for the caller to release. */
static int describe_models(grip_pipeline *p, const grip_cloud *clouds, uint32_t n, const char *const *names,
                           grip_features **out, grip_diag *diag)
{
    const grip_stage_impl *impl = p->impl[GRIP_STAGE_DESCRIPTOR];
    if (n < 2 || !impl->describe_many) { /* the loader leaves it NULL for a plugin of ABI 1.3 or older */
        for (uint32_t i = 0; i < n; i++)
            if (describe_into(p, &clouds[i], GRIP_ROLE_MODEL, names[i], GRIP_MEM_HOST, &out[i], diag) != 0)
                return -1;
        return 0;
    }
    const grip_cloud **each = calloc(n, sizeof *each);
    uint32_t *roles = calloc(n, sizeof *roles);
    if (!each || !roles) {
        free(each);
        free(roles);
        grip_diag_add(diag, "out of host memory");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        each[i] = &clouds[i];
        roles[i] = GRIP_ROLE_MODEL;
    }
    uint32_t failed = n;
    grip_status s =
        impl->describe_many(p->stage[GRIP_STAGE_DESCRIPTOR], each, roles, NULL, n, GRIP_MEM_HOST, out, &failed);
    free(each);
    free(roles);
    if (s != GRIP_OK)
        return stage_failed(p, GRIP_STAGE_DESCRIPTOR, s, failed < n ? names[failed] : "the models", diag);
    return 0;
}

/* The models index, group and verify see: each cloud, or the merge of each model's views. */
static int merge_views(described *d, const uint32_t *model_of_cloud, grip_diag *diag)
{
    if (!model_of_cloud) {
        for (uint32_t m = 0; m < d->n_models; m++)
            d->views[m] = (grip_view){sizeof(grip_view), &d->clouds[m], d->features[m]};
        return 0;
    }
    const grip_cloud **clouds = calloc(d->n_clouds + 1, sizeof *clouds);
    const grip_features **feats = calloc(d->n_clouds + 1, sizeof *feats);
    int rc = clouds && feats ? 0 : -1;
    for (uint32_t m = 0; m < d->n_models && rc == 0; m++) {
        uint32_t n = 0;
        for (uint32_t c = 0; c < d->n_clouds; c++)
            if (model_of_cloud[c] == m) {
                clouds[n] = &d->clouds[c];
                feats[n++] = d->features[c];
            }
        if (n == 0 || model_merge(clouds, feats, n, &d->merged[m]) != 0)
            rc = -1;
        else
            d->views[m] = (grip_view){sizeof(grip_view), &d->merged[m].cloud, &d->merged[m].features};
    }
    if (rc != 0)
        grip_diag_add(diag, "cannot merge the model views (a model without views, or out of memory)");
    free(clouds);
    free(feats);
    return rc;
}

int pipeline_describe_models(grip_pipeline *p, const host_cloud *clouds, uint32_t n_clouds,
                             const uint32_t *model_of_cloud, uint32_t n_models, const char *const *names,
                             model_set *out, grip_diag *diag)
{
    memset(out, 0, sizeof *out);
    described d = {n_clouds, NULL, NULL, NULL, NULL, model_of_cloud ? n_models : n_clouds};
    if (n_clouds == 0 || d.n_models == 0) {
        grip_diag_add(diag, "no model to look for (give at least one --model)");
        return -1;
    }
    d.clouds = calloc(n_clouds + 1, sizeof *d.clouds);
    d.features = calloc(n_clouds + 1, sizeof *d.features);
    d.views = calloc(d.n_models + 1, sizeof *d.views);
    d.merged = calloc(d.n_models + 1, sizeof *d.merged);
    const char **paths = calloc(n_clouds + 1, sizeof *paths);
    int rc = d.clouds && d.features && d.views && d.merged && paths ? 0 : -1;
    if (rc != 0)
        grip_diag_add(diag, "out of host memory");
    for (uint32_t i = 0; i < n_clouds && rc == 0; i++) {
        d.clouds[i] = pipeline_cloud_view(&clouds[i]);
        paths[i] = clouds[i].path;
    }
    if (rc == 0)
        rc = describe_models(p, d.clouds, n_clouds, paths, d.features, diag);
    free(paths);
    if (rc == 0)
        rc = merge_views(&d, model_of_cloud, diag);
    const char **labels = rc == 0 ? calloc(d.n_models + 1, sizeof *labels) : NULL;
    for (uint32_t m = 0; labels && m < d.n_models; m++)
        labels[m] = names ? names[m] : d.views[m].cloud->name;
    char err[512];
    const grip_plugin *t = &p->plugins[p->of_stage[GRIP_STAGE_DESCRIPTOR]].table;
    if (rc == 0 && (!labels || model_set_copy(out, d.views, labels, d.n_models, p->model_settings, t->abi_major,
                                              t->abi_minor, err, sizeof err) != 0)) {
        grip_diag_add(diag, "descriptor: keeping the described models: %s", labels ? err : "out of host memory");
        rc = -1;
    }
    free(labels);
    described_free(&d);
    return rc;
}

/* The value of `key` in settings text (lines "key = value"), copied into value; 0 when absent. */
static int settings_value(const char *text, const char *key, size_t key_len, char *value, size_t n)
{
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len >= key_len + 2 && strncmp(line, key, key_len) == 0 && line[key_len] == ' ' &&
            line[key_len + 1] == '=') {
            size_t skip = len >= key_len + 3 ? key_len + 3 : len; /* "key = value", or "key =" */
            snprintf(value, n, "%.*s", (int)(len - skip), line + skip);
            return 1;
        }
        line = end ? end + 1 : NULL;
    }
    return 0;
}

/* The first key whose value differs between the settings texts a and b (a key absent from one side reads as
 * "(absent)"), with both values; 0 when they are the same. */
static int settings_differ(const char *a, const char *b, char *key, size_t key_n, char *va, char *vb, size_t n)
{
    for (int pass = 0; pass < 2; pass++) {
        const char *text = pass == 0 ? a : b;
        for (const char *line = text; line && *line;) {
            const char *end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line), key_len = 0;
            while (key_len < len && !(line[key_len] == ' ' && key_len + 1 < len && line[key_len + 1] == '='))
                key_len++;
            snprintf(key, key_n, "%.*s", (int)key_len, line);
            if (!settings_value(a, line, key_len, va, n))
                snprintf(va, n, "(absent)");
            if (!settings_value(b, line, key_len, vb, n))
                snprintf(vb, n, "(absent)");
            if (strcmp(va, vb) != 0)
                return 1;
            line = end ? end + 1 : NULL;
        }
    }
    return 0;
}

int pipeline_check_models(const grip_pipeline *p, const model_set *m, const char *file, grip_diag *diag)
{
    const grip_plugin *t = &p->plugins[p->of_stage[GRIP_STAGE_DESCRIPTOR]].table;
    if (m->abi_major != t->abi_major || m->abi_minor != t->abi_minor) {
        grip_diag_add(diag,
                      "%s: described by a plugin of ABI %u.%u, but this run's descriptor plugin has ABI %u.%u: "
                      "describe the models again (grip-host models)",
                      file, m->abi_major, m->abi_minor, t->abi_major, t->abi_minor);
        return -1;
    }
    if (strcmp(m->settings, p->model_settings) == 0)
        return 0;
    char key[128], theirs[256], ours[256];
    if (settings_differ(m->settings, p->model_settings, key, sizeof key, theirs, ours, sizeof ours))
        grip_diag_add(diag,
                      "%s: its models were described with %s = %s, but this run's config gives %s = %s: describe "
                      "the models again with this config (grip-host models)",
                      file, key, theirs, key, ours);
    else
        grip_diag_add(diag, "%s: its descriptor settings are not written as this run's (the texts differ): describe "
                      "the models again with this config (grip-host models)", file);
    return -1;
}

int pipeline_build_index(grip_pipeline *p, const model_set *m, grip_index **out, grip_diag *diag)
{
    *out = NULL;
    if (m->n_models == 0) {
        grip_diag_add(diag, "no model to look for (give at least one --model)");
        return -1;
    }
    grip_array ref, ids = {0};
    const grip_array *ids_given = model_set_reference(m, &ref, &ids) ? &ids : NULL;
    if (p->comm) { /* run --mpi: this rank's rows only, the search merged across ranks */
        char why[1024];
        int slot = p->of_stage[GRIP_STAGE_INDEX];
        if (sharded_index_build(p->comm, &p->plugins[slot].table, p->ctxs[slot], p->impl[GRIP_STAGE_INDEX],
                                p->stage[GRIP_STAGE_INDEX], &ref, &ids, out, why, sizeof why) != 0) {
            grip_diag_add(diag, "index '%s' sharded across ranks failed: %s", p->impl[GRIP_STAGE_INDEX]->name, why);
            return -1;
        }
        return 0;
    }
    grip_status s = p->impl[GRIP_STAGE_INDEX]->build(p->stage[GRIP_STAGE_INDEX], &ref, ids_given, out);
    return s == GRIP_OK ? 0 : stage_failed(p, GRIP_STAGE_INDEX, s, "the models' descriptors", diag);
}

/* What one scene's run holds; released by scene_state_free whatever happened. */
typedef struct scene_state {
    grip_cloud cloud;
    grip_features *features;
    grip_matches *matches;
    grip_hypotheses *hypotheses;
    grip_verdicts *verdicts;
} scene_state;

static void scene_state_free(scene_state *s)
{
    if (s->verdicts)
        s->verdicts->release(s->verdicts);
    if (s->hypotheses)
        s->hypotheses->release(s->hypotheses);
    if (s->matches)
        s->matches->release(s->matches);
    if (s->features)
        s->features->release(s->features);
}

static const grip_verdict *verdict_at(const grip_verdicts *v, uint32_t i)
{
    return (const grip_verdict *)((const char *)v->items + (size_t)i * v->item_size);
}

static const grip_hypothesis *hypothesis_at(const grip_hypotheses *h, uint32_t i)
{
    return (const grip_hypothesis *)((const char *)h->items + (size_t)i * h->item_size);
}

/* How the models' computed normals were oriented: the settings that described them (a database's too) say
 * descriptor.model_normals = outward or propagate (grip's descriptor stages); "viewpoint" when they say neither
 * (also another plugin's, which say nothing). */
static const char *models_orientation(const model_set *m)
{
    static const char *const oriented[] = {"outward", "propagate"};
    for (size_t i = 0; m->settings && i < sizeof oriented / sizeof oriented[0]; i++) {
        char line[64];
        snprintf(line, sizeof line, "\ndescriptor.model_normals = %s\n", oriented[i]);
        if (strstr(m->settings, line))
            return oriented[i];
    }
    return "viewpoint";
}

static int collect_result(const model_set *m, const scene_state *st, pipeline_result *r, grip_diag *diag)
{
    r->n_models = m->n_models;
    r->model_keypoints = calloc(m->n_models + 1, sizeof *r->model_keypoints);
    r->n_hypotheses = st->hypotheses->count;
    r->hypotheses = calloc(r->n_hypotheses + 1, sizeof *r->hypotheses);
    if (!r->model_keypoints || !r->hypotheses) {
        grip_diag_add(diag, "out of host memory");
        return -1;
    }
    for (uint32_t k = 0; k < m->n_models; k++)
        r->model_keypoints[k] = (size_t)m->views[k].features->keypoints.rows;
    r->scene_keypoints = (size_t)st->features->keypoints.rows;
    r->normals_source = calloc((size_t)m->n_models + 1, sizeof *r->normals_source);
    r->had_normals = calloc((size_t)m->n_models + 1, sizeof *r->had_normals);
    if (!r->normals_source || !r->had_normals) {
        grip_diag_add(diag, "out of host memory");
        return -1;
    }
    r->n_described = m->n_models + 1; /* the models, then the scene */
    r->model_orientation = models_orientation(m);
    r->scene_features_on_device = st->features->descriptors.memory == GRIP_MEM_CUDA;
    r->model_features_on_device = m->held && m->held->descriptors.memory == GRIP_MEM_CUDA;
    for (uint32_t i = 0; i <= m->n_models; i++) {
        const grip_features *f = i < m->n_models ? m->views[i].features : st->features;
        const grip_cloud *c = i < m->n_models ? m->views[i].cloud : &st->cloud;
        r->normals_source[i] = f->struct_size >= offsetof(grip_features, normals_source) + sizeof f->normals_source
                                   ? f->normals_source
                                   : GRIP_NORMALS_UNSAID;
        r->had_normals[i] = c->normals.rows > 0;
    }
    r->correspondences = (size_t)st->matches->count;
    for (uint32_t i = 0; i < st->hypotheses->count; i++) {
        const grip_hypothesis *h = hypothesis_at(st->hypotheses, i);
        pipeline_instance *out = &r->hypotheses[i];
        if (h->model_id >= m->n_models) { /* the printers index the model names by it */
            grip_diag_add(diag, "group: hypothesis %u names model %u, but there are %u models", i, h->model_id,
                          m->n_models);
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

static int run_scene_stages(grip_pipeline *p, const model_set *m, grip_index *index, scene_state *st,
                            const host_cloud *scene, pipeline_result *r, grip_diag *diag)
{
    accounting_mark mark;
    accounting_mark_now(p, &mark);
    double t0 = host_now_ms();
    st->cloud = pipeline_cloud_view(scene);
    if (describe_scene(p, &st->cloud, scene->path, &st->features, diag) != 0)
        return -1;
    double t1 = host_now_ms();
    accounting_charge(p, &mark, &r->accounting, GRIP_STAGE_DESCRIPTOR);
    grip_status s = p->impl[GRIP_STAGE_MATCH]->match(p->stage[GRIP_STAGE_MATCH], index, &st->features->descriptors,
                                                    GRIP_MEM_HOST, &st->matches);
    if (s != GRIP_OK)
        return stage_failed(p, GRIP_STAGE_MATCH, s, "the scene's descriptors", diag);
    double t2 = host_now_ms();
    accounting_charge(p, &mark, &r->accounting, GRIP_STAGE_MATCH);
    const grip_view scene_view = {sizeof(grip_view), &st->cloud, st->features};
    s = p->impl[GRIP_STAGE_GROUP]->group(p->stage[GRIP_STAGE_GROUP], m->views, m->n_models, &scene_view, st->matches,
                                         &st->hypotheses);
    if (s != GRIP_OK)
        return stage_failed(p, GRIP_STAGE_GROUP, s, "the correspondences", diag);
    double t3 = host_now_ms();
    accounting_charge(p, &mark, &r->accounting, GRIP_STAGE_GROUP);
    s = p->impl[GRIP_STAGE_VERIFY]->verify(p->stage[GRIP_STAGE_VERIFY], m->views, m->n_models, &scene_view,
                                           st->hypotheses, &st->verdicts);
    if (s != GRIP_OK)
        return stage_failed(p, GRIP_STAGE_VERIFY, s, "the hypotheses", diag);
    accounting_charge(p, &mark, &r->accounting, GRIP_STAGE_VERIFY);
    r->timings_ms[GRIP_STAGE_DESCRIPTOR] = t1 - t0;
    r->timings_ms[GRIP_STAGE_MATCH] = t2 - t1;
    r->timings_ms[GRIP_STAGE_GROUP] = t3 - t2;
    r->timings_ms[GRIP_STAGE_VERIFY] = host_now_ms() - t3;
    return collect_result(m, st, r, diag);
}

/* explain.h's hint for a run that found nothing, from the models' clouds as kept in m. */
static void explain_result(const grip_pipeline *p, const model_set *m, const host_cloud *scene, pipeline_result *r)
{
    host_cloud *models = calloc((size_t)m->n_models + 1, sizeof *models);
    for (uint32_t k = 0; models && k < m->n_models; k++) /* borrowed points: not freed */
        models[k] = (host_cloud){.n = (size_t)m->models[k].cloud.xyz.rows, .xyz = m->models[k].cloud.xyz.data};
    explain_empty_run(r->hint, sizeof r->hint, r->scene_keypoints, r->correspondences, r->n_hypotheses, models,
                      models ? m->n_models : 0, scene, &p->explain);
    free(models);
}

int pipeline_run_scene(grip_pipeline *p, const model_set *m, grip_index *index, const host_cloud *scene,
                       pipeline_result *r, grip_diag *diag)
{
    memset(r, 0, sizeof *r);
    scene_state st;
    memset(&st, 0, sizeof st);
    int rc = run_scene_stages(p, m, index, &st, scene, r, diag);
    scene_state_free(&st);
    if (rc != 0) {
        pipeline_result_free(r);
        return -1;
    }
    r->settings = p->explain;
    explain_result(p, m, scene, r);
    return 0;
}

/* The model of a run of one model cloud whose scene's features stay on the device (pipeline_run): its features stay
 * there too, held by the set (model_set_hold), so that the index builds from its descriptors where they lie, group
 * takes its BOARD frames from the descriptor's own surface of it, and none of it is copied back to be uploaded
 * again. A model set kept across scenes (run_scenes.c, a database) keeps host copies instead: a later scene may run
 * stages of another plugin, which cannot read this context's device memory. */
static int describe_model_held(grip_pipeline *p, const host_cloud *cloud, model_set *out, grip_diag *diag)
{
    memset(out, 0, sizeof *out);
    grip_cloud view = pipeline_cloud_view(cloud);
    grip_features *f = NULL;
    if (describe_into(p, &view, GRIP_ROLE_MODEL, cloud->path, GRIP_MEM_CUDA, &f, diag) != 0)
        return -1;
    const grip_plugin *t = &p->plugins[p->of_stage[GRIP_STAGE_DESCRIPTOR]].table;
    if (model_set_hold(out, &view, f, view.name, p->model_settings, t->abi_major, t->abi_minor) != 0) {
        f->release(f);
        grip_diag_add(diag, "out of host memory");
        return -1;
    }
    return 0;
}

int pipeline_run(grip_pipeline *p, const host_cloud *clouds, uint32_t n_clouds, const uint32_t *model_of_cloud,
                 uint32_t n_models, const host_cloud *scene, pipeline_result *r, grip_diag *diag)
{
    memset(r, 0, sizeof *r);
    model_set models;
    grip_index *index = NULL;
    pipeline_accounting models_cost; /* describing and indexing the models, charged to the run below */
    memset(&models_cost, 0, sizeof models_cost);
    accounting_mark mark;
    accounting_mark_now(p, &mark);
    double t0 = host_now_ms();
    const int held = p->scene_memory == GRIP_MEM_CUDA && !p->comm && n_clouds == 1 && !model_of_cloud;
    if ((held ? describe_model_held(p, &clouds[0], &models, diag)
              : pipeline_describe_models(p, clouds, n_clouds, model_of_cloud, n_models, NULL, &models, diag)) != 0)
        return -1;
    double t1 = host_now_ms();
    accounting_charge(p, &mark, &models_cost, GRIP_STAGE_DESCRIPTOR);
    int rc = pipeline_build_index(p, &models, &index, diag);
    double t2 = host_now_ms();
    accounting_charge(p, &mark, &models_cost, GRIP_STAGE_INDEX);
    if (rc == 0)
        rc = pipeline_run_scene(p, &models, index, scene, r, diag);
    if (rc == 0) { /* the whole run's times and transfers, as a run without kept models pays them */
        r->timings_ms[GRIP_STAGE_DESCRIPTOR] += t1 - t0;
        r->models_descriptor_ms = t1 - t0;
        r->timings_ms[GRIP_STAGE_INDEX] = t2 - t1;
        accounting_add_before(&r->accounting, &models_cost);
    }
    if (index)
        index->release(index);
    model_set_free(&models);
    return rc;
}
