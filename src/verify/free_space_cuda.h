/* free_space_cuda.h -- grip_free_space_violations (free_space.h) on the context's CUDA device: one thread per model
 * point of every pose, the same test (free_space_math.h) and integer counts, so the fractions equal the CPU twin's
 * bit for bit. The scene is already on the device (the icp stage's scene copy); each distinct model of the jobs is
 * uploaded once.
 *
 * Ownership: every argument is the caller's, read during the call only; violation (n floats, host) is written only
 * on success. Synchronous. Errors: GRIP_EINVAL (NULL arguments, a stride below 3), GRIP_ENOMEM, GRIP_ECUDA. A
 * CPU-only build links src/no_cuda.c: GRIP_EUNSUPPORTED. */
#ifndef GRIP_VERIFY_FREE_SPACE_CUDA_H
#define GRIP_VERIFY_FREE_SPACE_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "verify/free_space.h"

#ifdef __cplusplus
extern "C" {
#endif

/* scene_dev: width x height points on the context's device, row-major, `stride` floats each (x, y, z first);
 * jobs: n poses of host models, as for grip_free_space_violations. */
grip_status grip_free_space_violations_cuda(grip_ctx *ctx, const grip_pinhole *cam, const float *scene_dev,
                                            size_t stride, uint32_t width, uint32_t height,
                                            const grip_free_space_job *jobs, size_t n, double tolerance,
                                            float *violation);

#ifdef __cplusplus
}
#endif
#endif
