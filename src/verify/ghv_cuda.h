/* ghv_cuda.h -- the terms of global hypotheses verification on the GPU: the twin of grip_ghv_scene_prepare and
 * grip_ghv_terms_compute (verify/ghv.h), with the same results bit for bit, so that the search over subsets (on the
 * host, grip_ghv_search: cheap once the terms are known) picks the same hypotheses on both backends.
 *
 * The scene is prepared once (grip_ghv_scene_cuda_create): uploaded, its resolution measured from the GPU kd-tree's
 * 2-nearest lists (summed on the host in row order, as the CPU twin sums them), sampled by the GPU uniform sampling
 * (the CPU twin's exact twin), a GPU kd-tree built over the sampled points and their neighbourhoods found by it.
 * The terms of all hypotheses are then computed in a few launches per batch of hypotheses (cuda/verify/ghv.cu):
 *   1. every model point of every hypothesis moved by its pose and tested for visibility (verify/ghv_math.h);
 *   2. the GRIP_GHV_EXPLAIN_K nearest sampled scene points of the visible ones, one kd-tree search for the batch;
 *   3. per hypothesis, integer atomic counts of visible points and outliers, the fixed-point inlier sum, and per
 *      (hypothesis, scene point) the minimum explaining squared distance as an atomic minimum of float bits;
 *   4. clutter: per (hypothesis, explained point), its neighbourhood's points the hypothesis does not explain, the
 *      minimum squared distance again by an atomic minimum;
 *   5. the (hypothesis, scene point) tables compacted row by row in scene-point order (block-wide scans).
 * Every value is an integer count, an integer sum or a minimum: no result depends on the order of the atomics.
 *
 * Ownership: create allocates the scene (host handle, its host part, device arrays); grip_ghv_scene_cuda_free frees
 * all of it. grip_ghv_terms_cuda fills a grip_ghv_terms the caller frees with grip_ghv_terms_free. The full cloud
 * given to create is borrowed by the host part (as grip_ghv_scene_prepare borrows it) and must outlive the scene.
 * Calls are synchronous and run on the context's device. A CPU-only build links src/no_cuda.c: GRIP_EUNSUPPORTED. */
#ifndef GRIP_VERIFY_GHV_CUDA_H
#define GRIP_VERIFY_GHV_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "spatial/neighborhood_cuda.h"
#include "verify/ghv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct grip_ghv_scene_cuda grip_ghv_scene_cuda;

/* The GPU scene of xyz (host, n x 3, kept by the caller while the scene lives; width x height as for
 * grip_ghv_scene_prepare); xyz_dev: the same points already on the context's device, read instead of uploading xyz,
 * or NULL; kept: a surface of those points already on the device (a descriptor stage's, stages/results.h), borrowed
 * for the scene's life instead of building one, or NULL. *out is NULL after a failure: GRIP_EINVAL / GRIP_ECONFIG
 * as the CPU twin, GRIP_ENOMEM, GRIP_ENODEV, GRIP_ECUDA, GRIP_EUNSUPPORTED. */
grip_status grip_ghv_scene_cuda_create(grip_ctx *ctx, const float *xyz, const float *xyz_dev,
                                       const grip_surface_cuda *kept, size_t n, uint32_t width, uint32_t height,
                                       const grip_ghv_params *p, grip_ghv_scene_cuda **out);
/* The host part: resolution, resolved parameters, the sampled points (xyz, rows), the camera. Its neighbourhood
 * arrays are NULL and its tree is built on demand (grip_ghv_scene_tree). Owned by the GPU scene. */
grip_ghv_scene *grip_ghv_scene_cuda_host(grip_ghv_scene_cuda *s);
void grip_ghv_scene_cuda_free(grip_ghv_scene_cuda *s);

/* The terms of the h hypotheses (as grip_ghv_terms_compute), computed on the GPU. On failure *out is zeroed. */
grip_status grip_ghv_terms_cuda(grip_ctx *ctx, grip_ghv_scene_cuda *s, const grip_ghv_model *models, uint32_t n_models,
                                const grip_ghv_hypothesis *hyps, size_t h, grip_ghv_terms *out);

#ifdef __cplusplus
}
#endif
#endif
