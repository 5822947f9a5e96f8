// voxel_sort.cuh -- the points of a device cloud ordered by voxel (src/descriptor/voxel_key.h), the first half of
// both voxel binnings on the GPU: uniform sampling (uniform_sampling.cu) and the voxel grid (voxel_grid.cu).
//
// The order: (non-finite, i, j, k, point index) lexicographically -- the finite points voxel by voxel, each voxel's
// points in cloud order, the non-finite points last. It comes from two stable radix sorts, by (j, k) and then by
// (non-finite, i), so any int voxel coordinate works, with no hashing. The voxels are numbered in that order by an
// inclusive scan of the voxel heads.
//
// Ownership: grip_voxel_sort_alloc allocates every buffer with grip_cuda_alloc; grip_voxel_sort_free frees them
// (also after a failed alloc, and on a zeroed struct).
#ifndef GRIP_CUDA_VOXEL_SORT_CUH
#define GRIP_CUDA_VOXEL_SORT_CUH

#include <stddef.h>
#include <stdint.h>

extern "C" {
#include "core/ctx.h"
}

struct grip_voxel_sort {
    uint64_t *keys[2]; // sort keys; free for the caller's use after grip_voxel_sort_run
    uint32_t *vals[2]; // after the run: vals[0] = the point indices in the order above; vals[1] = voxel heads (1 at
                       // the first sorted position of each voxel), free for the caller's use after the run
    uint32_t *voxel;   // n: the inclusive scan of the heads: voxel[p] - 1 is the voxel of sorted position p (finite)
    uint32_t *found;   // 2 entries of working memory
    void *tmp;         // cub's scratch, big enough for a 64-bit pair sort, a 32-bit key sort or a scan of n entries
    size_t tmp_bytes;
};

// Allocates the buffers for n (> 0, <= INT_MAX) points.
grip_status grip_voxel_sort_alloc(grip_ctx *ctx, grip_voxel_sort *b, uint32_t n);
void grip_voxel_sort_free(grip_voxel_sort *b);

// Orders the n points of xyz (device, n x 3) by voxels of side leaf (checked by the caller) and writes the number
// of occupied voxels to *voxels. GRIP_EINVAL, the text starting with `what` (grip_voxel_fail_too_far), for a point
// whose voxel coordinate does not fit in an int; GRIP_ECUDA. Synchronous.
grip_status grip_voxel_sort_run(grip_ctx *ctx, grip_voxel_sort *b, const float *xyz, uint32_t n, float leaf,
                                const char *what, uint32_t *voxels);

#endif
