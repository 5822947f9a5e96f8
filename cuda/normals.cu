// normals.cu -- PCA normals on the GPU, the twin of src/descriptor/normals.c for the k-nearest case (see
// src/descriptor/normals_cuda.h).
//
// Neighbours: a uniform grid built on the device (cell keys, a radix sort of the points by cell, each cell's
// [start, end) in the sorted order). One thread per point keeps its k best (distance, index) pairs sorted, and
// visits the cells ring by ring around its own cell until the k-th distance is strictly below the squared
// distance that every point beyond the ring must have: the exact k nearest, ties to the lower index.
// Arithmetic: every float operation the CPU twin does is done here with __fadd_rn/__fsub_rn/__fmul_rn/__fdiv_rn
// in the CPU's order, so that nvcc cannot contract it into FMAs: the sums and the solver's steps round as on
// the CPU (only atan2f/cosf/sinf are the device's own, within 2 ulp).
#include "cuda/check.cuh"

extern "C" {
#include "descriptor/normals_cuda.h"
}

#include <cub/device/device_radix_sort.cuh>
#include <float.h>
#include <math.h>

namespace {

constexpr int kThreads = 128;
constexpr uint32_t kNoCell = 0xffffffffu;

// The grid: cell (cx, cy, cz) of a point is floor((p - lo) * inv_cell), clamped to the grid.
struct grid_geom {
    float lo[3];
    float cell, inv_cell;
    int dims[3];
};

__device__ __forceinline__ bool finite3(float x, float y, float z)
{
    return isfinite(x) && isfinite(y) && isfinite(z);
}

__device__ __forceinline__ int cell_coord(const grid_geom &g, float v, int a)
{
    int c = (int)floorf(__fmul_rn(__fsub_rn(v, g.lo[a]), g.inv_cell));
    return c < 0 ? 0 : (c >= g.dims[a] ? g.dims[a] - 1 : c);
}

__device__ __forceinline__ uint32_t cell_key(const grid_geom &g, int cx, int cy, int cz)
{
    return ((uint32_t)cz * (uint32_t)g.dims[1] + (uint32_t)cy) * (uint32_t)g.dims[0] + (uint32_t)cx;
}

__global__ void cell_keys_kernel(const float *__restrict__ xyz, uint32_t n, grid_geom g, uint32_t *keys,
                                 uint32_t *ids)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float x = xyz[3 * (size_t)i], y = xyz[3 * (size_t)i + 1], z = xyz[3 * (size_t)i + 2];
    keys[i] = finite3(x, y, z) ? cell_key(g, cell_coord(g, x, 0), cell_coord(g, y, 1), cell_coord(g, z, 2))
                               : kNoCell;
    ids[i] = i;
}

// Each cell's [start, end) in the sorted order (cells left at 0, 0 are empty), and the points in that order.
__global__ void cell_bounds_kernel(const uint32_t *__restrict__ keys, const uint32_t *__restrict__ ids,
                                   const float *__restrict__ xyz, uint32_t n, uint32_t *start, uint32_t *end,
                                   float4 *sorted)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint32_t key = keys[i], id = ids[i];
    sorted[i] = make_float4(xyz[3 * (size_t)id], xyz[3 * (size_t)id + 1], xyz[3 * (size_t)id + 2],
                            __uint_as_float(id));
    if (key == kNoCell)
        return;
    if (i == 0 || keys[i - 1] != key)
        start[key] = i;
    if (i + 1 == n || keys[i + 1] != key)
        end[key] = i + 1;
}

// kd_point_sqdist: dx*dx + dy*dy + dz*dz in float, dx = p - q.
__device__ __forceinline__ float sqdist(float4 p, float qx, float qy, float qz)
{
    const float dx = __fsub_rn(p.x, qx), dy = __fsub_rn(p.y, qy), dz = __fsub_rn(p.z, qz);
    return __fadd_rn(__fadd_rn(__fmul_rn(dx, dx), __fmul_rn(dy, dy)), __fmul_rn(dz, dz));
}

