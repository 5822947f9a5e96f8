/* test_support.h -- the little the Check tests share: where the real data is, reading its clouds and PCL's
 * gzip'd reference arrays, checks on clouds read back, a temporary folder to write files into, a context, random
 * data, and a main() that runs one suite. */
#ifndef GRIP_TEST_SUPPORT_H
#define GRIP_TEST_SUPPORT_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include "plugin.h"
#include "io/cloud_io.h"
#include "core/ctx.h"
#include "group/cluster.h"
#include "spatial/kdtree3d.h"

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

/* The x y z of the cloud <data dir>/<rel> (read as grip_test_read_cloud does) and their number: n x 3, malloc'd
 * (free()). */
float *grip_test_read_xyz(const char *rel, size_t *n);

/* A kd-tree over the n points xyz (n x 3); fails the test when it cannot be built. Free with grip_kdtree3d_free. */
grip_kdtree3d *grip_test_kdtree(grip_ctx *ctx, const float *xyz, size_t n);

/* Every one of the cols values of row is NaN (a descriptor row that PCL marks invalid). */
int grip_test_row_is_nan(const float *row, size_t cols);

/* The cloud is all zeros, as the readers leave it after an error. */
int grip_test_cloud_is_zeroed(const host_cloud *c);

/* Same points, bit for bit (NaN included): n, xyz, and normals and colours (present in both or in neither). */
void grip_test_assert_same_points(const host_cloud *a, const host_cloud *b);

/* read (pcd_read, ply_read, cloud_read) must fail on path, leave the cloud zeroed, and say needle1 and, unless
 * NULL, needle2. */
typedef int (*grip_test_cloud_reader)(const char *path, host_cloud *out, char *err, size_t errlen);
void grip_test_expect_read_error(grip_test_cloud_reader read, const char *path, const char *needle1,
                                 const char *needle2);

/* The bits of a float, to compare values exactly. */
uint32_t grip_test_float_bits(float v);

/* A temporary folder for the files a test writes: grip_test_tmp_dir_make creates a fresh /tmp/grip_test_XXXXXX
 * (fit as a checked fixture's setup), grip_test_tmp_dir_remove deletes its files and itself (the teardown; it
 * holds no subfolders). One folder at a time per process. */
void grip_test_tmp_dir_make(void);
void grip_test_tmp_dir_remove(void);
const char *grip_test_tmp_dir(void);

/* <temporary folder>/<name>. Static storage of two slots: valid until the second call after this one (of this
 * function or of the writers below, which return such a path). */
const char *grip_test_tmp_path(const char *name);

/* Write n bytes, or a C string, to <temporary folder>/<name>; return its path (as grip_test_tmp_path). */
const char *grip_test_write_file(const char *name, const void *data, size_t n);
const char *grip_test_write_text(const char *name, const char *text);

/* The project's source folder (for configs/ and tests/cases/). */
const char *grip_test_source_dir(void);

/* A fresh context with default options; aborts the test on failure. Free with grip_ctx_free(). */
grip_ctx *grip_test_ctx(void);

/* A fresh context whose CPU stages use `threads` OpenMP threads; aborts the test on failure. Free with
 * grip_ctx_free(). */
grip_ctx *grip_test_ctx_threads(uint32_t threads);

/* Uniform float in [lo, hi) from a small deterministic generator (xorshift), seeded per test. */
float grip_test_uniform(uint64_t *state, float lo, float hi);

/* Random matrices of rows x dim floats for the k-NN tests, malloc'd (free()), drawn from *state:
 *  - grip_test_uniform_rows: uniform in [lo, hi);
 *  - grip_test_clustered_rows: around `clusters` centres uniform in [-1, 1]^dim, spread 0.01. */
float *grip_test_uniform_rows(uint64_t *state, size_t rows, size_t dim, float lo, float hi);
float *grip_test_clustered_rows(uint64_t *state, size_t rows, size_t dim, size_t clusters);

/* Smaller inputs for compute-sanitizer. Its racecheck and synccheck make some GPU tests run hours; with
 * GRIP_TEST_SANITIZER_SIZE=small in the environment (scripts/gpu-check.sh sets it for its sanitize step) those tests
 * shrink their clouds and reference sets, each to a size that launches every kernel the full size launches, on the
 * same paths (the tests say why, where they call these); every assertion still runs. The library reads no
 * environment: only the tests do.
 *  - grip_test_small_sizes: 1 under GRIP_TEST_SANITIZER_SIZE=small, else 0;
 *  - grip_test_size: small under it, else full;
 *  - grip_test_sanitizer_crop: under it, keeps the middle `rows` rows of an organized cloud c (its grid, its NaN
 *    holes and its ties stay) and returns 1; else, or when c has no more rows than that, leaves c and returns 0. */
int grip_test_small_sizes(void);
size_t grip_test_size(size_t full, size_t small);
int grip_test_sanitizer_crop(host_cloud *c, uint32_t rows);

/* Adds `test` to `suite` as a test case of its own named `name` (timeout 300 s), so that CK_RUN_CASE=name runs it
 * alone: the GPU machine's sanitizer runs take the cases one by one, in parallel. */
void grip_test_add_case(Suite *suite, const char *name, const TTest *test);

/* Runs the suite; returns the process exit code (0 when all passed). */
int grip_test_run(Suite *suite);

/* Main for a GPU test program: returns GRIP_TEST_SKIP when no CUDA device is usable, else runs the suite in
 * this process (the probe has started CUDA, which a forked Check child could not use). */
int grip_test_run_gpu(Suite *suite);

/* Main for a test program whose suite needs the shared data: returns GRIP_TEST_SKIP when it is absent. */
int grip_test_run_with_data(Suite *suite, const char *required_rel_path);

#endif
