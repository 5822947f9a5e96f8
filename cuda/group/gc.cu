// gc.cu -- geometric-consistency grouping on the GPU (src/group/gc_cuda.h).
//
//   1. the visiting order: a stable radix sort of the correspondences by descriptor distance (-0 made +0, so that
//      the sort's order is C's <), ties staying in index order, as the CPU twin's qsort comparator orders them;
//   2. the pair matrix: bit b of row a says whether the a-th and b-th correspondences in that order agree
//      (gc_math.h, the CPU twin's test); one thread a 32-bit word; the diagonal is 0;
//   3. the greedy growth, one block of kGrowWarps warps, in speculative rounds. A warp grows one seed's set: the
//      candidates are its row without the taken ones; the next member is the lowest candidate bit past the last
//      member (a warp-wide minimum), and its row is ANDed into the candidates -- so a correspondence joins iff it
//      agrees with every member before it, in the CPU twin's order. A round gives the next kGrowWarps seeds (in the
//      visiting order, from `start`) one warp each, all under the same taken bits; then the first of them, in
//      order, whose set has more than `threshold` members is kept: written out, its members marked taken, and the
//      next round starts at the seed after it (the later seeds' sets are grown again under the new taken bits).
//      With none kept, the next round starts after the round's last seed.
// Why that is the CPU twin's result: a seed's set depends only on its row, the rows and the taken bits when it is
// grown. The CPU twin changes the taken bits only when it keeps a set, so every seed of a round up to and including
// the first kept one sees, in the CPU twin, the taken bits the round started with -- the ones the warps used:
// their sets (and whether a seed is skipped as taken) are exact, and so is the decision to reject or keep them.
// Ordering: within a warp, the lanes share the candidate bits (shared or global memory), every write one lane makes
// that others read ordered by __syncwarp; across warps, the set sizes (shared memory), the kept set's positions
// and the taken bits (global memory) are handed over only across __syncthreads, which orders both memories among
// the block's threads: grow | bar | pick the first kept set, write it, mark its members taken | bar | next round.
#include "cuda/core/check.cuh"
#include "cuda/group/group_dev.cuh"

extern "C" {
#include "group/gc_cuda.h"
}
#include "group/gc_math.h"

#include <cub/cub.cuh>
#include <stdlib.h>
#include <string.h>

namespace {

constexpr int kThreads = 256;
constexpr unsigned kFullWarp = 0xffffffffu;

__global__ void order_keys_kernel(const grip_corr *__restrict__ corr, uint32_t n, float *__restrict__ keys,
                                  uint32_t *__restrict__ index)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    keys[i] = GRIP_FADD(corr[i].sqdist, 0.0f); // -0 + 0 = +0: the radix sort then ties them as C's < does
    index[i] = i;
}

// Word w of row a (positions in the visiting order), for all rows at once: grid (words, rows, by strides in y).
__global__ void pair_matrix_kernel(const grip_corr *__restrict__ corr, const uint32_t *__restrict__ order, uint32_t n,
                                   uint32_t words, const float *__restrict__ model_kp,
                                   const float *__restrict__ scene_kp, double size, uint32_t *__restrict__ rows)
{
    const uint32_t w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= words)
        return;
    for (uint32_t a = blockIdx.y; a < n; a += gridDim.y) {
        const grip_corr ca = corr[order[a]];
        const float *sa = scene_kp + 3 * (size_t)ca.scene, *ma = model_kp + 3 * (size_t)ca.model;
        uint32_t bits = 0;
        for (uint32_t k = 0; k < 32; ++k) {
            const uint32_t b = w * 32 + k;
            if (b >= n)
                break;
            if (b == a)
                continue;
            const grip_corr cb = corr[order[b]];
            if (grip_gc_consistent(sa, ma, scene_kp + 3 * (size_t)cb.scene, model_kp + 3 * (size_t)cb.model, size))
                bits |= 1u << k;
        }
        rows[(size_t)a * words + w] = bits;
    }
}

// The lowest set bit of `bits` (words long) at or past position pos, or UINT32_MAX; warp-wide, every lane gets it.
__device__ uint32_t next_candidate(const uint32_t *bits, uint32_t words, uint32_t pos, uint32_t lane)
{
    uint32_t best = UINT32_MAX;
    for (uint32_t w = pos / 32 + lane; w < words; w += 32) {
        uint32_t word = bits[w];
        if (w == pos / 32)
            word &= ~0u << (pos % 32);
        if (word) {
            best = w * 32 + (uint32_t)(__ffs(word) - 1);
            break; // this lane's later words hold only larger positions
        }
    }
    return __reduce_min_sync(kFullWarp, best);
}

