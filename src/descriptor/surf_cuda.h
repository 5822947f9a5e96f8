/* surf_cuda.h -- the GPU twin of grip_surf_run (surf.h), the same keypoints in the same order and the same
 * descriptors (surf_math.h says how closely).
 *
 * Kernels: the integral image by a two-pass parallel scan (each row by a block-wide scan, then each column in
 * segments whose totals are scanned in shared memory); one launch per response layer (a thread per sample); one
 * launch per (octave, middle interval) for the 3 x 3 x 3 test and the fit, each kept point appended through an
 * atomic counter into a capacity-bounded list with its sort key (no-depth flag, slot, row, column), the depth
 * checked right there; a radix sort of the keys orders the points as the CPU twin does, with the dropped ones
 * last; then a warp per keypoint for the orientation (lanes share the 109 samples, each lane sums whole windows in
 * the twin's order) and a warp per keypoint for the descriptor (a lane per subregion; lane 0 normalises). */
#ifndef GRIP_DESCRIPTOR_SURF_CUDA_H
#define GRIP_DESCRIPTOR_SURF_CUDA_H

#include "descriptor/surf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What grip_surf_cuda found and kept; the arrays are device memory of the context's device, allocated by
 * grip_surf_cuda and freed by grip_surf_cuda_result_free (also after a failure; NULL when count is 0). */
typedef struct grip_surf_cuda_result {
    size_t n_found, n_no_depth, count; /* as grip_surf_result */
    grip_surf_keypoint *keypoints;     /* count */
    uint32_t *pixels;                  /* count: each keypoint's pixel (= keypoints[i].pixel), the cloud index */
    float *xyz;                        /* count x 3: the cloud's point at that pixel (NULL when no cloud was given) */
    float *descriptors;                /* count x grip_surf_dim(p) */
} grip_surf_cuda_result;

/* SURF of the width x height grey image `grey` (device memory), lifted through xyz (device, width height x 3)
 * or, with xyz NULL, every keypoint kept. Synchronous. Errors as grip_surf_run (GRIP_EINVAL, GRIP_ECONFIG on
 * overflow with out->n_found set), plus GRIP_ENODEV, GRIP_ECUDA, GRIP_ENOMEM for the device, and
 * GRIP_EUNSUPPORTED on a CPU-only build. */
grip_status grip_surf_cuda(grip_ctx *ctx, const uint8_t *grey, const float *xyz, uint32_t width, uint32_t height,
                           const grip_surf_params *p, grip_surf_cuda_result *out);

void grip_surf_cuda_result_free(grip_surf_cuda_result *r);

#ifdef __cplusplus
}
#endif
#endif
