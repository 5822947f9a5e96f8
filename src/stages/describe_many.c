/* describe_many.c -- see describe_many.h. */
#include "stages/describe_many.h"
#include "core/cuda_bridge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static const grip_array *keypoints_of(const grip_array *const *keypoints, uint32_t i)
{
    return keypoints ? keypoints[i] : NULL;
}

/* The call's last error for cloud i's failure: "descriptor: clouds[i]: " and what describe() said, less its own
 * "descriptor: ". text may be the context's own buffer, which grip_fail overwrites: it is copied first. */
static grip_status report_cloud(grip_ctx *ctx, grip_status s, uint32_t i, const char *text)
{
    char said[GRIP_ERROR_TEXT_MAX];
    snprintf(said, sizeof said, "%s", strncmp(text, "descriptor: ", 12) == 0 ? text + 12 : text);
    return grip_fail(ctx, s, "descriptor: clouds[%u]: %s", i, said);
}

/* Every cloud in turn, on the calling thread: stops at the first failure (its index in *failed). */
static grip_status describe_in_turn(grip_stage *st, const grip_cloud *const *clouds, const uint32_t *roles,
                                    const grip_array *const *keypoints, uint32_t n, uint32_t out_memory,
                                    grip_features **out, uint32_t *failed)
{
    for (uint32_t i = 0; i < n; i++) {
        grip_status s = st->impl->describe(st, clouds[i], roles[i], keypoints_of(keypoints, i), out_memory, &out[i]);
        if (s) {
            *failed = i;
            return report_cloud(st->ctx, s, i, grip_ctx_error_text(st->ctx));
        }
    }
    return GRIP_OK;
}

/* One thread of describe_at_once: a worker context and the stage bound to it. */
typedef struct describe_worker {
    grip_ctx ctx;
    grip_stage stage;
} describe_worker;

/* describe() of cloud i on worker w, on the context's device (made current on this thread first: the cloud's
 * download comes before any allocation would make it so), its results complete when it returns: describe() may
 * leave device-to-device copies queued on the worker's stream, which the caller's stream is not ordered after. Its
 * error text, when it fails, into *text (malloc'd; NULL when out of memory). */
static grip_status describe_on_worker(describe_worker *w, const grip_cloud *cloud, uint32_t role,
                                      const grip_array *keypoints, uint32_t out_memory, grip_features **out,
                                      char **text)
{
    grip_status s = grip_cuda_ctx_prepare(&w->ctx);
    if (!s)
        s = w->stage.impl->describe(&w->stage, cloud, role, keypoints, out_memory, out);
    if (!s)
        s = grip_cuda_sync(&w->ctx);
    if (s) {
        const char *said = grip_ctx_error_text(&w->ctx);
        *text = malloc(strlen(said) + 1);
        if (*text)
            memcpy(*text, said, strlen(said) + 1);
    }
    return s;
}

/* The clouds on `in_flight` OpenMP threads (each its worker), in order of index as threads come free. Every cloud
 * is described, also after a failure; the lowest failed index is reported. */
static grip_status describe_at_once(grip_stage *st, const grip_cloud *const *clouds, const uint32_t *roles,
                                    const grip_array *const *keypoints, uint32_t n, uint32_t out_memory,
                                    uint32_t in_flight, grip_features **out, uint32_t *failed)
{
    grip_ctx *ctx = st->ctx;
    describe_worker *workers = calloc(in_flight, sizeof *workers);
    grip_status *status = calloc(n, sizeof *status);
    char **texts = calloc(n, sizeof *texts);
    if (!workers || !status || !texts) {
        free(workers);
        free(status);
        free(texts);
        return grip_fail(ctx, GRIP_ENOMEM, "descriptor: out of memory for %u workers", in_flight);
    }
    const int threads = grip_ctx_threads(ctx) / (int)in_flight;
    for (uint32_t t = 0; t < in_flight; t++) {
        grip_ctx_worker_init(ctx, threads > 1 ? (uint32_t)threads : 1u, &workers[t].ctx);
        workers[t].stage = *st;
        workers[t].stage.ctx = &workers[t].ctx;
    }
#pragma omp parallel for num_threads(in_flight) schedule(dynamic, 1)
    for (uint32_t i = 0; i < n; i++) {
#ifdef _OPENMP
        describe_worker *w = &workers[omp_get_thread_num()];
#else
        describe_worker *w = &workers[0];
#endif
        status[i] = describe_on_worker(w, clouds[i], roles[i], keypoints_of(keypoints, i), out_memory, &out[i],
                                       &texts[i]);
    }
    for (uint32_t t = 0; t < in_flight; t++)
        grip_ctx_worker_join(ctx, &workers[t].ctx);
    grip_status s = GRIP_OK;
    for (uint32_t i = 0; i < n && !s; i++)
        if (status[i]) {
            *failed = i;
            s = report_cloud(ctx, status[i], i, texts[i] ? texts[i] : grip_status_str(status[i]));
        }
    for (uint32_t i = 0; i < n; i++)
        free(texts[i]);
    free(texts);
    free(status);
    free(workers);
    return s;
}

grip_status grip_describe_many(grip_stage *stage, const grip_cloud *const *clouds, const uint32_t *roles,
                               const grip_array *const *keypoints, uint32_t n_clouds, uint32_t out_memory,
                               grip_features **out, uint32_t *failed)
{
    uint32_t unused;
    if (!failed)
        failed = &unused;
    *failed = n_clouds;
    for (uint32_t i = 0; out && i < n_clouds; i++) /* every entry NULL after any failure, the first checks' too */
        out[i] = NULL;
    grip_status s = grip_stage_check_run(stage, out, out_memory);
    if (s)
        return s;
    grip_ctx *ctx = stage->ctx;
    if (stage->impl->kind != GRIP_STAGE_DESCRIPTOR || !stage->impl->describe)
        return grip_fail(ctx, GRIP_EINVAL, "describe_many: the stage is a %s stage, not a descriptor",
                         grip_stage_kind_name(stage->impl->kind));
    if (n_clouds > 0 && (!clouds || !roles))
        return grip_fail(ctx, GRIP_EINVAL, "descriptor: describe_many: %s is NULL", clouds ? "roles" : "clouds");
    /* no more workers than clouds, nor than the context's CPU threads (1 without OpenMP) */
    long long in_flight = grip_stage_integer(stage, "clouds_in_flight");
    if (in_flight > n_clouds)
        in_flight = n_clouds;
    if (in_flight > grip_ctx_threads(ctx))
        in_flight = grip_ctx_threads(ctx);
    /* the workers share the context's device and pool, made here once; a context that cannot make them describes
     * in turn, where each call reports (or falls back from) the failure as describe() does. The caller's stream is
     * waited for first: device arrays it filled (clouds, keypoints) are read on the workers' streams. */
    if (stage->use_cuda && in_flight > 1 && grip_cuda_ctx_prepare(ctx) == GRIP_OK && grip_cuda_sync(ctx) == GRIP_OK)
        s = describe_at_once(stage, clouds, roles, keypoints, n_clouds, out_memory, (uint32_t)in_flight, out, failed);
    else
        s = describe_in_turn(stage, clouds, roles, keypoints, n_clouds, out_memory, out, failed);
    if (s)
        for (uint32_t i = 0; i < n_clouds; i++)
            if (out[i]) {
                out[i]->release(out[i]);
                out[i] = NULL;
            }
    return s;
}
