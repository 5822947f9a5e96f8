/* ply_header.h -- a PLY file's header, parsed and checked. Internal to cloud_io (see cloud_io.h). */
#ifndef GRIP_HOST_PLY_HEADER_H
#define GRIP_HOST_PLY_HEADER_H

#include "io/internal.h"

#define PLY_MAX_ELEMENTS 16
#define PLY_MAX_PROPERTIES 32
#define PLY_NAME_MAX 32 /* longer names are kept truncated: only the vertex roles' short names are ever matched */

typedef enum ply_format { PLY_ASCII, PLY_BINARY_LE, PLY_BINARY_BE } ply_format;

typedef struct ply_property {
    char name[PLY_NAME_MAX];
    cloud_io_scalar type;       /* the value's type; a list's item type */
    cloud_io_scalar count_type; /* CLOUD_IO_NONE for a scalar property, else the list length's type */
    cloud_io_role role;         /* vertex properties only */
} ply_property;

typedef struct ply_element {
    char name[PLY_NAME_MAX];
    uint64_t count;
    ply_property props[PLY_MAX_PROPERTIES];
    size_t nprops;
    size_t line; /* header line of its "element" */
} ply_element;

typedef struct ply_header {
    ply_format format;
    ply_element elements[PLY_MAX_ELEMENTS];
    size_t nelements;
    size_t vertex;      /* index of the vertex element */
    int has_normals;    /* nx ny nz all present as scalars */
    int has_rgb;        /* red green blue all present as uchar */
    size_t data_offset; /* byte offset of the first byte after end_header */
    size_t data_line;   /* line number of that byte */
} ply_header;

/* Parses the header of f. Returns 0, or -1 with "<file>:<line>: <what is wrong>" in err. */
int ply_header_parse(const cloud_io_file *f, ply_header *h, char *err, size_t errlen);

/* Bytes of a property in one binary row, counting a list's length but none of its items. */
size_t ply_property_min_size(const ply_property *p);

#endif
