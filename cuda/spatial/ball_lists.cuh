// ball_lists.cuh -- the warp-level pieces of a radius search over a grip_grid3d (cuda/spatial/grid3d.cuh): the
// whole warp walks the rows of cells that a ball touches, 32 points at a time, and a list of hits can be sorted in
// shared memory by the warp. A hit is a 64-bit key, squared distance bits << 32 | point index: a non-negative
// float's bits sort as unsigned, so the keys sort by distance, ties to the lower index (the CPU searches' order).
// Used by cuda/spatial/neighborhood.cu (lists written out) and cuda/descriptor/normals.cu (lists used in place).
#ifndef GRIP_CUDA_BALL_LISTS_CUH
#define GRIP_CUDA_BALL_LISTS_CUH

#include "cuda/spatial/grid3d.cuh"

#include <stdint.h>

namespace grip_ball {

constexpr uint32_t kFull = 0xffffffffu;

__device__ __forceinline__ unsigned int lane_id()
{
    return threadIdx.x & 31u;
}

// Visits, with the whole warp, every point of the rows the ball of q touches: visit(hit, sqdist, index) is called
// by all 32 lanes together (hit false on lanes with no point this round), so that it may use warp votes.
template <class Visit>
__device__ void warp_ball_scan(const grip_grid3d_view &v, float qx, float qy, float qz, float radius, float r2,
                               Visit &visit)
{
    const unsigned int lane = lane_id();
    const grip_grid3d_ball b = grip_grid3d_ball_make(v.g, qx, qy, qz, radius);
    const int ny = b.y1 - b.y0 + 1, rows = ny * (b.z1 - b.z0 + 1);
    for (int base = 0; base < rows; base += 32) {
        uint32_t s = 0, e = 0;
        const int row = base + (int)lane;
        if (row < rows)
            grip_grid3d_ball_row(v, b, b.y0 + row % ny, b.z0 + row / ny, &s, &e);
        const uint32_t len = e - s;
        uint32_t incl = len;
        for (int off = 1; off < 32; off <<= 1) {
            const uint32_t t = __shfl_up_sync(kFull, incl, off);
            if ((int)lane >= off)
                incl += t;
        }
        const uint32_t total = __shfl_sync(kFull, incl, 31), excl = incl - len;
        for (uint32_t t0 = 0; t0 < total; t0 += 32) {
            const uint32_t t = t0 + lane;
            int j = 0; // the last row whose run starts at or before t
            for (int step = 16; step > 0; step >>= 1)
                if (__shfl_sync(kFull, excl, j + step) <= t)
                    j += step;
            const uint32_t start = __shfl_sync(kFull, s, j), first = __shfl_sync(kFull, excl, j);
            bool hit = false;
            float d = 0.0f;
            uint32_t index = 0;
            if (t < total) {
                const float4 p = v.pts[start + (t - first)];
                d = grip_sqdist(p, qx, qy, qz);
                index = __float_as_uint(p.w);
                hit = d < r2;
            }
            visit(hit, d, index);
        }
    }
}

struct count_visit {
    uint32_t count;
    __device__ void operator()(bool hit, float, uint32_t) { count += __popc(__ballot_sync(kFull, hit)); }
};

// Appends the hits' keys to the query's slots (shared or device memory), keys[0 .. limit): at counts every hit,
// also those past the limit, which are not written.
struct fill_visit {
    unsigned long long *keys;
    uint32_t at, limit;
    __device__ void operator()(bool hit, float d, uint32_t index)
    {
        const uint32_t votes = __ballot_sync(kFull, hit), slot = at + __popc(votes & ((1u << lane_id()) - 1u));
        if (hit && slot < limit)
            keys[slot] = ((unsigned long long)__float_as_uint(d) << 32) | index;
        at += __popc(votes);
    }
};

// Sorts keys[0 .. p) ascending with the warp (p a power of two, >= 2): a bitonic network, one pair a lane a step.
__device__ inline void warp_bitonic_sort(unsigned long long *keys, uint32_t p)
{
    for (uint32_t k = 2; k <= p; k <<= 1)
        for (uint32_t j = k >> 1; j > 0; j >>= 1) {
            for (uint32_t t = lane_id(); t < p / 2; t += 32) {
                const uint32_t i = ((t & ~(j - 1)) << 1) | (t & (j - 1)), o = i + j;
                const unsigned long long a = keys[i], b = keys[o];
                if ((a > b) == ((i & k) == 0)) {
                    keys[i] = b;
                    keys[o] = a;
                }
            }
            __syncwarp();
        }
}

// The same network with the whole block (p a power of two, >= 2; every thread of the block calls it), a
// __syncthreads between steps: for lists too long for one warp to sort quickly.
__device__ inline void block_bitonic_sort(unsigned long long *keys, uint32_t p)
{
    for (uint32_t k = 2; k <= p; k <<= 1)
        for (uint32_t j = k >> 1; j > 0; j >>= 1) {
            for (uint32_t t = threadIdx.x; t < p / 2; t += blockDim.x) {
                const uint32_t i = ((t & ~(j - 1)) << 1) | (t & (j - 1)), o = i + j;
                const unsigned long long a = keys[i], b = keys[o];
                if ((a > b) == ((i & k) == 0)) {
                    keys[i] = b;
                    keys[o] = a;
                }
            }
            __syncthreads();
        }
}

__device__ __forceinline__ void unpack_key(unsigned long long key, uint32_t *idx, float *sqdist)
{
    *idx = (uint32_t)key;
    *sqdist = __uint_as_float((uint32_t)(key >> 32));
}


} // namespace grip_ball

#endif
