/* pcd_write.c -- writes a host_cloud as PCD v0.7: FIELDS x y z [normal_x normal_y normal_z] [rgb], all F4 but rgb
 * (U4, 0x00RRGGBB), DATA ascii or binary. Floats are written with 9 significant digits, so ascii reads back bit for
 * bit; NaN points of organized clouds are written as nan. */
#include "io/internal.h"

/* One header line per keyword: the x y z entries, then normals' and colour's when the cloud has them. */
static void write_header_line(FILE *fp, const host_cloud *c, const char *keyword, const char *xyz,
                              const char *normals, const char *rgb)
{
    fprintf(fp, "%s %s%s%s\n", keyword, xyz, c->normals ? normals : "", c->rgb ? rgb : "");
}

static void write_header(FILE *fp, const host_cloud *c, uint32_t width, uint32_t height, int binary)
{
    fputs("# .PCD v0.7 - Point Cloud Data file format\nVERSION 0.7\n", fp);
    write_header_line(fp, c, "FIELDS", "x y z", " normal_x normal_y normal_z", " rgb");
    write_header_line(fp, c, "SIZE", "4 4 4", " 4 4 4", " 4");
    write_header_line(fp, c, "TYPE", "F F F", " F F F", " U");
    write_header_line(fp, c, "COUNT", "1 1 1", " 1 1 1", " 1");
    fprintf(fp, "WIDTH %u\nHEIGHT %u\nVIEWPOINT %.9g %.9g %.9g 1 0 0 0\nPOINTS %zu\nDATA %s\n", width, height,
            c->viewpoint[0], c->viewpoint[1], c->viewpoint[2], c->n,
            binary ? "binary" : "ascii");
}

static uint32_t packed_rgb(const uint8_t *rgb)
{
    return (uint32_t)rgb[0] << 16 | (uint32_t)rgb[1] << 8 | rgb[2];
}

static void write_ascii_point(FILE *fp, const host_cloud *c, size_t i)
{
    const float *p = c->xyz + 3 * i;
    fprintf(fp, "%.9g %.9g %.9g", p[0], p[1], p[2]);
    if (c->normals) {
        const float *q = c->normals + 3 * i;
        fprintf(fp, " %.9g %.9g %.9g", q[0], q[1], q[2]);
    }
    if (c->rgb)
        fprintf(fp, " %u", (unsigned)packed_rgb(c->rgb + 3 * i));
    fputc('\n', fp);
}

static void write_binary_point(FILE *fp, const host_cloud *c, size_t i)
{
    for (int k = 0; k < 3; k++)
        cloud_io_put_f32(fp, c->xyz[3 * i + (size_t)k]);
    for (int k = 0; c->normals && k < 3; k++)
        cloud_io_put_f32(fp, c->normals[3 * i + (size_t)k]);
    if (c->rgb)
        cloud_io_put_u32(fp, packed_rgb(c->rgb + 3 * i));
}

int pcd_write(const char *path, const host_cloud *c, int binary, char *err, size_t errlen)
{
    uint32_t width, height;
    if (cloud_io_check_writable(c, path, &width, &height, err, errlen) != 0)
        return -1;
    FILE *fp = cloud_io_create(path, err, errlen);
    if (!fp)
        return -1;
    write_header(fp, c, width, height, binary);
    for (size_t i = 0; i < c->n; i++) {
        if (binary)
            write_binary_point(fp, c, i);
        else
            write_ascii_point(fp, c, i);
    }
    return cloud_io_finish(fp, path, err, errlen);
}
