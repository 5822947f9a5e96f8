/* stage.h -- what every stage implementation shares: the instance behind the opaque grip_stage, creation from
 * key/value strings against the implementation's table, and the memory-space plumbing of results. */
#ifndef GRIP_STAGES_STAGE_H
#define GRIP_STAGES_STAGE_H

#include "core/array.h"
#include "core/params.h"

/* The largest parameter table of any stage; create() resolves into a fixed array of this size. */
#define GRIP_STAGE_MAX_PARAMS 32

struct grip_stage {
    const grip_stage_impl *impl;
    grip_ctx *ctx;                                 /* borrowed: outlives the stage */
    int use_cuda;                                  /* decided at create() from the `device` key; 0 while a call
                                                      falls back to the CPU (grip_stage_fallback_begin) */
    grip_param_value values[GRIP_STAGE_MAX_PARAMS]; /* resolved parameters, in table order */
    uint32_t live;                                 /* set by create, cleared by destroy (see grip_stage_check_call) */
    void *state;                                   /* what the implementation keeps across calls, or NULL; owned
                                                      by the stage: destroy frees it with free_state */
    void (*free_state)(void *state);
};

/* Shared create(): *out is NULL first; a NULL or destroyed ctx, a NULL out and n_kv keys without kv fail with
 * GRIP_EINVAL; then kv is resolved against impl's table (every problem reported at once, GRIP_ECONFIG) and the
 * device key. The stage is freed with grip_stage_destroy(). */
grip_status grip_stage_create(const grip_stage_impl *impl, grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv,
                              grip_stage **out);
/* Frees the stage and its state (free_state); NULL, and (best effort) a stage already destroyed, are left alone. */
void grip_stage_destroy(grip_stage *stage);

/* Typed access to a resolved parameter by key (the key must be in the stage's table). */
double grip_stage_number(const grip_stage *stage, const char *key);
long long grip_stage_integer(const grip_stage *stage, const char *key);
int grip_stage_bool(const grip_stage *stage, const char *key);
int grip_stage_choice(const grip_stage *stage, const char *key);

/* "descriptor", "index", ... */
const char *grip_stage_kind_name(uint32_t kind);

/* What every run function (describe, build, match, group, verify) checks first, before it reads anything else:
 * sets *out to NULL (when out is not NULL), then refuses with GRIP_EINVAL a NULL stage, a stage that is not live (it
 * was destroyed, or is no stage of this plugin), one whose context was destroyed, and a stage of another
 * implementation than impl (whose function was called); then grip_stage_check_run. A failure without a usable
 * stage goes to the calling thread's context-less text (grip_ctx_error_text(NULL)), naming impl.
 * A stage is told to be destroyed only while its memory has not been reused: best effort. */
grip_status grip_stage_check_call(const grip_stage_impl *impl, grip_stage *stage, void *out, uint32_t out_memory);

/* The checks of grip_stage_check_call that do not need the implementation: *out set to NULL, a live stage of a live
 * context, a non-NULL out and an out_memory the build can deliver (GRIP_EINVAL, GRIP_ENODEV). Clears the context's
 * last error. */
grip_status grip_stage_check_run(grip_stage *stage, void *out, uint32_t out_memory);

/* The `fallback = cpu` rule (core/params.h, GRIP_PARAM_FALLBACK), written once for every stage with a CUDA
 * backend: after a run function's call returned s, says whether to run the same call again on the CPU twin. Yes
 * (1) when the stage has fallback = cpu, its `device = auto` put it on CUDA, and s is a device failure
 * (GRIP_ENOMEM, GRIP_ECUDA, GRIP_ENODEV); the stage then runs on the CPU until grip_stage_fallback_end, which
 * returns it to CUDA for the next call. A call that failed has released what it made, so the context and its
 * device stay as they were; the second call starts with a clear last error (a failure there reports its own). A
 * result object made on the CPU lives in host memory and is placed in out_memory as any result is; an index built
 * on the CPU also searches there. Use GRIP_STAGE_CALL, not these two, where the call is one expression. */
int grip_stage_fallback_begin(grip_stage *stage, grip_status s);
void grip_stage_fallback_end(grip_stage *stage);
/* s = call; then the same call on the CPU twin where grip_stage_fallback_begin says so. */
#define GRIP_STAGE_CALL(stage, s, call)                                                                        \
    do {                                                                                                       \
        (s) = (call);                                                                                          \
        if (grip_stage_fallback_begin((stage), (s))) {                                                         \
            (s) = (call);                                                                                      \
            grip_stage_fallback_end(stage);                                                                    \
        }                                                                                                      \
    } while (0)

/* A result array of rows x cols elements in `memory`: zeroed host memory (grip_array_alloc_host), or uninitialised
 * memory of the context's device (grip_cuda_alloc; GRIP_EUNSUPPORTED on a CPU-only build). Released with
 * grip_result_array_free, also after a failure (data is then NULL). */
grip_status grip_result_array_alloc(grip_ctx *ctx, grip_array *a, uint32_t memory, uint32_t dtype, uint64_t rows,
                                    uint64_t cols);
/* Moves a result array (host, or device memory from grip_cuda_alloc/grip_cuda_upload) into the requested memory
 * space: a no-op when it already lives there; otherwise the data is copied (uploaded to the context's device, or
 * downloaded to the host) and the old copy freed. On failure the array is left as it was. */
grip_status grip_result_array_place(grip_ctx *ctx, grip_array *a, uint32_t out_memory);
/* Frees a result array's data wherever it lives and zeroes its shape; NULL is allowed. */
void grip_result_array_free(grip_array *a);

#endif
