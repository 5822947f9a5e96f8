/* ctx.h -- the context behind the opaque grip_ctx: options, device state and the last-error text.
 * Every internal function that can fail takes the context and reports through grip_fail(). */
#ifndef GRIP_CORE_CTX_H
#define GRIP_CORE_CTX_H

#include "plugin.h"

#define GRIP_ERROR_TEXT_MAX 2048

/* The most CPU threads a context may ask for (grip_ctx_options.threads): an OpenMP runtime asked for more threads
 * than it can start ends the process, so larger values are refused up front. */
#define GRIP_CTX_MAX_THREADS 1024

/* What a context has moved between host and device memory, and how its device memory pool grew, since it was
 * created (grip_plugin.ctx_stats reports them with the pool's own figures). Counted where the copies and the
 * allocations are made, in cuda/core/device.cu. */
typedef struct grip_ctx_counters {
    uint64_t h2d_bytes, d2h_bytes;   /* host-to-device and device-to-host bytes copied */
    uint64_t h2d_copies, d2h_copies; /* the copies, each way */
    uint64_t h2d_ns, d2h_ns;         /* host time inside those copies, after the work queued before them */
    uint64_t pool_grows;             /* allocations that made the pool reserve more device memory */
    uint64_t pool_reserved;          /* the pool's reserved bytes as last seen, to tell a growth */
} grip_ctx_counters;

struct grip_ctx {
    grip_ctx_options opts;
    int device_probed;      /* 0 until the first stage that needs CUDA asks */
    int device_count;       /* usable CUDA devices, valid once probed */
    int device;             /* the CUDA ordinal in use, -1 if none */
    void *pool;             /* the context's own CUDA memory pool (a cudaMemPool_t), made with `device`; NULL
                               before the first device use; destroyed by grip_cuda_ctx_release */
    grip_ctx_counters counters;
    const char *stage;      /* the kind of the stage whose run started last ("group"), NULL before any: named by
                               grip_fail in front of a message that names no stage (a CUDA call's) */
    char last_error[GRIP_ERROR_TEXT_MAX];
    uint32_t live;          /* GRIP_CTX_LIVE until freed: see grip_ctx_is_live */
};

/* Creates a context with default options when opts is NULL. GRIP_EINVAL when out is NULL, when opts->struct_size is
 * below the size of grip_ctx_options, when threads exceeds GRIP_CTX_MAX_THREADS (or the OpenMP runtime's thread
 * limit) or when device_ordinal is below -1; the text is then grip_ctx_error_text(NULL). The caller frees the
 * context with grip_ctx_free(). */
grip_status grip_ctx_new(const grip_ctx_options *opts, grip_ctx **out);
/* Frees ctx; NULL, and (best effort) a context already freed, are left alone. */
void grip_ctx_free(grip_ctx *ctx);

/* A worker context, for a call that runs one stage on several threads at once (stages/describe_many.h): *worker
 * becomes a copy of parent sharing its device and memory pool (the parent made them: grip_cuda_ctx_prepare), with
 * `threads` CPU threads, counters from zero and no error text. It owns nothing: it is dropped without a free, after
 * grip_ctx_worker_join adds its counters to the parent's. The parent is not used while its workers are. */
void grip_ctx_worker_init(const grip_ctx *parent, uint32_t threads, grip_ctx *worker);
/* Adds the worker's copies, bytes and times to the parent's counters, and its pool growths: a growth made by one
 * worker while another ran may be counted by both, but a run that grew nothing counts none. */
void grip_ctx_worker_join(grip_ctx *parent, const grip_ctx *worker);

/* Clears an object's liveness cookie right before the object is freed: through a volatile store, since a plain
 * store to memory about to be freed is dead code to the compiler, which drops it. */
static inline void grip_cookie_clear(uint32_t *cookie)
{
    *(volatile uint32_t *)cookie = 0;
}

/* Whether ctx is a context of this plugin that has not been freed. Best effort: a freed context is told apart only
 * while its memory has not been handed out again (reading it is undefined behaviour, which a sanitizer reports). */
int grip_ctx_is_live(const grip_ctx *ctx);

/* The last-error text of ctx; for a NULL ctx, the calling thread's text of the last failure that had no context to
 * report to (a NULL or destroyed context or stage, ctx_create). Never NULL. */
const char *grip_ctx_error_text(const grip_ctx *ctx);

/* Records `status` and a formatted message (format string and arguments) as the context's last error and returns status, so that
 * callers can write `return grip_fail(ctx, GRIP_EINVAL, "descriptor.radius: must be > 0");`.
 * A NULL ctx is allowed: the message becomes the calling thread's context-less text (grip_ctx_error_text(NULL)). */
grip_status grip_fail(grip_ctx *ctx, grip_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(__printf__, 3, 4)))
#endif
    ;

/* Appends "; <message>" to the last error (for reporting several problems at once); a NULL ctx as grip_fail. */
void grip_fail_append(grip_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(__printf__, 2, 3)))
#endif
    ;

void grip_ctx_clear_error(grip_ctx *ctx);
/* A stage's run starts: clears the last error and records the stage's kind name (static text), so that every
 * failure of the run names the stage, however deep in the algorithms or kernels it is reported. */
void grip_ctx_begin_run(grip_ctx *ctx, const char *stage);
const char *grip_status_str(grip_status status);

/* CPU threads the CPU twins use: the context's `threads` option, else what OpenMP offers (1 without OpenMP). */
int grip_ctx_threads(const grip_ctx *ctx);

/* Number of usable CUDA devices; probes once, lazily. 0 on a CPU-only build. */
int grip_ctx_device_count(grip_ctx *ctx);

#endif
