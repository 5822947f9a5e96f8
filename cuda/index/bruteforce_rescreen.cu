// bruteforce_rescreen.cu -- the re-screen of queries the screened lists could not certify (see
// bruteforce_rescreen.cuh).
//
// In batches of up to kBatch queries: their prepared rows are gathered into a block-padded set, the wgmma kernel
// walks all reference rows for them (split into row ranges so that a handful of queries still fills the GPU) and
// lists each query's rows below its limit, then one warp per query takes the exact distances of those rows (the
// CPU twin's arithmetic) and ranks them by (distance, row), the CPU's tie rule. Every row that may rank among the
// first k is listed, so the answer is exact.
#include "cuda/index/bruteforce_rescreen.cuh"
#include "cuda/index/bruteforce_wgmma.cuh"
#include "cuda/core/check.cuh"

#include <math.h>

namespace {

using namespace grip_screen;

constexpr int kThreads = 256;
constexpr size_t kBatch = 4096;        // queries re-screened at once: bounds the scratch
constexpr int kWarps = kThreads / 32;

// One batch's scratch, carved from one allocation: the gathered queries' prepared rows and scales, their limits
// and rows of the search, the found rows' counts, ids and exact distances.
struct batch_scratch {
    rows_prep sub;
    float *limit;
    uint32_t *query, *count, *found;
    float *found_d;
};

size_t batch_carve(batch_scratch *b, unsigned char *base, size_t padded, size_t row_bytes, uint32_t cap)
{
    size_t off = 0;
    auto take = [&](size_t bytes) {
        unsigned char *at = base ? base + off : nullptr;
        off += round_up(bytes, 256);
        return at;
    };
    b->sub = rows_prep{};
    b->sub.h = reinterpret_cast<__half *>(take(padded * row_bytes));
    b->sub.inv_scale = reinterpret_cast<float *>(take(padded * sizeof(float)));
    b->limit = reinterpret_cast<float *>(take(padded * sizeof(float)));
    b->query = reinterpret_cast<uint32_t *>(take(padded * sizeof(uint32_t)));
    b->count = reinterpret_cast<uint32_t *>(take(padded * sizeof(uint32_t)));
    b->found = reinterpret_cast<uint32_t *>(take(padded * cap * sizeof(uint32_t)));
    b->found_d = reinterpret_cast<float *>(take(padded * cap * sizeof(float)));
    return off;
}

// Copies the prepared rows, scales and limits of retried queries first .. first + count - 1 to places 0 .., the
// places up to `padded` given zero rows and a limit of -inf (nothing found). One warp a place.
__global__ void gather_kernel(rows_prep q, size_t row_words, grip_bruteforce_retry retry, size_t first, size_t count,
                              size_t padded, batch_scratch b)
{
    const size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (i >= padded)
        return;
    const bool real = i < count;
    const size_t from = real ? retry.query[first + i] : 0;
    const uint32_t *src = reinterpret_cast<const uint32_t *>(q.h) + from * row_words;
    uint32_t *dst = reinterpret_cast<uint32_t *>(b.sub.h) + i * row_words;
    for (size_t w = lane; w < row_words; w += 32)
        dst[w] = real ? src[w] : 0u;
    if (lane == 0) {
        b.sub.inv_scale[i] = real ? q.inv_scale[from] : 0.0f;
        b.limit[i] = real ? retry.limit[first + i] : -INFINITY;
        b.query[i] = (uint32_t)from;
    }
}

// Whether (d, id) comes before (e, jd): the CPU's order, distance then row.
__device__ __forceinline__ bool before(float d, uint32_t id, float e, uint32_t jd)
{
    return d < e || (d == e && id < jd);
}

// One warp per gathered query: the exact distances of its found rows (+inf for those the exact kernel would not
// list: above max_sqdist, or not finite), then k rounds, each taking the first (distance, row) after the last one
// taken; rounds that find nothing write the padding (UINT32_MAX, +inf). A query whose count passed the capacity
// goes to the failed list instead.
__global__ void __launch_bounds__(kThreads)
    finish_kernel(const float *__restrict__ ref, size_t n_ref, const float *__restrict__ queries, size_t dim,
                  size_t count, batch_scratch b, uint32_t cap, int k, float max_sqdist, uint32_t *__restrict__ ids,
                  float *__restrict__ sqdist, uint32_t *__restrict__ failed, uint32_t *__restrict__ n_failed)
{
    const size_t i = (size_t)blockIdx.x * kWarps + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (i >= count)
        return; // the whole warp
    const size_t qi = b.query[i];
    const uint32_t n = b.count[i];
    if (n > cap) {
        if (lane == 0)
            failed[atomicAdd(n_failed, 1u)] = (uint32_t)qi;
        return;
    }
    const uint32_t *rows = b.found + i * cap;
    float *d = b.found_d + i * cap;
    for (uint32_t j = lane; j < n; j += 32) {
        const float e = rows[j] < n_ref ? exact_distance(queries + qi * dim, ref + (size_t)rows[j] * dim, dim)
                                        : INFINITY; // a padding row (folded norms list them)
        d[j] = e < INFINITY && e <= max_sqdist ? e : INFINITY;
    }
    __syncwarp();
    float last_d = -INFINITY;
    uint32_t last_id = 0;
    for (int r = 0; r < k; ++r) {
        float best_d = INFINITY;
        uint32_t best_id = UINT32_MAX;
        for (uint32_t j = lane; j < n; j += 32) {
            const float dj = d[j];
            const uint32_t id = rows[j];
            if (dj < INFINITY && before(last_d, last_id, dj, id) && before(dj, id, best_d, best_id)) {
                best_d = dj;
                best_id = id;
            }
        }
        for (int o = 16; o > 0; o >>= 1) {
            const float od = __shfl_xor_sync(kFullMask, best_d, o);
            const uint32_t oid = __shfl_xor_sync(kFullMask, best_id, o);
            if (before(od, oid, best_d, best_id)) {
                best_d = od;
                best_id = oid;
            }
        }
        if (lane == 0) {
            ids[qi * (size_t)k + (size_t)r] = best_id;
            sqdist[qi * (size_t)k + (size_t)r] = best_d;
        }
        last_d = best_d;
        last_id = best_id;
    }
}

// Row ranges per block of queries: enough blocks for one wave of the GPU (`slots`: the SMs times the kernel's
// blocks an SM), at least 8 tiles a range so that the ring's start is paid back.
int row_ranges(int slots, size_t query_blocks, size_t n_tiles)
{
    const size_t want = query_blocks >= (size_t)slots ? 1 : (size_t)slots / query_blocks;
    const size_t most = n_tiles / 8 > 0 ? n_tiles / 8 : 1;
    return (int)(want < most ? want : most);
}

grip_status rescreen_batches(grip_ctx *ctx, const grip_bruteforce_rescreen_rows &rows, unsigned char *mem, size_t batch,
                             uint32_t cap, const float *ref, const float *queries, size_t dim,
                             const grip_bruteforce_retry &retry, uint32_t k, float max_sqdist, uint32_t *ids,
                             float *sqdist, uint32_t *failed, uint32_t *n_failed)
{
    int sms = 0, per_sm = 1;
    GRIP_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx->device));
    GRIP_CUDA_CHECK(ctx, grip_bruteforce_wgmma_blocks_per_sm(rows.ksteps, rows.operands, &per_sm));
    for (size_t first = 0; first < retry.count; first += batch) {
        const size_t count = retry.count - first < batch ? retry.count - first : batch;
        const size_t padded = round_up(count, kBlockQueries);
        batch_scratch b;
        batch_carve(&b, mem, padded, rows.row_bytes, cap);
        gather_kernel<<<(unsigned)((padded * 32 + kThreads - 1) / kThreads), kThreads>>>(
            *rows.q, rows.row_bytes / 4, retry, first, count, padded, b);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
        GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(b.count, 0, padded * sizeof(uint32_t), 0));
        const int ranges = row_ranges(sms * per_sm, padded / kBlockQueries, rows.n_padded / kTileRows);
        GRIP_CUDA_CHECK_LAUNCH(ctx, grip_bruteforce_wgmma_rescreen(b.sub, *rows.r, padded, rows.n_padded, rows.ksteps,
                                                            rows.operands, rows.ref_inv_scale, b.limit, ranges, cap,
                                                            b.count, b.found));
        finish_kernel<<<(unsigned)((count + kWarps - 1) / kWarps), kThreads>>>(
            ref, rows.n, queries, dim, count, b, cap, (int)k, max_sqdist, ids, sqdist, failed, n_failed);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
    }
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

} // namespace

