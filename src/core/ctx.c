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

/* Set in a live context, cleared when it is freed: a context used after grip_ctx_free is refused while its memory
 * has not been reused. */
#define GRIP_CTX_LIVE 0x78744367u

/* The text of a failure that had no context to keep it (ctx_last_error(NULL) reads it): one per thread, since
 * distinct threads may fail at once. */
static _Thread_local char orphan_error[GRIP_ERROR_TEXT_MAX];

/* The options in opts, checked: a struct_size below the whole struct is refused, as the ABI first published it with
 * every field it has. */
static grip_status read_options(const grip_ctx_options *opts, grip_ctx_options *o)
{
    if (opts->struct_size < sizeof *opts)
        return grip_fail(NULL, GRIP_EINVAL, "ctx_create: options.struct_size %u is below the %zu bytes of grip_ctx_options",
                         opts->struct_size, sizeof *opts);
    if (opts->device_ordinal < -1)
        return grip_fail(NULL, GRIP_EINVAL, "ctx_create: options.device_ordinal %d is neither a CUDA ordinal nor -1",
                         opts->device_ordinal);
    unsigned long long limit = GRIP_CTX_MAX_THREADS;
#ifdef _OPENMP
    if ((unsigned long long)omp_get_thread_limit() < limit)
        limit = (unsigned long long)omp_get_thread_limit();
#endif
    if (opts->threads > limit)
        return grip_fail(NULL, GRIP_EINVAL, "ctx_create: options.threads %u exceeds the maximum of %llu", opts->threads,
                         limit);
    o->device_ordinal = opts->device_ordinal;
    o->threads = opts->threads;
    return GRIP_OK;
}

grip_status grip_ctx_new(const grip_ctx_options *opts, grip_ctx **out)
{
    orphan_error[0] = '\0';
    if (!out)
        return grip_fail(NULL, GRIP_EINVAL, "ctx_create: out is NULL");
    *out = NULL;
    grip_ctx_options o = {sizeof o, -1, 0};
    if (opts) {
        grip_status s = read_options(opts, &o);
        if (s)
            return s;
    }
    grip_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return grip_fail(NULL, GRIP_ENOMEM, "ctx_create: out of memory");
    ctx->opts = o;
    ctx->device = -1;
    ctx->live = GRIP_CTX_LIVE;
    *out = ctx;
    return GRIP_OK;
}

void grip_ctx_free(grip_ctx *ctx)
{
    if (!grip_ctx_is_live(ctx))
        return;
    grip_cookie_clear(&ctx->live);
    grip_cuda_ctx_release(ctx);
    free(ctx);
}

void grip_ctx_worker_init(const grip_ctx *parent, uint32_t threads, grip_ctx *worker)
{
    *worker = *parent;
    worker->opts.threads = threads;
    worker->last_error[0] = '\0';
    const uint64_t reserved = parent->counters.pool_reserved; /* a worker's growth is against what the pool held */
    memset(&worker->counters, 0, sizeof worker->counters);
    worker->counters.pool_reserved = reserved;
}

void grip_ctx_worker_join(grip_ctx *parent, const grip_ctx *worker)
{
    grip_ctx_counters *p = &parent->counters;
    const grip_ctx_counters *w = &worker->counters;
    p->h2d_bytes += w->h2d_bytes;
    p->d2h_bytes += w->d2h_bytes;
    p->h2d_copies += w->h2d_copies;
    p->d2h_copies += w->d2h_copies;
    p->h2d_ns += w->h2d_ns;
    p->d2h_ns += w->d2h_ns;
    p->pool_grows += w->pool_grows;
    if (w->pool_reserved > p->pool_reserved)
        p->pool_reserved = w->pool_reserved;
}

int grip_ctx_is_live(const grip_ctx *ctx)
{
    return ctx && ctx->live == GRIP_CTX_LIVE;
}

/* Where a failure of ctx is written: its own text, or the thread's context-less one. */
static char *error_buffer(grip_ctx *ctx)
{
    return ctx ? ctx->last_error : orphan_error;
}

const char *grip_ctx_error_text(const grip_ctx *ctx)
{
    return error_buffer((grip_ctx *)ctx);
}

static void vformat(char *text, size_t at, const char *fmt, va_list ap)
{
    if (at >= GRIP_ERROR_TEXT_MAX)
        return;
    vsnprintf(text + at, GRIP_ERROR_TEXT_MAX - at, fmt, ap);
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
    va_list ap;
    va_start(ap, fmt);
    vformat(error_buffer(ctx), 0, fmt, ap);
    va_end(ap);
    /* "cudaMemcpy failed at ..." from a group run reads "group: cudaMemcpy failed at ..."; a context-less text has
       no stage */
    if (ctx && ctx->stage && !names_a_stage(ctx->last_error)) {
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
    char *text = error_buffer(ctx);
    size_t at = strlen(text);
    if (at > 0 && at + 2 < GRIP_ERROR_TEXT_MAX) {
        memcpy(text + at, "; ", 3);
        at += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vformat(text, at, fmt, ap);
    va_end(ap);
}

void grip_ctx_clear_error(grip_ctx *ctx)
{
    error_buffer(ctx)[0] = '\0';
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
    if (!grip_ctx_is_live(ctx))
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
