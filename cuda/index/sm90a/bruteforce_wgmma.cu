// bruteforce_wgmma.cu -- the Hopper screening kernel (see cuda/index/bruteforce_wgmma.cuh), built for sm_90a only
// (CMakeLists.txt: grip_sm90a_objects). The mma.sync kernel of cuda/index/bruteforce_tensor.cu reloads every operand
// from shared memory for each warp's 64 x 32 product; wgmma multiplies 64 x 128 per warpgroup instruction, A from
// registers, B straight from shared memory (1.4x faster at D = 352). A build with the epilogue cut out walks in a
// third of the screen's time (docs/performance.md: where the screen's time goes): the epilogue (each tile's minima and
// ballots, half-rate ALU work, then the rarer inserts) does not overlap the products, but for half of each tile in the
// folded kernel (walk_tile_halves). The reference rows' L2 traffic is not the limit (L2 at a third of its throughput;
// clusters of two blocks sharing each chunk by multicast were 1.5x
// slower), and taking turns between the warpgroups and deeper wgmma queues did not help.
//
// Two operand kinds, one kernel template: fp16 (fp32 accumulators, k-steps of 16 dimensions) and int8 (int32
// accumulators, exact, k-steps of 32 dimensions, twice the fp16 rate). Both take 32 bytes of a row per k-step, in
// the same byte layouts, so the fragments, the chunks and the descriptors are the same; only the instruction and
// the epilogue's arithmetic differ (fp16_slots, s8_slots).
//
// A block is two warpgroups (8 warps) and 128 queries; warpgroup w owns queries 64 w .. 64 w + 63, and their
// rows stay in its registers for the whole walk (k-steps x 4 words a thread). The reference rows come in tiles of
// 128 rows, each as chunks of up to 128 bytes a row that the prep stored in wgmma's operand layout
// (bruteforce_tensor.cu's operand_index), so one bulk copy (cp.async.bulk) moves a chunk into a ring of stages
// (ring_shape) with an mbarrier per stage. The warps release a stage after their wgmmas that read it have completed;
// the eighth release refills it, so neither warpgroup waits for the other except through the data.
//
// After a tile's products, each thread holds 2 queries x 32 rows: x = |r|^2 + (-2 / (s_q s_r)) p, the screened
// distance less |q|^2, with one fused multiply-add (int8: x = |r~|^2 - 2 p, an exact integer, one integer
// multiply-add; with the norm folded into the products, x / 2 is p itself). A row whose x beats the thread's
// threshold for the query goes into the thread's own short list (cuda/index/sm90a/bruteforce_thread_lists.cuh); after a
// tile with inserts, a query's 4 threads (lanes of one warp) share the least of their thresholds. No thread waits for
// another after the start, except through the ring, those shuffles and the warpgroup's wgmmas. The folded kernel
// (two blocks an SM, tiles of one chunk) takes each tile's products as two halves of 64 rows, the first half's
// epilogue running while the second's products are in flight (walk_tile_halves); its screen stashes the rows that
// beat a threshold and inserts them while the next tile's products run (walk_stashed). The same walks, with another
// epilogue, serve the re-screen of uncertified queries (cuda/index/bruteforce_rescreen.cu).
#include "cuda/index/bruteforce_wgmma.cuh"
#include "cuda/index/sm90a/bruteforce_thread_lists.cuh"

#include <limits.h>
#include <math.h>
#include <type_traits>

