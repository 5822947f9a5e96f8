// knn_tensor.cu -- exact k-NN screened with fp16 tensor cores (see knn_tensor.cuh).
//
// 1. prep: every row (reference rows once, at build; queries per search) is moved by the same centre c (the mean
//    of the reference rows' finite values, summed in any order: any c would do, as distances do not depend on it,
//    but a centre near the data keeps the norms, and so the error bound, small), scaled by a power of two that brings
//    its largest magnitude into [2^13, 2^14) and rounded to fp16 (zero-padded to a multiple of 16 dimensions),
//    with its squared norm, the norm of its rounding residual r - fp16(r)/scale (computed exactly) and upper
//    bounds of both. Non-finite rows get a NaN norm, so they are never screened in (nor returned, as on the CPU).
// 2. screen: a block of 8 warps owns 128 queries (16 per warp) and walks the reference rows in tiles of 64
//    staged in shared memory; WMMA 16x16x16 products give q.r, the screened distance is
//    |q|^2 + |r|^2 - 2 q.r, and each query keeps its 32 smallest in a warp list (one entry per lane).
//    No distance matrix reaches global memory.
// 3. rerank: one warp per query computes the exact distance of its 32 candidates with the CPU twin's arithmetic
//    (dimension order, __fsub_rn/__fmul_rn/__fadd_rn) and ranks them by (distance, row), the CPU's tie rule.
//    Every row not kept has screened distance >= T (the 32nd kept one), hence exact distance >= T - B, where B
//    bounds |screened - exact| for this query and any reference row (from the norms and residual norms:
//    fp16 input rounding, tensor-core accumulation, the norms' and the formula's float rounding, and the CPU
//    sum's own rounding). The answer is certified when the k-th exact distance (or, with fewer than k within the
//    bound, max_sqdist) is < T - B: no row outside the list can then enter or tie into it. Otherwise the query
//    goes to a list of failures,
// 4. which the exact kernel (knn_bruteforce.cu) searches again.
#include "cuda/knn_tensor.cuh"
#include "cuda/knn_bruteforce.cuh"
#include "cuda/check.cuh"

#include <cuda_fp16.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <cuda_pipeline.h>
#include <mma.h>
#include <stdlib.h>

namespace {

namespace wmma = nvcuda::wmma;

constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kBlockQueries = 16 * kWarps; // one WMMA row block per warp
constexpr int kTileRows = 64;              // reference rows per staged tile (4 WMMA column blocks)
constexpr int kStageStride = kTileRows + 4;
constexpr int kList = 32;                  // candidates kept per query
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kScaleExponentLimit = 40;    // rows with a magnitude outside [2^-40, 2^40] are not screened

enum row_state : int { ROW_SCREENED = 0, ROW_NON_FINITE = 1, ROW_OUT_OF_RANGE = 2 };

// Per-row screening data (rows padded to the block or tile size; padding rows are ROW_NON_FINITE).
struct rows_prep {
    __half *h;        // rows x dim16, scaled and rounded
    float *norm2;     // |r|^2 in float (NaN for rows never screened in)
    float *inv_scale; // 1 / scale (a power of two)
    float *norm_up;   // an upper bound of |r|
    float *resid_up;  // an upper bound of |r - fp16(r)/scale|
    int *state;
};

// Maxima over the reference rows, for the bound B.
struct ref_stats {
    float max_norm_up, max_resid_up;
    int out_of_range;
};

size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(kFullMask, v, o);
    return v;
}

// An upper bound of sqrt(s) for a float sum s of `dim` squares: any summation order errs by at most
// gamma_dim < dim * 2^-23 relatively (x 2 here for margin), plus underflowed squares (< FLT_MIN each).
__device__ __forceinline__ float norm_upper(float s, size_t dim)
{
    const float grown = s * (1.0f + (float)dim * 0x1p-22f) + (float)dim * FLT_MIN;
    return sqrtf(grown) * (1.0f + 0x1p-20f);
}

// Sums the finite values of each column of ref into sum (zeroed by the caller): thread d of a block adds column d
// of every gridDim.y-th row, so that a warp reads consecutive floats of one row.
__global__ void column_sum_kernel(const float *__restrict__ ref, size_t n, size_t dim, float *sum)
{
    const size_t d = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= dim)
        return;
    float acc = 0.0f;
    for (size_t i = blockIdx.y; i < n; i += gridDim.y) {
        const float v = ref[i * dim + d];
        acc += isfinite(v) ? v : 0.0f;
    }
    atomicAdd(&sum[d], acc);
}

