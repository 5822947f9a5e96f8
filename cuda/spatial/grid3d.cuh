// grid3d.cuh -- a uniform grid over 3D points, built on the device, and the device-side searches over it (the
// k nearest ring by ring; the rows of cells that a ball of given radius touches). Used by cuda/descriptor/normals.cu
// and cuda/spatial/neighborhood.cu.
//
// Layout: cell (cx, cy, cz) of a point is floor((p - lo) * inv_cell) per axis, clamped to the grid; its key is
// (cz * dims[1] + cy) * dims[0] + cx. The finite points are radix-sorted by key and re-laid in that order as float4
// (x, y, z, point index as bits), so that a kernel reads a cell's points in a row; cell_start (cells + 1 entries,
// an exclusive scan of the per-cell counts) gives cell c's points as pts[cell_start[c], cell_start[c + 1]). Since
// keys run along x first, the cells x0..x1 of one (cy, cz) row are one contiguous range of pts: a search reads a
// row of cells with two loads of cell_start.
//
// Rounding: cell coordinates are computed in float; with at most 4096 cells a side and a cell count of at most
// GRIP_GRID3D_MAX_CELLS, (p - lo) * inv_cell is within 0.002 of its exact value, so a point's computed cell is at
// most one off its exact cell and only when it lies within 0.002 cells of a cell border. The searches add a
// slack of 0.01 cells wherever they turn a distance into cells (GRIP_GRID3D_SLACK), which keeps them exact.
//
// Ownership: grip_grid3d_build allocates cell_start and pts with grip_cuda_alloc; grip_grid3d_free frees them.
#ifndef GRIP_CUDA_GRID3D_CUH
#define GRIP_CUDA_GRID3D_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include "core/ctx.h"
}
#include "math/rounded.h"

#define GRIP_GRID3D_MAX_CELLS ((size_t)1 << 25) // 128 MiB of cell_start at most
#define GRIP_GRID3D_MAX_SIDE 4096
#define GRIP_GRID3D_SLACK 0.01f

struct grip_grid3d_geom {
    float lo[3];
    float cell, inv_cell;
    int dims[3];
};

// The bounding box of the finite points (lo > hi on every axis when there is none) and their number.
struct grip_grid3d_bounds {
    float lo[3], hi[3];
    uint32_t finite;
};

// What a kernel needs of a built grid (device pointers; pass by value).
struct grip_grid3d_view {
    grip_grid3d_geom g;
    const uint32_t *cell_start; // cells + 1
    const float4 *pts;          // the finite points in cell order, w = the point's index as bits
};

struct grip_grid3d {
    grip_grid3d_geom geom;
    size_t cells;
    uint32_t finite;
    uint32_t *cell_start;
    float4 *pts;
};

// ---- host side (grid3d.cu) ------------------------------------------------------------------------------------

// The bounds of the n points xyz (device memory, n x 3), computed on the device.
grip_status grip_grid3d_measure(grip_ctx *ctx, const float *xyz, uint32_t n, grip_grid3d_bounds *out);

// The geometry of a grid of cells of about `cell` over the box: the cell grows (by 1.25 at a time) until the
// grid has at most max_cells cells (capped at GRIP_GRID3D_MAX_CELLS) and GRIP_GRID3D_MAX_SIDE a side. The box
// must hold a finite point. A cell of 0, NaN or infinity means "as coarse as one cell": callers need not check.
grip_grid3d_geom grip_grid3d_plan(const grip_grid3d_bounds &b, double cell, size_t max_cells);

// Builds the grid of geometry g over the n points xyz (device, n x 3) of which b.finite are finite. On failure
// *out is zeroed and nothing stays allocated.
grip_status grip_grid3d_build(grip_ctx *ctx, const float *xyz, uint32_t n, const grip_grid3d_bounds &b,
                              const grip_grid3d_geom &g, grip_grid3d *out);

// A grid for k-nearest search: a few points (about GRIP_GRID3D_KNN_TARGET) per occupied cell. It starts from one
// cell per point of the bounding volume, measures the points per occupied cell on the device, and when there are
// many more (a 2.5D range scan leaves hundreds of points in such a cell) rebuilds once with the cell shrunk by the
// square root of the excess, as for a surface (occupied cells grow as 1 / cell^2). A volume cloud then gets
// fewer points a cell, never more. b.finite must be > 0.
#define GRIP_GRID3D_KNN_TARGET 3.0
grip_status grip_grid3d_build_for_knn(grip_ctx *ctx, const float *xyz, uint32_t n, const grip_grid3d_bounds &b,
                                      grip_grid3d *out);

