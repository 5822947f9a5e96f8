// normals_propagate.cu -- orientation of a surface's normals by breadth-first propagation over the symmetric kNN
// graph, the twin of src/descriptor/normals_propagate.c (see src/descriptor/normals_propagate_cuda.h). Every decision
// is normals_propagate_math.h's, shared with the CPU; the order between levels is given by kernel launches on one
// stream (a launch sees every write of the launches before it), never by anything within a launch: in a level's
// first launch the threads only read the state and normals (written by earlier launches) and combine offers by
// atomicMax; in its second each thread writes only its own point's rows.
#include "cuda/core/check.cuh"
#include "cuda/core/device.cuh"
#include "cuda/spatial/surface.cuh"

extern "C" {
#include "core/cuda_bridge.h"
#include "descriptor/normals_propagate_cuda.h"
}
#include "descriptor/normals_propagate_math.h"

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(uint32_t n)
{
    return (n + kThreads - 1) / kThreads;
}

__device__ __forceinline__ void load_normal(const float4 *normals, uint32_t i, float n[3])
{
    const float4 r = normals[i];
    n[0] = r.x;
    n[1] = r.y;
    n[2] = r.z;
}

// Each defined point's out-list: of its k + 1 nearest (the search's list, ties to the lower index), the first k that
// are neither the point itself nor undefined (normals_propagate.c graph_build); count[p] of them in out[p * k ...].
__global__ void __launch_bounds__(kThreads)
    graph_kernel(const float *__restrict__ xyz, const float4 *__restrict__ normals, uint32_t n, uint32_t k,
                 const uint64_t *__restrict__ offsets, const uint32_t *__restrict__ idx, uint32_t *__restrict__ out,
                 uint32_t *__restrict__ count)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n)
        return;
    float np[3];
    load_normal(normals, p, np);
    uint32_t kept = 0;
    if (grip_propagate_defined(xyz + 3 * (size_t)p, np))
        for (uint64_t e = offsets[p]; e < offsets[p + 1] && kept < k; ++e) {
            const uint32_t j = idx[e];
            float nj[3];
            load_normal(normals, j, nj);
            if (j != p && grip_propagate_defined(xyz + 3 * (size_t)j, nj))
                out[(size_t)p * k + kept++] = j;
        }
    count[p] = kept;
}

// The seed key of every point not yet oriented with a defined normal, maximised into *seed (0: none left).
__global__ void __launch_bounds__(kThreads)
    seed_kernel(const float *__restrict__ xyz, const float4 *__restrict__ normals, const uint32_t *__restrict__ state,
                uint32_t n, float3 c, unsigned long long *seed)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n || state[p] != GRIP_PROPAGATE_UNSET)
        return;
    float np[3];
    load_normal(normals, p, np);
    if (!grip_propagate_defined(xyz + 3 * (size_t)p, np))
        return;
    const float cc[3] = {c.x, c.y, c.z};
    atomicMax(seed, (unsigned long long)grip_propagate_seed_key(xyz + 3 * (size_t)p, cc, p));
}

// The round's seed: turned away from the centroid by the outward rule, oriented at `level`.
__global__ void start_kernel(const float *__restrict__ xyz, float4 *__restrict__ normals, uint32_t *__restrict__ state,
                             const unsigned long long *__restrict__ seed, float3 c, uint32_t level)
{
    const uint32_t p = grip_propagate_edge_source(*seed);
    float np[3];
    load_normal(normals, p, np);
    const float cc[3] = {c.x, c.y, c.z};
    if (grip_propagate_seed_turns(xyz + 3 * (size_t)p, cc, np)) {
        const float4 r = normals[p];
        normals[p] = make_float4(-r.x, -r.y, -r.z, r.w);
    }
    state[p] = level;
}

// Level `level`, first launch: the frontier is every point oriented at a level in [since, level) -- the level before,
// or at a stage's first level everything the round has oriented. Every point not yet oriented takes the best edge key
// the stage accepts from its own list's frontier points, and every frontier point offers itself to its list's points
// not yet oriented: together, every edge of the symmetric graph between the two.
__global__ void __launch_bounds__(kThreads)
    offer_kernel(const float *__restrict__ xyz, const float4 *__restrict__ normals, const uint32_t *__restrict__ state,
                 uint32_t n, uint32_t k, const uint32_t *__restrict__ out, const uint32_t *__restrict__ count,
                 uint32_t since, uint32_t level, float accept, unsigned long long *__restrict__ best)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n)
        return;
    const uint32_t sp = state[p];
    const bool unset = sp == GRIP_PROPAGATE_UNSET;
    if (!unset && (sp < since || sp >= level))
        return;
    float np[3];
    load_normal(normals, p, np);
    const uint32_t *list = out + (size_t)p * k;
    if (unset) { // pull: count[p] is 0 for a point that takes no part
        uint64_t mine = 0;
        for (uint32_t e = 0; e < count[p]; ++e) {
            const uint32_t j = list[e], sj = state[j];
            if (sj < since || sj >= level)
                continue;
            float nj[3];
            load_normal(normals, j, nj);
            const uint64_t key = grip_propagate_edge_key(np, nj, j);
            const int tangent = grip_propagate_tangent(xyz + 3 * (size_t)p, xyz + 3 * (size_t)j, np, nj);
            if (grip_propagate_accepts(key, accept, tangent) && key > mine)
                mine = key;
        }
        if (mine)
            atomicMax(best + p, (unsigned long long)mine);
        return;
    }
    for (uint32_t e = 0; e < count[p]; ++e) { // push (every listed point takes part)
        const uint32_t i = list[e];
        if (state[i] != GRIP_PROPAGATE_UNSET)
            continue;
        float ni[3];
        load_normal(normals, i, ni);
        const uint64_t key = grip_propagate_edge_key(ni, np, p);
        const int tangent = grip_propagate_tangent(xyz + 3 * (size_t)i, xyz + 3 * (size_t)p, ni, np);
        if (grip_propagate_accepts(key, accept, tangent))
            atomicMax(best + i, (unsigned long long)key);
    }
}

