// normals.cu -- PCA normals on the GPU, the twin of src/descriptor/normals.c (see src/descriptor/normals_cuda.h),
// over a device-resident cloud (grip_surface_cuda, cuda/spatial/surface.cuh).
//
// k nearest: one thread per point searches the surface's grid (cuda/spatial/grid3d.cuh: a few points per occupied cell,
// ring by ring until no unseen point can enter: the exact k nearest, ties to the lower index), then sums the
// covariance in list order.
// Radius: a warp per point finds its neighbours over the surface's grid, sorts them in shared memory by distance,
// ties to the lower index (the CPU search's order), and sums them in that order; a point with more than
// GRIP_NORMALS_CUDA_LIST_CAP neighbours, or a radius too large for the surface's grid, takes the surface's radius
// neighbourhoods in device memory (grip_neighborhoods_cuda_radius, the same order) in chunks of queries, and one
// thread per point sums its list.
// Arithmetic: every float operation the CPU twin does is done here with GRIP_FADD/FSUB/FMUL/FDIV (math/rounded.h)
// in the CPU's order, so that nvcc cannot contract it into FMAs: the sums and the solver's steps round as on
// the CPU (only atan2f/cosf/sinf are the device's own, within 2 ulp).
#include "cuda/core/check.cuh"
#include "cuda/core/device.cuh"
#include "cuda/spatial/ball_lists.cuh"
#include "cuda/spatial/grid3d.cuh"
#include "cuda/spatial/kdtree3d.cuh" // pair_before, list_insert: the register list's order and insertion
#include "cuda/spatial/surface.cuh"
#include "math/rounded.h"

extern "C" {
#include "descriptor/normals_cuda.h"
}

#include <float.h>
#include <math.h>

