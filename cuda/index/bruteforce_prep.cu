// bruteforce_prep.cu -- the rows' preparation for the tensor-core screening (see bruteforce_prep.cuh, and
// bruteforce_tensor.cu's step 1).
#include "cuda/index/bruteforce_prep.cuh"

#include <cuda_fp16.h>
#include <float.h>
#include <math.h>

namespace grip_screen {

namespace {

constexpr int kThreads = 256;

template <class T> __device__ __forceinline__ T warp_sum(T v)
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

// The largest magnitude of the centred finite values of ref, as float bits into *max_bits (zeroed by the caller):
// the wgmma layout scales every reference row by the same power of two, chosen from it.
__global__ void centred_max_kernel(const float *__restrict__ ref, size_t count, size_t dim,
                                   const float *__restrict__ sum, float inv_count, int *max_bits)
{
    float m = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        const float xc = __fsub_rn(ref[i], sum[i % dim] * inv_count);
        if (isfinite(xc))
            m = fmaxf(m, fabsf(xc));
    }
    for (int o = 16; o > 0; o >>= 1)
        m = fmaxf(m, __shfl_xor_sync(kFullMask, m, o));
    if (threadIdx.x % 32 == 0)
        atomicMax(max_bits, __float_as_int(m)); // non-negative floats order as their bits
}

// Where dimension d of row `row` goes in the rows (in elements: halves, or int8 bytes; epb of them in 16 bytes):
// row-major (kdim a row), or, for the wgmma kernel, in tiles of kTileRows rows, each a sequence of chunks of
// kWgmmaChunkBytes bytes a row (the last may be shorter), each chunk a grid of 8 x 8 core matrices (8 rows x 16
// bytes, stored as 128 contiguous bytes), 8-row groups (kc / epb) core matrices apart: the operand layout wgmma
// reads without swizzling, so that one bulk copy moves a chunk from global to shared memory as it is.
__device__ __forceinline__ size_t operand_index(size_t row, size_t d, size_t kdim, bool tiled, size_t epb)
{
    if (!tiled)
        return row * kdim + d;
    const size_t chunk_dims = kWgmmaChunkBytes / 16 * epb;
    const size_t tile = row / kTileRows, n = row % kTileRows, chunk = d / chunk_dims, k = d % chunk_dims;
    const size_t kc = min(chunk_dims, kdim - chunk * chunk_dims);
    return tile * kTileRows * kdim + chunk * kTileRows * chunk_dims + ((n / 8) * (kc / epb) + k / epb) * 8 * epb +
           (n % 8) * epb + k % epb;
}

// One warp per row: centre, scale, round, norms. stats (reference rows only) collects the maxima. The centre is
// sum[d] * inv_count, the same floats for every row and every search.
__global__ void prep_kernel(const float *__restrict__ src, size_t rows, size_t padded_rows, size_t dim,
                            size_t kdim, const float *__restrict__ sum, float inv_count, prep_layout layout,
                            rows_prep p, ref_stats *stats)
{
    const size_t row = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row >= padded_rows)
        return;
    const float *x = src + row * dim;
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
    if (layout.fixed)
        e = layout.fixed_e;
    else if (maxabs > 0.0f && isfinite(maxabs))
        (void)frexpf(maxabs, &e); // maxabs < 2^e
    const bool in_range = centred_finite && e <= kScaleExponentLimit && e >= -kScaleExponentLimit;
    const int state = !finite ? ROW_NON_FINITE : in_range ? ROW_SCREENED : ROW_OUT_OF_RANGE;
    const float scale = ldexpf(1.0f, 14 - e), inv = ldexpf(1.0f, e - 14);
    float norm2 = 0.0f, resid2 = 0.0f;
    for (size_t d = lane; d < kdim; d += 32) {
        __half v = __float2half_rn(0.0f);
        if (state == ROW_SCREENED && d < dim) {
            const float xc = __fsub_rn(x[d], sum[d] * inv_count);
            v = __float2half_rn(xc * scale);
            const float r = xc - __half2float(v) * inv; // exact: the bits fp16 dropped
            norm2 += xc * xc;
            resid2 += r * r;
        }
        p.h[operand_index(row, d, kdim, layout.tiled, 8)] = v;
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

// The norm folded into the products (int8 rows with spare padding columns: s8_fold_columns): the queries are
// negated and the reference rows' floor(|r~|^2 / 2) = h = 128 A + B is written in the fold's columns, so that
// the wgmma's integer product is h - q~.r~ itself, half the screened value less |q~|^2 (less 1/2 when |r~|^2 is
// odd): no norm to load and add per product. Column j < fold - 1 pairs a query's -128 with a row's -a_j (a_j in
// [0, 127], summing to A), the last pairs -1 with -B. Rows never screened in get -128 throughout (of no
// consequence: the rerank finds their distance not valid, or their row past n).
__device__ __forceinline__ int fold_query_column(int j, int fold)
{
    return j == fold - 1 ? -1 : -128;
}

__device__ __forceinline__ int fold_row_column(int j, int fold, int h, bool never)
{
    if (never)
        return -128;
    return j == fold - 1 ? -(h % 128) : -min(max(h / 128 - 127 * j, 0), 127);
}

// One warp per row, as prep_kernel, in int8 for the wgmma kernel: |t|^2 (an exact integer: reference rows, which
// are stored in wgmma tiles, as norm2_t; queries as the float norm2), inv_scale = the step, resid_up bounds
// |xc - t step| (computed exactly in double), norm_up bounds |xc|. No per-row range: a row far from the reference
// rows' range is clamped, and its residual fails its certificate. With quant.fold, the padding columns from dim
// on carry the folded norm (fold_row_column, fold_query_column).
__global__ void prep_s8_kernel(const float *__restrict__ src, size_t rows, size_t padded_rows, size_t dim,
                               size_t kdim, const float *__restrict__ sum, float inv_count, s8_quant quant,
                               bool reference, rows_prep p, ref_stats *stats)
{
    const size_t row = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row >= padded_rows)
        return;
    const float *x = src + row * dim;
    bool finite = true, centred_finite = true;
    if (row < rows)
        for (size_t d = lane; d < dim; d += 32) {
            finite = finite && isfinite(x[d]);
            centred_finite = centred_finite && isfinite(__fsub_rn(x[d], sum[d] * inv_count));
        }
    finite = __all_sync(kFullMask, finite) && row < rows;
    centred_finite = __all_sync(kFullMask, centred_finite);
    const int state = !finite ? ROW_NON_FINITE : centred_finite ? ROW_SCREENED : ROW_OUT_OF_RANGE;
    const float limit = (float)quant.limit;
    float norm2 = 0.0f;
    double resid2 = 0.0;
    int norm2_t = 0;
    for (size_t d = lane; d < kdim; d += 32) {
        int t = 0;
        if (state == ROW_SCREENED && d < dim) {
            const float xc = __fsub_rn(x[d], sum[d] * inv_count);
            t = (int)fminf(fmaxf(rintf(xc * quant.inv_step), -limit), limit);
            const double r = (double)xc - (double)t * (double)quant.step; // exact in double
            norm2 += xc * xc;
            resid2 += r * r;
            norm2_t += t * t;
        }
        const bool fold_column = quant.fold > 0 && d >= dim && d < dim + quant.fold;
        if (fold_column && reference)
            continue; // the row's side of the fold: written below, by one lane, once the norm is known
        if (quant.fold > 0 && !reference) // the query's side of the fold
            t = d < dim ? -t : fold_column ? fold_query_column((int)(d - dim), quant.fold) : 0;
        p.s8[operand_index(row, d, kdim, reference, 16)] = (signed char)t;
    }
    norm2 = warp_sum(norm2);
    resid2 = warp_sum(resid2);
    norm2_t = warp_sum(norm2_t);
    if (quant.fold > 0 && reference && lane < quant.fold)
        p.s8[operand_index(row, dim + lane, kdim, true, 16)] =
            (signed char)fold_row_column(lane, quant.fold, norm2_t / 2, state != ROW_SCREENED);
    if (lane != 0)
        return;
    p.state[row] = state;
    p.inv_scale[row] = quant.step;
    if (reference)
        p.norm2_t[row] = state == ROW_SCREENED ? norm2_t : kS8NeverNorm;
    else
        p.norm2[row] = state == ROW_SCREENED ? (float)norm2_t : NAN; // < 2^24: exact
    p.norm_up[row] = norm_upper(norm2, dim);
    p.resid_up[row] = norm_upper((float)resid2, dim); // norm_upper's margin covers the rounding to float
    if (!stats)
        return;
    if (state == ROW_OUT_OF_RANGE)
        atomicOr(&stats->out_of_range, 1);
    if (state == ROW_SCREENED) {
        atomicMax((int *)&stats->max_norm_up, __float_as_int(p.norm_up[row]));
        atomicMax((int *)&stats->max_resid_up, __float_as_int(p.resid_up[row]));
    }
}

} // namespace

