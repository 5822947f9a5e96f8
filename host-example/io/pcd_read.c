/* pcd_read.c -- reads a PCD file's points: ascii rows, binary point records, or binary_compressed (LZF) field
 * arrays. Every size the header declares is checked against the bytes the file holds before anything that large
 * is allocated. */
#include "io/pcd_header.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <liblzf/lzf.h>

/* Where one field's values lie in a block of binary data: point i's first value at base + i * stride. */
typedef struct pcd_column {
    cloud_io_role role;
    cloud_io_scalar type;
    size_t base, stride;
} pcd_column;

/* Decodes the columns that feed the cloud from data (which the caller has checked holds every value). */
static void decode_columns(host_cloud *c, const unsigned char *data, const pcd_column *cols, size_t ncols)
{
    if (c->n == 0)
        return; /* c->xyz is NULL: not even an offset may be added to it */
    for (size_t k = 0; k < ncols; k++) {
        const pcd_column *col = &cols[k];
        const unsigned char *p = data + col->base;
        if (col->type == CLOUD_IO_F32 && col->role >= CLOUD_IO_X && col->role <= CLOUD_IO_Z) {
            float *dst = c->xyz + (col->role - CLOUD_IO_X); /* the common case, kept tight for 640x480 scenes */
            for (size_t i = 0; i < c->n; i++, p += col->stride)
                memcpy(dst + 3 * i, p, sizeof(float));
            continue;
        }
        for (size_t i = 0; i < c->n; i++, p += col->stride)
            cloud_io_store(c, i, col->role, cloud_io_scalar_load(p, col->type, 0));
    }
}

/* a x b in decimal, or "more than 18446744073709551615" when the product does not fit: the sizes a header
 * declares are quoted in messages, and a wrapped product would quote a wrong, small number. */
static const char *product_text(char *buf, size_t n, uint64_t a, uint64_t b)
{
    if (b != 0 && a > UINT64_MAX / b)
        snprintf(buf, n, "more than %llu", (unsigned long long)UINT64_MAX);
    else
        snprintf(buf, n, "%llu", (unsigned long long)(a * b));
    return buf;
}

/* binary: point-major records of point_step bytes, the first right after the DATA line. */
static int read_binary(const cloud_io_file *f, const pcd_header *h, host_cloud *c, char *err, size_t errlen)
{
    size_t avail = f->size - h->data_offset;
    char total[48];
    if (h->points > avail / (h->point_step ? h->point_step : 1))
        return cloud_io_fail(err, errlen, f->path, 0,
                             "binary data truncated: %llu points x %zu bytes need %s bytes after the header (byte "
                             "offset %zu), the file has %zu",
                             (unsigned long long)h->points, h->point_step,
                             product_text(total, sizeof total, h->points, h->point_step), h->data_offset, avail);
    if (cloud_io_cloud_alloc(c, (size_t)h->points, h->has_normals, h->has_rgb, f->path, err, errlen) != 0)
        return -1;
    pcd_column cols[PCD_MAX_FIELDS];
    size_t ncols = 0;
    for (size_t i = 0; i < h->nfields; i++)
        if (h->fields[i].role != CLOUD_IO_SKIP)
            cols[ncols++] = (pcd_column){h->fields[i].role, h->fields[i].type, h->fields[i].offset, h->point_step};
    decode_columns(c, (const unsigned char *)f->data + h->data_offset, cols, ncols);
    return 0;
}

/* LZF expands at most 264 bytes out of a 3-byte back reference, so more than 88 bytes per compressed byte is a
 * corrupt header, refused before allocating for it. */
#define LZF_MAX_RATIO 88u

/* Checks the two size words of binary_compressed against the file and the fields; *expected gets the
 * uncompressed size that the fields need. */
