// bruteforce_tensor.cu -- exact k-NN screened with tensor cores (see bruteforce_tensor.cuh).
//
// 1. prep: every row (reference rows once, at build; queries per search) is moved by the same centre c (the mean
//    of the reference rows' finite values, summed in any order: any c would do, as distances do not depend on it,
//    but a centre near the data keeps the norms, and so the error bound, small), scaled by a power of two that brings
//    its largest magnitude into [2^13, 2^14) and rounded to fp16 (zero-padded to a multiple of 32 dimensions),
//    with its squared norm, the norm of its rounding residual r - fp16(r)/scale (computed exactly) and upper
//    bounds of both. Non-finite rows get a NaN norm, so they are never screened in (nor returned, as on the CPU).
//    On a Hopper GPU the rows are instead quantized to int8 with one step for all (the reference rows' largest
//    centred magnitude over a limit near 127, prep_s8_kernel) and the reference rows stored in the wgmma kernel's
//    tiles (operand_index); with the options' fp16 precision, they are fp16 there too, all scaled by one power of two.
//    Rows of up to about 42 dimensions carry their norm folded into the int8 products. All of it in bruteforce_prep.cu.
// 2. screen: a block of 8 warps owns 128 queries, held in shared memory, and walks the reference rows in tiles of
//    128, streamed in chunks of 64 dimensions; mma.sync m16n8k16 products (fp16 in, fp32 accumulated) give q.r,
//    the screened distance is |q|^2 + |r|^2 - 2 q.r, and each query keeps its 32 smallest in a sorted list in
//    shared memory. No distance matrix reaches global memory, and a distance reaches the list only when it beats
//    the list's last entry, which after the first tiles is rare. On Hopper, cuda/index/sm90a/bruteforce_wgmma.cu
// screens
//    instead, its threads keeping their own lists (cuda/index/sm90a/bruteforce_thread_lists.cuh) of the screened
// distances
//    less |q|^2 (the rerank adds it back, in double).
// 3. rerank: one warp per query computes the exact distance of its candidates that may rank among the first k
//    with the CPU twin's arithmetic (dimension order, __fsub_rn/__fmul_rn/__fadd_rn) and ranks them by
//    (distance, row), the CPU's tie rule.
//    Every row not kept has screened distance >= T (cand_bound: the 32nd kept one, or on the wgmma kernel the
//    least of the 4 threads' last, 8th or 6th), hence exact distance >= L(T), a lower
//    bound from the screening's error:
//    - fp16: L(T) = T - B, where B bounds |screened - exact| for this query and any reference row (from the norms
//      and residual norms: fp16 input rounding, tensor-core accumulation, the norms' and the formula's float
//      rounding, and the CPU sum's own rounding; screening_bound);
//    - int8: the screened distance is |q^ - r^|^2 exactly (q^, r^ the quantized rows; integer products and norms),
//      so L(T) = (sqrt(T) - e_q - e_r)^2 less the float terms, e the residual norms (s8_bound).
//    The answer is certified when the k-th exact distance (or, with fewer than k valid, max_sqdist) is < L(T): no
//    row outside the list can then enter or tie into it. Otherwise the query goes to a list of failures,
// 4. which, after the wgmma kernel, are screened again with that k-th exact distance U as their bound
//    (bruteforce_rescreen.cu: every row whose screened lower bound is at most U is found and ranked exactly), and
//    otherwise (the mma.sync kernel; U infinite; too many such rows) searched again by the exact kernel
//    (bruteforce.cu).
#include "cuda/index/bruteforce_tensor.cuh"
#include "cuda/index/bruteforce.cuh"
#include "cuda/index/bruteforce_prep.cuh"
#include "cuda/index/bruteforce_rescreen.cuh"
#include "cuda/index/bruteforce_screen.cuh"
#include "cuda/index/bruteforce_wgmma.cuh"
#include "cuda/core/device.cuh"

#include <cuda_fp16.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

