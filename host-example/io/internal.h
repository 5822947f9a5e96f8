/* internal.h -- what the PCD and PLY readers and writers share: the file in memory, error messages,
 * scalar types, text rows and the cloud's allocation. Not part of grip-host's API (see cloud_io.h). */
#ifndef GRIP_HOST_CLOUD_IO_INTERNAL_H
#define GRIP_HOST_CLOUD_IO_INTERNAL_H

#include "io/cloud_io.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- the whole file in memory ------------------------------------------------------------------------------ */

typedef struct cloud_io_file {
    const char *path; /* borrowed from the caller */
    char *data;       /* size bytes plus a terminating NUL, so text parsing can never run off the end */
    size_t size;
} cloud_io_file;

/* Reads path into f (free with cloud_io_file_free). An empty file is an error ("<path>: file is empty"). */
int cloud_io_file_load(const char *path, cloud_io_file *f, char *err, size_t errlen);
/* The same from memory: copies data[0..size) (adding the NUL) under the name path. */
int cloud_io_file_from_mem(const char *path, const void *data, size_t size, cloud_io_file *f, char *err,
                           size_t errlen);
void cloud_io_file_free(cloud_io_file *f);

/* A format's parser of a loaded file; 0 on success, else -1 with err set. */
typedef int (*cloud_io_parse_fn)(const cloud_io_file *f, host_cloud *out, char *err, size_t errlen);
/* Loads path (cloud_io_parse_path) or copies data[0..size) under name (cloud_io_parse_mem), then parses it: a
 * format's whole read, written once for both readers. *out is zeroed first; the loaded bytes are freed before
 * the call returns. */
int cloud_io_parse_path(const char *path, cloud_io_parse_fn parse, host_cloud *out, char *err, size_t errlen);
int cloud_io_parse_mem(const void *data, size_t size, const char *name, cloud_io_parse_fn parse, host_cloud *out,
                       char *err, size_t errlen);

/* ---- writing ------------------------------------------------------------------------------------------------ */

/* Checks that c can be written: xyz present when n > 0, and width x height = n (width = height = 0 is taken as
 * n x 1). *width and *height get the dimensions to write. */
int cloud_io_check_writable(const host_cloud *c, const char *path, uint32_t *width, uint32_t *height, char *err,
                            size_t errlen);
/* Opens path for writing (binary mode); NULL with a message on failure. */
FILE *cloud_io_create(const char *path, char *err, size_t errlen);
/* Closes fp, checking every earlier write; on failure removes the partial file and returns -1 with a message. */
int cloud_io_finish(FILE *fp, const char *path, char *err, size_t errlen);
/* Appends v to fp as 4 little-endian bytes (PLY binary_little_endian, PCD binary on this little-endian host). */
void cloud_io_put_f32(FILE *fp, float v);
void cloud_io_put_u32(FILE *fp, uint32_t v);

/* ---- errors -------------------------------------------------------------------------------------------------- */

/* Writes "<path>:<line>: <message>" (or "<path>: <message>" when line is 0) into err; returns -1. */
int cloud_io_fail(char *err, size_t errlen, const char *path, size_t line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(__printf__, 5, 6)))
#endif
    ;

/* ---- scalar types of PCD fields and PLY properties ----------------------------------------------------------- */

typedef enum cloud_io_scalar {
    CLOUD_IO_NONE = 0,
    CLOUD_IO_I8, CLOUD_IO_U8, CLOUD_IO_I16, CLOUD_IO_U16, CLOUD_IO_I32, CLOUD_IO_U32,
    CLOUD_IO_I64, CLOUD_IO_U64, CLOUD_IO_F32, CLOUD_IO_F64
} cloud_io_scalar;

/* One value as read: its number, and its low 32 bits -- the raw bit pattern of a float, an integer's value modulo
 * 2^32 (packed PCD colours are floats or uint32 whose bits, not value, hold 0x00RRGGBB). */
typedef struct cloud_io_value {
    double number;
    uint32_t bits;
} cloud_io_value;

size_t cloud_io_scalar_size(cloud_io_scalar t);
int cloud_io_scalar_is_integer(cloud_io_scalar t);
/* Decodes one value from bytes; swap != 0 for big-endian data on this little-endian host. */
cloud_io_value cloud_io_scalar_load(const unsigned char *p, cloud_io_scalar t, int swap);
/* Parses one text token of len bytes as type t (nan/inf accepted for floating types). Returns 0, or -1 when the
 * token is not a number of that type (out of range included). */
int cloud_io_scalar_parse(const char *tok, size_t len, cloud_io_scalar t, cloud_io_value *v);
/* Parses a header count: decimal digits only (leading zeros allowed), no larger than max, exactly (no detour through a double, which
 * rounds 2^64 - 1 up to 2^64). Returns 0, or -1 when the token is anything else. */
int cloud_io_parse_count(const char *tok, size_t len, uint64_t max, uint64_t *out);

/* ---- where a value goes in the cloud ------------------------------------------------------------------------- */

typedef enum cloud_io_role {
    CLOUD_IO_SKIP = 0,
    CLOUD_IO_X, CLOUD_IO_Y, CLOUD_IO_Z,
    CLOUD_IO_NX, CLOUD_IO_NY, CLOUD_IO_NZ,
    CLOUD_IO_RGB_PACKED,                  /* PCD rgb/rgba: bits 0x00RRGGBB */
    CLOUD_IO_RED, CLOUD_IO_GREEN, CLOUD_IO_BLUE /* PLY red green blue */
} cloud_io_role;

/* Stores v as point i's value of role (a no-op for CLOUD_IO_SKIP, or for normals/colours the cloud lacks). */
void cloud_io_store(host_cloud *c, size_t i, cloud_io_role role, cloud_io_value v);

/* Allocates a cloud of n points (xyz always, normals/rgb when asked; n = 0 leaves them NULL) and copies path.
 * On failure frees what it allocated, zeroes *c and returns -1 with a message. */
int cloud_io_cloud_alloc(host_cloud *c, size_t n, int with_normals, int with_rgb, const char *path, char *err,
                         size_t errlen);

/* ---- text rows: whitespace-separated tokens, one record per line (PCD headers and ascii data, PLY) ---------- */

typedef struct cloud_io_text {
    const char *p, *end;
    size_t line; /* 1-based line number of p */
} cloud_io_text;

/* Starts a cursor at byte offset of f; line is the line number there. */
cloud_io_text cloud_io_text_at(const cloud_io_file *f, size_t offset, size_t line);
/* Skips blank lines; returns 1 when a non-blank line starts at t->p, 0 at the end of the data. */
int cloud_io_text_next_row(cloud_io_text *t);
/* Next token of the current line into *tok; returns its length, 0 at the end of the line (not consumed). */
size_t cloud_io_text_token(cloud_io_text *t, const char **tok);
/* Moves past the end of the current line. */
void cloud_io_text_end_row(cloud_io_text *t);
/* Counts non-blank lines from t onward, stopping once it reaches limit; *last_line gets the line number where the
 * count stopped (the end of the data when fewer than limit). Does not move t. */
uint64_t cloud_io_text_count_rows(const cloud_io_text *t, uint64_t limit, size_t *last_line);
/* Moves t past up to limit non-blank lines; returns how many it passed (fewer at the end of the data). */
uint64_t cloud_io_text_skip_rows(cloud_io_text *t, uint64_t limit);

#endif
