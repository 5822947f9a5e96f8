/* plugin.c -- the plugin table and the one exported symbol, grip_plugin_get(). Loading the library and calling
 * the entry touch no CUDA: a device is probed lazily by the first stage that needs one. */
#include "core/ctx.h"
#include "core/cuda_bridge.h"
#include "spatial/resolution.h"
#include "stages/cloud_input.h"
#include "stages/registry.h"

#define GRIP_STAGE_ENTRY(name) &grip_##name,
static const grip_stage_impl *const stages[] = {GRIP_STAGE_LIST(GRIP_STAGE_ENTRY)};
#undef GRIP_STAGE_ENTRY

static grip_status plugin_ctx_create(const grip_ctx_options *opts, grip_ctx **out)
{
    return grip_ctx_new(opts, out);
}

static const char *plugin_last_error(const grip_ctx *ctx)
{
    if (ctx && !grip_ctx_is_live(ctx))
        return "ctx_last_error: ctx is not a live grip context (destroyed?)";
    return grip_ctx_error_text(ctx);
}

static grip_status plugin_cloud_resolution(grip_ctx *ctx, const grip_cloud *cloud, double *out)
{
    if (!ctx || !grip_ctx_is_live(ctx) || !out)
        return grip_fail(ctx && grip_ctx_is_live(ctx) ? ctx : NULL, GRIP_EINVAL,
                         "cloud_resolution: ctx and out must be given");
    *out = 0;
    grip_cloud_input in = {0};
    grip_status st = grip_cloud_input_open(ctx, cloud, "cloud_resolution: cloud", &in);
    if (!st)
        st = grip_cloud_resolution_measure(ctx, in.xyz, in.n, out);
    if (!st && !(*out > 0))
        st = grip_fail(ctx, GRIP_EINVAL,
                       "cloud_resolution: the cloud%s%s%s has no two distinct finite points, so it has no resolution "
                       "to measure lengths in (give lengths in the cloud's unit instead of mr)",
                       cloud->name ? " '" : "", cloud->name ? cloud->name : "", cloud->name ? "'" : "");
    grip_cloud_input_close(&in);
    return st;
}

static grip_status plugin_ctx_stats(grip_ctx *ctx, grip_ctx_stats *out)
{
    if (!ctx || !grip_ctx_is_live(ctx) || !out)
        return grip_fail(ctx && grip_ctx_is_live(ctx) ? ctx : NULL, GRIP_EINVAL,
                         "ctx_stats: ctx and out must be given");
    if (out->struct_size < sizeof(grip_ctx_stats))
        return grip_fail(ctx, GRIP_EINVAL, "ctx_stats: out->struct_size %u is below the %zu bytes of grip_ctx_stats",
                         out->struct_size, sizeof(grip_ctx_stats));
    grip_cuda_pool_figures pool;
    grip_status st = grip_cuda_pool_usage(ctx, &pool);
    if (st)
        return st;
    const grip_ctx_counters *c = &ctx->counters;
    *out = (grip_ctx_stats){
        .struct_size = sizeof(grip_ctx_stats), /* all of it: a larger struct of a later minor keeps its tail */
        .device = ctx->device,
        .h2d_bytes = c->h2d_bytes,
        .d2h_bytes = c->d2h_bytes,
        .h2d_copies = c->h2d_copies,
        .d2h_copies = c->d2h_copies,
        .h2d_ns = c->h2d_ns,
        .d2h_ns = c->d2h_ns,
        .pool_reserved_bytes = pool.reserved,
        .pool_reserved_high_bytes = pool.reserved_high,
        .pool_used_bytes = pool.used,
        .pool_used_high_bytes = pool.used_high,
        .pool_grows = c->pool_grows,
    };
    return GRIP_OK;
}

static const grip_plugin plugin = {
    .struct_size = sizeof(grip_plugin),
    .abi_major = GRIP_ABI_MAJOR,
    .abi_minor = GRIP_ABI_MINOR,
    .name = "grip",
    .version = GRIP_VERSION,
#ifdef GRIP_HAVE_CUDA
    .capabilities = GRIP_CAP_CUDA,
#else
    .capabilities = 0,
#endif
    .status_str = grip_status_str,
    .ctx_create = plugin_ctx_create,
    .ctx_destroy = grip_ctx_free,
    .ctx_last_error = plugin_last_error,
    .device_count = grip_ctx_device_count,
    .n_stages = sizeof stages / sizeof stages[0],
    .stages = stages,
    .cloud_resolution = plugin_cloud_resolution,
    .ctx_stats = plugin_ctx_stats,
};

GRIP_EXPORT const grip_plugin *grip_plugin_get(uint32_t host_abi_major, uint32_t host_abi_minor)
{
    (void)host_abi_minor; /* any minor of our major: fields past a host's struct knowledge are simply not read */
    return host_abi_major == GRIP_ABI_MAJOR ? &plugin : NULL;
}
