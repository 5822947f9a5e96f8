// pfh_lists.cuh -- what the FPFH and PFH kernels share: the neighbour lists as the kernels read them (structure of
// arrays, device memory) and the warp's vote into a shared-memory histogram.
#ifndef GRIP_CUDA_PFH_LISTS_CUH
#define GRIP_CUDA_PFH_LISTS_CUH

#include <stdint.h>

extern "C" {
#include "spatial/neighborhood_cuda.h"
}

namespace grip_pfh {

constexpr unsigned kFullWarp = 0xffffffffu;

// The arrays of radius lists (grip_neighborhoods_cuda) a kernel reads.
struct lists {
    const uint64_t *offsets;
    const uint32_t *idx;
    const float *sqdist;
    const float *x, *y, *z, *nx, *ny, *nz;
};

inline lists lists_of(const grip_neighborhoods_cuda *nb)
{
    return lists{nb->offsets, nb->idx, nb->sqdist, nb->x, nb->y, nb->z, nb->nx, nb->ny, nb->nz};
}

// Coordinates and normal of list entry e.
__device__ __forceinline__ void entry_at(const lists &l, uint64_t e, float p[3], float n[3])
{
    p[0] = __ldg(l.x + e);
    p[1] = __ldg(l.y + e);
    p[2] = __ldg(l.z + e);
    n[0] = __ldg(l.nx + e);
    n[1] = __ldg(l.ny + e);
    n[2] = __ldg(l.nz + e);
}

__device__ __forceinline__ bool finite_point(const float *xyz, size_t i)
{
    return isfinite(xyz[3 * i]) && isfinite(xyz[3 * i + 1]) && isfinite(xyz[3 * i + 2]);
}

// One vote per lane into bin (-1: no vote), called by the whole warp: lanes voting for the same bin are merged
// into one shared-memory atomic (a plane sends most pairs to one bin).
template <typename Count>
__device__ __forceinline__ void vote(Count *counts, int bin)
{
    const unsigned peers = __match_any_sync(kFullWarp, bin);
    if (bin >= 0 && (int)(threadIdx.x & 31) == __ffs(peers) - 1)
        atomicAdd(counts + bin, (Count)__popc(peers));
}

} // namespace grip_pfh

#endif
