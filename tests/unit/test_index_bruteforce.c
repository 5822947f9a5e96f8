/* test_index_bruteforce.c -- the `bruteforce` index stage's GPU search parameters (screen_precision, screen_kernel,
 * rescreen_capacity): in the plugin's table with their defaults and ranges, shown by `grip-host list`, a bad value
 * refused at create() with a config error naming the key, and the values carried into the index's
 * grip_bruteforce_cuda_options (what the match stage's reverse search reads), NULL for any other index. CPU stages
 * only: the options change no result, and the GPU search under each is tested by tests/gpu/test_knn_cuda.c. */
#define _POSIX_C_SOURCE 200809L
#include "test_support.h"
#include "stages/index_bruteforce.h"
#include "stages/registry.h"
#include "stages/stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const grip_param_info *param_named(const grip_stage_impl *impl, const char *key)
{
    const grip_param_info *p = grip_param_find(impl->params, impl->n_params, key);
    ck_assert_msg(p != NULL, "%s has no parameter %s", impl->name, key);
    return p;
}

START_TEST(parameters_are_in_the_table)
{
    const grip_param_info *p = param_named(&grip_index_bruteforce, "screen_precision");
    ck_assert_uint_eq(p->type, GRIP_PARAM_ENUM);
    ck_assert_str_eq(p->default_value, "int8");
    ck_assert_str_eq(p->choices, "int8|fp16");
    p = param_named(&grip_index_bruteforce, "screen_kernel");
    ck_assert_uint_eq(p->type, GRIP_PARAM_ENUM);
    ck_assert_str_eq(p->default_value, "auto");
    ck_assert_str_eq(p->choices, "auto|mma_sync");
    p = param_named(&grip_index_bruteforce, "rescreen_capacity");
    ck_assert_uint_eq(p->type, GRIP_PARAM_INT);
    ck_assert_str_eq(p->default_value, "1024");
    ck_assert(p->min == 1 && p->max == GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY);
    static const char *const keys[] = {"screen_precision", "screen_kernel", "rescreen_capacity"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
        ck_assert_ptr_nonnull(param_named(&grip_index_bruteforce, keys[i])->doc);
}
END_TEST

/* `grip-host list` prints each with its type, default and range. */
START_TEST(grip_host_lists_them)
{
    const char *host = getenv("GRIP_HOST"), *plugin = getenv("GRIP_PLUGIN");
    ck_assert_msg(host && plugin, "GRIP_HOST and GRIP_PLUGIN must be set (ctest sets them)");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' --plugin '%s' list", host, plugin);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    size_t size = 1 << 16, used = 0;
    char *out = malloc(size);
    ck_assert_ptr_nonnull(out);
    for (size_t got; (got = fread(out + used, 1, size - 1 - used, f)) > 0;) {
        used += got;
        if (used + 1 == size) {
            size *= 2;
            out = realloc(out, size);
            ck_assert_ptr_nonnull(out);
        }
    }
    out[used] = '\0';
    ck_assert_int_eq(pclose(f), 0);
    const char *index = strstr(out, "[index] impl = bruteforce");
    ck_assert_ptr_nonnull(index);
    const char *next = strstr(index + 1, "\n[");
    static const char *const lines[] = {
        "screen_precision             enum   = int8     {int8|fp16}",
        "screen_kernel                enum   = auto     {auto|mma_sync}",
        "rescreen_capacity            int    = 1024     [1, 1024]",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; ++i) {
        const char *at = strstr(index, lines[i]);
        ck_assert_msg(at && (!next || at < next), "no '%s' under bruteforce in:\n%s", lines[i], index);
    }
    free(out);
}
END_TEST

/* create() refuses a bad value of each, naming the stage kind and the key; every problem at once. */
START_TEST(bad_values_are_config_errors)
{
    grip_ctx *ctx = grip_test_ctx();
    static const struct {
        const char *key, *value;
    } bad[] = {
        {"screen_precision", "int4"}, {"screen_precision", ""},  {"screen_kernel", "wgmma"},
        {"screen_kernel", "1"},       {"rescreen_capacity", "0"}, {"rescreen_capacity", "1025"},
        {"rescreen_capacity", "-1"},  {"rescreen_capacity", "many"}, {"rescreen_capacity", "2.5"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        const grip_kv kv[] = {{"device", "cpu"}, {bad[i].key, bad[i].value}};
        grip_stage *st = (grip_stage *)ctx;
        ck_assert_int_eq(grip_index_bruteforce.create(ctx, kv, 2, &st), GRIP_ECONFIG);
        ck_assert_ptr_null(st);
        char want[64];
        snprintf(want, sizeof want, "index.%s", bad[i].key);
        ck_assert_msg(strstr(ctx->last_error, want), "%s = '%s': %s", bad[i].key, bad[i].value, ctx->last_error);
    }
    const grip_kv all[] = {{"screen_precision", "fp32"}, {"screen_kernel", "fast"}, {"rescreen_capacity", "100000"}};
    grip_stage *st = NULL;
    ck_assert_int_eq(grip_index_bruteforce.create(ctx, all, 3, &st), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "index.screen_precision"));
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "index.screen_kernel"));
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "index.rescreen_capacity"));
    /* the edges of the range are taken */
    const grip_kv edges[] = {{"device", "cpu"}, {"rescreen_capacity", "1"}};
    ck_assert_int_eq(grip_index_bruteforce.create(ctx, edges, 2, &st), GRIP_OK);
    grip_index_bruteforce.destroy(st);
    grip_ctx_free(ctx);
}
END_TEST