// The k best so far, sorted by (distance, index).
struct knn_list {
    float d[GRIP_NORMALS_CUDA_MAX_K];
    uint32_t id[GRIP_NORMALS_CUDA_MAX_K];
    int count, k;
};

__device__ __forceinline__ void list_offer(knn_list &l, float d, uint32_t id)
{
    if (!(d == d))
        return;
    if (l.count == l.k && !(d < l.d[l.k - 1] || (d == l.d[l.k - 1] && id < l.id[l.k - 1])))
        return;
    int i = l.count < l.k ? l.count++ : l.k - 1;
    for (; i > 0 && (l.d[i - 1] > d || (l.d[i - 1] == d && l.id[i - 1] > id)); --i) {
        l.d[i] = l.d[i - 1];
        l.id[i] = l.id[i - 1];
    }
    l.d[i] = d;
    l.id[i] = id;
}

__device__ void scan_cell(const grid_geom &g, const uint32_t *start, const uint32_t *end, const float4 *pts,
                          int cx, int cy, int cz, float qx, float qy, float qz, knn_list &l)
{
    const uint32_t key = cell_key(g, cx, cy, cz), e = end[key];
    for (uint32_t j = start[key]; j < e; ++j) {
        const float4 p = pts[j];
        list_offer(l, sqdist(p, qx, qy, qz), __float_as_uint(p.w));
    }
}

// The cells at Chebyshev distance exactly r from (cx, cy, cz), clipped to the grid.
__device__ void scan_ring(const grid_geom &g, const uint32_t *start, const uint32_t *end, const float4 *pts, int cx,
                          int cy, int cz, int r, float qx, float qy, float qz, knn_list &l)
{
    const int z0 = max(cz - r, 0), z1 = min(cz + r, g.dims[2] - 1);
    const int y0 = max(cy - r, 0), y1 = min(cy + r, g.dims[1] - 1);
    const int x0 = max(cx - r, 0), x1 = min(cx + r, g.dims[0] - 1);
    for (int z = z0; z <= z1; ++z)
        for (int y = y0; y <= y1; ++y) {
            const bool shell = abs(z - cz) == r || abs(y - cy) == r;
            for (int x = x0; x <= x1; x += (shell || x == x1) ? 1 : max(x1 - x0, 1)) {
                if (shell || abs(x - cx) == r)
                    scan_cell(g, start, end, pts, x, y, z, qx, qy, qz, l);
            }
        }
}

// The exact k nearest of q. Beyond ring r every point lies more than r cells from q's cell on some axis, so at a
// distance of more than r * cell (less 1% for the rounding of cell coordinates): once the k-th distance is below
// that bound squared, no unseen point can enter or tie.
__device__ void knn_grid(const grid_geom &g, const uint32_t *start, const uint32_t *end, const float4 *pts, float qx,
                         float qy, float qz, knn_list &l)
{
    const int cx = cell_coord(g, qx, 0), cy = cell_coord(g, qy, 1), cz = cell_coord(g, qz, 2);
    const int rmax = max(max(max(cx, g.dims[0] - 1 - cx), max(cy, g.dims[1] - 1 - cy)),
                         max(cz, g.dims[2] - 1 - cz));
    for (int r = 0; r <= rmax; ++r) {
        scan_ring(g, start, end, pts, cx, cy, cz, r, qx, qy, qz, l);
        const float bound = ((float)r - 0.01f) * g.cell;
        if (l.count == l.k && bound > 0.0f && l.d[l.k - 1] < bound * bound)
            return;
    }
}

