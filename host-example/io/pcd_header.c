/* pcd_header.c -- parses and checks a PCD header (PCL's format v0.7, and the older .6/.5 headers that lack
 * VIEWPOINT), with the line number of every problem. Follows PCL 1.13's PCDReader::readHeader: SIZE defaults to 4,
 * TYPE to F and COUNT to 1 when absent; a missing HEIGHT means 1; a missing WIDTH and HEIGHT mean POINTS x 1.
 * Stricter than PCL where PCL only warns: an unknown keyword, a repeated keyword, POINTS != WIDTH x HEIGHT. */
#include "io/pcd_header.h"

#include <stdlib.h>
#include <string.h>

/* Line numbers of the keywords seen (0 = not seen). */
typedef struct pcd_lines {
    size_t version, fields, size, type, count, width, height, viewpoint, points, data;
} pcd_lines;

/* The tokens of one header line after its keyword. No keyword takes more than PCD_MAX_FIELDS values, so only that
 * many are kept; n counts them all, so that a longer line is refused by its keyword with the real number. */
typedef struct pcd_line {
    const char *tok[PCD_MAX_FIELDS];
    size_t len[PCD_MAX_FIELDS];
    size_t n;
    size_t number;
} pcd_line;

typedef struct pcd_parse {
    const cloud_io_file *f;
    pcd_header *h;
    pcd_lines lines;
    char types[PCD_MAX_FIELDS]; /* TYPE letters, 'F' by default */
    char *err;
    size_t errlen;
} pcd_parse;

static int fail(pcd_parse *ps, size_t line, const char *what)
{
    return cloud_io_fail(ps->err, ps->errlen, ps->f->path, line, "%s", what);
}

/* Reads the rest of the current line into l. */
static void read_values(cloud_io_text *t, pcd_line *l)
{
    l->n = 0;
    l->number = t->line;
    const char *tok;
    size_t len;
    while ((len = cloud_io_text_token(t, &tok)) > 0) {
        if (l->n < PCD_MAX_FIELDS) {
            l->tok[l->n] = tok;
            l->len[l->n] = len;
        }
        l->n++;
    }
}

/* Keeps the line number of a keyword; a repeated keyword is an error. */
static int mark_line(pcd_parse *ps, size_t *seen, const char *keyword, size_t line)
{
    if (*seen)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, line, "%s given twice (first on line %zu)", keyword,
                             *seen);
    *seen = line;
    return 0;
}

static int parse_version(pcd_parse *ps, const pcd_line *l)
{
    static const char *known[] = {"0.7", ".7", "0.6", ".6", "0.5", ".5"};
    if (l->n == 1)
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            if (l->len[0] == strlen(known[i]) && strncmp(l->tok[0], known[i], l->len[0]) == 0)
                return 0;
    return fail(ps, l->number, "VERSION is not one of 0.7, 0.6, 0.5 (or .7, .6, .5)");
}

static int parse_fields(pcd_parse *ps, const pcd_line *l)
{
    pcd_header *h = ps->h;
    if (l->n == 0)
        return fail(ps, l->number, "FIELDS lists no fields");
    if (l->n > PCD_MAX_FIELDS)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, l->number, "FIELDS: %zu fields, at most %d", l->n,
                             PCD_MAX_FIELDS);
    if (ps->lines.size || ps->lines.type || ps->lines.count)
        return fail(ps, l->number, "FIELDS must come before SIZE, TYPE and COUNT");
    for (size_t i = 0; i < l->n; i++) {
        if (l->len[i] >= PCD_NAME_MAX)
            return cloud_io_fail(ps->err, ps->errlen, ps->f->path, l->number,
                                 "field name '%.*s...' is longer than %d characters", 16, l->tok[i],
                                 PCD_NAME_MAX - 1);
        pcd_field *fd = &h->fields[i];
        memcpy(fd->name, l->tok[i], l->len[i]);
        fd->name[l->len[i]] = '\0';
        fd->size = 4; /* PCL's defaults for headers without SIZE/TYPE/COUNT */
        fd->count = 1;
        ps->types[i] = 'F';
    }
    h->nfields = l->n;
    return 0;
}

/* SIZE, TYPE and COUNT need FIELDS first and as many entries. */
static int check_entries(pcd_parse *ps, const pcd_line *l, const char *keyword)
{
    if (!ps->lines.fields)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, l->number, "%s before FIELDS", keyword);
    if (l->n != ps->h->nfields)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, l->number, "FIELDS has %zu entries but %s has %zu",
                             ps->h->nfields, keyword, l->n);
    return 0;
}

