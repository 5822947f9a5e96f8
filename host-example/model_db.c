/* model_db.c -- see model_db.h; the layout is specified in docs/model-database.md. */
#include "model_db.h"
#include "host_util.h"
#include "io/internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RECORD_BYTES = 80 }; /* a model record's fixed part */
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * FNV_PRIME;
    return h;
}

uint64_t model_db_checksum(const void *data, size_t size)
{
    static const unsigned char zeros[8];
    const unsigned char *b = data;
    uint64_t h = fnv1a(FNV_OFFSET, b, MODEL_DB_CHECKSUM_OFFSET);
    h = fnv1a(h, zeros, 8);
    return fnv1a(h, b + MODEL_DB_CHECKSUM_OFFSET + 8, size - MODEL_DB_CHECKSUM_OFFSET - 8);
}

static uint64_t pad8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

static int host_is_little_endian(void)
{
    const uint32_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Copies count 4-byte values between host order and the file's little-endian order (the same swap both ways). */
static void copy_le32(void *dst, const void *src, uint64_t count)
{
    if (host_is_little_endian()) {
        memcpy(dst, src, (size_t)count * 4);
        return;
    }
    const unsigned char *s = src;
    unsigned char *d = dst;
    for (uint64_t i = 0; i < count; i++)
        for (int k = 0; k < 4; k++)
            d[4 * i + k] = s[4 * i + 3 - k];
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int k = 0; k < bytes; k++)
        p[k] = (unsigned char)(v >> (8 * k));
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int k = 0; k < bytes; k++)
        v |= (uint64_t)p[k] << (8 * k);
    return v;
}

/* ---- writing ------------------------------------------------------------------------------------------------ */

/* A file being written, its checksum kept as it goes. */
typedef struct db_writer {
    FILE *fp;
    uint64_t hash, written;
} db_writer;

static void emit(db_writer *w, const void *p, size_t n)
{
    if (n == 0)
        return;
    fwrite(p, 1, n, w->fp);
    w->hash = fnv1a(w->hash, p, n);
    w->written += n;
}

/* count 4-byte values in little-endian order, then zeros up to the next multiple of 8. */
static void emit_le32(db_writer *w, const void *src, uint64_t count)
{
    static const unsigned char zeros[8];
    unsigned char buf[4096];
    const unsigned char *s = src;
    for (uint64_t done = 0; done < count;) {
        uint64_t n = count - done < sizeof buf / 4 ? count - done : sizeof buf / 4;
        copy_le32(buf, s + 4 * done, n);
        emit(w, buf, (size_t)n * 4);
        done += n;
    }
    emit(w, zeros, (size_t)(pad8(count * 4) - count * 4));
}

static void emit_bytes_padded(db_writer *w, const void *p, uint64_t n)
{
    static const unsigned char zeros[8];
    emit(w, p, (size_t)n);
    emit(w, zeros, (size_t)(pad8(n) - n));
}

/* The bytes model m takes in the file. */
static uint64_t record_size(const stored_model *m)
{
    const grip_cloud *c = &m->cloud;
    const grip_features *f = &m->features;
    return RECORD_BYTES + pad8(strlen(m->name)) + pad8(c->xyz.rows * 12) + pad8(c->normals.rows * 12) +
           pad8(c->rgb.rows * 3) + pad8(f->keypoints.rows * 4) + pad8(f->keypoint_xyz.rows * 12) +
           pad8(f->normals.rows * 16) + pad8(f->frames.rows * 36);
}

