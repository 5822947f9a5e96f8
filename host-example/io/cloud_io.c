/* cloud_io.c -- the host_cloud itself: allocation, storing decoded values, counting, freeing. What the readers
 * build on; cloud_read.c picks the reader. */
#include "io/internal.h"
#include "host_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
