// knn_wgmma.cu -- the Hopper screening kernel (see cuda/knn_wgmma.cuh), built for sm_90a only (CMakeLists.txt:
// grip_sm90a_objects). The mma.sync kernel of cuda/knn_tensor.cu reloads every operand from shared memory for each
// warp's 64 x 32 product; wgmma multiplies 64 x 128 per warpgroup instruction, A from registers, B straight from
// shared memory (1.4x faster at D = 352, README's results; still about 3x off the fp16 peak: the selection and the
// reference rows' L2 traffic, 128 queries' worth per byte, are the suspects; taking turns between the warpgroups
// and deeper wgmma queues were tried and did not help).
//
// A block is two warpgroups (8 warps) and 128 queries; warpgroup w owns queries 64 w .. 64 w + 63, and their fp16
// rows stay in its registers for the whole walk (k-steps x 4 words a thread). The reference rows come in tiles of
// 128 rows, each as chunks of up to 64 dimensions that the prep stored in wgmma's operand layout
// (knn_tensor.cu's fp16_index), so one bulk copy (cp.async.bulk) moves a chunk into a ring of kStagesW stages with
// an mbarrier per stage. The warps release a stage after their wgmmas that read it have completed; the eighth
// release refills it, so neither warpgroup waits for the other except through the data.
//
// After a tile's products, each thread holds 2 queries x 32 rows: x = |r|^2 + (-2 / (s_q s_r)) p, the screened
// distance less |q|^2, with one fused multiply-add. A row whose x beats its query's threshold goes to the query's
// buffer, and a warp holds all 128 rows of its 16 queries, so buffers, merges and thresholds (cuda/knn_screen.cuh)
// are the warp's alone: no block barrier after the start.
#include "cuda/knn_wgmma.cuh"

#include <math.h>

namespace {

using namespace grip_screen;

constexpr int kWarpsW = 8;                                  // two warpgroups
constexpr int kThreadsW = 32 * kWarpsW;
constexpr int kStagesW = 10;                                // chunks in the ring (the block's 217 KB then)
constexpr int kStageBytes = kTileRows * kWgmmaChunkDims * 2; // 16 KB: 128 rows x 64 halves
constexpr int kCompiledSteps[] = {2, 3, 4, 6, 8, 10, 12, 16, 20, 22, 23}; // rows padded up to these x 16 dims

// The block's shared memory: the ring, its barriers and release counts, the candidate lists.
struct wgmma_smem {
    unsigned char *stages; // kStagesW x kStageBytes
    uint64_t *full;        // kStagesW mbarriers: the stage's chunk has arrived
    unsigned *released;    // kStagesW: warps done with the stage, counted over its fills
    candidate_lists lists;
};

__host__ __device__ inline size_t wgmma_smem_carve(wgmma_smem *s, unsigned char *base)
{
    size_t off = 0;
    auto take = [&](size_t bytes) {
        unsigned char *at = base ? base + off : nullptr;
        off += (bytes + 1023) / 1024 * 1024;
        return at;
    };
    s->stages = take((size_t)kStagesW * kStageBytes);
    s->full = (uint64_t *)take(kStagesW * sizeof(uint64_t));
    s->released = (unsigned *)take(kStagesW * sizeof(unsigned));
    lists_carve(&s->lists, take);
    return off;
}

// The chunks of a tile: 4 k-steps each, the last one KSTEPS - 4 (kChunks - 1).
template <int KSTEPS> struct tile_walk {
    static constexpr int kChunks = (KSTEPS + 3) / 4;
    __host__ __device__ static constexpr int steps(int chunk)
    {
        return chunk == kChunks - 1 ? KSTEPS - 4 * (kChunks - 1) : 4;
    }
};

__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity)
{
    asm volatile("{\n.reg .pred done;\nWAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT;\n}\n" ::"r"(smem_addr(bar)),
                 "r"(parity)
                 : "memory");
}