namespace {

using namespace grip_screen;

constexpr int kWarpsW = 8;                                  // two warpgroups
constexpr int kThreadsW = 32 * kWarpsW;
static_assert(kThreadsW == kListThreads, "the thread lists' layout");
constexpr int kStepBytes = 32;                              // a row's bytes per k-step: 16 fp16 or 32 int8 dims
// rows are padded up to these k-steps (x 16 dimensions in fp16, x 32 in int8)
constexpr int kCompiledSteps[] = {2, 3, 4, 6, 8, 10, 12, 16, 20, 22, 23};
constexpr int kCompiledStepsS8[] = {2, 3, 4, 6, 8, 10, 11, 12};

// Shared memory of an SM (sm_90: 228 KB, of which 1 KB is reserved per block) and of one block (227 KB).
constexpr int kSmemPerSM = 233472, kSmemReservedPerBlock = 1024, kSmemPerBlock = 232448;
constexpr int kBarrierBytes = 2 * 1024; // the full barriers and the release counts, a KB each (wgmma_smem_layout)

// The ring of a kernel for rows of KSTEPS k-steps, run BLOCKS_PER_SM blocks an SM: stages the size of the
// largest chunk, as many as the block's share of the SM's shared memory holds beside STASH_BYTES of the threads'
// stashes (walk_stashed), up to kMaxStages (12 stages against 10 were 7% faster at D = 352; 14, which fit once the
// lists went over the ring, were 8% slower at 1e6 x 1e6; the folded kernel's 5, beside its stashes, were as fast as
// its 9 and 12).
constexpr int kMaxStages = 12;
template <int KSTEPS, int BLOCKS_PER_SM, int STASH_BYTES = 0> struct ring_shape {
    static constexpr int kSteps = KSTEPS, kBlocksPerSM = BLOCKS_PER_SM, kStashBytes = STASH_BYTES;
    static constexpr int kStageBytes = kTileRows * (KSTEPS < 4 ? KSTEPS : 4) * kStepBytes;
    static constexpr int kBlockBytes =
        kBlocksPerSM == 1 ? kSmemPerBlock : kSmemPerSM / kBlocksPerSM - kSmemReservedPerBlock;
    static constexpr int kFit = (kBlockBytes - kBarrierBytes - kStashBytes) / kStageBytes;
    static constexpr int kStages = kFit < kMaxStages ? kFit : kMaxStages;
    static_assert(kThreadListsBytes <= (size_t)kStages * kStageBytes, "the lists go over the ring");
};

// Rows of up to 2 k-steps run two blocks an SM where the kernel's registers allow (Slots::kTwoBlocksPerSM: the
// folded int8 kernel, FPFH's 33 dimensions): their tiles are short, and a warpgroup waits for its products (half
// of them, walk_tile_halves), then runs its epilogue; four warpgroups an SM fill each other's waits (1.5x faster at
// D = 33 with 1e5 queries or more, the same with 16,384).
template <int KSTEPS, class Slots>
using ring_for = ring_shape<KSTEPS, KSTEPS <= 2 && Slots::kTwoBlocksPerSM ? 2 : 1>;

// A thread's stash (walk_stashed): a word for each slot of a tile that screened in, kThreadsW words apart.
constexpr int kStashWords = 64;
constexpr int kStashBytes = kStashWords * kThreadsW * (int)sizeof(unsigned);

// The screen's ring: ring_for's, less the stashes where the screen walks with them (Slots::kStashed).
template <int KSTEPS, class Slots>
using screen_ring_for = ring_shape<KSTEPS, ring_for<KSTEPS, Slots>::kBlocksPerSM, Slots::kStashed ? kStashBytes : 0>;

// The block's shared memory, from its base: the ring's stages, then its full barriers and release counts, each at
// a 1 KB boundary, then the stashes, if any; once the walk is done, the threads' candidate lists over the stages.
template <class Ring> struct wgmma_smem_layout {
    static constexpr size_t kFull = round_up((size_t)Ring::kStages * Ring::kStageBytes, 1024);
    static constexpr size_t kReleased = kFull + round_up(Ring::kStages * sizeof(uint64_t), 1024);
    static constexpr size_t kStash = kReleased + round_up(Ring::kStages * sizeof(unsigned), 1024);
    static constexpr size_t kBytes = kStash + Ring::kStashBytes;
    static_assert(kStash - kFull <= (size_t)kBarrierBytes, "the barriers and counts fit what the ring left them");
    static_assert(kBytes <= (size_t)Ring::kBlockBytes, "the block's share of the SM");
};

// The ring's places as 32-bit shared-memory addresses, computed once a kernel: the walk's addressing is then an
// add a chunk (from generic pointers the compiler converted them again at every chunk, some 20 instructions a tile).
struct wgmma_smem {
    unsigned stages;    // Ring::kStages x Ring::kStageBytes
    unsigned full;      // kStages mbarriers (8 bytes each): the stage's chunk has arrived
    unsigned released;  // kStages counts (4 bytes each): warps done with the stage, counted over its fills
    thread_lists lists; // after the walk, over the stages
    unsigned *stash;    // the thread's stash (word i at stash[i * kThreadsW]); past the block's memory, never
                        // used, where the ring has none
    __device__ __forceinline__ unsigned full_bar(int stage) const { return full + stage * (unsigned)sizeof(uint64_t); }
    __device__ __forceinline__ unsigned count(int stage) const { return released + stage * (unsigned)sizeof(unsigned); }
};

template <class Ring> __device__ __forceinline__ wgmma_smem wgmma_smem_at(unsigned char *base)
{
    using layout = wgmma_smem_layout<Ring>;
    const unsigned at = smem_addr(base);
    wgmma_smem s = {at, at + (unsigned)layout::kFull, at + (unsigned)layout::kReleased, {},
                    reinterpret_cast<unsigned *>(base + layout::kStash) + threadIdx.x};
    size_t lists_off = 0;
    thread_lists_carve(&s.lists, [&](size_t bytes) {
        unsigned char *p = base + lists_off;
        lists_off += bytes;
        return p;
    });
    return s;
}

// The chunks of a tile: 4 k-steps each, the last one KSTEPS - 4 (kChunks - 1).
template <int KSTEPS> struct tile_walk {
    static constexpr int kChunks = (KSTEPS + 3) / 4;
    __host__ __device__ static constexpr int steps(int chunk)
    {
        return chunk == kChunks - 1 ? KSTEPS - 4 * (kChunks - 1) : 4;
    }
};

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity)
{
    asm volatile("{\n.reg .pred done;\nWAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT;\n}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

// Whether the barrier's phase of parity `parity` has completed, without waiting (then as mbar_wait).
__device__ __forceinline__ bool mbar_test(unsigned bar, unsigned parity)
{
    unsigned done;
    asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return done != 0;
}

// Copies chunk `chunk` of tile `tile` (counted from ref) into `stage`, its barrier told to wait for the bytes (the
// fill's one arrival); one thread.
template <class Ring>
__device__ __forceinline__ void issue_chunk(const wgmma_smem &s, const unsigned char *ref, int stage, size_t tile,
                                            int chunk)
{
    using walk = tile_walk<Ring::kSteps>;
    const unsigned bytes = (unsigned)(kTileRows * walk::steps(chunk) * kStepBytes);
    const unsigned char *src =
        ref + tile * kTileRows * (size_t)(Ring::kSteps * kStepBytes) + (size_t)chunk * kTileRows * kWgmmaChunkBytes;
    const unsigned bar = s.full_bar(stage);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     s.stages + stage * Ring::kStageBytes),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

// The stage of the walk's current chunk, and the parity of its fill: kept by counting (a 64-bit division by the
// stages a chunk showed in the profile, about 10% of the instructions at D = 352).
template <int STAGES> struct ring_cursor {
    int stage = 0;
    unsigned parity = 0;
    __device__ __forceinline__ void advance()
    {
        if (++stage == STAGES) {
            stage = 0;
            parity ^= 1u;
        }
    }
};

// The warp is done with the chunk in `stage`: its wgmmas that read it have completed (wgmma_wait returned). One lane,
// elected, counts it with a release atomic and gets the count before its own (the other lanes 0). The ring's
// hand-off is ordered by the PTX memory model, as CUTLASS's pipelines order theirs (a consumer's release after its
// warpgroup wait, the producer's acquire before it refills): each warp's release orders its reads of the stage
// before its count; the last warp's count reads the others' (a release sequence on one word), and its
// fence.acq_rel in refill_if_last makes that read an acquire pattern, so its refill follows all 8 warps' reads.
// Only the refilling lane pays for the fence. Elected by elect.sync, not as lane 0: ptxas then leaves out the
// warp-wide aggregation it gives an atomic in a branch (some 20 instructions, and the whole warp waiting for the
// atomic's value).
__device__ __forceinline__ unsigned release_count(const wgmma_smem &s, int stage)
{
    unsigned before = 0;
    asm volatile("{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\n"
                 "@p atom.release.cta.shared::cta.add.u32 %0, [%1], 1;\n}\n"
                 : "+r"(before)
                 : "r"(s.count(stage))
                 : "memory");
    return before;
}

// The last of the 8 warps to count chunk `chunk` of tile `tile` (of `tiles`), in `stage` (`before` its
// release_count), after an acquire fence, refills the stage with the chunk kStages further on (chunk is a constant
// once the walk is unrolled, and so is the refill's place in its tile). A count of 0 is never the last.
template <class Ring>
__device__ __forceinline__ void refill_if_last(const wgmma_smem &s, const unsigned char *ref, int stage, size_t tile,
                                               int chunk, size_t tiles, unsigned before)
{
    using walk = tile_walk<Ring::kSteps>;
    const int refill = chunk + Ring::kStages; // the refill's chunk, counted from this tile's first
    const size_t refill_tile = tile + refill / walk::kChunks;
    if (before % kWarpsW == kWarpsW - 1 && refill_tile < tiles) {
        asm volatile("fence.acq_rel.cta;\n" ::: "memory"); // the acquire half of release_count's hand-off
        issue_chunk<Ring>(s, ref, stage, refill_tile, refill % walk::kChunks);
    }
}

template <class Ring>
__device__ __forceinline__ void release_chunk(const wgmma_smem &s, const unsigned char *ref, int stage, size_t tile,
                                             int chunk, size_t tiles)
{
    refill_if_last<Ring>(s, ref, stage, tile, chunk, tiles, release_count(s, stage));
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
__device__ __forceinline__ void wgmma_step(float (&d)[64], const uint32_t (&a)[4], uint64_t b_desc, bool accumulate)
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

// The same in int8: D (64 x 128, int32) += A (64 x 32, int8, registers) x B (32 x 128, int8, shared memory), exact.
__device__ __forceinline__ void wgmma_step(int (&d)[64], const uint32_t (&a)[4], uint64_t b_desc, bool accumulate)
{
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "{%64, %65, %66, %67}, %68, p;\n}\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
          "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
          "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
          "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),
          "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]),
          "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]),
          "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),
          "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"((int)accumulate));
}

// The same on half a tile (walk_tile_halves): D (64 x 64) += A x B, B's 64 rows from the descriptor; 32 accumulators a
// thread.
__device__ __forceinline__ void wgmma_step(int (&d)[32], const uint32_t (&a)[4], uint64_t b_desc, bool accumulate)
{
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "{%32, %33, %34, %35}, %36, p;\n}\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
          "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
          "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
          "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"((int)accumulate));
}

// Tells the compiler that the accumulators change here: their reads must stay after the wait that completes them.
template <int N> __device__ __forceinline__ void fence_accumulators(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

template <int N> __device__ __forceinline__ void fence_accumulators(int (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i)
        asm volatile("" : "+r"(d[i])::"memory");
}

// The thread's A fragments (mma's m16n8k16 layout, which wgmma keeps for A in registers; m16n8k32's for int8,
// the same bytes): words of queries `row` and row + 8 (g = lane / 4 rows into the warp's 16), k-step j, bytes
// 32 j + 4 t and 32 j + 16 + 4 t (fp16 dimensions 16 j + 2 t and 16 j + 8 + 2 t; int8 twice those).
template <int KSTEPS>
__device__ __forceinline__ void load_a(const unsigned char *__restrict__ rows, size_t row, int t,
                                       uint32_t (&a)[KSTEPS][4])
{
    const uint32_t *r0 = reinterpret_cast<const uint32_t *>(rows + row * (size_t)(KSTEPS * kStepBytes));
    const uint32_t *r1 = reinterpret_cast<const uint32_t *>(rows + (row + 8) * (size_t)(KSTEPS * kStepBytes));
#pragma unroll
    for (int j = 0; j < KSTEPS; ++j) {
        a[j][0] = r0[8 * j + t];
        a[j][1] = r1[8 * j + t];
        a[j][2] = r0[8 * j + 4 + t];
        a[j][3] = r1[8 * j + 4 + t];
    }
}

// The epilogue's arithmetic, per operand kind. Accumulator slot 4 j + c of a whole tile's is query row0 + 8 (c / 2)
// and tile row 8 j + 2 t + c % 2; value(acc, j, c) is its screened value less |q|^2 (acc its accumulator),
// threshold() turns a list's threshold (a float) into a bound of the same kind, listed() turns a value into the
// float the lists hold.
struct fp16_slots {
    static constexpr bool kTwoBlocksPerSM = false; // at 2 k-steps, 128 registers would spill
    static constexpr bool kStashed = false;        // the screen's walk: walk, keep_tile
    static constexpr int kListEntries = kThreadList;
    using acc_t = float;
    using value_t = float;
    float2 rn[16]; // |r|^2 of the thread's tile rows
    float cq[2];   // -2 / (s_q s_r) of its two queries: a power of two, exact

    __device__ __forceinline__ void begin(const rows_prep &q, size_t q_row0, float ref_inv_scale)
    {
        for (int h = 0; h < 2; ++h)
            cq[h] = -2.0f * q.inv_scale[q_row0 + 8 * h] * ref_inv_scale;
    }
    __device__ __forceinline__ void load_norms(const rows_prep &r, size_t tile, int t)
    {
#pragma unroll
        for (int j = 0; j < 16; ++j)
            rn[j] = *reinterpret_cast<const float2 *>(r.norm2 + tile * kTileRows + 8 * j + 2 * t);
    }
    __device__ __forceinline__ float value(float acc, int j, int c) const
    {
        return fmaf(acc, cq[c / 2], c % 2 ? rn[j].y : rn[j].x);
    }
    static constexpr float kEmpty = INFINITY; // a list entry's value when it holds no row
    __device__ __forceinline__ static float threshold(float t) { return t; }
    __device__ __forceinline__ static float listed(float x) { return x; }
    __device__ __forceinline__ static float lower(float a, float b) { return fminf(a, b); } // NaN only if both
};

// int8: x = |r~|^2 - 2 q~.r~ in integers, exact, and below 2^24 in magnitude (the prep's quantization limit sees
// to it), so that the float the lists hold is exact too. Rows never screened in (non-finite rows and padding,
// whose int8 values are zeros) have the norm kS8NeverNorm, above any threshold.
struct s8_slots {
    static constexpr bool kTwoBlocksPerSM = false; // at 2 k-steps, 128 registers would spill
    static constexpr bool kStashed = false;
    static constexpr int kListEntries = kThreadList;
    using acc_t = int;
    using value_t = int;
    static constexpr int kAbove = 1 << 25; // above every screened value: stands for a threshold of +inf
    static constexpr int kEmpty = kAbove;
    int2 rn[16];

    __device__ __forceinline__ void begin(const rows_prep &, size_t, float) {}
    __device__ __forceinline__ void load_norms(const rows_prep &r, size_t tile, int t)
    {
#pragma unroll
        for (int j = 0; j < 16; ++j)
            rn[j] = *reinterpret_cast<const int2 *>(r.norm2_t + tile * kTileRows + 8 * j + 2 * t);
    }
    __device__ __forceinline__ int value(int acc, int j, int c) const { return (c % 2 ? rn[j].y : rn[j].x) - 2 * acc; }
    // an integer v is below t exactly when it is below ceil(t)
    __device__ __forceinline__ static int threshold(float t)
    {
        return t >= (float)kAbove ? kAbove : t < -(float)kAbove ? INT_MIN : (int)ceilf(t);
    }
    __device__ __forceinline__ static float listed(int x) { return (float)x; }
    __device__ __forceinline__ static int lower(int a, int b) { return min(a, b); }
};

// int8 with the norm folded (bruteforce_tensor.cu's fold_row_column): the product itself is v = x / 2, x = |r~|^2 - 2
// q~.r~ less 1 when |r~|^2 is odd, so a slot's value is its accumulator, with no norm to load or add. The lists hold x
// = 2 v, as s8_slots' (exact: below 2^24).
struct s8_folded_slots {
    static constexpr bool kTwoBlocksPerSM = true;
    // The screen walks with stashes (walk_stashed), and a thread keeps 6 rows a query: fewer rows enter the lists
    // than with 8, at the price of more queries re-screened (about 3% against 1% at D = 33), which still pays; with
    // 4 the re-screens cost more than the lists save (docs/performance.md).
    static constexpr bool kStashed = true;
    static constexpr int kListEntries = 6;
    using acc_t = int;
    using value_t = int;
    static constexpr int kAbove = s8_slots::kAbove;
    static constexpr int kEmpty = kAbove;

    __device__ __forceinline__ void begin(const rows_prep &, size_t, float) {}
    __device__ __forceinline__ void load_norms(const rows_prep &, size_t, int) {}
    __device__ __forceinline__ int value(int acc, int, int) const { return acc; }
    // an integer v has 2 v below t exactly when v is below ceil(t / 2)
    __device__ __forceinline__ static int threshold(float t)
    {
        return t >= 2.0f * kAbove ? kAbove : t < -2.0f * kAbove ? INT_MIN : (int)ceilf(0.5f * t);
    }
    __device__ __forceinline__ static float listed(int v) { return (float)(2 * v); }
    __device__ __forceinline__ static int lower(int a, int b) { return min(a, b); }
};

// A tile's accumulators as the epilogue reads them: the whole tile's 64 (NA), or a half's 32 (the pipelined walk:
// column pairs j0 .. j0 + 7 of the tile). Slot (j, c) is accumulator 4 (j - j0) + c.
template <class Slots, int NA> struct tile_part {
    static constexpr int kGroups = NA / 8; // groups of 8 slots: two column pairs, both queries
    const Slots &sl;
    const typename Slots::acc_t (&acc)[NA];
    int j0;
    __device__ __forceinline__ typename Slots::value_t value(int j, int c) const
    {
        return sl.value(acc[4 * (j - j0) + c], j, c);
    }
    // The least of the thread's 4 slots of query h in group g (column pairs j0 + 2 g and j0 + 2 g + 1).
    __device__ __forceinline__ typename Slots::value_t least_of_group(int g, int h) const
    {
        const int j = j0 + 2 * g;
        return Slots::lower(Slots::lower(value(j, 2 * h), value(j, 2 * h + 1)),
                            Slots::lower(value(j + 1, 2 * h), value(j + 1, 2 * h + 1)));
    }
};

// Whether some lane of the warp has a slot below its query's bound in the part: per query the least of the
// thread's slots (a tree of mins), then one ballot.
template <class Slots, int NA>
__device__ __forceinline__ bool part_has_slot_below(const tile_part<Slots, NA> &part,
                                                    const typename Slots::value_t (&bound)[2])
{
    using value_t = typename Slots::value_t;
    using Part = tile_part<Slots, NA>;
    value_t least[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        value_t g[Part::kGroups];
#pragma unroll
        for (int i = 0; i < Part::kGroups; ++i)
            g[i] = part.least_of_group(i, h);
#pragma unroll
        for (int w = Part::kGroups / 2; w >= 1; w /= 2) // a tree
#pragma unroll
            for (int i = 0; i < w; ++i)
                g[i] = Slots::lower(g[i], g[i + w]);
        least[h] = g[0];
    }
    return __ballot_sync(kFullMask, least[0] < bound[0] || least[1] < bound[1]) != 0; // NaN: never screened in
}

// The groups of the part in which some lane of the warp has a slot below its query's bound: per group and query
// the least of its 4 slots, and one ballot a group (bit g for group g; false for NaN: never screened in).
template <class Slots, int NA>
__device__ __forceinline__ unsigned groups_below(const tile_part<Slots, NA> &part,
                                                 const typename Slots::value_t (&bound)[2])
{
    unsigned groups = 0;
#pragma unroll
    for (int g = 0; g < tile_part<Slots, NA>::kGroups; ++g) {
        const typename Slots::value_t least[2] = {part.least_of_group(g, 0), part.least_of_group(g, 1)};
        if (__ballot_sync(kFullMask, least[0] < bound[0] || least[1] < bound[1]))
            groups |= 1u << g;
    }
    return groups;
}

// Calls f(j, c, x) for each slot (j, c) of the part whose value x is below bound[c / 2] (returned: the groups that
// had one in some lane of the warp, 0 for none); f may lower the bound, and the slots after it see the lower one.
// The warp skips the groups where none of its lanes has one, and in the others a thread looks at a query's 4 slots
// one by one only when their least is below the bound: most threads of the warp have none (a branch a slot, taken
// by the whole warp, made the screens 6-8% slower at 1e5 rows). At most one multiply-add a slot (none with the
// norm folded), and most tiles find no slot: over the whole walk a query sees about 32 ln(tiles) rows that beat its
// list. A half tile's (4 groups) one ballot first finds most of those (at D = 33, 1e6 rows, the screen 6% faster);
// a whole tile's 8 groups take a ballot each straight away (4-6% faster at D = 352 than a ballot first).
template <class Slots, int NA, class F>
__device__ __forceinline__ unsigned for_each_slot_below(const tile_part<Slots, NA> &part,
                                                        typename Slots::value_t (&bound)[2], F &&f)
{
    using value_t = typename Slots::value_t;
    using Part = tile_part<Slots, NA>;
    if constexpr (Part::kGroups <= 4)
        if (!part_has_slot_below(part, bound))
            return 0;
    const unsigned groups = groups_below(part, bound);
#pragma unroll
    for (int g = 0; g < Part::kGroups; ++g) {
        if (!(groups & (1u << g)))
            continue;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            if (!(part.least_of_group(g, h) < bound[h]))
                continue;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int j = part.j0 + 2 * g + i / 2, c = 2 * h + i % 2;
                const value_t x = part.value(j, c);
                if (x < bound[h])
                    f(j, c, x);
            }
        }
    }
    return groups;
}