// One warp per row: centre, scale, round, norms. stats (reference rows only) collects the maxima. The centre is
// sum[d] * inv_count, the same floats for every row and every search.
__global__ void prep_kernel(const float *__restrict__ src, size_t rows, size_t padded_rows, size_t dim,
                            size_t dim16, const float *__restrict__ sum, float inv_count, rows_prep p,
                            ref_stats *stats)
{
    const size_t row = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row >= padded_rows)
        return;
    const float *x = src + row * dim;
    __half *h = p.h + row * dim16;
    bool finite = true, centred_finite = true; // a finite row may leave the float range once centred
    float maxabs = 0.0f;
    if (row < rows)
        for (size_t d = lane; d < dim; d += 32) {
            const float xc = __fsub_rn(x[d], sum[d] * inv_count);
            finite = finite && isfinite(x[d]);
            centred_finite = centred_finite && isfinite(xc);
            maxabs = fmaxf(maxabs, fabsf(xc));
        }
    finite = __all_sync(kFullMask, finite) && row < rows;
    centred_finite = __all_sync(kFullMask, centred_finite);
    for (int o = 16; o > 0; o >>= 1)
        maxabs = fmaxf(maxabs, __shfl_xor_sync(kFullMask, maxabs, o));
    int e = 0;
    if (maxabs > 0.0f && isfinite(maxabs))
        (void)frexpf(maxabs, &e); // maxabs < 2^e
    const bool in_range = centred_finite && (maxabs == 0.0f || (e <= kScaleExponentLimit && e >= -kScaleExponentLimit));
    const int state = !finite ? ROW_NON_FINITE : in_range ? ROW_SCREENED : ROW_OUT_OF_RANGE;
    const float scale = ldexpf(1.0f, 14 - e), inv = ldexpf(1.0f, e - 14);
    float norm2 = 0.0f, resid2 = 0.0f;
    for (size_t d = lane; d < dim16; d += 32) {
        __half v = __float2half_rn(0.0f);
        if (state == ROW_SCREENED && d < dim) {
            const float xc = __fsub_rn(x[d], sum[d] * inv_count);
            v = __float2half_rn(xc * scale);
            const float r = xc - __half2float(v) * inv; // exact: the bits fp16 dropped
            norm2 += xc * xc;
            resid2 += r * r;
        }
        h[d] = v;
    }
    norm2 = warp_sum(norm2);
    resid2 = warp_sum(resid2);
    if (lane != 0)
        return;
    p.state[row] = state;
    p.inv_scale[row] = inv;
    p.norm2[row] = state == ROW_SCREENED ? norm2 : NAN;
    p.norm_up[row] = norm_upper(norm2, dim);
    p.resid_up[row] = norm_upper(resid2, dim);
    if (!stats)
        return;
    if (state == ROW_OUT_OF_RANGE)
        atomicOr(&stats->out_of_range, 1);
    if (state == ROW_SCREENED) { // non-negative floats order as their bits
        atomicMax((int *)&stats->max_norm_up, __float_as_int(p.norm_up[row]));
        atomicMax((int *)&stats->max_resid_up, __float_as_int(p.resid_up[row]));
    }
}

// Inserts (d, id) into a warp's sorted list of kList entries (entry j in lane j), after equal distances.
__device__ __forceinline__ void list_insert(float &list_d, uint32_t &list_id, float d, uint32_t id, int lane)
{
    const int pos = __popc(__ballot_sync(kFullMask, list_d <= d));
    const float up_d = __shfl_up_sync(kFullMask, list_d, 1);
    const uint32_t up_id = __shfl_up_sync(kFullMask, list_id, 1);
    if (lane > pos) {
        list_d = up_d;
        list_id = up_id;
    }
    if (lane == pos) {
        list_d = d;
        list_id = id;
    }
}

// Copies `rows` rows of fp16 data (row0 on) into shared memory, 16 bytes at a time, asynchronously (cp.async).
__device__ __forceinline__ void stage_rows_async(__half *dst, int dst_stride, const __half *__restrict__ src,
                                                 size_t row0, int rows, size_t dim16)
{
    const int units = (int)(dim16 / 8);
    for (int u = threadIdx.x; u < rows * units; u += kThreads) {
        const int row = u / units, c = u % units;
        __pipeline_memcpy_async(dst + row * dst_stride + c * 8, src + (row0 + (size_t)row) * dim16 + (size_t)c * 8,
                                16);
    }
}