// Copies chunk c of the walk (tile c / kChunks, chunk c % kChunks) into its stage; one thread.
template <int KSTEPS> __device__ __forceinline__ void issue_chunk(const wgmma_smem &s, const __half *ref_h, size_t c)
{
    using walk = tile_walk<KSTEPS>;
    const int stage = (int)(c % kStagesW), chunk = (int)(c % walk::kChunks);
    const size_t tile = c / walk::kChunks;
    const unsigned bytes = (unsigned)(kTileRows * walk::steps(chunk) * 16 * 2);
    const __half *src = ref_h + tile * kTileRows * (size_t)(KSTEPS * 16) + (size_t)chunk * kTileRows * kWgmmaChunkDims;
    const unsigned bar = smem_addr(&s.full[stage]);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     smem_addr(s.stages + stage * kStageBytes)),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

// The warp is done with chunk c (its wgmmas that read it have completed); the last of the 8 warps refills the
// stage with chunk c + kStagesW. The fences make the other warps' completed reads happen before the refill.
template <int KSTEPS>
__device__ __forceinline__ void release_chunk(const wgmma_smem &s, const __half *ref_h, size_t c, size_t total,
                                             int lane)
{
    if (lane != 0)
        return;
    const int stage = (int)(c % kStagesW);
    __threadfence_block();
    const unsigned before = atomicAdd(&s.released[stage], 1u);
    if (before % kWarpsW == kWarpsW - 1 && c + kStagesW < total) {
        __threadfence_block();
        issue_chunk<KSTEPS>(s, ref_h, c + kStagesW);
    }
}

// A shared-memory matrix descriptor for wgmma, no swizzle: core matrices 128 bytes apart along K (the leading
// byte offset) and `sbo` bytes apart along N (the stride byte offset).
__device__ __forceinline__ uint64_t smem_desc(unsigned addr, unsigned sbo)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32);
}

__device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int N> __device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// D (64 x 128, fp32, accumulator layout) += A (64 x 16, fp16, registers) x B (16 x 128, fp16, shared memory,
// by descriptor); D = A x B alone when accumulate is false.
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], const uint32_t (&a)[4], uint64_t b_desc,
                                                 bool accumulate)
{
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "{%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"((int)accumulate));
}

