// board_lrf.cu -- BOARD frames on the GPU (src/group/board_lrf_cuda.h): one radius search lists every keypoint's
// support (nearest first, as the CPU twin's GRIP_BOARD_TIES_NEAREST order), then one warp per keypoint runs the CPU
// twin's own per-keypoint code (group/board_lrf_math.h) over its list.
//
// The warp: its lanes copy the support's points (the search's gathered coordinates and normals, coalesced) into
// shared memory together, then lane 0 computes z (the support's mean and covariance, the mean normal: sums that
// must run in list order to give the CPU twin's bits), then every lane measures its share of the margin points
// (each point's normal cosine and angle about z, the acosf-heavy part, independent of the other points), then lane
// 0 folds those measures in list order (the most different normal and each sector's first and last point are "first
// in that order") and writes the frame. Every value is computed by the same function from the same inputs as on the
// CPU, and every order-sensitive step runs in list order on one lane, so the bits are the CPU twin's, but where an x
// axis points into a hole: there the device's cosf/sinf and glibc's differ by a few 1e-7 (board_lrf_cuda.h).
//
// Why not a thread per keypoint walking global memory (the earlier kernel): a scene's 3,747 keypoints were 118 warps
// for 132 SMs, each lane a chain of dependent, scattered loads repeated over four passes, and each warp waited for
// its longest list. One block (one warp) per keypoint spreads the work over every SM and keeps the passes in shared
// memory.
#include "cuda/core/check.cuh"

extern "C" {
#include "group/board_lrf_cuda.h"
}
#include "group/board_lrf_math.h"

#include <float.h>
#include <math.h>

