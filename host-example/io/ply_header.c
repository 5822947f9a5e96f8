/* ply_header.c -- parses and checks a PLY header: "ply", format, comment/obj_info, element and (list) property
 * lines, end_header. Finds the vertex element and the roles of its properties (x y z, nx ny nz, red green blue). */
#include "io/ply_header.h"

#include <string.h>

typedef struct ply_parse {
    const cloud_io_file *f;
    ply_header *h;
    cloud_io_text t;
    int have_format;
    char *err;
    size_t errlen;
} ply_parse;

static int token_is(const char *tok, size_t len, const char *word)
{
    return len == strlen(word) && strncmp(tok, word, len) == 0;
}

static void copy_name(char *dst, const char *tok, size_t len)
{
    if (len >= PLY_NAME_MAX)
        len = PLY_NAME_MAX - 1;
    memcpy(dst, tok, len);
    dst[len] = '\0';
}

static cloud_io_scalar type_of(const char *tok, size_t len)
{
    static const struct { const char *name; cloud_io_scalar type; } types[] = {
        {"char", CLOUD_IO_I8},     {"int8", CLOUD_IO_I8},     {"uchar", CLOUD_IO_U8},     {"uint8", CLOUD_IO_U8},
        {"short", CLOUD_IO_I16},   {"int16", CLOUD_IO_I16},   {"ushort", CLOUD_IO_U16},   {"uint16", CLOUD_IO_U16},
        {"int", CLOUD_IO_I32},     {"int32", CLOUD_IO_I32},   {"uint", CLOUD_IO_U32},     {"uint32", CLOUD_IO_U32},
        {"float", CLOUD_IO_F32},   {"float32", CLOUD_IO_F32}, {"double", CLOUD_IO_F64},   {"float64", CLOUD_IO_F64}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (token_is(tok, len, types[i].name))
            return types[i].type;
    return CLOUD_IO_NONE;
}

size_t ply_property_min_size(const ply_property *p)
{
    return cloud_io_scalar_size(p->count_type != CLOUD_IO_NONE ? p->count_type : p->type);
}

static int parse_format(ply_parse *ps)
{
    const char *tok;
    size_t len = cloud_io_text_token(&ps->t, &tok);
    if (token_is(tok, len, "ascii"))
        ps->h->format = PLY_ASCII;
    else if (token_is(tok, len, "binary_little_endian"))
        ps->h->format = PLY_BINARY_LE;
    else if (token_is(tok, len, "binary_big_endian"))
        ps->h->format = PLY_BINARY_BE;
    else
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, ps->t.line,
                             "format '%.*s' is not one of ascii, binary_little_endian, binary_big_endian",
                             (int)(len > 40 ? 40 : len), tok);
    ps->have_format = 1;
    return 0;
}

static int parse_element(ply_parse *ps)
{
    ply_header *h = ps->h;
    if (h->nelements == PLY_MAX_ELEMENTS)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, ps->t.line, "more than %d elements",
                             PLY_MAX_ELEMENTS);
    ply_element *e = &h->elements[h->nelements];
    const char *name, *count;
    size_t nlen = cloud_io_text_token(&ps->t, &name);
    size_t clen = cloud_io_text_token(&ps->t, &count);
    uint64_t n = 0;
    if (nlen == 0 || cloud_io_parse_count(count, clen, UINT64_MAX, &n) != 0)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, ps->t.line,
                             "expected 'element <name> <count>' with a count from 0 to %llu",
                             (unsigned long long)UINT64_MAX);
    memset(e, 0, sizeof *e);
    copy_name(e->name, name, nlen);
    e->count = n;
    e->line = ps->t.line;
    h->nelements++;
    return 0;
}

static int parse_property(ply_parse *ps)
{
    ply_header *h = ps->h;
    if (h->nelements == 0)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, ps->t.line, "property before any element");
    ply_element *e = &h->elements[h->nelements - 1];
    if (e->nprops == PLY_MAX_PROPERTIES)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, ps->t.line, "element '%s' has more than %d properties",
                             e->name, PLY_MAX_PROPERTIES);
    ply_property *p = &e->props[e->nprops];
    memset(p, 0, sizeof *p);
    const char *tok;
    size_t len = cloud_io_text_token(&ps->t, &tok);
    if (token_is(tok, len, "list")) {
        len = cloud_io_text_token(&ps->t, &tok);
        p->count_type = type_of(tok, len);
        if (!cloud_io_scalar_is_integer(p->count_type))
            return cloud_io_fail(ps->err, ps->errlen, ps->f->path, ps->t.line,
                                 "list length type '%.*s' is not an integer type", (int)(len > 40 ? 40 : len), tok);
        len = cloud_io_text_token(&ps->t, &tok);
    }
    p->type = type_of(tok, len);
    if (p->type == CLOUD_IO_NONE)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, ps->t.line, "unknown property type '%.*s'",
                             (int)(len > 40 ? 40 : len), tok);
    len = cloud_io_text_token(&ps->t, &tok);
    if (len == 0)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, ps->t.line, "property has no name");
    copy_name(p->name, tok, len);
    e->nprops++;
    return 0;
}