static int check_compressed_sizes(const cloud_io_file *f, const pcd_header *h, uint32_t packed, uint32_t unpacked,
                                  uint64_t *expected, char *err, size_t errlen)
{
    size_t avail = f->size - h->data_offset - 8;
    uint64_t soa_bytes = 0; /* bytes per point, '_' padding excluded: PCL does not store it compressed */
    for (size_t i = 0; i < h->nfields; i++)
        if (strcmp(h->fields[i].name, "_") != 0)
            soa_bytes += h->fields[i].size * h->fields[i].count;
    if (packed > avail)
        return cloud_io_fail(err, errlen, f->path, 0,
                             "binary_compressed: header says %u compressed bytes but only %zu follow (byte offset "
                             "%zu; truncated or corrupt)",
                             packed, avail, h->data_offset + 8);
    char total[48];
    if (h->points > UINT32_MAX / (soa_bytes ? soa_bytes : 1) || h->points * soa_bytes != unpacked)
        return cloud_io_fail(err, errlen, f->path, 0,
                             "binary_compressed: header says %u uncompressed bytes but %llu points x %llu bytes "
                             "need %s",
                             unpacked, (unsigned long long)h->points, (unsigned long long)soa_bytes,
                             product_text(total, sizeof total, h->points, soa_bytes));
    if ((uint64_t)unpacked > (uint64_t)packed * LZF_MAX_RATIO)
        return cloud_io_fail(err, errlen, f->path, 0,
                             "binary_compressed: %u uncompressed bytes cannot come from %u bytes of LZF data",
                             unpacked, packed);
    *expected = unpacked;
    return 0;
}

/* Decompresses into a new buffer of exactly unpacked bytes. */
static unsigned char *decompress(const cloud_io_file *f, size_t at, uint32_t packed, uint32_t unpacked, char *err,
                                 size_t errlen)
{
    unsigned char *buf = malloc(unpacked ? unpacked : 1);
    if (!buf) {
        cloud_io_fail(err, errlen, f->path, 0, "out of memory decompressing %u bytes", unpacked);
        return NULL;
    }
    if (unpacked == 0)
        return buf;
    errno = 0;
    unsigned got = lzf_decompress(f->data + at, packed, buf, unpacked);
    if (got == unpacked)
        return buf;
    free(buf);
    if (got == 0 && errno == E2BIG)
        cloud_io_fail(err, errlen, f->path, 0,
                      "binary_compressed: LZF payload decompresses to more than the %u bytes the header says "
                      "(corrupt)",
                      unpacked);
    else if (got == 0)
        cloud_io_fail(err, errlen, f->path, 0,
                      "binary_compressed: LZF payload of %u bytes at byte offset %zu is corrupt", packed, at);
    else
        cloud_io_fail(err, errlen, f->path, 0,
                      "binary_compressed: LZF payload decompresses to %u bytes, header says %u (truncated or corrupt)",
                      got, unpacked);
    return NULL;
}

/* binary_compressed: uint32 compressed size, uint32 uncompressed size, LZF data; uncompressed, the data is
 * field-major (all values of the first field, then the second, ...), '_' padding fields left out (PCL 1.13,
 * PCDReader::readBodyBinary). */
static int read_compressed(const cloud_io_file *f, const pcd_header *h, host_cloud *c, char *err, size_t errlen)
{
    if (f->size - h->data_offset < 8)
        return cloud_io_fail(err, errlen, f->path, 0,
                             "binary_compressed: needs 8 bytes of sizes after the header (byte offset %zu), the file "
                             "has %zu",
                             h->data_offset, f->size - h->data_offset);
    uint32_t packed, unpacked;
    memcpy(&packed, f->data + h->data_offset, 4);
    memcpy(&unpacked, f->data + h->data_offset + 4, 4);
    uint64_t expected = 0;
    if (check_compressed_sizes(f, h, packed, unpacked, &expected, err, errlen) != 0)
        return -1;
    unsigned char *soa = decompress(f, h->data_offset + 8, packed, unpacked, err, errlen);
    if (!soa)
        return -1;
    if (cloud_io_cloud_alloc(c, (size_t)h->points, h->has_normals, h->has_rgb, f->path, err, errlen) != 0) {
        free(soa);
        return -1;
    }
    pcd_column cols[PCD_MAX_FIELDS];
    size_t ncols = 0, base = 0;
    for (size_t i = 0; i < h->nfields; i++) {
        const pcd_field *fd = &h->fields[i];
        if (strcmp(fd->name, "_") == 0)
            continue;
        size_t stride = fd->size * fd->count;
        if (fd->role != CLOUD_IO_SKIP)
            cols[ncols++] = (pcd_column){fd->role, fd->type, base, stride};
        base += stride * (size_t)h->points;
    }
    decode_columns(c, soa, cols, ncols);
    free(soa);
    return 0;
}

