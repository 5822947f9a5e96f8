/* describe_many.h -- grip_stage_impl.describe_many (ABI 1.4), written once for every descriptor stage: n clouds in
 * one call, each described by the stage's own describe(), so that every result is the one describe() gives.
 *
 * On the CPU the clouds run one after another, each with all the context's threads. On a CUDA device up to
 * `clouds_in_flight` clouds run at once (no more than the context's CPU threads), each on a worker of its own
 * (stages/stage_workers.h: a worker context and stream a thread): a describe() of a model view is mostly waits on
 * read-backs, which another cloud's kernels fill. Every result is complete when the call returns, as describe()'s
 * are.
 *
 * A describe() may keep no state across calls in the stage (none of grip's does: stage->state is unused by every
 * descriptor), since the workers' stage copies share it. */
#ifndef GRIP_STAGES_DESCRIBE_MANY_H
#define GRIP_STAGES_DESCRIBE_MANY_H

#include "stages/stage.h"

/* The `clouds_in_flight` key of every descriptor stage: how many clouds a describe_many call describes at once on
 * a CUDA device. It changes when they are computed, not what: a model database does not record it (as `device` and
 * `fallback`). One exception, as with `device`: under `fallback = cpu`, a cloud that finds the device full because
 * others are in flight is described by the CPU twin (normals within src/descriptor/normals_cuda.h's tolerance). */
#define GRIP_PARAM_CLOUDS_IN_FLIGHT                                                                              \
    {                                                                                                            \
        sizeof(grip_param_info), GRIP_PARAM_INT, "clouds_in_flight", "4", 1, 64, NULL,                           \
            "describe_many on a CUDA device: clouds described at once, each on a CPU thread (of the context's) " \
            "and CUDA stream of its own (1: one after another); the CPU twin describes them one after another"   \
    }

/* grip_stage_impl.describe_many of a descriptor stage whose describe() is stage->impl->describe (plugin.h says
 * what it does). Checks, in order: a live descriptor stage of a live context, out not NULL, out_memory; then
 * clouds and roles not NULL when n_clouds > 0 (GRIP_EINVAL). Each cloud's own checks are describe()'s. */
grip_status grip_describe_many(grip_stage *stage, const grip_cloud *const *clouds, const uint32_t *roles,
                               const grip_array *const *keypoints, uint32_t n_clouds, uint32_t out_memory,
                               grip_features **out, uint32_t *failed);

#endif
