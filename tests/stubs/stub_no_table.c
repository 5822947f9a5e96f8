/* stub_no_table.c -- a plugin that only speaks a future ABI major: grip_plugin_get() returns NULL for ours. */
#include "stub_plugin.h"

const grip_plugin *grip_plugin_get(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_minor;
    return host_abi_major == GRIP_ABI_MAJOR + 1 ? &stub_table : NULL;
}
