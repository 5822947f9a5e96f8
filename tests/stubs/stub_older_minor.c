/* stub_older_minor.c -- a valid plugin written against an older, shorter layout (ABI growth rule): its
 * parameter entries end before `doc` (stride 48 bytes, not sizeof(grip_param_info)), its descriptor stage ends
 * right after `describe` and its index stage right after `build`. Past each struct_size the bytes hold
 * non-NULL traps (a run function of another kind, a doc text) that a host must never read. */
#include <stddef.h>
#include "stub_plugin.h"

/* grip_param_info as an older minor had it: no `doc` */
typedef struct older_param_info {
    uint32_t struct_size;
    uint32_t type;
    const char *key;
    const char *default_value;
    double min, max;
    const char *choices;
} older_param_info;

/* the entries laid out with the older stride, followed by a trap that would read as a doc pointer */
static const struct {
    older_param_info entries[2];
    const char *trap;
} older_params = {
    {
        {sizeof(older_param_info), GRIP_PARAM_FLOAT, "radius", "0.25", 0.0, 1.0, NULL},
        {sizeof(older_param_info), GRIP_PARAM_ENUM, "device", "cpu", 0, 0, "auto|cuda|cpu"},
    },
    "trap: doc past struct_size",
};

static const grip_stage_impl older_descriptor = {
    .struct_size = (uint32_t)(offsetof(grip_stage_impl, describe) + sizeof(void (*)(void))),
    .kind = GRIP_STAGE_DESCRIPTOR,
    .name = "older",
    .summary = "a descriptor stage of an older minor",
    .backends = GRIP_BACKEND_CPU,
    .n_params = 2,
    .params = (const grip_param_info *)&older_params,
    .create = stub_create,
    .destroy = stub_destroy,
    .describe = stub_describe,
    .build = stub_build, /* trap: past struct_size */
};

static const grip_stage_impl older_index = {
    .struct_size = (uint32_t)(offsetof(grip_stage_impl, build) + sizeof(void (*)(void))),
    .kind = GRIP_STAGE_INDEX,
    .name = "older",
    .summary = NULL,
    .backends = GRIP_BACKEND_CPU,
    .n_params = 0,
    .params = NULL,
    .create = stub_create,
    .destroy = stub_destroy,
    .build = stub_build,
    .verify = stub_verify, /* trap: past struct_size */
};

static const grip_stage_impl *const stages[] = {&older_descriptor, &older_index};

const grip_plugin *grip_plugin_get(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_minor;
    static grip_plugin table;
    table = stub_table;
    table.abi_minor = 0;
    table.name = "older";
    table.device_count = NULL; /* optional */
    table.n_stages = 2;
    table.stages = stages;
    return host_abi_major == GRIP_ABI_MAJOR ? &table : NULL;
}