namespace {

using namespace grip_screen;

constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;

// The screened distance |q|^2 + |r|^2 - 2 q.r of a product (the scales are powers of two).
__device__ __forceinline__ float screened(float qn, float rn, float product, float qi, float ri)
{
    return qn + rn - 2.0f * (product * qi * ri);
}

// ---- the screening kernel: mma.sync m16n8k16 (fp16 in, fp32 accumulate), one block = 128 queries ----
//
// The block's queries stay in shared memory for the whole walk; the reference rows come through a ring of kStages
// chunks (128 rows x 64 dimensions each; a row's last chunk may be half) filled by cp.async, so the copies of chunk
// i + kStages - 1 overlap the products of chunk i. The 8 warps are 2 (queries) x 4 (rows): a warp owns 64 queries
// x 32 rows of each tile, 16 accumulators of m16n8 in registers. After a tile's last chunk every thread turns its
// 64 products into screened distances and compares each with its query's threshold (the 32nd best at the last
// merge); the rare ones below it go to the query's small buffer in shared memory. The buffers are merged into the
// sorted lists (each warp merging 16 queries' buffers) only when one was full, and the slots that found it full are
// offered again after the merge, so no candidate is ever lost.

constexpr int kChunk = 64;                         // dimensions per staged chunk (the last one of a row may be half)
constexpr int kStages = 4;                         // chunks in flight
constexpr int kChunkStride = kChunk * 2 + 16;      // bytes per staged row: 144, off the banks' period

__device__ __forceinline__ void cp_async16(unsigned dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned addr, unsigned (&r)[4])
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void mma_16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The block's shared memory: queries, the chunk ring, and per query its list, buffer and threshold.
struct screen_smem {
    unsigned char *queries; // kBlockQueries rows of kdim halves, stride kdim * 2 + 16 bytes
    unsigned char *ring;    // kStages x kTileRows rows of kChunkStride bytes
    candidate_lists lists;
};

__host__ __device__ inline size_t screen_smem_carve(screen_smem *s, unsigned char *base, size_t kdim)
{
    size_t off = 0;
    auto take = [&](size_t bytes) {
        unsigned char *at = base ? base + off : nullptr;
        off += round_up(bytes, 128);
        return at;
    };
    s->queries = take((size_t)kBlockQueries * (kdim * 2 + 16));
    s->ring = take((size_t)kStages * kTileRows * kChunkStride);
    lists_carve(&s->lists, take);
    return off;
}

// Where one chunk of the walk lies: the offset (in halves) of its first element in the rows, its first dimension,
// its ring slot. Kept by stepping, as a division per chunk would cost more than the chunk's products.
struct chunk_cursor {
    size_t at;
    int k0, slot;
    __device__ __forceinline__ void next(int kdim)
    {
        k0 += kChunk;
        at += kChunk;
        if (k0 >= kdim) { // on to the next tile's first chunk
            at += (size_t)kTileRows * (size_t)kdim - (size_t)k0;
            k0 = 0;
        }
        slot = slot + 1 == kStages ? 0 : slot + 1;
    }
};

// Issues the copy of the cursor's chunk into its ring slot, 16 bytes a copy, kLoadsPerThread copies a thread:
// thread i copies part i % 8 of rows i / 8 + j * kThreads / 8, unless the part lies past the row's end (kdim is a
// multiple of 32 only: the last chunk of a row may be half). src is the thread's first row and part.
constexpr int kPartsPerRow = kChunk * 2 / 16;
constexpr int kLoadsPerThread = kTileRows * kPartsPerRow / kThreads;

__device__ __forceinline__ void load_chunk(unsigned ring_dst, const __half *__restrict__ src, int kdim,
                                           const chunk_cursor &c)
{
    if (c.k0 + (int)(threadIdx.x % kPartsPerRow) * 8 >= kdim)
        return;
    const unsigned dst = ring_dst + (unsigned)(c.slot * kTileRows * kChunkStride);
#pragma unroll
    for (int j = 0; j < kLoadsPerThread; ++j)
        cp_async16(dst + (unsigned)(j * (kThreads / kPartsPerRow) * kChunkStride),
                   src + c.at + (size_t)j * (kThreads / kPartsPerRow) * (size_t)kdim);
}

// Per-thread view of a tile's products: slot (mi, ni, c) of the accumulators is query
// wq + mi * 16 + g + (c / 2) * 8 and row wr + ni * 8 + 2 t + c % 2 (g = lane / 4, t = lane % 4).
struct tile_view {
    float qn[8], qi[8]; // per query slot mi * 2 + c / 2
    float rn[8], ri[8]; // per row slot ni * 2 + c % 2
};

__device__ __forceinline__ float slot_distance(const tile_view &v, const float (&acc)[4][4][4], int mi, int ni, int c)
{
    return screened(v.qn[mi * 2 + c / 2], v.rn[ni * 2 + c % 2], acc[mi][ni][c], v.qi[mi * 2 + c / 2],
                    v.ri[ni * 2 + c % 2]);
}

// Offers slot (mi, ni, c) to its query's buffer when it beats the query's threshold; returns false when the
// buffer was full (the slot must be offered again after the merge).
__device__ __forceinline__ bool offer(const screen_smem &s, const tile_view &v, const float (&acc)[4][4][4],
                                      const float (&thr)[8], int mi, int ni, int c, int wq, int wr,
                                      size_t tile_row0)
{
    const int g = (threadIdx.x % 32) / 4, t = threadIdx.x % 4;
    const float d = slot_distance(v, acc, mi, ni, c);
    if (!(d < thr[mi * 2 + c / 2]))
        return true;
    const int q = wq + mi * 16 + g + (c / 2) * 8;
    return buffer_offer(s.lists, q, d, (uint32_t)(tile_row0 + wr + ni * 8 + 2 * t + c % 2));
}

// The tile's epilogue: every screened distance below its query's threshold goes to the query's buffer. Buffers
// are merged into the lists only when one was full, so most tiles end without a barrier beyond the vote; the
// thresholds then lag (they only ever fall), which lets a few more candidates in but never keeps one out.
__device__ __forceinline__ void select_tile(const screen_smem &s, const tile_view &v, const float (&acc)[4][4][4],
                                            float (&thr)[8], int wq, int wr, size_t tile_row0)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4;
    unsigned long long retry = 0; // slots whose buffer was full
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni)
#pragma unroll
            for (int c = 0; c < 4; ++c)
                if (!offer(s, v, acc, thr, mi, ni, c, wq, wr, tile_row0))
                    retry |= 1ull << (mi * 16 + ni * 4 + c);
    while (__syncthreads_or(retry != 0)) {
        merge_buffers(s.lists, warp, lane);
        __syncthreads();
#pragma unroll
        for (int i = 0; i < 8; ++i)
            thr[i] = s.lists.threshold[wq + (i / 2) * 16 + g + (i % 2) * 8];
        if (retry)
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 4; ++ni)
#pragma unroll
                    for (int c = 0; c < 4; ++c) {
                        const unsigned long long bit = 1ull << (mi * 16 + ni * 4 + c);
                        if ((retry & bit) && offer(s, v, acc, thr, mi, ni, c, wq, wr, tile_row0))
                            retry &= ~bit;
                    }
    }
}