// The screened distance |q|^2 + |r|^2 - 2 q.r of the product in the stage (the scales are powers of two).
__device__ __forceinline__ float screened(float qn, float rn, float product, float qi, float ri)
{
    return qn + rn - 2.0f * (product * qi * ri);
}

// Merges one tile's screened distances (products in the warp's stage) into the warp's 16 lists; kth[i] is list
// i's last entry (uniform over the warp). A first pass only asks whether any distance of the tile enters any
// list: once the lists are full, most tiles hold none.
__device__ __forceinline__ void select_tile(const float *stage, const rows_prep &r, size_t r0, float my_qn,
                                            float my_qi, float (&list_d)[16], uint32_t (&list_id)[16],
                                            float (&kth)[16], int lane)
{
    const float rn[2] = {r.norm2[r0 + lane], r.norm2[r0 + 32 + lane]};
    const float ri[2] = {r.inv_scale[r0 + lane], r.inv_scale[r0 + 32 + lane]};
    bool enters = false;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        const float qn = __shfl_sync(kFullMask, my_qn, i), qi = __shfl_sync(kFullMask, my_qi, i);
#pragma unroll
        for (int c = 0; c < 2; ++c)
            enters |= screened(qn, rn[c], stage[i * kStageStride + c * 32 + lane], qi, ri[c]) < kth[i];
    }
    if (!__any_sync(kFullMask, enters))
        return;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        const float qn = __shfl_sync(kFullMask, my_qn, i), qi = __shfl_sync(kFullMask, my_qi, i);
#pragma unroll
        for (int c = 0; c < 2; ++c) {
            const float d = screened(qn, rn[c], stage[i * kStageStride + c * 32 + lane], qi, ri[c]);
            unsigned cands = __ballot_sync(kFullMask, d < kth[i]); // NaN (rows never screened in) never
            while (cands) {
                const int src = __ffs(cands) - 1;
                cands &= cands - 1;
                const float cd = __shfl_sync(kFullMask, d, src);
                if (cd < kth[i]) { // the list may have tightened since the ballot
                    list_insert(list_d[i], list_id[i], cd, (uint32_t)(r0 + (size_t)(c * 32 + src)), lane);
                    kth[i] = __shfl_sync(kFullMask, list_d[i], kList - 1);
                }
            }
        }
    }
}

__global__ void __launch_bounds__(kThreads)
    screen_kernel(rows_prep q, rows_prep r, size_t n_padded, size_t dim16, uint32_t *__restrict__ cand_id,
                  float *__restrict__ cand_d)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const int stride = (int)dim16 + 8; // a multiple of 8 halves, off the banks' period
    __half *qs = reinterpret_cast<__half *>(smem);
    __half *tiles = qs + kBlockQueries * stride;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float *stage = reinterpret_cast<float *>(tiles + 2 * kTileRows * stride) + warp * 16 * kStageStride;
    const size_t qb = (size_t)blockIdx.x * kBlockQueries, q0 = qb + (size_t)warp * 16;
    const float my_qn = lane < 16 ? q.norm2[q0 + lane] : 0.0f, my_qi = lane < 16 ? q.inv_scale[q0 + lane] : 0.0f;
    float list_d[16], kth[16];
    uint32_t list_id[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        list_d[i] = INFINITY;
        kth[i] = INFINITY;
        list_id[i] = UINT32_MAX;
    }
    stage_rows_async(qs, stride, q.h, qb, kBlockQueries, dim16);
    stage_rows_async(tiles, stride, r.h, 0, kTileRows, dim16);
    __pipeline_commit();
    const __half *qa = qs + warp * 16 * stride;
    for (size_t r0 = 0, t = 0; r0 < n_padded; r0 += kTileRows, ++t) {
        if (r0 + kTileRows < n_padded) // into the buffer the previous tile used (all are done with it)
            stage_rows_async(tiles + ((t + 1) & 1) * kTileRows * stride, stride, r.h, r0 + kTileRows, kTileRows,
                             dim16);
        __pipeline_commit();
        __pipeline_wait_prior(1); // this tile (and the queries) arrived
        __syncthreads();
        const __half *tile = tiles + (t & 1) * kTileRows * stride;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4];
