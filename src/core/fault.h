/* fault.h -- fault injection for tests: makes the Nth device allocation, kernel launch or device copy fail as the
 * real failure would, so that a test can walk every failure path of a pipeline and check its status, its error text,
 * that nothing leaks and that the context stays usable.
 *
 * Compiled in only when CMake's GRIP_FAULT_INJECTION is ON (it defines GRIP_FAULT_INJECTION=1 and adds
 * src/core/fault.c). Otherwise GRIP_FAULT_HIT(kind) is the constant 0 and the functions below do not exist, so a
 * release build carries no hook. Nothing here is exported from libgrip.so; the tests reach it by linking the
 * library's objects statically (grip_internal), so they arm the same state as the stages they call.
 *
 * The hook points, one per kind, each in one place:
 *   GRIP_FAULT_DEVICE_ALLOC  cudaMalloc/cudaMallocAsync, through GRIP_CUDA_CHECK_ALLOC (cuda/core/check.cuh);
 *                            skipped, it fails with cudaErrorMemoryAllocation: GRIP_ENOMEM
 *   GRIP_FAULT_LAUNCH        the check after a kernel launch (GRIP_CUDA_CHECK_LAUNCHED, GRIP_CUDA_LAUNCH) and
 *                            every CUB algorithm (GRIP_CUDA_CHECK_LAUNCH): cudaErrorLaunchOutOfResources: GRIP_ECUDA
 *   GRIP_FAULT_COPY          cudaMemcpy*, cudaMemset* (GRIP_CUDA_CHECK_COPY, GRIP_CUDA_COPY); skipped, it fails
 *                            with cudaErrorInvalidValue: GRIP_ECUDA
 * tests/cli/fault_hooks.sh checks that no such call in src/ or cuda/ bypasses its hook.
 *
 * State: one per process, not per context. Arm, disarm and read it from one thread, while no stage runs; the
 * hooks count with atomics, so the OpenMP workers of a CPU twin (or another context's thread) may pass them at
 * once, but then which call is "the Nth" depends on their timing: a test that wants a reproducible walk runs one
 * context with threads = 1. */
#ifndef GRIP_CORE_FAULT_H
#define GRIP_CORE_FAULT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum grip_fault_kind {
    GRIP_FAULT_DEVICE_ALLOC = 0,
    GRIP_FAULT_LAUNCH = 1,
    GRIP_FAULT_COPY = 2
} grip_fault_kind;
#define GRIP_FAULT_KIND_COUNT 3

#if defined(GRIP_FAULT_INJECTION) && GRIP_FAULT_INJECTION

/* From now on, the nth call (1-based) of `kind` fails, once; nth = 0 fails none. Every kind's count restarts at 0. */
void grip_fault_arm(grip_fault_kind kind, uint64_t nth);
/* No call fails any more; every count restarts at 0 (so that a clean run counts its fault points). */
void grip_fault_disarm(void);
/* Calls of `kind` that passed a hook since the last arm or disarm (the injected one included). */
uint64_t grip_fault_calls(grip_fault_kind kind);
/* 1 when the armed call was reached and made to fail since the last arm, else 0. */
int grip_fault_fired(void);
/* "device allocation", "kernel launch", "device copy" */
const char *grip_fault_kind_name(grip_fault_kind kind);

/* The hook: counts one call of `kind` and says whether it is the one to fail. */
int grip_fault_hit(grip_fault_kind kind);
#define GRIP_FAULT_HIT(kind) grip_fault_hit(kind)

#else

#define GRIP_FAULT_HIT(kind) 0

#endif

#ifdef __cplusplus
}
#endif
#endif