// Tells the compiler that the accumulators change here: their reads must stay after the wait that completes them.
__device__ __forceinline__ void fence_accumulators(float (&d)[64])
{
#pragma unroll
    for (int i = 0; i < 64; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

// The thread's A fragments (mma's m16n8k16 layout, which wgmma keeps for A in registers): words of queries
// `row` and row + 8 (g = lane / 4 rows into the warp's 16), k-step j, dimensions 16 j + 2 t and 16 j + 8 + 2 t.
template <int KSTEPS>
__device__ __forceinline__ void load_a(const __half *__restrict__ h, size_t row, int t, uint32_t (&a)[KSTEPS][4])
{
    const uint32_t *r0 = reinterpret_cast<const uint32_t *>(h + row * (size_t)(KSTEPS * 16));
    const uint32_t *r1 = reinterpret_cast<const uint32_t *>(h + (row + 8) * (size_t)(KSTEPS * 16));
#pragma unroll
    for (int j = 0; j < KSTEPS; ++j) {
        a[j][0] = r0[8 * j + t];
        a[j][1] = r1[8 * j + t];
        a[j][2] = r0[8 * j + 4 + t];
        a[j][3] = r1[8 * j + 4 + t];
    }
}

// Accumulator slot 4 j + c is query row0 + 8 (c / 2) and tile row 8 j + 2 t + c % 2; its screened value less |q|^2.
__device__ __forceinline__ float slot_value(const float (&acc)[64], const float2 (&rn)[16], const float (&cq)[2], int j,
                                            int c)
{
    return fmaf(acc[4 * j + c], cq[c / 2], c % 2 ? rn[j].y : rn[j].x);
}

__device__ __forceinline__ bool offer_slot(const candidate_lists &s, const float (&acc)[64], const float2 (&rn)[16],
                                           const float (&cq)[2], const float (&thr)[2], int row0, size_t col0, int t,
                                           int j, int c)
{
    const int h = c / 2;
    const float x = slot_value(acc, rn, cq, j, c);
    if (!(x < thr[h]))
        return true;
    return buffer_offer(s, row0 + 8 * h, x, (uint32_t)(col0 + 8 * j + 2 * t + c % 2));
}

// The tile's epilogue, 4 slots (one column pair, both queries) at a time: one fused multiply-add and one
// comparison a slot, and a warp vote. Only when some lane has a slot below its query's threshold does the warp
// offer them; over the whole walk a query sees about 32 ln(tiles) such rows, so most groups end at the vote. Slots
// that found their buffer full are offered again after the warp merges its buffers, until none is left.
__device__ __forceinline__ void select_tile(const candidate_lists &s, const float (&acc)[64], const float2 (&rn)[16],
                                            const float (&cq)[2], float (&thr)[2], int row0, size_t col0, int warp,
                                            int lane)
{
    const int t = lane % 4;
    unsigned long long retry = 0;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        float x[4];
        bool below[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            x[c] = slot_value(acc, rn, cq, j, c);
            below[c] = x[c] < thr[c / 2]; // false for NaN: rows never screened in
        }
        if (!__any_sync(kFullMask, below[0] || below[1] || below[2] || below[3]))
            continue;
#pragma unroll
        for (int c = 0; c < 4; ++c)
            if (below[c] && !buffer_offer(s, row0 + 8 * (c / 2), x[c], (uint32_t)(col0 + 8 * j + 2 * t + c % 2)))
                retry |= 1ull << (4 * j + c);
    }
    while (__any_sync(kFullMask, retry != 0)) {
        __syncwarp();
        merge_buffers(s, warp, lane);
        __syncwarp();
        thr[0] = s.threshold[row0];
        thr[1] = s.threshold[row0 + 8];
        if (retry)
#pragma unroll
            for (int j = 0; j < 16; ++j)
#pragma unroll
                for (int c = 0; c < 4; ++c) {
                    const unsigned long long bit = 1ull << (4 * j + c);
                    if ((retry & bit) && offer_slot(s, acc, rn, cq, thr, row0, col0, t, j, c))
                        retry &= ~bit;
                }
    }
}

template <int KSTEPS>
__global__ void __launch_bounds__(kThreadsW, 1)
    wgmma_screen_kernel(rows_prep q, const __half *__restrict__ ref_h, const float *__restrict__ ref_norm2,
                        float ref_inv_scale, size_t n_tiles, uint32_t *__restrict__ cand_id,
                        float *__restrict__ cand_x)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using walk = tile_walk<KSTEPS>;
    extern __shared__ __align__(1024) unsigned char smem[];
    wgmma_smem s;
    wgmma_smem_carve(&s, smem);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const size_t qb = (size_t)blockIdx.x * kBlockQueries, total = n_tiles * walk::kChunks;
    lists_init(s.lists, q.norm2 + qb);
    if (threadIdx.x == 0) {
        for (int i = 0; i < kStagesW; ++i) {
            mbar_init(&s.full[i], 1);
            s.released[i] = 0;
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (size_t c = 0; c < total && c < (size_t)kStagesW; ++c)
            issue_chunk<KSTEPS>(s, ref_h, c);

    const int row0 = warp * 16 + g; // the thread's queries: row0 and row0 + 8 of the block
    uint32_t a[KSTEPS][4];
    load_a<KSTEPS>(q.h, qb + row0, t, a);
    float cq[2], thr[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        cq[h] = -2.0f * q.inv_scale[qb + row0 + 8 * h] * ref_inv_scale; // a power of two: exact
        thr[h] = s.lists.threshold[row0 + 8 * h];
    }
    float acc[64];
    size_t c = 0; // the chunk of the walk
    for (size_t tile = 0; tile < n_tiles; ++tile) {
        float2 rn[16];
#pragma unroll
        for (int j = 0; j < 16; ++j)
            rn[j] = *reinterpret_cast<const float2 *>(ref_norm2 + tile * kTileRows + 8 * j + 2 * t);
#pragma unroll
        for (int chunk = 0; chunk < walk::kChunks; ++chunk, ++c) {
            const int stage = (int)(c % kStagesW);
            mbar_wait(&s.full[stage], (unsigned)((c / kStagesW) & 1));
            wgmma_fence();
            const unsigned base = smem_addr(s.stages + stage * kStageBytes);
            const unsigned sbo = (unsigned)walk::steps(chunk) * 256; // 8 rows x the chunk's dimensions x 2 bytes
#pragma unroll
            for (int kk = 0; kk < 4; ++kk)
                if (kk < walk::steps(chunk))
                    wgmma_m64n128k16(acc, a[chunk * 4 + kk], smem_desc(base + kk * 256, sbo), chunk + kk > 0);
            wgmma_commit();
            if (chunk >= 1) { // the previous chunk's products are done with its stage
                wgmma_wait<1>();
                release_chunk<KSTEPS>(s, ref_h, c - 1, total, lane);
            }
        }
        wgmma_wait<0>();
        fence_accumulators(acc);
        release_chunk<KSTEPS>(s, ref_h, c - 1, total, lane);
        select_tile(s.lists, acc, rn, cq, thr, row0, tile * kTileRows, warp, lane);
    }
    __syncwarp();
    merge_buffers(s.lists, warp, lane); // what the last tiles left in the buffers
    __syncwarp();
    lists_store(s.lists, warp, lane, qb, cand_id, cand_x);
#endif
}

template <int KSTEPS>
cudaError_t launch(const rows_prep &q, const rows_prep &r, size_t m_padded, size_t n_padded, float ref_inv_scale,
                   uint32_t *cand_id, float *cand_x)
{
    wgmma_smem s;
    const size_t smem = wgmma_smem_carve(&s, nullptr);
    cudaError_t err = cudaFuncSetAttribute(wgmma_screen_kernel<KSTEPS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)smem);
    if (err != cudaSuccess)
        return err;
    wgmma_screen_kernel<KSTEPS><<<(unsigned)(m_padded / kBlockQueries), kThreadsW, smem>>>(
        q, r.h, r.norm2, ref_inv_scale, n_padded / kTileRows, cand_id, cand_x);
    return cudaGetLastError();
}

} // namespace

