/* kdtree3d_cuda_absent.c -- the GPU kd-tree of a CPU-only build: every entry point reports that this build has no
 * GPU search (see kdtree3d_cuda.h), so callers use the CPU twin grip_kdtree3d (src/spatial/kdtree3d.h). */
#include "spatial/kdtree3d_cuda.h"

#ifndef GRIP_HAVE_CUDA
static grip_status kdtree3d_cuda_unsupported(grip_ctx *ctx)
{
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "kdtree3d (cuda): the GPU kd-tree asked for from a CPU-only build of grip");
}

grip_status grip_kdtree3d_cuda_build(grip_ctx *ctx, const float *xyz, size_t n, grip_memory xyz_mem,
                                     uint32_t leaf_size, grip_kdtree3d_cuda **out)
{
    (void)xyz; (void)n; (void)xyz_mem; (void)leaf_size;
    if (out)
        *out = NULL;
    return kdtree3d_cuda_unsupported(ctx);
}

void grip_kdtree3d_cuda_free(grip_kdtree3d_cuda *tree) { (void)tree; }

size_t grip_kdtree3d_cuda_rows(const grip_kdtree3d_cuda *tree)
{
    (void)tree;
    return 0;
}

size_t grip_kdtree3d_cuda_size(const grip_kdtree3d_cuda *tree)
{
    (void)tree;
    return 0;
}

grip_status grip_kdtree3d_cuda_knn(grip_ctx *ctx, const grip_kdtree3d_cuda *tree, const float *queries, size_t m,
                                   grip_memory queries_mem, uint32_t k, uint32_t *ids, float *sqdist,
                                   grip_memory out_mem)
{
    (void)tree; (void)queries; (void)m; (void)queries_mem; (void)k; (void)ids; (void)sqdist; (void)out_mem;
    return kdtree3d_cuda_unsupported(ctx);
}
#else
/* the CUDA build gets these from cuda/kdtree3d.cu; keep this translation unit non-empty */
typedef int grip_kdtree3d_cuda_absent_unused;
#endif
