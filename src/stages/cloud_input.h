/* cloud_input.h -- a grip_cloud checked and brought to host memory for the CPU twins, and the keypoints and
 * placement of the grip_features result (stages/results.h) the descriptor stage fills. */
#ifndef GRIP_STAGES_CLOUD_INPUT_H
#define GRIP_STAGES_CLOUD_INPUT_H

#include "core/array.h"
#include "stages/results.h"

typedef struct grip_cloud_input {
    size_t n;              /* points, NaN rows included */
    size_t n_finite;
    uint32_t width, height;
    const float *xyz;      /* n x 3 host */
    const float *normals;  /* host, NULL when the cloud carries none */
    size_t normal_stride;  /* 3 or 4 floats */
    float viewpoint[3];    /* the sensor origin (0, 0, 0 when the host's struct has none) */
    const char *name;      /* the host's name for the cloud (borrowed for the call), or NULL */
    grip_array xyz_host, normals_host; /* host copies, freed by close, when the cloud lived on a device */
    int own_xyz, own_normals;
} grip_cloud_input;

/* Checks `cloud` (non-NULL; struct sizes: the grip_cloud at least through `name`, as the ABI first published it;
 * dtypes, shapes, width*height == n > 0, at least one finite point) and gives host views of its arrays. `what` names
 * the cloud argument in error texts (e.g. "descriptor: cloud", "verify: models[2].cloud"), and the cloud's own name
 * is quoted when it has one. Release with grip_cloud_input_close(), also after a failure. */
grip_status grip_cloud_input_open(grip_ctx *ctx, const grip_cloud *cloud, const char *what, grip_cloud_input *in);
void grip_cloud_input_close(grip_cloud_input *in);

/* The host's keypoint indices (U32 k x 1, host or device), checked against the cloud: in range and finite.
 * *idx is malloc'd; the caller frees it. */
grip_status grip_cloud_input_keypoints(grip_ctx *ctx, const grip_cloud_input *in, const grip_array *given,
                                       uint32_t **idx, size_t *count);
/* Indices of every finite point (malloc'd; the caller frees). */
grip_status grip_cloud_input_finite_indices(grip_ctx *ctx, const grip_cloud_input *in, uint32_t **idx, size_t *count);

/* Sets keypoints (copied from idx) and keypoint_xyz. */
grip_status grip_features_set_keypoints(grip_ctx *ctx, grip_features *f, const grip_cloud_input *in,
                                        const uint32_t *idx, size_t count);
/* 1 when a lies in the memory of the CUDA device the context already uses. */
int grip_array_on_ctx_device(const grip_ctx *ctx, const grip_array *a);

/* The points of `view` on the context's device when its features carry them for its cloud of n points (grip_features
 * .xyz, ABI 1.3: a descriptor stage of this plugin asked for device output), F32 n x 3; else NULL, and the caller
 * uploads the cloud. Borrowed from the features. */
const float *grip_view_device_xyz(const grip_ctx *ctx, const grip_view *view, size_t n);

/* Moves every array of f to out_memory (see grip_result_array_place): device arrays stay when out_memory is CUDA
 * and are downloaded when it is the host; host arrays are uploaded when it is CUDA. The cloud's points (f->xyz) stay
 * only as a device copy for device output, and are dropped otherwise. */
grip_status grip_features_place(grip_ctx *ctx, grip_features *f, uint32_t out_memory);

#endif