#pragma unroll
        for (int j = 0; j < 4; ++j)
            wmma::fill_fragment(acc[j], 0.0f);
        for (size_t k0 = 0; k0 < dim16; k0 += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
            wmma::load_matrix_sync(a, qa + k0, (unsigned)stride);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
                wmma::load_matrix_sync(b, tile + j * 16 * stride + k0, (unsigned)stride);
                wmma::mma_sync(acc[j], a, b, acc[j]);
            }
        }
#pragma unroll
        for (int j = 0; j < 4; ++j)
            wmma::store_matrix_sync(stage + j * 16, acc[j], kStageStride, wmma::mem_row_major);
        __syncwarp();
        select_tile(stage, r, r0, my_qn, my_qi, list_d, list_id, kth, lane);
        __syncthreads(); // the tile is done with before the next iteration refills its buffer
    }
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        cand_id[(q0 + (size_t)i) * kList + (size_t)lane] = list_id[i];
        cand_d[(q0 + (size_t)i) * kList + (size_t)lane] = list_d[i];
    }
}

// B: an upper bound of |screened - exact float distance| of query (a = |q - c|, ea = its residual norm, upper
// bounds) against any reference row (b, eb: the maxima). In double, with every term over-estimated:
// - fp16 inputs: |q~.r~ - q.r| <= a eb + ea b + ea eb (Cauchy-Schwarz), twice in the formula;
// - tensor-core accumulation (products exact, sums truncated per block of 16): < (2 dim + 32) 2^-22 |q~||r~|;
// - the float norms: < (dim + 2) 2^-23 (a^2 + b^2); the formula's three float operations: 4 u (a^2+b^2+2|q~||r~|);
// - the CPU's own sum: < (dim + 3) 2^-23 D <= (dim + 3) 2^-23 (a + b)^2, and the centring's float rounding,
//   which moves q - r by < 2^-24 (a + b), so D by < 2^-22 (a + b)^2: (dim + 8) 2^-23 (a + b)^2 in all;
// then 2% more and an absolute term for underflow.
__device__ __forceinline__ double screening_bound(double a, double ea, double b, double eb, double dim)
{
    const double qt = a + ea, rt = b + eb, u = 0x1p-24;
    const double sum = 2.0 * (a * eb + ea * b + ea * eb) + 2.0 * (2.0 * dim + 32.0) * 0x1p-22 * qt * rt +
                       (dim + 2.0) * 0x1p-23 * (a * a + b * b) + 4.0 * u * (a * a + b * b + 2.0 * qt * rt) +
                       (dim + 8.0) * 0x1p-23 * (a + b) * (a + b);
    return 1.02 * sum + 1e-30;
}

__global__ void __launch_bounds__(kThreads)
    rerank_kernel(const float *__restrict__ ref, const float *__restrict__ queries, size_t m, size_t dim, int k,
                  float max_sqdist, const uint32_t *__restrict__ cand_id, const float *__restrict__ cand_d,
                  rows_prep q, const ref_stats *__restrict__ stats, uint32_t *__restrict__ ids,
                  float *__restrict__ sqdist, uint32_t *__restrict__ failed, uint32_t *__restrict__ n_failed)
{
    const size_t qi = (size_t)blockIdx.x * kWarps + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (qi >= m)
        return; // the whole warp
    const uint32_t id = cand_id[qi * kList + (size_t)lane];
    const float last = cand_d[qi * kList + kList - 1];
    float e = INFINITY;
    if (id != UINT32_MAX) {
        const float *x = queries + qi * dim, *y = ref + (size_t)id * dim;
        float acc = 0.0f;
        for (size_t d = 0; d < dim; ++d) {
            const float diff = __fsub_rn(x[d], y[d]);
            acc = __fadd_rn(acc, __fmul_rn(diff, diff));
        }
        e = acc;
    }
    // the exact kernel lists a row when its distance is < +inf and <= max_sqdist (NaN never)
    const bool valid = id != UINT32_MAX && e < INFINITY && e <= max_sqdist;
    const unsigned long long key = valid ? ((unsigned long long)__float_as_uint(e) << 32) | id : ~0ull;
    int rank = 0;
    for (int j = 0; j < 32; ++j)
        rank += __shfl_sync(kFullMask, key, j) < key;
    const int count = __popc(__ballot_sync(kFullMask, valid));
    const unsigned holder = __ballot_sync(kFullMask, valid && rank == k - 1);
    const float kth_exact = __shfl_sync(kFullMask, e, holder ? __ffs(holder) - 1 : 0);
    const float threshold = holder ? kth_exact : max_sqdist;
    bool certified = q.state[qi] != ROW_OUT_OF_RANGE;
    if (certified && last < INFINITY) { // a full list: rows outside it exist and must be kept out
        const double bound = screening_bound(q.norm_up[qi], q.resid_up[qi], stats->max_norm_up,
                                             stats->max_resid_up, (double)dim);
        certified = (double)last - bound * (1.0 + 1e-6) > (double)threshold;
    }
    if (!certified) {
        if (lane == 0)
            failed[atomicAdd(n_failed, 1u)] = (uint32_t)qi;
        return;
    }
    if (valid && rank < k) {
        ids[qi * (size_t)k + (size_t)rank] = id;
        sqdist[qi * (size_t)k + (size_t)rank] = e;
    }
    if (lane >= count && lane < k) {
        ids[qi * (size_t)k + (size_t)lane] = UINT32_MAX;
        sqdist[qi * (size_t)k + (size_t)lane] = INFINITY;
    }
}

