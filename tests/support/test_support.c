/* test_support.c -- see test_support.h. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "test_support.h"

#include <dirent.h>
#include <execinfo.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
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

float *grip_test_read_xyz(const char *rel, size_t *n)
{
    host_cloud cloud = grip_test_read_cloud(rel);
    float *xyz = cloud.xyz;
    cloud.xyz = NULL;
    *n = cloud.n;
    host_cloud_free(&cloud);
    return xyz;
}

grip_kdtree3d *grip_test_kdtree(grip_ctx *ctx, const float *xyz, size_t n)
{
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, xyz, n, &tree), GRIP_OK);
    return tree;
}

int grip_test_row_is_nan(const float *row, size_t cols)
{
    for (size_t c = 0; c < cols; ++c)
        if (!isnan(row[c]))
            return 0;
    return 1;
}

int grip_test_cloud_is_zeroed(const host_cloud *c)
{
    static const host_cloud zero;
    return memcmp(c, &zero, sizeof zero) == 0;
}

void grip_test_assert_same_points(const host_cloud *a, const host_cloud *b)
{
    ck_assert_uint_eq(a->n, b->n);
    ck_assert_int_eq(memcmp(a->xyz, b->xyz, a->n * 3 * sizeof(float)), 0);
    ck_assert_int_eq(a->normals != NULL, b->normals != NULL);
    ck_assert_int_eq(a->rgb != NULL, b->rgb != NULL);
    if (a->normals)
        ck_assert_int_eq(memcmp(a->normals, b->normals, a->n * 3 * sizeof(float)), 0);
    if (a->rgb)
        ck_assert_int_eq(memcmp(a->rgb, b->rgb, a->n * 3), 0);
}

void grip_test_expect_read_error(grip_test_cloud_reader read, const char *path, const char *needle1,
                                 const char *needle2)
{
    host_cloud c;
    char err[512] = "";
    ck_assert_int_eq(read(path, &c, err, sizeof err), -1);
    ck_assert_msg(grip_test_cloud_is_zeroed(&c), "cloud not zeroed after an error");
    ck_assert_msg(strstr(err, needle1) != NULL, "error '%s' lacks '%s'", err, needle1);
    if (needle2)
        ck_assert_msg(strstr(err, needle2) != NULL, "error '%s' lacks '%s'", err, needle2);
}

uint32_t grip_test_float_bits(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static char tmp_dir[64];

void grip_test_tmp_dir_make(void)
{
    strcpy(tmp_dir, "/tmp/grip_test_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp_dir));
}

void grip_test_tmp_dir_remove(void)
{
    DIR *d = opendir(tmp_dir);
    if (!d)
        return;
    char path[512];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", tmp_dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
    ck_assert_msg(rmdir(tmp_dir) == 0, "cannot remove %s", tmp_dir);
}

const char *grip_test_tmp_dir(void)
{
    return tmp_dir;
}

const char *grip_test_tmp_path(const char *name)
{
    static char path[2][512];
    static int which;
    which ^= 1;
    snprintf(path[which], sizeof path[which], "%s/%s", tmp_dir, name);
    return path[which];
}

const char *grip_test_write_file(const char *name, const void *data, size_t n)
{
    const char *path = grip_test_tmp_path(name);
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(data, 1, n, fp), n);
    ck_assert_int_eq(fclose(fp), 0);
    return path;
}

const char *grip_test_write_text(const char *name, const char *text)
{
    return grip_test_write_file(name, text, strlen(text));
}

grip_ctx *grip_test_ctx(void)
{
    grip_ctx *ctx = NULL;
    ck_assert_int_eq(grip_ctx_new(NULL, &ctx), GRIP_OK);
    return ctx;
}

grip_ctx *grip_test_ctx_threads(uint32_t threads)
{
    const grip_ctx_options o = {sizeof(grip_ctx_options), -1, threads};
    grip_ctx *ctx = NULL;
    ck_assert_int_eq(grip_ctx_new(&o, &ctx), GRIP_OK);
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

float *grip_test_uniform_rows(uint64_t *state, size_t rows, size_t dim, float lo, float hi)
{
    float *a = malloc((rows ? rows : 1) * dim * sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (size_t i = 0; i < rows * dim; ++i)
        a[i] = grip_test_uniform(state, lo, hi);
    return a;
}

float *grip_test_clustered_rows(uint64_t *state, size_t rows, size_t dim, size_t clusters)
{
    float *centres = grip_test_uniform_rows(state, clusters, dim, -1.0f, 1.0f);
    float *a = malloc((rows ? rows : 1) * dim * sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (size_t i = 0; i < rows; ++i) {
        size_t c = (size_t)grip_test_uniform(state, 0.0f, (float)clusters) % clusters;
        for (size_t d = 0; d < dim; ++d)
            a[i * dim + d] = centres[c * dim + d] + grip_test_uniform(state, -0.01f, 0.01f);
    }
    free(centres);
    return a;
}

int grip_test_run(Suite *suite)
{
    SRunner *sr = srunner_create(suite);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}

/* Frees a suite that will not run: Check has no public suite_free, but a runner frees the suites it holds. */
static void discard_suite(Suite *suite)
{
    srunner_free(srunner_create(suite));
}

