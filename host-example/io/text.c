/* text.c -- a cursor over whitespace-separated text, one record per line, that keeps line numbers for
 * error messages. The file buffer ends in a NUL, so scanning never needs a length check past t->end. */
#include "io/internal.h"

#include <string.h>

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

cloud_io_text cloud_io_text_at(const cloud_io_file *f, size_t offset, size_t line)
{
    cloud_io_text t = {f->data + offset, f->data + f->size, line};
    return t;
}

int cloud_io_text_next_row(cloud_io_text *t)
{
    while (t->p < t->end) {
        const char *q = t->p;
        while (q < t->end && is_blank(*q))
            q++;
        if (q < t->end && *q != '\n') {
            t->p = q;
            return 1;
        }
        t->p = q < t->end ? q + 1 : q; /* a blank line: skip it */
        if (q < t->end)
            t->line++;
    }
    return 0;
}

size_t cloud_io_text_token(cloud_io_text *t, const char **tok)
{
    while (t->p < t->end && is_blank(*t->p))
        t->p++;
    const char *start = t->p;
    while (t->p < t->end && *t->p != '\n' && !is_blank(*t->p))
        t->p++;
    *tok = start;
    return (size_t)(t->p - start);
}

void cloud_io_text_end_row(cloud_io_text *t)
{
    const char *nl = memchr(t->p, '\n', (size_t)(t->end - t->p));
    if (nl) {
        t->p = nl + 1;
        t->line++;
    } else {
        t->p = t->end;
    }
}

uint64_t cloud_io_text_skip_rows(cloud_io_text *t, uint64_t limit)
{
    uint64_t rows = 0;
    while (rows < limit && cloud_io_text_next_row(t)) {
        rows++;
        cloud_io_text_end_row(t);
    }
    return rows;
}

uint64_t cloud_io_text_count_rows(const cloud_io_text *t, uint64_t limit, size_t *last_line)
{
    cloud_io_text c = *t;
    uint64_t rows = cloud_io_text_skip_rows(&c, limit);
    *last_line = c.line;
    return rows;
}
