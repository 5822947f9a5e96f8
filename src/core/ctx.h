/* ctx.h -- the context behind the opaque grip_ctx: options, device state and the last-error text.
 * Every internal function that can fail takes the context and reports through grip_fail(). */
#ifndef GRIP_CORE_CTX_H
#define GRIP_CORE_CTX_H

#include "plugin.h"

#define GRIP_ERROR_TEXT_MAX 2048

struct grip_ctx {
    grip_ctx_options opts;
    int device_probed;      /* 0 until the first stage that needs CUDA asks */
    int device_count;       /* usable CUDA devices, valid once probed */
    int device;             /* the CUDA ordinal in use, -1 if none */
    const char *stage;      /* the kind of the stage whose run started last ("group"), NULL before any: named by
                               grip_fail in front of a message that names no stage (a CUDA call's, rigid_fit's) */
    char last_error[GRIP_ERROR_TEXT_MAX];
};

/* Creates a context with default options when opts is NULL. The caller frees it with grip_ctx_free(). */
grip_status grip_ctx_new(const grip_ctx_options *opts, grip_ctx **out);
void grip_ctx_free(grip_ctx *ctx);

/* Records `status` and a formatted message (format string and arguments) as the context's last error and returns
 * status, so that callers can write `return grip_fail(ctx, GRIP_EINVAL, "descriptor.radius: must be > 0");`.
 * A NULL ctx is allowed (the message is dropped). */
grip_status grip_fail(grip_ctx *ctx, grip_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(__printf__, 3, 4)))
#endif
    ;

/* Appends "; <message>" to the last error (for reporting several problems at once). */
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