namespace {

constexpr int kThreads = 128;
using knn_list = grip_knn_list<GRIP_NORMALS_CUDA_MAX_K>;
constexpr int kRegisterK = 16; // k up to this keeps its nearest list in registers (knn_regs)
constexpr uint32_t kRadiusChunk = 1u
                                  << 16; // radius queries per neighbourhood search (halved while the lists do not fit)
constexpr uint32_t kListCap = GRIP_NORMALS_CUDA_LIST_CAP; // neighbours a warp sorts and sums in shared memory
constexpr int kListWarps = 8;                             // queries (warps) a block of radius_list_normals_kernel
constexpr float kListMaxCells = 8.0f; // the surface's grid serves radii of up to this many of its cells

// ---- PCL 1.13's float eigen33 (src/math/sym3_eigen.c grip_sym3_smallest_pcl), operation for operation --------
__device__ void pcl_roots_quadratic(float b, float c, float roots[3])
{
    roots[0] = 0.0f;
    float d = (float)GRIP_DSUB((double)GRIP_FMUL(b, b), GRIP_DMUL(4.0, (double)c)); // float b*b, then double
    if (d < 0.0f)
        d = 0.0f;
    const float sd = sqrtf(d);
    roots[2] = GRIP_FMUL(0.5f, GRIP_FADD(b, sd));
    roots[1] = GRIP_FMUL(0.5f, GRIP_FSUB(b, sd));
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
    // c0 = m00 m11 m22 + 2 m01 m02 m12 - m00 m12^2 - m11 m02^2 - m22 m01^2 and
    // c1 = m00 m11 - m01^2 + m00 m22 - m02^2 + m11 m22 - m12^2, left to right as PCL
    float c0 = GRIP_FADD(GRIP_FMUL(GRIP_FMUL(m00, m11), m22), GRIP_FMUL(GRIP_FMUL(GRIP_FMUL(2.0f, m01), m02), m12));
    c0 = GRIP_FSUB(c0, GRIP_FMUL(GRIP_FMUL(m00, m12), m12));
    c0 = GRIP_FSUB(c0, GRIP_FMUL(GRIP_FMUL(m11, m02), m02));
    c0 = GRIP_FSUB(c0, GRIP_FMUL(GRIP_FMUL(m22, m01), m01));
    float c1 = GRIP_FSUB(GRIP_FMUL(m00, m11), GRIP_FMUL(m01, m01));
    c1 = GRIP_FADD(c1, GRIP_FMUL(m00, m22));
    c1 = GRIP_FSUB(c1, GRIP_FMUL(m02, m02));
    c1 = GRIP_FADD(c1, GRIP_FMUL(m11, m22));
    c1 = GRIP_FSUB(c1, GRIP_FMUL(m12, m12));
    const float c2 = GRIP_FADD(GRIP_FADD(m00, m11), m22);
    if (fabsf(c0) < FLT_EPSILON) {
        pcl_roots_quadratic(c2, c1, roots);
        return;
    }
    const float inv3 = (float)(1.0 / 3.0), sqrt3 = sqrtf(3.0f);
    const float c2_over_3 = GRIP_FMUL(c2, inv3);
    float a_over_3 = GRIP_FMUL(GRIP_FSUB(c1, GRIP_FMUL(c2, c2_over_3)), inv3);
    if (a_over_3 > 0.0f)
        a_over_3 = 0.0f;
    const float half_b = GRIP_FMUL(
        0.5f, GRIP_FADD(c0, GRIP_FMUL(c2_over_3, GRIP_FSUB(GRIP_FMUL(GRIP_FMUL(2.0f, c2_over_3), c2_over_3), c1))));
    float q = GRIP_FADD(GRIP_FMUL(half_b, half_b), GRIP_FMUL(GRIP_FMUL(a_over_3, a_over_3), a_over_3));
    if (q > 0.0f)
        q = 0.0f;
    const float rho = sqrtf(-a_over_3);
    const float theta = GRIP_FMUL(atan2f(sqrtf(-q), half_b), inv3);
    const float cos_theta = cosf(theta), sin_theta = sinf(theta);
    roots[0] = GRIP_FADD(c2_over_3, GRIP_FMUL(GRIP_FMUL(2.0f, rho), cos_theta));
    roots[1] = GRIP_FSUB(c2_over_3, GRIP_FMUL(rho, GRIP_FADD(cos_theta, GRIP_FMUL(sqrt3, sin_theta))));
    roots[2] = GRIP_FSUB(c2_over_3, GRIP_FMUL(rho, GRIP_FSUB(cos_theta, GRIP_FMUL(sqrt3, sin_theta))));
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
    out[0] = GRIP_FSUB(GRIP_FMUL(a[1], b[2]), GRIP_FMUL(a[2], b[1]));
    out[1] = GRIP_FSUB(GRIP_FMUL(a[2], b[0]), GRIP_FMUL(a[0], b[2]));
    out[2] = GRIP_FSUB(GRIP_FMUL(a[0], b[1]), GRIP_FMUL(a[1], b[0]));
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
            sqrtf(GRIP_FADD(GRIP_FMUL(cross[r][0], cross[r][0]),
                            GRIP_FADD(GRIP_FMUL(cross[r][1], cross[r][1]), GRIP_FMUL(cross[r][2], cross[r][2]))));
        if (r == 0 || len > best_len) {
            best = r;
            best_len = len;
        }
    }
    for (int i = 0; i < 3; ++i) // the row picked with constant indices: cross stays in registers
        vec[i] = GRIP_FDIV(best == 0 ? cross[0][i] : (best == 1 ? cross[1][i] : cross[2][i]), best_len);
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
        m[i] = GRIP_FDIV(m[i], scale);
    float roots[3];
    pcl_roots(m, roots);
    m[0] = GRIP_FSUB(m[0], roots[0]);
    m[4] = GRIP_FSUB(m[4], roots[0]);
    m[8] = GRIP_FSUB(m[8], roots[0]);
    pcl_largest_cross(m, vec);
    return GRIP_FMUL(roots[0], scale);
}

// ---- normals.c's per-point steps --------------------------------------------------------------------------

