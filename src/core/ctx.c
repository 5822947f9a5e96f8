/* ctx.c -- contexts, status texts and the last-error text. */
#include "core/ctx.h"
#include "core/cuda_bridge.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

grip_status grip_ctx_new(const grip_ctx_options *opts, grip_ctx **out)
{
    if (!out)
        return GRIP_EINVAL;
    *out = NULL;
    grip_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return GRIP_ENOMEM;
    ctx->opts.struct_size = sizeof ctx->opts;
    ctx->opts.device_ordinal = -1;
    ctx->opts.threads = 0;
    if (opts) {
        /* read only the fields the caller's struct has (ABI growth rule) */
        size_t n = opts->struct_size < sizeof ctx->opts ? opts->struct_size : sizeof ctx->opts;
        if (n >= offsetof(grip_ctx_options, device_ordinal) + sizeof opts->device_ordinal)
            ctx->opts.device_ordinal = opts->device_ordinal;
        if (n >= offsetof(grip_ctx_options, threads) + sizeof opts->threads)
            ctx->opts.threads = opts->threads;
    }
    ctx->device = -1;
    *out = ctx;
    return GRIP_OK;
}

void grip_ctx_free(grip_ctx *ctx)
{
    if (!ctx)
        return;
    grip_cuda_ctx_release(ctx);
    free(ctx);
}

static void vformat(grip_ctx *ctx, size_t at, const char *fmt, va_list ap)
{
    if (at >= sizeof ctx->last_error)
        return;
    vsnprintf(ctx->last_error + at, sizeof ctx->last_error - at, fmt, ap);
}

/* The text starts with a stage kind's name ("verify.max_rmse: ...", "index: ..."). */
static int names_a_stage(const char *text)
{
    static const char *const kinds[] = {"descriptor", "index", "match", "group", "verify"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t n = strlen(kinds[i]);
        if (strncmp(text, kinds[i], n) == 0 && (text[n] == '.' || text[n] == ':' || text[n] == ' '))
            return 1;
    }
    return 0;
}

grip_status grip_fail(grip_ctx *ctx, grip_status status, const char *fmt, ...)
{
    if (!ctx)
        return status;
    va_list ap;
    va_start(ap, fmt);
    vformat(ctx, 0, fmt, ap);
    va_end(ap);
    if (ctx->stage &&
        !names_a_stage(ctx->last_error)) { /* "rigid_fit: ..." from a group run: "group: rigid_fit: ..." */
        size_t prefix = strlen(ctx->stage) + 2, len = strlen(ctx->last_error);
        if (prefix + len >= sizeof ctx->last_error)
            len = sizeof ctx->last_error - prefix - 1;
        memmove(ctx->last_error + prefix, ctx->last_error, len);
        ctx->last_error[prefix + len] = '\0';
        memcpy(ctx->last_error, ctx->stage, prefix - 2);
        memcpy(ctx->last_error + prefix - 2, ": ", 2);
    }
    return status;
}

void grip_fail_append(grip_ctx *ctx, const char *fmt, ...)
{
    if (!ctx)
        return;
    size_t at = strlen(ctx->last_error);
    if (at > 0 && at + 2 < sizeof ctx->last_error) {
        memcpy(ctx->last_error + at, "; ", 3);
        at += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vformat(ctx, at, fmt, ap);
    va_end(ap);
}

void grip_ctx_clear_error(grip_ctx *ctx)
{
    if (ctx)
        ctx->last_error[0] = '\0';
}

void grip_ctx_begin_run(grip_ctx *ctx, const char *stage)
{
    if (!ctx)
        return;
    ctx->last_error[0] = '\0';
    ctx->stage = stage;
}

const char *grip_status_str(grip_status status)
{
    switch (status) {
    case GRIP_OK: return "ok";
    case GRIP_EINVAL: return "invalid argument";
    case GRIP_ENOMEM: return "out of memory";
    case GRIP_ECONFIG: return "configuration error";
    case GRIP_EUNSUPPORTED: return "unsupported";
    case GRIP_ENODEV: return "no CUDA device";
    case GRIP_ECUDA: return "CUDA error";
    case GRIP_ELAPACK: return "LAPACK error";
    case GRIP_EIO: return "I/O error";
    case GRIP_EINTERNAL: return "internal error";
    }
    return "unknown status";
}

int grip_ctx_device_count(grip_ctx *ctx)
{
    if (!ctx)
        return 0;
    if (!ctx->device_probed) {
        ctx->device_count = grip_cuda_device_count();
        ctx->device_probed = 1;
    }
    return ctx->device_count;
}

int grip_ctx_threads(const grip_ctx *ctx)
{
#ifdef _OPENMP
    return ctx && ctx->opts.threads ? (int)ctx->opts.threads : omp_get_max_threads();
#else
    (void)ctx;
    return 1;
#endif
}