// After a tile with inserts in the warp (its lanes alike), the 4 threads of each query (lanes 4g .. 4g + 3) take the
// least of their thresholds (keep_tile says why the certificate still holds).
template <class Slots> __device__ __forceinline__ void share_least_thresholds(typename Slots::value_t (&thr)[2])
{
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        thr[h] = Slots::lower(thr[h], __shfl_xor_sync(kFullMask, thr[h], 1));
        thr[h] = Slots::lower(thr[h], __shfl_xor_sync(kFullMask, thr[h], 2));
    }
}

// The tile's epilogue for the candidate lists: each slot below the thread's threshold for its query goes into the
// thread's list (registers), and the threshold drops to the list's new last value. When the warp inserted any, the 4
// threads of each query then take the least of their thresholds: a row at or above it is at or above the least last
// value of the 4 lists at the end (last values only fall), the bound the store writes for the rows left out, so the
// certificate holds, and fewer rows enter the lists (23% fewer in a simulation of 1e6 rows).
template <class Slots, int NA, int N>
__device__ __forceinline__ void keep_tile(thread_best<typename Slots::value_t, N> &best,
                                          const tile_part<Slots, NA> &part, typename Slots::value_t (&thr)[2],
                                          size_t col0, int t)
{
    using value_t = typename Slots::value_t;
    const unsigned inserted = for_each_slot_below(part, thr, [&](int j, int c, value_t x) {
        const int h = c / 2;
        best.insert(h, x, (uint32_t)(col0 + 8 * j + 2 * t + c % 2));
        thr[h] = Slots::lower(thr[h], best.last(h));
    });
    if (inserted) // the warp's lanes alike (a ballot)
        share_least_thresholds<Slots>(thr);
}