__global__ void __launch_bounds__(kThreads, 1)
    screen_kernel(rows_prep q, rows_prep r, size_t n_padded, int kdim, uint32_t *__restrict__ cand_id,
                  float *__restrict__ cand_d, float *__restrict__ cand_bound)
{
    extern __shared__ __align__(128) unsigned char smem[];
    screen_smem s;
    screen_smem_carve(&s, smem, kdim);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int wq = (warp / 4) * 64, wr = (warp % 4) * 32; // the warp's queries and rows within the tile
    const size_t qb = (size_t)blockIdx.x * kBlockQueries;
    const unsigned q_stride = (unsigned)kdim * 2 + 16;
    const size_t total = n_padded / kTileRows * (size_t)((kdim + kChunk - 1) / kChunk); // chunks in the walk

    lists_init(s.lists, q.norm2 + qb);
    const int q_units = kdim / 8;
    for (int u = threadIdx.x; u < kBlockQueries * q_units; u += kThreads) {
        const int row = u / q_units, part = u % q_units;
        cp_async16(smem_addr(s.queries + row * q_stride + part * 16), q.h + (qb + row) * (size_t)kdim + part * 8);
    }
    chunk_cursor loading = {0, 0, 0}, computing = {0, 0, 0};
    const int my_row = threadIdx.x / kPartsPerRow, my_part = threadIdx.x % kPartsPerRow; // of each chunk copied
    const unsigned ring_dst = smem_addr(s.ring) + (unsigned)(my_row * kChunkStride + my_part * 16);
    const __half *ring_src = r.h + (size_t)my_row * (size_t)kdim + my_part * 8;
#pragma unroll
    for (int i = 0; i < kStages - 1; ++i) {
        if ((size_t)i < total) {
            load_chunk(ring_dst, ring_src, kdim, loading);
            loading.next(kdim);
        }
        cp_async_commit();
    }

    tile_view v;
    float thr[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const size_t row = qb + wq + (i / 2) * 16 + g + (i % 2) * 8;
        v.qn[i] = q.norm2[row];
        v.qi[i] = q.inv_scale[row];
        thr[i] = INFINITY;
    }
    float next_rn[8], next_ri[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const size_t row = wr + (i / 2) * 8 + 2 * t + i % 2;
        next_rn[i] = r.norm2[row];
        next_ri[i] = r.inv_scale[row];
    }
    float acc[4][4][4] = {};
    // ldmatrix lanes: A row lane % 16, dimension (lane / 16) * 8;
    // B row (lane / 16) * 8 + lane % 8, dimension (lane / 8) % 2 * 8
    const unsigned a_base = smem_addr(s.queries) + (unsigned)(wq + lane % 16) * q_stride + (lane / 16) * 16;
    const unsigned b_off = (unsigned)((wr + (lane / 16) * 8 + lane % 8) * kChunkStride + ((lane / 8) % 2) * 16);

    size_t tile_row0 = 0;
    for (size_t it = 0; it < total; ++it) {
        cp_async_wait<kStages - 2>();
        __syncthreads(); // chunk `it` has arrived for all, and every thread is done with the slot refilled next
        if (it + kStages - 1 < total) {
            load_chunk(ring_dst, ring_src, kdim, loading);
            loading.next(kdim);
        }
        cp_async_commit();
        const unsigned slot = smem_addr(s.ring + computing.slot * (kTileRows * kChunkStride)) + b_off;
#pragma unroll
        for (int kk = 0; kk < kChunk / 16; ++kk) {
            if (kk == kChunk / 32 && computing.k0 + kChunk / 2 >= kdim)
                break; // a half chunk: the row ends here
            unsigned a[4][4], b[2][4];
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
                ldmatrix_x4(a_base + mi * 16 * q_stride + (unsigned)(computing.k0 + kk * 16) * 2, a[mi]);
#pragma unroll
            for (int nj = 0; nj < 2; ++nj)
                ldmatrix_x4(slot + (unsigned)(nj * 16 * kChunkStride + kk * 32), b[nj]);
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 4; ++ni)
                    mma_16816(acc[mi][ni], a[mi], b[ni / 2][(ni % 2) * 2], b[ni / 2][(ni % 2) * 2 + 1]);
        }
        const bool tile_done = computing.k0 + kChunk >= kdim;
        computing.next(kdim);
        if (!tile_done)
            continue;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            v.rn[i] = next_rn[i];
            v.ri[i] = next_ri[i];
        }
        if (tile_row0 + kTileRows < n_padded) // the next tile's norms load while this one is selected
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const size_t row = tile_row0 + kTileRows + wr + (i / 2) * 8 + 2 * t + i % 2;
                next_rn[i] = r.norm2[row];
                next_ri[i] = r.inv_scale[row];
            }
        select_tile(s, v, acc, thr, wq, wr, tile_row0);