/* One ascii row: exactly row_values numbers, each valid for its field's type. The fields are walked along the row
 * rather than tabulated per value: COUNT lets a 2 KB header declare 2^27 values a row. */
static int read_ascii_row(const cloud_io_file *f, const pcd_header *h, cloud_io_text *t, host_cloud *c, size_t i,
                          char *err, size_t errlen)
{
    const char *tok;
    size_t len, k = 0, field = 0, within = 0; /* value k of the row is value `within` of field `field` */
    while ((len = cloud_io_text_token(t, &tok)) > 0) {
        if (k == h->row_values)
            return cloud_io_fail(err, errlen, f->path, t->line, "row of point %zu has more than the %zu values "
                                 "FIELDS/COUNT declare", i, h->row_values);
        const pcd_field *fd = &h->fields[field];
        cloud_io_value v;
        if (cloud_io_scalar_parse(tok, len, fd->type, &v) != 0)
            return cloud_io_fail(err, errlen, f->path, t->line,
                                 "'%.*s' is not a valid %s (field '%s' of point %zu)", (int)(len > 40 ? 40 : len),
                                 tok, cloud_io_scalar_is_integer(fd->type) ? "integer" : "number", fd->name, i);
        if (within == 0)
            cloud_io_store(c, i, fd->role, v);
        k++;
        if (++within == fd->count) {
            field++;
            within = 0;
        }
    }
    if (k != h->row_values)
        return cloud_io_fail(err, errlen, f->path, t->line, "row of point %zu has %zu values, FIELDS/COUNT declare %zu",
                             i, k, h->row_values);
    cloud_io_text_end_row(t);
    return 0;
}

/* ascii: one point per non-blank line. The rows are counted first, so a short file is reported (with the line
 * where the data ends) before the cloud is allocated. */
static int read_ascii(const cloud_io_file *f, const pcd_header *h, host_cloud *c, char *err, size_t errlen)
{
    cloud_io_text t = cloud_io_text_at(f, h->data_offset, h->data_line);
    size_t end_line = 0;
    uint64_t rows = cloud_io_text_count_rows(&t, h->points, &end_line);
    if (rows < h->points)
        return cloud_io_fail(err, errlen, f->path, end_line,
                             "data ends after %llu of %llu points (truncated ascii data)", (unsigned long long)rows,
                             (unsigned long long)h->points);
    if (cloud_io_cloud_alloc(c, (size_t)h->points, h->has_normals, h->has_rgb, f->path, err, errlen) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < c->n && rc == 0; i++) {
        cloud_io_text_next_row(&t);
        rc = read_ascii_row(f, h, &t, c, i, err, errlen);
    }
    if (rc == 0 && cloud_io_text_next_row(&t))
        rc = cloud_io_fail(err, errlen, f->path, t.line, "more data rows than the %llu POINTS declare",
                           (unsigned long long)h->points);
    if (rc != 0)
        host_cloud_free(c);
    return rc;
}

/* Reads the loaded file f into *out (zeroed by the caller). */
static int read_loaded(const cloud_io_file *f, host_cloud *out, char *err, size_t errlen)
{
    pcd_header *h = malloc(sizeof *h); /* ~20 KiB: kept off the stack */
    int rc = h ? pcd_header_parse(f, h, err, errlen) : cloud_io_fail(err, errlen, f->path, 0, "out of memory");
    host_cloud c;
    memset(&c, 0, sizeof c);
    if (rc == 0) {
        if (h->kind == PCD_ASCII)
            rc = read_ascii(f, h, &c, err, errlen);
        else if (h->kind == PCD_BINARY)
            rc = read_binary(f, h, &c, err, errlen);
        else
            rc = read_compressed(f, h, &c, err, errlen);
    }
    if (rc == 0) {
        c.width = h->width;
        c.height = h->height;
        for (int i = 0; i < 3; i++)
            c.viewpoint[i] = (float)h->viewpoint[i];
        *out = c;
    }
    free(h);
    return rc == 0 ? 0 : -1;
}

int pcd_read(const char *path, host_cloud *out, char *err, size_t errlen)
{
    return cloud_io_parse_path(path, read_loaded, out, err, errlen);
}

int pcd_read_mem(const void *data, size_t size, const char *name, host_cloud *out, char *err, size_t errlen)
{
    return cloud_io_parse_mem(data, size, name, read_loaded, out, err, errlen);
}
