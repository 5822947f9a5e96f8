/* descriptor_front.h -- everything a descriptor stage (shot, fpfh, pfh, spin_image) does before its own
 * histograms, written once: the parameters they share, the checked cloud, its support cloud (the surface the
 * histograms and normals are computed over), its normals (the cloud's own at unit length, or computed from the k
 * nearest or a radius and flipped toward the cloud's viewpoint, as the `normals` key chooses:
 * stages/normals_choice.h; a model's computed normals point away from its centroid instead under
 * `model_normals = outward`, and are made consistent along its surface under `propagate`:
 * stages/normals_orientation.h), its keypoints (the host's indices, uniform sampling, or every finite point), and
 * the grip_features result with keypoints, keypoint_xyz and normals filled in. The stage's own code (its "body")
 * adds frames and descriptors.
 *
 * The support cloud (`support_leaf`): 0 (default), the cloud itself. Above 0, the cloud thinned by a voxel grid of
 * that leaf (descriptor/voxel_grid.h: one point per occupied voxel, at the centroid of its points), as TEASER++'s
 * and Open3D's FPFH pipelines thin a cloud before describing it; the same leaf for models and scenes, so that both
 * are described over surfaces of one density. Keypoints are still chosen on (and index into) the cloud itself, so
 * results, correspondences and verification mean what they meant; only their neighbourhoods come from the support.
 * Normals under a support_leaf: computed ones are computed (and oriented) over the support cloud and each cloud
 * point takes its voxel's (so a keypoint's normal is that of the support point standing for it); the cloud's own
 * stay each point's own, and the support cloud's are their per-voxel mean, renormalised. Either way
 * features->normals keeps one row per cloud point (plugin.h), the group and verify stages read them so.
 *
 * Two sides; the stage's `device` decision (st->use_cuda) picks one:
 *  - host side (on_device 0): the support cloud with its normals and a kd-tree over it, and the features'
 *    keypoints, keypoint_xyz and normals in host memory: the CPU twins (src/descriptor/) start from these;
 *  - device side (on_device 1): the support cloud as a grip_surface_cuda (src/spatial/neighborhood_cuda.h) with
 *    its normals on the device (computed there, or the host's uploaded; the voxel grid by
 *    cuda/descriptor/voxel_grid.cu), the keypoints selected on the device
 *    (uniform sampling of the cloud by cuda/descriptor/uniform_sampling.cu), and the features' keypoints
 *    (U32 k x 1), keypoint_xyz (k x 3) and normals (n x 4) in device memory, plus the keypoints' own normals
 *    (k x 4): a stage's kernel starts right away, e.g. with grip_neighborhoods_cuda_radius(ctx, front->surface,
 *    front->keypoint_xyz_dev, ...).
 * Both sides give the same keypoints and support points (bit for bit); the normals agree within the GPU normals'
 * documented tolerance (src/descriptor/normals_cuda.h). On either side the body may write frames and descriptors
 * in host memory
 * (grip_array_alloc_host) or in device memory (grip_result_array_alloc, stages/stage.h): the features are moved
 * to the caller's out_memory at the end, with no round trip when they already live there.
 *
 * Usage, the whole describe() of a stage:
 *
 *     static const grip_param_info fpfh_params[] = {
 *         GRIP_DESCRIPTOR_FRONT_PARAMS,
 *         {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "radius", "0.02", 1e-6, 100, NULL, "support radius"},
 *     };
 *     static grip_status fpfh_body(grip_stage *st, grip_descriptor_front *front)
 *     {   ... fills front->features->descriptors (and frames) ...   }
 *     static grip_status fpfh_describe(grip_stage *st, const grip_cloud *cloud, uint32_t role,
 *                                      const grip_array *keypoints, uint32_t out_memory, grip_features **out)
 *     {
 *         return grip_descriptor_front_describe(st, cloud, role, keypoints, out_memory, 33, fpfh_body, out);
 *     }
 *
 * Ownership: the front owns everything it opens (cloud input, tree, surface, keypoint normals) and the features
 * until grip_descriptor_front_finish hands them to the caller (device features take the whole cloud's surface
 * along, stages/results.h); grip_descriptor_front_close frees whatever it still owns, also after a failure. The
 * pointers below stay valid until close. The stage borrows them. */
#ifndef GRIP_STAGES_DESCRIPTOR_FRONT_H
#define GRIP_STAGES_DESCRIPTOR_FRONT_H

#include "stages/cloud_input.h"
#include "stages/describe_many.h"
#include "stages/normals_choice.h"
#include "stages/normals_orientation.h"
#include "stages/stage.h"
#include "spatial/kdtree3d.h"
#include "spatial/neighborhood_cuda.h"

/* The parameters every descriptor stage shares (12 entries), spliced at the head of its table. Read them through
 * the front; a stage reads only its own keys. */