static void emit_record(db_writer *w, const stored_model *m)
{
    const grip_cloud *c = &m->cloud;
    const grip_features *f = &m->features;
    unsigned char r[RECORD_BYTES] = {0};
    put_le(r + 0, strlen(m->name), 4);
    put_le(r + 4, c->width, 4);
    put_le(r + 8, c->height, 4);
    copy_le32(r + 16, c->viewpoint, 3);
    const uint64_t sizes[6] = {c->xyz.rows,    f->keypoints.rows, c->normals.rows,
                               c->rgb.rows,    f->normals.rows,   f->frames.rows};
    for (int i = 0; i < 6; i++)
        put_le(r + 32 + 8 * i, sizes[i], 8);
    emit(w, r, sizeof r);
    emit_bytes_padded(w, m->name, strlen(m->name));
    emit_le32(w, m->xyz, c->xyz.rows * 3);
    emit_le32(w, m->cloud_normals, c->normals.rows * 3);
    emit_bytes_padded(w, m->rgb, c->rgb.rows * 3);
    emit_le32(w, m->keypoints, f->keypoints.rows);
    emit_le32(w, m->keypoint_xyz, f->keypoint_xyz.rows * 3);
    emit_le32(w, m->normals, f->normals.rows * 4);
    emit_le32(w, m->frames, f->frames.rows * 9);
}

int model_db_write(const char *path, const model_set *s, char *err, size_t errlen)
{
    if (s->n_models == 0)
        return cloud_io_fail(err, errlen, path, 0, "no model to write");
    const char *settings = s->settings ? s->settings : "";
    uint64_t total = MODEL_DB_HEADER_BYTES + pad8(strlen(settings)) + pad8(s->rows * s->dim * 4);
    for (uint32_t m = 0; m < s->n_models; m++)
        total += record_size(&s->models[m]);
    size_t tmp_len = strlen(path) + 5;
    char *tmp = malloc(tmp_len);
    if (!tmp)
        return cloud_io_fail(err, errlen, path, 0, "out of memory");
    snprintf(tmp, tmp_len, "%s.tmp", path);
    db_writer w = {cloud_io_create(tmp, err, errlen), FNV_OFFSET, 0};
    if (!w.fp) {
        free(tmp);
        return -1;
    }
    unsigned char h[MODEL_DB_HEADER_BYTES] = {0};
    memcpy(h, MODEL_DB_MAGIC, 8);
    put_le(h + 8, MODEL_DB_FORMAT_VERSION, 4);
    put_le(h + 12, MODEL_DB_HEADER_BYTES, 4);
    put_le(h + 16, s->abi_major, 4);
    put_le(h + 20, s->abi_minor, 4);
    put_le(h + 24, s->n_models, 4);
    put_le(h + 28, s->dim, 4);
    put_le(h + 32, s->rows, 8);
    put_le(h + 40, strlen(settings), 8);
    put_le(h + 48, total, 8);
    emit(&w, h, sizeof h); /* the checksum's 8 bytes hashed as zeros, as model_db_checksum reads them */
    emit_bytes_padded(&w, settings, strlen(settings));
    for (uint32_t m = 0; m < s->n_models; m++)
        emit_record(&w, &s->models[m]);
    emit_le32(&w, s->reference, s->rows * s->dim);
    put_le(h + MODEL_DB_CHECKSUM_OFFSET, w.hash, 8);
    if (w.written != total || fseek(w.fp, MODEL_DB_CHECKSUM_OFFSET, SEEK_SET) != 0 ||
        fwrite(h + MODEL_DB_CHECKSUM_OFFSET, 1, 8, w.fp) != 8) {
        fclose(w.fp);
        remove(tmp);
        free(tmp);
        return cloud_io_fail(err, errlen, path, 0, "write failed");
    }
    int rc = cloud_io_finish(w.fp, tmp, err, errlen);
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = cloud_io_fail(err, errlen, path, 0, "cannot rename %s to it (%s)", tmp, strerror(errno));
        remove(tmp);
    }
    free(tmp);
    return rc;
}

/* ---- reading ------------------------------------------------------------------------------------------------ */

/* The file being read: every take is bounds-checked against its length. */
typedef struct db_reader {
    const unsigned char *data;
    uint64_t size, at;
    const char *name;
    char *err;
    size_t errlen;
} db_reader;

/* The next count items of elem bytes (padded to 8), or NULL after a "truncated or corrupt" message naming what
 * (of model `model`; UINT32_MAX: of no model). */
