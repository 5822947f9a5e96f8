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
// by all 32 lanes together (hit false on lanes with no point this round), so that it may use warp votes. Several
// warps may share a ball: warp `part` of `parts` takes the rows of every parts-th run of 32 (the default: all).
template <class Visit>
__device__ void warp_ball_scan(const grip_grid3d_view &v, float qx, float qy, float qz, float radius, float r2,
                               Visit &visit, int part = 0, int parts = 1)
{
    const unsigned int lane = lane_id();
    const grip_grid3d_ball b = grip_grid3d_ball_make(v.g, qx, qy, qz, radius);
    const int ny = b.y1 - b.y0 + 1, rows = ny * (b.z1 - b.z0 + 1);
    for (int base = 32 * part; base < rows; base += 32 * parts) {
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

// Where block_bitonic_sort keeps logical key i in shared memory: a word of padding after every 16 keys, so that a
// thread's run of 16 keys (the sort's register phase) and the same key of 16 threads' runs lie in different banks.
__device__ __forceinline__ uint32_t padded(uint32_t i)
{
    return i + (i >> 4);
}

// Shared keys for p_max logical keys, as padded lays them out.
__host__ __device__ constexpr uint32_t padded_size(uint32_t p_max)
{
    return p_max + p_max / 16;
}

// Appends the hits' keys to keys[] (at padded slots), shared by the warps of a block that walk one ball together
// (warp_ball_scan's parts): each warp's round takes its slots from the shared count *at (in no fixed order: the
// keys are sorted afterwards). The count's atomics and the keys' stores are ordered for the block's readers by the
// __syncthreads that must follow the walk.
struct shared_fill_visit {
    unsigned long long *keys;
    uint32_t *at;
    __device__ void operator()(bool hit, float d, uint32_t index)
    {
        const uint32_t votes = __ballot_sync(kFull, hit);
        uint32_t first = 0;
        if (lane_id() == 0 && votes)
            first = atomicAdd(at, (uint32_t)__popc(votes));
        first = __shfl_sync(kFull, first, 0);
        if (hit)
            keys[padded(first + __popc(votes & ((1u << lane_id()) - 1u)))] =
                ((unsigned long long)__float_as_uint(d) << 32) | index;
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

// One compare-exchange of the network: a and b (logical keys i and i + j) put in the order bit k of i asks for.
__device__ __forceinline__ void bitonic_exchange(unsigned long long &a, unsigned long long &b, uint32_t i, uint32_t k)
{
    if ((a > b) == ((i & k) == 0)) {
        const unsigned long long t = a;
        a = b;
        b = t;
    }
}

// The steps j = E/2 .. 1 of merge k on the calling thread's run of E logical keys (E * t .. E * t + E), held in r.
template <int E>
__device__ __forceinline__ void bitonic_run_steps(unsigned long long (&r)[E], uint32_t first, uint32_t k)
{
#pragma unroll
    for (int j = E / 2; j > 0; j >>= 1)
#pragma unroll
        for (int e = 0; e < E; ++e)
            if ((e & j) == 0)
                bitonic_exchange(r[e], r[e + j], first + (uint32_t)e, k);
}

// The same network as warp_bitonic_sort with the whole block (blockDim.x * E keys, E a power of two; every thread
// of the block calls it), keys at padded slots. The steps whose pairs lie within one thread's run of E keys run in
// registers, E/2 .. 1 of every merge (and the merges up to E whole), one load and store of the run for them; the
// steps across runs go through shared memory, a __syncthreads after each. The same exchanges in the same order of
// steps as the plain network: the same sorted keys.
template <int E>
__device__ void block_bitonic_sort(unsigned long long *keys)
{
    const uint32_t p = blockDim.x * E, first = threadIdx.x * E;
    unsigned long long r[E];
#pragma unroll
    for (int e = 0; e < E; ++e)
        r[e] = keys[padded(first + e)];
#pragma unroll
    for (uint32_t k = 2; k <= (uint32_t)E; k <<= 1)
#pragma unroll
        for (uint32_t j = k >> 1; j > 0; j >>= 1)
#pragma unroll
            for (int e = 0; e < E; ++e)
                if ((e & j) == 0)
                    bitonic_exchange(r[e], r[e + j], first + (uint32_t)e, k);
#pragma unroll
    for (int e = 0; e < E; ++e)
        keys[padded(first + e)] = r[e];
    __syncthreads();
    for (uint32_t k = 2 * E; k <= p; k <<= 1) {
        for (uint32_t j = k >> 1; j >= (uint32_t)E; j >>= 1) {
            for (uint32_t t = threadIdx.x; t < p / 2; t += blockDim.x) {
                const uint32_t i = ((t & ~(j - 1)) << 1) | (t & (j - 1)), o = i + j;
                bitonic_exchange(keys[padded(i)], keys[padded(o)], i, k);
            }
            __syncthreads();
        }
#pragma unroll
        for (int e = 0; e < E; ++e)
            r[e] = keys[padded(first + e)];
        bitonic_run_steps<E>(r, first, k);
#pragma unroll
        for (int e = 0; e < E; ++e)
            keys[padded(first + e)] = r[e];
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