/* One header line after "ply"; *done is set at end_header. */
static int parse_line(ply_parse *ps, int *done)
{
    const char *kw;
    size_t len = cloud_io_text_token(&ps->t, &kw);
    if (token_is(kw, len, "comment") || token_is(kw, len, "obj_info"))
        return 0;
    if (token_is(kw, len, "end_header")) {
        *done = 1;
        return 0;
    }
    if (token_is(kw, len, "format"))
        return parse_format(ps);
    if (!ps->have_format)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, ps->t.line, "expected the format line after 'ply'");
    if (token_is(kw, len, "element"))
        return parse_element(ps);
    if (token_is(kw, len, "property"))
        return parse_property(ps);
    return cloud_io_fail(ps->err, ps->errlen, ps->f->path, ps->t.line, "unknown header line '%.*s'",
                         (int)(len > 40 ? 40 : len), kw);
}

/* Roles of the vertex element's properties; x y z are required scalars. */
static int resolve_vertex(ply_parse *ps)
{
    static const struct { const char *name; cloud_io_role role; } roles[] = {
        {"x", CLOUD_IO_X},    {"y", CLOUD_IO_Y},       {"z", CLOUD_IO_Z},      {"nx", CLOUD_IO_NX},
        {"ny", CLOUD_IO_NY},  {"nz", CLOUD_IO_NZ},     {"red", CLOUD_IO_RED},  {"green", CLOUD_IO_GREEN},
        {"blue", CLOUD_IO_BLUE}};
    ply_header *h = ps->h;
    ply_element *e = &h->elements[h->vertex];
    const ply_property *by_role[CLOUD_IO_BLUE + 1] = {0};
    for (size_t i = 0; i < e->nprops; i++) {
        ply_property *p = &e->props[i];
        for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++)
            if (strcmp(p->name, roles[r].name) == 0 && !by_role[roles[r].role] && p->count_type == CLOUD_IO_NONE) {
                p->role = roles[r].role;
                by_role[p->role] = p;
            }
    }
    for (size_t r = 0; r < 3; r++)
        if (!by_role[roles[r].role])
            return cloud_io_fail(ps->err, ps->errlen, ps->f->path, e->line,
                                 "element vertex has no scalar property '%s' (x, y and z are required)",
                                 roles[r].name);
    h->has_normals = by_role[CLOUD_IO_NX] && by_role[CLOUD_IO_NY] && by_role[CLOUD_IO_NZ];
    h->has_rgb = by_role[CLOUD_IO_RED] && by_role[CLOUD_IO_GREEN] && by_role[CLOUD_IO_BLUE] &&
                 by_role[CLOUD_IO_RED]->type == CLOUD_IO_U8 && by_role[CLOUD_IO_GREEN]->type == CLOUD_IO_U8 &&
                 by_role[CLOUD_IO_BLUE]->type == CLOUD_IO_U8;
    for (size_t i = 0; i < e->nprops; i++) { /* a partial set is skipped, not half-stored */
        cloud_io_role r = e->props[i].role;
        if ((!h->has_normals && r >= CLOUD_IO_NX && r <= CLOUD_IO_NZ) || (!h->has_rgb && r >= CLOUD_IO_RED))
            e->props[i].role = CLOUD_IO_SKIP;
    }
    return 0;
}

int ply_header_parse(const cloud_io_file *f, ply_header *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    ply_parse ps = {.f = f, .h = h, .t = cloud_io_text_at(f, 0, 1), .err = err, .errlen = errlen};
    const char *tok;
    size_t len = cloud_io_text_token(&ps.t, &tok);
    if (!token_is(tok, len, "ply") || f->data[0] != 'p')
        return cloud_io_fail(err, errlen, f->path, 1, "not a PLY file: the first line is not 'ply'");
    cloud_io_text_end_row(&ps.t);
    for (int done = 0; !done;) {
        if (!cloud_io_text_next_row(&ps.t))
            return cloud_io_fail(err, errlen, f->path, ps.t.line, "header ends without end_header");
        if (parse_line(&ps, &done) != 0)
            return -1;
        cloud_io_text_end_row(&ps.t);
    }
    h->data_offset = (size_t)(ps.t.p - f->data);
    h->data_line = ps.t.line;
    if (!ps.have_format)
        return cloud_io_fail(err, errlen, f->path, h->data_line - 1, "header has no format line");
    for (h->vertex = 0; h->vertex < h->nelements; h->vertex++)
        if (strcmp(h->elements[h->vertex].name, "vertex") == 0)
            return resolve_vertex(&ps);
    return cloud_io_fail(err, errlen, f->path, h->data_line - 1, "header has no 'element vertex'");
}
