/* stub_plugin.h -- the minimal valid grip plugin the test stubs in tests/stubs/ start from (a test fixture, not
 * a plugin anyone runs). Each stub_*.c includes it and exports a grip_plugin_get() that returns this table or a
 * copy broken in one way, so that test_loader can walk every refusal path of grip-host's loader.
 *
 * Behaviour: contexts work; create() accepts exactly the keys of the stage's table (others fail with
 * GRIP_ECONFIG naming the key); every run function fails with GRIP_EUNSUPPORTED. device_count() reports 0. */
#ifndef GRIP_TEST_STUB_PLUGIN_H
#define GRIP_TEST_STUB_PLUGIN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plugin.h"

struct grip_ctx {
    char error[256];
};

struct grip_stage {
    grip_ctx *ctx;
    const char *name;
};

static const char *stub_status_str(grip_status status)
{
    return status == GRIP_OK ? "ok" : "stub failure";
}

static grip_status stub_ctx_create(const grip_ctx_options *opts, grip_ctx **out)
{
    (void)opts;
    *out = calloc(1, sizeof **out);
    return *out ? GRIP_OK : GRIP_ENOMEM;
}

static void stub_ctx_destroy(grip_ctx *ctx)
{
    free(ctx);
}

static const char *stub_ctx_last_error(const grip_ctx *ctx)
{
    return ctx->error;
}

static int32_t stub_device_count(grip_ctx *ctx)
{
    (void)ctx;
    return 0;
}

static const grip_param_info stub_params[] = {
    {sizeof(grip_param_info), GRIP_PARAM_ENUM, "device", "auto", 0, 0, "auto|cuda|cpu", "where the stage runs"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "radius", "0.5", 0.0, 1.0, NULL, "a radius (m)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "k", "3", 1, 10, NULL, "a count"},
};
#define STUB_N_PARAMS ((uint32_t)(sizeof stub_params / sizeof stub_params[0]))

static grip_status stub_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    *out = NULL;
    for (uint32_t i = 0; i < n_kv; i++) {
        uint32_t j = 0;
        while (j < STUB_N_PARAMS && strcmp(stub_params[j].key, kv[i].key) != 0)
            j++;
        if (j == STUB_N_PARAMS) {
            snprintf(ctx->error, sizeof ctx->error, "stub.%s: unknown key", kv[i].key);
            return GRIP_ECONFIG;
        }
    }
    *out = calloc(1, sizeof **out);
    if (!*out)
        return GRIP_ENOMEM;
    (*out)->ctx = ctx;
    return GRIP_OK;
}

static void stub_destroy(grip_stage *stage)
{
    free(stage);
}

static grip_status stub_refuse(grip_stage *stage, const char *what)
{
    snprintf(stage->ctx->error, sizeof stage->ctx->error, "stub: %s: a stub stage only exists to be loaded", what);
    return GRIP_EUNSUPPORTED;
}

static grip_status stub_describe(grip_stage *stage, const grip_cloud *cloud, uint32_t role,
                                 const grip_array *keypoints, uint32_t out_memory, grip_features **out)
{
    (void)cloud, (void)role, (void)keypoints, (void)out_memory;
    *out = NULL;
    return stub_refuse(stage, "describe");
}

static grip_status stub_build(grip_stage *stage, const grip_array *reference, const grip_array *model_ids,
                              grip_index **out)
{
    (void)reference, (void)model_ids;
    *out = NULL;
    return stub_refuse(stage, "build");
}

static grip_status stub_match(grip_stage *stage, grip_index *index, const grip_array *queries, uint32_t out_memory,
                              grip_matches **out)
{
    (void)index, (void)queries, (void)out_memory;
    *out = NULL;
    return stub_refuse(stage, "match");
}

static grip_status stub_group(grip_stage *stage, const grip_view *models, uint32_t n_models, const grip_view *scene,
                              const grip_matches *matches, grip_hypotheses **out)
{
    (void)models, (void)n_models, (void)scene, (void)matches;
    *out = NULL;
    return stub_refuse(stage, "group");
}

static grip_status stub_verify(grip_stage *stage, const grip_view *models, uint32_t n_models,
                               const grip_view *scene, const grip_hypotheses *hypotheses, grip_verdicts **out)
{
    (void)models, (void)n_models, (void)scene, (void)hypotheses;
    *out = NULL;
    return stub_refuse(stage, "verify");
}

#define STUB_STAGE(kind_, name_, run_field, run_fn)                                                            \
    {                                                                                                          \
        .struct_size = sizeof(grip_stage_impl), .kind = (kind_), .name = (name_), .summary = "a stub stage",  \
        .backends = GRIP_BACKEND_CPU, .n_params = STUB_N_PARAMS, .params = stub_params, .create = stub_create, \
        .destroy = stub_destroy, .run_field = (run_fn)                                                         \
    }

/* one stage of each kind, plus a second descriptor ("stub_alt") to tell the default from a named one */
static const grip_stage_impl stub_descriptor = STUB_STAGE(GRIP_STAGE_DESCRIPTOR, "stub", describe, stub_describe);
static const grip_stage_impl stub_descriptor_alt =
    STUB_STAGE(GRIP_STAGE_DESCRIPTOR, "stub_alt", describe, stub_describe);
static const grip_stage_impl stub_index = STUB_STAGE(GRIP_STAGE_INDEX, "stub", build, stub_build);
static const grip_stage_impl stub_match_stage = STUB_STAGE(GRIP_STAGE_MATCH, "stub", match, stub_match);
static const grip_stage_impl stub_group_stage = STUB_STAGE(GRIP_STAGE_GROUP, "stub", group, stub_group);
static const grip_stage_impl stub_verify_stage = STUB_STAGE(GRIP_STAGE_VERIFY, "stub", verify, stub_verify);

static const grip_stage_impl *const stub_stages[] = {&stub_descriptor,  &stub_descriptor_alt, &stub_index,
                                                     &stub_match_stage, &stub_group_stage,    &stub_verify_stage};

static const grip_plugin stub_table = {
    .struct_size = sizeof(grip_plugin),
    .abi_major = GRIP_ABI_MAJOR,
    .abi_minor = GRIP_ABI_MINOR,
    .name = "stub",
    .version = "0.0.1",
    .capabilities = 0,
    .status_str = stub_status_str,
    .ctx_create = stub_ctx_create,
    .ctx_destroy = stub_ctx_destroy,
    .ctx_last_error = stub_ctx_last_error,
    .device_count = stub_device_count,
    .n_stages = (uint32_t)(sizeof stub_stages / sizeof stub_stages[0]),
    .stages = stub_stages,
};

#endif
