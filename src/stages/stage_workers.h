/* stage_workers.h -- one stage call's independent items (describe_many's clouds, a group stage's models) run on
 * several threads at once on a CUDA device. Each OpenMP thread gets a worker context (core/ctx.h,
 * grip_ctx_worker_init: the context's device and memory pool, counters and error text of its own) and a copy of the
 * stage bound to it. A worker's work goes to its own thread's default stream (plugin.h, "Synchrony"), so one item's
 * kernels run while another's host side waits on a read-back. Each worker makes the device current on its thread
 * before an item and waits for its stream after it, so every item's device work is complete when the call returns;
 * the workers' counters are then added to the context's. Inside a worker the CPU's OpenMP loops run on that one
 * thread (OpenMP nests no parallelism by default).
 *
 * The stage copies share st->state: a job may only read it. */
#ifndef GRIP_STAGES_STAGE_WORKERS_H
#define GRIP_STAGES_STAGE_WORKERS_H

#include "core/error_note.h"
#include "stages/stage.h"

/* The items of a call: run(worker, i, arg) runs item i on `worker` (a copy of the stage bound to a worker context);
 * note(note, s, i, text) writes item i's failure as the call reports it, text being the worker context's error text
 * (the item's own failure, or the device's when it could not be made current or its stream failed). */
typedef struct grip_stage_jobs {
    grip_status (*run)(grip_stage *worker, uint32_t i, void *arg);
    void (*note)(grip_error_note *note, grip_status s, uint32_t i, const char *text);
    void *arg;
} grip_stage_jobs;

/* Whether a call's items can run on workers: a CUDA stage, more than one item in flight, the context's device and
 * pool made (once, shared by the workers) and the caller's stream waited for (the workers read on their own streams
 * what it wrote). Otherwise the caller runs the items in turn, where each reports a device failure as one call
 * would. */
int grip_stage_workers_ready(grip_stage *st, uint32_t in_flight);

/* Items 0 to n - 1 on up to `in_flight` threads (1 <= in_flight <= the context's threads), in order of index as
 * threads come free; the context's threads are shared among the workers. Every item runs, also after a failure.
 * The caller has made the context's device and pool (grip_cuda_ctx_prepare) and waited for its own stream, since
 * the workers read on theirs what it wrote on it. Returns GRIP_OK, or the status of the lowest failed item (its
 * index in *failed, its note reported to st's context); GRIP_ENOMEM (nothing run, *failed = n). */
grip_status grip_stage_on_workers(grip_stage *st, uint32_t n, uint32_t in_flight, const grip_stage_jobs *jobs,
                                  uint32_t *failed);

#endif
