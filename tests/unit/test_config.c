/* test_config.c -- grip-host's INI config: syntax, --set overrides, validation against parameter tables, every
 * problem reported at once as "file:line: section.key: message", and what each stage's create() gets. */
#include "test_support.h"
#include "common/param_value.h"
#include "config.h"
#include "suggest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a plugin's tables, in memory (the loader has its own tests) --------------------------------------------- */

#define P(type, key, def, lo, hi, choices) {sizeof(grip_param_info), type, key, def, lo, hi, choices, "doc"}
static const grip_param_info shot_params[] = {
    P(GRIP_PARAM_ENUM, "device", "auto", 0, 0, "auto|cuda|cpu"),
    P(GRIP_PARAM_FLOAT, "radius", "0.02", 0.0, 10.0, NULL),
    P(GRIP_PARAM_INT, "normals_k", "10", 1, 1000, NULL),
    P(GRIP_PARAM_BOOL, "flip", "true", 0, 0, NULL),
    P(GRIP_PARAM_STRING, "label", "", 0, 0, NULL),
};
static const grip_param_info fpfh_params[] = {P(GRIP_PARAM_FLOAT, "radius", "0.05", 0.0, 10.0, NULL)};
static const grip_param_info index_params[] = {P(GRIP_PARAM_ENUM, "device", "auto", 0, 0, "auto|cuda|cpu")};
static const grip_param_info cpu_only_params[] = {P(GRIP_PARAM_ENUM, "device", "cpu", 0, 0, "cpu")};
static const grip_param_info knn_params[] = {
    P(GRIP_PARAM_ENUM, "device", "auto", 0, 0, "auto|cuda|cpu"),
    P(GRIP_PARAM_INT, "k", "1", 1, 64, NULL),
    P(GRIP_PARAM_FLOAT, "max_sqdist", "1e30", 0.0, 1e30, NULL),
};
static const grip_param_info gc_params[] = {
    P(GRIP_PARAM_FLOAT, "size", "0.01", 0.0, 1.0, NULL),
    P(GRIP_PARAM_INT, "threshold", "5", 1, 1000, NULL),
};
#define N_OF(a) ((uint32_t)(sizeof a / sizeof a[0]))
#define IMPL(k, name_, table)                                                                                      \
    {                                                                                                              \
        .struct_size = sizeof(grip_stage_impl), .kind = k, .name = name_, .n_params = N_OF(table), .params = table \
    }
static const grip_stage_impl impls[] = {
    IMPL(GRIP_STAGE_DESCRIPTOR, "shot", shot_params),   IMPL(GRIP_STAGE_DESCRIPTOR, "fpfh", fpfh_params),
    IMPL(GRIP_STAGE_INDEX, "bruteforce", index_params), IMPL(GRIP_STAGE_INDEX, "cpu_only", cpu_only_params),
    IMPL(GRIP_STAGE_MATCH, "knn", knn_params),          IMPL(GRIP_STAGE_GROUP, "gc", gc_params),
    /* no verify stage */
};
static const grip_stage_impl *const impl_list[] = {&impls[0], &impls[1], &impls[2], &impls[3], &impls[4], &impls[5]};

static grip_loaded_plugin fake = {
    .path = "fake.so",
    .table = {.struct_size = sizeof(grip_plugin), .abi_major = GRIP_ABI_MAJOR, .name = "fake", .n_stages = 6,
              .stages = impl_list},
};
static const grip_loaded_plugin *const all_fake[GRIP_STAGE_KIND_COUNT] = {&fake, &fake, &fake, &fake, &fake};

/* ---- helpers ---------------------------------------------------------------------------------------------------- */

/* Asserts that some diagnostic reads exactly "<path>:<rest>". */
static void expect_diag(const grip_diag *d, const char *path, const char *rest)
{
    size_t n = strlen(path) + strlen(rest) + 2;
    char *want = malloc(n);
    ck_assert_ptr_nonnull(want);
    snprintf(want, n, "%s:%s", path, rest);
    int found = 0;
    for (size_t i = 0; i < d->count && !found; i++)
        found = strcmp(d->messages[i], want) == 0;
    if (!found) {
        fprintf(stderr, "expected: %s\ngot %zu:\n", want, d->count);
        grip_diag_print(d, stderr);
    }
    free(want);
    ck_assert_msg(found, "a diagnostic is missing (see above)");
}

