/* knn_cuda.h -- the CUDA backend of the `bruteforce` index: exact k nearest neighbours of D-dimensional float
 * rows on the context's GPU, with the results of the CPU twin grip_knn_exact (src/index/knn_exact.h) bit for bit:
 * the same ids, the same squared distances (summed in float, dimension after dimension, no fused multiply-add),
 * ties to the lower reference row, rows with a non-finite value never returned, queries with one get nothing,
 * the inclusive max_sqdist bound, padding with UINT32_MAX and +inf.
 *
 * The reference rows are uploaded once (grip_knn_cuda_ref_upload) and searched many times. Every call is
 * synchronous. Searches with 32 <= dim <= 368 and k <= 16 take a faster path with the same results
 * (cuda/knn_tensor.cu): fp16 tensor-core products screen the rows, each query's 32 best are re-ranked with the
 * exact float arithmetic, and a query the screening's rigorous error bound cannot certify is searched again by
 * the exact kernel; its data (dim rounded up to 16 halves and 20 bytes per row) is prepared at upload. A CPU-only
 * build links src/index/knn_cuda_absent.c instead, whose functions fail with GRIP_EUNSUPPORTED. */
#ifndef GRIP_INDEX_KNN_CUDA_H
#define GRIP_INDEX_KNN_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest k the GPU search keeps; larger k fails with GRIP_EUNSUPPORTED (use the CPU twin). */
#define GRIP_KNN_CUDA_MAX_K 32

/* Reference rows resident on a device; opaque. */
typedef struct grip_knn_cuda_ref grip_knn_cuda_ref;

/* Copies ref (n x dim, row-major, host memory) to the context's device. *out is allocated here and freed by the
 * caller with grip_knn_cuda_ref_free(); it is NULL after a failure. Fails with GRIP_EINVAL on dim == 0, a NULL ref
 * with n > 0 or n >= UINT32_MAX, GRIP_ENOMEM when host or device memory is short (the context stays usable),
 * GRIP_ENODEV without a usable device, GRIP_EUNSUPPORTED on a CPU-only build. */
grip_status grip_knn_cuda_ref_upload(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                     grip_knn_cuda_ref **out);
/* The same from rows already in device memory of the context's device (ref: device pointer, n x dim): copied on
 * the device into the handle's own rows (the caller keeps and frees its own), never through the host. */
grip_status grip_knn_cuda_ref_copy_device(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                          grip_knn_cuda_ref **out);
/* The handle's rows: device memory (n x dim, row-major, on the context's device), valid until
 * grip_knn_cuda_ref_free; for reading them, e.g. as an index's reference array. */
const float *grip_knn_cuda_ref_rows(const grip_knn_cuda_ref *ref);
/* Frees the device rows and the handle; NULL is allowed. */
void grip_knn_cuda_ref_free(grip_knn_cuda_ref *ref);

/* The k nearest rows of ref to each of the m query rows (m x dim of ref, host memory), written to ids and sqdist
 * (m x k each, host memory, allocated by the caller), as grip_knn_exact writes them. Nothing is done when m or k is
 * 0. Fails with GRIP_EINVAL on NULL arrays with non-zero sizes or a NaN max_sqdist, GRIP_EUNSUPPORTED when
 * k > GRIP_KNN_CUDA_MAX_K or on a CPU-only build, GRIP_ENOMEM when the device cannot hold the queries and results
 * (the context stays usable; the outputs are then untouched), GRIP_ECUDA when a CUDA call fails. */
grip_status grip_knn_cuda_search(grip_ctx *ctx, const grip_knn_cuda_ref *ref, const float *queries, size_t m,
                                 uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist);

/* The same with queries, ids and sqdist in device memory of ref's device (for data that already lives there). */
grip_status grip_knn_cuda_search_device(grip_ctx *ctx, const grip_knn_cuda_ref *ref, const float *queries,
                                        size_t m, uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist);

#ifdef __cplusplus
}
#endif
#endif
