/* icp_cuda.h -- every hypothesis of a verify call refined by ICP in one batched computation on the GPU: the twin of
 * grip_icp_refine_scene (icp.h), hypothesis by hypothesis the same loop, the same stop rules and the same score.
 *
 * The scene is prepared once (grip_icp_cuda_scene_build: the GPU 3D kd-tree over its points and device copies of
 * its points and normals); then grip_icp_cuda_refine runs all hypotheses at once: each iteration is two launches
 * over (hypothesis x model point), whatever the number of hypotheses (cuda/verify/icp.cu says how, and why its
 * sums are deterministic). Nearest neighbours are exact and equal the CPU twin's (same float query, same
 * (distance, index) order); the per-pair terms and the update are icp_math.h's, so that the GPU's poses agree with
 * the CPU twin's to rounding (about 1e-12 after 30 iterations on well-posed data; the tests ask for 1e-4).
 *
 * Ownership: the scene is allocated by grip_icp_cuda_scene_build and freed by grip_icp_cuda_scene_free; every
 * other argument is the caller's, read during the call only. Calls are synchronous (results ready on return) and
 * run on the context's device, but for a scene built on a kept surface and a refinement started apart (below): their
 * kernels are queued on the calling thread's stream, where the calls that follow queue theirs, so the host may work
 * while they run. A CPU-only build links src/no_cuda.c: GRIP_EUNSUPPORTED. */
#ifndef GRIP_VERIFY_ICP_CUDA_H
#define GRIP_VERIFY_ICP_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "spatial/neighborhood_cuda.h"
#include "verify/icp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct grip_icp_cuda_scene grip_icp_cuda_scene;

/* Builds the scene of n points xyz (host, n x 3; non-finite rows are never paired) with optional normals (host,
 * rows of normal_stride >= 3 floats, or NULL) and the sensor's viewpoint (NULL: the origin). xyz_dev: the same
 * points already on the context's device (n x 3, the caller's), read instead of uploading xyz; or NULL. kept: a
 * surface of those n points on the device (a descriptor stage's, stages/results.h), read instead of either, its
 * measured box taken for the tree's, so that the build does not wait (above); or NULL (also ignored when its
 * size is not n). *out is NULL after a failure: GRIP_EINVAL (NULL out, both xyz NULL with n > 0, stride below 3,
 * n >= 2^31), GRIP_ENOMEM, GRIP_ENODEV, GRIP_ECUDA, GRIP_EUNSUPPORTED (CPU-only build). */
grip_status grip_icp_cuda_scene_build(grip_ctx *ctx, const float *xyz, const float *xyz_dev,
                                      const grip_surface_cuda *kept, size_t n, const float *normals,
                                      size_t normal_stride, const double viewpoint[3], grip_icp_cuda_scene **out);
void grip_icp_cuda_scene_free(grip_icp_cuda_scene *scene);
/* The scene's points on the device, by row (an organized scene keeps its layout), *stride floats each (x, y, z
 * first); owned by the scene. */
const float *grip_icp_cuda_scene_points(const grip_icp_cuda_scene *scene, size_t *stride);

/* The hypotheses of one batch, over the ICP points of every model (grip_icp_model_points, concatenated). */
typedef struct grip_icp_batch {
    const float *model_xyz;     /* host, model_first[n_models] rows x 3 */
    const float *model_normals; /* host, the same rows x 3, or NULL: every point is scored */
    const size_t *model_first;  /* n_models + 1 ascending row offsets: model m is rows [first[m], first[m+1]) */
    uint32_t n_models;
    uint32_t n_hypotheses;
    const uint32_t *hypothesis_model; /* n_hypotheses model numbers, each < n_models */
    const double *init_poses;         /* n_hypotheses x 16, row-major, finite */
} grip_icp_batch;

/* Refines and scores every hypothesis of the batch against the scene under params (grip_icp_params_check;
 * voxel_leaf is not read here: the batch holds the points ICP uses). out: the caller's n_hypotheses results, out[h]
 * as grip_icp_refine_scene gives for hypothesis h; written only on success. Errors: GRIP_EINVAL, GRIP_ECONFIG
 * (point-to-plane on a scene built without normals), GRIP_ENOMEM (the context stays usable), GRIP_ECUDA,
 * GRIP_EUNSUPPORTED. */
grip_status grip_icp_cuda_refine(grip_ctx *ctx, const grip_icp_params *params, const grip_icp_cuda_scene *scene,
                                 const grip_icp_batch *batch, grip_icp_result *out);

/* grip_icp_cuda_refine in two calls, so that the host can work while the device iterates. _start checks and
 * uploads the batch (whose arrays the caller may free on return), queues the first iterations (at least `queued`,
 * and at least 4: as many as the device would run while the caller works before _finish; the results do not
 * depend on it) and returns before they ran, the run in *out (NULL after a failure); the scene must live until the
 * run is finished or freed.
 * _finish runs the rest, writes out as grip_icp_cuda_refine does and frees the run, also when it fails. A run not
 * to be finished is freed by grip_icp_cuda_run_free (NULL allowed). Errors: as grip_icp_cuda_refine's. */
typedef struct grip_icp_cuda_run grip_icp_cuda_run;
grip_status grip_icp_cuda_refine_start(grip_ctx *ctx, const grip_icp_params *params, const grip_icp_cuda_scene *scene,
                                       const grip_icp_batch *batch, uint32_t queued, grip_icp_cuda_run **out);
grip_status grip_icp_cuda_refine_finish(grip_ctx *ctx, grip_icp_cuda_run *run, grip_icp_result *out);
void grip_icp_cuda_run_free(grip_icp_cuda_run *run);

#ifdef __cplusplus
}
#endif
#endif
