/* bench_common.c -- the stage plumbing both benchmarks share: the plugin and the user's settings, a config per
 * setting, the pipeline runner to open it, timed describe calls, and small helpers. See bench_common.h. */
#include "bench/bench_common.h"
#include "commands/commands.h" /* host_plugin_path */
#include "common/param_value.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host_util.h"

/* ---- the plugin and the user's settings -------------------------------------------------------------------- */

static int host_key(const char *key)
{
    return strcmp(key, "impl") == 0 || strcmp(key, "plugin") == 0;
}

static int impl_has_key(const grip_stage_impl *impl, const char *key)
{
    return impl->n_params && grip_param_find(impl->params, impl->n_params, key) != NULL;
}

/* Every descriptor key of --set must be a key of at least one of the impls run (else it is a typo). */
static int check_user_keys(const grip_config *user, const grip_stage_impl *const *impls, uint32_t n)
{
    int bad = 0;
    for (size_t i = 0; i < user->count; i++) {
        const grip_config_entry *e = &user->entries[i];
        if (strcmp(e->section, "descriptor") != 0 || host_key(e->key))
            continue;
        int known = 0;
        for (uint32_t k = 0; k < n && !known; k++)
            known = impl_has_key(impls[k], e->key);
        if (!known) {
            fprintf(stderr, "grip-host: bench: --set descriptor.%s: no descriptor stage benchmarked has this key\n",
                    e->key);
            bad = 1;
        }
    }
    return bad ? 2 : 0;
}

/* The descriptor implementations to run: every one the plugin lists, or the one `descriptor.impl` names.
 * *impls is malloc'd (free()). 0, or the exit status after saying why. */
static int list_descriptor_impls(const bench_plugin *bp, const grip_stage_impl ***impls, uint32_t *n)
{
    const grip_plugin *t = &bp->descriptors.table;
    const grip_config_entry *only = grip_config_find(&bp->user, "descriptor", "impl");
    *n = 0;
    *impls = calloc(t->n_stages + 1, sizeof **impls);
    if (!*impls) {
        fprintf(stderr, "grip-host: bench: out of memory\n");
        return 1;
    }
    for (uint32_t i = 0; i < t->n_stages; i++)
        if (t->stages[i]->kind == GRIP_STAGE_DESCRIPTOR && (!only || strcmp(only->value, t->stages[i]->name) == 0))
            (*impls)[(*n)++] = t->stages[i];
    int rc = 0;
    if (*n == 0) {
        fprintf(stderr, "grip-host: bench: %s offers no descriptor stage%s%s\n", bp->descriptors.path,
                only ? " named " : "", only ? only->value : "");
        rc = 2;
    } else {
        rc = check_user_keys(&bp->user, *impls, *n);
    }
    if (rc != 0) {
        free(*impls);
        *impls = NULL;
    }
    return rc;
}

int bench_plugin_open(const bench_options *b, bench_plugin *bp)
{
    memset(bp, 0, sizeof *bp);
    grip_diag diag = {0};
    int bad = 0;
    for (int i = 0; i < b->n_sets; i++)
        bad |= grip_config_set(&bp->user, b->sets[i], &diag) != 0;
    grip_diag_print(&diag, stderr);
    grip_diag_free(&diag);
    host_options ho;
    memset(&ho, 0, sizeof ho);
    ho.plugin = b->plugin;
    ho.argv0 = b->argv0;
    if (bad || host_plugin_path(&ho, bp->path, sizeof bp->path) != 0) {
        grip_config_free(&bp->user);
        return bad ? 2 : 1;
    }
    char own[4096], err[1024];
    const char *path = grip_config_stage_plugin(&bp->user, GRIP_STAGE_DESCRIPTOR, own, sizeof own) ? own : bp->path;
    if (grip_loader_open(path, &bp->descriptors, err, sizeof err) != 0) {
        fprintf(stderr, "grip-host: bench: %s\n", err);
        grip_config_free(&bp->user);
        return 1;
    }
    int rc = list_descriptor_impls(bp, &bp->impls, &bp->n_impls);
    if (rc != 0)
        bench_plugin_close(bp);
    return rc;
}

