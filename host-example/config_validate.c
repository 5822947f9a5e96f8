/* config_validate.c -- checking a grip_config against the pipeline table and the stages' parameter tables,
 * and resolving each stage's implementation and create() key/value list. */
#include "config.h"
#include "common/param_value.h"
#include "host_util.h"
#include "suggest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const device_words[] = {"auto", "cuda", "cpu"};

enum { PIPELINE_DEVICE, PIPELINE_CUDA_DEVICE, PIPELINE_THREADS, PIPELINE_UNIT, N_PIPELINE_PARAMS };
static const char *const unit_words[] = {"", "m", "dm", "cm", "mm", "um", "km", "in", "ft"};

/* The pipeline section is self-describing like a stage: keys, types, defaults, ranges, docs. */
static const grip_param_info pipeline_params[N_PIPELINE_PARAMS] = {
    {sizeof(grip_param_info), GRIP_PARAM_ENUM, "device", "auto", 0, 0, "auto|cuda|cpu",
     "where every stage runs unless its section sets its own device: auto = CUDA when a device exists"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "cuda_device", "-1", -1, 1023, NULL,
     "CUDA device ordinal the stages use; -1 = the first usable one"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "threads", "0", 0, 4096, NULL,
     "CPU threads of the CPU twins; 0 = as many as the OpenMP runtime offers"},
    {sizeof(grip_param_info), GRIP_PARAM_ENUM, "unit", "none", 0, 0, "none|m|dm|cm|mm|um|km|in|ft",
     "the unit of the clouds' coordinates, printed after every length grip-host reports (none: not named)"},
};

const grip_param_info *grip_config_pipeline_params(uint32_t *n)
{
    *n = N_PIPELINE_PARAMS;
    return pipeline_params;
}

/* "; did you mean 'x'?" for the nearest key of the table (and impl/plugin in a stage section), or "". */
static void key_hint(const char *key, const grip_param_info *table, uint32_t n, int stage, char *buf, size_t len)
{
    grip_suggestion s = {key, NULL, 0};
    for (uint32_t i = 0; i < n; i++)
        grip_suggest_consider(&s, grip_param_at(table, i)->key);
    if (stage) {
        grip_suggest_consider(&s, "impl");
        grip_suggest_consider(&s, "plugin");
    }
    if (s.best)
        snprintf(buf, len, "; did you mean '%s'?", s.best);
    else
        buf[0] = '\0';
}

/* Checks one entry against its table: unknown key (with a hint), malformed or out-of-range value. A length
 * written "N mr" is resolved first with `resolution` (> 0; 0: not measured) into e->resolved, which is what is
 * checked and what the stage gets. */
static void check_entry(grip_config_entry *e, const grip_param_info *table, uint32_t n, const char *owner, int stage,
                        double resolution, grip_diag *diag)
{
    const grip_param_info *p = n ? grip_param_find(table, n, e->key) : NULL;
    if (!p) {
        char hint[160];
        key_hint(e->key, table, n, stage, hint, sizeof hint);
        grip_config_report(diag, e, "unknown key for %s%s", owner, hint);
        return;
    }
    free(e->resolved);
    e->resolved = NULL;
    double multiple;
    if (grip_param_is_length(p) && grip_param_split_mr(e->value, &multiple)) {
        if (!(resolution > 0)) {
            grip_config_report(diag, e, "'%s' needs the scene's measured resolution, which is not known here "
                               "(the plugin cannot measure it, or this command reads no scene)", e->value);
            return;
        }
        char number[64];
        snprintf(number, sizeof number, "%.9g", multiple * resolution);
        e->resolved = host_strdup(number);
        if (!e->resolved) {
            grip_config_report(diag, e, "out of memory");
            return;
        }
    }
    char why[256];
    grip_param_value v;
    if (grip_param_parse(p, e->resolved ? e->resolved : e->value, &v, why, sizeof why) != 0) {
        if (e->resolved)
            grip_config_report(diag, e, "%s = %s: %s", e->value, e->resolved, why);
        else
            grip_config_report(diag, e, "%s", why);
    }
}

static void validate_pipeline(grip_config *cfg, grip_diag *diag)
{
    for (size_t i = 0; i < cfg->count; i++)
        if (strcmp(cfg->entries[i].section, "pipeline") == 0)
            check_entry(&cfg->entries[i], pipeline_params, N_PIPELINE_PARAMS, "the pipeline", 0, 0, diag);
}

/* The implementations of `kind` the plugin offers, comma-separated, into buf. */
static void list_impls(const grip_loaded_plugin *lp, uint32_t kind, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < lp->table.n_stages && at < len; i++) {
        const grip_stage_impl *s = lp->table.stages[i];
        if (s->kind == kind) {
            int w = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", s->name);
            at += w > 0 ? (size_t)w : 0;
        }
    }
}

static const char *impl_hint(const grip_loaded_plugin *lp, uint32_t kind, const char *name)
{
    grip_suggestion s = {name, NULL, 0};
    for (uint32_t i = 0; i < lp->table.n_stages; i++)
        if (lp->table.stages[i]->kind == kind)
            grip_suggest_consider(&s, lp->table.stages[i]->name);
    return s.best;
}

