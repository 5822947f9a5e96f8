/* stub_valid.c -- a minimal valid plugin: six stub stages (two descriptors), every kind covered. */
#include "stub_plugin.h"

const grip_plugin *grip_plugin_get(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_minor;
    return host_abi_major == GRIP_ABI_MAJOR ? &stub_table : NULL;
}