static const unsigned char *take(db_reader *r, uint64_t count, uint64_t elem, const char *what, uint32_t model)
{
    uint64_t left = r->size - r->at;
    if (elem && count > left / elem) {
        char whose[32] = "";
        if (model != UINT32_MAX)
            snprintf(whose, sizeof whose, "model %u's ", model);
        cloud_io_fail(r->err, r->errlen, r->name, 0,
                      "truncated or corrupt: %s%s (%llu x %llu bytes) at byte %llu runs past the end of the file "
                      "(%llu bytes)",
                      whose, what, (unsigned long long)count, (unsigned long long)elem, (unsigned long long)r->at,
                      (unsigned long long)r->size);
        return NULL;
    }
    const unsigned char *p = r->data + r->at;
    uint64_t n = pad8(count * elem);
    r->at = n <= left ? r->at + n : r->size;
    return p;
}

/* "<file>: corrupt: <what>"; returns -1. */
static int corrupt(db_reader *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(__printf__, 2, 3)))
#endif
    ;
static int corrupt(db_reader *r, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cloud_io_fail(r->err, r->errlen, r->name, 0, "corrupt: %s", what);
}

/* An optional array's rows: 0 or `expected`. */
static int rows_ok(db_reader *r, uint64_t rows, uint64_t expected, uint32_t m, const char *what)
{
    if (rows == 0 || rows == expected)
        return 0;
    return corrupt(r, "model %u's %s has %llu rows, not 0 or %llu", m, what, (unsigned long long)rows,
                   (unsigned long long)expected);
}

/* Reads one model record's fixed part into shape and its name; checks the shape. */
static int read_record_head(db_reader *r, uint32_t m, stored_model_shape *shape, const unsigned char **name,
                            uint32_t *name_len, float viewpoint[3])
{
    const unsigned char *p = take(r, 1, RECORD_BYTES, "record", m);
    if (!p)
        return -1;
    *name_len = (uint32_t)get_le(p, 4);
    shape->width = (uint32_t)get_le(p + 4, 4);
    shape->height = (uint32_t)get_le(p + 8, 4);
    copy_le32(viewpoint, p + 16, 3);
    shape->points = get_le(p + 32, 8);
    shape->keypoints = get_le(p + 40, 8);
    shape->cloud_normals_rows = get_le(p + 48, 8);
    shape->rgb_rows = get_le(p + 56, 8);
    shape->normals_rows = get_le(p + 64, 8);
    shape->frames_rows = get_le(p + 72, 8);
    if ((uint64_t)shape->width * shape->height != shape->points)
        return corrupt(r, "model %u is %llu points, but its width x height is %llu", m,
                       (unsigned long long)shape->points, (unsigned long long)shape->width * shape->height);
    if (rows_ok(r, shape->cloud_normals_rows, shape->points, m, "cloud normals") ||
        rows_ok(r, shape->rgb_rows, shape->points, m, "colours") ||
        rows_ok(r, shape->normals_rows, shape->points, m, "normals") ||
        rows_ok(r, shape->frames_rows, shape->keypoints, m, "frames"))
        return -1;
    if (!(*name = take(r, *name_len, 1, "name", m)))
        return -1;
    if (memchr(*name, '\0', *name_len))
        return corrupt(r, "model %u's name holds a NUL byte", m);
    return 0;
}

/* The byte offsets of one model's arrays, checked to lie within the file. */
typedef struct record_arrays {
    const unsigned char *xyz, *cloud_normals, *rgb, *keypoints, *keypoint_xyz, *normals, *frames;
} record_arrays;

static int read_record_arrays(db_reader *r, uint32_t m, const stored_model_shape *s, record_arrays *a)
{
    return (a->xyz = take(r, s->points, 12, "points", m)) && (a->cloud_normals = take(r, s->cloud_normals_rows, 12,
                                                                                      "cloud normals", m)) &&
                   (a->rgb = take(r, s->rgb_rows, 3, "colours", m)) &&
                   (a->keypoints = take(r, s->keypoints, 4, "keypoints", m)) &&
                   (a->keypoint_xyz = take(r, s->keypoints, 12, "keypoint positions", m)) &&
                   (a->normals = take(r, s->normals_rows, 16, "normals", m)) &&
                   (a->frames = take(r, s->frames_rows, 36, "frames", m))
               ? 0
               : -1;
}

