/* test_params.c -- parameter values parse and range-check as the tables say; a stage's config is resolved
 * with every problem reported at once. */
#include "test_support.h"
#include "core/params.h"

#include <string.h>

static const grip_param_info table[] = {
    GRIP_PARAM_DEVICE,
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "radius", "0.02", 0.0, 10.0, NULL, "support radius (m)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "k", "10", 1, 1000, NULL, "neighbours"},
    {sizeof(grip_param_info), GRIP_PARAM_BOOL, "flip", "true", 0, 0, NULL, "flip toward the viewpoint"},
};
#define N (sizeof table / sizeof table[0])

START_TEST(defaults_apply)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_param_value v[N];
    ck_assert_int_eq(grip_params_resolve(ctx, "descriptor", table, N, NULL, 0, v), GRIP_OK);
    ck_assert_int_eq(v[0].choice, GRIP_DEVICE_AUTO);
    ck_assert_double_eq_tol(v[1].number, 0.02, 1e-12);
    ck_assert_int_eq(v[2].integer, 10);
    ck_assert_int_eq(v[3].boolean, 1);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(values_override_defaults)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_param_value v[N];
    grip_kv kv[] = {{"radius", "0.5"}, {"k", "3"}, {"flip", "off"}, {"device", "cpu"}};
    ck_assert_int_eq(grip_params_resolve(ctx, "descriptor", table, N, kv, 4, v), GRIP_OK);
    ck_assert_double_eq_tol(v[1].number, 0.5, 1e-12);
    ck_assert_int_eq(v[2].integer, 3);
    ck_assert_int_eq(v[3].boolean, 0);
    ck_assert_int_eq(v[0].choice, GRIP_DEVICE_CPU);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(every_problem_is_reported_at_once)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_param_value v[N];
    grip_kv kv[] = {{"radius", "-1"}, {"k", "ten"}, {"radious", "0.1"}, {"device", "gpu"}, {"flip", "maybe"}};
    ck_assert_int_eq(grip_params_resolve(ctx, "descriptor", table, N, kv, 5, v), GRIP_ECONFIG);
    const char *e = ctx->last_error;
    ck_assert_ptr_nonnull(strstr(e, "descriptor.radius: -1 is out of range"));
    ck_assert_ptr_nonnull(strstr(e, "descriptor.k: 'ten' is not an integer"));
    ck_assert_ptr_nonnull(strstr(e, "descriptor.radious: unknown key"));
    ck_assert_ptr_nonnull(strstr(e, "descriptor.device: 'gpu' is not one of auto|cuda|cpu"));
    ck_assert_ptr_nonnull(strstr(e, "descriptor.flip: 'maybe' is not a boolean"));
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(non_finite_and_trailing_garbage_refused)
{
    grip_param_value v;
    char err[128];
    const grip_param_info *radius = &table[1];
    ck_assert_int_ne(grip_param_parse(radius, "nan", &v, err, sizeof err), 0);
    ck_assert_int_ne(grip_param_parse(radius, "inf", &v, err, sizeof err), 0);
    ck_assert_int_ne(grip_param_parse(radius, "0.1x", &v, err, sizeof err), 0);
    ck_assert_int_ne(grip_param_parse(radius, "", &v, err, sizeof err), 0);
    ck_assert_int_eq(grip_param_parse(radius, "1e-3", &v, err, sizeof err), 0);
    ck_assert_double_eq_tol(v.number, 1e-3, 1e-15);
}
END_TEST

START_TEST(cuda_without_device_is_a_config_error)
{
    grip_ctx *ctx = grip_test_ctx();
    int use_cuda = 1;
    if (grip_ctx_device_count(ctx) == 0) {
        ck_assert_int_eq(grip_device_resolve(ctx, "index", GRIP_DEVICE_CUDA, 1, &use_cuda), GRIP_ECONFIG);
        ck_assert_ptr_nonnull(strstr(ctx->last_error, "index.device"));
        ck_assert_int_eq(grip_device_resolve(ctx, "index", GRIP_DEVICE_AUTO, 1, &use_cuda), GRIP_OK);
        ck_assert_int_eq(use_cuda, 0);
    }
    ck_assert_int_eq(grip_device_resolve(ctx, "index", GRIP_DEVICE_CPU, 1, &use_cuda), GRIP_OK);
    ck_assert_int_eq(use_cuda, 0);
    grip_ctx_free(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("params");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, defaults_apply);
    tcase_add_test(tc, values_override_defaults);
    tcase_add_test(tc, every_problem_is_reported_at_once);
    tcase_add_test(tc, non_finite_and_trailing_garbage_refused);
    tcase_add_test(tc, cuda_without_device_is_a_config_error);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return grip_test_run(suite()); }
