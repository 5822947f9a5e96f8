/* bruteforce_cuda.h -- the CUDA backend of the `bruteforce` index: exact k nearest neighbours of D-dimensional float
 * rows on the context's GPU, with the results of the CPU twin grip_bruteforce_search (src/index/bruteforce.h) bit for
 * bit: the same ids, the same squared distances (summed in float, dimension after dimension, no fused multiply-add),
 * ties to the lower reference row, rows with a non-finite value never returned, queries with one get nothing,
 * the inclusive max_sqdist bound, padding with UINT32_MAX and +inf.
 *
 * The reference rows are uploaded once (grip_bruteforce_cuda_ref_upload) and searched many times. Every call is
 * synchronous. Searches with 32 <= dim <= 368 and k <= 16 take a faster path with the same results
 * (cuda/index/bruteforce_tensor.cu): tensor-core products (int8 or fp16, wgmma on Hopper, mma.sync elsewhere, as the
 * handle's grip_bruteforce_cuda_options say) screen the rows, each query's 32 best are re-ranked with the exact float
 * arithmetic, and a query the screening's rigorous error bound cannot certify is screened again with the bound its
 * exact candidates give, or searched again by the exact kernel; its data (dim rounded up to 16 or 32 halves, and 20
 * bytes per row) is prepared at upload. A CPU-only build links src/no_cuda.c instead, whose functions fail
 * with GRIP_EUNSUPPORTED.
 *
 * A reference set the device cannot hold (rows and screening) is not refused: the handle keeps the rows in host
 * memory instead (pinned when the host allows it) and every search streams them to the device in batches, each
 * screened and searched on its own and its k-lists merged into the running ones (ties to the lower row, as one
 * pass would). The batch size follows the device's free memory; when an allocation still fails, the batch, then
 * the slice of queries held on the device, is halved. Results are the same bit for bit, only slower: every search
 * moves the whole set over the bus. */
#ifndef GRIP_INDEX_KNN_CUDA_H
#define GRIP_INDEX_KNN_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest k the GPU search keeps; larger k fails with GRIP_EUNSUPPORTED (use the CPU twin). */
#define GRIP_BRUTEFORCE_CUDA_MAX_K 32

/* How the screened search runs (cuda/index/bruteforce_tensor.cu), set per handle at upload: a plugin inside someone
 * else's process takes its settings from its API (the `bruteforce` index stage's parameters), never from the
 * environment. Every choice gives the same results bit for bit; they differ in speed and device memory. */
typedef enum grip_bruteforce_cuda_precision {
    GRIP_BRUTEFORCE_CUDA_INT8 =
        0, /* int8 products where the wgmma kernel screens (fp16 on the mma.sync kernel, which has
                               no int8 form) */
    GRIP_BRUTEFORCE_CUDA_FP16 = 1 /* fp16 products on either kernel */
} grip_bruteforce_cuda_precision;

typedef enum grip_bruteforce_cuda_kernel {
    GRIP_BRUTEFORCE_CUDA_KERNEL_AUTO = 0, /* the wgmma kernel on a Hopper GPU when the build holds its sm_90a code, else
                                         the portable mma.sync kernel */
    GRIP_BRUTEFORCE_CUDA_KERNEL_MMA_SYNC = 1 /* the portable mma.sync kernel on every GPU */
} grip_bruteforce_cuda_kernel;

/* The default and the largest re-screen capacity: a batch of re-screened queries (up to 4096) holds 8 bytes per
 * listed row of each, 32 MiB at 1024, counted in every search's planned device memory. */
#define GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY 1024

typedef struct grip_bruteforce_cuda_options {
    grip_bruteforce_cuda_precision precision; /* of the screening's products */
    grip_bruteforce_cuda_kernel kernel;       /* which kernel screens */
    /* 1 .. GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY: the rows a query the screening could not certify may list when the
     * wgmma kernel screens it again (cuda/index/bruteforce_rescreen.cuh); a query with more goes on to the exact kernel
     * */
    uint32_t rescreen_capacity;
    /* for tests: every screened query is screened again (wgmma kernel only), certified or not, where a real search
     * re-screens only a few; 0 in any other use */
    int rescreen_all;
} grip_bruteforce_cuda_options;

/* The defaults: int8 where the wgmma kernel screens, the kernel chosen by the device, the largest capacity. */
#define GRIP_BRUTEFORCE_CUDA_OPTIONS_DEFAULT                                                                   \
    {                                                                                                          \
        GRIP_BRUTEFORCE_CUDA_INT8, GRIP_BRUTEFORCE_CUDA_KERNEL_AUTO, GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY, 0 \
    }

/* Reference rows resident on a device; opaque. */
typedef struct grip_bruteforce_cuda_ref grip_bruteforce_cuda_ref;