// Copies the failed queries' rows into a contiguous block (one warp per query).
__global__ void gather_kernel(const float *__restrict__ queries, size_t dim, const uint32_t *__restrict__ failed,
                              size_t count, float *__restrict__ out)
{
    const size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (i >= count)
        return;
    for (size_t d = threadIdx.x % 32; d < dim; d += 32)
        out[i * dim + d] = queries[(size_t)failed[i] * dim + d];
}

// Writes the exact kernel's answers for the failed queries to their places.
__global__ void scatter_kernel(const uint32_t *__restrict__ failed, size_t count, int k,
                               const uint32_t *__restrict__ sub_ids, const float *__restrict__ sub_d,
                               uint32_t *__restrict__ ids, float *__restrict__ sqdist)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count * (size_t)k)
        return;
    const size_t i = t / (size_t)k, j = t % (size_t)k, q = failed[i];
    ids[q * (size_t)k + j] = sub_ids[t];
    sqdist[q * (size_t)k + j] = sub_d[t];
}

// Shared memory of screen_kernel: the block's queries, two reference tiles (the next one loads while this one is
// used), and each warp's 16 x 64 products.
size_t screen_smem_bytes(size_t dim16)
{
    return ((size_t)kBlockQueries + 2 * (size_t)kTileRows) * (dim16 + 8) * sizeof(__half) +
           (size_t)kWarps * 16 * kStageStride * sizeof(float);
}

// Carves the per-row arrays of `rows` rows out of one allocation; returns its size when base is NULL.
size_t rows_prep_carve(rows_prep *p, unsigned char *base, size_t rows, size_t dim16)
{
    size_t off = 0;
    auto take = [&](size_t bytes) {
        unsigned char *at = base ? base + off : nullptr;
        off += round_up(bytes, 256);
        return at;
    };
    p->h = reinterpret_cast<__half *>(take(rows * dim16 * sizeof(__half)));
    p->norm2 = reinterpret_cast<float *>(take(rows * sizeof(float)));
    p->inv_scale = reinterpret_cast<float *>(take(rows * sizeof(float)));
    p->norm_up = reinterpret_cast<float *>(take(rows * sizeof(float)));
    p->resid_up = reinterpret_cast<float *>(take(rows * sizeof(float)));
    p->state = reinterpret_cast<int *>(take(rows * sizeof(int)));
    return off;
}

void launch_prep(const float *src, size_t rows, size_t padded_rows, size_t dim, size_t dim16, const float *sum,
                 float inv_count, const rows_prep &p, ref_stats *stats)
{
    const size_t blocks = (padded_rows * 32 + kThreads - 1) / kThreads;
    prep_kernel<<<(unsigned)blocks, kThreads>>>(src, rows, padded_rows, dim, dim16, sum, inv_count, p, stats);
}

} // namespace

struct grip_knn_screen {
    void *mem; // one allocation: the rows' data, the stats, the column sums
    rows_prep rows;
    ref_stats *stats;
    float *sum;      // the centre is sum * inv_count
    float inv_count; // 1 / n
    size_t n, n_padded, dim, dim16;
};

