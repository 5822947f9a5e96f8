/* diag.h -- a list of diagnostics (one line each), collected so that every problem is reported at once. */
#ifndef GRIP_HOST_DIAG_H
#define GRIP_HOST_DIAG_H

#include <stddef.h>
#include <stdio.h>

/* Zero-initialised (`grip_diag d = {0};`) is an empty list. Owns its messages: free with grip_diag_free(). */
typedef struct grip_diag {
    char **messages; /* count malloc'd lines, without the newline */
    size_t count, capacity;
    size_t lost;     /* messages dropped for want of memory */
} grip_diag;

/* Appends one printf-style message. */
void grip_diag_add(grip_diag *d, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(__printf__, 2, 3)))
#endif
    ;

/* Number of problems recorded (lost ones included). */
size_t grip_diag_count(const grip_diag *d);

/* Writes every message on its own line, then a line for lost messages if any. */
void grip_diag_print(const grip_diag *d, FILE *f);

/* Frees every message and zeroes *d. */
void grip_diag_free(grip_diag *d);

#endif