// Level `level`, second launch: every point offered an edge follows its source (turning when n_i . n_j < 0), is
// oriented at `level`, and is counted.
__global__ void __launch_bounds__(kThreads)
    orient_kernel(float4 *__restrict__ normals, uint32_t *__restrict__ state, uint32_t n, uint32_t level,
                  unsigned long long *__restrict__ best, unsigned int *__restrict__ oriented)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n || best[p] == 0)
        return;
    const uint32_t j = grip_propagate_edge_source(best[p]);
    float ni[3], nj[3];
    load_normal(normals, p, ni);
    load_normal(normals, j, nj); // j was oriented before this level: no thread of this launch writes it
    if (grip_propagate_turns(ni, nj)) {
        const float4 r = normals[p];
        normals[p] = make_float4(-r.x, -r.y, -r.z, r.w);
    }
    state[p] = level;
    best[p] = 0;
    atomicAdd(oriented, 1u);
}

// The round's vote (normals_propagate.c round_vote): of the points oriented at a level in [first, level), how many
// face the centroid (votes[0]) and how many there are (votes[1]); integer counts, the same in any order.
__global__ void __launch_bounds__(kThreads)
    vote_kernel(const float *__restrict__ xyz, const float4 *__restrict__ normals, const uint32_t *__restrict__ state,
                uint32_t n, uint32_t first, uint32_t level, float3 c, unsigned int *__restrict__ votes)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n || state[p] < first || state[p] >= level)
        return;
    float np[3];
    load_normal(normals, p, np);
    const float cc[3] = {c.x, c.y, c.z};
    if (grip_propagate_seed_turns(xyz + 3 * (size_t)p, cc, np))
        atomicAdd(votes, 1u);
    atomicAdd(votes + 1, 1u);
}

// The whole round turned: every point oriented at a level in [first, level).
__global__ void __launch_bounds__(kThreads)
    turn_round_kernel(float4 *__restrict__ normals, const uint32_t *__restrict__ state, uint32_t n, uint32_t first,
                      uint32_t level)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n || state[p] < first || state[p] >= level)
        return;
    const float4 r = normals[p];
    normals[p] = make_float4(-r.x, -r.y, -r.z, r.w);
}

// Working memory, from grip_cuda_alloc; allocated and freed by the entry point.
struct walk_buffers {
    uint32_t *out;            // n x k
    uint32_t *count;          // n
    uint32_t *state;          // n
    unsigned long long *best; // n
    unsigned long long *seed; // 1
    unsigned int *oriented;   // 2: this level's count; reused for the round's votes
};

grip_status buffers_alloc(grip_ctx *ctx, walk_buffers *b, uint32_t n, uint32_t k)
{
    void *p[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    const size_t bytes[6] = {(size_t)n * k * sizeof(uint32_t), (size_t)n * sizeof(uint32_t),
                             (size_t)n * sizeof(uint32_t),     (size_t)n * sizeof(unsigned long long),
                             sizeof(unsigned long long),       2 * sizeof(unsigned int)};
    grip_status st = GRIP_OK;
    for (int i = 0; i < 6 && st == GRIP_OK; ++i)
        st = grip_cuda_alloc(ctx, bytes[i], &p[i]);
    b->out = (uint32_t *)p[0];
    b->count = (uint32_t *)p[1];
    b->state = (uint32_t *)p[2];
    b->best = (unsigned long long *)p[3];
    b->seed = (unsigned long long *)p[4];
    b->oriented = (unsigned int *)p[5];
    if (st != GRIP_OK)
        return st;
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(b->state, 0xff, (size_t)n * sizeof(uint32_t), 0));
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(b->best, 0, (size_t)n * sizeof(unsigned long long), 0));
    return GRIP_OK;
}

