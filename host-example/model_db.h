/* model_db.h -- grip-host's model database file (`grip-host models` writes one, `run --models` reads it): a
 * model set (model_set.h) stored so that a later process recognises the models without describing them again.
 * The format is specified in docs/model-database.md: a 64-byte header (magic, format version, the ABI of the plugin
 * that described the models, counts, the file's length, a checksum), the descriptor settings as text, one record a
 * model (cloud and features), then every model's descriptor rows in one block, which is read straight into the
 * set's reference rows (the index stage's input). Little-endian, every section 8-byte aligned.
 *
 * Whether the models suit a run (ABI, settings) is the pipeline's question (pipeline_check_models); the reader
 * checks that the file is whole and consistent. Every function returns 0, or -1 with one line in err that names
 * the file, e.g. "models.grip: truncated: the header says 81920 bytes, the file has 4096". */
#ifndef GRIP_HOST_MODEL_DB_H
#define GRIP_HOST_MODEL_DB_H

#include <stddef.h>
#include <stdint.h>
#include "model_set.h"

#define MODEL_DB_MAGIC "GRIPMDB\0" /* 8 bytes */
#define MODEL_DB_FORMAT_VERSION 1u
#define MODEL_DB_HEADER_BYTES 64u
#define MODEL_DB_CHECKSUM_OFFSET 56u

/* Writes s to path (through path.tmp, renamed when complete: no partial file is left behind). A set of no model
 * is refused. */
int model_db_write(const char *path, const model_set *s, char *err, size_t errlen);

/* Reads the file at path into *out (free with model_set_free); on failure *out is zeroed. */
int model_db_read(const char *path, model_set *out, char *err, size_t errlen);

/* model_db_read on a file already in memory: data[0..size), named `name` in messages. */
int model_db_read_mem(const void *data, size_t size, const char *name, model_set *out, char *err, size_t errlen);

/* The checksum the header holds: FNV-1a (64 bits) over the whole file with the checksum's 8 bytes read as zeros.
 * size must be at least MODEL_DB_HEADER_BYTES. */
uint64_t model_db_checksum(const void *data, size_t size);

#endif
