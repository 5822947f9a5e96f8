/* config.h -- grip-host's pipeline configuration: an INI file plus --set overrides, validated against the
 * parameter tables the plugins publish.
 *
 * File syntax: `[section]` headers, `key = value` lines, blank lines, comments from a '#' or ';' that starts a
 * line or a '#' that follows a blank; surrounding blanks are trimmed, CRLF line ends accepted, lines of any
 * length. Sections: `pipeline` (keys device = auto|cuda|cpu, cuda_device, threads: grip_config_pipeline_params())
 * and one per stage kind: descriptor, index, match, group, verify. In a stage section, `impl` picks the implementation
 * (default: the first one the plugin registers of that kind), `plugin = path.so` takes the stage from another plugin (a
 * relative path is relative to the config file's folder), and every other key is validated against the chosen
 * implementation's parameter table. `pipeline.device` is passed to every stage as its `device` key unless the stage's
 * section sets its own.
 *
 * Every problem is collected in a grip_diag, all at once, each as "file:line: section.key: message"
 * ("--set: section.key: message" for overrides). */
#ifndef GRIP_HOST_CONFIG_H
#define GRIP_HOST_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include "diag.h"
#include "loader.h"

/* One `key = value` as written; each (section, key) appears at most once in a grip_config. */
typedef struct grip_config_entry {
    char *section;
    char *key;
    char *value;  /* trimmed, may be empty */
    char *origin; /* the file it came from, or "--set" */
    int line;     /* 1-based line in origin; 0 for --set */
    char *resolved; /* a length written "N mr": N times grip_config.resolution as the stage gets it (set by
                       grip_config_validate, malloc'd); NULL otherwise */
} grip_config_entry;

/* A stage as grip_config_validate() resolved it. */
typedef struct grip_config_stage {
    const grip_stage_impl *impl; /* the chosen implementation (borrowed from its plugin); NULL if none */
    grip_kv *kv;                 /* what impl->create() gets: the section's keys except impl and plugin, plus
                                    device from the pipeline; strings borrowed from the entries */
    uint32_t n_kv;
} grip_config_stage;

/* Zero-initialise (`grip_config cfg = {0};`); free with grip_config_free(). */
typedef struct grip_config {
    grip_config_entry *entries;
    size_t count, capacity;
    grip_config_stage stages[GRIP_STAGE_KIND_COUNT]; /* filled by grip_config_validate() */
    double resolution; /* the scene's measured resolution, which a length written "N mr" multiplies; 0: not
                          measured, and "N mr" is an error */
} grip_config;

/* The pipeline section's settings, with defaults for what the config leaves unset. */
typedef struct grip_pipeline_settings {
    const char *device;  /* "auto", "cuda" or "cpu" (static text) */
    int32_t cuda_device; /* CUDA ordinal; -1 = the first usable one (grip_ctx_options.device_ordinal) */
    uint32_t threads;    /* CPU threads of the CPU twins; 0 = OpenMP's default (grip_ctx_options.threads) */
    const char *unit;    /* the clouds' unit as the config names it ("m", "mm", ...), "" when it names none (static) */
} grip_pipeline_settings;

/* Reads an INI file into cfg (which may already hold entries: a later file overrides an earlier one; a key
 * twice in one file is an error). Syntax problems and unknown sections go to diag. Returns 0, or -1 when this
 * file added a problem (including "cannot open"). Call it before grip_config_set(). */
int grip_config_load(const char *path, grip_config *cfg, grip_diag *diag);

/* The sections a file in this syntax may have: a section is known when it equals one of `names` or is one of
 * `prefixes` followed by a blank and a name ("instance milk" for the prefix "instance"). Both lists end with NULL;
 * either may be NULL. Keys of an unknown section are skipped after one message that lists the known ones. */
typedef struct grip_ini_sections {
    const char *const *names;
    const char *const *prefixes;
} grip_ini_sections;

/* grip_config_load for other files in the same syntax (grip-host regress's case files): the same reading, entries
 * and messages, with the sections `sections` allows instead of a pipeline config's. */
int grip_ini_load(const char *path, const grip_ini_sections *sections, grip_config *cfg, grip_diag *diag);

/* grip_config_load on a file already in memory: text[0..len) (NUL bytes allowed, no terminator needed) read as
 * the file `name` -- the origin of its entries and of its messages. */
int grip_config_load_mem(const char *name, const char *text, size_t len, grip_config *cfg, grip_diag *diag);

/* Applies one override "section.key=value" (origin "--set"), replacing what a file said. Returns 0 or -1 with
 * the problem in diag, e.g. "--set: descriptor.radius: missing '=' (expected section.key=value)". */
int grip_config_set(grip_config *cfg, const char *assignment, grip_diag *diag);

/* Validates every entry: pipeline keys against the pipeline table, stage keys against the table of the chosen
 * implementation of plugins[kind], the plugin each stage is taken from (the runner loads a stage's `plugin`
 * itself; a NULL plugins[kind] means that it could not, and that stage's keys are not checked further).
 * Fills cfg->stages. Returns 0, or -1 when it added problems to diag. */
int grip_config_validate(grip_config *cfg, const grip_loaded_plugin *const plugins[GRIP_STAGE_KIND_COUNT],
                         grip_diag *diag);

/* The entry for section.key, or NULL. */
const grip_config_entry *grip_config_find(const grip_config *cfg, const char *section, const char *key);

/* The path a stage section's `plugin` names into buf: a relative path from a file is resolved against that
 * file's folder, a --set value is taken as given. Returns 1 when the section sets one, 0 otherwise. */
int grip_config_stage_plugin(const grip_config *cfg, uint32_t kind, char *buf, size_t n);

/* After a successful grip_config_validate(): the implementation chosen for `kind` (NULL if the plugin has
 * none) and the key/value list for its create() (n_kv entries; valid until cfg changes or is freed). */
const grip_stage_impl *grip_config_stage_impl(const grip_config *cfg, uint32_t kind);
const grip_kv *grip_config_stage_kv(const grip_config *cfg, uint32_t kind, uint32_t *n_kv);

/* The pipeline section's values, each from the config when it is set and valid, else its default. */
void grip_config_pipeline(const grip_config *cfg, grip_pipeline_settings *out);

/* The pipeline section's parameter table (self-describing like a stage's; for `grip-host list`). */
const grip_param_info *grip_config_pipeline_params(uint32_t *n);

/* Adds "origin:line: section.key: message" (or "--set: section.key: message") for entry e to diag; for the
 * runner's own problems with an entry, e.g. a `plugin` that does not load. */
void grip_config_report(grip_diag *diag, const grip_config_entry *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(__printf__, 3, 4)))
#endif
    ;

/* Frees every entry and the stage lists; zeroes *cfg. */
void grip_config_free(grip_config *cfg);

#endif