void grip_knn_screen_free(grip_knn_screen *screen)
{
    if (!screen)
        return;
    (void)cudaFree(screen->mem);
    free(screen);
}

static grip_status screen_build_on(grip_ctx *ctx, grip_knn_screen *s, const float *ref, bool *usable)
{
    const size_t bytes = rows_prep_carve(&s->rows, nullptr, s->n_padded, s->dim16);
    GRIP_CUDA_CHECK(ctx, cudaMalloc(&s->mem, bytes + 256 + s->dim * sizeof(float)));
    rows_prep_carve(&s->rows, (unsigned char *)s->mem, s->n_padded, s->dim16);
    s->stats = reinterpret_cast<ref_stats *>((unsigned char *)s->mem + bytes);
    s->sum = reinterpret_cast<float *>((unsigned char *)s->mem + bytes + 256);
    s->inv_count = 1.0f / (float)s->n;
    GRIP_CUDA_CHECK(ctx, cudaMemset(s->stats, 0, 256 + s->dim * sizeof(float)));
    const dim3 grid((unsigned)((s->dim + 127) / 128), 256);
    column_sum_kernel<<<grid, 128>>>(ref, s->n, s->dim, s->sum);
    GRIP_CUDA_CHECK(ctx, cudaGetLastError());
    launch_prep(ref, s->n, s->n_padded, s->dim, s->dim16, s->sum, s->inv_count, s->rows, s->stats);
    GRIP_CUDA_CHECK(ctx, cudaGetLastError());
    ref_stats host;
    GRIP_CUDA_CHECK(ctx, cudaMemcpy(&host, s->stats, sizeof host, cudaMemcpyDeviceToHost));
    *usable = !host.out_of_range;
    return GRIP_OK;
}

grip_status grip_knn_screen_build(grip_ctx *ctx, const float *ref, size_t n, size_t dim, grip_knn_screen **out)
{
    *out = NULL;
    if (dim < GRIP_KNN_SCREEN_MIN_DIM || dim > GRIP_KNN_SCREEN_MAX_DIM || n == 0)
        return GRIP_OK;
    grip_knn_screen *s = (grip_knn_screen *)calloc(1, sizeof *s);
    if (!s)
        return grip_fail(ctx, GRIP_ENOMEM, "knn (cuda): out of host memory");
    s->n = n;
    s->n_padded = round_up(n, kTileRows);
    s->dim = dim;
    s->dim16 = round_up(dim, 16);
    bool usable = false;
    grip_status st = screen_build_on(ctx, s, ref, &usable);
    if (st == GRIP_OK && usable)
        *out = s;
    else
        grip_knn_screen_free(s);
    if (st != GRIP_OK)
        grip_fail_append(ctx, "knn (cuda): preparing the fp16 screening of %zu rows of %zu dims", n, dim);
    return st;
}

// Device scratch of one screened search: the queries' rows data, candidates, failures; then the failed queries'
// rows and answers for the exact kernel.
struct screen_scratch {
    void *mem;
    rows_prep q;
    uint32_t *cand_id, *failed, *n_failed;
    float *cand_d;
    void *sub; // the exact kernel's inputs and outputs for the failed queries
};

static grip_status scratch_alloc(grip_ctx *ctx, screen_scratch *w, size_t m_padded, size_t dim16)
{
    const size_t prep = rows_prep_carve(&w->q, nullptr, m_padded, dim16);
    const size_t cands = m_padded * kList * sizeof(uint32_t);
    GRIP_CUDA_CHECK(ctx, cudaMalloc(&w->mem, prep + 2 * cands + m_padded * sizeof(uint32_t) + 256));
    unsigned char *base = (unsigned char *)w->mem;
    rows_prep_carve(&w->q, base, m_padded, dim16);
    w->cand_id = (uint32_t *)(base + prep);
    w->cand_d = (float *)(base + prep + cands);
    w->n_failed = (uint32_t *)(base + prep + 2 * cands);
    w->failed = (uint32_t *)(base + prep + 2 * cands + 256);
    return GRIP_OK;
}

