/* stub_no_entry.c -- a shared object that exports a near miss of the entry point, not grip_plugin_get(). */
#include "plugin.h"

GRIP_EXPORT const grip_plugin *grip_plugin_table(void);

const grip_plugin *grip_plugin_table(void)
{
    return NULL;
}
