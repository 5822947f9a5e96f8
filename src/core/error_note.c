/* error_note.c -- see error_note.h. */
#include "core/error_note.h"

#include <stdarg.h>
#include <stdio.h>

grip_status grip_note_fail(grip_error_note *note, grip_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note->text, sizeof note->text, fmt, ap);
    va_end(ap);
    note->status = status;
    return status;
}

grip_status grip_note_report(grip_ctx *ctx, const grip_error_note *note)
{
    if (note->status == GRIP_OK)
        return GRIP_OK;
    return grip_fail(ctx, note->status, "%s", note->text);
}