bool grip_knn_wgmma_usable(void)
{
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, wgmma_screen_kernel<2>) == cudaSuccess)
        return true;
    (void)cudaGetLastError(); // no sm_90a image for this device: not an error of the caller's
    return false;
}

int grip_knn_wgmma_ksteps(size_t dim)
{
    for (int steps : kCompiledSteps)
        if ((size_t)steps * 16 >= dim)
            return steps;
    return 0;
}

cudaError_t grip_knn_wgmma_screen(const rows_prep &q, const rows_prep &r, size_t m_padded, size_t n_padded,
                                  int ksteps, float ref_inv_scale, uint32_t *cand_id, float *cand_x)
{
    switch (ksteps) {
#define GRIP_WGMMA_CASE(K)                                                                                             \
    case K:                                                                                                            \
        return launch<K>(q, r, m_padded, n_padded, ref_inv_scale, cand_id, cand_x);
        GRIP_WGMMA_CASE(2)
        GRIP_WGMMA_CASE(3)
        GRIP_WGMMA_CASE(4)
        GRIP_WGMMA_CASE(6)
        GRIP_WGMMA_CASE(8)
        GRIP_WGMMA_CASE(10)
        GRIP_WGMMA_CASE(12)
        GRIP_WGMMA_CASE(16)
        GRIP_WGMMA_CASE(20)
        GRIP_WGMMA_CASE(22)
        GRIP_WGMMA_CASE(23)
#undef GRIP_WGMMA_CASE
    default:
        return cudaErrorInvalidValue;
    }
}
