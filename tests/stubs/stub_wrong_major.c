/* stub_wrong_major.c -- a plugin that ignores the host's request and returns a table of another ABI major. */
#include "stub_plugin.h"

const grip_plugin *grip_plugin_get(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_major, (void)host_abi_minor;
    static grip_plugin table;
    table = stub_table;
    table.abi_major = GRIP_ABI_MAJOR + 1;
    return &table;
}
