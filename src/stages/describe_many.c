/* describe_many.c -- see describe_many.h. */
#include "stages/describe_many.h"
#include "core/cuda_bridge.h"
#include "core/error_note.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static const grip_array *keypoints_of(const grip_array *const *keypoints, uint32_t i)
{
    return keypoints ? keypoints[i] : NULL;
}

/* Cloud i's failure, as the call reports it, into note: "descriptor: clouds[i]: " and what describe() said (text,
 * its context's last error), less its own "descriptor: " (a note keeps the first GRIP_ERROR_NOTE_MAX characters:
 * the cloud's number and the cause come first). Both paths report through a note, so their texts are alike. */
static grip_status note_cloud(grip_error_note *note, grip_status s, uint32_t i, const char *text)
{
    return grip_note_fail(note, s, "descriptor: clouds[%u]: %s", i,
                          strncmp(text, "descriptor: ", 12) == 0 ? text + 12 : text);
}

/* Every cloud in turn, on the calling thread: stops at the first failure (its index in *failed). */
static grip_status describe_in_turn(grip_stage *st, const grip_cloud *const *clouds, const uint32_t *roles,
                                    const grip_array *const *keypoints, uint32_t n, uint32_t out_memory,
                                    grip_features **out, uint32_t *failed)
{
    for (uint32_t i = 0; i < n; i++) {
        grip_status s = st->impl->describe(st, clouds[i], roles[i], keypoints_of(keypoints, i), out_memory, &out[i]);
        if (s) {
            grip_error_note note;
            note_cloud(&note, s, i, grip_ctx_error_text(st->ctx));
            *failed = i;
            return grip_note_report(st->ctx, &note);
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
 * leave device-to-device copies queued on the worker's stream, which the caller's stream is not ordered after. A
 * failure goes into note. */
static void describe_on_worker(describe_worker *w, const grip_cloud *cloud, uint32_t i, uint32_t role,
                               const grip_array *keypoints, uint32_t out_memory, grip_features **out,
                               grip_error_note *note)
{
    grip_status s = grip_cuda_ctx_prepare(&w->ctx);
    if (!s)
        s = w->stage.impl->describe(&w->stage, cloud, role, keypoints, out_memory, out);
    if (!s)
        s = grip_cuda_sync(&w->ctx);
    if (s)
        note_cloud(note, s, i, grip_ctx_error_text(&w->ctx));
}

/* The clouds on `in_flight` OpenMP threads (each its worker), in order of index as threads come free. Every cloud
 * is described, also after a failure; the lowest failed index is reported. */
static grip_status describe_at_once(grip_stage *st, const grip_cloud *const *clouds, const uint32_t *roles,
                                    const grip_array *const *keypoints, uint32_t n, uint32_t out_memory,
                                    uint32_t in_flight, grip_features **out, uint32_t *failed)
{
    grip_ctx *ctx = st->ctx;
    describe_worker *workers = calloc(in_flight, sizeof *workers);
    grip_error_note *notes = calloc(n, sizeof *notes); /* one a cloud, {GRIP_OK} while it has not failed */
    if (!workers || !notes) {
        free(workers);
        free(notes);
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
        describe_on_worker(w, clouds[i], i, roles[i], keypoints_of(keypoints, i), out_memory, &out[i], &notes[i]);
    }
    for (uint32_t t = 0; t < in_flight; t++)
        grip_ctx_worker_join(ctx, &workers[t].ctx);
    grip_status s = GRIP_OK;
    for (uint32_t i = 0; i < n && !s; i++)
        if (notes[i].status) {
            *failed = i;
            s = grip_note_report(ctx, &notes[i]);
        }
    free(notes);
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