void bench_plugin_close(bench_plugin *bp)
{
    free(bp->impls);
    bp->impls = NULL;
    grip_config_free(&bp->user);
    grip_loader_close(&bp->descriptors);
}

/* ---- one setting ------------------------------------------------------------------------------------------- */

/* Applies "section.key=value" unless it is a descriptor key `impl` does not have. */
static int apply_setting(grip_config *cfg, const grip_stage_impl *impl, const char *section, const char *key,
                         const char *value, grip_diag *diag)
{
    if (strcmp(section, "descriptor") == 0 && !host_key(key) && !impl_has_key(impl, key))
        return 0;
    size_t len = strlen(section) + strlen(key) + strlen(value) + 3;
    char *assignment = malloc(len);
    if (!assignment) {
        grip_diag_add(diag, "out of memory");
        return -1;
    }
    snprintf(assignment, len, "%s.%s=%s", section, key, value);
    int rc = grip_config_set(cfg, assignment, diag);
    free(assignment);
    return rc;
}

/* Applies a NULL-terminated list of "section.key=value" through apply_setting. */
static int apply_list(grip_config *cfg, const grip_stage_impl *impl, const char *const *list, int filter,
                      grip_diag *diag)
{
    int bad = 0;
    for (int i = 0; list && list[i]; i++) {
        const char *eq = strchr(list[i], '='), *dot = strchr(list[i], '.');
        if (!filter || !eq || !dot || dot > eq) {
            bad |= grip_config_set(cfg, list[i], diag) != 0;
            continue;
        }
        char *section = host_strndup(list[i], (size_t)(dot - list[i]));
        char *key = host_strndup(dot + 1, (size_t)(eq - dot - 1));
        if (!section || !key) {
            grip_diag_add(diag, "out of memory");
            bad = 1;
        } else {
            bad |= apply_setting(cfg, impl, section, key, eq + 1, diag) != 0;
        }
        free(section);
        free(key);
    }
    return bad ? -1 : 0;
}

/* The config of one setting, in increasing precedence: the impl, defaults, the user's entries, forced ones. */
static int build_setting(const bench_plugin *bp, const grip_stage_impl *impl, const char *const *defaults,
                         const char *const *forced, grip_config *cfg, grip_diag *diag)
{
    int bad = apply_setting(cfg, impl, "descriptor", "impl", impl->name, diag) != 0;
    bad |= apply_list(cfg, impl, defaults, 1, diag) != 0;
    for (size_t i = 0; i < bp->user.count; i++) {
        const grip_config_entry *e = &bp->user.entries[i];
        if (strcmp(e->section, "descriptor") != 0 || strcmp(e->key, "impl") != 0)
            bad |= apply_setting(cfg, impl, e->section, e->key, e->value, diag) != 0;
    }
    bad |= apply_list(cfg, impl, forced, 0, diag) != 0;
    return bad ? -1 : 0;
}

/* The device the descriptor stage is asked for: its own key, else the pipeline's, else "auto". */
static const char *requested_device(const grip_config *cfg)
{
    const grip_config_entry *e = grip_config_find(cfg, "descriptor", "device");
    if (!e)
        e = grip_config_find(cfg, "pipeline", "device");
    return e ? e->value : "auto";
}