static int parse_sizes(pcd_parse *ps, const pcd_line *l)
{
    if (check_entries(ps, l, "SIZE") != 0)
        return -1;
    for (size_t i = 0; i < l->n; i++) {
        uint64_t v = 0;
        if (cloud_io_parse_count(l->tok[i], l->len[i], 8, &v) != 0 || (v != 1 && v != 2 && v != 4 && v != 8))
            return cloud_io_fail(ps->err, ps->errlen, ps->f->path, l->number,
                                 "SIZE of field '%s' is '%.*s', expected 1, 2, 4 or 8", ps->h->fields[i].name,
                                 (int)l->len[i], l->tok[i]);
        ps->h->fields[i].size = (size_t)v;
    }
    return 0;
}

static int parse_types(pcd_parse *ps, const pcd_line *l)
{
    if (check_entries(ps, l, "TYPE") != 0)
        return -1;
    for (size_t i = 0; i < l->n; i++) {
        char c = l->tok[i][0];
        if (l->len[i] != 1 || (c != 'F' && c != 'U' && c != 'I'))
            return cloud_io_fail(ps->err, ps->errlen, ps->f->path, l->number,
                                 "TYPE of field '%s' is '%.*s', expected F, U or I", ps->h->fields[i].name,
                                 (int)l->len[i], l->tok[i]);
        ps->types[i] = c;
    }
    return 0;
}

static int parse_counts(pcd_parse *ps, const pcd_line *l)
{
    if (check_entries(ps, l, "COUNT") != 0)
        return -1;
    for (size_t i = 0; i < l->n; i++) {
        uint64_t v = 0;
        if (cloud_io_parse_count(l->tok[i], l->len[i], 1u << 20, &v) != 0 || v == 0)
            return cloud_io_fail(ps->err, ps->errlen, ps->f->path, l->number,
                                 "COUNT of field '%s' is '%.*s', expected an integer from 1 to %u",
                                 ps->h->fields[i].name, (int)l->len[i], l->tok[i], 1u << 20);
        ps->h->fields[i].count = (uint32_t)v;
    }
    return 0;
}

/* WIDTH, HEIGHT, POINTS: one non-negative integer no larger than max. */
static int parse_number_line(pcd_parse *ps, const pcd_line *l, const char *keyword, uint64_t max, uint64_t *out)
{
    if (l->n != 1 || cloud_io_parse_count(l->tok[0], l->len[0], max, out) != 0)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, l->number,
                             "%s needs one integer from 0 to %llu", keyword, (unsigned long long)max);
    return 0;
}

static int parse_viewpoint(pcd_parse *ps, const pcd_line *l)
{
    cloud_io_value v;
    if (l->n != 7)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, l->number,
                             "VIEWPOINT has %zu values, expected 7 (tx ty tz qw qx qy qz)", l->n);
    for (size_t i = 0; i < 7; i++) {
        if (cloud_io_scalar_parse(l->tok[i], l->len[i], CLOUD_IO_F64, &v) != 0)
            return cloud_io_fail(ps->err, ps->errlen, ps->f->path, l->number, "VIEWPOINT value '%.*s' is not a number",
                                 (int)l->len[i], l->tok[i]);
        if (i < 3)
            ps->h->viewpoint[i] = v.number;
    }
    return 0;
}

static int parse_data(pcd_parse *ps, const pcd_line *l)
{
    static const struct { const char *name; pcd_data_kind kind; } kinds[] = {
        {"ascii", PCD_ASCII}, {"binary", PCD_BINARY}, {"binary_compressed", PCD_BINARY_COMPRESSED}};
    for (size_t i = 0; l->n == 1 && i < sizeof kinds / sizeof kinds[0]; i++) {
        if (l->len[0] == strlen(kinds[i].name) && strncmp(l->tok[0], kinds[i].name, l->len[0]) == 0) {
            ps->h->kind = kinds[i].kind;
            return 0;
        }
    }
    if (l->n != 1)
        return fail(ps, l->number, "DATA needs one of ascii, binary, binary_compressed");
    return cloud_io_fail(ps->err, ps->errlen, ps->f->path, l->number,
                         "DATA '%.*s' is not one of ascii, binary, binary_compressed", (int)l->len[0], l->tok[0]);
}