// keep_tile in two steps, for walk_stashed: the slots of a half tile below the thread's bounds are written to the
// thread's stash (stash_half, at the half's epilogue), and inserted into its lists from there (flush_stash, while
// the next tile's products are in flight). One word a slot: x * 64 + 32 h + (2 j + c % 2), j the slot's column
// pair in the tile (folded values: |x| < 2^24, and x < kAbove = 2^25, so it fits). The lists' inserts are then one
// loop with an insert a query, not an inline insert a slot: the folded kernel's code halves, and the warpgroup's
// warps wait less for the one that inserts.
template <class Slots>
__device__ __forceinline__ void stash_half(const tile_part<Slots, 32> &part, const int (&thr)[2], unsigned *stash,
                                           int &n)
{
    static_assert(std::is_same<typename Slots::value_t, int>::value, "integer values");
    static_assert(kStashWords >= 64, "a tile's 64 slots");
    int bound[2] = {thr[0], thr[1]}; // the stash lowers no bound
    for_each_slot_below(part, bound, [&](int j, int c, int x) {
        stash[kThreadsW * n++] = (unsigned)(x * 64 + 32 * (c / 2) + 2 * j + c % 2);
    });
}

// Inserts the thread's n stashed slots of the tile whose first row is col0 into its lists, lowering its bounds,
// then, where the warp inserted any, the 4 threads of each query take the least of their bounds (as keep_tile).
template <class Slots, int N>
__device__ __forceinline__ void flush_stash(thread_best<int, N> &best, int (&thr)[2], const unsigned *stash, int &n,
                                            size_t col0, int t)
{
    static_assert(std::is_same<typename Slots::value_t, int>::value, "integer values");
    if (!__any_sync(kFullMask, n > 0))
        return;
    const uint32_t first = (uint32_t)(col0 + 2 * t); // row of slot 0
    for (int i = 0; i < n; ++i) {
        const int word = (int)stash[kThreadsW * i], x = word >> 6, slot = word & 31;
        const uint32_t row = first + 8 * (slot >> 1) + (slot & 1);
        if (word & 32) { // two inserts, each with constant indices into the lists
            if (x < thr[1]) {
                best.insert(1, x, row);
                thr[1] = min(thr[1], best.last(1));
            }
        } else if (x < thr[0]) {
            best.insert(0, x, row);
            thr[0] = min(thr[0], best.last(0));
        }
    }
    n = 0;
    share_least_thresholds<Slots>(thr);
}

