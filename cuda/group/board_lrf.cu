// board_lrf.cu -- BOARD frames on the GPU (src/group/board_lrf_cuda.h): one radius search lists every keypoint's
// support (nearest first, as the CPU twin's GRIP_BOARD_TIES_NEAREST order), then one thread per keypoint runs the
// CPU twin's own per-keypoint code (group/board_lrf_math.h) over its list.
//
// Why a thread per keypoint and not a warp: the frame's sums (the support's mean and covariance, the mean normal)
// must run in the list's order to give the CPU twin's bits, and its choices (the most different normal, each
// sector's first and last point) are "first in that order". A support holds a few hundred points, a thread walks
// it in a few microseconds, and the thousands of keypoints of a scene fill the device.
#include "cuda/core/check.cuh"

extern "C" {
#include "group/board_lrf_cuda.h"
}
#include "group/board_lrf_math.h"

#include <math.h>

namespace {

constexpr int kThreads = 64; // few registers' worth of blocks per SM; a scene has thousands of keypoints

__global__ void board_frames_kernel(const float *__restrict__ xyz, const float *__restrict__ normals,
                                    const float *__restrict__ keypoints, uint32_t k,
                                    const uint64_t *__restrict__ offsets, const uint32_t *__restrict__ idx,
                                    const float *__restrict__ sqdist, int find_holes, float *__restrict__ frames)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k)
        return;
    const uint64_t first = offsets[i];
    grip_board_support s;
    s.xyz = xyz;
    s.normals = normals;
    s.idx = idx + first;
    s.sqdist = sqdist + first;
    s.count = (uint32_t)(offsets[i + 1] - first);
    const float q[3] = {keypoints[3 * (size_t)i], keypoints[3 * (size_t)i + 1], keypoints[3 * (size_t)i + 2]};
    float f[9];
    grip_board_keypoint_frame(&s, q, find_holes, f);
    for (int j = 0; j < 9; ++j)
        frames[9 * (size_t)i + j] = f[j];
}

grip_status frames_run(grip_ctx *ctx, const grip_surface_cuda_view &v, const float *keypoint_xyz, uint32_t k,
                       const grip_neighborhoods_cuda &support, int find_holes, float *frames_out)
{
    board_frames_kernel<<<(k + kThreads - 1) / kThreads, kThreads>>>(
        v.xyz, v.normals, keypoint_xyz, k, support.offsets, support.idx, support.sqdist, find_holes, frames_out);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return grip_cuda_sync(ctx);
}

} // namespace

extern "C" grip_status grip_board_lrf_cuda(grip_ctx *ctx, const grip_surface_cuda *surface, const float *keypoint_xyz,
                                           uint32_t k, float radius, int find_holes, float *frames_out)
{
    if (k == 0)
        return GRIP_OK;
    if (!surface || !keypoint_xyz || !frames_out)
        return grip_fail(ctx, GRIP_EINVAL, "board (cuda): surface, keypoints and frames_out must not be NULL");
    if (!(radius > 0.0f) || !isfinite(radius))
        return grip_fail(ctx, GRIP_EINVAL, "board.radius: %g must be finite and > 0", (double)radius);
    const grip_surface_cuda_view v = grip_surface_cuda_get_view(surface);
    if (!v.has_normals)
        return grip_fail(ctx, GRIP_EINVAL, "board (cuda): the surface has no normals");
    grip_neighborhoods_cuda support;
    grip_status st = grip_neighborhoods_cuda_radius(ctx, surface, keypoint_xyz, k, radius, 0, &support);
    if (st != GRIP_OK)
        return st;
    st = frames_run(ctx, v, keypoint_xyz, k, support, find_holes, frames_out);
    grip_neighborhoods_cuda_free(&support);
    return st;
}

extern "C" grip_status grip_board_lrf_cuda_host(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals,
                                                size_t n, const float *keypoint_xyz, size_t k, float radius,
                                                int find_holes, float *frames_out)
{
    if (k == 0)
        return GRIP_OK;
    if (!keypoint_xyz || !frames_out)
        return grip_fail(ctx, GRIP_EINVAL, "board: keypoints and frames_out must not be NULL");
    if (n > 0 && (!surface_xyz || !surface_normals))
        return grip_fail(ctx, GRIP_EINVAL, "board: surface points and normals must not be NULL");
    if (k >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "board (cuda): %zu keypoints, more than the GPU indexes", k);
    grip_surface_cuda *surface = NULL;
    void *kp = NULL, *frames = NULL;
    int device = -1;
    grip_status st = grip_surface_cuda_create(ctx, surface_xyz, n, &surface);
    if (st == GRIP_OK)
        st = grip_surface_cuda_set_normals(ctx, surface, surface_normals, 4);
    if (st == GRIP_OK)
        st = grip_cuda_upload(ctx, keypoint_xyz, k * 3 * sizeof(float), &kp, &device);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, k * 9 * sizeof(float), &frames);
    if (st == GRIP_OK)
        st = grip_board_lrf_cuda(ctx, surface, (const float *)kp, (uint32_t)k, radius, find_holes, (float *)frames);
    if (st == GRIP_OK)
        st = grip_cuda_copy_to_host(ctx, frames_out, frames, k * 9 * sizeof(float));
    grip_cuda_free(frames);
    grip_cuda_free(kp);
    grip_surface_cuda_free(surface);
    return st;
}