size_t rows_prep_carve(rows_prep *p, unsigned char *base, size_t rows, size_t row_bytes)
{
    size_t off = 0;
    auto take = [&](size_t bytes) {
        unsigned char *at = base ? base + off : nullptr;
        off += round_up(bytes, 256);
        return at;
    };
    p->h = reinterpret_cast<__half *>(take(rows * row_bytes));
    p->norm2 = reinterpret_cast<float *>(take(rows * sizeof(float)));
    p->inv_scale = reinterpret_cast<float *>(take(rows * sizeof(float)));
    p->norm_up = reinterpret_cast<float *>(take(rows * sizeof(float)));
    p->resid_up = reinterpret_cast<float *>(take(rows * sizeof(float)));
    p->state = reinterpret_cast<int *>(take(rows * sizeof(int)));
    return off;
}

void launch_prep(const float *src, size_t rows, size_t padded_rows, size_t dim, size_t kdim, const float *sum,
                 float inv_count, prep_layout layout, const rows_prep &p, ref_stats *stats)
{
    const size_t blocks = (padded_rows * 32 + kThreads - 1) / kThreads;
    prep_kernel<<<(unsigned)blocks, kThreads>>>(src, rows, padded_rows, dim, kdim, sum, inv_count, layout, p, stats);
}