/* Dispatches one keyword line. */
static int parse_keyword(pcd_parse *ps, const char *kw, size_t kwlen, const pcd_line *l)
{
#define IS(word) (kwlen == strlen(word) && strncmp(kw, word, kwlen) == 0)
    pcd_lines *seen = &ps->lines;
    pcd_header *h = ps->h;
    uint64_t v = 0;
    if (IS("VERSION"))
        return mark_line(ps, &seen->version, "VERSION", l->number) || parse_version(ps, l) ? -1 : 0;
    if (IS("FIELDS") || IS("COLUMNS"))
        return mark_line(ps, &seen->fields, "FIELDS", l->number) || parse_fields(ps, l) ? -1 : 0;
    if (IS("SIZE"))
        return mark_line(ps, &seen->size, "SIZE", l->number) || parse_sizes(ps, l) ? -1 : 0;
    if (IS("TYPE"))
        return mark_line(ps, &seen->type, "TYPE", l->number) || parse_types(ps, l) ? -1 : 0;
    if (IS("COUNT"))
        return mark_line(ps, &seen->count, "COUNT", l->number) || parse_counts(ps, l) ? -1 : 0;
    if (IS("VIEWPOINT"))
        return mark_line(ps, &seen->viewpoint, "VIEWPOINT", l->number) || parse_viewpoint(ps, l) ? -1 : 0;
    if (IS("DATA"))
        return mark_line(ps, &seen->data, "DATA", l->number) || parse_data(ps, l) ? -1 : 0;
    if (IS("WIDTH")) {
        if (mark_line(ps, &seen->width, "WIDTH", l->number) || parse_number_line(ps, l, "WIDTH", UINT32_MAX, &v))
            return -1;
        h->width = (uint32_t)v;
        return 0;
    }
    if (IS("HEIGHT")) {
        if (mark_line(ps, &seen->height, "HEIGHT", l->number) || parse_number_line(ps, l, "HEIGHT", UINT32_MAX, &v))
            return -1;
        h->height = (uint32_t)v;
        return 0;
    }
    if (IS("POINTS"))
        return mark_line(ps, &seen->points, "POINTS", l->number) ||
                       parse_number_line(ps, l, "POINTS", UINT64_MAX / 2, &h->points)
                   ? -1
                   : 0;
#undef IS
    int any = seen->version || seen->fields || seen->size || seen->type || seen->count || seen->width ||
              seen->height || seen->viewpoint || seen->points;
    return cloud_io_fail(ps->err, ps->errlen, ps->f->path, l->number,
                         any ? "unknown header keyword '%.*s'"
                             : "not a PCD file: expected a header keyword such as VERSION or FIELDS, found '%.*s'",
                         (int)(kwlen > 40 ? 40 : kwlen), kw);
}

/* Maps TYPE + SIZE to a scalar type. */
static cloud_io_scalar scalar_of(char type, size_t size)
{
    static const cloud_io_scalar u[9] = {0, CLOUD_IO_U8, CLOUD_IO_U16, 0, CLOUD_IO_U32, 0, 0, 0, CLOUD_IO_U64};
    static const cloud_io_scalar i[9] = {0, CLOUD_IO_I8, CLOUD_IO_I16, 0, CLOUD_IO_I32, 0, 0, 0, CLOUD_IO_I64};
    if (type == 'F')
        return size == 4 ? CLOUD_IO_F32 : size == 8 ? CLOUD_IO_F64 : CLOUD_IO_NONE;
    return type == 'U' ? u[size] : i[size];
}

static cloud_io_role role_of(const char *name)
{
    static const struct { const char *name; cloud_io_role role; } roles[] = {
        {"x", CLOUD_IO_X}, {"y", CLOUD_IO_Y}, {"z", CLOUD_IO_Z},
        {"normal_x", CLOUD_IO_NX}, {"normal_y", CLOUD_IO_NY}, {"normal_z", CLOUD_IO_NZ},
        {"rgb", CLOUD_IO_RGB_PACKED}, {"rgba", CLOUD_IO_RGB_PACKED}};
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
        if (strcmp(name, roles[i].name) == 0)
            return roles[i].role;
    return CLOUD_IO_SKIP;
}