static const char *kv_value(const grip_config *cfg, uint32_t kind, const char *key)
{
    uint32_t n = 0;
    const grip_kv *kv = grip_config_stage_kv(cfg, kind, &n);
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0)
            return kv[i].value;
    return NULL;
}

static const char *good_conf = "# PCL's tutorial, more or less\n"
                               "[pipeline]\n"
                               "device = cpu\n"
                               "threads = 4\n"
                               "\n"
                               "[descriptor]\n"
                               "impl = shot\n"
                               "radius = 0.02\n"
                               "normals_k = 10\n"
                               "\n"
                               "[index]\n"
                               "device = auto\n"
                               "[match]\n"
                               "impl = knn\n"
                               "k = 1\n"
                               "max_sqdist = 0.25\n"
                               "[group]\n"
                               "impl = gc\n"
                               "size = 0.01\n";

/* ---- tests ---------------------------------------------------------------------------------------------------- */

START_TEST(good_config_resolves_every_stage)
{
    grip_test_tmp_dir_make();
    const char *path = grip_test_write_text("good.conf", good_conf);
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_load(path, &cfg, &d), 0);
    ck_assert_int_eq(grip_config_validate(&cfg, all_fake, &d), 0);
    ck_assert_uint_eq(grip_diag_count(&d), 0);
    ck_assert_str_eq(grip_config_stage_impl(&cfg, GRIP_STAGE_DESCRIPTOR)->name, "shot");
    ck_assert_str_eq(grip_config_stage_impl(&cfg, GRIP_STAGE_INDEX)->name, "bruteforce"); /* default: first */
    ck_assert_str_eq(grip_config_stage_impl(&cfg, GRIP_STAGE_GROUP)->name, "gc");
    ck_assert_ptr_null(grip_config_stage_impl(&cfg, GRIP_STAGE_VERIFY)); /* the plugin has none; not asked for */
    uint32_t n = 0;
    const grip_kv *kv = grip_config_stage_kv(&cfg, GRIP_STAGE_DESCRIPTOR, &n);
    ck_assert_uint_eq(n, 3); /* radius, normals_k, device from the pipeline; not impl */
    ck_assert_str_eq(kv[0].key, "radius");
    ck_assert_str_eq(kv[0].value, "0.02");
    ck_assert_str_eq(kv[1].key, "normals_k");
    ck_assert_str_eq(kv[2].key, "device");
    ck_assert_str_eq(kv[2].value, "cpu");
    ck_assert_str_eq(kv_value(&cfg, GRIP_STAGE_INDEX, "device"), "auto"); /* its own beats the pipeline's */
    grip_config_stage_kv(&cfg, GRIP_STAGE_INDEX, &n);
    ck_assert_uint_eq(n, 1);
    grip_config_stage_kv(&cfg, GRIP_STAGE_GROUP, &n);
    ck_assert_uint_eq(n, 1); /* gc takes no device key: none is passed */
    ck_assert_ptr_null(kv_value(&cfg, GRIP_STAGE_GROUP, "device"));
    grip_pipeline_settings ps;
    grip_config_pipeline(&cfg, &ps);
    ck_assert_str_eq(ps.device, "cpu");
    ck_assert_uint_eq(ps.threads, 4);
    ck_assert_int_eq(ps.cuda_device, -1);
    const grip_config_entry *e = grip_config_find(&cfg, "match", "max_sqdist");
    ck_assert_str_eq(e->origin, path);
    ck_assert_int_eq(e->line, 16);
    grip_config_free(&cfg);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(section_without_config_gets_default_impl_and_device)
{
    grip_test_tmp_dir_make();
    const char *path = grip_test_write_text("min.conf", "[pipeline]\ndevice = cuda\n");
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_load(path, &cfg, &d), 0);
    ck_assert_int_eq(grip_config_validate(&cfg, all_fake, &d), 0);
    ck_assert_str_eq(grip_config_stage_impl(&cfg, GRIP_STAGE_DESCRIPTOR)->name, "shot");
    uint32_t n = 0;
    const grip_kv *kv = grip_config_stage_kv(&cfg, GRIP_STAGE_MATCH, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(kv[0].key, "device");
    ck_assert_str_eq(kv[0].value, "cuda");
    grip_config_free(&cfg);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(comments_and_whitespace)
{
    grip_test_tmp_dir_make();
    const char *path = grip_test_write_text("c.conf", "  # a comment\n"
                                            "; another\n"
                                            "\t[ descriptor ]   # trailing comment\n"
                                            "   radius\t=   0.5   # the radius\n"
                                            "label = a#b\n"
                                            "\n   \n");
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_load(path, &cfg, &d), 0);
    ck_assert_int_eq(grip_config_validate(&cfg, all_fake, &d), 0);
    ck_assert_uint_eq(grip_diag_count(&d), 0);
    ck_assert_str_eq(kv_value(&cfg, GRIP_STAGE_DESCRIPTOR, "radius"), "0.5");
    ck_assert_str_eq(kv_value(&cfg, GRIP_STAGE_DESCRIPTOR, "label"), "a#b"); /* '#' inside a word is text */
    ck_assert_int_eq(grip_config_find(&cfg, "descriptor", "label")->line, 5);
    grip_config_free(&cfg);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(crlf_line_ends)
{
    grip_test_tmp_dir_make();
    const char *path =
        grip_test_write_text("crlf.conf", "[descriptor]\r\nimpl = shot\r\nradius = 0.5\r\nflip = maybe\r\n");
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_load(path, &cfg, &d), 0);
    ck_assert_int_eq(grip_config_validate(&cfg, all_fake, &d), -1);
    ck_assert_str_eq(kv_value(&cfg, GRIP_STAGE_DESCRIPTOR, "radius"), "0.5");
    ck_assert_str_eq(grip_config_stage_impl(&cfg, GRIP_STAGE_DESCRIPTOR)->name, "shot");
    ck_assert_uint_eq(grip_diag_count(&d), 1);
    expect_diag(&d, path, "4: descriptor.flip: 'maybe' is not a boolean (true/false)");
    grip_config_free(&cfg);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(empty_values)
{
    grip_test_tmp_dir_make();
    const char *path = grip_test_write_text("e.conf", "[descriptor]\nradius =\nlabel =  \n[index]\nplugin =\n");
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_load(path, &cfg, &d), 0); /* syntactically fine */
    ck_assert_str_eq(grip_config_find(&cfg, "descriptor", "radius")->value, "");
    ck_assert_int_eq(grip_config_validate(&cfg, all_fake, &d), -1);
    ck_assert_uint_eq(grip_diag_count(&d), 3);
    expect_diag(&d, path, "2: descriptor.radius: empty value");
    expect_diag(&d, path, "3: descriptor.label: empty value");
    expect_diag(&d, path, "5: index.plugin: empty value (expected the path of a plugin)");
    grip_config_free(&cfg);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(long_line)
{
    grip_test_tmp_dir_make();
    size_t n = 100000;
    char *text = malloc(n + 2 * 5000 + 200), *key = malloc(5001);
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_nonnull(key);
    memset(key, 'q', 5000);
    key[5000] = '\0';
    int at = sprintf(text, "[descriptor]\n# %s\nlabel = ", key);
    memset(text + at, 'x', n);
    sprintf(text + at + n, "\n%s = 1\n", key);
    const char *path = grip_test_write_text("long.conf", text);
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_load(path, &cfg, &d), 0);
    ck_assert_int_eq(grip_config_validate(&cfg, all_fake, &d), -1);
    const char *label = kv_value(&cfg, GRIP_STAGE_DESCRIPTOR, "label");
    ck_assert_uint_eq(strlen(label), n);
    ck_assert_int_eq(label[n - 1], 'x');
    ck_assert_uint_eq(grip_diag_count(&d), 1);
    char rest[5200];
    snprintf(rest, sizeof rest, "4: descriptor.%s: unknown key for descriptor 'shot'", key);
    expect_diag(&d, path, rest);
    free(text);
    free(key);
    grip_config_free(&cfg);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

/* One file with every kind of problem, each on its own line: all are reported, each with its file:line. */
/* From memory: line by line as from a file, the last line without its newline, a NUL ending its line early. */
START_TEST(load_from_memory)
{
    static const char text[] = "[descriptor]\nradius = 0.5\0 ignored\nlabel = a b\nflip = no";
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_load_mem("mem.conf", text, sizeof text - 1, &cfg, &d), 0);
    ck_assert_int_eq(grip_config_set(&cfg, "descriptor.normals_k=2000", &d), 0);
    ck_assert_int_eq(grip_config_validate(&cfg, all_fake, &d), -1);
    ck_assert_uint_eq(grip_diag_count(&d), 1);
    expect_diag(&d, "--set", " descriptor.normals_k: 2000 is out of range [1, 1000]");
    ck_assert_str_eq(kv_value(&cfg, GRIP_STAGE_DESCRIPTOR, "radius"), "0.5");
    ck_assert_str_eq(kv_value(&cfg, GRIP_STAGE_DESCRIPTOR, "flip"), "no");
    ck_assert_int_eq(grip_config_find(&cfg, "descriptor", "label")->line, 3);
    ck_assert_int_eq(grip_config_load_mem("bad.conf", "[descriptor]\nradius", 19, &cfg, &d), -1);
    expect_diag(&d, "bad.conf", "2: descriptor: missing '=' in 'radius' (expected key = value)");
    grip_config_free(&cfg);
    grip_diag_free(&d);
}
END_TEST

