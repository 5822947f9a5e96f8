/* loader.c -- see loader.h. */
#define _POSIX_C_SOURCE 200809L
#include "loader.h"
#include "common/param_value.h"
#include "host_util.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the offset just past `field`: a struct_size at least this large contains the field */
#define FIELD_END(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

static const char *const kind_names[GRIP_STAGE_KIND_COUNT] = {"descriptor", "index", "match", "group", "verify"};

const char *grip_loader_kind_name(uint32_t kind)
{
    return kind < GRIP_STAGE_KIND_COUNT ? kind_names[kind] : NULL;
}

int grip_loader_kind_from_name(const char *name)
{
    for (int k = 0; name && k < GRIP_STAGE_KIND_COUNT; k++)
        if (strcmp(kind_names[k], name) == 0)
            return k;
    return -1;
}

/* Where a refusal is written: every message starts with the plugin's path. */
typedef struct refusal {
    const char *path;
    char *err;
    size_t errlen;
} refusal;

static int refuse(const refusal *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(__printf__, 2, 3)))
#endif
    ;

static int refuse(const refusal *r, const char *fmt, ...)
{
    if (!r->err || r->errlen == 0)
        return -1;
    int at = snprintf(r->err, r->errlen, "%s: ", r->path);
    if (at >= 0 && (size_t)at < r->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err + at, r->errlen - (size_t)at, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Copies the first min(size, full) bytes of src into dst and zeroes the rest: the host's view of a struct a
 * plugin wrote with `size` bytes. */
static void copy_prefix(void *dst, const void *src, size_t size, size_t full)
{
    size_t n = size < full ? size : full;
    memset(dst, 0, full);
    memcpy(dst, src, n);
}

/* ---- opening the library and fetching its table ------------------------------------------------------------ */

static int open_library(const refusal *r, void **handle)
{
    struct stat st;
    if (strchr(r->path, '/') && stat(r->path, &st) != 0)
        return refuse(r, "cannot open: %s", strerror(errno));
    dlerror();
    *handle = dlopen(r->path, RTLD_NOW | RTLD_LOCAL);
    if (!*handle) {
        const char *why = dlerror();
        return refuse(r, "not a loadable shared object: %s", why ? why : "dlopen failed");
    }
    return 0;
}

static int fetch_table(const refusal *r, void *handle, const grip_plugin **table)
{
    dlerror();
    void *sym = dlsym(handle, GRIP_PLUGIN_ENTRY);
    if (!sym || dlerror())
        return refuse(r, "does not export %s(): not a grip plugin", GRIP_PLUGIN_ENTRY);
    grip_plugin_get_fn get;
    memcpy(&get, &sym, sizeof get); /* POSIX: a data pointer from dlsym converts to a function pointer */
    *table = get(GRIP_ABI_MAJOR, GRIP_ABI_MINOR);
    if (!*table)
        return refuse(r, "%s(%d, %d) returned NULL: the plugin does not speak ABI major %d", GRIP_PLUGIN_ENTRY,
                      GRIP_ABI_MAJOR, GRIP_ABI_MINOR, GRIP_ABI_MAJOR);
    return 0;
}

/* ---- the plugin table -------------------------------------------------------------------------------------- */

static int check_plugin_table(const refusal *r, const grip_plugin *raw, grip_plugin *table)
{
    size_t need = FIELD_END(grip_plugin, stages);
    if (raw->struct_size < need)
        return refuse(r, "plugin table is a short struct: struct_size %u, the host needs at least %zu bytes "
                         "(through 'stages')", raw->struct_size, need);
    copy_prefix(table, raw, raw->struct_size, sizeof *table);
    if (table->abi_major != GRIP_ABI_MAJOR)
        return refuse(r, "plugin table is for ABI major %u, this host speaks %d", table->abi_major, GRIP_ABI_MAJOR);
    const struct {
        const char *field;
        int missing;
    } required[] = {
        {"name", !table->name},
        {"version", !table->version},
        {"status_str", !table->status_str},
        {"ctx_create", !table->ctx_create},
        {"ctx_destroy", !table->ctx_destroy},
        {"ctx_last_error", !table->ctx_last_error},
        {"stages", table->n_stages > 0 && !table->stages},
    };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (required[i].missing)
            return refuse(r, "plugin table: '%s' is NULL (required)", required[i].field);
    table->struct_size = sizeof *table;
    return 0;
}

/* ---- stages -------------------------------------------------------------------------------------------------- */

static size_t run_field_end(uint32_t kind)
{
    switch (kind) {
    case GRIP_STAGE_DESCRIPTOR: return FIELD_END(grip_stage_impl, describe);
    case GRIP_STAGE_INDEX: return FIELD_END(grip_stage_impl, build);
    case GRIP_STAGE_MATCH: return FIELD_END(grip_stage_impl, match);
    case GRIP_STAGE_GROUP: return FIELD_END(grip_stage_impl, group);
    default: return FIELD_END(grip_stage_impl, verify);
    }
}

static const char *const run_names[GRIP_STAGE_KIND_COUNT] = {"describe", "build", "match", "group", "verify"};

/* Which run functions a stage sets, as a bit mask by kind. */
static unsigned run_mask(const grip_stage_impl *s)
{
    return (s->describe ? 1u << GRIP_STAGE_DESCRIPTOR : 0) | (s->build ? 1u << GRIP_STAGE_INDEX : 0) |
           (s->match ? 1u << GRIP_STAGE_MATCH : 0) | (s->group ? 1u << GRIP_STAGE_GROUP : 0) |
           (s->verify ? 1u << GRIP_STAGE_VERIFY : 0);
}

static int check_stage(const refusal *r, uint32_t i, const grip_stage_impl *raw, grip_stage_impl *stage)
{
    if (!raw)
        return refuse(r, "stage %u is NULL", i);
    size_t base = FIELD_END(grip_stage_impl, destroy);
    if (raw->struct_size < base)
        return refuse(r, "stage %u is a short struct: struct_size %u, the host needs at least %zu bytes", i,
                      raw->struct_size, base);
    copy_prefix(stage, raw, raw->struct_size, sizeof *stage);
    if (stage->kind >= GRIP_STAGE_KIND_COUNT)
        return refuse(r, "stage %u: kind %u is out of range (0..%d)", i, stage->kind, GRIP_STAGE_KIND_COUNT - 1);
    const char *kind = kind_names[stage->kind];
    if (raw->struct_size < run_field_end(stage->kind))
        return refuse(r, "stage %u (%s) is a short struct: struct_size %u, a %s stage needs at least %zu bytes "
                         "(through '%s')", i, kind, raw->struct_size, kind, run_field_end(stage->kind),
                      run_names[stage->kind]);
    if (!stage->name || !*stage->name)
        return refuse(r, "stage %u (%s): name is %s", i, kind, stage->name ? "empty" : "NULL");
    if (!stage->create || !stage->destroy)
        return refuse(r, "stage %u (%s '%s'): '%s' is NULL (required)", i, kind, stage->name,
                      stage->create ? "destroy" : "create");
    unsigned runs = run_mask(stage);
    if (!(runs & (1u << stage->kind)))
        return refuse(r, "stage %u (%s '%s'): its run function '%s' is NULL", i, kind, stage->name,
                      run_names[stage->kind]);
    if (runs != 1u << stage->kind)
        return refuse(r, "stage %u (%s '%s'): sets a run function of another kind (exactly one, '%s', may be set)",
                      i, kind, stage->name, run_names[stage->kind]);
    if (stage->describe_many && stage->kind != GRIP_STAGE_DESCRIPTOR)
        return refuse(r, "stage %u (%s '%s'): sets describe_many, which only a descriptor stage may set", i, kind,
                      stage->name);
    if (stage->n_params > 0 && !stage->params)
        return refuse(r, "stage %u (%s '%s'): n_params is %u but params is NULL", i, kind, stage->name,
                      stage->n_params);
    stage->struct_size = sizeof *stage;
    return 0;
}

/* ---- parameter tables ------------------------------------------------------------------------------------- */

static int check_param(const refusal *r, const char *where, uint32_t j, const grip_param_info *p)
{
    if (!p->key || !*p->key)
        return refuse(r, "%s: params[%u].key is %s", where, j, p->key ? "empty" : "NULL");
    if (strcmp(p->key, "impl") == 0 || strcmp(p->key, "plugin") == 0)
        return refuse(r, "%s: params[%u].key '%s' is reserved for the host's config", where, j, p->key);
    if (p->type < GRIP_PARAM_BOOL || p->type > GRIP_PARAM_STRING)
        return refuse(r, "%s: params[%u] ('%s') has an unknown type %u", where, j, p->key, p->type);
    if (p->type == GRIP_PARAM_ENUM && (!p->choices || !*p->choices))
        return refuse(r, "%s: params[%u] ('%s') is an enum without choices", where, j, p->key);
    if ((p->type == GRIP_PARAM_INT || p->type == GRIP_PARAM_FLOAT) && !(p->min <= p->max))
        return refuse(r, "%s: params[%u] ('%s') has an empty range [%g, %g]", where, j, p->key, p->min, p->max);
    char why[256];
    grip_param_value v;
    if (p->type != GRIP_PARAM_STRING && grip_param_parse(p, p->default_value, &v, why, sizeof why) != 0)
        return refuse(r, "%s: params[%u] ('%s') has a bad default: %s", where, j, p->key, why);
    return 0;
}

/* Copies the stage's table into `copies` (host stride) and validates every entry. */
static int check_params(const refusal *r, uint32_t i, grip_stage_impl *stage, grip_param_info *copies)
{
    char where[160];
    snprintf(where, sizeof where, "stage %u (%s '%s')", i, kind_names[stage->kind], stage->name);
    if (stage->n_params == 0) {
        stage->params = NULL;
        return 0;
    }
    uint32_t stride = stage->params[0].struct_size;
    size_t need = FIELD_END(grip_param_info, choices);
    if (stride < need)
        return refuse(r, "%s: params is a short struct: struct_size %u, the host needs at least %zu bytes "
                         "(through 'choices')", where, stride, need);
    for (uint32_t j = 0; j < stage->n_params; j++) {
        const grip_param_info *raw = (const grip_param_info *)((const char *)stage->params + (size_t)j * stride);
        if (raw->struct_size != stride)
            return refuse(r, "%s: params[%u].struct_size is %u but the table's stride (params[0]) is %u", where, j,
                          raw->struct_size, stride);
        copy_prefix(&copies[j], raw, stride, sizeof copies[j]);
        copies[j].struct_size = sizeof copies[j];
        if (check_param(r, where, j, &copies[j]) != 0)
            return -1;
        for (uint32_t k = 0; k < j; k++)
            if (strcmp(copies[k].key, copies[j].key) == 0)
                return refuse(r, "%s: params[%u] and params[%u] are both '%s'", where, k, j, copies[j].key);
    }
    stage->params = copies;
    return 0;
}

static int check_duplicates(const refusal *r, const grip_loaded_plugin *lp)
{
    for (uint32_t i = 0; i < lp->table.n_stages; i++)
        for (uint32_t j = 0; j < i; j++) {
            const grip_stage_impl *a = &lp->stage_copies[j], *b = &lp->stage_copies[i];
            if (a->kind == b->kind && strcmp(a->name, b->name) == 0)
                return refuse(r, "stages %u and %u are both %s '%s'", j, i, kind_names[a->kind], a->name);
        }
    return 0;
}

static int load_stages(const refusal *r, grip_loaded_plugin *lp, const grip_stage_impl *const *raw)
{
    uint32_t n = lp->table.n_stages;
    lp->table.stages = NULL;
    if (n == 0)
        return 0;
    lp->stage_copies = calloc(n, sizeof *lp->stage_copies);
    lp->stage_list = calloc(n, sizeof *lp->stage_list);
    if (!lp->stage_copies || !lp->stage_list)
        return refuse(r, "out of memory");
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (check_stage(r, i, raw[i], &lp->stage_copies[i]) != 0)
            return -1;
        total += lp->stage_copies[i].n_params;
        lp->stage_list[i] = &lp->stage_copies[i];
    }
    if (total > 0 && !(lp->param_copies = calloc(total, sizeof *lp->param_copies)))
        return refuse(r, "out of memory");
    for (uint32_t i = 0, at = 0; i < n; at += lp->stage_copies[i].n_params, i++)
        if (check_params(r, i, &lp->stage_copies[i], lp->param_copies + at) != 0)
            return -1;
    lp->table.stages = lp->stage_list;
    return check_duplicates(r, lp);
}

/* ---- public ------------------------------------------------------------------------------------------------ */

int grip_loader_open(const char *path, grip_loaded_plugin *out, char *err, size_t errlen)
{
    refusal r = {path ? path : "(null)", err, errlen};
    if (!out)
        return refuse(&r, "no place for the result (out is NULL)");
    memset(out, 0, sizeof *out);
    if (!path || !*path)
        return refuse(&r, "no plugin path given");
    const grip_plugin *raw = NULL;
    int rc = open_library(&r, &out->handle);
    if (rc == 0)
        rc = fetch_table(&r, out->handle, &raw);
    if (rc == 0)
        rc = check_plugin_table(&r, raw, &out->table);
    if (rc == 0)
        rc = load_stages(&r, out, raw->stages);
    if (rc == 0 && !(out->path = host_strdup(path)))
        rc = refuse(&r, "out of memory");
    if (rc != 0)
        grip_loader_close(out);
    return rc;
}

void grip_loader_close(grip_loaded_plugin *lp)
{
    if (!lp)
        return;
    free(lp->path);
    free(lp->stage_copies);
    free(lp->stage_list);
    free(lp->param_copies);
    if (lp->handle)
        dlclose(lp->handle);
    memset(lp, 0, sizeof *lp);
}

const grip_stage_impl *grip_loader_find_stage(const grip_loaded_plugin *lp, uint32_t kind, const char *impl)
{
    if (!lp)
        return NULL;
    for (uint32_t i = 0; i < lp->table.n_stages; i++) {
        const grip_stage_impl *s = lp->table.stages[i];
        if (s->kind == kind && (!impl || strcmp(s->name, impl) == 0))
            return s;
    }
    return NULL;
}

/* ---- default path -------------------------------------------------------------------------------------------- */

/* The installed plugin's folder relative to the installed grip-host's (the build defines it from the install
 * layout); ../lib/grip for the usual bin/ and lib/ */
#ifndef GRIP_PLUGIN_RELDIR
#define GRIP_PLUGIN_RELDIR "../lib/grip"
#endif

int grip_loader_search_beside(const char *exe_dir, char *buf, size_t n)
{
    /* beside: the build tree; the plugins folder: an installed tree; ../lib: trees installed before it had one */
    static const char *const candidates[] = {"libgrip.so", GRIP_PLUGIN_RELDIR "/libgrip.so", "../lib/libgrip.so"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        snprintf(buf, n, "%s/%s", exe_dir, candidates[i]);
        if (host_file_readable(buf))
            return 0;
    }
    snprintf(buf, n, "%s/%s", exe_dir, candidates[0]);
    return -1;
}

static void executable_dir(const char *argv0, char *dir, size_t n)
{
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        host_dirname(exe, dir, n);
    } else {
        host_dirname(argv0 && *argv0 ? argv0 : ".", dir, n);
    }
}

int grip_loader_default_path(const char *argv0, char *buf, size_t n)
{
    const char *env = getenv("GRIP_PLUGIN");
    if (env && *env) {
        snprintf(buf, n, "%s", env);
        return 0;
    }
    char dir[4096];
    executable_dir(argv0, dir, sizeof dir);
    return grip_loader_search_beside(dir, buf, n);
}
