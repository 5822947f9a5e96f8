/* describe_many.c -- see describe_many.h. */
#include "stages/describe_many.h"
#include "core/error_note.h"
#include "stages/stage_workers.h"

#include <stdlib.h>
#include <string.h>

static const grip_array *keypoints_of(const grip_array *const *keypoints, uint32_t i)
{
    return keypoints ? keypoints[i] : NULL;
}

/* Cloud i's failure, as the call reports it, into note: "descriptor: clouds[i]: " and what describe() said (text,
 * its context's last error), less its own "descriptor: " (a note keeps the first GRIP_ERROR_NOTE_MAX characters:
 * the cloud's number and the cause come first). Both paths report through a note, so their texts are alike. */
static void note_cloud(grip_error_note *note, grip_status s, uint32_t i, const char *text)
{
    grip_note_fail(note, s, "descriptor: clouds[%u]: %s", i, strncmp(text, "descriptor: ", 12) == 0 ? text + 12 : text);
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

/* describe_many's arguments, for its jobs */
typedef struct describe_args {
    const grip_cloud *const *clouds;
    const uint32_t *roles;
    const grip_array *const *keypoints;
    uint32_t out_memory;
    grip_features **out;
} describe_args;

static grip_status describe_item(grip_stage *worker, uint32_t i, void *arg)
{
    const describe_args *a = arg;
    return worker->impl->describe(worker, a->clouds[i], a->roles[i], keypoints_of(a->keypoints, i), a->out_memory,
                                  &a->out[i]);
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
    describe_args args = {clouds, roles, keypoints, out_memory, out};
    const grip_stage_jobs jobs = {describe_item, note_cloud, &args};
    /* in turn, each call reports (or falls back from) a device failure as describe() does */
    if (grip_stage_workers_ready(stage, (uint32_t)in_flight))
        s = grip_stage_on_workers(stage, n_clouds, (uint32_t)in_flight, &jobs, failed);
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
