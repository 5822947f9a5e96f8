// board_lrf.cu -- BOARD frames on the GPU (src/group/board_lrf_cuda.h): one radius search lists every keypoint's
// support (nearest first, as the CPU twin's GRIP_BOARD_TIES_NEAREST order), then one warp per keypoint runs the CPU
// twin's own per-keypoint code (group/board_lrf_math.h) over its list.
//
// The warp: its lanes copy the support's points (the search's gathered coordinates and normals, coalesced) into
// shared memory together. Every sum and every order-sensitive choice of the frame is an accumulator of its own
// that runs over the list in order, and the warp runs them side by side, one a lane, each with the CPU twin's
// function: the three coordinate means, then the six covariance entries and the three normal sums; lane 0 solves
// the plane (z) from them. Then every lane measures its share of the margin points (each point's normal cosine,
// its angle about z and so its sector: the acosf-heavy part, independent of the other points), and every lane folds
// the list in order: lane s < 24 into sector s's extremes, each lane into the most different normal. Lane 0
// assembles the sectors and writes the frame. Each accumulator sees the CPU's operations in the CPU's order, so the
// bits are the CPU twin's, but where an x axis points into a hole: there the device's cosf/sinf and glibc's differ by
// a few 1e-7 (board_lrf_cuda.h).
//
// Why the accumulators a lane each: one lane running every sum and the fold was a chain of about 150 dependent
// instructions a support point, and a scene keypoint of 633 points then took the whole launch's time (0.4 ms on an
// H200). One block (one warp) per keypoint spreads the keypoints over every SM and keeps the passes in shared
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
static_assert(GRIP_BOARD_SECTORS <= kThreads, "a lane folds each sector");
static_assert(GRIP_BOARD_COV_ENTRIES <= kThreads && 3 <= kThreads, "a lane sums each mean and covariance entry");
// Support points staged in shared memory (41 B each: xyz, normal padded to a float4, squared distance, the two
// margin measures and the sector): at most 1024 points, 41 KiB, under the 48 KiB a block has without opting in. A
// longer support is walked from global memory by lane 0 alone, as the CPU twin walks it (slower, the same bits).
constexpr uint32_t kMaxStaged = 1024;
constexpr size_t kStagedBytesPerPoint = sizeof(float4) + 3 * sizeof(float) + 3 * sizeof(float) + 1;

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
    extern __shared__ float4 staged_normals[]; // staged_cap, then the float arrays below, then the sectors
    __shared__ double mean[3], upper[GRIP_BOARD_COV_ENTRIES];
    __shared__ float normal_sum[3], axes[6]; // axes: z, x_ref from lane 0
    __shared__ grip_board_sectors folded;
    float *staged_xyz = reinterpret_cast<float *>(staged_normals + staged_cap);
    float *staged_sqdist = staged_xyz + 3 * (size_t)staged_cap;
    float *measured_cos = staged_sqdist + staged_cap;
    float *measured_angle = measured_cos + staged_cap;
    unsigned char *measured_sector = reinterpret_cast<unsigned char *>(measured_angle + staged_cap);
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
        __syncwarp(); // the staged support, written by every lane, before any lane reads it
        const grip_board_support s = {staged_xyz, reinterpret_cast<const float *>(staged_normals), NULL, staged_sqdist,
                                      count};
        if (lane < 3)
            mean[lane] = grip_board_mean_coordinate(&s, (int)lane);
        __syncwarp(); // the means before the covariance lanes read them
        if (lane < GRIP_BOARD_COV_ENTRIES)
            upper[lane] = grip_board_covariance_entry(&s, mean, (int)lane);
        else if (lane < GRIP_BOARD_COV_ENTRIES + 3)
            normal_sum[lane - GRIP_BOARD_COV_ENTRIES] = grip_board_normal_sum(&s, (int)lane - GRIP_BOARD_COV_ENTRIES);
        __syncwarp(); // the covariance and the normal sums before lane 0 reads them
        if (lane == 0) {
            float z[3], x_ref[3];
            grip_board_plane_from_covariance(upper, z);
            grip_board_axes_finish(normal_sum, find_holes, z, x_ref);
            for (int d = 0; d < 3; ++d) {
                axes[d] = z[d];
                axes[3 + d] = x_ref[d];
            }
        }
        __syncwarp(); // lane 0's axes before every lane reads them
        const float z[3] = {axes[0], axes[1], axes[2]}, x_ref[3] = {axes[3], axes[4], axes[5]};
        for (uint32_t j = lane; j < count; j += kThreads)
            if (!grip_board_off_margin(&s, j)) {
                grip_board_margin_measure(&s, j, q, z, x_ref, find_holes, &measured_cos[j], &measured_angle[j]);
                measured_sector[j] = (unsigned char)grip_board_sector_of(measured_angle[j]);
            }
        __syncwarp(); // every lane's measures before the folds read them
        // every lane folds the whole list in order: its sector (lanes below GRIP_BOARD_SECTORS) and the most
        // different normal (lane 0's is used); the same code on every lane, so the warp does not diverge
        grip_board_sector mine;
        grip_board_sector_reset(&mine);
        int64_t min_index = -1;
        float min_cos = FLT_MAX;
        int margin = 0;
        for (uint32_t j = 0; j < count; ++j) {
            if (grip_board_off_margin(&s, j))
                continue;
            margin = 1;
            grip_board_min_cos_fold((int64_t)j, measured_cos[j], &min_index, &min_cos);
            if (find_holes && measured_sector[j] == lane)
                grip_board_sector_fold(&mine, measured_angle[j], measured_cos[j]);
        }
        if (lane < GRIP_BOARD_SECTORS)
            folded.s[lane] = mine;
        __syncwarp(); // every sector before lane 0 reads them
        if (lane == 0) {
            grip_board_frame_from_scan(&s, q, z, x_ref, find_holes, margin, &folded, min_index, min_cos, f);
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
