/* kdtree_hd_cuda_absent.c -- the CUDA kd-tree backend of a CPU-only build: every entry point reports that this
 * build has no GPU (see kdtree_hd_cuda.h), so the stages use the CPU twin. */
#include "index/kdtree_hd_cuda.h"

#ifndef GRIP_HAVE_CUDA
static grip_status kdtree_hd_cuda_unsupported(grip_ctx *ctx)
{
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "kdtree_hd (cuda): the GPU kd-tree asked for from a CPU-only build");
}

grip_status grip_kdtree_hd_cuda_build(grip_ctx *ctx, const float *rows, int on_device, size_t n, uint32_t dim,
                                      const grip_kdtree_hd_params *params, grip_kdtree_hd_cuda **out)
{
    (void)rows; (void)on_device; (void)n; (void)dim; (void)params;
    if (out)
        *out = NULL;
    return kdtree_hd_cuda_unsupported(ctx);
}

grip_status grip_kdtree_hd_cuda_upload(grip_ctx *ctx, const grip_kdtree_hd *tree, const float *rows, size_t n,
                                       grip_kdtree_hd_cuda **out)
{
    (void)tree; (void)rows; (void)n;
    if (out)
        *out = NULL;
    return kdtree_hd_cuda_unsupported(ctx);
}

grip_status grip_kdtree_hd_cuda_download(grip_ctx *ctx, const grip_kdtree_hd_cuda *tree, grip_kdtree_hd **out)
{
    (void)tree;
    if (out)
        *out = NULL;
    return kdtree_hd_cuda_unsupported(ctx);
}

const float *grip_kdtree_hd_cuda_rows(const grip_kdtree_hd_cuda *tree)
{
    (void)tree;
    return NULL;
}

void grip_kdtree_hd_cuda_free(grip_kdtree_hd_cuda *tree) { (void)tree; }

grip_status grip_kdtree_hd_cuda_search(grip_ctx *ctx, const grip_kdtree_hd_cuda *tree, const float *queries,
                                       size_t m, uint32_t k, uint32_t checks, uint32_t finish_below,
                                       float max_sqdist, uint32_t *ids, float *sqdist)
{
    (void)tree; (void)queries; (void)m; (void)k; (void)checks; (void)finish_below; (void)max_sqdist; (void)ids;
    (void)sqdist;
    return kdtree_hd_cuda_unsupported(ctx);
}
#else
/* the CUDA build gets these from cuda/kdtree_hd.cu; keep this translation unit non-empty */
typedef int grip_kdtree_hd_cuda_absent_unused;
#endif
