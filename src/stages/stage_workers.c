/* stage_workers.c -- see stage_workers.h. */
#include "stages/stage_workers.h"
#include "core/cuda_bridge.h"

#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int grip_stage_workers_ready(grip_stage *st, uint32_t in_flight)
{
    return st->use_cuda && in_flight > 1 && grip_cuda_ctx_prepare(st->ctx) == GRIP_OK &&
           grip_cuda_sync(st->ctx) == GRIP_OK;
}

/* One thread's worker: a worker context and the stage bound to it. */
typedef struct stage_worker {
    grip_ctx ctx;
    grip_stage stage;
} stage_worker;

/* Item i on worker w: the device made current on this thread first (an item's first step may be a copy, which does
 * not make it so), the worker's stream waited for after, since an item may leave copies queued on it that the
 * caller's stream is not ordered after. */
static void run_item(stage_worker *w, uint32_t i, const grip_stage_jobs *jobs, grip_error_note *note)
{
    grip_status s = grip_cuda_ctx_prepare(&w->ctx);
    if (!s)
        s = jobs->run(&w->stage, i, jobs->arg);
    if (!s)
        s = grip_cuda_sync(&w->ctx);
    if (s)
        jobs->note(note, s, i, grip_ctx_error_text(&w->ctx));
}

grip_status grip_stage_on_workers(grip_stage *st, uint32_t n, uint32_t in_flight, const grip_stage_jobs *jobs,
                                  uint32_t *failed)
{
    grip_ctx *ctx = st->ctx;
    *failed = n;
    stage_worker *workers = calloc(in_flight, sizeof *workers);
    grip_error_note *notes = calloc((size_t)n + 1, sizeof *notes); /* one an item, {GRIP_OK} while it has not failed */
    if (!workers || !notes) {
        free(workers);
        free(notes);
        return grip_fail(ctx, GRIP_ENOMEM, "%s: out of memory for %u workers", grip_stage_kind_name(st->impl->kind),
                         in_flight);
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
        stage_worker *w = &workers[omp_get_thread_num()];
#else
        stage_worker *w = &workers[0];
#endif
        run_item(w, i, jobs, &notes[i]);
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
