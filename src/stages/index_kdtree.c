/* index_kdtree.c -- the `kdtree` index stage: Hu 2017's kd-tree over n x D descriptor rows (widest span, midpoint
 * split, points in leaves of at most node_size), searched exactly or with a bound on the leaves visited (P-ANNS).
 * CPU twin: src/index/kdtree_hd.c; GPU: cuda/index/kdtree_hd.cu. */
#include "stages/stage.h"
#include "stages/index_kdtree_hd.h"
#include "stages/registry.h"

static const grip_param_info kdtree_params[] = {
    GRIP_PARAM_DEVICE,
    GRIP_PARAM_FALLBACK,
    {sizeof(grip_param_info), GRIP_PARAM_INT, "node_size", "32", 1, 65536, NULL,
     "most reference rows per leaf (a node with more splits unless all its rows are equal)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "checks", "0", 0, 4294967295.0, NULL,
     "most leaves visited per query (Hu's backtrack bound); 0 = exact search"},
};

static grip_status kdtree_build(grip_stage *st, const grip_array *reference, const grip_array *model_ids,
                                grip_index **out)
{
    grip_status s = grip_stage_check_call(&grip_index_kdtree, st, out, GRIP_MEM_HOST);
    if (s)
        return s;
    const grip_kdtree_hd_params tree = {1, 1, (uint32_t)grip_stage_integer(st, "node_size"), 0};
    const grip_kdtree_hd_search_params search = {(uint32_t)grip_stage_integer(st, "checks"), 0};
    return grip_kdtree_hd_index_build(st, reference, model_ids, &tree, &search, out);
}

static grip_status kdtree_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_index_kdtree = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_INDEX,
    .name = "kdtree",
    .summary = "kd-tree over descriptors (Hu 2017): exact k-NN, or approximate with a bound on the leaves visited",
#ifdef GRIP_HAVE_CUDA
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
#else
    .backends = GRIP_BACKEND_CPU,
#endif
    .n_params = sizeof kdtree_params / sizeof kdtree_params[0],
    .params = kdtree_params,
    .create = kdtree_create,
    .destroy = grip_stage_destroy,
    .build = kdtree_build,
};

static grip_status kdtree_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_index_kdtree, ctx, kv, n_kv, out);
}