// The warps of the growth's block: each round grows this many seeds' sets at once.
constexpr uint32_t kGrowWarps = 32;
// The dynamic shared memory the growth may use for its warps' candidate bits without opting in to more: 48 KiB
// a block in all, less the kernel's static set_size array.
constexpr size_t kGrowSharedLimit = 48 * 1024 - kGrowWarps * sizeof(uint32_t);

// One warp grows seed i's set under the taken bits: cand (words long) is the warp's scratch, set_pos (n long)
// receives the members' positions (the seed first, then the rest in ascending order). Returns the set's size.
__device__ uint32_t grow_set(const uint32_t *__restrict__ rows, uint32_t words, const uint32_t *taken, uint32_t i,
                             uint32_t *cand, uint32_t *set_pos, uint32_t lane)
{
    const uint32_t *row = rows + (size_t)i * words;
    for (uint32_t w = lane; w < words; w += 32)
        cand[w] = row[w] & ~taken[w];
    if (lane == 0)
        set_pos[0] = i;
    uint32_t n_set = 1;
    __syncwarp();
    for (uint32_t pos = 0;;) {
        const uint32_t j = next_candidate(cand, words, pos, lane);
        if (j == UINT32_MAX)
            break;
        __syncwarp(); // every lane's reads of cand (next_candidate) come before the ANDs below
        if (lane == 0)
            set_pos[n_set] = j;
        ++n_set;
        const uint32_t *rj = rows + (size_t)j * words;
        for (uint32_t w = lane; w < words; w += 32)
            cand[w] &= rj[w];
        __syncwarp();
        pos = j + 1;
    }
    return n_set;
}

// One block of kGrowWarps warps, in rounds (the file's comment, step 3). cand_global: kGrowWarps x words words,
// used when cand_in_shared is 0 (else the dynamic shared memory holds them); set_pos: kGrowWarps x n positions.
// members: the kept sets' correspondence indices, set after set; spans: each set's place there (first, size).
__global__ void __launch_bounds__(kGrowWarps * 32)
    grow_sets_kernel(const uint32_t *__restrict__ rows, const uint32_t *__restrict__ order, uint32_t n, uint32_t words,
                     long long threshold, uint32_t *taken, uint32_t *cand_global, int cand_in_shared, uint32_t *set_pos,
                     uint32_t *__restrict__ members, uint32_t *__restrict__ spans, uint32_t *__restrict__ n_sets_out)
{
    extern __shared__ uint32_t cand_shared[];
    __shared__ uint32_t set_size[kGrowWarps]; // 0: the warp's seed was taken or past the end
    const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    uint32_t *cand = (cand_in_shared ? cand_shared : cand_global) + (size_t)warp * words;
    uint32_t *my_set = set_pos + (size_t)warp * n;
    // Every thread keeps the same copies of start, total and n_sets: each changes by what all threads read alike.
    uint32_t start = 0, total = 0, n_sets = 0;
    while (start < n) {
        const uint32_t i = start + warp;
        uint32_t n_set = 0;
        if (i < n && !((taken[i / 32] >> (i % 32)) & 1u)) // the same for the warp's lanes: no lane writes taken now
            n_set = grow_set(rows, words, taken, i, cand, my_set, lane);
        if (lane == 0)
            set_size[warp] = n_set;
        __syncthreads(); // the sizes, the sets' positions and every read of taken come before what follows
        uint32_t kept = kGrowWarps;
        for (uint32_t w = 0; w < kGrowWarps; ++w)
            if (set_size[w] != 0 && (long long)set_size[w] > threshold) {
                kept = w;
                break;
            }
        if (kept < kGrowWarps) {
            const uint32_t n_kept = set_size[kept];
            const uint32_t *kept_set = set_pos + (size_t)kept * n;
            for (uint32_t a = threadIdx.x; a < n_kept; a += blockDim.x) {
                const uint32_t p = kept_set[a];
                members[total + a] = order[p];
                atomicOr(&taken[p / 32], 1u << (p % 32));
            }
            if (threadIdx.x == 0) {
                spans[2 * (size_t)n_sets] = total;
                spans[2 * (size_t)n_sets + 1] = n_kept;
            }
            total += n_kept;
            ++n_sets;
            start += kept + 1;
        } else {
            start += kGrowWarps;
        }
        __syncthreads(); // the taken bits marked and the reads of set_size and set_pos come before the next round
    }
    if (threadIdx.x == 0)
        *n_sets_out = n_sets;
}

