/* stub_short_struct.c -- a plugin table whose struct_size ends before the context functions the host needs. */
#include <stddef.h>
#include "stub_plugin.h"

const grip_plugin *grip_plugin_get(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_major, (void)host_abi_minor;
    static grip_plugin table;
    table = stub_table;
    table.struct_size = (uint32_t)offsetof(grip_plugin, ctx_create);
    return &table;
}
