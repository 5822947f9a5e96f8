/* ply_read.c -- reads the vertex element of a PLY file (ascii, binary_little_endian, binary_big_endian). Elements
 * before the vertices are skipped row by row (list lengths parsed); elements after them are never read. Every
 * count is checked against the bytes (or rows) the file holds before the cloud is allocated or the rows walked; an
 * element without properties takes no bytes or rows, whatever its count. */
#include "io/ply_rows.h"

#include <stdlib.h>
#include <string.h>

/* ---- binary ------------------------------------------------------------------------------------------------- */

int ply_walk_binary_row(const ply_element *e, ply_bytes *b, host_cloud *c, size_t i,
                           const ply_property **bad_list)
{
    for (size_t k = 0; k < e->nprops; k++) {
        const ply_property *p = &e->props[k];
        size_t size = cloud_io_scalar_size(p->type);
        if (p->count_type == CLOUD_IO_NONE) {
            if ((size_t)(b->end - b->p) < size)
                return -1;
            if (c && p->role != CLOUD_IO_SKIP)
                cloud_io_store(c, i, p->role, cloud_io_scalar_load(b->p, p->type, b->swap));
            b->p += size;
            continue;
        }
        size_t csize = cloud_io_scalar_size(p->count_type);
        if ((size_t)(b->end - b->p) < csize)
            return -1;
        double items = cloud_io_scalar_load(b->p, p->count_type, b->swap).number;
        if (items < 0) {
            *bad_list = p;
            return -2;
        }
        b->p += csize;
        if (items > (double)(size_t)(b->end - b->p) / (double)size)
            return -1;
        b->p += (size_t)items * size;
    }
    return 0;
}

/* The fewest bytes a row of e can take (list lengths, no items). */
static size_t min_row_bytes(const ply_element *e)
{
    size_t bytes = 0;
    for (size_t k = 0; k < e->nprops; k++)
        bytes += ply_property_min_size(&e->props[k]);
    return bytes;
}

int ply_binary_bad_row(const cloud_io_file *f, const ply_element *e, uint64_t row, const ply_bytes *b, int rc,
                          const ply_property *bad_list, char *err, size_t errlen)
{
    if (rc == -2)
        return cloud_io_fail(err, errlen, f->path, 0,
                             "element '%s' row %llu: list '%s' has a negative length (byte offset %zu)", e->name,
                             (unsigned long long)row, bad_list->name, (size_t)(b->p - b->begin));
    return cloud_io_fail(err, errlen, f->path, 0,
                         "binary data truncated in element '%s' at row %llu of %llu (byte offset %zu of %zu)",
                         e->name, (unsigned long long)row, (unsigned long long)e->count,
                         (size_t)(b->p - b->begin), f->size);
}

int ply_check_binary_room(const cloud_io_file *f, const ply_element *e, const ply_bytes *b, char *err,
                             size_t errlen)
{
    size_t row = min_row_bytes(e), left = (size_t)(b->end - b->p);
    if (row == 0 || e->count <= left / row)
        return 0;
    if (e->count > UINT64_MAX / row)
        return cloud_io_fail(err, errlen, f->path, 0,
                             "binary data truncated: element '%s' needs at least %llu x %zu bytes (more than 2^64) "
                             "after byte offset %zu, the file has %zu",
                             e->name, (unsigned long long)e->count, row, (size_t)(b->p - b->begin), left);
    return cloud_io_fail(err, errlen, f->path, 0,
                         "binary data truncated: element '%s' needs at least %llu x %zu = %llu bytes after byte "
                         "offset %zu, the file has %zu",
                         e->name, (unsigned long long)e->count, row, (unsigned long long)e->count * row,
                         (size_t)(b->p - b->begin), left);
}