unsigned int blocks(size_t n)
{
    return (unsigned int)((n + kThreads - 1) / kThreads);
}

// The bytes of the growth's candidate bits, one words-long bit set per warp.
size_t grow_cand_shared_bytes(size_t words)
{
    return kGrowWarps * words * sizeof(uint32_t);
}

// The device arrays of one call; all freed by gc_free (cand only when the growth's shared memory can't hold it).
struct gc_dev {
    grip_corr *corr;
    float *model_kp, *scene_kp, *keys[2];
    uint32_t *index[2], *rows, *taken, *cand, *set_pos, *members, *spans, *n_sets;
    void *temp;
};

void gc_free(gc_dev *d)
{
    void *all[] = {d->corr,  d->model_kp, d->scene_kp, d->keys[0], d->keys[1], d->index[0], d->index[1], d->rows,
                   d->taken, d->cand,     d->set_pos,  d->members, d->spans,   d->n_sets,   d->temp};
    for (void *p : all)
        grip_cuda_free(p);
    memset(d, 0, sizeof *d);
}

grip_status gc_alloc(grip_ctx *ctx, gc_dev *d, const float *model_kp, size_t n_model, const float *scene_kp,
                     size_t n_scene, const grip_corr *corr, size_t n, size_t words)
{
    grip_status st = grip_group_dev_upload(ctx, &d->corr, corr, n);
    if (!st)
        st = grip_group_dev_upload(ctx, &d->model_kp, model_kp, n_model * 3);
    if (!st)
        st = grip_group_dev_upload(ctx, &d->scene_kp, scene_kp, n_scene * 3);
    for (int b = 0; b < 2 && !st; ++b) {
        st = grip_group_dev_alloc(ctx, &d->keys[b], n);
        if (!st)
            st = grip_group_dev_alloc(ctx, &d->index[b], n);
    }
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->rows, n * words);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->taken, words);
    if (!st && grow_cand_shared_bytes(words) > kGrowSharedLimit) // else the growth's block holds them
        st = grip_group_dev_alloc(ctx, &d->cand, kGrowWarps * words);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->set_pos, kGrowWarps * n);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->members, n);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->spans, 2 * n);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->n_sets, 1);
    return st;
}

grip_status consensus_on_device(grip_ctx *ctx, gc_dev *d, const grip_gc_params *p, uint32_t n, uint32_t words)
{
    size_t bytes = 0;
    GRIP_CUDA_CHECK(
        ctx, cub::DeviceRadixSort::SortPairs(NULL, bytes, d->keys[0], d->keys[1], d->index[0], d->index[1], (int)n));
    grip_status st = grip_cuda_alloc(ctx, bytes, &d->temp);
    if (st)
        return st;
    order_keys_kernel<<<blocks(n), kThreads>>>(d->corr, n, d->keys[0], d->index[0]);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_LAUNCH(
        ctx, cub::DeviceRadixSort::SortPairs(d->temp, bytes, d->keys[0], d->keys[1], d->index[0], d->index[1], (int)n));
    // a row's words across x, in whole warps up to kThreads: the tutorial's 57 words take 2 warps a row, not 8
    const uint32_t row_threads = words < kThreads ? (words + 31) / 32 * 32 : kThreads;
    const dim3 grid((words + row_threads - 1) / row_threads, n < 65535u ? n : 65535u);
    pair_matrix_kernel<<<grid, row_threads>>>(d->corr, d->index[1], n, words, d->model_kp, d->scene_kp, p->size,
                                              d->rows);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(d->taken, 0, words * sizeof *d->taken, 0));
    const size_t cand_bytes = grow_cand_shared_bytes(words);
    const int cand_in_shared = cand_bytes <= kGrowSharedLimit;
    grow_sets_kernel<<<1, kGrowWarps * 32, cand_in_shared ? cand_bytes : 0>>>(
        d->rows, d->index[1], n, words, (long long)p->threshold, d->taken, d->cand, cand_in_shared, d->set_pos,
        d->members, d->spans, d->n_sets);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}