// ---- PCL 1.13's float eigen33 (src/math/sym3_eigen.c grip_sym3_smallest_pcl), operation for operation --------
__device__ __forceinline__ float fm(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float fa(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float fs(float a, float b) { return __fsub_rn(a, b); }

__device__ void pcl_roots_quadratic(float b, float c, float roots[3])
{
    roots[0] = 0.0f;
    float d = (float)__dsub_rn((double)fm(b, b), __dmul_rn(4.0, (double)c)); // float b*b, then double
    if (d < 0.0f)
        d = 0.0f;
    const float sd = sqrtf(d);
    roots[2] = fm(0.5f, fa(b, sd));
    roots[1] = fm(0.5f, fs(b, sd));
}

__device__ __forceinline__ void swapf(float &a, float &b)
{
    const float t = a;
    a = b;
    b = t;
}

__device__ void pcl_roots(const float m[9], float roots[3])
{
    const float m00 = m[0], m01 = m[1], m02 = m[2], m11 = m[4], m12 = m[5], m22 = m[8];
    const float c0 = fs(fs(fs(fa(fm(fm(m00, m11), m22), fm(fm(fm(2.0f, m01), m02), m12)), fm(fm(m00, m12), m12)),
                          fm(fm(m11, m02), m02)),
                       fm(fm(m22, m01), m01));
    const float c1 =
        fs(fa(fs(fa(fs(fm(m00, m11), fm(m01, m01)), fm(m00, m22)), fm(m02, m02)), fm(m11, m22)), fm(m12, m12));
    const float c2 = fa(fa(m00, m11), m22);
    if (fabsf(c0) < FLT_EPSILON) {
        pcl_roots_quadratic(c2, c1, roots);
        return;
    }
    const float inv3 = (float)(1.0 / 3.0), sqrt3 = sqrtf(3.0f);
    const float c2_over_3 = fm(c2, inv3);
    float a_over_3 = fm(fs(c1, fm(c2, c2_over_3)), inv3);
    if (a_over_3 > 0.0f)
        a_over_3 = 0.0f;
    const float half_b = fm(0.5f, fa(c0, fm(c2_over_3, fs(fm(fm(2.0f, c2_over_3), c2_over_3), c1))));
    float q = fa(fm(half_b, half_b), fm(fm(a_over_3, a_over_3), a_over_3));
    if (q > 0.0f)
        q = 0.0f;
    const float rho = sqrtf(-a_over_3);
    const float theta = fm(atan2f(sqrtf(-q), half_b), inv3);
    const float cos_theta = cosf(theta), sin_theta = sinf(theta);
    roots[0] = fa(c2_over_3, fm(fm(2.0f, rho), cos_theta));
    roots[1] = fs(c2_over_3, fm(rho, fa(cos_theta, fm(sqrt3, sin_theta))));
    roots[2] = fs(c2_over_3, fm(rho, fs(cos_theta, fm(sqrt3, sin_theta))));
    if (roots[0] >= roots[1])
        swapf(roots[0], roots[1]);
    if (roots[1] >= roots[2]) {
        swapf(roots[1], roots[2]);
        if (roots[0] >= roots[1])
            swapf(roots[0], roots[1]);
    }
    if (roots[0] <= 0.0f)
        pcl_roots_quadratic(c2, c1, roots);
}

__device__ __forceinline__ void cross3f(const float *a, const float *b, float out[3])
{
    out[0] = fs(fm(a[1], b[2]), fm(a[2], b[1]));
    out[1] = fs(fm(a[2], b[0]), fm(a[0], b[2]));
    out[2] = fs(fm(a[0], b[1]), fm(a[1], b[0]));
}

__device__ void pcl_largest_cross(const float m[9], float vec[3])
{
    float cross[3][3];
    cross3f(m + 0, m + 3, cross[0]);
    cross3f(m + 0, m + 6, cross[1]);
    cross3f(m + 3, m + 6, cross[2]);
    int best = 0;
    float best_len = 0.0f;
    for (int r = 0; r < 3; ++r) {
        const float len =
            sqrtf(fa(fm(cross[r][0], cross[r][0]), fa(fm(cross[r][1], cross[r][1]), fm(cross[r][2], cross[r][2]))));
        if (r == 0 || len > best_len) {
            best = r;
            best_len = len;
        }
    }
    for (int i = 0; i < 3; ++i)
        vec[i] = __fdiv_rn(cross[best][i], best_len);
}

__device__ float sym3_smallest_pcl(const float a[9], float vec[3])
{
    float m[9] = {a[0], a[1], a[2], a[1], a[4], a[5], a[2], a[5], a[8]}, scale = 0.0f;
    for (int i = 0; i < 9; ++i)
        if (fabsf(m[i]) > scale)
            scale = fabsf(m[i]);
    if (scale <= FLT_MIN)
        scale = 1.0f;
    for (int i = 0; i < 9; ++i)
        m[i] = __fdiv_rn(m[i], scale);
    float roots[3];
    pcl_roots(m, roots);
    m[0] = fs(m[0], roots[0]);
    m[4] = fs(m[4], roots[0]);
    m[8] = fs(m[8], roots[0]);
    pcl_largest_cross(m, vec);
    return fm(roots[0], scale);
}

// ---- normals.c's per-point steps --------------------------------------------------------------------------

// covariance_as_pcl: shifted by the first neighbour, nine float sums in neighbour order, / count, E[xy]-E[x]E[y].
__device__ void covariance_as_pcl(const float *xyz, const knn_list &l, float cov[9])
{
    const float *k0 = xyz + 3 * (size_t)l.id[0];
    const float k0x = k0[0], k0y = k0[1], k0z = k0[2];
    float accu[9] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (int j = 0; j < l.count; ++j) {
        const float *p = xyz + 3 * (size_t)l.id[j];
        const float x = fs(p[0], k0x), y = fs(p[1], k0y), z = fs(p[2], k0z);
        accu[0] = fa(accu[0], fm(x, x));
        accu[1] = fa(accu[1], fm(x, y));
        accu[2] = fa(accu[2], fm(x, z));
        accu[3] = fa(accu[3], fm(y, y));
        accu[4] = fa(accu[4], fm(y, z));
        accu[5] = fa(accu[5], fm(z, z));
        accu[6] = fa(accu[6], x);
        accu[7] = fa(accu[7], y);
        accu[8] = fa(accu[8], z);
    }
    const float count = (float)l.count;
    for (int a = 0; a < 9; ++a)
        accu[a] = __fdiv_rn(accu[a], count);
    cov[0] = fs(accu[0], fm(accu[6], accu[6]));
    cov[1] = fs(accu[1], fm(accu[6], accu[7]));
    cov[2] = fs(accu[2], fm(accu[6], accu[8]));
    cov[4] = fs(accu[3], fm(accu[7], accu[7]));
    cov[5] = fs(accu[4], fm(accu[7], accu[8]));
    cov[8] = fs(accu[5], fm(accu[8], accu[8]));
    cov[3] = cov[1];
    cov[6] = cov[2];
    cov[7] = cov[5];
}

__global__ void normals_kernel(const float *__restrict__ xyz, uint32_t n, grid_geom g,
                               const uint32_t *__restrict__ start, const uint32_t *__restrict__ end,
                               const float4 *__restrict__ pts, int k, float vx, float vy, float vz, float4 *out)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float qx = xyz[3 * (size_t)i], qy = xyz[3 * (size_t)i + 1], qz = xyz[3 * (size_t)i + 2];
    if (!finite3(qx, qy, qz)) {
        out[i] = make_float4(NAN, NAN, NAN, NAN);
        return;
    }
    knn_list l;
    l.count = 0;
    l.k = k;
    knn_grid(g, start, end, pts, qx, qy, qz, l);
    if (l.count < 3) {
        out[i] = make_float4(NAN, NAN, NAN, NAN);
        return;
    }
    float cov[9], nrm[3];
    covariance_as_pcl(xyz, l, cov);
    const float l0 = sym3_smallest_pcl(cov, nrm);
    const float trace = fa(fa(cov[0], cov[4]), cov[8]);
    const float curvature = trace != 0.0f ? fabsf(__fdiv_rn(l0, trace)) : 0.0f;
    const float cos_theta = fa(fa(fm(fs(vx, qx), nrm[0]), fm(fs(vy, qy), nrm[1])), fm(fs(vz, qz), nrm[2]));
    if (cos_theta < 0.0f)
        out[i] = make_float4(-nrm[0], -nrm[1], -nrm[2], curvature);
    else
        out[i] = make_float4(nrm[0], nrm[1], nrm[2], curvature);
}

// ---- host side ----------------------------------------------------------------------------------------------

// The grid over the finite points' bounding box, about one cell per point (at most 2^24 cells, 4096 a side). Returns the number
// of finite points (0: no grid).
size_t grid_plan(const float *xyz, size_t n, grid_geom *g)
{
    float lo[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, hi[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
    size_t finite = 0;
    for (size_t i = 0; i < n; ++i) {
        const float *p = xyz + 3 * i;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
            continue;
        ++finite;
        for (int a = 0; a < 3; ++a) {
            lo[a] = fminf(lo[a], p[a]);
            hi[a] = fmaxf(hi[a], p[a]);
        }
    }
    if (finite == 0)
        return 0;
    double ext[3], vol = 1.0, big = 0.0;
    for (int a = 0; a < 3; ++a) {
        ext[a] = (double)hi[a] - (double)lo[a];
        big = fmax(big, ext[a]);
    }
    if (big <= 0.0)
        big = 1.0;
    for (int a = 0; a < 3; ++a)
        vol *= fmax(ext[a], big * 1e-3); // a flat or linear cloud still gets a volume
    double cell = cbrt(vol / (double)finite), cells = 0.0;
    for (;;) {
        cells = 1.0;
        double widest = 0.0;
        for (int a = 0; a < 3; ++a) {
            cells *= floor(ext[a] / cell) + 1.0;
            widest = fmax(widest, floor(ext[a] / cell) + 1.0);
        }
        if (cells <= 16777216.0 && widest <= 4096.0) // few enough that float cell coordinates are exact to 1e-3
            break;
        cell *= 1.25;
    }
    for (int a = 0; a < 3; ++a) {
        g->lo[a] = lo[a];
        g->dims[a] = (int)(floor(ext[a] / cell) + 1.0);
    }
    g->cell = (float)cell;
    g->inv_cell = (float)(1.0 / cell);
    return finite;
}

struct normals_buffers {
    float *xyz;
    uint32_t *keys[2], *ids[2], *start, *end;
    float4 *pts, *out;
    void *sort_tmp;
    int device;
};

void buffers_free(normals_buffers *b)
{
    grip_cuda_free(b->xyz);
    cudaFree(b->keys[0]);
    cudaFree(b->keys[1]);
    cudaFree(b->ids[0]);
    cudaFree(b->ids[1]);
    cudaFree(b->start);
    cudaFree(b->end);
    cudaFree(b->pts);
    cudaFree(b->out);
    cudaFree(b->sort_tmp);
}

grip_status buffers_alloc(grip_ctx *ctx, normals_buffers *b, const float *xyz, size_t n, size_t cells,
                          size_t *sort_bytes)
{
    void *dev = NULL;
    grip_status st = grip_cuda_upload(ctx, xyz, n * 3 * sizeof(float), &dev, &b->device);
    if (st != GRIP_OK)
        return st;
    b->xyz = (float *)dev;
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(b->device));
    for (int t = 0; t < 2; ++t) {
        GRIP_CUDA_CHECK(ctx, cudaMalloc(&b->keys[t], n * sizeof(uint32_t)));
        GRIP_CUDA_CHECK(ctx, cudaMalloc(&b->ids[t], n * sizeof(uint32_t)));
    }
    GRIP_CUDA_CHECK(ctx, cudaMalloc(&b->start, cells * sizeof(uint32_t)));
    GRIP_CUDA_CHECK(ctx, cudaMalloc(&b->end, cells * sizeof(uint32_t)));
    GRIP_CUDA_CHECK(ctx, cudaMalloc(&b->pts, n * sizeof(float4)));
    GRIP_CUDA_CHECK(ctx, cudaMalloc(&b->out, n * sizeof(float4)));
    GRIP_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(NULL, *sort_bytes, b->keys[0], b->keys[1], b->ids[0],
                                                         b->ids[1], (int)n));
    GRIP_CUDA_CHECK(ctx, cudaMalloc(&b->sort_tmp, *sort_bytes));
    return GRIP_OK;
}

grip_status normals_run(grip_ctx *ctx, normals_buffers *b, size_t n, const grid_geom &g, size_t cells,
                        size_t sort_bytes, uint32_t k, const float vp[3], float *out)
{
    const unsigned blocks = (unsigned)((n + kThreads - 1) / kThreads);
    const uint32_t n32 = (uint32_t)n;
    cell_keys_kernel<<<blocks, kThreads>>>(b->xyz, n32, g, b->keys[0], b->ids[0]);
    GRIP_CUDA_CHECK(ctx, cudaGetLastError());
    GRIP_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(b->sort_tmp, sort_bytes, b->keys[0], b->keys[1], b->ids[0],
                                                         b->ids[1], (int)n));
    GRIP_CUDA_CHECK(ctx, cudaMemset(b->start, 0, cells * sizeof(uint32_t)));
    GRIP_CUDA_CHECK(ctx, cudaMemset(b->end, 0, cells * sizeof(uint32_t)));
    cell_bounds_kernel<<<blocks, kThreads>>>(b->keys[1], b->ids[1], b->xyz, n32, b->start, b->end, b->pts);
    GRIP_CUDA_CHECK(ctx, cudaGetLastError());
    normals_kernel<<<blocks, kThreads>>>(b->xyz, n32, g, b->start, b->end, b->pts, (int)k, vp[0], vp[1], vp[2],
                                         b->out);
    GRIP_CUDA_CHECK(ctx, cudaGetLastError());
    GRIP_CUDA_CHECK(ctx, cudaMemcpy(out, b->out, n * sizeof(float4), cudaMemcpyDeviceToHost));
    return GRIP_OK;
}

} // namespace

