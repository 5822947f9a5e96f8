/* config.c -- reading INI files and --set overrides into a grip_config, and the accessors. Validation against
 * the plugins' parameter tables is in config_validate.c. */
#define _POSIX_C_SOURCE 200809L
#include "config.h"
#include "host_util.h"
#include "suggest.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SET_ORIGIN "--set"

/* ---- reporting --------------------------------------------------------------------------------------------- */

/* "origin[:line]: [section.key: | section: | key: ]message" */
static void report_v(grip_diag *d, const char *origin, int line, const char *section, const char *key,
                     const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int len = vsnprintf(NULL, 0, fmt, ap);
    char *msg = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!msg) {
        va_end(again);
        d->lost++;
        return;
    }
    vsnprintf(msg, (size_t)len + 1, fmt, again);
    va_end(again);
    char at[32] = "";
    if (line > 0)
        snprintf(at, sizeof at, ":%d", line);
    if (section || key)
        grip_diag_add(d, "%s%s: %s%s%s: %s", origin, at, section ? section : "", section && key ? "." : "",
                      key ? key : "", msg);
    else
        grip_diag_add(d, "%s%s: %s", origin, at, msg);
    free(msg);
}

static void report_at(grip_diag *d, const char *origin, int line, const char *section, const char *key,
                      const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(__printf__, 6, 7)))
#endif
    ;

static void report_at(grip_diag *d, const char *origin, int line, const char *section, const char *key,
                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report_v(d, origin, line, section, key, fmt, ap);
    va_end(ap);
}

void grip_config_report(grip_diag *diag, const grip_config_entry *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report_v(diag, e->origin, e->line, e->section, e->key, fmt, ap);
    va_end(ap);
}

/* ---- entries ------------------------------------------------------------------------------------------------ */

const grip_config_entry *grip_config_find(const grip_config *cfg, const char *section, const char *key)
{
    for (size_t i = 0; i < cfg->count; i++)
        if (strcmp(cfg->entries[i].section, section) == 0 && strcmp(cfg->entries[i].key, key) == 0)
            return &cfg->entries[i];
    return NULL;
}

static void entry_free(grip_config_entry *e)
{
    free(e->section);
    free(e->key);
    free(e->value);
    free(e->origin);
    free(e->resolved);
}

static int entry_fill(grip_config_entry *e, const char *section, const char *key, const char *value,
                      const char *origin, int line)
{
    grip_config_entry fresh = {host_strdup(section), host_strdup(key), host_strdup(value), host_strdup(origin),
                               line};
    if (!fresh.section || !fresh.key || !fresh.value || !fresh.origin) {
        entry_free(&fresh);
        return -1;
    }
    *e = fresh;
    return 0;
}

/* Records section.key = value: a key set twice in one file is an error; anything else replaces. */
static int put_entry(grip_config *cfg, const char *section, const char *key, const char *value, const char *origin,
                     int line, grip_diag *d)
{
    grip_config_entry *old = (grip_config_entry *)grip_config_find(cfg, section, key);
    if (old && line > 0 && old->line > 0 && strcmp(old->origin, origin) == 0) {
        report_at(d, origin, line, section, key, "duplicate key (first set at line %d)", old->line);
        return -1;
    }
    if (!old && cfg->count == cfg->capacity) {
        size_t capacity = cfg->capacity ? 2 * cfg->capacity : 16;
        grip_config_entry *bigger = realloc(cfg->entries, capacity * sizeof *bigger);
        if (!bigger) {
            report_at(d, origin, line, section, key, "out of memory");
            return -1;
        }
        cfg->entries = bigger;
        cfg->capacity = capacity;
    }
    grip_config_entry fresh;
    if (entry_fill(&fresh, section, key, value, origin, line) != 0) {
        report_at(d, origin, line, section, key, "out of memory");
        return -1;
    }
    if (old)
        entry_free(old);
    else
        old = &cfg->entries[cfg->count++];
    *old = fresh;
    return 0;
}

/* The sections of a pipeline config: pipeline and one per stage kind. */
static const char *const pipeline_section_names[] = {"pipeline", "descriptor", "index", "match", "group", "verify",
                                                     NULL};
static const grip_ini_sections pipeline_sections = {pipeline_section_names, NULL};

static int section_known(const grip_ini_sections *known, const char *name)
{
    for (size_t i = 0; known->names && known->names[i]; i++)
        if (strcmp(name, known->names[i]) == 0)
            return 1;
    for (size_t i = 0; known->prefixes && known->prefixes[i]; i++) {
        size_t n = strlen(known->prefixes[i]);
        if (strncmp(name, known->prefixes[i], n) == 0 && name[n] == ' ' && name[n + 1] != '\0')
            return 1;
    }
    return 0;
}