// covariance_as_pcl: shifted by the first neighbour, nine float sums in neighbour order, / count, E[xy]-E[x]E[y].
// Neighbours: nb.count() of them, nb.first(p) gives the first one's coordinates, nb.for_each(f) calls f on every
// one's coordinates in order.
template <class Neighbours>
__device__ __forceinline__ void covariance_as_pcl(const Neighbours &nb, float cov[9])
{
    float k0[3], accu[9] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    nb.first(k0);
    nb.for_each([&](const float p[3]) {
        const float x = GRIP_FSUB(p[0], k0[0]), y = GRIP_FSUB(p[1], k0[1]), z = GRIP_FSUB(p[2], k0[2]);
        accu[0] = GRIP_FADD(accu[0], GRIP_FMUL(x, x));
        accu[1] = GRIP_FADD(accu[1], GRIP_FMUL(x, y));
        accu[2] = GRIP_FADD(accu[2], GRIP_FMUL(x, z));
        accu[3] = GRIP_FADD(accu[3], GRIP_FMUL(y, y));
        accu[4] = GRIP_FADD(accu[4], GRIP_FMUL(y, z));
        accu[5] = GRIP_FADD(accu[5], GRIP_FMUL(z, z));
        accu[6] = GRIP_FADD(accu[6], x);
        accu[7] = GRIP_FADD(accu[7], y);
        accu[8] = GRIP_FADD(accu[8], z);
    });
    const float count = (float)nb.count();
    for (int a = 0; a < 9; ++a)
        accu[a] = GRIP_FDIV(accu[a], count);
    cov[0] = GRIP_FSUB(accu[0], GRIP_FMUL(accu[6], accu[6]));
    cov[1] = GRIP_FSUB(accu[1], GRIP_FMUL(accu[6], accu[7]));
    cov[2] = GRIP_FSUB(accu[2], GRIP_FMUL(accu[6], accu[8]));
    cov[4] = GRIP_FSUB(accu[3], GRIP_FMUL(accu[7], accu[7]));
    cov[5] = GRIP_FSUB(accu[4], GRIP_FMUL(accu[7], accu[8]));
    cov[8] = GRIP_FSUB(accu[5], GRIP_FMUL(accu[8], accu[8]));
    cov[3] = cov[1];
    cov[6] = cov[2];
    cov[7] = cov[5];
}

// The normal of point q from its neighbours: NaN with fewer than 3, else the smallest eigenvector flipped toward
// the viewpoint, and the curvature |l0 / trace|.
template <class Neighbours>
__device__ __forceinline__ float4 normal_of(const Neighbours &nb, float qx, float qy, float qz, float3 vp)
{
    if (nb.count() < 3)
        return make_float4(NAN, NAN, NAN, NAN);
    float cov[9], nrm[3];
    covariance_as_pcl(nb, cov);
    const float l0 = sym3_smallest_pcl(cov, nrm);
    const float trace = GRIP_FADD(GRIP_FADD(cov[0], cov[4]), cov[8]);
    const float curvature = trace != 0.0f ? fabsf(GRIP_FDIV(l0, trace)) : 0.0f;
    const float cos_theta =
        GRIP_FADD(GRIP_FADD(GRIP_FMUL(GRIP_FSUB(vp.x, qx), nrm[0]), GRIP_FMUL(GRIP_FSUB(vp.y, qy), nrm[1])),
                  GRIP_FMUL(GRIP_FSUB(vp.z, qz), nrm[2]));
    if (cos_theta < 0.0f)
        return make_float4(-nrm[0], -nrm[1], -nrm[2], curvature);
    return make_float4(nrm[0], nrm[1], nrm[2], curvature);
}

// The k (<= C) nearest as grip_knn_list keeps them (sorted by distance, ties to the lower index; every offer taken
// while fewer than k are held), but in registers: every index into the arrays is a constant once the loops are
// unrolled. Slots C - k .. C - 1 hold the list and the slots before them markers below any distance, so the k-th
// nearest is always slot C - 1: an offer compares with a fixed slot and is inserted as the kd-tree's lists are
// (grip_kd::list_insert).
template <int C>
struct knn_regs {
    float d[C];
    uint32_t id[C];
    int count, k;
    float nearest_d;  // the list's first entry, kept apart so that reading it needs no index
    uint32_t nearest;

    __device__ void init(int want)
    {
        count = 0;
        k = want;
        nearest_d = INFINITY;
        nearest = UINT32_MAX;
#pragma unroll
        for (int s = 0; s < C; ++s) {
            d[s] = s < C - want ? -1.0f : INFINITY; // markers, then the places not filled yet
            id[s] = s < C - want ? 0u : UINT32_MAX;
        }
    }
    __device__ bool full() const { return count == k; }
    __device__ float worst() const { return d[C - 1]; }
    __device__ void offer(float dist, uint32_t index)
    {
        // also when not full: a place not filled yet is last of all
        if (!grip_kd::pair_before(dist, index, d[C - 1], id[C - 1]))
            return;
        if (count < k)
            ++count;
        if (grip_kd::pair_before(dist, index, nearest_d, nearest)) {
            nearest_d = dist;
            nearest = index;
        }
        grip_kd::list_insert<C>(d, id, dist, index);
    }
};

