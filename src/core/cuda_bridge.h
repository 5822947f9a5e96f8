/* cuda_bridge.h -- the few entry points the C11 side calls into cuda/. On a build without nvcc,
 * src/no_cuda.c provides them and reports no device. */
#ifndef GRIP_CORE_CUDA_BRIDGE_H
#define GRIP_CORE_CUDA_BRIDGE_H

#include "plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Usable CUDA devices (0 when there is no driver or no device). Never fails loudly. */
int grip_cuda_device_count(void);
/* Copies bytes from device memory to host memory (synchronously). GRIP_EUNSUPPORTED on a CPU-only build. */
grip_status grip_cuda_copy_to_host(grip_ctx *ctx, void *dst, const void *src, size_t bytes);
/* Copies `bytes` of host memory into a new allocation on the context's device (*dev, on ordinal *device).
 * GRIP_ENOMEM when the device is full, GRIP_EUNSUPPORTED on a CPU-only build. Free with grip_cuda_free(). */
grip_status grip_cuda_upload(grip_ctx *ctx, const void *host, size_t bytes, void **dev, int *device);
/* Frees memory from grip_cuda_upload or grip_cuda_alloc; NULL is allowed. */
void grip_cuda_free(void *dev);
/* A new, uninitialised allocation of `bytes` (0 is allowed) on the context's device, from the context's stream-ordered
 * pool: after the first calls, allocating and freeing cost microseconds, not a driver round trip. The caller frees
 * it with grip_cuda_free(). *dev is NULL after a failure: GRIP_ENOMEM when the device is full (the context stays
 * usable), GRIP_ENODEV without a device, GRIP_EUNSUPPORTED on a CPU-only build. */
grip_status grip_cuda_alloc(grip_ctx *ctx, size_t bytes, void **dev);
/* Copies host bytes into existing device memory (synchronously). */
grip_status grip_cuda_copy_to_device(grip_ctx *ctx, void *dev, const void *host, size_t bytes);
/* Copies rows row_ids[0 .. count) of `rows` (device memory, each `dim` floats; the ids in host memory, each below
 * the rows' number, which the caller checks) into out (device memory, count x dim, allocated by the caller), in
 * that order. Enqueued on the default stream: ordered with the synchronous calls above. */
grip_status grip_cuda_gather_rows(grip_ctx *ctx, const float *rows, size_t dim, const uint32_t *row_ids, size_t count,
                                  float *out);
/* Copies `bytes` from src to dst, both device memory of the context's device (0 bytes is allowed; synchronous). */
grip_status grip_cuda_copy_on_device(grip_ctx *ctx, void *dst, const void *src, size_t bytes);
/* out[i] = rows[idx[i]] for i < count, rows of 4 floats (normals with curvature); rows, idx and out in device memory,
 * idx below the rows' number (the caller checks). Synchronous. */
grip_status grip_cuda_gather_rows4(grip_ctx *ctx, const float *rows, const uint32_t *idx, size_t count, float *out);
/* Waits for the work queued on the default stream; a kernel's fault surfaces here, named by this call. */
grip_status grip_cuda_sync(grip_ctx *ctx);
/* Makes the context's device current on the calling thread and, on its first use, creates its memory pool: what a
 * first allocation does, for a caller that hands the context's device to worker contexts (core/ctx.h). GRIP_ENODEV
 * without a usable device, GRIP_EUNSUPPORTED on a CPU-only build. */
grip_status grip_cuda_ctx_prepare(grip_ctx *ctx);
/* Frees the context's CUDA state: destroys its memory pool, whose memory goes back to the driver once the last
 * block still allocated from it is freed. Safe when none was made. */
void grip_cuda_ctx_release(grip_ctx *ctx);

/* The figures of the context's device memory pool, in bytes (CUDA's cudaMemPoolAttr{Reserved,Used}Mem{Current,High}):
 * what the pool holds from the driver, and what of it is allocated, now and at most since the pool was made. */
typedef struct grip_cuda_pool_figures {
    uint64_t reserved, reserved_high, used, used_high;
} grip_cuda_pool_figures;
/* Fills *out (all 0 before the context's first device use, and on a CPU-only build, which returns GRIP_OK). */
grip_status grip_cuda_pool_usage(grip_ctx *ctx, grip_cuda_pool_figures *out);
/* Hands the cached, unused blocks of the context's pool back to the driver, after the work queued so far: a streamed
 * search plans with the device's free memory, and the fault tests measure it. The next allocations grow the pool
 * again. GRIP_OK when the context has no pool (and on a CPU-only build). */
grip_status grip_cuda_pool_trim(grip_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
