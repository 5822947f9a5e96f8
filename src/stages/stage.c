/* stage.c -- see stage.h. */
#include "stages/stage.h"
#include "core/cuda_bridge.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *grip_stage_kind_name(uint32_t kind)
{
    static const char *names[GRIP_STAGE_KIND_COUNT] = {"descriptor", "index", "match", "group", "verify"};
    return kind < GRIP_STAGE_KIND_COUNT ? names[kind] : "stage";
}

/* Set in a live stage, cleared when it is destroyed. */
#define GRIP_STAGE_LIVE 0x67617453u

/* The run function of each kind, for error texts. */
static const char *run_name(uint32_t kind)
{
    static const char *names[GRIP_STAGE_KIND_COUNT] = {"describe", "build", "match", "group", "verify"};
    return kind < GRIP_STAGE_KIND_COUNT ? names[kind] : "run";
}

grip_status grip_stage_create(const grip_stage_impl *impl, grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv,
                              grip_stage **out)
{
    const char *kind = grip_stage_kind_name(impl->kind);
    if (out)
        *out = NULL;
    if (!grip_ctx_is_live(ctx))
        return grip_fail(NULL, GRIP_EINVAL, "%s.%s: create: ctx is %s", kind, impl->name,
                         ctx ? "not a live grip context (destroyed?)" : "NULL");
    if (!out)
        return grip_fail(ctx, GRIP_EINVAL, "%s.%s: create: out is NULL", kind, impl->name);
    if (n_kv && !kv)
        return grip_fail(ctx, GRIP_EINVAL, "%s.%s: create: %u keys but kv is NULL", kind, impl->name, n_kv);
    if (impl->n_params > GRIP_STAGE_MAX_PARAMS)
        return grip_fail(ctx, GRIP_EINTERNAL, "%s.%s: too many parameters", kind, impl->name);
    grip_stage *st = calloc(1, sizeof *st);
    if (!st)
        return grip_fail(ctx, GRIP_ENOMEM, "%s: out of memory", kind);
    st->impl = impl;
    st->ctx = ctx;
    grip_status s = grip_params_resolve(ctx, kind, impl->params, impl->n_params, kv, n_kv, st->values);
    if (s == GRIP_OK)
        s = grip_device_resolve(ctx, kind, grip_stage_choice(st, "device"), (impl->backends & GRIP_BACKEND_CUDA) != 0,
                                &st->use_cuda);
    if (s != GRIP_OK) {
        free(st);
        return s;
    }
    for (uint32_t i = 0; i < impl->n_params; i++)
        st->values[i].text = NULL; /* it pointed into the caller's kv, which create() only borrows */
    st->live = GRIP_STAGE_LIVE;
    *out = st;
    return GRIP_OK;
}

void grip_stage_destroy(grip_stage *stage)
{
    if (!stage || stage->live != GRIP_STAGE_LIVE)
        return;
    grip_cookie_clear(&stage->live);
    if (stage->free_state)
        stage->free_state(stage->state);
    free(stage);
}

static const grip_param_value *value_of(const grip_stage *stage, const char *key)
{
    int i = grip_params_index(stage->impl->params, stage->impl->n_params, key);
    static const grip_param_value none;
    return i >= 0 ? &stage->values[i] : &none;
}

double grip_stage_number(const grip_stage *stage, const char *key) { return value_of(stage, key)->number; }
long long grip_stage_integer(const grip_stage *stage, const char *key) { return value_of(stage, key)->integer; }
int grip_stage_bool(const grip_stage *stage, const char *key) { return value_of(stage, key)->boolean; }
int grip_stage_choice(const grip_stage *stage, const char *key) { return value_of(stage, key)->choice; }

/* A stage that may be used: live, of a live context. `label` names the call in the context-less text. */
static grip_status check_live(const grip_stage *stage, const char *label)
{
    if (!stage)
        return grip_fail(NULL, GRIP_EINVAL, "%s: stage is NULL", label);
    if (stage->live != GRIP_STAGE_LIVE)
        return grip_fail(NULL, GRIP_EINVAL, "%s: stage is not a live grip stage (destroyed?)", label);
    if (!grip_ctx_is_live(stage->ctx))
        return grip_fail(NULL, GRIP_EINVAL, "%s: the stage's context was destroyed before the stage", label);
    return GRIP_OK;
}

grip_status grip_stage_check_call(const grip_stage_impl *impl, grip_stage *stage, void *out, uint32_t out_memory)
{
    if (out)
        *(void **)out = NULL;
    char label[128];
    snprintf(label, sizeof label, "%s.%s: %s", grip_stage_kind_name(impl->kind), impl->name, run_name(impl->kind));
    grip_status s = check_live(stage, label);
    if (s)
        return s;
    if (stage->impl != impl)
        return grip_fail(stage->ctx, GRIP_EINVAL, "%s: the stage is a %s.%s stage", label,
                         grip_stage_kind_name(stage->impl->kind), stage->impl->name);
    return grip_stage_check_run(stage, out, out_memory);
}

