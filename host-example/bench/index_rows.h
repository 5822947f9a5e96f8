/* index_rows.h -- the rows `grip-host bench index` searches: SHOT-like descriptors made from a counter-based hash,
 * so that any rank makes any range of rows by itself, the same whatever the number of ranks, or rows read from a
 * raw float32 file (rows x dim, little-endian; `gzip -dc model_shot.f32.gz` gives one).
 *
 * Generated rows (after knn_bench_rows.h's "shot"): row r is u^4 / |u^4|, u uniform in [0, 1) from
 * hash(seed, r, column); query q is a noisy copy of row hash(seed, q) mod n: Gaussian noise of 0.25 x that row's
 * standard deviation, clamped at 0, renormalised. Every row is made in the same order of operations, so that a
 * row is bit for bit the same on every rank. */
#ifndef GRIP_HOST_BENCH_INDEX_ROWS_H
#define GRIP_HOST_BENCH_INDEX_ROWS_H

#include <stddef.h>
#include <stdint.h>

/* Rows [first, first + count) of the generated reference set into out (count x dim, caller-allocated). */
void index_rows_reference(uint64_t seed, uint32_t dim, uint64_t first, uint64_t count, float *out);
/* Queries [0, m) against a generated reference set of n rows into out (m x dim, caller-allocated). */
void index_rows_queries(uint64_t seed, uint32_t dim, uint64_t n, uint64_t m, float *out);

/* The rows of a raw float32 file of `dim` columns: *rows_out, how many it holds (0 and an error when its size is
 * not a multiple of a row). Returns 0, or -1 with the reason in err. */
int index_rows_count_file(const char *path, uint32_t dim, uint64_t *rows_out, char *err, size_t errlen);
/* Reads rows [first, first + count) of such a file into out (count x dim, caller-allocated). 0, or -1 and err. */
int index_rows_read_file(const char *path, uint32_t dim, uint64_t first, uint64_t count, float *out, char *err,
                         size_t errlen);

#endif
