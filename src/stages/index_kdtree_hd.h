/* index_kdtree_hd.h -- the index object the `kdtree` and `kdforest` stages return: a forest of
 * src/index/kdtree_hd.h over the reference rows, searched on the CPU or, on a CUDA stage, on the device
 * (src/index/kdtree_hd_cuda.h; k above GRIP_KDTREE_HD_CUDA_MAX_K is answered by the CPU twin from host copies
 * of the rows and the tree, downloaded on the first such search). */
#ifndef GRIP_STAGES_INDEX_KDTREE_HD_H
#define GRIP_STAGES_INDEX_KDTREE_HD_H

#include "stages/stage.h"
#include "index/kdtree_hd.h"

/* How the index searches: checks 0 = exact (the index says exact = 1); finish_below as grip_kdtree_hd_search. */
typedef struct grip_kdtree_hd_search_params {
    uint32_t checks;
    uint32_t finish_below;
} grip_kdtree_hd_search_params;

/* The build() of both stages, once the stage's own entry point has checked its call (grip_stage_check_call):
 * checks the reference rows and model ids (stages/index_common.h), builds the forest
 * where the stage runs and writes a new index to *out, which the caller releases through its release pointer; a
 * device failure under `fallback = cpu` builds it again on the CPU (GRIP_STAGE_CALL). */
grip_status grip_kdtree_hd_index_build(grip_stage *stage, const grip_array *reference, const grip_array *model_ids,
                                       const grip_kdtree_hd_params *tree, const grip_kdtree_hd_search_params *search,
                                       grip_index **out);

#endif
