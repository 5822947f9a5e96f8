/* ply_rows.h -- the PLY reader's row walking, shared by ply_read.c (the vertex cloud) and mesh_read.c (the faces
 * after it). Internal to io/ (see cloud_io.h and mesh_io.h). */
#ifndef GRIP_HOST_PLY_ROWS_H
#define GRIP_HOST_PLY_ROWS_H

#include "io/ply_header.h"

/* A cursor in binary PLY data. */
typedef struct ply_bytes {
    const unsigned char *p, *begin, *end;
    int swap; /* big-endian data on this little-endian host */
} ply_bytes;

/* Walks one binary row of e, storing the roles' values as point i of c (c NULL: skip). Returns -1 when the row
 * runs past the end of the data, -2 when a list's length is negative (*bad_list names it, b->p is at its
 * length). */
int ply_walk_binary_row(const ply_element *e, ply_bytes *b, host_cloud *c, size_t i, const ply_property **bad_list);

/* The message for a row that ply_walk_binary_row refused with rc; returns -1. */
int ply_binary_bad_row(const cloud_io_file *f, const ply_element *e, uint64_t row, const ply_bytes *b, int rc,
                       const ply_property *bad_list, char *err, size_t errlen);

/* Refuses (-1 with a message) a count of e whose rows cannot fit in what is left of the data after b, before
 * anything is allocated for it; 0 when they may. */
int ply_check_binary_room(const cloud_io_file *f, const ply_element *e, const ply_bytes *b, char *err, size_t errlen);

/* Reads the vertex element of the parsed file into *out (zeroed first; unorganized), skipping the elements before
 * it. For binary data *at (when not NULL) gets the position just after the vertex rows; it is left alone for
 * ascii. 0, or -1 with the reason in err (nothing left allocated). */
int ply_read_vertices(const cloud_io_file *f, const ply_header *h, host_cloud *out, ply_bytes *at, char *err,
                      size_t errlen);

#endif
