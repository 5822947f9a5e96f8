/* test_loader.c -- grip-host's plugin loader: the stub plugins of tests/stubs walk every refusal path, an older
 * and shorter but valid layout loads with its missing fields read as NULL/0, and the real libgrip.so loads. */
#define _POSIX_C_SOURCE 200809L
#include "test_support.h"
#include "host_util.h"
#include "loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* <build>/tests/stubs/<name>.so: $GRIP_STUBS, else beside $GRIP_PLUGIN (main() skips when neither is set) */
static void stub_path(char *buf, size_t n, const char *name)
{
    const char *stubs = getenv("GRIP_STUBS");
    if (stubs && *stubs) {
        snprintf(buf, n, "%s/%s.so", stubs, name);
        return;
    }
    char dir[2048];
    host_dirname(getenv("GRIP_PLUGIN"), dir, sizeof dir);
    snprintf(buf, n, "%s/tests/stubs/%s.so", dir, name);
}

/* Opens a stub that must be refused; checks the message names the path and contains `expected`, and that the
 * result was left zeroed. */
static void expect_refusal(const char *stub, const char *expected)
{
    char path[4096], err[1024] = "";
    stub_path(path, sizeof path, stub);
    grip_loaded_plugin lp;
    memset(&lp, 0xAB, sizeof lp);
    ck_assert_int_eq(grip_loader_open(path, &lp, err, sizeof err), -1);
    ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "message does not start with the path: %s", err);
    ck_assert_msg(strstr(err, expected) != NULL, "expected '%s' in: %s", expected, err);
    ck_assert_ptr_null(lp.handle);
    ck_assert_ptr_null(lp.path);
    ck_assert_ptr_null(lp.table.stages);
    ck_assert_uint_eq(lp.table.n_stages, 0);
}

START_TEST(valid_stub_loads)
{
    char path[4096], err[1024] = "";
    stub_path(path, sizeof path, "stub_valid");
    grip_loaded_plugin lp;
    ck_assert_msg(grip_loader_open(path, &lp, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(lp.path, path);
    ck_assert_str_eq(lp.table.name, "stub");
    ck_assert_uint_eq(lp.table.abi_major, GRIP_ABI_MAJOR);
    ck_assert_uint_eq(lp.table.struct_size, sizeof(grip_plugin));
    ck_assert_uint_eq(lp.table.n_stages, 6);
    ck_assert_ptr_nonnull(lp.table.device_count);
    for (uint32_t i = 0; i < lp.table.n_stages; i++) {
        const grip_stage_impl *s = lp.table.stages[i];
        ck_assert_uint_eq(s->struct_size, sizeof *s);
        ck_assert_uint_eq(s->n_params, 3);
        ck_assert_uint_eq(s->params[0].struct_size, sizeof(grip_param_info));
        ck_assert_str_eq(s->params[1].key, "radius");
        ck_assert_str_eq(s->params[2].doc, "a count");
    }
    /* the context functions and a stage's create() work through the copied table */
    grip_ctx *ctx = NULL;
    ck_assert_int_eq(lp.table.ctx_create(NULL, &ctx), GRIP_OK);
    const grip_stage_impl *d = grip_loader_find_stage(&lp, GRIP_STAGE_DESCRIPTOR, "stub");
    grip_stage *st = NULL;
    grip_kv bad[] = {{"radious", "0.1"}};
    ck_assert_int_eq(d->create(ctx, bad, 1, &st), GRIP_ECONFIG);
    ck_assert_str_eq(lp.table.ctx_last_error(ctx), "stub.radious: unknown key");
    grip_kv good[] = {{"radius", "0.1"}};
    ck_assert_int_eq(d->create(ctx, good, 1, &st), GRIP_OK);
    d->destroy(st);
    lp.table.ctx_destroy(ctx);
    grip_loader_close(&lp);
    ck_assert_ptr_null(lp.handle);
    ck_assert_ptr_null(lp.path);
}
END_TEST

START_TEST(find_stage_by_name_and_default)
{
    char path[4096], err[1024] = "";
    stub_path(path, sizeof path, "stub_valid");
    grip_loaded_plugin lp;
    ck_assert_msg(grip_loader_open(path, &lp, err, sizeof err) == 0, "%s", err);
    const grip_stage_impl *alt = grip_loader_find_stage(&lp, GRIP_STAGE_DESCRIPTOR, "stub_alt");
    ck_assert_ptr_nonnull(alt);
    ck_assert_str_eq(alt->name, "stub_alt");
    const grip_stage_impl *first = grip_loader_find_stage(&lp, GRIP_STAGE_DESCRIPTOR, NULL);
    ck_assert_str_eq(first->name, "stub"); /* the default is the first registered */
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++) {
        const grip_stage_impl *s = grip_loader_find_stage(&lp, k, "stub");
        ck_assert_ptr_nonnull(s);
        ck_assert_uint_eq(s->kind, k);
    }
    ck_assert_ptr_null(grip_loader_find_stage(&lp, GRIP_STAGE_INDEX, "stub_alt"));
    ck_assert_ptr_null(grip_loader_find_stage(&lp, GRIP_STAGE_KIND_COUNT, NULL));
    grip_loader_close(&lp);
}
END_TEST

START_TEST(missing_file_refused)
{
    char err[1024] = "";
    grip_loaded_plugin lp;
    ck_assert_int_eq(grip_loader_open("/nonexistent/dir/libnothing.so", &lp, err, sizeof err), -1);
    ck_assert_str_eq(err, "/nonexistent/dir/libnothing.so: cannot open: No such file or directory");
}
END_TEST

START_TEST(not_a_shared_object_refused)
{
    char dir[] = "/tmp/grip_loader_XXXXXX", path[4200], err[1024] = "";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/text.so", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("this is not an ELF file\n", f);
    fclose(f);
    grip_loaded_plugin lp;
    ck_assert_int_eq(grip_loader_open(path, &lp, err, sizeof err), -1);
    unlink(path);
    rmdir(dir);
    ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "%s", err);
    ck_assert_msg(strstr(err, ": not a loadable shared object: ") != NULL, "%s", err);
    ck_assert_msg(strstr(err, "invalid ELF header") || strstr(err, "too short"), "dlerror text missing: %s", err);
}
END_TEST