// A list value as the candidate lists hold it; Slots::kEmpty (no entry) as +inf.
template <class Slots> __device__ __forceinline__ float listed_or_inf(typename Slots::value_t v)
{
    return v < Slots::kEmpty ? Slots::listed(v) : INFINITY;
}

// The tile's epilogue for the re-screen: every slot below its query's limit is a row found; its place in the
// query's `capacity` is counted out, and a count past it tells the caller that the query overflowed.
template <class Slots, int NA>
__device__ __forceinline__ void emit_tile(const tile_part<Slots, NA> &part, typename Slots::value_t (&limit)[2],
                                          size_t query0, size_t col0, int t, uint32_t capacity,
                                          uint32_t *__restrict__ count, uint32_t *__restrict__ found)
{
    for_each_slot_below(part, limit, [&](int j, int c, typename Slots::value_t) {
        const size_t query = query0 + 8 * (c / 2);
        const uint32_t at = atomicAdd(&count[query], 1u);
        if (at < capacity)
            found[query * capacity + at] = (uint32_t)(col0 + 8 * j + 2 * t + c % 2);
    });
}

// Starts the ring on a walk of `tiles` tiles from ref: its barriers, then the first kStages chunks on their way.
// By all the block's threads (a barrier inside).
template <class Ring>
__device__ __forceinline__ void ring_start(const wgmma_smem &s, const unsigned char *ref, size_t tiles)
{
    using walk = tile_walk<Ring::kSteps>;
    if (threadIdx.x == 0) {
        for (int i = 0; i < Ring::kStages; ++i) {
            mbar_init(s.full_bar(i), 1);
            asm volatile("st.shared.u32 [%0], 0;\n" ::"r"(s.count(i)) : "memory");
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int c = 0; c < Ring::kStages && (size_t)(c / walk::kChunks) < tiles; ++c)
            issue_chunk<Ring>(s, ref, c, (size_t)(c / walk::kChunks), c % walk::kChunks);
}

// The products of chunk `chunk` of a tile (a constant once inlined) in `stage`, its rows from `first_row` on (0, or
// 64 for a tile's second half: the chunk's 8-row groups are sbo bytes apart) and as many as acc holds (64
// accumulators a thread: 128 rows; 32: 64), into acc, as one commit group. The descriptors of a chunk's k-steps are
// 256 bytes apart, 16 in their address field (shared addresses are below 2^18, so the field's 14 bits never carry).
template <class Ring, class Acc, int NA>
__device__ __forceinline__ void stage_products(const wgmma_smem &s, const uint32_t (&a)[Ring::kSteps][4], int chunk,
                                               Acc (&acc)[NA], int stage, int first_row)
{
    using walk = tile_walk<Ring::kSteps>;
    wgmma_fence();
    const unsigned sbo = (unsigned)walk::steps(chunk) * 256; // 8 rows x the chunk's bytes
    const uint64_t desc = smem_desc(s.stages + stage * Ring::kStageBytes + first_row / 8 * sbo, sbo);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
        if (kk < walk::steps(chunk))
            wgmma_step(acc, a[chunk * 4 + kk], desc + (uint64_t)(kk * (256 >> 4)), chunk + kk > 0);
    wgmma_commit();
}

// A whole tile's chunk `chunk` into acc (stage_products) once its fill, at `at`, has arrived.
template <class Ring, class Acc>
__device__ __forceinline__ void chunk_products(const wgmma_smem &s, const uint32_t (&a)[Ring::kSteps][4], int chunk,
                                               Acc (&acc)[64], const ring_cursor<Ring::kStages> &at)
{
    mbar_wait(s.full_bar(at.stage), at.parity);
    stage_products<Ring>(s, a, chunk, acc, at.stage, 0);
}

// The block's walk over `tiles` tiles of reference rows, ref pointing at the first (tile `tile0` of the set, whose
// norms r holds; ring_start on the same ref): each tile's products of the thread's queries `a` into acc, then
// epilogue(part, tile), tile counted in the whole set. (Two sets of accumulators taking turns, the next tile's
// products running during this tile's epilogue, made the short rows' walks 1.4-1.8x slower: ptxas serializes the
// wgmmas when an epilogue reads accumulators while a wgmma issued in the pass before is in flight; see
// walk_tile_halves.)
template <class Ring, class Slots, class Epilogue>
__device__ __forceinline__ void walk_tiles(const wgmma_smem &s, const unsigned char *ref, const rows_prep &r,
                                           Slots &sl, const uint32_t (&a)[Ring::kSteps][4], size_t tile0,
                                           size_t tiles, int lane, Epilogue &&epilogue)
{
    using walk = tile_walk<Ring::kSteps>;
    typename Slots::acc_t acc[64];
    ring_cursor<Ring::kStages> at; // the walk's chunk
    int prev_stage = 0;            // the stage of the chunk before it
    for (size_t tile = 0; tile < tiles; ++tile) {
        sl.load_norms(r, tile0 + tile, lane % 4);
#pragma unroll
        for (int chunk = 0; chunk < walk::kChunks; ++chunk) {
            chunk_products<Ring>(s, a, chunk, acc, at);
            if (chunk >= 1) { // the previous chunk's products are done with its stage
                wgmma_wait<1>();
                release_chunk<Ring>(s, ref, prev_stage, tile, chunk - 1, tiles);
            }
            prev_stage = at.stage;
            at.advance();
        }
        wgmma_wait<0>();
        fence_accumulators(acc);
        release_chunk<Ring>(s, ref, prev_stage, tile, walk::kChunks - 1, tiles);
        epilogue(tile_part<Slots, 64>{sl, acc, 0}, tile0 + tile);
    }
}

// walk_tiles for tiles of one chunk, in halves of 64 rows with their own accumulators: the first half's epilogue
// runs while the second half's products are in flight (the folded kernel's re-screen walks so, its screen as
// walk_stashed). Across tiles they do not overlap: ptxas keeps the wgmmas
// asynchronous only when an epilogue reads the accumulators of a wgmma issued, in the same pass of the loop, before
// those in flight. Reading them with a wgmma in flight from the pass
// before (the next tile's products issued during this tile's epilogue), or one issued earlier in the pass, makes
// it serialize them all; passes of two or more tiles in sequence kept them asynchronous but were 1.3-3.1x slower
// (instruction fetch: each pass inlines the epilogue once a half).
template <class Ring, class Slots, class Epilogue>
__device__ __forceinline__ void walk_tile_halves(const wgmma_smem &s, const unsigned char *ref, const rows_prep &r,
                                                 Slots &sl, const uint32_t (&a)[Ring::kSteps][4], size_t tile0,
                                                 size_t tiles, int lane, Epilogue &&epilogue)
{
    static_assert(tile_walk<Ring::kSteps>::kChunks == 1, "a tile is one chunk");
    typename Slots::acc_t lo[32], hi[32];
    ring_cursor<Ring::kStages> at;        // the walk's chunk
    const unsigned count = (unsigned)tiles; // below 2^25 (rows are counted in 32 bits)
    for (unsigned tile = 0; tile < count; ++tile) {
        sl.load_norms(r, tile0 + tile, lane % 4);
        mbar_wait(s.full_bar(at.stage), at.parity);
        stage_products<Ring>(s, a, 0, lo, at.stage, 0);
        stage_products<Ring>(s, a, 0, hi, at.stage, 64);
        wgmma_wait<1>();
        fence_accumulators(lo);
        epilogue(tile_part<Slots, 32>{sl, lo, 0}, tile0 + tile);
        wgmma_wait<0>();
        fence_accumulators(hi);
        release_chunk<Ring>(s, ref, at.stage, tile, 0, tiles);
        epilogue(tile_part<Slots, 32>{sl, hi, 8}, tile0 + tile);
        at.advance();
    }
}

// The folded screen's walk (Slots::kStashed): walk_tile_halves with keep_tile in two steps. A tile's slots below
// the bounds go to the stash at each half's epilogue and enter the lists once the next tile's products are in
// flight (ptxas keeps those asynchronous: the inserts read no accumulators); the next stage's fill is tested
// while this tile's products run (its wait was a tenth of the stall samples); the release's count is read after the
// second half's epilogue (the atomic's return no longer holds it up).
template <class Ring, class Slots, int N>
__device__ __forceinline__ void walk_stashed(const wgmma_smem &s, const unsigned char *ref, const Slots &sl,
                                             const uint32_t (&a)[Ring::kSteps][4], size_t tiles, int lane,
                                             thread_best<int, N> &best, int (&thr)[2])
{
    static_assert(tile_walk<Ring::kSteps>::kChunks == 1, "a tile is one chunk");
    int lo[32], hi[32];
    ring_cursor<Ring::kStages> at;
    const unsigned count = (unsigned)tiles; // below 2^25 (rows are counted in 32 bits)
    int stashed = 0;                        // the stash's words, from the tile before
    size_t stashed_col0 = 0;
    bool filled = false; // the current stage's fill has arrived (tested during the tile before)
    for (unsigned tile = 0; tile < count; ++tile) {
        if (!filled)
            mbar_wait(s.full_bar(at.stage), at.parity);
        stage_products<Ring>(s, a, 0, lo, at.stage, 0);
        stage_products<Ring>(s, a, 0, hi, at.stage, 64);
        ring_cursor<Ring::kStages> next = at;
        next.advance();
        filled = mbar_test(s.full_bar(next.stage), next.parity);
        flush_stash<Slots>(best, thr, s.stash, stashed, stashed_col0, lane % 4);
        wgmma_wait<1>();
        fence_accumulators(lo);
        stash_half(tile_part<Slots, 32>{sl, lo, 0}, thr, s.stash, stashed);
        wgmma_wait<0>();
        fence_accumulators(hi);
        const unsigned before = release_count(s, at.stage);
        stash_half(tile_part<Slots, 32>{sl, hi, 8}, thr, s.stash, stashed);
        refill_if_last<Ring>(s, ref, at.stage, tile, 0, tiles, before);
        stashed_col0 = (size_t)tile * kTileRows;
        at = next;
    }
    flush_stash<Slots>(best, thr, s.stash, stashed, stashed_col0, lane % 4);
}

// The walk of a kernel: in halves of tiles for the two-blocks kernels of one chunk a tile (the folded int8 kernel
// only: fp16_slots and s8_slots run one block an SM, and wgmma_step has the half tile's int8 instruction alone).
template <class Ring, class Slots, class Epilogue>
__device__ __forceinline__ void walk(const wgmma_smem &s, const unsigned char *ref, const rows_prep &r, Slots &sl,
                                     const uint32_t (&a)[Ring::kSteps][4], size_t tile0, size_t tiles, int lane,
                                     Epilogue &&epilogue)
{
    if constexpr (tile_walk<Ring::kSteps>::kChunks == 1 && Ring::kBlocksPerSM == 2)
        walk_tile_halves<Ring>(s, ref, r, sl, a, tile0, tiles, lane, epilogue);
    else
        walk_tiles<Ring>(s, ref, r, sl, a, tile0, tiles, lane, epilogue);
}

template <int KSTEPS, class Slots>
__global__ void __launch_bounds__(kThreadsW, (ring_for<KSTEPS, Slots>::kBlocksPerSM))
    wgmma_screen_kernel(rows_prep q, rows_prep r, float ref_inv_scale, size_t n_tiles,
                        uint32_t *__restrict__ cand_id, float *__restrict__ cand_x, float *__restrict__ cand_bound)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using Ring = screen_ring_for<KSTEPS, Slots>;
    extern __shared__ __align__(1024) unsigned char smem[];
    const wgmma_smem s = wgmma_smem_at<Ring>(smem);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const size_t qb = (size_t)blockIdx.x * kBlockQueries;
    const unsigned char *ref = reinterpret_cast<const unsigned char *>(r.h);
    ring_start<Ring>(s, ref, n_tiles);

    const int row0 = warp * 16 + lane / 4; // the thread's queries: row0 and row0 + 8 of the block
    uint32_t a[KSTEPS][4];
    load_a<KSTEPS>(reinterpret_cast<const unsigned char *>(q.h), qb + row0, lane % 4, a);
    Slots sl;
    sl.begin(q, qb + row0, ref_inv_scale);
    using value_t = typename Slots::value_t;
    thread_best<value_t, Slots::kListEntries> best;
    best.clear(Slots::kEmpty);
    value_t thr[2]; // the lists' last values; the least value for queries never screened in (NaN norm)
#pragma unroll
    for (int h = 0; h < 2; ++h)
        thr[h] = isnan(q.norm2[qb + row0 + 8 * h]) ? Slots::threshold(-INFINITY) : Slots::kEmpty;
    if constexpr (Slots::kStashed)
        walk_stashed<Ring>(s, ref, sl, a, n_tiles, lane, best, thr);
    else
        walk<Ring>(s, ref, r, sl, a, 0, n_tiles, lane, [&](const auto &part, size_t tile) {
            keep_tile(best, part, thr, tile * kTileRows, lane % 4);
        });
    __syncthreads(); // every warp's last reads of the ring done: the lists go over it
    thread_lists_put(s.lists, threadIdx.x, best, [](value_t v) { return listed_or_inf<Slots>(v); });
    __syncwarp();
    thread_lists_store<Slots::kListEntries>(s.lists, warp, lane, qb, cand_id, cand_x, cand_bound);
#endif
}