// knn_regs' entries, in list order (slots C - k .. C - k + count - 1), their coordinates read from the cloud.
template <int C>
struct knn_regs_neighbours {
    const knn_regs<C> &l;
    const float *xyz;
    __device__ int count() const { return l.count; }
    __device__ void first(float p[3]) const
    {
        const float *q = xyz + 3 * (size_t)l.nearest;
        p[0] = q[0];
        p[1] = q[1];
        p[2] = q[2];
    }
    template <class F>
    __device__ void for_each(F f) const
    {
#pragma unroll
        for (int s = 0; s < C; ++s)
            if (s >= C - l.k && s < C - l.k + l.count) {
                const float *q = xyz + 3 * (size_t)l.id[s];
                const float p[3] = {q[0], q[1], q[2]};
                f(p);
            }
    }
};

// The k nearest in a grip_knn_list, their coordinates read from the cloud.
struct knn_neighbours {
    const knn_list &l;
    const float *xyz;
    __device__ int count() const { return l.count; }
    __device__ void first(float p[3]) const { get(0, p); }
    __device__ void get(int j, float p[3]) const
    {
        const float *s = xyz + 3 * (size_t)l.id[j];
        p[0] = s[0];
        p[1] = s[1];
        p[2] = s[2];
    }
    template <class F>
    __device__ void for_each(F f) const
    {
        for (int j = 0; j < l.count; ++j) {
            float p[3];
            get(j, p);
            f(p);
        }
    }
};

// One query's radius list: coordinates in structure-of-arrays rows [begin, end).
struct list_neighbours {
    const float *x, *y, *z;
    size_t begin, end;
    __device__ int count() const { return (int)(end - begin); }
    __device__ void first(float p[3]) const { get(0, p); }
    __device__ void get(int j, float p[3]) const
    {
        p[0] = x[begin + j];
        p[1] = y[begin + j];
        p[2] = z[begin + j];
    }
    template <class F>
    __device__ void for_each(F f) const
    {
        for (size_t e = begin; e < end; ++e) {
            const float p[3] = {x[e], y[e], z[e]};
            f(p);
        }
    }
};

// A sorted radius list's coordinates in shared memory, entries [0, n).
struct shared_neighbours {
    const float *x, *y, *z;
    int n;
    __device__ int count() const { return n; }
    __device__ void first(float p[3]) const
    {
        p[0] = x[0];
        p[1] = y[0];
        p[2] = z[0];
    }
    template <class F>
    __device__ void for_each(F f) const
    {
        for (int j = 0; j < n; ++j) {
            const float p[3] = {x[j], y[j], z[j]};
            f(p);
        }
    }
};

// Thread t: row t's NaN when that row is not finite, and the normal of the grid's t-th finite point (in cell order:
// the threads of a warp search the same few cells, and no lane idles on a missing point of a range image). Each
// point's normal depends on nothing but the point, so the order changes no bit.
// k nearest held in registers (knn_regs, k <= kRegisterK) or in a grip_knn_list; the same list either way.
template <bool InRegisters>
__global__ void __launch_bounds__(kThreads) knn_normals_kernel(const float *__restrict__ xyz, uint32_t n,
                                                               grip_grid3d_view grid, uint32_t finite, int k,
                                                               float3 vp, float4 *__restrict__ out)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n && !grip_finite3(xyz[3 * (size_t)t], xyz[3 * (size_t)t + 1], xyz[3 * (size_t)t + 2]))
        out[t] = make_float4(NAN, NAN, NAN, NAN);
    if (t >= finite)
        return;
    const float4 q = grid.pts[t];
    float4 normal;
    if constexpr (InRegisters) {
        knn_regs<kRegisterK> l;
        l.init(k);
        grip_grid3d_knn(grid, q.x, q.y, q.z, l);
        normal = normal_of(knn_regs_neighbours<kRegisterK>{l, xyz}, q.x, q.y, q.z, vp);
    } else {
        knn_list l;
        l.init(k);
        grip_grid3d_knn(grid, q.x, q.y, q.z, l);
        normal = normal_of(knn_neighbours{l, xyz}, q.x, q.y, q.z, vp);
    }
    out[__float_as_uint(q.w)] = normal;
}