/* Reads the header: magic, format version, lengths and checksum. */
static int read_header(db_reader *r, uint32_t *n_models, uint32_t *dim, uint64_t *rows, uint64_t *settings_len,
                       uint32_t abi[2])
{
    const unsigned char *h = r->data;
    if (r->size < MODEL_DB_HEADER_BYTES)
        return cloud_io_fail(r->err, r->errlen, r->name, 0,
                             "truncated: %llu bytes, shorter than a model database's %u-byte header",
                             (unsigned long long)r->size, MODEL_DB_HEADER_BYTES);
    if (memcmp(h, MODEL_DB_MAGIC, 8) != 0)
        return cloud_io_fail(r->err, r->errlen, r->name, 0,
                             "not a grip model database (it does not start with GRIPMDB; write one with grip-host "
                             "models)");
    uint32_t version = (uint32_t)get_le(h + 8, 4);
    if (version != MODEL_DB_FORMAT_VERSION)
        return cloud_io_fail(r->err, r->errlen, r->name, 0,
                             "model database format version %u, but this grip-host reads version %u: describe the "
                             "models again (grip-host models)",
                             version, MODEL_DB_FORMAT_VERSION);
    uint64_t file_bytes = get_le(h + 48, 8);
    if (file_bytes != r->size)
        return cloud_io_fail(r->err, r->errlen, r->name, 0, "%s: the header says %llu bytes, the file has %llu",
                             file_bytes > r->size ? "truncated" : "corrupt (bytes past its end)",
                             (unsigned long long)file_bytes, (unsigned long long)r->size);
    if (get_le(h + 12, 4) != MODEL_DB_HEADER_BYTES)
        return cloud_io_fail(r->err, r->errlen, r->name, 0, "corrupt: header size %u, not %u",
                             (uint32_t)get_le(h + 12, 4), MODEL_DB_HEADER_BYTES);
    if (get_le(h + MODEL_DB_CHECKSUM_OFFSET, 8) != model_db_checksum(r->data, (size_t)r->size))
        return cloud_io_fail(r->err, r->errlen, r->name, 0,
                             "corrupt: its checksum does not match its contents (the file was changed or damaged)");
    abi[0] = (uint32_t)get_le(h + 16, 4);
    abi[1] = (uint32_t)get_le(h + 20, 4);
    *n_models = (uint32_t)get_le(h + 24, 4);
    *dim = (uint32_t)get_le(h + 28, 4);
    *rows = get_le(h + 32, 8);
    *settings_len = get_le(h + 40, 8);
    r->at = MODEL_DB_HEADER_BYTES;
    if (*n_models == 0 || *dim == 0)
        return cloud_io_fail(r->err, r->errlen, r->name, 0, "corrupt: %u models of descriptors of %u values",
                             *n_models, *dim);
    return 0;
}

/* First pass: walks every record without allocating, so that no count read from the file is trusted before
 * the file is known to hold what it claims. */
static int check_layout(db_reader *r, uint32_t n_models, uint32_t dim, uint64_t rows)
{
    uint64_t keypoints = 0;
    for (uint32_t m = 0; m < n_models; m++) {
        stored_model_shape shape;
        const unsigned char *name;
        uint32_t name_len;
        float viewpoint[3];
        record_arrays a;
        if (read_record_head(r, m, &shape, &name, &name_len, viewpoint) != 0 ||
            read_record_arrays(r, m, &shape, &a) != 0)
            return -1;
        for (uint64_t k = 0; k < shape.keypoints; k++)
            if (get_le(a.keypoints + 4 * k, 4) >= shape.points)
                return corrupt(r, "model %u's keypoint %llu is point %llu, past its points", m,
                               (unsigned long long)k, (unsigned long long)get_le(a.keypoints + 4 * k, 4));
        keypoints += shape.keypoints;
    }
    if (keypoints != rows)
        return corrupt(r, "the models have %llu keypoints, the header says %llu", (unsigned long long)keypoints,
                       (unsigned long long)rows);
    if (!take(r, rows, (uint64_t)dim * 4, "the descriptors", UINT32_MAX))
        return -1;
    if (r->at != r->size)
        return corrupt(r, "%llu bytes follow the descriptors", (unsigned long long)(r->size - r->at));
    return 0;
}

