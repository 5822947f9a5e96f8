/* uniform_sampling_cuda_absent.c -- the GPU uniform sampling of a CPU-only build: the entry point reports that this
 * build has no GPU (see uniform_sampling_cuda.h), so callers use the CPU twin grip_uniform_sampling. */
#include "descriptor/uniform_sampling_cuda.h"

#ifndef GRIP_HAVE_CUDA
grip_status grip_uniform_sampling_cuda(grip_ctx *ctx, const grip_surface_cuda *s, float leaf, uint32_t **idx_dev,
                                       size_t *count)
{
    (void)s; (void)leaf;
    if (idx_dev)
        *idx_dev = NULL;
    if (count)
        *count = 0;
    return grip_fail(ctx, GRIP_EUNSUPPORTED,
                     "uniform_sampling (cuda): the GPU sampling asked for from a CPU-only build of grip");
}
#else
/* the CUDA build gets this from cuda/uniform_sampling.cu; keep this translation unit non-empty */
typedef int grip_uniform_sampling_cuda_absent_unused;
#endif