// The re-screen (grip_bruteforce_wgmma_rescreen): block (x, y) walks row range y (of gridDim.y, in whole tiles) for
// queries 128 x .. 128 x + 127. Its shared memory is ring_for's: the screen's but for the folded kernel's stashes
// (there the screen's ring is shorter).
template <int KSTEPS, class Slots>
__global__ void __launch_bounds__(kThreadsW, (ring_for<KSTEPS, Slots>::kBlocksPerSM))
    wgmma_rescreen_kernel(rows_prep q, rows_prep r, float ref_inv_scale, size_t n_tiles,
                          const float *__restrict__ limit, uint32_t capacity, uint32_t *__restrict__ count,
                          uint32_t *__restrict__ found)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    const size_t per_range = (n_tiles + gridDim.y - 1) / gridDim.y, tile0 = blockIdx.y * per_range;
    if (tile0 >= n_tiles)
        return; // the whole block, before any barrier
    const size_t tiles = min(per_range, n_tiles - tile0);
    extern __shared__ __align__(1024) unsigned char smem[];
    const wgmma_smem s = wgmma_smem_at<ring_for<KSTEPS, Slots>>(smem);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const size_t qb = (size_t)blockIdx.x * kBlockQueries;
    const unsigned char *ref =
        reinterpret_cast<const unsigned char *>(r.h) + tile0 * kTileRows * (size_t)(KSTEPS * kStepBytes);
    ring_start<ring_for<KSTEPS, Slots>>(s, ref, tiles);

    const int row0 = warp * 16 + lane / 4;
    uint32_t a[KSTEPS][4];
    load_a<KSTEPS>(reinterpret_cast<const unsigned char *>(q.h), qb + row0, lane % 4, a);
    Slots sl;
    sl.begin(q, qb + row0, ref_inv_scale);
    typename Slots::value_t lim[2];
