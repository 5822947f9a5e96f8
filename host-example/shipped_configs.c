/* shipped_configs.c -- see shipped_configs.h; the table itself is generated. */
#include "shipped_configs.h"

#include <string.h>

const shipped_config *shipped_config_find(const char *name)
{
    for (const shipped_config *c = shipped_configs; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}