// Frees the grid's arrays and zeroes it (a zeroed grid is allowed).
void grip_grid3d_free(grip_grid3d *grid);

inline grip_grid3d_view grip_grid3d_get_view(const grip_grid3d &grid)
{
    grip_grid3d_view v;
    v.g = grid.geom;
    v.cell_start = grid.cell_start;
    v.pts = grid.pts;
    return v;
}

// ---- device side ----------------------------------------------------------------------------------------------

__device__ __forceinline__ bool grip_finite3(float x, float y, float z)
{
    return isfinite(x) && isfinite(y) && isfinite(z);
}

// (v - lo) * inv_cell on axis a, in cells (not clamped).
__device__ __forceinline__ float grip_grid3d_pos(const grip_grid3d_geom &g, float v, int a)
{
    return GRIP_FMUL(GRIP_FSUB(v, g.lo[a]), g.inv_cell);
}

// floor(t) clamped to [0, dims[a]); t may be infinite.
__device__ __forceinline__ int grip_grid3d_clamp(const grip_grid3d_geom &g, float t, int a)
{
    const float f = floorf(t);
    return f < 0.0f ? 0 : (f >= (float)g.dims[a] ? g.dims[a] - 1 : (int)f);
}

__device__ __forceinline__ int grip_grid3d_coord(const grip_grid3d_geom &g, float v, int a)
{
    return grip_grid3d_clamp(g, grip_grid3d_pos(g, v, a), a);
}

__device__ __forceinline__ uint32_t grip_grid3d_key(const grip_grid3d_geom &g, int cx, int cy, int cz)
{
    return ((uint32_t)cz * (uint32_t)g.dims[1] + (uint32_t)cy) * (uint32_t)g.dims[0] + (uint32_t)cx;
}

// kd_point_sqdist of the CPU twin: dx*dx + dy*dy + dz*dz in float, dx = p - q, each operation rounded on its own.
__device__ __forceinline__ float grip_sqdist(float4 p, float qx, float qy, float qz)
{
    const float dx = GRIP_FSUB(p.x, qx), dy = GRIP_FSUB(p.y, qy), dz = GRIP_FSUB(p.z, qz);
    return GRIP_FADD(GRIP_FADD(GRIP_FMUL(dx, dx), GRIP_FMUL(dy, dy)), GRIP_FMUL(dz, dz));
}

// The k best (distance, index) pairs offered so far, sorted by distance, ties to the lower index; one per thread.
template <int MaxK>
struct grip_knn_list {
    float d[MaxK];
    uint32_t id[MaxK];
    int count, k;

    __device__ void init(int want)
    {
        count = 0;
        k = want;
    }
    __device__ bool full() const { return count == k; }
    __device__ float worst() const { return d[k - 1]; }
    __device__ void offer(float dist, uint32_t index)
    {
        if (count == k && !(dist < d[k - 1] || (dist == d[k - 1] && index < id[k - 1])))
            return;
        int i = count < k ? count++ : k - 1;
        for (; i > 0 && (d[i - 1] > dist || (d[i - 1] == dist && id[i - 1] > index)); --i) {
            d[i] = d[i - 1];
            id[i] = id[i - 1];
        }
        d[i] = dist;
        id[i] = index;
    }
};

// Offers the points of cells x0..x1 of row (y, z) to the list.
template <class List>
__device__ void grip_grid3d_offer_row(const grip_grid3d_view &v, int x0, int x1, int y, int z, float qx, float qy,
                                      float qz, List &l)
{
    const uint32_t e = v.cell_start[grip_grid3d_key(v.g, x1, y, z) + 1];
    for (uint32_t j = v.cell_start[grip_grid3d_key(v.g, x0, y, z)]; j < e; ++j) {
        const float4 p = v.pts[j];
        l.offer(grip_sqdist(p, qx, qy, qz), __float_as_uint(p.w));
    }
}

// The cells at Chebyshev distance exactly r from (cx, cy, cz), clipped to the grid: whole rows on the shell's
// faces in y and z, the two end cells of each row inside.
template <class List>
__device__ void grip_grid3d_offer_ring(const grip_grid3d_view &v, int cx, int cy, int cz, int r, float qx, float qy,
                                       float qz, List &l)
{
    const grip_grid3d_geom &g = v.g;
    const int z0 = max(cz - r, 0), z1 = min(cz + r, g.dims[2] - 1);
    const int y0 = max(cy - r, 0), y1 = min(cy + r, g.dims[1] - 1);
    const int x0 = max(cx - r, 0), x1 = min(cx + r, g.dims[0] - 1);
    for (int z = z0; z <= z1; ++z)
        for (int y = y0; y <= y1; ++y) {
            if (abs(z - cz) == r || abs(y - cy) == r) {
                grip_grid3d_offer_row(v, x0, x1, y, z, qx, qy, qz, l);
                continue;
            }
            if (cx - r >= 0)
                grip_grid3d_offer_row(v, cx - r, cx - r, y, z, qx, qy, qz, l);
            if (cx + r < g.dims[0])
                grip_grid3d_offer_row(v, cx + r, cx + r, y, z, qx, qy, qz, l);
        }
}

