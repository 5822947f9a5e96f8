/* diag.c -- see diag.h. */
#include "diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int grow(grip_diag *d)
{
    if (d->count < d->capacity)
        return 0;
    size_t capacity = d->capacity ? 2 * d->capacity : 8;
    char **bigger = realloc(d->messages, capacity * sizeof *bigger);
    if (!bigger)
        return -1;
    d->messages = bigger;
    d->capacity = capacity;
    return 0;
}

void grip_diag_add(grip_diag *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!text || grow(d) != 0) {
        free(text);
        d->lost++;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(text, (size_t)len + 1, fmt, ap);
    va_end(ap);
    d->messages[d->count++] = text;
}

size_t grip_diag_count(const grip_diag *d)
{
    return d->count + d->lost;
}

void grip_diag_print(const grip_diag *d, FILE *f)
{
    for (size_t i = 0; i < d->count; i++)
        fprintf(f, "%s\n", d->messages[i]);
    if (d->lost)
        fprintf(f, "(%zu more problems not shown: out of memory)\n", d->lost);
}

void grip_diag_free(grip_diag *d)
{
    for (size_t i = 0; i < d->count; i++)
        free(d->messages[i]);
    free(d->messages);
    memset(d, 0, sizeof *d);
}