#pragma unroll
    for (int h = 0; h < 2; ++h)
        lim[h] = Slots::threshold(limit[qb + row0 + 8 * h]);
    walk<ring_for<KSTEPS, Slots>>(s, ref, r, sl, a, tile0, tiles, lane, [&](const auto &part, size_t tile) {
        emit_tile(part, lim, qb + row0, tile * kTileRows, lane % 4, capacity, count, found);
    });
#endif
}

// Shared-memory size set once per kernel, then the launch.
template <class Ring, class Kernel, class... Args>
cudaError_t launch_walk(Kernel kernel, dim3 grid, Args... args)
{
    const size_t smem = wgmma_smem_layout<Ring>::kBytes;
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess)
        return err;
    kernel<<<grid, kThreadsW, smem>>>(args...);
    return cudaGetLastError();
}

struct screen_launch {
    const rows_prep &q, &r;
    size_t m_padded, n_padded;
    float ref_inv_scale;
    uint32_t *cand_id;
    float *cand_x, *cand_bound;
    template <int KSTEPS, class Slots> cudaError_t run() const
    {
        return launch_walk<screen_ring_for<KSTEPS, Slots>>(wgmma_screen_kernel<KSTEPS, Slots>,
                                                           dim3((unsigned)(m_padded / kBlockQueries)), q, r,
                                                           ref_inv_scale, n_padded / kTileRows, cand_id, cand_x,
                                                           cand_bound);
    }
};

