/* pcd_header.h -- a PCD file's header, parsed and checked. Internal to cloud_io (see cloud_io.h). */
#ifndef GRIP_HOST_PCD_HEADER_H
#define GRIP_HOST_PCD_HEADER_H

#include "io/internal.h"

#define PCD_MAX_FIELDS 128
#define PCD_NAME_MAX 64

typedef enum pcd_data_kind { PCD_ASCII, PCD_BINARY, PCD_BINARY_COMPRESSED } pcd_data_kind;

typedef struct pcd_field {
    char name[PCD_NAME_MAX];
    cloud_io_scalar type;
    size_t size;        /* bytes per value */
    uint32_t count;     /* values per point */
    cloud_io_role role; /* of its first value; further values (COUNT > 1) are skipped */
    size_t offset;      /* byte offset in a binary point record */
} pcd_field;

typedef struct pcd_header {
    pcd_field fields[PCD_MAX_FIELDS];
    size_t nfields;
    uint32_t width, height;
    uint64_t points; /* = width * height, checked */
    pcd_data_kind kind;
    size_t point_step; /* bytes per binary point record, '_' padding included */
    size_t row_values; /* values per ascii row, '_' padding included */
    int has_normals;   /* normal_x, normal_y and normal_z are all present */
    int has_rgb;       /* an rgb or rgba field of 4 bytes */
    double viewpoint[3]; /* VIEWPOINT's translation: the sensor origin (0 0 0 when absent) */
    size_t data_offset; /* byte offset of the first byte after the DATA line */
    size_t data_line;   /* line number of that byte */
} pcd_header;

/* Parses the header of f. Returns 0, or -1 with "<file>:<line>: <what is wrong>" in err. */
int pcd_header_parse(const cloud_io_file *f, pcd_header *h, char *err, size_t errlen);

#endif