/* The implementation a section asks for (`impl`), or the plugin's default of the kind. */
static const grip_stage_impl *choose_impl(const grip_config *cfg, uint32_t kind, const grip_loaded_plugin *lp,
                                          grip_diag *diag)
{
    const char *section = grip_loader_kind_name(kind);
    const grip_config_entry *e = grip_config_find(cfg, section, "impl");
    const grip_stage_impl *impl = grip_loader_find_stage(lp, kind, e ? e->value : NULL);
    if (impl || !e)
        return impl;
    char available[512];
    list_impls(lp, kind, available, sizeof available);
    const char *hint = impl_hint(lp, kind, e->value);
    if (!*available)
        grip_config_report(diag, e, "unknown implementation '%s': %s offers no %s stage", e->value, lp->path,
                           section);
    else
        grip_config_report(diag, e, "unknown implementation '%s' (available: %s)%s%s%s", e->value, available,
                           hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "");
    return NULL;
}

static int host_key(const char *key)
{
    return strcmp(key, "impl") == 0 || strcmp(key, "plugin") == 0;
}

/* The pipeline's device, when set, valid, and the stage takes a device key without setting its own. */
static const grip_config_entry *inherited_device(const grip_config *cfg, const char *section,
                                                 const grip_stage_impl *impl, grip_diag *diag)
{
    const grip_config_entry *device = grip_config_find(cfg, "pipeline", "device");
    const grip_param_info *p = impl->n_params ? grip_param_find(impl->params, impl->n_params, "device") : NULL;
    if (!device || !p || grip_config_find(cfg, section, "device") ||
        grip_param_choice_index(pipeline_params[PIPELINE_DEVICE].choices, device->value) < 0)
        return NULL;
    char why[256];
    grip_param_value v;
    if (grip_param_parse(p, device->value, &v, why, sizeof why) != 0) {
        grip_config_report(diag, device, "%s (as the device of %s '%s')", why, section, impl->name);
        return NULL;
    }
    return device;
}

/* Validates a stage section's keys and builds the key/value list its create() gets. */
static void validate_stage(grip_config *cfg, uint32_t kind, const grip_loaded_plugin *lp, grip_diag *diag)
{
    const char *section = grip_loader_kind_name(kind);
    grip_config_stage *st = &cfg->stages[kind];
    for (size_t i = 0; i < cfg->count; i++) {
        const grip_config_entry *e = &cfg->entries[i];
        if (strcmp(e->section, section) == 0 && strcmp(e->key, "plugin") == 0 && !*e->value)
            grip_config_report(diag, e, "empty value (expected the path of a plugin)");
    }
    if (!lp)
        return;
    st->impl = choose_impl(cfg, kind, lp, diag);
    if (!st->impl && grip_config_find(cfg, section, "impl"))
        return; /* reported: the keys cannot be checked without a table */
    char owner[160];
    if (st->impl)
        snprintf(owner, sizeof owner, "%s '%s'", section, st->impl->name);
    else
        snprintf(owner, sizeof owner, "%s (%s offers no %s stage)", section, lp->path, section);
    size_t n_keys = 0;
    for (size_t i = 0; i < cfg->count; i++) {
        grip_config_entry *e = &cfg->entries[i];
        if (strcmp(e->section, section) != 0 || host_key(e->key))
            continue;
        if (st->impl)
            check_entry(e, st->impl->params, st->impl->n_params, owner, 1, cfg->resolution, diag);
        else
            grip_config_report(diag, e, "cannot be set: %s", owner);
        n_keys++;
    }
    if (!st->impl)
        return;
    const grip_config_entry *device = inherited_device(cfg, section, st->impl, diag);
    st->kv = calloc(n_keys + 1, sizeof *st->kv);
    if (!st->kv) {
        grip_diag_add(diag, "%s: out of memory", section);
        return;
    }
    for (size_t i = 0; i < cfg->count; i++) {
        const grip_config_entry *e = &cfg->entries[i];
        if (strcmp(e->section, section) == 0 && !host_key(e->key))
            st->kv[st->n_kv++] = (grip_kv){e->key, e->resolved ? e->resolved : e->value};
    }
    if (device)
        st->kv[st->n_kv++] = (grip_kv){"device", device->value};
}

int grip_config_validate(grip_config *cfg, const grip_loaded_plugin *const plugins[GRIP_STAGE_KIND_COUNT],
                         grip_diag *diag)
{
    size_t before = grip_diag_count(diag);
    validate_pipeline(cfg, diag);
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++) {
        free(cfg->stages[k].kv);
        memset(&cfg->stages[k], 0, sizeof cfg->stages[k]);
        validate_stage(cfg, k, plugins ? plugins[k] : NULL, diag);
    }
    return grip_diag_count(diag) == before ? 0 : -1;
}

/* The value of pipeline.key from the config when valid, else the table's default. */
static grip_param_value pipeline_value(const grip_config *cfg, uint32_t i)
{
    const grip_param_info *p = &pipeline_params[i];
    const grip_config_entry *e = grip_config_find(cfg, "pipeline", p->key);
    char why[256];
    grip_param_value v;
    if (!e || grip_param_parse(p, e->value, &v, why, sizeof why) != 0)
        grip_param_parse(p, p->default_value, &v, why, sizeof why);
    return v;
}

void grip_config_pipeline(const grip_config *cfg, grip_pipeline_settings *out)
{
    out->device = device_words[pipeline_value(cfg, PIPELINE_DEVICE).choice];
    out->cuda_device = (int32_t)pipeline_value(cfg, PIPELINE_CUDA_DEVICE).integer;
    out->threads = (uint32_t)pipeline_value(cfg, PIPELINE_THREADS).integer;
    out->unit = unit_words[pipeline_value(cfg, PIPELINE_UNIT).choice];
}
