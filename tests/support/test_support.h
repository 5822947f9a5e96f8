/* test_support.h -- the little the Check tests share: where the real data is, reading its clouds and PCL's
 * gzip'd reference arrays, a context, and a main() that runs one suite. */
#ifndef GRIP_TEST_SUPPORT_H
#define GRIP_TEST_SUPPORT_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include "plugin.h"
#include "cloud_io.h"
#include "core/ctx.h"
#include "group/cluster.h"

/* Exit code that ctest reads as "skipped". */
#define GRIP_TEST_SKIP 77

/* The shared real-data folder ($GRIP_DATA, else ../shared/data beside the source tree), or NULL when absent. */
const char *grip_test_data_dir(void);

/* Writes <data dir>/<rel> into buf. Returns 1 when that file exists, 0 otherwise (also when there is no data). */
int grip_test_data_path(char *buf, size_t n, const char *rel);

/* Reads a whole file, gunzipping it when it is gzip'd. Returns malloc'd bytes (free()), NULL on failure. A NUL
 * follows the *bytes bytes, so that a text file can be read as a C string. */
void *grip_test_read_file(const char *path, size_t *bytes);

/* Readers of the shared data for a test: each fails the running test (ck_assert) on any problem, naming the file.
 *  - grip_test_read_cloud: the cloud <data dir>/<rel> (PCD or PLY, as grip-host reads it). Free with
 *    host_cloud_free().
 *  - grip_test_read_rows: the file <data dir>/<rel>, gunzipped when gzip'd, which must hold whole rows of
 *    row_bytes; *rows gets their number. malloc'd (free()).
 *  - grip_test_read_correspondences: PCL's correspondences.tsv at <data dir>/<rel> (a header line, then per line
 *    the scene keypoint, the model keypoint and the squared distance); *n gets their number. malloc'd (free()). */
host_cloud grip_test_read_cloud(const char *rel);
void *grip_test_read_rows(const char *rel, size_t row_bytes, size_t *rows);
grip_corr *grip_test_read_correspondences(const char *rel, size_t *n);

/* The coordinates of the cloud's points idx[0 .. k), each of which must be < cloud->n: k x 3, malloc'd (free()). */
float *grip_test_gather_xyz(const host_cloud *cloud, const uint32_t *idx, size_t k);

/* The project's source folder (for configs/ and tests/cases/). */
const char *grip_test_source_dir(void);

/* A fresh context with default options; aborts the test on failure. Free with grip_ctx_free(). */
grip_ctx *grip_test_ctx(void);

/* Uniform float in [lo, hi) from a small deterministic generator (xorshift), seeded per test. */
float grip_test_uniform(uint64_t *state, float lo, float hi);

/* Runs the suite; returns the process exit code (0 when all passed). */
int grip_test_run(Suite *suite);

/* Main for a test program whose suite needs the shared data: returns GRIP_TEST_SKIP when it is absent. */
int grip_test_run_with_data(Suite *suite, const char *required_rel_path);

#endif