void buffers_free(walk_buffers *b)
{
    grip_cuda_free(b->out);
    grip_cuda_free(b->count);
    grip_cuda_free(b->state);
    grip_cuda_free(b->best);
    grip_cuda_free(b->seed);
    grip_cuda_free(b->oriented);
}

// The graph's out-lists from the surface's k + 1 nearest.
grip_status build_graph(grip_ctx *ctx, grip_surface_cuda *s, uint32_t k, walk_buffers *b)
{
    grip_neighborhoods_cuda nb = {};
    grip_status st = grip_neighborhoods_cuda_knn(ctx, s, NULL, s->n, k + 1, &nb);
    if (st == GRIP_OK) {
        graph_kernel<<<blocks_for(s->n), kThreads>>>(s->xyz, reinterpret_cast<const float4 *>(s->normals), s->n, k,
                                                     nb.offsets, nb.idx, b->out, b->count);
        st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "graph_kernel", __FILE__, __LINE__);
    }
    if (st == GRIP_OK) // the lists are freed once the kernel is done with them
        st = grip_cuda_status(ctx, cudaStreamSynchronize(0), "cudaStreamSynchronize", __FILE__, __LINE__);
    grip_neighborhoods_cuda_free(&nb);
    return st;
}

// Rounds until no point is left: seed, then for each stage's acceptance levels until one orients nothing, each stage
// starting from everything the round has oriented (normals_propagate.c walk_round); then the round's vote.
grip_status walk(grip_ctx *ctx, grip_surface_cuda *s, uint32_t k, float3 c, walk_buffers *b)
{
    float4 *normals = reinterpret_cast<float4 *>(s->normals);
    const uint32_t n = s->n;
    uint32_t level = 0;
    for (;;) {
        unsigned long long seed = 0;
        GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(b->seed, 0, sizeof *b->seed, 0));
        seed_kernel<<<blocks_for(n), kThreads>>>(s->xyz, normals, b->state, n, c, b->seed);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
        GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, &seed, b->seed, sizeof seed, cudaMemcpyDeviceToHost));
        if (seed == 0)
            return GRIP_OK;
        const uint32_t round_start = level;
        start_kernel<<<1, 1>>>(s->xyz, normals, b->state, b->seed, c, level++);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
        for (int stage = 0; stage < GRIP_PROPAGATE_STAGES; ++stage) {
            const float accept = grip_propagate_stage_accept(stage);
            uint32_t since = round_start;
            for (unsigned int oriented = 1; oriented > 0; ++level) {
                GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(b->oriented, 0, sizeof *b->oriented, 0));
                offer_kernel<<<blocks_for(n), kThreads>>>(s->xyz, normals, b->state, n, k, b->out, b->count, since,
                                                          level, accept, b->best);
                orient_kernel<<<blocks_for(n), kThreads>>>(normals, b->state, n, level, b->best, b->oriented);
                GRIP_CUDA_CHECK_LAUNCHED(ctx);
                GRIP_CUDA_CHECK(ctx,
                                grip_cuda_memcpy(ctx, &oriented, b->oriented, sizeof oriented, cudaMemcpyDeviceToHost));
                since = level; // the next level's frontier: what this one oriented
            }
        }
        unsigned int votes[2] = {0, 0};
        GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(b->oriented, 0, sizeof votes, 0));
        vote_kernel<<<blocks_for(n), kThreads>>>(s->xyz, normals, b->state, n, round_start, level, c, b->oriented);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
        GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, votes, b->oriented, sizeof votes, cudaMemcpyDeviceToHost));
        if (2ull * votes[0] > votes[1]) {
            turn_round_kernel<<<blocks_for(n), kThreads>>>(normals, b->state, n, round_start, level);
            GRIP_CUDA_CHECK_LAUNCHED(ctx);
        }
    }
}

} // namespace

extern "C" grip_status grip_normals_cuda_propagate(grip_ctx *ctx, grip_surface_cuda *s, uint32_t k,
                                                   const float centroid[3])
{
    if (!s || !s->has_normals)
        return grip_fail(ctx, GRIP_EINVAL, "normals propagate (cuda): %s",
                         s ? "the surface has no normals to orient" : "the surface is NULL");
    if (k < 1 || k > GRIP_NORMALS_PROPAGATE_MAX_K || !centroid)
        return grip_fail(ctx, GRIP_EINVAL, "normals propagate (cuda): %s",
                         centroid ? "k is not in 1..63" : "the centroid is NULL");
    if (s->n == 0)
        return GRIP_OK;
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(s->device));
    walk_buffers b = {};
    grip_status st = buffers_alloc(ctx, &b, s->n, k);
    if (st == GRIP_OK)
        st = build_graph(ctx, s, k, &b);
    if (st == GRIP_OK)
        st = walk(ctx, s, k, make_float3(centroid[0], centroid[1], centroid[2]), &b);
    if (st == GRIP_OK)
        st = grip_cuda_status(ctx, cudaStreamSynchronize(0), "cudaStreamSynchronize", __FILE__, __LINE__);
    buffers_free(&b);
    return st;
}
