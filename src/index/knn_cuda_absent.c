/* knn_cuda_absent.c -- the CUDA k-NN backend of a CPU-only build: every entry point reports that this build has
 * no GPU search (see knn_cuda.h), so callers fall back to the CPU twin grip_knn_exact. */
#include "index/knn_cuda.h"

#ifndef GRIP_HAVE_CUDA
static grip_status knn_cuda_unsupported(grip_ctx *ctx)
{
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "knn (cuda): the GPU search asked for from a CPU-only build of grip");
}

grip_status grip_knn_cuda_ref_upload(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                     const grip_knn_cuda_options *options, grip_knn_cuda_ref **out)
{
    (void)ref; (void)n; (void)dim; (void)options;
    if (out)
        *out = NULL;
    return knn_cuda_unsupported(ctx);
}

grip_status grip_knn_cuda_ref_copy_device(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                          const grip_knn_cuda_options *options, grip_knn_cuda_ref **out)
{
    return grip_knn_cuda_ref_upload(ctx, ref, n, dim, options, out);
}

const float *grip_knn_cuda_ref_rows(const grip_knn_cuda_ref *ref)
{
    (void)ref;
    return NULL;
}

const float *grip_knn_cuda_ref_host_rows(const grip_knn_cuda_ref *ref)
{
    (void)ref;
    return NULL;
}

int grip_knn_cuda_ref_is_streamed(const grip_knn_cuda_ref *ref)
{
    (void)ref;
    return 0;
}

size_t grip_knn_cuda_ref_device_bytes(const grip_knn_cuda_ref *ref)
{
    (void)ref;
    return 0;
}

void grip_knn_cuda_ref_free(grip_knn_cuda_ref *ref) { (void)ref; }

grip_status grip_knn_cuda_search(grip_ctx *ctx, const grip_knn_cuda_ref *ref, const float *queries, size_t m,
                                 uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist)
{
    (void)ref; (void)queries; (void)m; (void)k; (void)max_sqdist; (void)ids; (void)sqdist;
    return knn_cuda_unsupported(ctx);
}

grip_status grip_knn_cuda_search_device(grip_ctx *ctx, const grip_knn_cuda_ref *ref, const float *queries,
                                        size_t m, uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist)
{
    (void)ref; (void)queries; (void)m; (void)k; (void)max_sqdist; (void)ids; (void)sqdist;
    return knn_cuda_unsupported(ctx);
}

grip_status grip_knn_cuda_ref_upload_batched(grip_ctx *ctx, const float *ref, size_t n, size_t dim, size_t batch_rows,
                                             const grip_knn_cuda_options *options, grip_knn_cuda_ref **out)
{
    (void)batch_rows;
    return grip_knn_cuda_ref_upload(ctx, ref, n, dim, options, out);
}

void grip_knn_cuda_ref_limit_queries(grip_knn_cuda_ref *ref, size_t queries)
{
    (void)ref; (void)queries;
}
#else
/* the CUDA build gets these from cuda/knn_bruteforce.cu; keep this translation unit non-empty */
typedef int grip_knn_cuda_absent_unused;
#endif
