/* error_note.h -- a failure's status and text kept aside, for code running where it must not write a context: an
 * OpenMP worker thread. grip_fail writes the context's one last-error text, which one thread at a time may do, so
 * a parallel loop gives each item a note, its workers fail into the notes, and after the loop the thread that owns
 * the context reports the note it chooses (say, the first failing item's) with grip_note_report. The text is the
 * one grip_fail would have written, so a function written against a note serves both callers. */
#ifndef GRIP_CORE_ERROR_NOTE_H
#define GRIP_CORE_ERROR_NOTE_H

#include "core/ctx.h"

/* Room for one failure's text; longer texts are cut. */
#define GRIP_ERROR_NOTE_MAX 256

/* Owned by the caller (a local or an array element); {GRIP_OK} is a note of no failure. */
typedef struct grip_error_note {
    grip_status status; /* GRIP_OK while nothing failed */
    char text[GRIP_ERROR_NOTE_MAX];
} grip_error_note;

/* Records status and a formatted message in note, as grip_fail does in a context, and returns status. */
grip_status grip_note_fail(grip_error_note *note, grip_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(__printf__, 3, 4)))
#endif
    ;

/* Reports the note's failure to ctx through grip_fail (which names ctx's stage in front of it) and returns its
 * status; GRIP_OK, with ctx left alone, when the note holds none. */
grip_status grip_note_report(grip_ctx *ctx, const grip_error_note *note);

#endif