// Normals of the m queries from their radius lists, query i's into out[rows[i]] (rows NULL: out[i]).
__global__ void __launch_bounds__(kThreads) radius_normals_kernel(const float *__restrict__ queries, uint32_t m,
                                                                  grip_neighborhoods_cuda nb, float3 vp,
                                                                  const uint32_t *__restrict__ rows,
                                                                  float4 *__restrict__ out)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m)
        return;
    const float qx = queries[3 * (size_t)i], qy = queries[3 * (size_t)i + 1], qz = queries[3 * (size_t)i + 2];
    // a non-finite query has an empty list: NaN
    out[rows ? rows[i] : i] =
        normal_of(list_neighbours{nb.x, nb.y, nb.z, nb.offsets[i], nb.offsets[i + 1]}, qx, qy, qz, vp);
}

// Radius normals with the lists kept in shared memory, a warp a point: the warp walks the ball of point q over the
// surface's grid (grip_ball::warp_ball_scan), sorts the hits' keys (distance, then index: the CPU's order), gathers
// their coordinates, and lane 0 sums them in that order. A point with more than kListCap neighbours is left to
// the chunked lists (its row appended to long_rows); each normal depends only on its point, so which path takes
// it, and the order of long_rows, change no bit.
__global__ void __launch_bounds__(kListWarps * 32)
    radius_list_normals_kernel(grip_grid3d_view grid, const float *__restrict__ xyz, uint32_t n, float radius,
                               float r2, float3 vp, float4 *__restrict__ out, uint32_t *__restrict__ long_rows,
                               uint32_t *__restrict__ n_long)
{
    __shared__ unsigned long long keys[kListWarps][kListCap];
    __shared__ float coords[kListWarps][3][kListCap];
    const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x & 31, q = blockIdx.x * kListWarps + warp;
    if (q >= n)
        return;
    const float qx = xyz[3 * (size_t)q], qy = xyz[3 * (size_t)q + 1], qz = xyz[3 * (size_t)q + 2];
    grip_ball::fill_visit f = {keys[warp], 0, kListCap};
    if (grip_finite3(qx, qy, qz)) // a non-finite point has no neighbours: NaN, below
        grip_ball::warp_ball_scan(grid, qx, qy, qz, radius, r2, f);
    const uint32_t count = f.at;
    if (count > kListCap) {
        if (lane == 0)
            long_rows[atomicAdd(n_long, 1u)] = q;
        return;
    }
    if (count < 3) { // normal_of's NaN, without a sort
        if (lane == 0)
            out[q] = make_float4(NAN, NAN, NAN, NAN);
        return;
    }
    uint32_t p = 2;
    while (p < count)
        p <<= 1;
    for (uint32_t i = count + lane; i < p; i += 32)
        keys[warp][i] = ~0ull;
    __syncwarp();
    grip_ball::warp_bitonic_sort(keys[warp], p);
    for (uint32_t j = lane; j < count; j += 32) {
        const size_t i = (uint32_t)keys[warp][j];
        coords[warp][0][j] = xyz[3 * i];
        coords[warp][1][j] = xyz[3 * i + 1];
        coords[warp][2][j] = xyz[3 * i + 2];
    }
    __syncwarp(); // the gathered coordinates before lane 0 reads them
    if (lane == 0)
        out[q] = normal_of(shared_neighbours{coords[warp][0], coords[warp][1], coords[warp][2], (int)count}, qx, qy,
                           qz, vp);
}

// Every row's nx, ny, nz negated, the curvature kept (normals.c grip_normals_turn_around): a sign change, exact.
__global__ void __launch_bounds__(kThreads) turn_around_kernel(float4 *__restrict__ rows, uint32_t n)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float4 r = rows[i];
    rows[i] = make_float4(-r.x, -r.y, -r.z, r.w);
}

// ---- host side ----------------------------------------------------------------------------------------------

