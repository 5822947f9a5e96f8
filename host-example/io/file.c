/* file.c -- point-cloud files: read whole into memory, created and checked when written; and the one-line
 * error messages of cloud_io. */
#define _POSIX_C_SOURCE 200809L
#include "io/internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cloud_io_fail(char *err, size_t errlen, const char *path, size_t line, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return -1;
    int used = line ? snprintf(err, errlen, "%s:%zu: ", path, line) : snprintf(err, errlen, "%s: ", path);
    if (used >= 0 && (size_t)used < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + used, errlen - (size_t)used, fmt, ap);
        va_end(ap);
        /* the message quotes tokens from the file: keep it one printable line whatever the file holds */
        for (char *p = err + used; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
    }
    return -1;
}

/* Reads exactly size bytes; a short read is an error (the file changed under us or an I/O error). */
static int read_whole(FILE *fp, cloud_io_file *f, char *err, size_t errlen)
{
    f->data = malloc(f->size + 1);
    if (!f->data)
        return cloud_io_fail(err, errlen, f->path, 0, "out of memory reading %zu bytes", f->size);
    size_t got = fread(f->data, 1, f->size, fp);
    if (got != f->size) {
        free(f->data);
        f->data = NULL;
        return cloud_io_fail(err, errlen, f->path, 0, "read %zu of %zu bytes (%s)", got, f->size,
                             ferror(fp) ? strerror(errno) : "file shrank while reading");
    }
    f->data[f->size] = '\0';
    return 0;
}

int cloud_io_file_load(const char *path, cloud_io_file *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return cloud_io_fail(err, errlen, path, 0, "cannot open (%s)", strerror(errno));
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(fp);
        return cloud_io_fail(err, errlen, path, 0, "not a regular file");
    }
    if (st.st_size == 0) {
        fclose(fp);
        return cloud_io_fail(err, errlen, path, 0, "file is empty");
    }
    f->size = (size_t)st.st_size;
    int rc = read_whole(fp, f, err, errlen);
    fclose(fp);
    return rc;
}

int cloud_io_file_from_mem(const char *path, const void *data, size_t size, cloud_io_file *f, char *err,
                           size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    if (size == 0)
        return cloud_io_fail(err, errlen, path, 0, "file is empty");
    if (size == SIZE_MAX)
        return cloud_io_fail(err, errlen, path, 0, "out of memory reading %zu bytes", size);
    f->data = malloc(size + 1);
    if (!f->data)
        return cloud_io_fail(err, errlen, path, 0, "out of memory reading %zu bytes", size);
    memcpy(f->data, data, size);
    f->data[size] = '\0';
    f->size = size;
    return 0;
}

void cloud_io_file_free(cloud_io_file *f)
{
    free(f->data);
    memset(f, 0, sizeof *f);
}

int cloud_io_check_writable(const host_cloud *c, const char *path, uint32_t *width, uint32_t *height, char *err,
                            size_t errlen)
{
    if (c->n > 0 && !c->xyz)
        return cloud_io_fail(err, errlen, path, 0, "cloud has %zu points but no xyz", c->n);
    *width = c->width;
    *height = c->height;
    if (*width == 0 && *height == 0) {
        if (c->n > UINT32_MAX)
            return cloud_io_fail(err, errlen, path, 0, "cloud of %zu points is too large to write", c->n);
        *width = (uint32_t)c->n;
        *height = 1;
    }
    if ((uint64_t)*width * *height != c->n)
        return cloud_io_fail(err, errlen, path, 0, "cloud is %u x %u but has %zu points", *width, *height, c->n);
    return 0;
}

FILE *cloud_io_create(const char *path, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        cloud_io_fail(err, errlen, path, 0, "cannot create (%s)", strerror(errno));
    return fp;
}

int cloud_io_finish(FILE *fp, const char *path, char *err, size_t errlen)
{
    int failed = ferror(fp);
    int saved = errno;
    if (fclose(fp) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    if (!failed)
        return 0;
    remove(path);
    return cloud_io_fail(err, errlen, path, 0, "write failed (%s)", strerror(saved));
}

void cloud_io_put_u32(FILE *fp, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    fwrite(b, 1, 4, fp);
}

void cloud_io_put_f32(FILE *fp, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    cloud_io_put_u32(fp, bits);
}

static int parse_loaded(int loaded, cloud_io_file *f, cloud_io_parse_fn parse, host_cloud *out, char *err,
                        size_t errlen)
{
    if (loaded != 0)
        return -1;
    int rc = parse(f, out, err, errlen);
    cloud_io_file_free(f);
    return rc;
}

int cloud_io_parse_path(const char *path, cloud_io_parse_fn parse, host_cloud *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    cloud_io_file f;
    return parse_loaded(cloud_io_file_load(path, &f, err, errlen), &f, parse, out, err, errlen);
}

int cloud_io_parse_mem(const void *data, size_t size, const char *name, cloud_io_parse_fn parse, host_cloud *out,
                       char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    cloud_io_file f;
    return parse_loaded(cloud_io_file_from_mem(name, data, size, &f, err, errlen), &f, parse, out, err, errlen);
}