int grip_test_small_sizes(void)
{
    const char *env = getenv("GRIP_TEST_SANITIZER_SIZE");
    return env && strcmp(env, "small") == 0;
}

size_t grip_test_size(size_t full, size_t small)
{
    return grip_test_small_sizes() ? small : full;
}

int grip_test_sanitizer_crop(host_cloud *c, uint32_t rows)
{
    if (!grip_test_small_sizes() || c->height <= rows || rows == 0)
        return 0;
    const size_t first = (size_t)(c->height - rows) / 2 * c->width, n = (size_t)rows * c->width;
    memmove(c->xyz, c->xyz + 3 * first, 3 * n * sizeof *c->xyz);
    if (c->normals)
        memmove(c->normals, c->normals + 3 * first, 3 * n * sizeof *c->normals);
    if (c->rgb)
        memmove(c->rgb, c->rgb + 3 * first, 3 * n * sizeof *c->rgb);
    c->height = rows;
    c->n = n;
    return 1;
}

void grip_test_add_case(Suite *suite, const char *name, const TTest *test)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test);
    suite_add_tcase(suite, tc);
}

/* A GPU test runs its cases in one process (CUDA does not survive a fork), so a crash would end it without a word
 * of where. This handler writes the signal and the stack (module+offset: `addr2line -f -e MODULE OFFSET` names the
 * lines) to stderr, then lets the signal end the process as it would have. */
static void report_crash(int sig)
{
    static const char head[] = "test crashed with signal ";
    char num[3] = {(char)('0' + sig / 10 % 10), (char)('0' + sig % 10), '\n'};
    void *frames[64];
    (void)!write(STDERR_FILENO, head, sizeof head - 1);
    (void)!write(STDERR_FILENO, num, sizeof num);
    backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
    raise(sig); /* SA_RESETHAND: the default action now */
}

static void report_crashes(void)
{
    void *warm[1];
    (void)backtrace(warm, 1); /* loads what backtrace needs now, not in the handler */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = report_crash;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    static const int signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; ++i)
        sigaction(signals[i], &sa, NULL);
}

int grip_test_run_gpu(Suite *suite)
{
    grip_ctx *ctx = NULL;
    int devices = grip_ctx_new(NULL, &ctx) == GRIP_OK ? grip_ctx_device_count(ctx) : 0;
    grip_ctx_free(ctx);
    if (devices <= 0) {
        fprintf(stderr, "skipped: no usable CUDA device\n");
        discard_suite(suite);
        return GRIP_TEST_SKIP;
    }
    report_crashes();
    SRunner *sr = srunner_create(suite);
    srunner_set_fork_status(sr, CK_NOFORK);
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
        discard_suite(suite);
        return GRIP_TEST_SKIP;
    }
    return grip_test_run(suite);
}