/* Second pass: the set, filled from the checked layout. */
static int fill_set(db_reader *r, model_set *s)
{
    uint64_t first = 0;
    for (uint32_t m = 0; m < s->n_models; m++) {
        stored_model_shape shape;
        const unsigned char *name;
        uint32_t name_len;
        float viewpoint[3];
        record_arrays a;
        read_record_head(r, m, &shape, &name, &name_len, viewpoint); /* checked by check_layout */
        read_record_arrays(r, m, &shape, &a);
        char *label = host_strndup((const char *)name, name_len);
        int shaped = label && model_set_shape(s, m, label, &shape, first) == 0;
        free(label);
        if (!shaped)
            return cloud_io_fail(r->err, r->errlen, r->name, 0, "out of memory for model %u", m);
        stored_model *sm = &s->models[m];
        memcpy(sm->cloud.viewpoint, viewpoint, sizeof viewpoint);
        copy_le32(sm->xyz, a.xyz, shape.points * 3);
        if (sm->cloud_normals)
            copy_le32(sm->cloud_normals, a.cloud_normals, shape.points * 3);
        if (sm->rgb)
            memcpy(sm->rgb, a.rgb, (size_t)shape.points * 3);
        copy_le32(sm->keypoints, a.keypoints, shape.keypoints);
        copy_le32(sm->keypoint_xyz, a.keypoint_xyz, shape.keypoints * 3);
        if (sm->normals)
            copy_le32(sm->normals, a.normals, shape.points * 4);
        if (sm->frames)
            copy_le32(sm->frames, a.frames, shape.keypoints * 9);
        first += shape.keypoints;
    }
    /* every model's descriptors in one block: straight into the index's input rows */
    copy_le32(s->reference, r->data + r->at, s->rows * s->dim);
    return 0;
}

int model_db_read_mem(const void *data, size_t size, const char *name, model_set *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    db_reader r = {data, size, 0, name, err, errlen};
    uint32_t n_models = 0, dim = 0, abi[2] = {0, 0};
    uint64_t rows = 0, settings_len = 0;
    if (read_header(&r, &n_models, &dim, &rows, &settings_len, abi) != 0)
        return -1;
    const unsigned char *settings = take(&r, settings_len, 1, "the settings text", UINT32_MAX);
    if (!settings)
        return -1;
    if (memchr(settings, '\0', (size_t)settings_len))
        return corrupt(&r, "its settings text holds a NUL byte");
    uint64_t models_at = r.at;
    if (check_layout(&r, n_models, dim, rows) != 0)
        return -1;
    r.at = models_at;
    if (model_set_alloc(out, n_models, dim, rows) != 0 || !(out->settings = malloc((size_t)settings_len + 1)))
        goto out_of_memory;
    memcpy(out->settings, settings, (size_t)settings_len);
    out->settings[settings_len] = '\0';
    out->abi_major = abi[0];
    out->abi_minor = abi[1];
    if (fill_set(&r, out) != 0) {
        model_set_free(out);
        return -1;
    }
    return 0;
out_of_memory:
    model_set_free(out);
    return cloud_io_fail(err, errlen, name, 0, "out of memory for %u models, %llu descriptors of %u values", n_models,
                         (unsigned long long)rows, dim);
}

int model_db_read(const char *path, model_set *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    cloud_io_file f;
    if (cloud_io_file_load(path, &f, err, errlen) != 0)
        return -1;
    int rc = model_db_read_mem(f.data, f.size, path, out, err, errlen);
    cloud_io_file_free(&f);
    return rc;
}