/* The index built by a stage of these parameters (on the CPU), released by the caller. */
static grip_index *build_index(grip_ctx *ctx, const grip_stage_impl *impl, const grip_kv *kv, uint32_t n_kv)
{
    static const float rows[4 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    grip_stage *st = NULL;
    ck_assert_int_eq(impl->create(ctx, kv, n_kv, &st), GRIP_OK);
    grip_array ref = grip_array_host_view(GRIP_F32, 4, 3, (void *)rows);
    grip_index *ix = NULL;
    ck_assert_int_eq(impl->build(st, &ref, NULL, &ix), GRIP_OK);
    impl->destroy(st);
    return ix;
}

START_TEST(the_index_keeps_the_values)
{
    grip_ctx *ctx = grip_test_ctx();
    const grip_kv cpu[] = {{"device", "cpu"}};
    grip_index *ix = build_index(ctx, &grip_index_bruteforce, cpu, 1);
    const grip_bruteforce_cuda_options defaults = GRIP_BRUTEFORCE_CUDA_OPTIONS_DEFAULT;
    const grip_bruteforce_cuda_options *o = grip_index_bruteforce_options(ix);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(o->precision, defaults.precision);
    ck_assert_int_eq(o->kernel, defaults.kernel);
    ck_assert_uint_eq(o->rescreen_capacity, defaults.rescreen_capacity);
    ck_assert_int_eq(o->rescreen_all, 0);
    ix->release(ix);

    const grip_kv set[] = {
        {"device", "cpu"}, {"screen_precision", "fp16"}, {"screen_kernel", "mma_sync"}, {"rescreen_capacity", "4"}};
    ix = build_index(ctx, &grip_index_bruteforce, set, 4);
    o = grip_index_bruteforce_options(ix);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(o->precision, GRIP_BRUTEFORCE_CUDA_FP16);
    ck_assert_int_eq(o->kernel, GRIP_BRUTEFORCE_CUDA_KERNEL_MMA_SYNC);
    ck_assert_uint_eq(o->rescreen_capacity, 4);
    ck_assert_int_eq(o->rescreen_all, 0);
    ix->release(ix);

    /* another implementation's index has none */
    ix = build_index(ctx, &grip_index_kdtree, cpu, 1);
    ck_assert_ptr_null(grip_index_bruteforce_options(ix));
    ix->release(ix);
    ck_assert_ptr_null(grip_index_bruteforce_options(NULL));
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("index_bruteforce");
    TCase *tc = tcase_create("params");
    tcase_add_test(tc, parameters_are_in_the_table);
    tcase_add_test(tc, grip_host_lists_them);
    tcase_add_test(tc, bad_values_are_config_errors);
    tcase_add_test(tc, the_index_keeps_the_values);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