#define GRIP_DESCRIPTOR_FRONT_PARAMS                                                                           \
    GRIP_PARAM_DEVICE,                                                                                         \
    GRIP_PARAM_FALLBACK,                                                                                       \
    GRIP_PARAM_CLOUDS_IN_FLIGHT,                                                                               \
    GRIP_PARAM_NORMALS,                                                                                        \
    {sizeof(grip_param_info), GRIP_PARAM_INT, "normals_k", "10", 0, 1000, NULL,                                \
     "neighbours for normal estimation (0: use normals_radius instead)"},                                     \
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "normals_radius", "0", 0, 100, NULL,                           \
     "radius for normal estimation in cloud units, used when normals_k is 0", GRIP_PARAM_FLAG_LENGTH},                                \
    {sizeof(grip_param_info), GRIP_PARAM_ENUM, "model_normals", "viewpoint", 0, 0, GRIP_MODEL_NORMALS_CHOICES,   \
     "orientation of computed normals on model clouds (scenes keep the viewpoint): " GRIP_MODEL_NORMALS_HELP},    \
    GRIP_PARAM_PROPAGATE_K,                                                                                    \
    {sizeof(grip_param_info), GRIP_PARAM_ENUM, "keypoints", "uniform", 0, 0, "uniform|all",                    \
     "keypoint selection when the host gives none: uniform sampling, or every finite point"},                 \
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "model_leaf", "0.01", 1e-6, 100, NULL,                         \
     "uniform-sampling leaf size on model clouds (cloud units)", GRIP_PARAM_FLAG_LENGTH},                                             \
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "scene_leaf", "0.03", 1e-6, 100, NULL,                         \
     "uniform-sampling leaf size on scene clouds (cloud units)", GRIP_PARAM_FLAG_LENGTH},                      \
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "support_leaf", "0", 0, 100, NULL,                             \
     "voxel-grid leaf of the support cloud the descriptors and normals are computed over, models and scenes "  \
     "alike (cloud units; 0: the cloud itself)", GRIP_PARAM_FLAG_LENGTH}

typedef struct grip_descriptor_front {
    grip_stage *stage;        /* borrowed */
    grip_ctx *ctx;            /* stage->ctx */
    uint32_t role;            /* grip_role */
    int on_device;            /* the stage's use_cuda: which side below is filled */
    grip_cloud_input in;      /* the checked cloud: in.n points, in.xyz (host, n x 3, on both sides), in.viewpoint */
    grip_features *features;  /* the result being built; keypoints, keypoint_xyz and normals are set (host arrays on
                                 the host side, device arrays on the device side); the body sets frames and
                                 descriptors. Owned by the front until finish. */
    size_t n_keypoints;       /* k */

    /* host side (on_device 0); NULL on the device side */
    const float *support_xyz;     /* n_support x 3: in.xyz, or the voxel centroids under support_leaf */
    size_t n_support;             /* in.n, or the occupied voxels */
    grip_kdtree3d *tree;          /* over support_xyz */
    const float *support_normals; /* n_support x 4: the support points' normals (= normals without support_leaf) */
    const float *normals;         /* n x 4, one row per cloud point: nx, ny, nz, curvature (NaN rows where
                                     undefined) = features->normals */
    const uint32_t *keypoints;    /* k point indices, ascending unless the host gave them = features->keypoints */
    const float *keypoint_xyz;    /* k x 3 = features->keypoint_xyz */

    /* device side (on_device 1), device memory of the context's device; NULL on the host side */
    grip_surface_cuda *surface;         /* the support cloud with its normals (has_normals 1), the cloud itself
                                           without support_leaf; grip_surface_cuda_get_view */
    const uint32_t *keypoints_dev;      /* k point indices = features->keypoints */
    const float *keypoint_xyz_dev;      /* k x 3 = features->keypoint_xyz */
    const float *keypoint_normals_dev;  /* k x 4: each keypoint's row of the normals */

    /* the front's own, for close */
    float *owned_support_xyz, *owned_support_normals; /* host side under support_leaf */
    grip_surface_cuda *cloud_surface;                 /* device side under support_leaf: the whole cloud */
} grip_descriptor_front;

/* A descriptor stage's own part: fills front->features->descriptors (F32 k x descriptor_dim, NaN rows for invalid
 * keypoints) and, when the descriptor has one, front->features->frames (F32 k x 9), in host or device memory.
 * On failure it reports through grip_fail; arrays it set are freed with the features. */
typedef grip_status (*grip_descriptor_body)(grip_stage *st, grip_descriptor_front *front);

/* The whole describe() of a descriptor stage: checks the run arguments (out, out_memory, role), opens the front,
 * runs body, places every array of the features in out_memory and hands them to *out (NULL after a failure),
 * closes the front; a device failure under `fallback = cpu` runs it all again on the CPU twin (GRIP_STAGE_CALL). */
grip_status grip_descriptor_front_describe(grip_stage *st, const grip_cloud *cloud, uint32_t role,
                                           const grip_array *keypoints, uint32_t out_memory, uint32_t descriptor_dim,
                                           grip_descriptor_body body, grip_features **out);

/* The steps of grip_descriptor_front_describe, for a stage that needs them apart.
 * open: checks the cloud (grip_cloud_input_open), the role and the host's keypoints (U32 k x 1, host or device,
 * in range, finite; NULL or 0 rows: the stage's own selection), makes the features (descriptor_dim) and fills
 * the side st->use_cuda asks for. Errors: GRIP_EINVAL (bad cloud, role or keypoint; a point too far out for
 * support_leaf), GRIP_ECONFIG (normals_k 0 with normals_radius 0 when normals are computed; `normals = file` on a
 * cloud without usable normals), GRIP_ENOMEM, and the device's errors on the device side.
 * Call close after open whatever it returned. */
grip_status grip_descriptor_front_open(grip_stage *st, const grip_cloud *cloud, uint32_t role,
                                       const grip_array *keypoints, uint32_t descriptor_dim,
                                       grip_descriptor_front *front);
/* Places the features in out_memory (grip_features_place) and hands them to *out; the front no longer owns them.
 * Device output on the device side also hands them the whole cloud's surface (grip_features_keep_surface), for the
 * group and verify stages. On failure *out is NULL and the front still owns them. */
grip_status grip_descriptor_front_finish(grip_descriptor_front *front, uint32_t out_memory, grip_features **out);
/* Frees what the front still owns and zeroes it. Safe on a zeroed front and after a failed open. */
void grip_descriptor_front_close(grip_descriptor_front *front);

#endif
