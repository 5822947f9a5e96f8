/* descriptor_front_cuda.h -- the device steps of the descriptor front (stages/descriptor_front.h) that no other
 * module offers: copying device memory and gathering the keypoints' normal rows. All pointers are device memory
 * of the context's device; every call is synchronous. A CPU-only build links descriptor_front_cuda_absent.c,
 * whose functions fail with GRIP_EUNSUPPORTED. */
#ifndef GRIP_STAGES_DESCRIPTOR_FRONT_CUDA_H
#define GRIP_STAGES_DESCRIPTOR_FRONT_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copies `bytes` from src to dst, both device memory (0 bytes is allowed). */
grip_status grip_front_cuda_copy(grip_ctx *ctx, void *dst, const void *src, size_t bytes);

/* out[i] = normals[idx[i]] for i < count: rows of 4 floats; idx must be < the rows of normals (the caller checks). */
grip_status grip_front_cuda_gather_normals(grip_ctx *ctx, const float *normals, const uint32_t *idx, size_t count,
                                           float *out);

#ifdef __cplusplus
}
#endif
#endif