struct rescreen_launch {
    const rows_prep &q, &r;
    size_t m_padded, n_padded;
    float ref_inv_scale;
    const float *limit;
    int ranges;
    uint32_t capacity, *count, *found;
    template <int KSTEPS, class Slots> cudaError_t run() const
    {
        return launch_walk<ring_for<KSTEPS, Slots>>(wgmma_rescreen_kernel<KSTEPS, Slots>,
                                                    dim3((unsigned)(m_padded / kBlockQueries), (unsigned)ranges), q,
                                                    r, ref_inv_scale, n_padded / kTileRows, limit, capacity, count,
                                                    found);
    }
};

struct blocks_per_sm_query {
    int *blocks;
    template <int KSTEPS, class Slots> cudaError_t run() const
    {
        *blocks = ring_for<KSTEPS, Slots>::kBlocksPerSM;
        return cudaSuccess;
    }
};

// Runs launch.run<KSTEPS, Slots>() for the compiled kernel of `ksteps` and the operands.
template <class Launch> cudaError_t dispatch(int ksteps, grip_wgmma_operands operands, const Launch &launch)
{
#define GRIP_WGMMA_CASE(K, SLOTS)                                                                                      \
    case K:                                                                                                            \
        return launch.template run<K, SLOTS>();
    static_assert(GRIP_WGMMA_FOLD_MAX_STEPS == 2, "the folded cases below");
    if (operands == GRIP_WGMMA_S8_FOLDED) {
        switch (ksteps) {
            GRIP_WGMMA_CASE(2, s8_folded_slots)
        default:
            return cudaErrorInvalidValue;
        }
    }
    if (operands == GRIP_WGMMA_S8) {
        switch (ksteps) {
            GRIP_WGMMA_CASE(2, s8_slots)
            GRIP_WGMMA_CASE(3, s8_slots)
            GRIP_WGMMA_CASE(4, s8_slots)
            GRIP_WGMMA_CASE(6, s8_slots)
            GRIP_WGMMA_CASE(8, s8_slots)
            GRIP_WGMMA_CASE(10, s8_slots)
            GRIP_WGMMA_CASE(11, s8_slots)
            GRIP_WGMMA_CASE(12, s8_slots)
        default:
            return cudaErrorInvalidValue;
        }
    }
    switch (ksteps) {
        GRIP_WGMMA_CASE(2, fp16_slots)
        GRIP_WGMMA_CASE(3, fp16_slots)
        GRIP_WGMMA_CASE(4, fp16_slots)
        GRIP_WGMMA_CASE(6, fp16_slots)
        GRIP_WGMMA_CASE(8, fp16_slots)
        GRIP_WGMMA_CASE(10, fp16_slots)
        GRIP_WGMMA_CASE(12, fp16_slots)
        GRIP_WGMMA_CASE(16, fp16_slots)
        GRIP_WGMMA_CASE(20, fp16_slots)
        GRIP_WGMMA_CASE(22, fp16_slots)
        GRIP_WGMMA_CASE(23, fp16_slots)
    default:
        return cudaErrorInvalidValue;
    }
#undef GRIP_WGMMA_CASE
}

} // namespace

bool grip_bruteforce_wgmma_usable(void)
{
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, wgmma_screen_kernel<2, fp16_slots>) == cudaSuccess)
        return true;
    (void)cudaGetLastError(); // no sm_90a image for this device: not an error of the caller's
    return false;
}

int grip_bruteforce_wgmma_ksteps(size_t dim, bool s8)
{
    if (s8) {
        for (int steps : kCompiledStepsS8)
            if ((size_t)steps * 32 >= dim)
                return steps;
        return 0;
    }
    for (int steps : kCompiledSteps)
        if ((size_t)steps * 16 >= dim)
            return steps;
    return 0;
}

cudaError_t grip_bruteforce_wgmma_screen(const rows_prep &q, const rows_prep &r, size_t m_padded, size_t n_padded,
                                         int ksteps, grip_wgmma_operands operands, float ref_inv_scale,
                                         uint32_t *cand_id, float *cand_x, float *cand_bound)
{
    return dispatch(ksteps, operands,
                    screen_launch{q, r, m_padded, n_padded, ref_inv_scale, cand_id, cand_x, cand_bound});
}

cudaError_t grip_bruteforce_wgmma_rescreen(const rows_prep &q, const rows_prep &r, size_t m_padded, size_t n_padded,
                                           int ksteps, grip_wgmma_operands operands, float ref_inv_scale,
                                           const float *limit, int ranges, uint32_t capacity, uint32_t *count,
                                           uint32_t *found)
{
    return dispatch(ksteps, operands,
                    rescreen_launch{q, r, m_padded, n_padded, ref_inv_scale, limit, ranges, capacity, count, found});
}

cudaError_t grip_bruteforce_wgmma_blocks_per_sm(int ksteps, grip_wgmma_operands operands, int *blocks)
{
    return dispatch(ksteps, operands, blocks_per_sm_query{blocks});
}
