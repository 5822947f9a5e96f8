/* mesh_io.h -- triangle meshes from binary PLY files (vertex element x y z, then a face element whose
 * vertex_indices list holds three integer indices a face), as the Stanford models of the Bologna data are stored.
 *
 * Every count is checked against the bytes the file holds before anything is allocated; a face that is not a
 * triangle, an index that is negative, not whole or not below the vertex count, a face element before the vertex
 * element, an ascii file, or data that ends early is an error naming the file, the face and what was wrong, e.g.
 *   "bunny.ply: face 12: vertex index 40000 is out of range (the mesh has 34834 vertices)".
 * On failure nothing leaks and *out is left zeroed. */
#ifndef GRIP_HOST_MESH_IO_H
#define GRIP_HOST_MESH_IO_H

#include <stddef.h>
#include <stdint.h>

#include "io/cloud_io.h"

/* A triangle mesh. Every member is malloc'd and owned by the struct: free with host_mesh_free(). */
typedef struct host_mesh {
    host_cloud vertices; /* the vertex element as ply_read reads it (xyz, normals and colours when present) */
    uint32_t *triangles; /* n_triangles x 3 indices into vertices */
    size_t n_triangles;
} host_mesh;

/* Reads a binary PLY mesh (at least one vertex and one face). 0, or -1 with a one-line message in err. */
int mesh_read(const char *path, host_mesh *out, char *err, size_t errlen);
/* The same on a file already in memory (data[0..size), named `name` in messages). */
int mesh_read_mem(const void *data, size_t size, const char *name, host_mesh *out, char *err, size_t errlen);

/* Frees every member and zeroes the struct; safe on a zeroed struct and on NULL. */
void host_mesh_free(host_mesh *m);

#endif
