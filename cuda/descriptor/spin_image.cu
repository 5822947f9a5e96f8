// spin_image.cu -- spin images on the GPU, the twin of src/descriptor/spin_image.c (see
// src/descriptor/spin_image_cuda.h). A warp per keypoint, several warps per block, each with its own image (and
// angle sums in the angular domain) in dynamic shared memory, summed in fixed point so that it has the same bits
// whatever order the lanes vote in (cuda/core/fixed_sum.cuh).
#include "cuda/core/check.cuh"
#include "cuda/core/fixed_sum.cuh"
#include "descriptor/spin_image_math.h"

extern "C" {
#include "descriptor/spin_image.h"
#include "descriptor/spin_image_cuda.h"
}

#include <math.h>

namespace {

constexpr int kWarp = 32;
constexpr int kMaxWarpsPerBlock = 8;
constexpr size_t kSharedBytes = 48 * 1024; // the default limit of dynamic shared memory per block

// The neighbour lists, as the kernel reads them.
struct lists {
    const uint64_t *offsets;
    const float *x, *y, *z, *nx, *ny, *nz; // normals NULL when the geometry needs none
};

__device__ __forceinline__ bool finite3(float a, float b, float c)
{
    return isfinite(a) && isfinite(b) && isfinite(c);
}

// Adds the votes of the list entries [begin, end) that fall to this lane into the warp's image, fixed-point sums
// (cuda/core/fixed_sum.cuh: the same bits in any order of the lanes) at `shift`.
__device__ void accumulate(const grip_spin_image_geometry &g, const lists &nb, uint64_t begin, uint64_t end,
                           const float origin[3], const float axis[3], int shift, unsigned long long *density,
                           unsigned long long *angles)
{
    const bool normals = grip_spin_image_uses_normals(&g);
    for (uint64_t e = begin + (threadIdx.x % kWarp); e < end; e += kWarp) {
        grip_spin_image_vote v;
        const float qnx = normals ? nb.nx[e] : 0.0f, qny = normals ? nb.ny[e] : 0.0f,
                    qnz = normals ? nb.nz[e] : 0.0f;
        if (!grip_spin_image_vote_of(&g, origin, axis, nb.x[e], nb.y[e], nb.z[e], qnx, qny, qnz, &v))
            continue;
        for (int c = 0; c < 4; ++c) {
            const uint32_t bin = grip_spin_image_bin(&v, c, g.width);
            grip_fixed_add(density + bin, v.weight[c], shift);
            if (g.angular)
                grip_fixed_add(angles + bin, __dmul_rn(v.weight[c], v.angle), shift);
        }
    }
}

// The sum of the warp's image, on every lane.
__device__ double warp_total(const unsigned long long *density, uint32_t dim, int shift)
{
    double s = 0.0;
    for (uint32_t j = threadIdx.x % kWarp; j < dim; j += kWarp)
        s += grip_fixed_value(density[j], shift);
    for (int off = kWarp / 2; off > 0; off /= 2)
        s += __shfl_xor_sync(0xffffffffu, s, off);
    return s;
}

__global__ void spin_image_kernel(lists nb, const float *__restrict__ keypoint_xyz,
                                  const float *__restrict__ keypoint_normals, uint32_t k,
                                  grip_spin_image_geometry g, uint32_t min_neighbors, uint32_t dim, float *out)
{
    extern __shared__ unsigned long long shared[]; // each warp's image: fixed-point sums (fixed_sum.cuh)
    const uint32_t warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const uint32_t q = blockIdx.x * (blockDim.x / kWarp) + warp;
    if (q >= k)
        return; // the warps of a block never synchronise with each other
    unsigned long long *density = shared + (size_t)warp * (g.angular ? 2 * dim : dim);
    unsigned long long *angles = density + dim;
    const float origin[3] = {keypoint_xyz[3 * (size_t)q], keypoint_xyz[3 * (size_t)q + 1],
                             keypoint_xyz[3 * (size_t)q + 2]};
    const float axis[3] = {keypoint_normals[4 * (size_t)q], keypoint_normals[4 * (size_t)q + 1],
                           keypoint_normals[4 * (size_t)q + 2]};
    const uint64_t begin = nb.offsets[q], end = nb.offsets[q + 1];
    const uint32_t support = (uint32_t)(end - begin);
    float *row = out + (size_t)dim * q;
    if (!finite3(origin[0], origin[1], origin[2]) || !finite3(axis[0], axis[1], axis[2]) ||
        support < min_neighbors) {
        for (uint32_t j = lane; j < dim; j += kWarp)
            row[j] = NAN;
        return;
    }
    for (uint32_t j = lane; j < dim; j += kWarp) {
        density[j] = 0;
        if (g.angular)
            angles[j] = 0;
    }
    __syncwarp();
    // 4 votes a neighbour, weights at most 1 and angles at most pi: magnitudes below 4
    const int shift = grip_fixed_shift((uint64_t)support * 4, 2);
    accumulate(g, nb, begin, end, origin, axis, shift, density, angles);
    __syncwarp();
    const double total = g.angular ? 0.0 : warp_total(density, dim, shift);
    for (uint32_t j = lane; j < dim; j += kWarp)
        row[j] = grip_spin_image_finish(&g, grip_fixed_value(density[j], shift),
                                        g.angular ? grip_fixed_value(angles[j], shift) : 0.0, total, support);
}

grip_status check_inputs(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *keypoint_xyz,
                         const float *keypoint_normals, uint32_t k, const grip_spin_image_geometry &g, float *out)
{
    if (!nb || !keypoint_xyz || !keypoint_normals || !out)
        return grip_fail(ctx, GRIP_EINVAL,
                         "spin_image (cuda): neighbourhoods, keypoints, keypoint normals and output must not be NULL");
    if (nb->m != k)
        return grip_fail(ctx, GRIP_EINVAL, "spin_image (cuda): %u neighbourhoods for %u keypoints", nb->m, k);
    if (!nb->offsets || (nb->entries > 0 && (!nb->x || !nb->y || !nb->z)))
        return grip_fail(ctx, GRIP_EINVAL, "spin_image (cuda): the neighbourhoods have no offsets or coordinates");
    if (grip_spin_image_uses_normals(&g) && nb->entries > 0 && (!nb->nx || !nb->ny || !nb->nz))
        return grip_fail(ctx, GRIP_EINVAL, "spin_image (cuda): the neighbourhoods carry no normals, which the "
                                           "support angle and the angular domain need");
    if (ctx->device < 0)
        return grip_fail(ctx, GRIP_ENODEV, "spin_image (cuda): the context has no device (the neighbourhoods "
                                           "must come from it)");
    return GRIP_OK;
}

} // namespace

