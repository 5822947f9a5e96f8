/* cloud_io.h -- grip-host's point-cloud files: PCL's PCD (v0.7, also .6/.5 headers; ascii, binary,
 * binary_compressed) and PLY (ascii, binary_little_endian, binary_big_endian).
 *
 * Every function returns 0 on success and -1 on failure, with a one-line message in err (when err is not NULL)
 * that names the file and, where it applies, the header line or byte offset and what was expected, e.g.
 *   "scene.pcd:7: FIELDS has 4 entries but SIZE has 3".
 * On failure nothing leaks and *out is left zeroed. */
#ifndef GRIP_HOST_CLOUD_IO_H
#define GRIP_HOST_CLOUD_IO_H

#include <stddef.h>
#include <stdint.h>

/* A cloud as read from a file. Every member is malloc'd and owned by the struct: free with host_cloud_free(). */
typedef struct host_cloud {
    uint32_t width, height; /* height 1 = unorganized */
    size_t n;               /* width*height points; NaN rows are kept (organized clouds) */
    float *xyz;             /* n x 3 */
    float *normals;         /* n x 3, or NULL (PCD normal_x normal_y normal_z / PLY nx ny nz) */
    uint8_t *rgb;           /* n x 3, or NULL (PCD rgb or rgba, packed float or uint32 / PLY red green blue) */
    char *path;             /* copy of the file name, for messages */
    float viewpoint[3];     /* where the sensor was, in the cloud's frame (PCD VIEWPOINT; 0 0 0 otherwise) */
} host_cloud;

/* Reads a .pcd or .ply file (chosen by extension, ignoring case, else by the file's first bytes). A cloud the
 * pipeline cannot use is an error here although the file is valid: no points ("<file>: has no points"), or no point
 * with finite x y z ("<file>: has N points but none with finite x y z"); pcd_read/ply_read accept both. */
int cloud_read(const char *path, host_cloud *out, char *err, size_t errlen);

/* Reads one PCD file. Any FIELDS set with x y z (any TYPE/SIZE: F4 F8 U1..U8 I1..I8, COUNT >= 1, the first value
 * of a field is used); normal_x/y/z (all three) and rgb/rgba (4 bytes, packed) are kept, other fields skipped.
 * POINTS must equal WIDTH*HEIGHT. Binary data is little-endian, as PCL writes it on x86. A 0-point cloud is
 * accepted (n = 0, xyz = NULL). */
int pcd_read(const char *path, host_cloud *out, char *err, size_t errlen);

/* Reads one PLY file: the vertex element's x y z (any numeric type), nx ny nz when all three are there, red green
 * blue when all three are uchar; other properties (lists too) and other elements are skipped. The cloud is
 * unorganized (width n, height 1). 0 vertices are accepted (n = 0, xyz = NULL). */
int ply_read(const char *path, host_cloud *out, char *err, size_t errlen);

/* pcd_read and ply_read on a file already in memory: data[0..size) is the whole file, name stands for its path in
 * messages and in out->path. data need not be NUL-terminated; the readers work on their own copy. */
int pcd_read_mem(const void *data, size_t size, const char *name, host_cloud *out, char *err, size_t errlen);
int ply_read_mem(const void *data, size_t size, const char *name, host_cloud *out, char *err, size_t errlen);

/* Writes c as PCD v0.7 (FIELDS x y z [normal_x normal_y normal_z] [rgb], F4/U4), DATA ascii (binary = 0) or
 * binary (binary != 0). width x height must equal n (0 x 0 is written as n x 1). Floats are written so that they
 * read back bit for bit. On failure no file is left behind. */
int pcd_write(const char *path, const host_cloud *c, int binary, char *err, size_t errlen);

/* Writes c as PLY (float x y z [nx ny nz] [uchar red green blue]), ascii (binary = 0) or binary_little_endian
 * (binary != 0); the organization (width x height) is not kept. Same checks and guarantees as pcd_write. */
int ply_write(const char *path, const host_cloud *c, int binary, char *err, size_t errlen);

/* Frees every member and zeroes the struct; safe on a zeroed struct and on NULL. */
void host_cloud_free(host_cloud *c);

/* Points whose x, y and z are all finite. */
size_t host_cloud_count_finite(const host_cloud *c);

#endif