void launch_prep_s8(const float *src, size_t rows, size_t padded_rows, size_t dim, size_t kdim, const float *sum,
                    float inv_count, s8_quant quant, bool reference, const rows_prep &p, ref_stats *stats)
{
    const size_t blocks = (padded_rows * 32 + kThreads - 1) / kThreads;
    prep_s8_kernel<<<(unsigned)blocks, kThreads>>>(src, rows, padded_rows, dim, kdim, sum, inv_count, quant,
                                                   reference, p, stats);
}

int s8_limit(size_t dim)
{
    int limit = 127;
    while (limit > 1 && (double)dim * ((double)limit * limit + 2.0 * kQueryS8Limit * limit) >= 0x1p24)
        --limit;
    return limit;
}

int s8_fold_columns(size_t dim, int limit)
{
    const long long h_max = (long long)dim * limit * limit / 2;
    return (int)((h_max / 128 + 126) / 127) + 1;
}

void launch_column_sum(const float *ref, size_t n, size_t dim, float *sum)
{
    const dim3 grid((unsigned)((dim + 127) / 128), 256);
    column_sum_kernel<<<grid, 128>>>(ref, n, dim, sum);
}

void launch_centred_max(const float *ref, size_t n, size_t dim, const float *sum, float inv_count, int *max_bits)
{
    centred_max_kernel<<<1024, kThreads>>>(ref, n * dim, dim, sum, inv_count, max_bits);
}

} // namespace grip_screen