unsigned blocks_for(size_t n)
{
    return (unsigned)((n + kThreads - 1) / kThreads);
}

grip_status knn_normals(grip_ctx *ctx, grip_surface_cuda *s, uint32_t k, float3 vp)
{
    const grip_grid3d_view grid = grip_grid3d_get_view(s->grid);
    float4 *out = reinterpret_cast<float4 *>(s->normals);
    if (k <= (uint32_t)kRegisterK)
        knn_normals_kernel<true><<<blocks_for(s->n), kThreads>>>(s->xyz, s->n, grid, s->grid.finite, (int)k, vp, out);
    else
        knn_normals_kernel<false><<<blocks_for(s->n), kThreads>>>(s->xyz, s->n, grid, s->grid.finite, (int)k, vp, out);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}

// The normals of the m queries (device, m x 3) from their radius lists, query i's into out[rows[i]] (rows NULL:
// out[i]). GRIP_ENOMEM when the lists do not fit.
grip_status radius_chunk(grip_ctx *ctx, grip_surface_cuda *s, const float *queries, const uint32_t *rows, uint32_t m,
                         float radius, float3 vp, float4 *out)
{
    grip_neighborhoods_cuda nb = {};
    grip_status st = grip_neighborhoods_cuda_radius(ctx, s, queries, m, radius, 0, &nb);
    if (st == GRIP_OK) {
        radius_normals_kernel<<<blocks_for(m), kThreads>>>(queries, m, nb, vp, rows, out);
        st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "radius_normals_kernel", __FILE__, __LINE__);
    }
    if (st == GRIP_OK) // the lists are freed once the kernel is done with them
        st = grip_cuda_status(ctx, cudaStreamSynchronize(0), "cudaStreamSynchronize", __FILE__, __LINE__);
    grip_neighborhoods_cuda_free(&nb);
    return st;
}

// Radius normals of the m queries (rows as radius_chunk's) from lists in device memory, chunk by chunk; a chunk
// whose lists do not fit on the device is halved and tried again.
grip_status radius_chunks(grip_ctx *ctx, grip_surface_cuda *s, const float *queries, const uint32_t *rows, uint32_t m,
                          float radius, float3 vp)
{
    float4 *out = reinterpret_cast<float4 *>(s->normals);
    uint32_t chunk = kRadiusChunk;
    for (uint32_t first = 0; first < m;) {
        const uint32_t c = m - first < chunk ? m - first : chunk;
        const grip_status st = radius_chunk(ctx, s, queries + 3 * (size_t)first, rows ? rows + first : NULL, c,
                                            radius, vp, rows ? out : out + first);
        if (st == GRIP_ENOMEM && c > 1) {
            grip_ctx_clear_error(ctx); // handled: smaller chunks follow
            chunk = c / 2;
            continue;
        }
        if (st != GRIP_OK)
            return st;
        first += c;
    }
    return GRIP_OK;
}

// Radius normals with the lists in shared memory (radius_list_normals_kernel); the points whose lists are longer
// then go through radius_chunks.
grip_status radius_list_normals(grip_ctx *ctx, grip_surface_cuda *s, float radius, float3 vp)
{
    uint32_t *long_rows = NULL, *n_long = NULL, m = 0;
    float *long_xyz = NULL;
    grip_status st = grip_cuda_alloc(ctx, (size_t)s->n * sizeof *long_rows, (void **)&long_rows);
    if (st == GRIP_OK)
        st = grip_cuda_alloc(ctx, sizeof *n_long, (void **)&n_long);
    if (st == GRIP_OK)
        st = grip_cuda_status(ctx, GRIP_CUDA_COPY(cudaMemsetAsync(n_long, 0, sizeof *n_long, 0)), "cudaMemsetAsync",
                              __FILE__, __LINE__);
    if (st == GRIP_OK) {
        const float r2 = (float)((double)radius * (double)radius); // the neighbourhood search's bound
        radius_list_normals_kernel<<<(unsigned)((s->n + kListWarps - 1) / kListWarps), kListWarps * 32>>>(
            grip_grid3d_get_view(s->grid), s->xyz, s->n, radius, r2, vp, reinterpret_cast<float4 *>(s->normals),
            long_rows, n_long);
        st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "radius_list_normals_kernel", __FILE__,
                              __LINE__);
    }
    if (st == GRIP_OK)
        st = grip_cuda_copy_to_host(ctx, &m, n_long, sizeof m);
    if (st == GRIP_OK && m > 0)
        st = grip_cuda_alloc(ctx, 3 * (size_t)m * sizeof *long_xyz, (void **)&long_xyz);
    if (st == GRIP_OK && m > 0)
        st = grip_surface_cuda_gather(ctx, s, long_rows, m, long_xyz);
    if (st == GRIP_OK && m > 0)
        st = radius_chunks(ctx, s, long_xyz, long_rows, m, radius, vp);
    grip_cuda_free(long_xyz);
    grip_cuda_free(n_long);
    grip_cuda_free(long_rows);
    return st;
}