extern "C" grip_status grip_spin_image_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *nb,
                                            const float *keypoint_xyz, const float *keypoint_normals, uint32_t k,
                                            const grip_spin_image_params *p, float *out)
{
    grip_status st = grip_spin_image_params_check(ctx, "spin_image (cuda)", p);
    if (st != GRIP_OK || k == 0)
        return st;
    const grip_spin_image_geometry g = grip_spin_image_geometry_make(p->radius, (int)p->width,
                                                                     p->support_angle_cos, p->radial != 0,
                                                                     p->angular != 0);
    st = check_inputs(ctx, nb, keypoint_xyz, keypoint_normals, k, g, out);
    if (st != GRIP_OK)
        return st;
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(ctx->device));
    const uint32_t dim = grip_spin_image_dim(p->width);
    const size_t warp_bytes = (g.angular ? 2 : 1) * (size_t)dim * sizeof(unsigned long long);
    size_t warps = kSharedBytes / warp_bytes;
    warps = warps < 1 ? 1 : (warps > kMaxWarpsPerBlock ? kMaxWarpsPerBlock : warps);
    const bool normals = grip_spin_image_uses_normals(&g);
    const lists l = {nb->offsets, nb->x, nb->y, nb->z, normals ? nb->nx : nullptr, normals ? nb->ny : nullptr,
                     normals ? nb->nz : nullptr};
    const unsigned blocks = (unsigned)((k + warps - 1) / warps);
    spin_image_kernel<<<blocks, (unsigned)(warps * kWarp), warps * warp_bytes>>>(
        l, keypoint_xyz, keypoint_normals, k, g, p->min_neighbors, dim, out);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}