size_t grip_bruteforce_rescreen_bytes(size_t m, size_t row_bytes, uint32_t capacity)
{
    batch_scratch b;
    const size_t batch = round_up(m < kBatch ? m : kBatch, kBlockQueries);
    return m == 0 ? 0 : batch_carve(&b, nullptr, batch, row_bytes, capacity);
}

grip_status grip_bruteforce_rescreen(grip_ctx *ctx, const grip_bruteforce_rescreen_rows &rows, const float *ref,
                              const float *queries, size_t dim, const grip_bruteforce_retry &retry, uint32_t capacity,
                              uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist, uint32_t *failed,
                              uint32_t *n_failed)
{
    if (retry.count == 0)
        return GRIP_OK;
    const size_t batch = retry.count < kBatch ? retry.count : kBatch;
    void *mem = NULL;
    grip_status st = grip_cuda_alloc(ctx, grip_bruteforce_rescreen_bytes(batch, rows.row_bytes, capacity), &mem);
    if (st != GRIP_OK)
        return st;
    st = rescreen_batches(ctx, rows, (unsigned char *)mem, batch, capacity, ref, queries, dim, retry, k, max_sqdist,
                          ids, sqdist, failed, n_failed);
    grip_cuda_free(mem);
    if (st != GRIP_OK)
        grip_fail_append(ctx, "knn (cuda): re-screening %u queries", retry.count);
    return st;
}
