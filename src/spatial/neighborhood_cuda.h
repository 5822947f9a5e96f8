/* neighborhood_cuda.h -- a cloud resident on the GPU (its points, its normals, a uniform grid over them) and the
 * neighbourhoods of query points over it, handed to the descriptor kernels as contiguous structure-of-arrays
 * lists (Brenna 2019, sec. 4.1.2): each kernel reads a query's neighbours' coordinates and normals in a row, it
 * never chases indices into the cloud.
 *
 * Semantics are those of the CPU twin src/spatial/kdtree3d.h, so that a GPU descriptor sums the same neighbours
 * in the same order as its CPU twin:
 *   - squared distances in float as dx*dx + dy*dy + dz*dz with dx = p.x - q.x, no fused multiply-add;
 *   - radius: every point with squared distance < r2, r2 = (float)((double)radius * radius) (radius 0 finds
 *     nothing); k nearest: the k smallest;
 *   - each query's list sorted by squared distance, ties to the lower point index;
 *   - points with a non-finite coordinate are in no list; a query with one has an empty list.
 * A cap (max_neighbors > 0) keeps the first max_neighbors of a radius list: the nearest (the approximate G-SHOT
 * support of Hu 2017). The support size before the cap is kept, so a caller can tell truncated lists.
 *
 * Ownership: grip_surface_cuda_create allocates the surface and its device arrays, grip_surface_cuda_free frees
 * them. grip_neighborhoods_cuda_radius/knn fill a caller's grip_neighborhoods_cuda whose device arrays they
 * allocate (grip_cuda_alloc); grip_neighborhoods_cuda_free frees those arrays and zeroes the struct.
 * All calls are synchronous with respect to the host (results are ready on return) and run on the context's
 * device. A CPU-only build links src/no_cuda.c, whose functions fail with GRIP_EUNSUPPORTED.
 *
 * Implementation (cuda/spatial/surface.cu, cuda/spatial/neighborhood.cu, the grid in cuda/spatial/grid3d.cuh): create
 * builds a uniform grid of a few points per occupied cell (measured on the device; the k-nearest searches walk it ring
 * by ring). A radius search scans that grid while the radius spans at most 8 of its cells, else it builds a grid of
 * cells a quarter of the radius for the call; one warp per query; lists of at most 4096 are sorted in shared memory,
 * longer ones by a segmented sort in device memory. */
#ifndef GRIP_SPATIAL_NEIGHBORHOOD_CUDA_H
#define GRIP_SPATIAL_NEIGHBORHOOD_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct grip_surface_cuda grip_surface_cuda;

/* The device arrays of a surface, for kernels (all device pointers; valid until grip_surface_cuda_free). */
typedef struct grip_surface_cuda_view {
    uint32_t n;         /* points, finite or not */
    const float *xyz;   /* n x 3, the points as given */
    float *normals;     /* n x 4 (nx, ny, nz, curvature); contents undefined until normals are computed or set */
    int has_normals;    /* 1 once grip_surface_cuda_set_normals or a normals kernel filled `normals` */
    int device;         /* CUDA ordinal */
} grip_surface_cuda_view;

/* Uploads xyz (host, n x 3, NaN rows allowed, n < UINT32_MAX) to the context's device and builds the grid.
 * *out is NULL after a failure: GRIP_EINVAL (NULL xyz with n > 0, n too large), GRIP_ENOMEM (host or device),
 * GRIP_ENODEV, GRIP_ECUDA, GRIP_EUNSUPPORTED (CPU-only build). A cloud with no finite point is allowed: every
 * list over it is empty. */
grip_status grip_surface_cuda_create(grip_ctx *ctx, const float *xyz, size_t n, grip_surface_cuda **out);
/* The same from points already on the context's device (xyz_dev, device memory, n x 3), which are copied: the
 * caller keeps xyz_dev. */
grip_status grip_surface_cuda_create_on_device(grip_ctx *ctx, const float *xyz_dev, size_t n,
                                               grip_surface_cuda **out);
void grip_surface_cuda_free(grip_surface_cuda *s);
grip_surface_cuda_view grip_surface_cuda_get_view(const grip_surface_cuda *s);
/* Copies host normals (n rows, `stride` floats apart, stride 3 or 4: nx ny nz [curvature]; curvature is NaN
 * when stride is 3) into the surface and sets has_normals. */
grip_status grip_surface_cuda_set_normals(grip_ctx *ctx, grip_surface_cuda *s, const float *normals, size_t stride);
/* The same from normals already on the context's device (n rows of 4 floats), copied on the device. */
grip_status grip_surface_cuda_set_normals_on_device(grip_ctx *ctx, grip_surface_cuda *s, const float *normals_dev);
/* Marks the surface's normals as filled by a kernel that wrote view.normals. */
void grip_surface_cuda_mark_normals(grip_surface_cuda *s);
/* Gathers the points idx[0..count) (device array of point indices) into xyz_out (device, count x 3).
 * GRIP_EINVAL when an index is >= n (the rows of the valid ones are written, the others left as they were). */
grip_status grip_surface_cuda_gather(grip_ctx *ctx, const grip_surface_cuda *s, const uint32_t *idx, size_t count,
                                     float *xyz_out);

/* Neighbour lists of m queries, concatenated (CSR), structure of arrays; all arrays are device memory. */
typedef struct grip_neighborhoods_cuda {
    uint32_t m;           /* queries */
    size_t entries;       /* total kept neighbours over all queries */
    uint64_t *offsets;    /* m + 1: query q's neighbours are entries [offsets[q], offsets[q + 1]) */
    uint32_t *support;    /* m: neighbours before the cap (> offsets[q+1] - offsets[q] means truncated) */
    uint32_t *idx;        /* entries: point index in the surface */
    float *sqdist;        /* entries: squared distance to the query, as above */
    float *x, *y, *z;     /* entries: the neighbour's coordinates */
    float *nx, *ny, *nz;  /* entries: the neighbour's normal; NULL when the surface had none (has_normals 0) */
    /* host-side summaries, filled by the search */
    uint32_t max_count;   /* the longest kept list */
    uint32_t truncated;   /* queries whose list the cap shortened */
} grip_neighborhoods_cuda;

/* Radius neighbourhoods of the m queries: queries is device memory, m x 3, or NULL for "every surface point, in
 * order" (then m must equal the surface's n). max_neighbors 0: no cap. Errors: GRIP_EINVAL (negative or NaN
 * radius, m mismatch), GRIP_ENOMEM (the lists do not fit on the device: the caller may retry with fewer queries;
 * the context stays usable and *out is zeroed), GRIP_ECUDA. */
grip_status grip_neighborhoods_cuda_radius(grip_ctx *ctx, const grip_surface_cuda *s, const float *queries,
                                           uint32_t m, float radius, uint32_t max_neighbors,
                                           grip_neighborhoods_cuda *out);
/* The k nearest (1 <= k <= GRIP_NEIGHBORHOODS_CUDA_MAX_K) of each query, same conventions; a list is shorter
 * than k only when the surface has fewer finite points. support[q] is the list's length. */
#define GRIP_NEIGHBORHOODS_CUDA_MAX_K 64
grip_status grip_neighborhoods_cuda_knn(grip_ctx *ctx, const grip_surface_cuda *s, const float *queries, uint32_t m,
                                        uint32_t k, grip_neighborhoods_cuda *out);
/* Frees the arrays of a filled (or zeroed) struct and zeroes it. */
void grip_neighborhoods_cuda_free(grip_neighborhoods_cuda *nb);

#ifdef __cplusplus
}
#endif
#endif
