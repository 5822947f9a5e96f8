/* stub_bad_stage.c -- a plugin whose second stage (or its parameter table) is malformed in the one way
 * $GRIP_STUB_FAULT names; see faults[] below. */
#include <stddef.h>
#include "stub_plugin.h"

/* the fault to show, from the test */
static const char *stub_fault(void)
{
    const char *f = getenv("GRIP_STUB_FAULT");
    return f ? f : "";
}

static grip_stage_impl broken;
static grip_param_info params[STUB_N_PARAMS];
static const grip_stage_impl *stages[2];

/* a describe_many for a stage of another kind to set (never called: the host refuses the plugin) */
static grip_status stub_describe_many(grip_stage *stage, const grip_cloud *const *clouds, const uint32_t *roles,
                                      const grip_array *const *keypoints, uint32_t n_clouds, uint32_t out_memory,
                                      grip_features **out, uint32_t *failed)
{
    (void)clouds, (void)roles, (void)keypoints, (void)n_clouds, (void)out_memory, (void)out, (void)failed;
    return stub_refuse(stage, "describe_many");
}

static void break_stage(const char *f)
{
    if (strcmp(f, "null_stage") == 0) stages[1] = NULL;
    if (strcmp(f, "short_stage") == 0) broken.struct_size = 8;
    if (strcmp(f, "short_for_kind") == 0) {
        broken = stub_verify_stage;
        broken.struct_size = (uint32_t)offsetof(grip_stage_impl, verify);
    }
    if (strcmp(f, "bad_kind") == 0) broken.kind = 7;
    if (strcmp(f, "null_name") == 0) broken.name = NULL;
    if (strcmp(f, "null_create") == 0) broken.create = NULL;
    if (strcmp(f, "no_run") == 0) broken.describe = NULL;
    if (strcmp(f, "two_runs") == 0) broken.build = stub_build;
    if (strcmp(f, "many_off_kind") == 0) {
        broken = stub_verify_stage;
        broken.describe_many = stub_describe_many;
    }
    if (strcmp(f, "null_params") == 0) broken.params = NULL;
}

static void break_params(const char *f)
{
    if (strcmp(f, "short_params") == 0)
        for (uint32_t i = 0; i < STUB_N_PARAMS; i++)
            params[i].struct_size = 16;
    if (strcmp(f, "stride_mismatch") == 0) params[2].struct_size = 16;
    if (strcmp(f, "null_key") == 0) params[1].key = NULL;
    if (strcmp(f, "bad_type") == 0) params[1].type = 9;
    if (strcmp(f, "enum_no_choices") == 0) params[0].choices = NULL;
    if (strcmp(f, "empty_range") == 0) params[1].min = 2.0;
    if (strcmp(f, "bad_default") == 0) params[1].default_value = "2";
    if (strcmp(f, "reserved_key") == 0) params[2].key = "impl";
    if (strcmp(f, "duplicate_key") == 0) params[2].key = "radius";
}

const grip_plugin *grip_plugin_get(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_major, (void)host_abi_minor;
    static grip_plugin table;
    memcpy(params, stub_params, sizeof params);
    broken = stub_descriptor_alt;
    broken.params = params;
    stages[0] = &stub_descriptor;
    stages[1] = &broken;
    break_stage(stub_fault());
    break_params(stub_fault());
    table = stub_table;
    table.n_stages = 2;
    table.stages = stages;
    return &table;
}
