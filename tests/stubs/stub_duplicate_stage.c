/* stub_duplicate_stage.c -- a plugin that registers descriptor 'stub' twice. */
#include "stub_plugin.h"

static const grip_stage_impl *const stages[] = {&stub_descriptor, &stub_index, &stub_descriptor};

const grip_plugin *grip_plugin_get(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_major, (void)host_abi_minor;
    static grip_plugin table;
    table = stub_table;
    table.n_stages = 3;
    table.stages = stages;
    return &table;
}
