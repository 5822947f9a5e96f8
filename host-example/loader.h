/* loader.h -- grip-host's plugin loader: dlopen() a grip plugin, negotiate the ABI, validate its table and
 * normalise every struct to the host's layout, so that nothing downstream reads past a plugin's struct_size.
 *
 * What "required" means (ABI growth rule: a plugin compiled against an older, shorter layout still loads; a
 * field past its struct_size reads as NULL/0). A struct must reach at least to the last field the host cannot
 * do without:
 *   grip_plugin      through `stages` (identity, status_str, the three context functions, the stage list);
 *                    device_count may be NULL (the host then assumes no CUDA device).
 *   grip_stage_impl  through the run function of its own kind (describe, build, match, group or verify), so an
 *                    older descriptor stage may end right after `describe`; name, create and destroy are set;
 *                    summary may be NULL; exactly one run function, the one of its kind, is set.
 *   grip_param_info  through `choices` (every entry the same size: the table's stride); doc may be NULL.
 * Anything shorter is refused as a short struct. */
#ifndef GRIP_HOST_LOADER_H
#define GRIP_HOST_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include "plugin.h"

/* A loaded plugin. `table` is the plugin's table copied into the host's layout: fields past the plugin's
 * struct_size are NULL/0, table.stages points to copies of the stage implementations (also in the host's
 * layout, params in host-stride tables whose entries have struct_size == sizeof(grip_param_info)).
 * Every string and function pointer still points into the plugin: valid until grip_loader_close(). */
typedef struct grip_loaded_plugin {
    char *path;                  /* copy of the path given to grip_loader_open() */
    grip_plugin table;
    /* owned by the loader */
    void *handle;
    grip_stage_impl *stage_copies;
    const grip_stage_impl **stage_list;
    grip_param_info *param_copies;
} grip_loaded_plugin;

/* Opens the plugin at `path` (dlopen RTLD_NOW|RTLD_LOCAL), calls its grip_plugin_get() with the host's ABI and
 * validates the table. Returns 0 and fills *out (release with grip_loader_close()), or -1 with *out zeroed,
 * nothing open, and a one-line reason naming the path in err, e.g.
 *   "x.so: stage 2 (match 'knn'): params[1].key is NULL". */
int grip_loader_open(const char *path, grip_loaded_plugin *out, char *err, size_t errlen);

/* Frees the copies and dlclose()s the plugin; zeroes *lp. Safe on a zeroed struct and on NULL. Every object the
 * plugin returned must have been released before. */
void grip_loader_close(grip_loaded_plugin *lp);

/* The stage implementation of `kind` named `impl`, or the default implementation of that kind (the first one
 * registered) when impl is NULL; NULL when there is none. */
const grip_stage_impl *grip_loader_find_stage(const grip_loaded_plugin *lp, uint32_t kind, const char *impl);

/* Where grip-host finds its plugin by default: $GRIP_PLUGIN when set (returned as is, even if absent, so that
 * the loader reports it), else the first readable of <exe dir>/libgrip.so (a build tree), <exe dir>/../lib/grip/
 * libgrip.so (an installed tree: the install's plugin folder as seen from its bin folder) and <exe dir>/../lib/
 * libgrip.so, the exe dir being that of /proc/self/exe (of argv0 when /proc is unavailable). Returns 0 with the
 * path in buf, or -1 when no candidate exists, buf then holding the first place looked. */
int grip_loader_default_path(const char *argv0, char *buf, size_t n);

/* The search of grip_loader_default_path() below one executable folder (without the environment). */
int grip_loader_search_beside(const char *exe_dir, char *buf, size_t n);

/* "descriptor", "index", "match", "group", "verify" (the config's section names); NULL when out of range. */
const char *grip_loader_kind_name(uint32_t kind);
/* The kind named `name`, or -1. */
int grip_loader_kind_from_name(const char *name);

#endif