#pragma unroll
        for (int mi = 0; mi < 4; ++mi)
#pragma unroll
            for (int ni = 0; ni < 4; ++ni)
#pragma unroll
                for (int c = 0; c < 4; ++c)
                    acc[mi][ni][c] = 0.0f;
        tile_row0 += kTileRows;
    }
    cp_async_wait<0>();
    __syncthreads();
    merge_buffers(s.lists, warp, lane); // what the last tiles left in the buffers
    __syncwarp();
    lists_store(s.lists, warp, lane, qb, cand_id, cand_d, cand_bound);
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

// How the candidate lists' values read: the screened distance is (x + |q|^2 when shifted) * step2 (step2 = 1
// but for int8, whose lists hold integers); s8: the int8 certificate (s8_bound). rescreen: the queries the lists
// cannot certify are screened again (the wgmma kernel's lists only, cuda/index/bruteforce_rescreen.cuh); rescreen_all
// (the options' field, for tests): all of them are.
struct list_units {
    bool shifted, s8, rescreen, rescreen_all;
    double step2;
};

// int8 screening: a lower bound of the exact float distance of the query against any row whose screened distance
// is at least s. The screened distance is |q^ - r^|^2 exactly (integer products and norms), and
// | |q^ - r^| - |q - r| | <= |q - q^| + |r - r^| <= e, the residual norms (plus 2^-23 (a + b) for the centring's
// float rounding, as in screening_bound); then the CPU's own sum, as there: X = (dim + 8) 2^-23 (a + b)^2, 2%
// more. The square roots and products carry relative margins of 1e-12 for double rounding.
struct s8_bound {
    double e, x;
    __device__ __forceinline__ s8_bound(double a, double ea, double b, double eb, double dim)
        : e((ea + eb + 0x1p-23 * (a + b)) * (1.0 + 1e-6)), x(1.02 * (dim + 8.0) * 0x1p-23 * (a + b) * (a + b) + 1e-30)
    {
    }
    __device__ __forceinline__ double lower(double s) const
    {
        const double root = sqrt(fmax(s, 0.0)) * (1.0 - 1e-12) - e;
        return root > 0.0 ? root * root * (1.0 - 1e-12) - x : -INFINITY;
    }
    // At least the largest s with lower(s) <= u (lower increases with s): the rows screened above it are exactly
    // above u. The margins as lower's, the other way.
    __device__ __forceinline__ double largest_at_most(double u) const
    {
        const double root = (sqrt(fmax(u + x, 0.0) / (1.0 - 1e-12)) + e) / (1.0 - 1e-12);
        return root * root * (1.0 + 1e-9);
    }
};

// The re-screen's limit for a query whose k-th exact distance (or max_sqdist) is u: a float above the list value
// x (kernel units: screened distance / step2 - shift) of every row whose exact distance may be at most u, with a
// relative margin of 1e-6 over the double arithmetic (a row too many costs one exact distance). +inf when u is.
__device__ __forceinline__ float rescreen_limit(const list_units &units, const s8_bound &b8, double bound,
                                                double shift, float u)
{
    if (!(u < INFINITY))
        return INFINITY;
    const double screened = (units.s8 ? b8.largest_at_most(u) : (double)u + bound) / units.step2;
    const double x = screened - shift, margin = 1e-6 * (fabs(screened) + fabs(shift)) + 1e-30;
    const float f = (float)(x + margin);
    return (double)f > x ? f : nextafterf(f, INFINITY);
}

// Where the rerank sends the queries it cannot certify: those it can re-screen to retry (with their limits), the
// others to failed (the exact kernel's); counts[0] and counts[1] count them.
struct screen_outcome {
    uint32_t *failed, *retry, *counts;
    float *retry_limit;
};