extern "C" grip_status grip_normals_cuda(grip_ctx *ctx, const float *xyz, size_t n, uint32_t k,
                                         const float viewpoint[3], float *out)
{
    if ((!xyz || !out) && n > 0)
        return grip_fail(ctx, GRIP_EINVAL, "normals (cuda): %s is NULL with %zu points", xyz ? "out" : "xyz", n);
    if (k == 0)
        return grip_fail(ctx, GRIP_EINVAL, "normals (cuda): k = 0 (the GPU normals need k nearest)");
    if (n >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "normals (cuda): %zu points, more than the GPU indexes", n);
    if (k > GRIP_NORMALS_CUDA_MAX_K)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "normals (cuda): k = %u is more than the GPU keeps (%d)", k,
                         GRIP_NORMALS_CUDA_MAX_K);
    if (n == 0)
        return GRIP_OK;
    const float vp[3] = {viewpoint ? viewpoint[0] : 0.0f, viewpoint ? viewpoint[1] : 0.0f,
                         viewpoint ? viewpoint[2] : 0.0f};
    grid_geom g;
    if (grid_plan(xyz, n, &g) == 0) { // no finite point: every row is NaN, as on the CPU
        for (size_t i = 0; i < 4 * n; ++i)
            out[i] = NAN;
        return GRIP_OK;
    }
    const size_t cells = (size_t)g.dims[0] * (size_t)g.dims[1] * (size_t)g.dims[2];
    normals_buffers b = {};
    size_t sort_bytes = 0;
    grip_status st = buffers_alloc(ctx, &b, xyz, n, cells, &sort_bytes);
    if (st == GRIP_OK)
        st = normals_run(ctx, &b, n, g, cells, sort_bytes, k, vp, out);
    buffers_free(&b);
    return st;
}
