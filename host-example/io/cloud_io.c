/* cloud_io.c -- the host_cloud itself: reading by format, allocation, storing decoded values, freeing. */
#define _POSIX_C_SOURCE 200809L
#include "io/internal.h"
#include "host_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void host_cloud_free(host_cloud *c)
{
    if (!c)
        return;
    free(c->xyz);
    free(c->normals);
    free(c->rgb);
    free(c->path);
    memset(c, 0, sizeof *c);
}

size_t host_cloud_count_finite(const host_cloud *c)
{
    size_t finite = 0;
    for (size_t i = 0; i < c->n; i++) {
        const float *p = c->xyz + 3 * i;
        finite += isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
    }
    return finite;
}

int cloud_io_cloud_alloc(host_cloud *c, size_t n, int with_normals, int with_rgb, const char *path, char *err,
                         size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->path = host_strdup(path);
    int ok = c->path != NULL;
    if (n > 0 && ok) {
        ok = n <= SIZE_MAX / (3 * sizeof(float));
        c->xyz = ok ? malloc(n * 3 * sizeof(float)) : NULL;
        c->normals = ok && with_normals ? malloc(n * 3 * sizeof(float)) : NULL;
        c->rgb = ok && with_rgb ? malloc(n * 3) : NULL;
        ok = ok && c->xyz && (!with_normals || c->normals) && (!with_rgb || c->rgb);
    }
    if (!ok) {
        host_cloud_free(c);
        return cloud_io_fail(err, errlen, path, 0, "out of memory for %zu points", n);
    }
    return 0;
}

void cloud_io_store(host_cloud *c, size_t i, cloud_io_role role, cloud_io_value v)
{
    switch (role) {
    case CLOUD_IO_X: case CLOUD_IO_Y: case CLOUD_IO_Z:
        c->xyz[3 * i + (size_t)(role - CLOUD_IO_X)] = (float)v.number;
        break;
    case CLOUD_IO_NX: case CLOUD_IO_NY: case CLOUD_IO_NZ:
        if (c->normals)
            c->normals[3 * i + (size_t)(role - CLOUD_IO_NX)] = (float)v.number;
        break;
    case CLOUD_IO_RGB_PACKED:
        if (c->rgb) {
            c->rgb[3 * i + 0] = (uint8_t)(v.bits >> 16);
            c->rgb[3 * i + 1] = (uint8_t)(v.bits >> 8);
            c->rgb[3 * i + 2] = (uint8_t)v.bits;
        }
        break;
    case CLOUD_IO_RED: case CLOUD_IO_GREEN: case CLOUD_IO_BLUE:
        if (c->rgb)
            c->rgb[3 * i + (size_t)(role - CLOUD_IO_RED)] = (uint8_t)v.bits;
        break;
    case CLOUD_IO_SKIP:
        break;
    }
}

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