namespace {

constexpr int kThreads = 32; // one warp, one keypoint per block
// Support points staged in shared memory (40 B each: xyz, normal padded to a float4, squared distance, and the two
// margin measures): 40 KiB, under the 48 KiB a block has without opting in. A longer support is walked from global
// memory by lane 0 alone, as the CPU twin walks it (slower, the same bits).
constexpr uint32_t kMaxStaged = 1024;
constexpr size_t kStagedBytesPerPoint = sizeof(float4) + 3 * sizeof(float) + 3 * sizeof(float);

// Grid-strided over keypoints (one keypoint per block and pass); dynamic shared memory: staged_cap points, as
// kStagedBytesPerPoint says. The support's entries [offsets[i], offsets[i + 1]) are in list order; idx, xyz and
// normals serve the supports longer than staged_cap, px..nz (the search's gathered copies) the others.
__global__ void __launch_bounds__(kThreads)
    board_frames_kernel(const float *__restrict__ xyz, const float *__restrict__ normals,
                        const float *__restrict__ keypoints, uint32_t k, const uint64_t *__restrict__ offsets,
                        const uint32_t *__restrict__ idx, const float *__restrict__ sqdist,
                        const float *__restrict__ px, const float *__restrict__ py, const float *__restrict__ pz,
                        const float *__restrict__ nx, const float *__restrict__ ny, const float *__restrict__ nz,
                        uint32_t staged_cap, int find_holes, float *__restrict__ frames)
{
    extern __shared__ float4 staged_normals[]; // staged_cap, then the float arrays below
    __shared__ float axes[6];                  // z, x_ref from lane 0
    float *staged_xyz = reinterpret_cast<float *>(staged_normals + staged_cap);
    float *staged_sqdist = staged_xyz + 3 * (size_t)staged_cap;
    float *measured_cos = staged_sqdist + staged_cap;
    float *measured_angle = measured_cos + staged_cap;
    const uint32_t lane = threadIdx.x;

    for (uint64_t i = blockIdx.x; i < k; i += gridDim.x) { // 64 bits: i + gridDim.x must not wrap
        const uint64_t first = offsets[i];
        const uint32_t count = (uint32_t)(offsets[i + 1] - first);
        const float q[3] = {keypoints[3 * (size_t)i], keypoints[3 * (size_t)i + 1], keypoints[3 * (size_t)i + 2]};
        float f[9];
        if (count < GRIP_BOARD_MIN_SUPPORT || count > staged_cap) { // a NaN frame, or too long to stage
            if (lane == 0) {
                const grip_board_support s = {xyz, normals, idx + first, sqdist + first, count};
                grip_board_keypoint_frame(&s, q, find_holes, f);
                for (int j = 0; j < 9; ++j)
                    frames[9 * (size_t)i + j] = f[j];
            }
            continue; // warp-uniform: count is the same on every lane, and nothing in shared memory was touched
        }
        for (uint32_t j = lane; j < count; j += kThreads) {
            const uint64_t e = first + j;
            staged_xyz[3 * j] = px[e];
            staged_xyz[3 * j + 1] = py[e];
            staged_xyz[3 * j + 2] = pz[e];
            staged_normals[j] = make_float4(nx[e], ny[e], nz[e], 0.0f);
            staged_sqdist[j] = sqdist[e];
        }
        __syncwarp(); // the staged support, written by every lane, before lane 0 reads it
        const grip_board_support s = {staged_xyz, reinterpret_cast<const float *>(staged_normals), NULL, staged_sqdist,
                                      count};
        if (lane == 0) {
            float z[3], x_ref[3];
            grip_board_axes(&s, find_holes, z, x_ref);
            for (int d = 0; d < 3; ++d) {
                axes[d] = z[d];
                axes[3 + d] = x_ref[d];
            }
        }
        __syncwarp(); // lane 0's axes before every lane reads them
        const float z[3] = {axes[0], axes[1], axes[2]}, x_ref[3] = {axes[3], axes[4], axes[5]};
        for (uint32_t j = lane; j < count; j += kThreads)
            if (!grip_board_off_margin(&s, j))
                grip_board_margin_measure(&s, j, q, z, x_ref, find_holes, &measured_cos[j], &measured_angle[j]);
        __syncwarp(); // every lane's measures before lane 0 folds them
        if (lane == 0) {
            grip_board_frame_from_axes(&s, q, z, x_ref, find_holes, measured_cos, measured_angle, f);
            for (int j = 0; j < 9; ++j)
                frames[9 * (size_t)i + j] = f[j];
        }
        __syncwarp(); // lane 0 done reading shared memory before the lanes stage the next keypoint
    }
}

grip_status frames_run(grip_ctx *ctx, const grip_surface_cuda_view &v, const float *keypoint_xyz, uint32_t k,
                       const grip_neighborhoods_cuda &support, int find_holes, float *frames_out)
{
    const uint32_t staged_cap = support.max_count < kMaxStaged ? support.max_count : kMaxStaged;
    const uint32_t blocks = k < (1u << 30) ? k : (1u << 30);
    board_frames_kernel<<<blocks, kThreads, staged_cap * kStagedBytesPerPoint>>>(
        v.xyz, v.normals, keypoint_xyz, k, support.offsets, support.idx, support.sqdist, support.x, support.y,
        support.z, support.nx, support.ny, support.nz, staged_cap, find_holes, frames_out);
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

extern "C" grip_status grip_board_lrf_cuda_on_surface(grip_ctx *ctx, const grip_surface_cuda *surface,
                                                     const float *keypoint_xyz, size_t k, float radius, int find_holes,
                                                     float *frames_out)
{
    if (k == 0)
        return GRIP_OK;
    if (!surface || !keypoint_xyz || !frames_out)
        return grip_fail(ctx, GRIP_EINVAL, "board: surface, keypoints and frames_out must not be NULL");
    if (k >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "board (cuda): %zu keypoints, more than the GPU indexes", k);
    void *kp = NULL, *frames = NULL;
    int device = -1;
    grip_status st = grip_cuda_upload(ctx, keypoint_xyz, k * 3 * sizeof(float), &kp, &device);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, k * 9 * sizeof(float), &frames);
    if (st == GRIP_OK)
        st = grip_board_lrf_cuda(ctx, surface, (const float *)kp, (uint32_t)k, radius, find_holes, (float *)frames);
    if (st == GRIP_OK)
        st = grip_cuda_copy_to_host(ctx, frames_out, frames, k * 9 * sizeof(float));
    grip_cuda_free(frames);
    grip_cuda_free(kp);
    return st;
}

extern "C" grip_status grip_board_lrf_cuda_host(grip_ctx *ctx, const float *surface_xyz, grip_memory xyz_mem,
                                                const float *surface_normals, grip_memory normals_mem, size_t n,
                                                const float *keypoint_xyz, size_t k, float radius, int find_holes,
                                                float *frames_out)
{
    if (k == 0)
        return GRIP_OK;
    if (!keypoint_xyz || !frames_out)
        return grip_fail(ctx, GRIP_EINVAL, "board: keypoints and frames_out must not be NULL");
    if (n > 0 && (!surface_xyz || !surface_normals))
        return grip_fail(ctx, GRIP_EINVAL, "board: surface points and normals must not be NULL");
    grip_surface_cuda *surface = NULL;
    grip_status st = xyz_mem == GRIP_MEM_CUDA ? grip_surface_cuda_create_on_device(ctx, surface_xyz, n, &surface)
                                              : grip_surface_cuda_create(ctx, surface_xyz, n, &surface);
    if (st == GRIP_OK)
        st = normals_mem == GRIP_MEM_CUDA ? grip_surface_cuda_set_normals_on_device(ctx, surface, surface_normals)
                                          : grip_surface_cuda_set_normals(ctx, surface, surface_normals, 4);
    if (st == GRIP_OK)
        st = grip_board_lrf_cuda_on_surface(ctx, surface, keypoint_xyz, k, radius, find_holes, frames_out);
    grip_surface_cuda_free(surface);
    return st;
}
