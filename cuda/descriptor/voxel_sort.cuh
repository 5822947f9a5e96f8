// voxel_sort.cuh -- the points of a device cloud ordered by voxel (src/descriptor/voxel_key.h), the first half of
// both voxel binnings on the GPU: uniform sampling (uniform_sampling.cu) and the voxel grid (voxel_grid.cu).
//
// The order: (non-finite, i, j, k, point index) lexicographically -- the finite points voxel by voxel, each voxel's
// points in cloud order, the non-finite points last. It comes from two stable radix sorts, by (j, k) and then by
// (non-finite, i), so any int voxel coordinate works, with no hashing. The voxels are numbered in that order by an
// inclusive scan of the voxel heads. When the caller knows the range of the finite points' voxel coordinates
// (grip_voxel_range_of_box, from the cloud's bounding box), the keys hold each coordinate less its minimum in as
// many bits as its range needs, and the sorts read only those bits: a cloud under 64 voxels wide on each axis (the
// tutorial's clouds) sorts in 3 passes of 8 bits instead of 13. The order is the same.
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

// The voxel coordinates the finite points of a cloud can take: lo[a] .. hi[a] on axis a.
struct grip_voxel_range {
    int32_t lo[3], hi[3];
};

// The range of the finite points inside the box lo..hi (their bounds) for voxels of 1 / inv: the voxels of the box's
// corners, since a point's voxel grows with its coordinate. False when a corner's voxel does not fit in an int.
bool grip_voxel_range_of_box(const float lo[3], const float hi[3], float inv, grip_voxel_range *out);

// Allocates the buffers for n (> 0, <= INT_MAX) points.
grip_status grip_voxel_sort_alloc(grip_ctx *ctx, grip_voxel_sort *b, uint32_t n);
void grip_voxel_sort_free(grip_voxel_sort *b);

// Orders the n points of xyz (device, n x 3) by voxels of side leaf (checked by the caller) and writes the number
// of occupied voxels to *voxels. range: the finite points' voxel range (grip_voxel_range_of_box with inv = 1.0f /
// leaf), or NULL when unknown. GRIP_EINVAL, the text starting with `what` (grip_voxel_fail_too_far), for a point
// whose voxel coordinate does not fit in an int; GRIP_ECUDA. Synchronous.
grip_status grip_voxel_sort_run(grip_ctx *ctx, grip_voxel_sort *b, const float *xyz, uint32_t n, float leaf,
                                const grip_voxel_range *range, const char *what, uint32_t *voxels);

#endif