/* Copies ref (n x dim, row-major, host memory) to the context's device, or, when the device cannot hold it, into a
 * host copy that searches stream in batches (see above). options (GRIP_BRUTEFORCE_CUDA_OPTIONS_DEFAULT for the
 * defaults) are copied into the handle and rule its screening and every search of it. *out is allocated here and freed
 * by the caller with grip_bruteforce_cuda_ref_free(); it is NULL after a failure. Fails with GRIP_EINVAL on dim == 0, a
 * NULL ref with n > 0 or n >= UINT32_MAX, NULL options or options out of their ranges (the text names the field),
 * GRIP_ENOMEM when neither the device nor the host can hold the rows (the context stays usable), GRIP_ENODEV
 * without a usable device, GRIP_EUNSUPPORTED on a CPU-only build. */
grip_status grip_bruteforce_cuda_ref_upload(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                            const grip_bruteforce_cuda_options *options,
                                            grip_bruteforce_cuda_ref **out);
/* The same from rows already in device memory of the context's device (ref: device pointer, n x dim): copied on
 * the device into the handle's own rows (the caller keeps and frees its own), never through the host, unless the
 * device cannot hold a second copy: then they are downloaded into a streamed handle's host copy. */
grip_status grip_bruteforce_cuda_ref_copy_device(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                                 const grip_bruteforce_cuda_options *options,
                                                 grip_bruteforce_cuda_ref **out);
/* The handle's rows: device memory (n x dim, row-major, on the context's device), valid until
 * grip_bruteforce_cuda_ref_free; for reading them, e.g. as an index's reference array. NULL for a streamed handle,
 * whose rows are in host memory (grip_bruteforce_cuda_ref_host_rows). */
const float *grip_bruteforce_cuda_ref_rows(const grip_bruteforce_cuda_ref *ref);
/* A streamed handle's rows: host memory (n x dim, row-major), valid until grip_bruteforce_cuda_ref_free. NULL for a
 * resident handle (its rows are on the device: grip_bruteforce_cuda_ref_rows). */
const float *grip_bruteforce_cuda_ref_host_rows(const grip_bruteforce_cuda_ref *ref);
/* 1 when the handle streams its rows from host memory at every search, 0 when they are resident on the device. */
int grip_bruteforce_cuda_ref_is_streamed(const grip_bruteforce_cuda_ref *ref);
/* Device bytes the handle takes: resident, its rows and their screening, held until it is freed; streamed, one
 * batch of rows and its screening, held by each search while it runs (the batch size planned at upload). */
size_t grip_bruteforce_cuda_ref_device_bytes(const grip_bruteforce_cuda_ref *ref);
/* Frees the device rows and the handle; NULL is allowed. */
void grip_bruteforce_cuda_ref_free(grip_bruteforce_cuda_ref *ref);

/* The k nearest rows of ref to each of the m query rows (m x dim of ref, host memory), written to ids and sqdist
 * (m x k each, host memory, allocated by the caller), as grip_bruteforce_search writes them. Nothing is done when m or
 * k is
 * 0. The queries go to the device in slices as large as it holds (all at once when they fit). Fails with
 * GRIP_EINVAL on NULL arrays with non-zero sizes or a NaN max_sqdist, GRIP_EUNSUPPORTED when k >
 * GRIP_BRUTEFORCE_CUDA_MAX_K or on a CPU-only build, GRIP_ENOMEM when the device cannot hold even 64 queries with their
 * results (and, streamed, a batch of 128 rows) (the context stays usable), GRIP_ECUDA when a CUDA call fails. After
 * a failure the outputs may have been written in part. */
grip_status grip_bruteforce_cuda_search(grip_ctx *ctx, const grip_bruteforce_cuda_ref *ref, const float *queries,
                                        size_t m, uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist);

/* The same with queries, ids and sqdist in device memory of ref's device (for data that already lives there). */
grip_status grip_bruteforce_cuda_search_device(grip_ctx *ctx, const grip_bruteforce_cuda_ref *ref, const float *queries,
                                               size_t m, uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist);

/* For tests and benchmarks: a streamed handle over ref (host memory, as grip_bruteforce_cuda_ref_upload) whatever the
 * device could hold, searched in batches of batch_rows rows (>= 1; halved only when the device runs out of memory),
 * so that the batched search can be tested without filling a GPU. Fails as grip_bruteforce_cuda_ref_upload does, and
 * with GRIP_EINVAL on batch_rows == 0. */
grip_status grip_bruteforce_cuda_ref_upload_batched(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                                    size_t batch_rows, const grip_bruteforce_cuda_options *options,
                                                    grip_bruteforce_cuda_ref **out);
/* For tests and benchmarks: the most queries one search holds on the device at a time (0: as many as fit), so that
 * the slicing of the queries can be tested without filling a GPU. Applies to the handle's later searches. */
void grip_bruteforce_cuda_ref_limit_queries(grip_bruteforce_cuda_ref *ref, size_t queries);

#ifdef __cplusplus
}
#endif
#endif