__global__ void __launch_bounds__(kThreads)
    rerank_kernel(const float *__restrict__ ref, size_t n, const float *__restrict__ queries, size_t m, size_t dim,
                  int k, float max_sqdist, const uint32_t *__restrict__ cand_id, const float *__restrict__ cand_d,
                  const float *__restrict__ cand_bound, list_units units, rows_prep q,
                  const ref_stats *__restrict__ stats, uint32_t *__restrict__ ids, float *__restrict__ sqdist,
                  screen_outcome out)
{
    const size_t qi = (size_t)blockIdx.x * kWarps + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (qi >= m)
        return; // the whole warp
    const uint32_t id = cand_id[qi * kList + (size_t)lane];
    const float last = cand_bound[qi]; // every row outside the list is screened at least this
    const double shift = units.shifted ? (double)q.norm2[qi] : 0.0;
    const double mine = ((double)cand_d[qi * kList + (size_t)lane] + shift) * units.step2;
    const double bound = screening_bound(q.norm_up[qi], q.resid_up[qi], stats->max_norm_up, stats->max_resid_up,
                                         (double)dim) * (1.0 + 1e-6);
    const s8_bound b8(q.norm_up[qi], q.resid_up[qi], stats->max_norm_up, stats->max_resid_up, (double)dim);
    // Only rows that may rank among the first k need their exact distance. First the k best screened: the largest
    // of their exact distances, U, is at least the k-th exact distance (or U = max_sqdist when they are not all
    // valid). Then the others whose exact distance may be at most U: screened lower bound <= U. A row left out is
    // exactly above U, so it neither ranks nor ties among the first k, nor is valid when U = max_sqdist.
    const bool listed = id < n; // not the padding of a short list, nor (folded norms) a padding row
    float e = INFINITY;
    if (listed && lane < k)
        e = exact_distance(queries + qi * dim, ref + (size_t)id * dim, dim);
    const bool first_valid = lane >= k || (listed && e < INFINITY && e <= max_sqdist);
    float upper = max_sqdist;
    if (__all_sync(kFullMask, first_valid)) {
        float first_max = lane < k ? e : -INFINITY;
        for (int o = 16; o > 0; o >>= 1)
            first_max = fmaxf(first_max, __shfl_xor_sync(kFullMask, first_max, o));
        upper = first_max;
    }
    if (listed && lane >= k && (units.s8 ? b8.lower(mine) : mine - bound) <= (double)upper)
        e = exact_distance(queries + qi * dim, ref + (size_t)id * dim, dim);
    // the exact kernel lists a row when its distance is < +inf and <= max_sqdist (NaN never)
    const bool valid = listed && e < INFINITY && e <= max_sqdist;
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
        const double outside = ((double)last + shift) * units.step2; // every row outside is screened at least this
        certified = (units.s8 ? b8.lower(outside) : outside - bound) > (double)threshold;
    }
    if (!certified || units.rescreen_all) {
        if (lane == 0) {
            const float limit = units.rescreen && q.state[qi] == ROW_SCREENED
                                    ? rescreen_limit(units, b8, bound, shift, threshold)
                                    : INFINITY;
            if (limit < INFINITY) {
                const uint32_t at = atomicAdd(&out.counts[1], 1u);
                out.retry[at] = (uint32_t)qi;
                out.retry_limit[at] = limit;
            } else {
                out.failed[atomicAdd(&out.counts[0], 1u)] = (uint32_t)qi;
            }
        }
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

// Shared memory of screen_kernel (screen_smem).
size_t screen_smem_bytes(size_t kdim)
{
    screen_smem s;
    return screen_smem_carve(&s, nullptr, kdim);
}

// How the rows are screened: their padded dimension (elements a row), the wgmma kernel's k-steps (0: the mma.sync
// kernel screens), whether in int8 (the wgmma kernel only), and the columns of the folded norm (0: not folded).
struct screen_shape {
    size_t kdim;
    int wgmma_steps;
    bool s8;
    int fold;
    size_t row_bytes() const { return kdim * (s8 ? 1 : 2); }
    grip_wgmma_operands operands() const
    {
        return !s8 ? GRIP_WGMMA_FP16 : fold > 0 ? GRIP_WGMMA_S8_FOLDED : GRIP_WGMMA_S8;
    }
};

} // namespace

struct grip_bruteforce_screen {
    void *mem; // one allocation: the rows' data, the stats, the column sums
    rows_prep rows;
    ref_stats *stats;
    float *sum;      // the centre is sum * inv_count
    float inv_count; // 1 / n
    size_t n, n_padded, dim;
    screen_shape shape;
    float ref_inv_scale; // the Hopper kernel's one scale of the reference rows (inverted), fp16
    s8_quant quant;      // its int8 quantization of the reference rows
    grip_bruteforce_cuda_options options; // the build's, for the searches
};

void grip_bruteforce_screen_free(grip_bruteforce_screen *screen)
{
    if (!screen)
        return;
    grip_cuda_free(screen->mem);
    free(screen);
}

// How rows of dim dimensions are screened on the current device: the Hopper kernel where it runs, unless the
// options ask for the mma.sync kernel, in the options' precision (bruteforce_tensor.cuh); in int8 with the norm folded
// into the products where the padding columns hold it and the kernel is short (GRIP_WGMMA_FOLD_MAX_STEPS).
static screen_shape screen_shape_of(size_t dim, const grip_bruteforce_cuda_options &options)
{
    screen_shape shape = {round_up(dim, 32), 0, false, 0};
    if (options.kernel == GRIP_BRUTEFORCE_CUDA_KERNEL_MMA_SYNC || !grip_bruteforce_wgmma_usable())
        return shape;
    const bool s8 = options.precision == GRIP_BRUTEFORCE_CUDA_INT8;
    const int steps = grip_bruteforce_wgmma_ksteps(dim, s8);
    if (steps == 0)
        return shape;
    shape = {(size_t)steps * (s8 ? 32 : 16), steps, s8, 0};
    const int fold = s8_fold_columns(dim, s8_limit(dim));
    if (s8 && steps <= GRIP_WGMMA_FOLD_MAX_STEPS && shape.kdim - dim >= (size_t)fold)
        shape.fold = fold;
    return shape;
}

static bool screened_dim(size_t dim)
{
    return dim >= GRIP_BRUTEFORCE_SCREEN_MIN_DIM && dim <= GRIP_BRUTEFORCE_SCREEN_MAX_DIM;
}

