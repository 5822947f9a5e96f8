/* test_fuzz_regressions.c -- every input that once crashed, hung or blew up a fuzz harness (tests/fuzz/regressions/)
 * read again through grip-host's readers: each must now give exactly the outcome listed here -- mostly a clear
 * error naming the file and line -- and every file there must be listed. Needs no clang: the fuzzers themselves
 * are built only with GRIP_BUILD_FUZZERS. */
#define _POSIX_C_SOURCE 200809L
#include "test_support.h"
#include "io/cloud_io.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct regression {
    const char *harness; /* the folder: pcd, ply */
    const char *file;
    const char *error;   /* what follows the path in the message; NULL: the file reads */
    size_t points;       /* when it reads: how many */
} regression;

static const regression cases[] = {
    /* POINTS 0 with an empty binary body: UBSan, an offset added to the cloud's NULL xyz */
    {"pcd", "empty_binary_body.pcd", NULL, 0},
    /* POINTS 0, binary_compressed with sizes 0 and 0: the same */
    {"pcd", "empty_compressed_body.pcd", NULL, 0},
    /* 129 fields where the header holds 128: a heap buffer overflow (outside fuzz run) */
    {"pcd", "fields_129.pcd", ":2: FIELDS: 129 fields, at most 128", 0},
    /* a binary element without properties and a count of 2^63: 2^63 walks of an empty row, a hang */
    {"ply", "no_props_huge_count.ply", NULL, 1},
    /* a count of 2^64 - 1, parsed through a double that rounded it to 2^64: UBSan, out-of-range conversion */
    {"ply", "count_2pow64_minus_1.ply",
     ":11: data ends after 1 rows, the elements up to and including vertex need more than 18446744073709551615 "
     "(truncated ascii data)",
     0},
    {NULL, NULL, NULL, 0},
};
#define N_CASES (sizeof cases / sizeof cases[0] - 1)

static const char *path_of(const char *harness, const char *file)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/tests/fuzz/regressions/%s/%s", grip_test_source_dir(), harness, file);
    return path;
}

START_TEST(each_input_gives_its_outcome)
{
    const regression *r = &cases[_i];
    const char *path = path_of(r->harness, r->file);
    host_cloud c;
    char err[1024] = "";
    int rc = strcmp(r->harness, "pcd") == 0 ? pcd_read(path, &c, err, sizeof err) : ply_read(path, &c, err, sizeof err);
    if (!r->error) {
        ck_assert_msg(rc == 0, "%s: %s", r->file, err);
        ck_assert_uint_eq(c.n, r->points);
        host_cloud_free(&c);
        return;
    }
    ck_assert_msg(rc == -1, "%s read without error", r->file);
    ck_assert(grip_test_cloud_is_zeroed(&c));
    size_t n = strlen(path);
    ck_assert_msg(strncmp(err, path, n) == 0 && strcmp(err + n, r->error) == 0, "%s:\n  got  '%s'\n  want '%s%s'",
                  r->file, err, path, r->error);
}
END_TEST

/* A file added without its expected outcome would never be checked. */
START_TEST(every_file_is_listed)
{
    static const char *harnesses[] = {"pcd", "ply"};
    for (size_t h = 0; h < 2; h++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/tests/fuzz/regressions/%s", grip_test_source_dir(), harnesses[h]);
        DIR *d = opendir(dir);
        if (!d)
            continue;
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (e->d_name[0] == '.')
                continue;
            int listed = 0;
            for (size_t i = 0; i < N_CASES && !listed; i++)
                listed = strcmp(cases[i].harness, harnesses[h]) == 0 && strcmp(cases[i].file, e->d_name) == 0;
            ck_assert_msg(listed, "regressions/%s/%s has no entry in test_fuzz_regressions.c", harnesses[h],
                          e->d_name);
        }
        closedir(d);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuzz_regressions");
    TCase *tc = tcase_create("inputs");
    if (N_CASES > 0)
        tcase_add_loop_test(tc, each_input_gives_its_outcome, 0, (int)N_CASES);
    tcase_add_test(tc, every_file_is_listed);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