/* Types, roles, offsets and the record sizes of the fields. */
static int resolve_fields(pcd_parse *ps)
{
    pcd_header *h = ps->h;
    size_t type_line = ps->lines.type ? ps->lines.type : ps->lines.size ? ps->lines.size : ps->lines.fields;
    size_t role_field[CLOUD_IO_RGB_PACKED + 1];
    for (size_t r = 0; r <= CLOUD_IO_RGB_PACKED; r++)
        role_field[r] = SIZE_MAX;
    for (size_t i = 0; i < h->nfields; i++) {
        pcd_field *fd = &h->fields[i];
        fd->type = scalar_of(ps->types[i], fd->size);
        if (fd->type == CLOUD_IO_NONE)
            return cloud_io_fail(ps->err, ps->errlen, ps->f->path, type_line,
                                 "field '%s' has TYPE F and SIZE %zu (F needs SIZE 4 or 8)", fd->name, fd->size);
        fd->role = role_of(fd->name);
        if (fd->role != CLOUD_IO_SKIP && role_field[fd->role] != SIZE_MAX)
            return cloud_io_fail(ps->err, ps->errlen, ps->f->path, ps->lines.fields,
                                 "field '%s' appears twice in FIELDS", fd->name);
        if (fd->role == CLOUD_IO_RGB_PACKED && fd->size != 4)
            return cloud_io_fail(ps->err, ps->errlen, ps->f->path, type_line,
                                 "field '%s' has SIZE %zu, expected 4 (packed 0x00RRGGBB)", fd->name, fd->size);
        role_field[fd->role] = i;
        fd->offset = h->point_step;
        h->point_step += fd->size * fd->count;
        h->row_values += fd->count;
    }
    static const char *xyz[3] = {"x", "y", "z"};
    for (int r = CLOUD_IO_X; r <= CLOUD_IO_Z; r++)
        if (role_field[r] == SIZE_MAX)
            return cloud_io_fail(ps->err, ps->errlen, ps->f->path, ps->lines.fields,
                                 "FIELDS has no '%s' (x, y and z are required)", xyz[r - CLOUD_IO_X]);
    h->has_normals = role_field[CLOUD_IO_NX] != SIZE_MAX && role_field[CLOUD_IO_NY] != SIZE_MAX &&
                     role_field[CLOUD_IO_NZ] != SIZE_MAX;
    h->has_rgb = role_field[CLOUD_IO_RGB_PACKED] != SIZE_MAX;
    return 0;
}

/* WIDTH x HEIGHT against POINTS, with PCL's defaults for the older headers. */
static int resolve_size(pcd_parse *ps)
{
    pcd_header *h = ps->h;
    const pcd_lines *seen = &ps->lines;
    if (!seen->width && !seen->height) {
        if (!seen->points)
            return fail(ps, seen->data, "header has neither WIDTH/HEIGHT nor POINTS");
        if (h->points > UINT32_MAX)
            return fail(ps, seen->points, "POINTS is too large for a cloud without WIDTH");
        h->width = (uint32_t)h->points;
        h->height = 1;
        return 0;
    }
    if (!seen->width)
        return fail(ps, seen->height, "HEIGHT given but no WIDTH");
    if (!seen->height)
        h->height = 1;
    uint64_t wh = (uint64_t)h->width * h->height;
    if (!seen->points) {
        h->points = wh;
        return 0;
    }
    if (h->points != wh)
        return cloud_io_fail(ps->err, ps->errlen, ps->f->path, seen->points,
                             "POINTS is %llu but WIDTH x HEIGHT is %u x %u = %llu", (unsigned long long)h->points,
                             h->width, h->height, (unsigned long long)wh);
    return 0;
}

int pcd_header_parse(const cloud_io_file *f, pcd_header *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    pcd_parse ps = {.f = f, .h = h, .err = err, .errlen = errlen};
    cloud_io_text t = cloud_io_text_at(f, 0, 1);
    pcd_line l;
    while (!ps.lines.data) {
        if (!cloud_io_text_next_row(&t))
            return fail(&ps, t.line, "header ends without a DATA line");
        const char *kw;
        size_t kwlen = cloud_io_text_token(&t, &kw);
        if (kw[0] == '#') {
            cloud_io_text_end_row(&t);
            continue;
        }
        read_values(&t, &l);
        if (parse_keyword(&ps, kw, kwlen, &l) != 0)
            return -1;
        cloud_io_text_end_row(&t);
    }
    h->data_offset = (size_t)(t.p - f->data);
    h->data_line = t.line;
    if (!ps.lines.fields)
        return fail(&ps, ps.lines.data, "no FIELDS line before DATA");
    return resolve_fields(&ps) != 0 || resolve_size(&ps) != 0 ? -1 : 0;
}