// Whether the current device gives a block the shared memory the screening kernel of this shape needs: the
// mma.sync kernel's grows with the row (screen_smem_bytes: 124 KiB and 128 rows of the query), within Hopper's
// 227 KiB at every screened dimension, but beyond the A100's 163 KiB from 161 dimensions (SHOT's among them) and
// beyond the 99 KiB of sm_86 and sm_89 GPUs at any. Rows it does not fit are not screened: the exact kernel
// searches them (same results, more time).
static bool screen_fits_device(const screen_shape &shape)
{
    if (shape.wgmma_steps > 0)
        return true; // the wgmma kernel runs on Hopper only, and checks its own at launch
    int device = 0, optin = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
        (void)cudaGetLastError(); // no answer: not screened, and no error left for the caller's next check
        return false;
    }
    return screen_smem_bytes(shape.kdim) <= (size_t)optin;
}

// screen_build_on's allocation: the rows' data, 256 bytes of stats, the column sums.
static size_t screen_alloc_bytes(size_t n_padded, size_t row_bytes, size_t dim)
{
    rows_prep p;
    return rows_prep_carve(&p, nullptr, n_padded, row_bytes) + 256 + dim * sizeof(float);
}

size_t grip_bruteforce_screen_bytes(size_t n, size_t dim, const grip_bruteforce_cuda_options &options)
{
    if (n == 0 || !screened_dim(dim))
        return 0;
    const screen_shape shape = screen_shape_of(dim, options);
    if (!screen_fits_device(shape))
        return 0;
    return screen_alloc_bytes(round_up(n, kTileRows), shape.row_bytes(), dim);
}

// The largest magnitude of the reference rows' centred finite values: the wgmma layouts' common scale.
static grip_status centred_max(grip_ctx *ctx, const grip_bruteforce_screen *s, const float *ref, float *max_abs)
{
    int *max_bits = &s->stats->max_abs_bits;
    launch_centred_max(ref, s->n, s->dim, s->sum, s->inv_count, max_bits);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    int bits = 0;
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, &bits, max_bits, sizeof bits, cudaMemcpyDeviceToHost));
    memcpy(max_abs, &bits, sizeof *max_abs);
    return GRIP_OK;
}

// The wgmma kernel's scale: every reference row scaled by one power of two (fp16), or quantized with one step
// (int8). *usable is false when the rows' magnitude is outside [2^-40, 2^40], as prep_kernel's per-row range.
static grip_status wgmma_prep(grip_ctx *ctx, grip_bruteforce_screen *s, const float *ref, bool *usable)
{
    float max_abs = 0.0f;
    grip_status st = centred_max(ctx, s, ref, &max_abs);
    if (st != GRIP_OK)
        return st;
    int e = 0;
    if (max_abs > 0.0f)
        (void)frexpf(max_abs, &e);
    *usable = e <= kScaleExponentLimit && e >= -kScaleExponentLimit;
    if (!*usable)
        return GRIP_OK;
    if (!s->shape.s8) {
        s->ref_inv_scale = ldexpf(1.0f, e - 14);
        launch_prep(ref, s->n, s->n_padded, s->dim, s->shape.kdim, s->sum, s->inv_count, {true, e, true}, s->rows,
                    s->stats);
        return GRIP_OK;
    }
    const int limit = s8_limit(s->dim);
    const float step = max_abs > 0.0f ? max_abs / (float)limit : 1.0f;
    s->quant = {step, 1.0f / step, limit, s->shape.fold};
    launch_prep_s8(ref, s->n, s->n_padded, s->dim, s->shape.kdim, s->sum, s->inv_count, s->quant, true, s->rows,
                   s->stats);
    return GRIP_OK;
}

static grip_status screen_build_on(grip_ctx *ctx, grip_bruteforce_screen *s, const float *ref, bool *usable)
{
    const size_t row_bytes = s->shape.row_bytes();
    const size_t bytes = rows_prep_carve(&s->rows, nullptr, s->n_padded, row_bytes);
    grip_status st_mem = grip_cuda_alloc(ctx, screen_alloc_bytes(s->n_padded, row_bytes, s->dim), &s->mem);
    if (st_mem != GRIP_OK)
        return st_mem;
    rows_prep_carve(&s->rows, (unsigned char *)s->mem, s->n_padded, row_bytes);
    s->stats = reinterpret_cast<ref_stats *>((unsigned char *)s->mem + bytes);
    s->sum = reinterpret_cast<float *>((unsigned char *)s->mem + bytes + 256);
    s->inv_count = 1.0f / (float)s->n;
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemset(s->stats, 0, 256 + s->dim * sizeof(float)));
    launch_column_sum(ref, s->n, s->dim, s->sum);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    *usable = true;
    if (s->shape.wgmma_steps > 0) {
        grip_status st = wgmma_prep(ctx, s, ref, usable);
        if (st != GRIP_OK || !*usable)
            return st;
    } else {
        launch_prep(ref, s->n, s->n_padded, s->dim, s->shape.kdim, s->sum, s->inv_count, kPerRowScale, s->rows,
                    s->stats);
    }
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    ref_stats host;
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, &host, s->stats, sizeof host, cudaMemcpyDeviceToHost));
    *usable = !host.out_of_range;
    return GRIP_OK;
}

