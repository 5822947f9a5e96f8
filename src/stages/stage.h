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
    int use_cuda;                                  /* decided at create() from the `device` key */
    grip_param_value values[GRIP_STAGE_MAX_PARAMS]; /* resolved parameters, in table order */
};

/* Shared create(): resolves kv against impl's table (every problem reported at once) and the device key.
 * The stage is freed with grip_stage_destroy(). */
grip_status grip_stage_create(const grip_stage_impl *impl, grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv,
                              grip_stage **out);
void grip_stage_destroy(grip_stage *stage);

/* Typed access to a resolved parameter by key (the key must be in the stage's table). */
double grip_stage_number(const grip_stage *stage, const char *key);
long long grip_stage_integer(const grip_stage *stage, const char *key);
int grip_stage_bool(const grip_stage *stage, const char *key);
int grip_stage_choice(const grip_stage *stage, const char *key);

/* "descriptor", "index", ... */
const char *grip_stage_kind_name(uint32_t kind);

/* Validates the common arguments of a run call: a non-NULL stage and out pointer, and an out_memory the build
 * can deliver. Sets *out to NULL. */
grip_status grip_stage_check_run(grip_stage *stage, void *out, uint32_t out_memory);

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
