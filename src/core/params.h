/* params.h -- resolving a stage's key/value configuration against its parameter table, inside the plugin.
 * Unknown keys, malformed values and out-of-range values are all reported at once, as
 * "<stage>.<key>: <reason>", joined by "; ", with GRIP_ECONFIG. */
#ifndef GRIP_CORE_PARAMS_H
#define GRIP_CORE_PARAMS_H

#include "common/param_value.h"
#include "core/ctx.h"

/* Fills values[i] for table entry i: from kv when given, else from the entry's default. */
grip_status grip_params_resolve(grip_ctx *ctx, const char *stage, const grip_param_info *table, size_t n,
                                const grip_kv *kv, size_t n_kv, grip_param_value *values);

/* Index of `key` in the table; -1 if absent (a programming error in the stage). */
int grip_params_index(const grip_param_info *table, size_t n, const char *key);

/* The common `device` parameter every stage has, and how it resolves on this machine. */
typedef enum grip_device_choice { GRIP_DEVICE_AUTO = 0, GRIP_DEVICE_CUDA = 1, GRIP_DEVICE_CPU = 2 } grip_device_choice;
#define GRIP_PARAM_DEVICE                                                                                      \
    { sizeof(grip_param_info), GRIP_PARAM_ENUM, "device", "auto", 0, 0, "auto|cuda|cpu",                      \
      "where the stage runs: auto picks CUDA when a device exists, else the CPU" }

/* The `fallback` key of the stages that have a CUDA backend: what a call does when `device = auto` put the stage on
 * CUDA and the call fails there with a device error (stages/stage.h, grip_stage_fallback_begin). */
typedef enum grip_fallback_choice { GRIP_FALLBACK_NONE = 0, GRIP_FALLBACK_CPU = 1 } grip_fallback_choice;
#define GRIP_PARAM_FALLBACK                                                                                    \
    { sizeof(grip_param_info), GRIP_PARAM_ENUM, "fallback", "none", 0, 0, "none|cpu",                         \
      "when device = auto put the stage on CUDA and a call fails there (device memory, a launch, a copy): "    \
      "cpu runs that call again on the CPU twin, none returns the failure" }

/* Resolves auto/cuda/cpu for a stage that has a CUDA implementation when `has_cuda`. Returns GRIP_ECONFIG
 * (with a clear text naming the stage) for `cuda` when no device is usable. *use_cuda gets the decision. */
grip_status grip_device_resolve(grip_ctx *ctx, const char *stage, int choice, int has_cuda, int *use_cuda);

#endif
