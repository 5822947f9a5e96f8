/* stub_null_required.c -- a plugin table with one required field left NULL; which one is chosen by
 * $GRIP_STUB_FAULT: name, version, status_str, ctx_create, ctx_destroy, ctx_last_error or stages. */
#include "stub_plugin.h"

/* the fault to show, from the test */
static const char *stub_fault(void)
{
    const char *f = getenv("GRIP_STUB_FAULT");
    return f ? f : "";
}

const grip_plugin *grip_plugin_get(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_major, (void)host_abi_minor;
    static grip_plugin t;
    t = stub_table;
    const char *f = stub_fault();
    if (strcmp(f, "name") == 0) t.name = NULL;
    if (strcmp(f, "version") == 0) t.version = NULL;
    if (strcmp(f, "status_str") == 0) t.status_str = NULL;
    if (strcmp(f, "ctx_create") == 0) t.ctx_create = NULL;
    if (strcmp(f, "ctx_destroy") == 0) t.ctx_destroy = NULL;
    if (strcmp(f, "ctx_last_error") == 0) t.ctx_last_error = NULL;
    if (strcmp(f, "stages") == 0) t.stages = NULL;
    return &t;
}