int bench_run_open(const bench_plugin *bp, const grip_stage_impl *impl, const char *const *defaults,
                   const char *const *forced, bench_run *r, const char **skip_reason)
{
    memset(r, 0, sizeof *r);
    r->impl = impl;
    *skip_reason = NULL;
    grip_diag diag = {0};
    int rc = build_setting(bp, impl, defaults, forced, &r->cfg, &diag) == 0 ? 0 : -1;
    const char *device = requested_device(&r->cfg);
    if (rc == 0 && strcmp(device, "cuda") == 0 && !(impl->backends & GRIP_BACKEND_CUDA)) {
        *skip_reason = "no CUDA backend in this build";
        rc = 1;
    }
    if (rc == 0 && pipeline_open(&r->p, bp->path, &r->cfg, &diag) != 0)
        rc = -1;
    if (rc == 0) {
        int slot = r->p.of_stage[GRIP_STAGE_DESCRIPTOR];
        const grip_plugin *t = &r->p.plugins[slot].table;
        int32_t devices = t->device_count ? t->device_count(r->p.ctxs[slot]) : 0;
        int cuda = strcmp(device, "cuda") == 0 ||
                   (strcmp(device, "auto") == 0 && devices > 0 && (impl->backends & GRIP_BACKEND_CUDA));
        r->device = cuda ? "cuda" : "cpu";
    }
    grip_diag_print(&diag, stderr);
    grip_diag_free(&diag);
    if (rc != 0)
        grip_config_free(&r->cfg);
    return rc;
}

void bench_run_close(bench_run *r)
{
    if (r->p.plugins[0].handle)
        pipeline_close(&r->p);
    grip_config_free(&r->cfg);
    memset(r, 0, sizeof *r);
}

void bench_run_error(const bench_run *r, uint32_t kind, grip_status s, const char *what, char *err, size_t n)
{
    int slot = r->p.of_stage[kind];
    const grip_plugin *t = &r->p.plugins[slot].table;
    snprintf(err, n, "%s '%s' failed on %s: %s: %s", grip_loader_kind_name(kind), r->p.impl[kind]->name, what,
             t->status_str(s), t->ctx_last_error(r->p.ctxs[slot]));
}

grip_status bench_time_describe(const bench_run *r, const grip_cloud *cloud, uint32_t role, const grip_array *kp,
                                uint32_t out_memory, int repeat, double *median_ms, double *min_ms, char *err,
                                size_t errlen)
{
    double *ms = calloc((size_t)repeat, sizeof *ms);
    if (!ms) {
        snprintf(err, errlen, "out of host memory");
        return GRIP_ENOMEM;
    }
    grip_status s = GRIP_OK;
    const grip_stage_impl *d = r->p.impl[GRIP_STAGE_DESCRIPTOR];
    for (int i = 0; i < repeat && s == GRIP_OK; i++) {
        grip_features *f = NULL;
        double t0 = host_now_ms();
        s = d->describe(r->p.stage[GRIP_STAGE_DESCRIPTOR], cloud, role, kp, out_memory, &f);
        ms[i] = host_now_ms() - t0;
        if (s != GRIP_OK)
            bench_run_error(r, GRIP_STAGE_DESCRIPTOR, s, cloud->name ? cloud->name : "the cloud", err, errlen);
        else
            f->release(f);
    }
    if (s == GRIP_OK) {
        *median_ms = host_median(ms, (size_t)repeat);
        *min_ms = ms[0]; /* sorted by host_median */
    }
    free(ms);
    return s;
}

/* ---- small helpers ----------------------------------------------------------------------------------------- */

uint64_t bench_valid_rows(const grip_array *descriptors)
{
    const float *d = descriptors->data;
    uint64_t valid = 0;
    for (uint64_t r = 0; r < descriptors->rows; r++) {
        int ok = 1;
        for (uint64_t c = 0; c < descriptors->cols && ok; c++)
            ok = !isnan(d[r * descriptors->cols + c]);
        valid += (uint64_t)ok;
    }
    return valid;
}

int bench_json_unfinished(FILE *f, const char *skipped, const char *failed)
{
    if (!skipped && !failed[0])
        return 0;
    fprintf(f, ",\"%s\":", skipped ? "skipped" : "failed");
    host_json_string(f, skipped ? skipped : failed);
    fputc('}', f);
    return 1;
}

grip_cloud bench_cloud(const float *xyz, const float *normals, size_t n, const char *name)
{
    grip_cloud c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.width = (uint32_t)n;
    c.height = 1;
    c.xyz = host_array(GRIP_F32, n, 3, (void *)xyz);
    c.normals = host_array(GRIP_F32, normals ? n : 0, 3, (void *)normals);
    c.rgb = host_array(GRIP_U8, 0, 3, NULL);
    c.name = name;
    return c;
}