/* Skips the elements before the vertices, then reads them; *at (when not NULL) gets the position after them. */
static int read_binary(const cloud_io_file *f, const ply_header *h, host_cloud *c, ply_bytes *at, char *err,
                       size_t errlen)
{
    const unsigned char *data = (const unsigned char *)f->data;
    ply_bytes b = {data + h->data_offset, data, data + f->size, h->format == PLY_BINARY_BE};
    for (size_t k = 0; k < h->vertex; k++) {
        const ply_element *e = &h->elements[k];
        if (e->nprops == 0)
            continue; /* its rows take no bytes, however many it declares */
        if (ply_check_binary_room(f, e, &b, err, errlen) != 0)
            return -1;
        for (uint64_t r = 0; r < e->count; r++) {
            const ply_property *bad = NULL;
            int rc = ply_walk_binary_row(e, &b, NULL, 0, &bad);
            if (rc != 0)
                return ply_binary_bad_row(f, e, r, &b, rc, bad, err, errlen);
        }
    }
    const ply_element *v = &h->elements[h->vertex];
    if (ply_check_binary_room(f, v, &b, err, errlen) != 0 ||
        cloud_io_cloud_alloc(c, (size_t)v->count, h->has_normals, h->has_rgb, f->path, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < c->n; i++) {
        const ply_property *bad = NULL;
        int rc = ply_walk_binary_row(v, &b, c, i, &bad);
        if (rc != 0) {
            host_cloud_free(c);
            return ply_binary_bad_row(f, v, i, &b, rc, bad, err, errlen);
        }
    }
    if (at)
        *at = b;
    return 0;
}

/* ---- ascii -------------------------------------------------------------------------------------------------- */

/* Parses the next token of the row as type t; -1 with a message when it is missing or not a number. */
static int ascii_value(const cloud_io_file *f, cloud_io_text *t, cloud_io_scalar type, const char *what, size_t i,
                       cloud_io_value *v, char *err, size_t errlen)
{
    const char *tok;
    size_t len = cloud_io_text_token(t, &tok);
    if (len == 0)
        return cloud_io_fail(err, errlen, f->path, t->line, "vertex %zu: row ends before '%s'", i, what);
    if (cloud_io_scalar_parse(tok, len, type, v) != 0)
        return cloud_io_fail(err, errlen, f->path, t->line, "vertex %zu: '%.*s' is not a valid %s for '%s'", i,
                             (int)(len > 40 ? 40 : len), tok,
                             cloud_io_scalar_is_integer(type) ? "integer" : "number", what);
    return 0;
}

/* One ascii vertex row: every property (lists: length, then that many items), nothing more. */
static int read_ascii_vertex(const cloud_io_file *f, const ply_element *e, cloud_io_text *t, host_cloud *c, size_t i,
                             char *err, size_t errlen)
{
    cloud_io_value v;
    for (size_t k = 0; k < e->nprops; k++) {
        const ply_property *p = &e->props[k];
        if (p->count_type == CLOUD_IO_NONE) {
            if (ascii_value(f, t, p->type, p->name, i, &v, err, errlen) != 0)
                return -1;
            cloud_io_store(c, i, p->role, v);
            continue;
        }
        if (ascii_value(f, t, p->count_type, p->name, i, &v, err, errlen) != 0)
            return -1;
        if (v.number < 0)
            return cloud_io_fail(err, errlen, f->path, t->line, "vertex %zu: list '%s' has a negative length %.0f", i,
                                 p->name, v.number);
        for (double item = 0; item < v.number; item++) {
            cloud_io_value ignored;
            if (ascii_value(f, t, p->type, p->name, i, &ignored, err, errlen) != 0)
                return -1;
        }
    }
    const char *tok;
    if (cloud_io_text_token(t, &tok) > 0)
        return cloud_io_fail(err, errlen, f->path, t->line, "vertex %zu: row has more values than element vertex "
                             "declares", i);
    cloud_io_text_end_row(t);
    return 0;
}

/* The message for ascii data that ends after `rows` rows although the elements up to and including the vertices
 * need more: their total, or "more than 2^64 - 1" when the counts overflow it. */
static int ascii_truncated(const cloud_io_file *f, const ply_header *h, uint64_t rows, size_t end_line, char *err,
                           size_t errlen)
{
    uint64_t needed = 0;
    for (size_t k = 0; k <= h->vertex; k++) {
        uint64_t count = h->elements[k].nprops ? h->elements[k].count : 0;
        if (count > UINT64_MAX - needed)
            return cloud_io_fail(err, errlen, f->path, end_line,
                                 "data ends after %llu rows, the elements up to and including vertex need more "
                                 "than %llu (truncated ascii data)",
                                 (unsigned long long)rows, (unsigned long long)UINT64_MAX);
        needed += count;
    }
    return cloud_io_fail(err, errlen, f->path, end_line,
                         "data ends after %llu rows, the elements up to and including vertex need %llu "
                         "(truncated ascii data)",
                         (unsigned long long)rows, (unsigned long long)needed);
}

/* One row per element instance, element by element: each element before the vertices skips its rows, then the
 * vertex rows are counted before the cloud is allocated, so a short file is reported with the line where the data
 * ends. An element without properties takes no rows (its instances would be empty lines, skipped as blank). No
 * running total is kept: counts of up to 2^64 - 1 each cannot wrap it into a wrong but plausible row. */
static int read_ascii(const cloud_io_file *f, const ply_header *h, host_cloud *c, char *err, size_t errlen)
{
    cloud_io_text t = cloud_io_text_at(f, h->data_offset, h->data_line);
    uint64_t rows = 0; /* read so far, for the message */
    for (size_t k = 0; k < h->vertex; k++) {
        const ply_element *e = &h->elements[k];
        if (e->nprops == 0)
            continue;
        uint64_t got = cloud_io_text_skip_rows(&t, e->count);
        rows += got;
        if (got < e->count)
            return ascii_truncated(f, h, rows, t.line, err, errlen);
    }
    const ply_element *v = &h->elements[h->vertex];
    size_t end_line = 0;
    uint64_t got = cloud_io_text_count_rows(&t, v->count, &end_line);
    if (got < v->count)
        return ascii_truncated(f, h, rows + got, end_line, err, errlen);
    if (cloud_io_cloud_alloc(c, (size_t)v->count, h->has_normals, h->has_rgb, f->path, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < c->n; i++) {
        cloud_io_text_next_row(&t);
        if (read_ascii_vertex(f, v, &t, c, i, err, errlen) != 0) {
            host_cloud_free(c);
            return -1;
        }
    }
    return 0;
}

int ply_read_vertices(const cloud_io_file *f, const ply_header *h, host_cloud *out, ply_bytes *at, char *err,
                      size_t errlen)
{
    host_cloud c;
    memset(&c, 0, sizeof c);
    int rc = 0;
    if (h->elements[h->vertex].count > UINT32_MAX)
        rc = cloud_io_fail(err, errlen, f->path, h->elements[h->vertex].line, "element vertex count %llu is too large",
                           (unsigned long long)h->elements[h->vertex].count);
    if (rc == 0)
        rc = h->format == PLY_ASCII ? read_ascii(f, h, &c, err, errlen)
                                    : read_binary(f, h, &c, at, err, errlen);
    if (rc == 0) {
        c.width = (uint32_t)c.n;
        c.height = 1;
        *out = c;
    }
    return rc == 0 ? 0 : -1;
}

/* Reads the loaded file f into *out (zeroed by the caller). */
static int read_loaded(const cloud_io_file *f, host_cloud *out, char *err, size_t errlen)
{
    ply_header *h = malloc(sizeof *h); /* ~20 KiB: kept off the stack */
    int rc = h ? ply_header_parse(f, h, err, errlen) : cloud_io_fail(err, errlen, f->path, 0, "out of memory");
    if (rc == 0)
        rc = ply_read_vertices(f, h, out, NULL, err, errlen);
    free(h);
    return rc == 0 ? 0 : -1;
}

int ply_read(const char *path, host_cloud *out, char *err, size_t errlen)
{
    return cloud_io_parse_path(path, read_loaded, out, err, errlen);
}

int ply_read_mem(const void *data, size_t size, const char *name, host_cloud *out, char *err, size_t errlen)
{
    return cloud_io_parse_mem(data, size, name, read_loaded, out, err, errlen);
}