// The kept sets as clusters (members in the order they joined, votes = size, identity poses).
grip_status sets_to_clusters(grip_ctx *ctx, const gc_dev *d, size_t n, grip_cluster **out, size_t *n_out)
{
    uint32_t n_sets = 0;
    grip_status st = grip_cuda_copy_to_host(ctx, &n_sets, d->n_sets, sizeof n_sets);
    if (st || n_sets == 0)
        return st;
    // spans: set c's first member at 2 c, its size at 2 c + 1 -- one copy for both
    uint32_t *spans = (uint32_t *)malloc(2 * (size_t)n_sets * sizeof *spans);
    uint32_t *members = (uint32_t *)malloc(n * sizeof *members);
    *out = (grip_cluster *)calloc(n_sets, sizeof **out);
    if (!spans || !members || !*out)
        st = grip_fail(ctx, GRIP_ENOMEM, "group.gc (cuda): out of memory for %u clusters", n_sets);
    if (!st)
        st = grip_cuda_copy_to_host(ctx, spans, d->spans, 2 * (size_t)n_sets * sizeof *spans);
    // Only the members of kept sets were written: copy those (initcheck rightly calls the rest uninitialized).
    size_t used = 0;
    for (uint32_t c = 0; c < n_sets && !st; ++c)
        if ((size_t)spans[2 * c] + spans[2 * c + 1] > used)
            used = (size_t)spans[2 * c] + spans[2 * c + 1];
    if (!st && used > n)
        st = grip_fail(ctx, GRIP_EINTERNAL, "group.gc (cuda): sets hold %zu members of %zu correspondences", used, n);
    if (!st && used)
        st = grip_cuda_copy_to_host(ctx, members, d->members, used * sizeof *members);
    for (uint32_t c = 0; c < n_sets && !st; ++c) {
        grip_cluster *cl = &(*out)[c];
        const uint32_t set_first = spans[2 * c], set_size = spans[2 * c + 1];
        cl->members = (uint32_t *)malloc(set_size * sizeof *cl->members);
        if (!cl->members) {
            st = grip_fail(ctx, GRIP_ENOMEM, "group.gc (cuda): out of memory for a %u-member cluster", set_size);
            break;
        }
        memcpy(cl->members, members + set_first, set_size * sizeof *cl->members);
        cl->n_members = set_size;
        cl->votes = (double)set_size;
        grip_pose_identity(cl->pose);
        ++*n_out;
    }
    free(spans);
    free(members);
    if (*out && *n_out == 0) {
        free(*out);
        *out = NULL;
    }
    return st;
}

} // namespace

extern "C" grip_status grip_gc_consensus_cuda(grip_ctx *ctx, const grip_gc_params *params, const float *model_kp_xyz,
                                              size_t n_model_kp, const float *scene_kp_xyz, size_t n_scene_kp,
                                              const grip_corr *corr, size_t n_corr, grip_cluster **out, size_t *n_out)
{
    if (!out || !n_out)
        return grip_fail(ctx, GRIP_EINVAL, "group.gc: out and n_out must not be NULL");
    *out = NULL;
    *n_out = 0;
    grip_status st = grip_gc_check_params(ctx, params);
    if (st == GRIP_OK)
        st = grip_corr_check(ctx, "group.gc", corr, n_corr, model_kp_xyz, n_model_kp, scene_kp_xyz, n_scene_kp);
    if (st != GRIP_OK || n_corr == 0)
        return st;
    if (n_corr > (size_t)INT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "group.gc (cuda): %zu correspondences, more than the GPU sorts", n_corr);
    const size_t words = (n_corr + 31) / 32;
    gc_dev d;
    memset(&d, 0, sizeof d);
    st = gc_alloc(ctx, &d, model_kp_xyz, n_model_kp, scene_kp_xyz, n_scene_kp, corr, n_corr, words);
    if (!st)
        st = consensus_on_device(ctx, &d, params, (uint32_t)n_corr, (uint32_t)words);
    if (!st)
        st = sets_to_clusters(ctx, &d, n_corr, out, n_out);
    gc_free(&d);
    if (st != GRIP_OK) {
        grip_clusters_free(*out, *n_out);
        *out = NULL;
        *n_out = 0;
    }
    return st;
}

extern "C" grip_status grip_gc_cluster_cuda(grip_ctx *ctx, const grip_gc_params *params, const float *model_kp_xyz,
                                            size_t n_model_kp, const float *scene_kp_xyz, size_t n_scene_kp,
                                            const grip_corr *corr, size_t n_corr, grip_cluster **out, size_t *n_out)
{
    grip_status st = grip_gc_consensus_cuda(ctx, params, model_kp_xyz, n_model_kp, scene_kp_xyz, n_scene_kp, corr,
                                            n_corr, out, n_out);
    if (st != GRIP_OK)
        return st;
    const grip_ransac_params rp = {params->size, params->ransac_iterations, params->seed, params->ransac_rounds,
                                   params->threshold >= 0 ? (uint32_t)params->threshold + 1 : 0};
    return grip_clusters_ransac(ctx, &rp, model_kp_xyz, scene_kp_xyz, corr, out, n_out);
}