START_TEST(every_error_kind_reported_at_once)
{
    grip_test_tmp_dir_make();
    const char *path = grip_test_write_text("bad.conf", "radius = 1\n"                 /* 1: outside any section */
                                              "[descripter]\n"               /* 2: unknown section, near miss */
                                              "radius = 0.1\n"               /* 3: skipped (unknown section) */
                                              "[descriptor\n"                /* 4: missing ']' */
                                              "[descriptor] x\n"             /* 5: text after ']' */
                                              "[descriptor]\n"               /* 6 */
                                              "radious = 0.1\n"              /* 7: unknown key, near miss */
                                              "radius 0.1\n"                 /* 8: missing '=' */
                                              "radius = 0.1x\n"              /* 9: malformed */
                                              "normals_k = 0\n"              /* 10: out of range */
                                              "normals_k = 5\n"              /* 11: duplicate */
                                              "= 3\n"                        /* 12: missing key */
                                              "zzzzzz = 1\n"                 /* 13: unknown key, no hint */
                                              "[match]\n"                    /* 14 */
                                              "impl = knm\n"                 /* 15: unknown impl, near miss */
                                              "[group]\n"                    /* 16 */
                                              "impl = hough3d\n"             /* 17: unknown impl */
                                              "[verify]\n"                   /* 18 */
                                              "impl = icp\n"                 /* 19: no verify stage at all */
                                              "[pipeline]\n"                 /* 20 */
                                              "thread = 2\n"                 /* 21: unknown key, near miss */
                                              "device = gpu\n"               /* 22: bad enum */
                                              "[]\n");                       /* 23: empty section name */
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_load(path, &cfg, &d), -1);
    ck_assert_int_eq(grip_config_validate(&cfg, all_fake, &d), -1);
    expect_diag(&d, path, "1: radius: key outside any section (put a [section] line above it)");
    expect_diag(&d, path, "2: descripter: unknown section (known: pipeline, descriptor, index, match, group, "
                          "verify); did you mean 'descriptor'?");
    expect_diag(&d, path, "4: missing ']' in section header '[descriptor'");
    expect_diag(&d, path, "5: descriptor: unexpected 'x' after ']'");
    expect_diag(&d, path, "7: descriptor.radious: unknown key for descriptor 'shot'; did you mean 'radius'?");
    expect_diag(&d, path, "8: descriptor: missing '=' in 'radius 0.1' (expected key = value)");
    expect_diag(&d, path, "9: descriptor.radius: '0.1x' is not a finite number");
    expect_diag(&d, path, "11: descriptor.normals_k: duplicate key (first set at line 10)");
    expect_diag(&d, path, "10: descriptor.normals_k: 0 is out of range [1, 1000]");
    expect_diag(&d, path, "12: descriptor: missing key before '='");
    expect_diag(&d, path, "13: descriptor.zzzzzz: unknown key for descriptor 'shot'");
    expect_diag(&d, path, "15: match.impl: unknown implementation 'knm' (available: knn); did you mean 'knn'?");
    expect_diag(&d, path, "17: group.impl: unknown implementation 'hough3d' (available: gc)");
    expect_diag(&d, path, "19: verify.impl: unknown implementation 'icp': fake.so offers no verify stage");
    expect_diag(&d, path, "21: pipeline.thread: unknown key for the pipeline; did you mean 'threads'?");
    expect_diag(&d, path, "22: pipeline.device: 'gpu' is not one of auto|cuda|cpu");
    expect_diag(&d, path, "23: empty section name '[]'");
    ck_assert_uint_eq(grip_diag_count(&d), 17);
    grip_config_free(&cfg);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(impl_picks_the_table_keys_are_checked_against)
{
    grip_test_tmp_dir_make();
    /* normals_k is shot's, not fpfh's */
    const char *path = grip_test_write_text("f.conf", "[descriptor]\nimpl = fpfh\nradius = 0.3\nnormals_k = 3\n");
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_load(path, &cfg, &d), 0);
    ck_assert_int_eq(grip_config_validate(&cfg, all_fake, &d), -1);
    ck_assert_uint_eq(grip_diag_count(&d), 1);
    expect_diag(&d, path, "4: descriptor.normals_k: unknown key for descriptor 'fpfh'");
    ck_assert_str_eq(grip_config_stage_impl(&cfg, GRIP_STAGE_DESCRIPTOR)->name, "fpfh");
    grip_config_free(&cfg);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(keys_for_a_stage_the_plugin_lacks)
{
    grip_test_tmp_dir_make();
    const char *path = grip_test_write_text("v.conf", "[verify]\nmax_iterations = 3\n");
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_load(path, &cfg, &d), 0);
    ck_assert_int_eq(grip_config_validate(&cfg, all_fake, &d), -1);
    expect_diag(&d, path, "2: verify.max_iterations: cannot be set: verify (fake.so offers no verify stage)");
    grip_config_free(&cfg);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(pipeline_device_must_suit_every_stage)
{
    grip_test_tmp_dir_make();
    const char *path = grip_test_write_text("dev.conf", "[pipeline]\ndevice = cuda\n[index]\nimpl = cpu_only\n");
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_load(path, &cfg, &d), 0);
    ck_assert_int_eq(grip_config_validate(&cfg, all_fake, &d), -1);
    ck_assert_uint_eq(grip_diag_count(&d), 1);
    expect_diag(&d, path, "2: pipeline.device: 'cuda' is not one of cpu (as the device of index 'cpu_only')");
    grip_config_free(&cfg);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(set_overrides_the_file)
{
    grip_test_tmp_dir_make();
    const char *path = grip_test_write_text("good.conf", good_conf);
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_load(path, &cfg, &d), 0);
    ck_assert_int_eq(grip_config_set(&cfg, "descriptor.radius=0.04", &d), 0);
    ck_assert_int_eq(grip_config_set(&cfg, " match.k = 3 ", &d), 0);
    ck_assert_int_eq(grip_config_set(&cfg, "descriptor.impl=fpfh", &d), 0);
    ck_assert_int_eq(grip_config_set(&cfg, "descriptor.normals_k=7", &d), 0); /* not fpfh's: reported at validate */
    ck_assert_int_eq(grip_config_set(&cfg, "pipeline.device=auto", &d), 0);
    ck_assert_int_eq(grip_config_validate(&cfg, all_fake, &d), -1);
    /* the file's normals_k (line 9) was replaced by the --set, so it is the --set that is reported, once */
    ck_assert_uint_eq(grip_diag_count(&d), 1);
    ck_assert_str_eq(d.messages[0], "--set: descriptor.normals_k: unknown key for descriptor 'fpfh'");
    const grip_config_entry *e = grip_config_find(&cfg, "descriptor", "radius");
    ck_assert_str_eq(e->value, "0.04");
    ck_assert_str_eq(e->origin, "--set");
    ck_assert_int_eq(e->line, 0);
    ck_assert_str_eq(kv_value(&cfg, GRIP_STAGE_MATCH, "k"), "3");
    ck_assert_str_eq(kv_value(&cfg, GRIP_STAGE_MATCH, "device"), "auto");
    ck_assert_str_eq(grip_config_stage_impl(&cfg, GRIP_STAGE_DESCRIPTOR)->name, "fpfh");
    grip_config_free(&cfg);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(set_reports_its_own_errors)
{
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_set(&cfg, "descriptor.radius", &d), -1);
    ck_assert_int_eq(grip_config_set(&cfg, "radius=0.1", &d), -1);
    ck_assert_int_eq(grip_config_set(&cfg, ".radius=0.1", &d), -1);
    ck_assert_int_eq(grip_config_set(&cfg, "descripter.radius=0.1", &d), -1);
    ck_assert_int_eq(grip_config_set(&cfg, "descriptor.radius=-1", &d), 0);
    ck_assert_int_eq(grip_config_set(&cfg, "descriptor.radious=0.1", &d), 0);
    ck_assert_int_eq(grip_config_set(&cfg, "descriptor.radius=-2", &d), 0); /* a second --set wins, no duplicate */
    ck_assert_int_eq(grip_config_validate(&cfg, all_fake, &d), -1);
    ck_assert_uint_eq(grip_diag_count(&d), 6);
    ck_assert_str_eq(d.messages[0], "--set: 'descriptor.radius': expected section.key=value");
    ck_assert_str_eq(d.messages[1], "--set: 'radius=0.1': expected section.key=value");
    ck_assert_str_eq(d.messages[2], "--set: '.radius=0.1': expected section.key=value (the section is empty)");
    ck_assert_str_eq(d.messages[3], "--set: descripter.radius: unknown section (known: pipeline, descriptor, index, "
                                    "match, group, verify); did you mean 'descriptor'?");
    ck_assert_str_eq(d.messages[4], "--set: descriptor.radius: -2 is out of range [0, 10]");
    ck_assert_str_eq(d.messages[5], "--set: descriptor.radious: unknown key for descriptor 'shot'; did you mean "
                                    "'radius'?");
    grip_config_free(&cfg);
    grip_diag_free(&d);
}
END_TEST