grip_status grip_bruteforce_screen_build(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                  const grip_bruteforce_cuda_options &options, grip_bruteforce_screen **out)
{
    *out = NULL;
    if (!screened_dim(dim) || n == 0 || !screen_fits_device(screen_shape_of(dim, options)))
        return GRIP_OK;
    grip_bruteforce_screen *s = (grip_bruteforce_screen *)calloc(1, sizeof *s);
    if (!s)
        return grip_fail(ctx, GRIP_ENOMEM, "knn (cuda): out of host memory");
    s->n = n;
    s->n_padded = round_up(n, kTileRows);
    s->dim = dim;
    s->options = options;
    s->shape = screen_shape_of(dim, options);
    bool usable = false;
    grip_status st = screen_build_on(ctx, s, ref, &usable);
    if (st == GRIP_OK && usable)
        *out = s;
    else
        grip_bruteforce_screen_free(s);
    if (st != GRIP_OK)
        grip_fail_append(ctx, "knn (cuda): preparing the tensor-core screening of %zu rows of %zu dims", n, dim);
    return st;
}

// Device scratch of one screened search: the queries' rows data, candidates, failures; then the failed queries'
// rows and answers for the exact kernel.
struct screen_scratch {
    void *mem;
    rows_prep q;
    uint32_t *cand_id;
    float *cand_d;
    float *cand_bound; // per query: every row outside its list is screened at least this
    screen_outcome out;
    void *sub; // the exact kernel's inputs and outputs for the failed queries
};

// Carves a search's scratch (screen_scratch) out of one allocation: the queries' data, candidate ids, values and
// bounds, the two counts (256 bytes), the failed and retried queries and the retried ones' limits. Returns its size
// when base is NULL.
static size_t scratch_carve(screen_scratch *w, unsigned char *base, size_t m_padded, size_t row_bytes)
{
    size_t off = rows_prep_carve(&w->q, base, m_padded, row_bytes);
    auto take = [&](size_t bytes) {
        unsigned char *at = base ? base + off : nullptr;
        off += round_up(bytes, 256);
        return at;
    };
    w->cand_id = (uint32_t *)take(m_padded * kList * sizeof(uint32_t));
    w->cand_d = (float *)take(m_padded * kList * sizeof(float));
    w->cand_bound = (float *)take(m_padded * sizeof(float));
    w->out.counts = (uint32_t *)take(2 * sizeof(uint32_t));
    w->out.failed = (uint32_t *)take(m_padded * sizeof(uint32_t));
    w->out.retry = (uint32_t *)take(m_padded * sizeof(uint32_t));
    w->out.retry_limit = (float *)take(m_padded * sizeof(float));
    return off;
}

// search_failed's allocation for `count` failed queries: their rows, ids and distances.
static size_t failed_bytes(size_t count, size_t dim, uint32_t k)
{
    return round_up(count * dim * sizeof(float), 256) + round_up(count * k * sizeof(uint32_t), 256) +
           count * k * sizeof(float);
}

size_t grip_bruteforce_screen_search_bytes(size_t m, size_t dim, uint32_t k,
                                           const grip_bruteforce_cuda_options &options)
{
    if (m == 0 || k > GRIP_BRUTEFORCE_SCREEN_MAX_K || !screened_dim(dim))
        return 0;
    const screen_shape shape = screen_shape_of(dim, options);
    if (!screen_fits_device(shape))
        return 0;
    screen_scratch w;
    const size_t scratch = scratch_carve(&w, nullptr, round_up(m, kBlockQueries), shape.row_bytes());
    // all three from the pool: the re-screen's block, once freed, stays the pool's, and the exact kernel's may not
    // fit in it
    const size_t rescreen =
        shape.wgmma_steps > 0 ? grip_bruteforce_rescreen_bytes(m, shape.row_bytes(), options.rescreen_capacity) : 0;
    return scratch + rescreen + failed_bytes(m, dim, k);
}

// From the context's stream-ordered pool (cuda/core/device.cu), on the default stream the kernels run on: a search
// allocates and frees its scratch each call, and cudaMalloc / cudaFree cost driver round trips (cudaFree waits for
// the device), about half a millisecond a search of 1e5 queries.
static grip_status scratch_alloc(grip_ctx *ctx, screen_scratch *w, size_t m_padded, size_t row_bytes)
{
    grip_status st = grip_cuda_alloc(ctx, scratch_carve(w, nullptr, m_padded, row_bytes), &w->mem);
    if (st != GRIP_OK)
        return st;
    scratch_carve(w, (unsigned char *)w->mem, m_padded, row_bytes);
    return GRIP_OK;
}