// The exact k nearest of q (finite), ties to the lower index. Beyond ring r every point lies more than r cells
// from q's cell on some axis (also when q is outside the grid and its cell was clamped), so at a distance of more
// than (r - slack) * cell: once the k-th distance is below that bound squared, no unseen point can enter or tie.
template <class List>
__device__ void grip_grid3d_knn(const grip_grid3d_view &v, float qx, float qy, float qz, List &l)
{
    const grip_grid3d_geom &g = v.g;
    const int cx = grip_grid3d_coord(g, qx, 0), cy = grip_grid3d_coord(g, qy, 1), cz = grip_grid3d_coord(g, qz, 2);
    const int rmax = max(max(max(cx, g.dims[0] - 1 - cx), max(cy, g.dims[1] - 1 - cy)),
                         max(cz, g.dims[2] - 1 - cz));
    for (int r = 0; r <= rmax; ++r) {
        grip_grid3d_offer_ring(v, cx, cy, cz, r, qx, qy, qz, l);
        const float bound = ((float)r - GRIP_GRID3D_SLACK) * g.cell;
        if (l.full() && bound > 0.0f && l.worst() < bound * bound)
            return;
    }
}

// The rows of cells that may hold a point within radius r of q: for a query, a box of rows (y, z) and, per row,
// the cells x0..x1. r_cells = r * inv_cell; a row is kept when its nearest corner in (y, z) lies within r_cells
// (with slack), and its x span is the chord of the ball at that gap. Conservative: every point whose float
// squared distance to q is below (float)(r*r) lies in a kept cell (see the rounding note above).
struct grip_grid3d_ball {
    float tx, ty, tz; // q in cells
    float r_cells;
    int y0, y1, z0, z1;
};

__device__ __forceinline__ grip_grid3d_ball grip_grid3d_ball_make(const grip_grid3d_geom &g, float qx, float qy,
                                                                   float qz, float radius)
{
    grip_grid3d_ball b;
    b.tx = grip_grid3d_pos(g, qx, 0);
    b.ty = grip_grid3d_pos(g, qy, 1);
    b.tz = grip_grid3d_pos(g, qz, 2);
    // a hair above r * inv_cell: the float distance test accepts points up to a few ulps beyond r
    b.r_cells = radius * g.inv_cell * 1.0001f + GRIP_GRID3D_SLACK;
    b.y0 = grip_grid3d_clamp(g, b.ty - b.r_cells, 1);
    b.y1 = grip_grid3d_clamp(g, b.ty + b.r_cells, 1);
    b.z0 = grip_grid3d_clamp(g, b.tz - b.r_cells, 2);
    b.z1 = grip_grid3d_clamp(g, b.tz + b.r_cells, 2);
    return b;
}

// Distance in cells from t to cell c's span [c, c + 1], widened by the slack (0 inside).
__device__ __forceinline__ float grip_grid3d_gap(float t, int c)
{
    const float below = (float)c - GRIP_GRID3D_SLACK - t, above = t - ((float)c + 1.0f + GRIP_GRID3D_SLACK);
    return fmaxf(fmaxf(below, above), 0.0f);
}

// Row (y, z) of the ball: the range of pts it covers, empty (s == e) when it misses the ball.
__device__ __forceinline__ void grip_grid3d_ball_row(const grip_grid3d_view &v, const grip_grid3d_ball &b, int y,
                                                     int z, uint32_t *s, uint32_t *e)
{
    const float gy = grip_grid3d_gap(b.ty, y), gz = grip_grid3d_gap(b.tz, z);
    const float left = b.r_cells * b.r_cells - (gy * gy + gz * gz);
    if (!(left >= 0.0f)) {
        *s = *e = 0;
        return;
    }
    const float chord = sqrtf(left) + GRIP_GRID3D_SLACK;
    const int x0 = grip_grid3d_clamp(v.g, b.tx - chord, 0), x1 = grip_grid3d_clamp(v.g, b.tx + chord, 0);
    *s = v.cell_start[grip_grid3d_key(v.g, x0, y, z)];
    *e = v.cell_start[grip_grid3d_key(v.g, x1, y, z) + 1];
}

#endif