static void report_unknown_section(grip_diag *d, const grip_ini_sections *known, const char *origin, int line,
                                   const char *section, const char *key)
{
    grip_suggestion s = {section, NULL, 0};
    char listing[512] = "";
    size_t at = 0;
    for (size_t i = 0; known->names && known->names[i]; i++) {
        grip_suggest_consider(&s, known->names[i]);
        at += (size_t)snprintf(listing + at, at < sizeof listing ? sizeof listing - at : 0, "%s%s", at ? ", " : "",
                               known->names[i]);
    }
    for (size_t i = 0; known->prefixes && known->prefixes[i]; i++)
        at += (size_t)snprintf(listing + at, at < sizeof listing ? sizeof listing - at : 0, "%s%s NAME",
                               at ? ", " : "", known->prefixes[i]);
    report_at(d, origin, line, section, key, "unknown section (known: %s)%s%s%s", listing,
              s.best ? "; did you mean '" : "", s.best ? s.best : "", s.best ? "'?" : "");
}

/* ---- the INI file -------------------------------------------------------------------------------------------- */

typedef struct ini_reader {
    const char *path;
    int line;
    char *section;   /* the current [section], NULL before the first header */
    const grip_ini_sections *sections; /* the sections this kind of file may have */
    int known;       /* whether it is one we know (keys of an unknown section are skipped: reported once) */
    grip_config *cfg;
    grip_diag *diag;
} ini_reader;

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Cuts a comment: ';' or '#' first on the line, or a '#' after a blank (so a '#' inside a word stays). */
static void strip_comment(char *s)
{
    char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '#' || *p == ';') {
        *s = '\0';
        return;
    }
    for (; *p; p++)
        if (*p == '#' && isspace((unsigned char)p[-1])) {
            *p = '\0';
            return;
        }
}

/* A malformed header leaves the reader skipping keys until the next good one: reported once, no cascade. */
static void read_header(ini_reader *r, char *text)
{
    r->known = 0;
    char *close = strchr(text, ']');
    if (!close) {
        report_at(r->diag, r->path, r->line, NULL, NULL, "missing ']' in section header '%s'", text);
        return;
    }
    *close = '\0';
    char *name = trim(text + 1), *rest = trim(close + 1);
    if (*rest) {
        report_at(r->diag, r->path, r->line, name, NULL, "unexpected '%s' after ']'", rest);
        return;
    }
    if (!*name) {
        report_at(r->diag, r->path, r->line, NULL, NULL, "empty section name '[]'");
        return;
    }
    char *copy = host_strdup(name);
    if (!copy) {
        report_at(r->diag, r->path, r->line, name, NULL, "out of memory");
        return;
    }
    free(r->section);
    r->section = copy;
    r->known = section_known(r->sections, name);
    if (!r->known)
        report_unknown_section(r->diag, r->sections, r->path, r->line, name, NULL);
}

static void read_assignment(ini_reader *r, char *text)
{
    char *eq = strchr(text, '=');
    if (!eq) {
        report_at(r->diag, r->path, r->line, r->section, NULL, "missing '=' in '%s' (expected key = value)", text);
        return;
    }
    *eq = '\0';
    char *key = trim(text), *value = trim(eq + 1);
    if (!*key)
        report_at(r->diag, r->path, r->line, r->section, NULL, "missing key before '='");
    else if (!r->section)
        report_at(r->diag, r->path, r->line, NULL, key, "key outside any section (put a [section] line above it)");
    else if (r->known)
        put_entry(r->cfg, r->section, key, value, r->path, r->line, r->diag);
}

static void read_line(ini_reader *r, char *raw)
{
    if (r->line == 1 && (unsigned char)raw[0] == 0xEF && (unsigned char)raw[1] == 0xBB &&
        (unsigned char)raw[2] == 0xBF)
        raw += 3; /* UTF-8 byte order mark */
    strip_comment(raw);
    char *text = trim(raw);
    if (!*text)
        return;
    if (*text == '[')
        read_header(r, text);
    else
        read_assignment(r, text);
}

/* Counts one more line; at INT_MAX (line numbers are ints in every message and entry) the file is refused from
 * there on rather than the count overflowing. */
static int next_line(ini_reader *r)
{
    if (r->line == INT_MAX) {
        report_at(r->diag, r->path, r->line, NULL, NULL, "file has more than %d lines; the rest is ignored", INT_MAX);
        return 0;
    }
    r->line++;
    return 1;
}

