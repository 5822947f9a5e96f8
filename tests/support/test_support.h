/* test_support.h -- the little the Check tests share: where the real data is, reading PCL's gzip'd reference
 * arrays, a context, and a main() that runs one suite. */
#ifndef GRIP_TEST_SUPPORT_H
#define GRIP_TEST_SUPPORT_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include "plugin.h"
#include "core/ctx.h"

/* Exit code that ctest reads as "skipped". */
#define GRIP_TEST_SKIP 77

/* The shared real-data folder ($GRIP_DATA, else ../shared/data beside the source tree), or NULL when absent. */
const char *grip_test_data_dir(void);

/* Writes <data dir>/<rel> into buf. Returns 1 when that file exists, 0 otherwise (also when there is no data). */
int grip_test_data_path(char *buf, size_t n, const char *rel);

/* Reads a whole file, gunzipping it when it is gzip'd. Returns malloc'd bytes (free()), NULL on failure. */
void *grip_test_read_file(const char *path, size_t *bytes);

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
