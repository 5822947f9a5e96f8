/* shipped_configs.h -- configs of the source tree's configs/ folder built into grip-host (listed in CMakeLists.txt,
 * made into a C file by cmake/GripShippedConfigs.cmake), so that a command can default to one wherever grip-host
 * runs. Load one with grip_config_load_mem(c->name, c->text, c->len, ...). */
#ifndef GRIP_HOST_SHIPPED_CONFIGS_H
#define GRIP_HOST_SHIPPED_CONFIGS_H

#include <stddef.h>

typedef struct shipped_config {
    const char *name; /* "configs/pcl_tutorial.conf": the path in the source tree, and the origin its messages name */
    const char *text; /* the file's bytes, NUL-terminated */
    size_t len;       /* without the NUL */
} shipped_config;

/* Every built-in config, ended by an entry whose name is NULL (generated). */
extern const shipped_config shipped_configs[];

/* The built-in config of that name ("configs/pcl_tutorial.conf"), or NULL when none is built in. Static data. */
const shipped_config *shipped_config_find(const char *name);

#endif
