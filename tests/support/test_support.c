/* test_support.c -- see test_support.h. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

const char *grip_test_data_dir(void)
{
    static char dir[4096];
    const char *env = getenv("GRIP_DATA");
    snprintf(dir, sizeof dir, "%s", env && *env ? env : GRIP_DATA_DEFAULT);
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

int grip_test_data_path(char *buf, size_t n, const char *rel)
{
    const char *dir = grip_test_data_dir();
    if (!dir)
        return 0;
    snprintf(buf, n, "%s/%s", dir, rel);
    struct stat st;
    return stat(buf, &st) == 0;
}

const char *grip_test_source_dir(void)
{
    const char *env = getenv("GRIP_SOURCE_DIR");
    return env && *env ? env : GRIP_SOURCE_DIR;
}

void *grip_test_read_file(const char *path, size_t *bytes)
{
    gzFile f = gzopen(path, "rb"); /* reads plain files transparently too */
    if (!f)
        return NULL;
    size_t cap = 1 << 20, len = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (!buf)
            break;
        if (len == cap) {
            unsigned char *bigger = realloc(buf, cap *= 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
        }
        int got = gzread(f, buf + len, (unsigned)(cap - len));
        if (got < 0) {
            free(buf);
            buf = NULL;
            break;
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    gzclose(f);
    if (buf)
        buf[len] = '\0'; /* len < cap: the buffer grows before it is full */
    if (buf && bytes)
        *bytes = len;
    return buf;
}

host_cloud grip_test_read_cloud(const char *rel)
{
    char path[4096], err[512] = "";
    ck_assert_msg(grip_test_data_path(path, sizeof path, rel), "%s is absent", rel);
    host_cloud c;
    ck_assert_msg(cloud_read(path, &c, err, sizeof err) == 0, "%s", err);
    return c;
}

void *grip_test_read_rows(const char *rel, size_t row_bytes, size_t *rows)
{
    char path[4096];
    ck_assert_msg(grip_test_data_path(path, sizeof path, rel), "%s is absent", rel);
    size_t bytes = 0;
    void *data = grip_test_read_file(path, &bytes);
    ck_assert_msg(data != NULL, "%s cannot be read", rel);
    ck_assert_msg(bytes % row_bytes == 0, "%s: %zu bytes are not whole rows of %zu", rel, bytes, row_bytes);
    *rows = bytes / row_bytes;
    return data;
}

grip_corr *grip_test_read_correspondences(const char *rel, size_t *n)
{
    char path[4096], header[256];
    ck_assert_msg(grip_test_data_path(path, sizeof path, rel), "%s is absent", rel);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s cannot be opened", rel);
    ck_assert_ptr_nonnull(fgets(header, sizeof header, f));
    size_t cap = 4096;
    grip_corr *c = malloc(cap * sizeof *c);
    ck_assert_ptr_nonnull(c);
    *n = 0;
    unsigned s, m;
    float d;
    while (fscanf(f, "%u %u %f", &s, &m, &d) == 3) {
        if (*n == cap) {
            c = realloc(c, (cap *= 2) * sizeof *c);
            ck_assert_ptr_nonnull(c);
        }
        c[(*n)++] = (grip_corr){s, m, d};
    }
    fclose(f);
    return c;
}

float *grip_test_gather_xyz(const host_cloud *cloud, const uint32_t *idx, size_t k)
{
    float *xyz = malloc((k ? k : 1) * 3 * sizeof *xyz);
    ck_assert_ptr_nonnull(xyz);
    for (size_t i = 0; i < k; ++i) {
        ck_assert_uint_lt(idx[i], cloud->n);
        memcpy(xyz + i * 3, cloud->xyz + (size_t)idx[i] * 3, 3 * sizeof *xyz);
    }
    return xyz;
}

grip_ctx *grip_test_ctx(void)
{
    grip_ctx *ctx = NULL;
    ck_assert_int_eq(grip_ctx_new(NULL, &ctx), GRIP_OK);
    return ctx;
}

float grip_test_uniform(uint64_t *state, float lo, float hi)
{
    uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return lo + (hi - lo) * (float)((x >> 40) / (double)(1ull << 24));
}

int grip_test_run(Suite *suite)
{
    SRunner *sr = srunner_create(suite);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}

int grip_test_run_with_data(Suite *suite, const char *required_rel_path)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, required_rel_path)) {
        fprintf(stderr, "skipped: shared data '%s' is absent (set GRIP_DATA)\n", required_rel_path);
        (void)suite; /* Check has no public way to free an unrun suite */
        return GRIP_TEST_SKIP;
    }
    return grip_test_run(suite);
}