int grip_config_load(const char *path, grip_config *cfg, grip_diag *diag)
{
    return grip_ini_load(path, &pipeline_sections, cfg, diag);
}

int grip_ini_load(const char *path, const grip_ini_sections *sections, grip_config *cfg, grip_diag *diag)
{
    size_t before = grip_diag_count(diag);
    FILE *f = fopen(path, "r");
    if (!f) {
        grip_diag_add(diag, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    ini_reader r = {path, 0, NULL, sections, 0, cfg, diag};
    char *buf = NULL;
    size_t cap = 0;
    errno = 0;
    while (getline(&buf, &cap, f) >= 0 && next_line(&r))
        read_line(&r, buf);
    if (ferror(f))
        grip_diag_add(diag, "%s: read error after line %d: %s", path, r.line, strerror(errno));
    free(buf);
    free(r.section);
    fclose(f);
    return grip_diag_count(diag) == before ? 0 : -1;
}

int grip_config_load_mem(const char *name, const char *text, size_t len, grip_config *cfg, grip_diag *diag)
{
    size_t before = grip_diag_count(diag);
    ini_reader r = {name, 0, NULL, &pipeline_sections, 0, cfg, diag};
    char *buf = NULL;
    size_t cap = 0;
    /* line by line as getline() gives them: each with its '\n', then a NUL (one inside a line ends it early) */
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) + 1 : len - at;
        if (n + 1 > cap) {
            char *bigger = realloc(buf, n + 1);
            if (!bigger) {
                grip_diag_add(diag, "%s: out of memory after line %d", name, r.line);
                break;
            }
            buf = bigger;
            cap = n + 1;
        }
        memcpy(buf, text + at, n);
        buf[n] = '\0';
        at += n;
        if (!next_line(&r))
            break;
        read_line(&r, buf);
    }
    free(buf);
    free(r.section);
    return grip_diag_count(diag) == before ? 0 : -1;
}

/* ---- --set section.key=value --------------------------------------------------------------------------------- */

int grip_config_set(grip_config *cfg, const char *assignment, grip_diag *diag)
{
    char *copy = host_strdup(assignment ? assignment : "");
    if (!copy) {
        grip_diag_add(diag, SET_ORIGIN ": out of memory");
        return -1;
    }
    int rc = -1;
    char *eq = strchr(copy, '=');
    char *dot = eq ? memchr(copy, '.', (size_t)(eq - copy)) : NULL;
    if (!eq || !dot) {
        grip_diag_add(diag, SET_ORIGIN ": '%s': expected section.key=value", assignment ? assignment : "");
        free(copy);
        return -1;
    }
    *eq = *dot = '\0';
    char *section = trim(copy), *key = trim(dot + 1), *value = trim(eq + 1);
    if (!*section || !*key)
        grip_diag_add(diag, SET_ORIGIN ": '%s': expected section.key=value (%s is empty)", assignment,
                      *section ? "the key" : "the section");
    else if (!section_known(&pipeline_sections, section))
        report_unknown_section(diag, &pipeline_sections, SET_ORIGIN, 0, section, key);
    else
        rc = put_entry(cfg, section, key, value, SET_ORIGIN, 0, diag);
    free(copy);
    return rc;
}

/* ---- accessors ----------------------------------------------------------------------------------------------- */

int grip_config_stage_plugin(const grip_config *cfg, uint32_t kind, char *buf, size_t n)
{
    const char *section = grip_loader_kind_name(kind);
    const grip_config_entry *e = section ? grip_config_find(cfg, section, "plugin") : NULL;
    if (!e)
        return 0;
    if (e->value[0] == '/' || e->line == 0) {
        snprintf(buf, n, "%s", e->value);
    } else {
        char dir[4096];
        host_dirname(e->origin, dir, sizeof dir);
        snprintf(buf, n, "%s/%s", dir, e->value);
    }
    return 1;
}

const grip_stage_impl *grip_config_stage_impl(const grip_config *cfg, uint32_t kind)
{
    return kind < GRIP_STAGE_KIND_COUNT ? cfg->stages[kind].impl : NULL;
}

const grip_kv *grip_config_stage_kv(const grip_config *cfg, uint32_t kind, uint32_t *n_kv)
{
    if (kind >= GRIP_STAGE_KIND_COUNT) {
        *n_kv = 0;
        return NULL;
    }
    *n_kv = cfg->stages[kind].n_kv;
    return cfg->stages[kind].kv;
}

void grip_config_free(grip_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->count; i++)
        entry_free(&cfg->entries[i]);
    free(cfg->entries);
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++)
        free(cfg->stages[k].kv);
    memset(cfg, 0, sizeof *cfg);
}