// The exact kernel on the failed queries, its answers scattered back.
static grip_status search_failed(grip_ctx *ctx, screen_scratch *w, const float *ref, size_t n, const float *queries,
                                 size_t dim, uint32_t count, uint32_t k, float max_sqdist, uint32_t *ids,
                                 float *sqdist)
{
    const size_t rows_bytes = round_up((size_t)count * dim * sizeof(float), 256);
    const size_t ids_bytes = round_up((size_t)count * k * sizeof(uint32_t), 256);
    GRIP_CUDA_CHECK(ctx, cudaMalloc(&w->sub, rows_bytes + ids_bytes + (size_t)count * k * sizeof(float)));
    float *sub_q = (float *)w->sub;
    uint32_t *sub_ids = (uint32_t *)((unsigned char *)w->sub + rows_bytes);
    float *sub_d = (float *)((unsigned char *)w->sub + rows_bytes + ids_bytes);
    gather_kernel<<<(unsigned)(((size_t)count * 32 + kThreads - 1) / kThreads), kThreads>>>(queries, dim, w->failed,
                                                                                            count, sub_q);
    GRIP_CUDA_CHECK(ctx, cudaGetLastError());
    grip_status st = grip_knn_cuda_launch(ctx, ref, n, sub_q, count, dim, k, max_sqdist, sub_ids, sub_d, 0);
    if (st != GRIP_OK)
        return st;
    const size_t cells = (size_t)count * k;
    scatter_kernel<<<(unsigned)((cells + kThreads - 1) / kThreads), kThreads>>>(w->failed, count, (int)k, sub_ids,
                                                                               sub_d, ids, sqdist);
    GRIP_CUDA_CHECK(ctx, cudaGetLastError());
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

static grip_status screen_search_with(grip_ctx *ctx, const grip_knn_screen *s, screen_scratch *w, const float *ref,
                                      const float *queries, size_t m, uint32_t k, float max_sqdist, uint32_t *ids,
                                      float *sqdist)
{
    const size_t m_padded = round_up(m, kBlockQueries);
    grip_status st = scratch_alloc(ctx, w, m_padded, s->dim16);
    if (st != GRIP_OK)
        return st;
    GRIP_CUDA_CHECK(ctx, cudaMemsetAsync(w->n_failed, 0, sizeof(uint32_t), 0));
    launch_prep(queries, m, m_padded, s->dim, s->dim16, s->sum, s->inv_count, w->q, nullptr);
    GRIP_CUDA_CHECK(ctx, cudaGetLastError());
    const size_t smem = screen_smem_bytes(s->dim16);
    GRIP_CUDA_CHECK(ctx, cudaFuncSetAttribute(screen_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    screen_kernel<<<(unsigned)(m_padded / kBlockQueries), kThreads, smem>>>(w->q, s->rows, s->n_padded, s->dim16,
                                                                           w->cand_id, w->cand_d);
    GRIP_CUDA_CHECK(ctx, cudaGetLastError());
    rerank_kernel<<<(unsigned)((m + kWarps - 1) / kWarps), kThreads>>>(ref, queries, m, s->dim, (int)k, max_sqdist,
                                                                      w->cand_id, w->cand_d, w->q, s->stats, ids,
                                                                      sqdist, w->failed, w->n_failed);
    GRIP_CUDA_CHECK(ctx, cudaGetLastError());
    uint32_t count = 0;
    GRIP_CUDA_CHECK(ctx, cudaMemcpy(&count, w->n_failed, sizeof count, cudaMemcpyDeviceToHost));
    if (count == 0)
        return GRIP_OK;
    return search_failed(ctx, w, ref, s->n, queries, s->dim, count, k, max_sqdist, ids, sqdist);
}

grip_status grip_knn_screen_search(grip_ctx *ctx, const grip_knn_screen *screen, const float *ref,
                                   const float *queries, size_t m, uint32_t k, float max_sqdist, uint32_t *ids,
                                   float *sqdist)
{
    if (m / kBlockQueries + 1 > (size_t)INT_MAX)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "knn (cuda): %zu queries exceed one launch", m);
    screen_scratch w = {};
    grip_status st = screen_search_with(ctx, screen, &w, ref, queries, m, k, max_sqdist, ids, sqdist);
    (void)cudaFree(w.sub);
    (void)cudaFree(w.mem);
    if (st != GRIP_OK)
        grip_fail_append(ctx, "knn (cuda): fp16-screened search of %zu queries, k = %u", m, k);
    return st;
}
