/* fault_walk.h -- the fault-injection walk that test_faults (CPU) and test_faults_cuda share; built only with
 * GRIP_FAULT_INJECTION.
 *
 * A whole pipeline (descriptor -> index -> match -> group -> verify) on a small generated scene, driven through the
 * plugin table of the statically linked library, so that the test arms the very hooks its stages pass; the models
 * are described in one describe_many call, as grip-host describes them. The walk,
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


/* What one run of the five stages made (fault_pipeline_run); every object is released by fault_run_free. */
typedef struct fault_run {
    uint32_t n_models;
    grip_cloud *clouds;       /* n_models model clouds, then the scene */
    grip_features **features; /* likewise */
    grip_view *views;         /* likewise: views[n_models] is the scene's */
    float *reference;         /* the models' descriptors, concatenated (several models, host memory) */
    uint32_t *model_ids;
    grip_index *index;
    grip_matches *matches;
    grip_hypotheses *hypotheses;
    grip_verdicts *verdicts;
    int failed;                                  /* the stage kind whose call failed, -1 if none */
    uint64_t calls_after[GRIP_STAGE_KIND_COUNT]; /* the walked kind's fault points passed when each stage returned */
} fault_run;

/* Runs p's five stages on its scene into *out (the models' descriptors joined into one index); stops at the first
 * failure (out->failed names its stage). Release *out with fault_run_free, also after a failure. */
grip_status fault_pipeline_run(fault_pipeline *p, fault_run *out);
void fault_run_free(fault_run *r);

/* A result as bytes, to compare two results for equality (host memory: malloc'd bytes, fault_digest_free). The
 * fault_digest_* functions append to d (zeroed first by the caller); the counts summarise, for the log. */
typedef struct fault_digest {
    unsigned char *bytes;
    size_t n, cap;
    uint64_t keypoints, matches, hypotheses, accepted;
} fault_digest;
void fault_digest_hypotheses(fault_digest *d, const grip_hypotheses *h);
void fault_digest_verdicts(fault_digest *d, const grip_verdicts *v);
int fault_digest_equal(const fault_digest *a, const fault_digest *b);
void fault_digest_free(fault_digest *d);

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
