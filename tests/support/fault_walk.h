/* fault_walk.h -- the fault-injection walk that test_faults (CPU) and test_faults_cuda share; built only with
 * GRIP_FAULT_INJECTION.
 *
 * A whole pipeline (descriptor -> index -> match -> group -> verify) on a small generated scene, driven through the
 * plugin table of the statically linked library, so that the test arms the very hooks its stages pass. The walk,
 * for one fault kind: a clean run counts the kind's fault points; then for n = 1, 2, ... the nth point fails: the
 * run must stop at that stage with the expected status and a last error naming the stage, leave no result behind,
 * and a clean rerun on the same context and stages must give the clean run's results bit for bit (or, where a
 * fallback absorbs the fault, such as a search in smaller chunks, the run itself must give them); until n passes
 * the last point, when the armed fault no longer fires and the run is clean. Host memory is checked by running the
 * tests under LeakSanitizer (scripts/ci-sanitize.sh); a device-memory probe, when given, is called after every
 * faulted run and must find what it found after the clean one. */
#ifndef GRIP_TEST_FAULT_WALK_H
#define GRIP_TEST_FAULT_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "plugin.h"
#include "io/cloud_io.h"
#include "core/fault.h"

/* What a probe measures of the device (e.g. bytes in use) for a context, compared for equality. */
typedef struct fault_device_usage {
    uint64_t pool_used;   /* bytes the context's pool has handed out and not had back */
    uint64_t device_used; /* total - free, after the pool was trimmed */
} fault_device_usage;
typedef void (*fault_device_probe)(grip_ctx *ctx, fault_device_usage *out);

typedef struct fault_pipeline {
    const grip_plugin *plugin;
    grip_ctx *ctx;
    const grip_stage_impl *impl[GRIP_STAGE_KIND_COUNT];
    grip_stage *stage[GRIP_STAGE_KIND_COUNT];
    uint32_t features_memory; /* where the descriptor stage puts its outputs (GRIP_MEM_HOST or GRIP_MEM_CUDA) */
    /* the models (complete surfaces) and the scene cloud (fault_walk.c says what they are) */
    void *scene;              /* owned */
    const host_cloud *models;
    uint32_t n_models;
    const host_cloud *scene_cloud;
} fault_pipeline;

/* Generates the scene and creates a context (threads, device ordinal -1) and the five stages from settings
 * ("stage.key=value", NULL-terminated; "stage.impl=name" picks the implementation). Fails the test on error. */
void fault_pipeline_open(fault_pipeline *p, const char *const *settings, uint32_t threads, uint32_t features_memory);
void fault_pipeline_close(fault_pipeline *p);

/* A grip_cloud view of c's arrays (borrowed: c outlives it). */
grip_cloud fault_cloud_of(const host_cloud *c);

/* What one walk saw. */
typedef struct fault_walk_report {
    uint64_t points;                             /* the kind's fault points in a clean run */
    uint64_t by_stage[GRIP_STAGE_KIND_COUNT];    /* of those, the ones each stage's run reached */
    uint64_t absorbed;                           /* faults a fallback absorbed: the run succeeded, results unchanged */
} fault_walk_report;

/* Walks every fault point of `kind` (see the top); every faulted run must return `want`. probe may be NULL. */
void fault_walk(fault_pipeline *p, grip_fault_kind kind, grip_status want, fault_device_probe probe,
                fault_walk_report *report);

/* Prints "<label>: <kind>: N fault points (descriptor a, index b, ...)" to stderr. */
void fault_walk_print(const char *label, grip_fault_kind kind, const fault_walk_report *r);

#endif
