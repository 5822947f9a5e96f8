// pfh.cu -- PFH-125 on the GPU, the twin of src/descriptor/pfh.c (see src/descriptor/pfh_cuda.h).
//
// One block per keypoint. Pair t = i (i - 1) / 2 + j (j < i) of the list, as the CPU's loops meet them, is taken
// by thread t mod 256; each thread walks its pairs by updating (i, j), with no square root. A pair's bin comes from
// pair_features.h (the CPU's own arithmetic); the block counts votes in 125 shared-memory counters and turns each
// count into PCL's float sum of equal votes (grip_repeat_add), so the order of the votes does not matter.
#include "cuda/core/check.cuh"
#include "cuda/descriptor/pfh_lists.cuh"

#include "descriptor/pair_features.h"

extern "C" {
#include "descriptor/pfh_chunks.h"
#include "descriptor/pfh_cuda.h"
}

namespace {

using namespace grip_pfh;

constexpr int kThreads = 256;

// Moves pair (i, j) forward by `step` pairs in the order j = 0 .. i - 1, i = 1, 2, ...
__device__ __forceinline__ void advance_pair(uint64_t &i, uint64_t &j, uint64_t step)
{
    j += step;
    while (j >= i) {
        j -= i;
        ++i;
    }
}

__global__ void __launch_bounds__(kThreads) pfh_kernel(lists l, const float *__restrict__ keypoints, float *out)
{
    __shared__ unsigned long long counts[GRIP_PFH_DIM];
    const uint32_t q = blockIdx.x;
    for (int b = threadIdx.x; b < GRIP_PFH_DIM; b += kThreads)
        counts[b] = 0;
    __syncthreads();
    const uint64_t begin = l.offsets[q], size = l.offsets[q + 1] - begin;
    const bool valid = size > 0 && finite_point(keypoints, q);
    const uint64_t pairs = valid ? size * (size - 1) / 2 : 0;
    uint64_t i = 1, j = 0;
    advance_pair(i, j, threadIdx.x);
    for (uint64_t base = 0; base < pairs; base += kThreads) { // the same trips for the whole block
        int bin = -1;
        if (base + threadIdx.x < pairs) {
            float p1[3], n1[3], p2[3], n2[3];
            entry_at(l, begin + i, p1, n1);
            entry_at(l, begin + j, p2, n2);
            bin = grip_pfh_pair_bin(p1, n1, p2, n2);
        }
        vote(counts, bin);
        advance_pair(i, j, kThreads);
    }
    __syncthreads();
    float *row = out + (size_t)q * GRIP_PFH_DIM;
    const float incr = grip_pfh_increment(size);
    for (int b = threadIdx.x; b < GRIP_PFH_DIM; b += kThreads)
        row[b] = valid ? grip_repeat_add(incr, counts[b]) : NAN;
}

grip_status pfh_chunk(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *queries, uint32_t first,
                      uint32_t count, void *user)
{
    float *out = (float *)user;
    return grip_pfh_cuda(ctx, nb, queries, count, out + (size_t)first * GRIP_PFH_DIM);
}

} // namespace

extern "C" grip_status grip_pfh_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *keypoint_xyz,
                                     uint32_t k, float *out)
{
    if (k == 0)
        return GRIP_OK;
    if (!nb || !keypoint_xyz || !out)
        return grip_fail(ctx, GRIP_EINVAL, "pfh (cuda): lists, keypoints and output must not be NULL");
    if (nb->m != k)
        return grip_fail(ctx, GRIP_EINVAL, "pfh (cuda): the lists are of %u queries, not of the %u keypoints", nb->m,
                         k);
    if (nb->entries > 0 && !nb->nx)
        return grip_fail(ctx, GRIP_EINVAL, "pfh (cuda): the lists carry no normals: the surface had none");
    pfh_kernel<<<k, kThreads>>>(lists_of(nb), keypoint_xyz, out);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

extern "C" grip_status grip_pfh_cuda_surface(grip_ctx *ctx, const grip_surface_cuda *s, const float *keypoint_xyz,
                                             uint32_t k, float radius, float *out)
{
    if (!(radius > 0.0f) || !isfinite(radius))
        return grip_fail(ctx, GRIP_EINVAL, "pfh (cuda): radius must be finite and > 0 (got %g)", (double)radius);
    if (k == 0)
        return GRIP_OK;
    if (!s || !keypoint_xyz || !out)
        return grip_fail(ctx, GRIP_EINVAL, "pfh (cuda): surface, keypoints and output must not be NULL");
    if (!grip_surface_cuda_get_view(s).has_normals)
        return grip_fail(ctx, GRIP_EINVAL, "pfh (cuda): the surface has no normals");
    return grip_pfh_for_each_chunk(ctx, s, keypoint_xyz, k, radius, pfh_chunk, out);
}
