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
    if (buf && bytes)
        *bytes = len;
    return buf;
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