START_TEST(missing_entry_refused)
{
    expect_refusal("stub_no_entry", "does not export grip_plugin_get(): not a grip plugin");
}
END_TEST

START_TEST(null_table_refused)
{
    char expected[128]; /* the host asks for the ABI it was built with */
    snprintf(expected, sizeof expected, "grip_plugin_get(%d, %d) returned NULL: the plugin does not speak ABI major %d",
             GRIP_ABI_MAJOR, GRIP_ABI_MINOR, GRIP_ABI_MAJOR);
    expect_refusal("stub_no_table", expected);
}
END_TEST

START_TEST(wrong_major_refused)
{
    expect_refusal("stub_wrong_major", "plugin table is for ABI major 2, this host speaks 1");
}
END_TEST

START_TEST(short_struct_refused)
{
    char expected[160];
    snprintf(expected, sizeof expected, "plugin table is a short struct: struct_size %zu, the host needs at least %zu",
             offsetof(grip_plugin, ctx_create), offsetof(grip_plugin, stages) + sizeof(void *));
    expect_refusal("stub_short_struct", expected);
}
END_TEST

static const char *const required_fields[] = {"name",        "version",        "status_str", "ctx_create",
                                              "ctx_destroy", "ctx_last_error", "stages"};

START_TEST(null_required_field_refused)
{
    char expected[128];
    setenv("GRIP_STUB_FAULT", required_fields[_i], 1);
    snprintf(expected, sizeof expected, ": plugin table: '%s' is NULL (required)", required_fields[_i]);
    expect_refusal("stub_null_required", expected);
    unsetenv("GRIP_STUB_FAULT");
}
END_TEST

static const struct {
    const char *fault, *expected;
} stage_faults[] = {
    {"null_stage", ": stage 1 is NULL"},
    {"short_stage", ": stage 1 is a short struct: struct_size 8, the host needs at least"},
    {"bad_kind", ": stage 1: kind 7 is out of range (0..4)"},
    {"null_name", ": stage 1 (descriptor): name is NULL"},
    {"null_create", ": stage 1 (descriptor 'stub_alt'): 'create' is NULL (required)"},
    {"no_run", ": stage 1 (descriptor 'stub_alt'): its run function 'describe' is NULL"},
    {"two_runs", ": stage 1 (descriptor 'stub_alt'): sets a run function of another kind"},
    {"many_off_kind", ": stage 1 (verify 'stub'): sets describe_many, which only a descriptor stage may set"},
    {"null_params", ": stage 1 (descriptor 'stub_alt'): n_params is 3 but params is NULL"},
    {"short_params", ": stage 1 (descriptor 'stub_alt'): params is a short struct: struct_size 16"},
    {"stride_mismatch", ": stage 1 (descriptor 'stub_alt'): params[2].struct_size is 16 but the table's stride"},
    {"null_key", ": stage 1 (descriptor 'stub_alt'): params[1].key is NULL"},
    {"bad_type", ": stage 1 (descriptor 'stub_alt'): params[1] ('radius') has an unknown type 9"},
    {"enum_no_choices", ": stage 1 (descriptor 'stub_alt'): params[0] ('device') is an enum without choices"},
    {"empty_range", ": stage 1 (descriptor 'stub_alt'): params[1] ('radius') has an empty range [2, 1]"},
    {"bad_default", ": stage 1 (descriptor 'stub_alt'): params[1] ('radius') has a bad default: 2 is out of range"},
    {"reserved_key", ": stage 1 (descriptor 'stub_alt'): params[2].key 'impl' is reserved"},
    {"duplicate_key", ": stage 1 (descriptor 'stub_alt'): params[1] and params[2] are both 'radius'"},
};

