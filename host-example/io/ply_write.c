/* ply_write.c -- writes a host_cloud as PLY: element vertex with float x y z [nx ny nz] [uchar red green blue],
 * ascii or binary_little_endian. Floats are written with 9 significant digits, so ascii reads back bit for bit. */
#include "io/internal.h"

static void write_header(FILE *fp, const host_cloud *c, int binary)
{
    fprintf(fp, "ply\nformat %s 1.0\ncomment written by grip-host\nelement vertex %zu\n",
            binary ? "binary_little_endian" : "ascii", c->n);
    fputs("property float x\nproperty float y\nproperty float z\n", fp);
    if (c->normals)
        fputs("property float nx\nproperty float ny\nproperty float nz\n", fp);
    if (c->rgb)
        fputs("property uchar red\nproperty uchar green\nproperty uchar blue\n", fp);
    fputs("end_header\n", fp);
}

static void write_ascii_vertex(FILE *fp, const host_cloud *c, size_t i)
{
    const float *p = c->xyz + 3 * i;
    fprintf(fp, "%.9g %.9g %.9g", p[0], p[1], p[2]);
    if (c->normals) {
        const float *q = c->normals + 3 * i;
        fprintf(fp, " %.9g %.9g %.9g", q[0], q[1], q[2]);
    }
    if (c->rgb) {
        const uint8_t *rgb = c->rgb + 3 * i;
        fprintf(fp, " %u %u %u", (unsigned)rgb[0], (unsigned)rgb[1], (unsigned)rgb[2]);
    }
    fputc('\n', fp);
}

static void write_binary_vertex(FILE *fp, const host_cloud *c, size_t i)
{
    for (int k = 0; k < 3; k++)
        cloud_io_put_f32(fp, c->xyz[3 * i + (size_t)k]);
    for (int k = 0; c->normals && k < 3; k++)
        cloud_io_put_f32(fp, c->normals[3 * i + (size_t)k]);
    if (c->rgb)
        fwrite(c->rgb + 3 * i, 1, 3, fp);
}

int ply_write(const char *path, const host_cloud *c, int binary, char *err, size_t errlen)
{
    uint32_t width, height;
    if (cloud_io_check_writable(c, path, &width, &height, err, errlen) != 0)
        return -1;
    FILE *fp = cloud_io_create(path, err, errlen);
    if (!fp)
        return -1;
    write_header(fp, c, binary);
    for (size_t i = 0; i < c->n; i++) {
        if (binary)
            write_binary_vertex(fp, c, i);
        else
            write_ascii_vertex(fp, c, i);
    }
    return cloud_io_finish(fp, path, err, errlen);
}
