/* index_kdforest.c -- the `kdforest` index stage: randomized kd-trees over n x D descriptor rows (Hu 2017 ch. 5,
 * Silpa-Anan & Hartley: each split on a dimension drawn among the top_spans widest), searched best bin first with
 * one priority queue over all trees and a bound on the leaves visited; the last active queries of a batch may be
 * finished by brute force (P-BANNS). CPU twin: src/index/kdtree_hd.c; GPU: cuda/index/kdtree_hd.cu. */
#include "stages/stage.h"
#include "stages/index_kdtree_hd.h"
#include "stages/registry.h"

static const grip_param_info kdforest_params[] = {
    GRIP_PARAM_DEVICE,
    GRIP_PARAM_FALLBACK,
    {sizeof(grip_param_info), GRIP_PARAM_INT, "trees", "4", 1, 64, NULL,
     "randomized trees, each over every reference row"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "top_spans", "5", 1, 64, NULL,
     "a node splits on a dimension drawn among its top_spans widest spans (1: the widest)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "node_size", "32", 1, 65536, NULL,
     "most reference rows per leaf (a node with more splits unless all its rows are equal)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "checks", "64", 0, 4294967295.0, NULL,
     "most leaves visited per query over all trees; 0 = exact search (of the first tree)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "finish_below", "0", 0, 4294967295.0, NULL,
     "once fewer queries of a batch are still searching, they are finished by exact brute force; 0 = never"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "seed", "0", 0, 9007199254740991.0, NULL,
     "seed of the random split choices (the same seed builds the same forest)"},
};

static grip_status kdforest_build(grip_stage *st, const grip_array *reference, const grip_array *model_ids,
                                  grip_index **out)
{
    grip_status s = grip_stage_check_call(&grip_index_kdforest, st, out, GRIP_MEM_HOST);
    if (s)
        return s;
    const grip_kdtree_hd_params tree = {(uint32_t)grip_stage_integer(st, "trees"),
                                        (uint32_t)grip_stage_integer(st, "top_spans"),
                                        (uint32_t)grip_stage_integer(st, "node_size"),
                                        (uint64_t)grip_stage_integer(st, "seed")};
    const grip_kdtree_hd_search_params search = {(uint32_t)grip_stage_integer(st, "checks"),
                                                 (uint32_t)grip_stage_integer(st, "finish_below")};
    return grip_kdtree_hd_index_build(st, reference, model_ids, &tree, &search, out);
}

static grip_status kdforest_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_index_kdforest = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_INDEX,
    .name = "kdforest",
    .summary = "randomized kd-trees over descriptors (Hu 2017 ch. 5): approximate k-NN, one queue over all trees",
#ifdef GRIP_HAVE_CUDA
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
#else
    .backends = GRIP_BACKEND_CPU,
#endif
    .n_params = sizeof kdforest_params / sizeof kdforest_params[0],
    .params = kdforest_params,
    .create = kdforest_create,
    .destroy = grip_stage_destroy,
    .build = kdforest_build,
};

static grip_status kdforest_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_index_kdforest, ctx, kv, n_kv, out);
}