// Radius normals: lists in shared memory while the radius spans few cells of the surface's grid (the neighbourhood
// search's own rule for using that grid), else lists in device memory for every point.
grip_status radius_normals(grip_ctx *ctx, grip_surface_cuda *s, float radius, float3 vp)
{
    if (radius * s->grid.geom.inv_cell <= kListMaxCells)
        return radius_list_normals(ctx, s, radius, vp);
    return radius_chunks(ctx, s, s->xyz, NULL, s->n, radius, vp);
}

} // namespace

extern "C" grip_status grip_normals_cuda_surface(grip_ctx *ctx, grip_surface_cuda *s, uint32_t k, float radius,
                                                 const float viewpoint[3])
{
    if (!s)
        return grip_fail(ctx, GRIP_EINVAL, "normals (cuda): the surface is NULL");
    if (k > GRIP_NORMALS_CUDA_MAX_K)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "normals (cuda): k = %u is more than the GPU keeps (%d)", k,
                         GRIP_NORMALS_CUDA_MAX_K);
    if (k == 0 && !(radius > 0.0f && isfinite(radius)))
        return grip_fail(ctx, GRIP_EINVAL, "normals (cuda): k = 0 needs a finite radius > 0 (got %g)",
                         (double)radius);
    const float3 vp = make_float3(viewpoint ? viewpoint[0] : 0.0f, viewpoint ? viewpoint[1] : 0.0f,
                                  viewpoint ? viewpoint[2] : 0.0f);
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(s->device));
    grip_status st = GRIP_OK;
    if (s->bounds.finite == 0) // no finite point (or no point): every row is NaN, as on the CPU
        st = grip_cuda_status(ctx, GRIP_CUDA_COPY(cudaMemset(s->normals, 0xff, (size_t)s->n * 4 * sizeof(float))),
                              "cudaMemset", __FILE__, __LINE__);
    else
        st = k > 0 ? knn_normals(ctx, s, k, vp) : radius_normals(ctx, s, radius, vp);
    if (st == GRIP_OK)
        st = grip_cuda_status(ctx, cudaStreamSynchronize(0), "cudaStreamSynchronize", __FILE__, __LINE__);
    if (st == GRIP_OK)
        grip_surface_cuda_mark_normals(s);
    return st;
}

extern "C" grip_status grip_normals_cuda_turn_around(grip_ctx *ctx, grip_surface_cuda *s)
{
    if (!s || !s->has_normals)
        return grip_fail(ctx, GRIP_EINVAL, "normals (cuda): %s",
                         s ? "the surface has no normals to turn around" : "the surface is NULL");
    if (s->n == 0)
        return GRIP_OK;
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(s->device));
    turn_around_kernel<<<blocks_for(s->n), kThreads>>>(reinterpret_cast<float4 *>(s->normals), s->n);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return grip_cuda_status(ctx, cudaStreamSynchronize(0), "cudaStreamSynchronize", __FILE__, __LINE__);
}

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
    grip_surface_cuda *s = NULL;
    grip_status st = grip_surface_cuda_create(ctx, xyz, n, &s);
    if (st == GRIP_OK)
        st = grip_normals_cuda_surface(ctx, s, k, 0.0f, viewpoint);
    if (st == GRIP_OK) // out is written only once everything has worked
        st = grip_cuda_copy_to_host(ctx, out, s->normals, n * 4 * sizeof(float));
    grip_surface_cuda_free(s);
    return st;
}
