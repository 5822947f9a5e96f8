/* test_ctx_stats.c -- grip_plugin.ctx_stats (ABI 1.2) through the ABI alone: it refuses what it must, a context
 * that never used a device reports zeros (device -1), and a whole pipeline run on the CPU moves no byte between
 * host and device. (tests/gpu/test_pool_steady.c checks the counters on a device.) */
#include "plugin_abi_support.h"

static const float scene_pose[16] = {0.8660254f, -0.5f, 0, 0.05f, 0.5f, 0.8660254f, 0, -0.02f, 0, 0, 1, 0.01f,
                                     0, 0, 0, 1};

static void assert_no_device_activity(const grip_ctx_stats *s)
{
    ck_assert_uint_eq(s->struct_size, sizeof *s);
    ck_assert_int_eq(s->device, -1);
    const uint64_t counts[] = {s->h2d_bytes, s->d2h_bytes, s->h2d_copies, s->d2h_copies, s->h2d_ns, s->d2h_ns,
                               s->pool_reserved_bytes, s->pool_reserved_high_bytes, s->pool_used_bytes,
                               s->pool_used_high_bytes, s->pool_grows};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        ck_assert_msg(counts[i] == 0, "counter %zu is %llu", i, (unsigned long long)counts[i]);
}

START_TEST(stats_refuse_bad_arguments)
{
    abi_plugin pl;
    char err[512] = "";
    ck_assert_msg(abi_plugin_open(&pl, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_ge(pl.api->abi_minor, 2);
    ck_assert_uint_ge(pl.api->struct_size, offsetof(grip_plugin, ctx_stats) + sizeof pl.api->ctx_stats);
    ck_assert_ptr_nonnull(pl.api->ctx_stats);
    grip_ctx *ctx = NULL;
    ck_assert_int_eq(pl.api->ctx_create(NULL, &ctx), GRIP_OK);
    grip_ctx_stats s = {.struct_size = sizeof s};
    ck_assert_int_eq(pl.api->ctx_stats(NULL, &s), GRIP_EINVAL);
    ck_assert_int_eq(pl.api->ctx_stats(ctx, NULL), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(pl.api->ctx_last_error(ctx), "ctx_stats"));
    /* a struct shorter than ABI 1.2's is refused, and nothing is written into it */
    memset(&s, 0x5a, sizeof s);
    s.struct_size = offsetof(grip_ctx_stats, pool_grows);
    ck_assert_int_eq(pl.api->ctx_stats(ctx, &s), GRIP_EINVAL);
    ck_assert_uint_eq(s.pool_grows, 0x5a5a5a5a5a5a5a5aull);
    ck_assert_ptr_nonnull(strstr(pl.api->ctx_last_error(ctx), "struct_size"));
    pl.api->ctx_destroy(ctx);
    abi_plugin_close(&pl);
}
END_TEST

START_TEST(a_cpu_run_moves_nothing_over_pcie)
{
    abi_plugin pl;
    char err[512] = "";
    ck_assert_msg(abi_plugin_open(&pl, err, sizeof err) == 0, "%s", err);
    grip_ctx *ctx = NULL;
    ck_assert_int_eq(pl.api->ctx_create(NULL, &ctx), GRIP_OK);
    grip_ctx_stats s;
    memset(&s, 0xff, sizeof s);
    s.struct_size = sizeof s;
    ck_assert_int_eq(pl.api->ctx_stats(ctx, &s), GRIP_OK);
    assert_no_device_activity(&s);

    abi_cloud model, scene;
    abi_cloud_make(&model, 0.2f, 0.005f, NULL);
    abi_cloud_make(&scene, 0.2f, 0.005f, scene_pose);
    abi_run run;
    grip_status st = abi_pipeline_run(pl.api, ctx, &model.cloud, &scene.cloud, &run);
    ck_assert_msg(st == GRIP_OK, "the CPU run: %s", pl.api->ctx_last_error(ctx));
    ck_assert_uint_gt(run.matches, 0);
    memset(&s, 0xff, sizeof s);
    s.struct_size = sizeof s;
    ck_assert_int_eq(pl.api->ctx_stats(ctx, &s), GRIP_OK);
    assert_no_device_activity(&s);

    abi_cloud_free(&model);
    abi_cloud_free(&scene);
    pl.api->ctx_destroy(ctx);
    abi_plugin_close(&pl);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctx_stats");
    grip_test_add_case(s, "arguments", stats_refuse_bad_arguments);
    grip_test_add_case(s, "cpu", a_cpu_run_moves_nothing_over_pcie);
    return grip_test_run(s);
}
