/* cloud_read.c -- cloud_read: the reader picked by the file's extension, else by its first bytes, and the checks
 * every format shares (a cloud with points, some of them finite). */
#define _POSIX_C_SOURCE 200809L
#include "io/internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* 1 when path ends in ext, ignoring case. */
static int has_extension(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && strcasecmp(path + n - e, ext) == 0;
}

typedef int (*cloud_reader)(const char *, host_cloud *, char *, size_t);

/* Picks the reader from the first bytes: PLY starts with "ply", a PCD header with a comment or a keyword. */
static cloud_reader reader_by_magic(const char *path, char *err, size_t errlen)
{
    char head[16] = {0};
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        cloud_io_fail(err, errlen, path, 0, "cannot open (%s)", strerror(errno));
        return NULL;
    }
    size_t got = fread(head, 1, sizeof head - 1, fp);
    fclose(fp);
    if (got >= 4 && strncmp(head, "ply", 3) == 0 && (head[3] == '\n' || head[3] == '\r'))
        return ply_read;
    if (head[0] == '#' || strncmp(head, "VERSION", 7) == 0 || strncmp(head, "FIELDS", 6) == 0)
        return pcd_read;
    cloud_io_fail(err, errlen, path, 0,
                  got == 0 ? "file is empty"
                           : "unknown format: name ends in neither .pcd nor .ply and the content starts with "
                             "neither 'ply' nor a PCD header");
    return NULL;
}

int cloud_read(const char *path, host_cloud *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    cloud_reader read = has_extension(path, ".pcd")   ? pcd_read
                        : has_extension(path, ".ply") ? ply_read
                                                      : reader_by_magic(path, err, errlen);
    if (!read || read(path, out, err, errlen) != 0)
        return -1;
    /* the readers accept a valid empty file; the pipeline has nothing to work on */
    if (out->n == 0) {
        host_cloud_free(out);
        return cloud_io_fail(err, errlen, path, 0, "has no points");
    }
    if (host_cloud_count_finite(out) == 0) {
        size_t n = out->n;
        host_cloud_free(out);
        return cloud_io_fail(err, errlen, path, 0, "has %zu points but none with finite x y z", n);
    }
    return 0;
}