// The exact kernel on the failed queries, its answers scattered back.
static grip_status search_failed(grip_ctx *ctx, screen_scratch *w, const float *ref, size_t n, const float *queries,
                                 size_t dim, uint32_t count, uint32_t k, float max_sqdist, uint32_t *ids,
                                 float *sqdist)
{
    const size_t rows_bytes = round_up((size_t)count * dim * sizeof(float), 256);
    const size_t ids_bytes = round_up((size_t)count * k * sizeof(uint32_t), 256);
    grip_status st_sub = grip_cuda_alloc(ctx, failed_bytes(count, dim, k), &w->sub);
    if (st_sub != GRIP_OK)
        return st_sub;
    float *sub_q = (float *)w->sub;
    uint32_t *sub_ids = (uint32_t *)((unsigned char *)w->sub + rows_bytes);
    float *sub_d = (float *)((unsigned char *)w->sub + rows_bytes + ids_bytes);
    gather_kernel<<<(unsigned)(((size_t)count * 32 + kThreads - 1) / kThreads), kThreads>>>(queries, dim,
                                                                                            w->out.failed, count,
                                                                                            sub_q);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    grip_status st = grip_bruteforce_cuda_launch(ctx, ref, n, sub_q, count, dim, k, max_sqdist, sub_ids, sub_d);
    if (st != GRIP_OK)
        return st;
    const size_t cells = (size_t)count * k;
    scatter_kernel<<<(unsigned)((cells + kThreads - 1) / kThreads), kThreads>>>(w->out.failed, count, (int)k, sub_ids,
                                                                               sub_d, ids, sqdist);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

static grip_status screen_search_with(grip_ctx *ctx, const grip_bruteforce_screen *s, screen_scratch *w,
                                      const float *ref, const float *queries, size_t m, uint32_t k, float max_sqdist,
                                      uint32_t *ids, float *sqdist)
{
    const size_t m_padded = round_up(m, kBlockQueries);
    const screen_shape &shape = s->shape;
    grip_status st = scratch_alloc(ctx, w, m_padded, shape.row_bytes());
    if (st != GRIP_OK)
        return st;
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(w->out.counts, 0, 2 * sizeof(uint32_t), 0));
    if (shape.s8) {
        const s8_quant quant = {s->quant.step, s->quant.inv_step, kQueryS8Limit, shape.fold};
        launch_prep_s8(queries, m, m_padded, s->dim, shape.kdim, s->sum, s->inv_count, quant, false, w->q, nullptr);
    } else {
        launch_prep(queries, m, m_padded, s->dim, shape.kdim, s->sum, s->inv_count, kPerRowScale, w->q, nullptr);
    }
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    if (shape.wgmma_steps > 0) { // its lists hold the screened distances less |q|^2
        GRIP_CUDA_CHECK_LAUNCH(ctx, grip_bruteforce_wgmma_screen(w->q, s->rows, m_padded, s->n_padded,
                                                                 shape.wgmma_steps, shape.operands(), s->ref_inv_scale,
                                                                 w->cand_id, w->cand_d, w->cand_bound));
    } else {
        const size_t smem = screen_smem_bytes(shape.kdim);
        GRIP_CUDA_CHECK(ctx,
                        cudaFuncSetAttribute(screen_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        screen_kernel<<<(unsigned)(m_padded / kBlockQueries), kThreads, smem>>>(w->q, s->rows, s->n_padded,
                                                                               (int)shape.kdim, w->cand_id, w->cand_d,
                                                                               w->cand_bound);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
    }
    const double step = shape.s8 ? (double)s->quant.step : 1.0;
    const bool wgmma = shape.wgmma_steps > 0;
    const list_units units = {wgmma, shape.s8, wgmma, wgmma && s->options.rescreen_all != 0,
                              step * step}; // step^2: exact
    rerank_kernel<<<(unsigned)((m + kWarps - 1) / kWarps), kThreads>>>(ref, s->n, queries, m, s->dim, (int)k,
                                                                       max_sqdist, w->cand_id, w->cand_d, w->cand_bound,
                                                                       units, w->q, s->stats, ids, sqdist, w->out);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    uint32_t counts[2] = {0, 0}; // failed, retried
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, counts, w->out.counts, sizeof counts, cudaMemcpyDeviceToHost));
    if (counts[1] > 0) {
        const grip_bruteforce_rescreen_rows rows = {
            &w->q,           &s->rows, s->n, s->n_padded, shape.row_bytes(), shape.wgmma_steps, shape.operands(),
            s->ref_inv_scale};
        const grip_bruteforce_retry retry = {w->out.retry, w->out.retry_limit, counts[1]};
        st = grip_bruteforce_rescreen(ctx, rows, ref, queries, s->dim, retry, s->options.rescreen_capacity, k,
                                      max_sqdist, ids, sqdist, w->out.failed, &w->out.counts[0]);
        if (st != GRIP_OK)
            return st;
        GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, counts, w->out.counts, sizeof(uint32_t), cudaMemcpyDeviceToHost));
    }
    if (counts[0] == 0)
        return GRIP_OK;
    return search_failed(ctx, w, ref, s->n, queries, s->dim, counts[0], k, max_sqdist, ids, sqdist);
}

grip_status grip_bruteforce_screen_search(grip_ctx *ctx, const grip_bruteforce_screen *screen, const float *ref,
                                   const float *queries, size_t m, uint32_t k, float max_sqdist, uint32_t *ids,
                                   float *sqdist)
{
    if (m / kBlockQueries + 1 > (size_t)INT_MAX)
        return grip_fail(ctx, GRIP_EUNSUPPORTED, "knn (cuda): %zu queries exceed one launch", m);
    screen_scratch w = {};
    grip_status st = screen_search_with(ctx, screen, &w, ref, queries, m, k, max_sqdist, ids, sqdist);
    grip_cuda_free(w.sub);
    grip_cuda_free(w.mem);
    if (st != GRIP_OK)
        grip_fail_append(ctx, "knn (cuda): screened search of %zu queries, k = %u", m, k);
    return st;
}