START_TEST(later_file_overrides_earlier)
{
    grip_test_tmp_dir_make();
    grip_config cfg = {0};
    grip_diag d = {0};
    char first[256];
    snprintf(first, sizeof first, "%s", grip_test_write_text("a.conf", "[match]\nk = 2\n"));
    ck_assert_int_eq(grip_config_load(first, &cfg, &d), 0);
    const char *second = grip_test_write_text("b.conf", "[match]\n\nk = 4\n");
    ck_assert_int_eq(grip_config_load(second, &cfg, &d), 0);
    const grip_config_entry *e = grip_config_find(&cfg, "match", "k");
    ck_assert_str_eq(e->value, "4");
    ck_assert_str_eq(e->origin, second);
    ck_assert_int_eq(e->line, 3);
    ck_assert_uint_eq(grip_diag_count(&d), 0);
    grip_config_free(&cfg);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(plugin_path_resolution)
{
    grip_test_tmp_dir_make();
    const char *path = grip_test_write_text("p.conf", "[descriptor]\nplugin = other.so\n[index]\nplugin = /abs/x.so\n");
    grip_config cfg = {0};
    grip_diag d = {0};
    char buf[512], want[512];
    ck_assert_int_eq(grip_config_load(path, &cfg, &d), 0);
    ck_assert_int_eq(grip_config_stage_plugin(&cfg, GRIP_STAGE_DESCRIPTOR, buf, sizeof buf), 1);
    snprintf(want, sizeof want, "%s/other.so", grip_test_tmp_dir());
    ck_assert_str_eq(buf, want);
    ck_assert_int_eq(grip_config_stage_plugin(&cfg, GRIP_STAGE_INDEX, buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "/abs/x.so");
    ck_assert_int_eq(grip_config_stage_plugin(&cfg, GRIP_STAGE_MATCH, buf, sizeof buf), 0);
    ck_assert_int_eq(grip_config_set(&cfg, "match.plugin=rel/y.so", &d), 0);
    ck_assert_int_eq(grip_config_stage_plugin(&cfg, GRIP_STAGE_MATCH, buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "rel/y.so"); /* --set: as given, relative to the working directory */
    /* a stage whose plugin the runner could not load: its keys are not checked, and plugin/impl are not kv */
    const grip_loaded_plugin *some[GRIP_STAGE_KIND_COUNT] = {NULL, &fake, &fake, &fake, &fake};
    ck_assert_int_eq(grip_config_set(&cfg, "descriptor.anything=1", &d), 0);
    ck_assert_int_eq(grip_config_validate(&cfg, some, &d), 0);
    ck_assert_ptr_null(grip_config_stage_impl(&cfg, GRIP_STAGE_DESCRIPTOR));
    uint32_t n = 9;
    grip_config_stage_kv(&cfg, GRIP_STAGE_INDEX, &n);
    ck_assert_uint_eq(n, 0);
    /* the runner reports its own problems at the entry */
    grip_config_report(&d, grip_config_find(&cfg, "descriptor", "plugin"), "cannot open: %s", "nope");
    expect_diag(&d, path, "2: descriptor.plugin: cannot open: nope");
    grip_config_free(&cfg);
    grip_diag_free(&d);
    grip_test_tmp_dir_remove();
}
END_TEST

START_TEST(missing_file_reported)
{
    grip_config cfg = {0};
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_load("/nonexistent/x.conf", &cfg, &d), -1);
    ck_assert_str_eq(d.messages[0], "/nonexistent/x.conf: cannot open: No such file or directory");
    grip_config_free(&cfg);
    grip_diag_free(&d);
}
END_TEST

START_TEST(pipeline_defaults_and_table)
{
    grip_config cfg = {0};
    grip_pipeline_settings ps;
    grip_config_pipeline(&cfg, &ps);
    ck_assert_str_eq(ps.device, "auto");
    ck_assert_int_eq(ps.cuda_device, -1);
    ck_assert_uint_eq(ps.threads, 0);
    ck_assert_str_eq(ps.unit, ""); /* lengths printed in the clouds' unit, unnamed */
    uint32_t n = 0;
    const grip_param_info *t = grip_config_pipeline_params(&n);
    ck_assert_uint_eq(n, 4);
    ck_assert_str_eq(t[0].key, "device");
    ck_assert_str_eq(t[0].choices, "auto|cuda|cpu");
    ck_assert_str_eq(t[3].key, "unit");
    grip_diag d = {0};
    ck_assert_int_eq(grip_config_set(&cfg, "pipeline.unit=mm", &d), 0);
    grip_config_pipeline(&cfg, &ps);
    ck_assert_str_eq(ps.unit, "mm");
    grip_config_free(&cfg);
    grip_diag_free(&d);
    for (uint32_t i = 0; i < n; i++) {
        grip_param_value v;
        char why[128];
        ck_assert_int_eq(grip_param_parse(&t[i], t[i].default_value, &v, why, sizeof why), 0);
        ck_assert_ptr_nonnull(t[i].doc);
    }
}
END_TEST

START_TEST(shipped_configs_parse)
{
    const char *names[] = {"pcl_tutorial.conf", "pcl_tutorial_gc.conf"};
    for (size_t i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/configs/%s", grip_test_source_dir(), names[i]);
        grip_config cfg = {0};
        grip_diag d = {0};
        ck_assert_int_eq(grip_config_load(path, &cfg, &d), 0);
        ck_assert_str_eq(grip_config_find(&cfg, "descriptor", "impl")->value, "shot");
        grip_config_free(&cfg);
        grip_diag_free(&d);
    }
}
END_TEST

START_TEST(edit_distance)
{
    ck_assert_uint_eq(grip_edit_distance("radius", "radius"), 0);
    ck_assert_uint_eq(grip_edit_distance("radious", "radius"), 1);
    ck_assert_uint_eq(grip_edit_distance("raidus", "radius"), 2);
    ck_assert_uint_eq(grip_edit_distance("", "ab"), 2);
    ck_assert_uint_gt(grip_edit_distance("radius", "k"), GRIP_SUGGEST_MAX_DISTANCE);
    grip_suggestion s = {"knm", NULL, 0};
    grip_suggest_consider(&s, "gc");
    grip_suggest_consider(&s, "knn");
    grip_suggest_consider(&s, "kmn");
    ck_assert_str_eq(s.best, "knn"); /* the first of equally near ones */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, good_config_resolves_every_stage);
    tcase_add_test(tc, section_without_config_gets_default_impl_and_device);
    tcase_add_test(tc, comments_and_whitespace);
    tcase_add_test(tc, crlf_line_ends);
    tcase_add_test(tc, empty_values);
    tcase_add_test(tc, long_line);
    tcase_add_test(tc, every_error_kind_reported_at_once);
    tcase_add_test(tc, load_from_memory);
    tcase_add_test(tc, impl_picks_the_table_keys_are_checked_against);
    tcase_add_test(tc, keys_for_a_stage_the_plugin_lacks);
    tcase_add_test(tc, pipeline_device_must_suit_every_stage);
    tcase_add_test(tc, set_overrides_the_file);
    tcase_add_test(tc, set_reports_its_own_errors);
    tcase_add_test(tc, later_file_overrides_earlier);
    tcase_add_test(tc, plugin_path_resolution);
    tcase_add_test(tc, missing_file_reported);
    tcase_add_test(tc, pipeline_defaults_and_table);
    tcase_add_test(tc, shipped_configs_parse);
    tcase_add_test(tc, edit_distance);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return grip_test_run(suite()); }