START_TEST(malformed_stage_refused)
{
    setenv("GRIP_STUB_FAULT", stage_faults[_i].fault, 1);
    expect_refusal("stub_bad_stage", stage_faults[_i].expected);
    unsetenv("GRIP_STUB_FAULT");
}
END_TEST

START_TEST(short_stage_of_kind_names_sizes)
{
    char expected[200];
    setenv("GRIP_STUB_FAULT", "short_for_kind", 1);
    snprintf(expected, sizeof expected, ": stage 1 (verify) is a short struct: struct_size %zu, a verify stage needs "
             "at least %zu bytes (through 'verify')", offsetof(grip_stage_impl, verify),
             offsetof(grip_stage_impl, verify) + sizeof(void (*)(void)));
    expect_refusal("stub_bad_stage", expected);
    unsetenv("GRIP_STUB_FAULT");
}
END_TEST

START_TEST(well_formed_bad_stage_stub_loads)
{
    /* the fixture itself is sound: without a fault it loads, so each refusal above is the fault's doing */
    char path[4096], err[1024] = "";
    stub_path(path, sizeof path, "stub_bad_stage");
    unsetenv("GRIP_STUB_FAULT");
    grip_loaded_plugin lp;
    ck_assert_msg(grip_loader_open(path, &lp, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(lp.table.n_stages, 2);
    grip_loader_close(&lp);
}
END_TEST

START_TEST(duplicate_stage_refused)
{
    expect_refusal("stub_duplicate_stage", ": stages 0 and 2 are both descriptor 'stub'");
}
END_TEST

START_TEST(older_shorter_layout_loads)
{
    char path[4096], err[1024] = "";
    stub_path(path, sizeof path, "stub_older_minor");
    grip_loaded_plugin lp;
    ck_assert_msg(grip_loader_open(path, &lp, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(lp.table.abi_minor, 0);
    ck_assert_ptr_null(lp.table.device_count);
    ck_assert_uint_eq(lp.table.n_stages, 2);
    const grip_stage_impl *d = grip_loader_find_stage(&lp, GRIP_STAGE_DESCRIPTOR, "older");
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_nonnull(d->describe);
    ck_assert_ptr_null(d->build); /* set in the plugin's bytes, but past its struct_size */
    ck_assert_ptr_null(d->verify);
    ck_assert_uint_eq(d->struct_size, sizeof *d);
    /* params re-laid out with the host's stride; the missing doc reads NULL */
    ck_assert_uint_eq(d->n_params, 2);
    ck_assert_uint_eq(d->params[0].struct_size, sizeof(grip_param_info));
    ck_assert_str_eq(d->params[0].key, "radius");
    ck_assert_str_eq(d->params[1].key, "device");
    ck_assert_str_eq(d->params[1].choices, "auto|cuda|cpu");
    ck_assert_str_eq(d->params[1].default_value, "cpu");
    ck_assert_ptr_null(d->params[0].doc);
    ck_assert_ptr_null(d->params[1].doc);
    const grip_stage_impl *x = grip_loader_find_stage(&lp, GRIP_STAGE_INDEX, "older");
    ck_assert_ptr_nonnull(x->build);
    ck_assert_ptr_null(x->verify);
    ck_assert_ptr_null(x->params);
    grip_loader_close(&lp);
}
END_TEST

START_TEST(real_plugin_loads)
{
    const char *path = getenv("GRIP_PLUGIN");
    char err[1024] = "";
    grip_loaded_plugin lp;
    ck_assert_msg(grip_loader_open(path, &lp, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(lp.table.abi_major, GRIP_ABI_MAJOR);
    ck_assert_str_eq(lp.table.name, "grip");
    ck_assert_ptr_nonnull(lp.table.status_str(GRIP_ECONFIG));
    grip_ctx *ctx = NULL;
    ck_assert_int_eq(lp.table.ctx_create(NULL, &ctx), GRIP_OK);
    ck_assert_str_eq(lp.table.ctx_last_error(ctx), "");
    lp.table.ctx_destroy(ctx);
    grip_loader_close(&lp);
}
END_TEST

START_TEST(close_is_safe_on_zeroed_and_null)
{
    grip_loaded_plugin lp;
    memset(&lp, 0, sizeof lp);
    grip_loader_close(&lp);
    grip_loader_close(NULL);
    char err[64] = "";
    ck_assert_int_eq(grip_loader_open("", &lp, err, sizeof err), -1);
    ck_assert_str_eq(err, ": no plugin path given");
}
END_TEST

START_TEST(kind_names_round_trip)
{
    for (uint32_t k = 0; k < GRIP_STAGE_KIND_COUNT; k++)
        ck_assert_int_eq(grip_loader_kind_from_name(grip_loader_kind_name(k)), (int)k);
    ck_assert_str_eq(grip_loader_kind_name(GRIP_STAGE_MATCH), "match");
    ck_assert_ptr_null(grip_loader_kind_name(GRIP_STAGE_KIND_COUNT));
    ck_assert_int_eq(grip_loader_kind_from_name("pipeline"), -1);
}
END_TEST

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
}

START_TEST(plugin_found_beside_or_in_lib)
{
    char root[] = "/tmp/grip_layout_XXXXXX", bin[64], lib[64], beside[128], in_lib[128], via_lib[128], buf[256];
    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(bin, sizeof bin, "%s/bin", root);
    snprintf(lib, sizeof lib, "%s/lib", root);
    snprintf(beside, sizeof beside, "%s/libgrip.so", bin);
    snprintf(in_lib, sizeof in_lib, "%s/libgrip.so", lib);
    snprintf(via_lib, sizeof via_lib, "%s/../lib/libgrip.so", bin);
    ck_assert_int_eq(mkdir(bin, 0700), 0);
    ck_assert_int_eq(mkdir(lib, 0700), 0);
    ck_assert_int_eq(grip_loader_search_beside(bin, buf, sizeof buf), -1);
    ck_assert_str_eq(buf, beside); /* the first place looked, for the message */
    touch(in_lib);
    ck_assert_int_eq(grip_loader_search_beside(bin, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, via_lib);
    touch(beside);
    ck_assert_int_eq(grip_loader_search_beside(bin, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, beside);
    unlink(beside);
    unlink(in_lib);
    rmdir(bin);
    rmdir(lib);
    rmdir(root);
}
END_TEST

START_TEST(default_path_prefers_environment_then_executable_dir)
{
    char buf[4096], exe[4096], dir[4096], expected[4200];
    const char *saved = getenv("GRIP_PLUGIN");
    char *keep = host_strdup(saved);
    setenv("GRIP_PLUGIN", "/somewhere/else/libgrip.so", 1);
    ck_assert_int_eq(grip_loader_default_path("ignored", buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "/somewhere/else/libgrip.so");
    unsetenv("GRIP_PLUGIN");
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_int_gt(len, 0);
    exe[len] = '\0';
    host_dirname(exe, dir, sizeof dir);
    int rc = grip_loader_default_path("ignored", buf, sizeof buf);
    ck_assert_int_eq(rc, grip_loader_search_beside(dir, expected, sizeof expected));
    ck_assert_str_eq(buf, expected);
    setenv("GRIP_PLUGIN", keep, 1);
    free(keep);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("loader");
    TCase *tc = tcase_create("stubs");
    tcase_add_test(tc, valid_stub_loads);
    tcase_add_test(tc, find_stage_by_name_and_default);
    tcase_add_test(tc, missing_file_refused);
    tcase_add_test(tc, not_a_shared_object_refused);
    tcase_add_test(tc, missing_entry_refused);
    tcase_add_test(tc, null_table_refused);
    tcase_add_test(tc, wrong_major_refused);
    tcase_add_test(tc, short_struct_refused);
    tcase_add_loop_test(tc, null_required_field_refused, 0,
                        (int)(sizeof required_fields / sizeof required_fields[0]));
    tcase_add_loop_test(tc, malformed_stage_refused, 0, (int)(sizeof stage_faults / sizeof stage_faults[0]));
    tcase_add_test(tc, short_stage_of_kind_names_sizes);
    tcase_add_test(tc, well_formed_bad_stage_stub_loads);
    tcase_add_test(tc, duplicate_stage_refused);
    tcase_add_test(tc, older_shorter_layout_loads);
    tcase_add_test(tc, close_is_safe_on_zeroed_and_null);
    tcase_add_test(tc, kind_names_round_trip);
    tcase_add_test(tc, plugin_found_beside_or_in_lib);
    tcase_add_test(tc, default_path_prefers_environment_then_executable_dir);
    suite_add_tcase(s, tc);
    TCase *real = tcase_create("libgrip");
    tcase_add_test(real, real_plugin_loads);
    suite_add_tcase(s, real);
    return s;
}

int main(void)
{
    const char *plugin = getenv("GRIP_PLUGIN");
    if (!plugin || !*plugin) {
        fprintf(stderr, "test_loader: GRIP_PLUGIN is not set (ctest sets it); skipped\n");
        return GRIP_TEST_SKIP;
    }
    return grip_test_run(suite());
}