grip_status grip_stage_check_run(grip_stage *stage, void *out, uint32_t out_memory)
{
    if (out)
        *(void **)out = NULL;
    grip_status s = check_live(stage, "stage");
    if (s)
        return s;
    const char *kind = grip_stage_kind_name(stage->impl->kind);
    grip_ctx_clear_error(stage->ctx);
    if (!out)
        return grip_fail(stage->ctx, GRIP_EINVAL, "%s: out is NULL", kind);
    grip_ctx_begin_run(stage->ctx, kind);
    if (out_memory != GRIP_MEM_HOST && out_memory != GRIP_MEM_CUDA)
        return grip_fail(stage->ctx, GRIP_EINVAL, "%s: out_memory %u is neither host nor CUDA", kind, out_memory);
    if (out_memory == GRIP_MEM_CUDA && grip_ctx_device_count(stage->ctx) <= 0)
        return grip_fail(stage->ctx, GRIP_ENODEV, "%s: outputs asked for in CUDA memory, but no CUDA device is usable",
                         kind);
    return GRIP_OK;
}

int grip_stage_fallback_begin(grip_stage *stage, grip_status s)
{
    if (!(s == GRIP_ENOMEM || s == GRIP_ECUDA || s == GRIP_ENODEV) || !stage || stage->live != GRIP_STAGE_LIVE ||
        !stage->use_cuda || grip_stage_choice(stage, "device") != GRIP_DEVICE_AUTO ||
        grip_stage_choice(stage, "fallback") != GRIP_FALLBACK_CPU) /* a stage without the key reads none */
        return 0;
    stage->use_cuda = 0;
    grip_ctx_clear_error(stage->ctx);
    return 1;
}

void grip_stage_fallback_end(grip_stage *stage) { stage->use_cuda = 1; }

/* rows x cols elements of dtype in bytes; GRIP_ENOMEM when that overflows a size_t */
static grip_status array_bytes(grip_ctx *ctx, uint32_t dtype, uint64_t rows, uint64_t cols, size_t *bytes)
{
    size_t es = grip_dtype_size(dtype);
    if (es == 0)
        return grip_fail(ctx, GRIP_EINVAL, "array of unknown dtype %u", dtype);
    if (rows && cols && (rows > SIZE_MAX / cols || rows * cols > SIZE_MAX / es))
        return grip_fail(ctx, GRIP_ENOMEM, "array of %llu x %llu elements is too large", (unsigned long long)rows,
                         (unsigned long long)cols);
    *bytes = (size_t)(rows * cols) * es;
    return GRIP_OK;
}

grip_status grip_result_array_alloc(grip_ctx *ctx, grip_array *a, uint32_t memory, uint32_t dtype, uint64_t rows,
                                    uint64_t cols)
{
    if (memory == GRIP_MEM_HOST)
        return grip_array_alloc_host(ctx, a, dtype, rows, cols);
    *a = grip_array_host_view(dtype, rows, cols, NULL);
    size_t bytes = 0;
    void *dev = NULL;
    grip_status s = array_bytes(ctx, dtype, rows, cols, &bytes);
    if (!s)
        s = grip_cuda_alloc(ctx, bytes, &dev);
    if (s)
        return s;
    a->data = dev;
    a->memory = GRIP_MEM_CUDA;
    a->device = ctx->device;
    return GRIP_OK;
}

/* A device array brought to the host; the device copy is freed. */
static grip_status result_array_download(grip_ctx *ctx, grip_array *a, size_t bytes)
{
    void *host = malloc(bytes ? bytes : 1);
    if (!host)
        return grip_fail(ctx, GRIP_ENOMEM, "out of host memory for a result of %zu bytes", bytes);
    grip_status s = grip_cuda_copy_to_host(ctx, host, a->data, bytes);
    if (s) {
        free(host);
        return s;
    }
    grip_cuda_free(a->data);
    a->data = host;
    a->memory = GRIP_MEM_HOST;
    a->device = -1;
    return GRIP_OK;
}

grip_status grip_result_array_place(grip_ctx *ctx, grip_array *a, uint32_t out_memory)
{
    if (a->memory == out_memory)
        return GRIP_OK;
    size_t bytes = 0;
    grip_status s = array_bytes(ctx, a->dtype, a->rows, a->cols, &bytes);
    if (s)
        return s;
    if (out_memory == GRIP_MEM_HOST)
        return result_array_download(ctx, a, bytes);
    void *dev = NULL;
    int device = -1;
    s = grip_cuda_upload(ctx, a->data, bytes, &dev, &device);
    if (s != GRIP_OK)
        return s;
    free(a->data);
    a->data = dev;
    a->memory = GRIP_MEM_CUDA;
    a->device = device;
    return GRIP_OK;
}

void grip_result_array_free(grip_array *a)
{
    if (!a)
        return;
    if (a->memory == GRIP_MEM_CUDA)
        grip_cuda_free(a->data);
    else
        free(a->data);
    a->data = NULL;
    a->rows = a->cols = 0;
}
