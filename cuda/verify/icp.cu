// icp.cu -- batched ICP: every hypothesis of a verify call refined in one computation (see
// src/verify/icp_cuda.h for the contract, src/verify/icp.h for the loop it twins).
//
// Layout. The work is cut into chunks of kChunk model points of one hypothesis; the chunk table (hypothesis,
// first model row, count) is made once on the host, so one launch covers (hypothesis x model point) for any
// number of hypotheses and any mix of models. Each iteration is two launches:
//   1. pairs_kernel, one block per chunk, one thread per model point: the point moved by its hypothesis' pose
//      (double, icp_math.h's order, so that the float query equals the CPU's), its nearest scene point from the
//      kd-tree (cuda/spatial/kdtree3d.cuh, searched only within the iteration's correspondence distance: the
//      bound, or the point's previous nearest when within it, starts the search, so far points cost little and
//      the result equals the CPU's nearest-then-reject),
//      the pair's terms (icp_math.h), and the block's sum of each term;
//   2. update_kernel, one warp per hypothesis: the sum of its chunks' sums, in chunk order (a lane a term), the update
//      (icp_math.h: Horn's quaternion or the point-to-plane 6x6 solve, on the device), the composed pose and the
//      stop rules. A hypothesis that stops is inactive: its chunks return at once in later iterations.
// No host round trip inside an iteration; the host looks at the number of active hypotheses every
// kActiveCheckEvery iterations, to stop launching when every hypothesis has stopped (grip_icp_cuda_refine_start
// queues the first iterations, as many as its caller asks for, without a look and returns, so that the host can
// work while they run). Then score_kernel and score_finish_kernel count, per hypothesis, the model points facing
// the viewpoint and the inliers among them.
//
// Determinism. Every sum is ordered: within a block a fixed shuffle tree per warp, then the warps' sums added in
// warp order by one thread; across chunks in chunk order. No float atomics: the result does not depend on
// scheduling, and a run repeats bit for bit. The CPU twin replays the same order (icp_math.h), so the sums are the
// same bits on both sides.
#include "cuda/core/device.cuh"
#include "cuda/spatial/kdtree3d.cuh"
#include "cuda/spatial/surface.cuh"

extern "C" {
#include "verify/icp_cuda.h"
#include "verify/icp_math.h"
}

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

using namespace grip_kd;

namespace {

constexpr int kChunk = GRIP_ICP_CHUNK; // model points per block (icp_math.h's summation order)
constexpr int kWarps = kChunk / GRIP_ICP_WARP;
static_assert(GRIP_ICP_WARP == 32, "the block sums reduce whole warps");
constexpr int kUpdateThreads = 128; // 4 hypotheses a block, a warp each
constexpr int kSumAhead = 8;         // chunks whose partial sums a lane loads before adding them
constexpr int kPackThreads = 256;
constexpr int kActiveCheckEvery = 4; // iterations between looks at the number of active hypotheses
constexpr int kScoreTerms = 3;       // points facing the viewpoint, inliers among them, their squared distances
constexpr uint32_t kMinPairs = 3;    // PCL's min_number_correspondences_

// One chunk: kChunk (or fewer) model points of one hypothesis.
struct chunk {
    uint32_t hypothesis, first, count;
};

// A hypothesis on the device: its pose and where its loop stands.
struct hyp_state {
    double pose[16];
    double previous_mse;
    uint32_t iterations, stop, active, model;
};

// The loop's parameters, as the kernels read them.
struct loop_params {
    uint32_t metric, max_iterations;
    double transformation_epsilon, rotation_threshold, euclidean_fitness_epsilon;
};

__device__ __forceinline__ bool finite3(float4 p)
{
    return isfinite(p.x) && isfinite(p.y) && isfinite(p.z);
}

// Sums v[0 .. NT) over the block (kChunk threads) in a fixed order; thread t < NT writes term t to out[t].
template <int NT> __device__ __forceinline__ void block_sum(double (&v)[NT], double (*warp_sums)[NT], double *out)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int k = 0; k < NT; ++k) {
        double x = v[k];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
            x += __shfl_down_sync(0xffffffffu, x, off);
        if (lane == 0)
            warp_sums[warp][k] = x;
    }
    __syncthreads();
    if (threadIdx.x < NT) {
        double s = warp_sums[0][threadIdx.x];
        for (int w = 1; w < kWarps; ++w)
            s += warp_sums[w][threadIdx.x];
        out[threadIdx.x] = s;
    }
}

// The model point of this thread moved by the block's pose, and its nearest scene point within bound (id
// kNoId when none). Returns false for a thread past the chunk's end. seed, when not kNoId, is a scene point (a row
// of scene_xyz, the tree's points) to start the search from: the point's previous nearest, usually still nearest
// or near it, so the search opens few boxes. Starting from it is exact: the result is the least (distance, row)
// pair within bound over every point, seed included, and the seed's distance is computed as scan_leaf computes it.
__device__ __forceinline__ bool nearest_pair(const kd_view &tree, const double *pose, const float4 *model,
                                             const chunk &c, float bound, const float4 *scene_xyz, uint32_t seed,
                                             double moved[3], uint32_t *id, float *d)
{
    if (threadIdx.x >= c.count)
        return false;
    const float4 p = model[c.first + threadIdx.x];
    const double pm[3] = {p.x, p.y, p.z};
    grip_icp_apply(pose, pm, moved);
    const float qx = (float)moved[0], qy = (float)moved[1], qz = (float)moved[2];
    float ld[1] = {bound};
    uint32_t li[1] = {kNoId};
    if (tree.count > 0 && isfinite(qx) && isfinite(qy) && isfinite(qz)) {
        if (seed != kNoId) {
            const float4 s = scene_xyz[seed];
            const float sd = point_sqdist(s.x, s.y, s.z, qx, qy, qz);
            if (pair_before(sd, seed, ld[0], li[0])) { // within bound
                ld[0] = sd;
                li[0] = seed;
            }
        }
        knn_search<1>(tree, qx, qy, qz, ld, li);
    }
    *id = li[0];
    *d = ld[0];
    return true;
}

__device__ __forceinline__ void load_pose(const hyp_state &h, double *pose)
{
    if (threadIdx.x < 16)
        pose[threadIdx.x] = h.pose[threadIdx.x];
    __syncthreads();
}

template <uint32_t METRIC>
__global__ void __launch_bounds__(kChunk)
    pairs_kernel(kd_view tree, const chunk *__restrict__ chunks, const hyp_state *__restrict__ states,
                 const float4 *__restrict__ model, const float4 *__restrict__ scene_xyz,
                 const float4 *__restrict__ scene_normals, const float *__restrict__ bounds, uint32_t iteration,
                 uint32_t *__restrict__ previous, double *__restrict__ partial)
{
    constexpr int NT = METRIC == GRIP_ICP_POINT_TO_PLANE ? GRIP_ICP_TERMS_P2L : GRIP_ICP_TERMS_P2P;
    __shared__ double pose[16];
    __shared__ double warp_sums[kWarps][NT];
    const chunk c = chunks[blockIdx.x];
    if (!states[c.hypothesis].active) // uniform over the block
        return;
    load_pose(states[c.hypothesis], pose);
    double t[NT];
#pragma unroll
    for (int k = 0; k < NT; ++k)
        t[k] = 0.0;
    double moved[3];
    uint32_t id;
    float d;
    // this thread's slot of `previous`: its point's nearest scene point in the last iteration (kNoId before the
    // first), written by this thread only, read by it in the next iteration's launch (ordered by the stream)
    const size_t slot = (size_t)blockIdx.x * kChunk + threadIdx.x;
    const bool paired = nearest_pair(tree, pose, model, c, bounds[iteration], scene_xyz,
                                     threadIdx.x < c.count ? previous[slot] : kNoId, moved, &id, &d);
    if (paired)
        previous[slot] = id;
    if (paired && id != kNoId) {
        const float4 s = scene_xyz[id];
        const float sp[3] = {s.x, s.y, s.z};
        float n[3] = {0.0f, 0.0f, 0.0f};
        bool usable = true;
        if (METRIC == GRIP_ICP_POINT_TO_PLANE) {
            const float4 nn = scene_normals[id];
            n[0] = nn.x;
            n[1] = nn.y;
            n[2] = nn.z;
            usable = finite3(nn);
        }
        if (usable)
            grip_icp_pair_terms(METRIC, moved, sp, n, d, t);
    }
    block_sum<NT>(t, warp_sums, partial + (size_t)blockIdx.x * NT);
}

// Lane k < NT of the calling warp: term k of a hypothesis summed over its chunks [c0, c1) in chunk order (the CPU
// twin's order, icp_math.h), into sums[k] (shared memory, read by the warp's lanes after the __syncwarp). One lane a
// term, so the terms' sums run side by side; each lane's loads go kSumAhead chunks ahead of its additions, which
// keep their order.
template <int NT>
__device__ __forceinline__ void warp_chunk_sums(const double *__restrict__ partial, uint32_t c0, uint32_t c1,
                                                double *sums)
{
    const int lane = threadIdx.x & 31;
    if (lane < NT) {
        double s = 0.0;
        uint32_t c = c0;
        for (; c + kSumAhead <= c1; c += kSumAhead) {
            double v[kSumAhead];
#pragma unroll
            for (int j = 0; j < kSumAhead; ++j)
                v[j] = partial[(size_t)(c + j) * NT + lane];
#pragma unroll
            for (int j = 0; j < kSumAhead; ++j)
                s += v[j];
        }
        for (; c < c1; ++c)
            s += partial[(size_t)c * NT + lane];
        sums[lane] = s;
    }
    __syncwarp(); // orders the lanes' writes to sums before the reads that follow
}

// One warp per hypothesis: its chunks' sums (warp_chunk_sums), then on lane 0 the update, the composed pose and the
// stop rules. A warp of its own keeps one hypothesis' Jacobi sweeps from waiting on another's.
template <uint32_t METRIC>
__global__ void __launch_bounds__(kUpdateThreads)
    update_kernel(hyp_state *__restrict__ states, uint32_t n_hyp, const uint32_t *__restrict__ first_chunk,
                  const double *__restrict__ partial, loop_params lp, uint32_t *active_count)
{
    constexpr int NT = METRIC == GRIP_ICP_POINT_TO_PLANE ? GRIP_ICP_TERMS_P2L : GRIP_ICP_TERMS_P2P;
    static_assert(NT <= 32, "a lane per term");
    __shared__ double warp_terms[kUpdateThreads / 32][NT];
    const uint32_t warp = threadIdx.x >> 5, h = blockIdx.x * (kUpdateThreads / 32) + warp;
    if (h >= n_hyp || !states[h].active) // uniform over the warp
        return;
    double *sum = warp_terms[warp];
    warp_chunk_sums<NT>(partial, first_chunk[h], first_chunk[h + 1], sum);
    if ((threadIdx.x & 31) != 0)
        return;
    hyp_state &st = states[h];
    if (sum[0] < kMinPairs) {
        st.stop = GRIP_ICP_STOP_FEW_CORRESPONDENCES;
        st.active = 0;
        return;
    }
    double delta[16], pose[16];
    if (METRIC == GRIP_ICP_POINT_TO_PLANE)
        grip_icp_solve_p2l(sum, delta);
    else
        grip_icp_solve_p2p(sum, delta);
    grip_icp_compose(delta, st.pose, pose);
    if (!grip_icp_pose_finite(pose)) {
        st.stop = GRIP_ICP_STOP_DEGENERATE;
        st.active = 0;
        return;
    }
    for (int k = 0; k < 16; ++k)
        st.pose[k] = pose[k];
    st.iterations += 1;
    const int stop = grip_icp_converged(lp.max_iterations, lp.transformation_epsilon, lp.rotation_threshold,
                                        lp.euclidean_fitness_epsilon, st.iterations, delta, sum[1] / sum[0],
                                        &st.previous_mse);
    if (stop >= 0) {
        st.stop = (uint32_t)stop;
        st.active = 0;
    } else {
        atomicAdd(active_count, 1u); // an integer count: its value does not depend on the order
    }
}

// Per chunk: the points facing the viewpoint under the final pose, the inliers among them (nearest scene point
// within the inlier bound) and the sum of their squared distances.
__global__ void __launch_bounds__(kChunk)
    score_kernel(kd_view tree, const chunk *__restrict__ chunks, const hyp_state *__restrict__ states,
                 const float4 *__restrict__ model, const float4 *__restrict__ model_normals, double3 viewpoint,
                 float inlier_bound, double *__restrict__ partial)
{
    __shared__ double pose[16];
    __shared__ double warp_sums[kWarps][kScoreTerms];
    const chunk c = chunks[blockIdx.x];
    load_pose(states[c.hypothesis], pose);
    double t[kScoreTerms] = {0.0, 0.0, 0.0};
    double moved[3];
    uint32_t id;
    float d;
    if (nearest_pair(tree, pose, model, c, inlier_bound, nullptr, kNoId, moved, &id, &d)) {
        const double vp[3] = {viewpoint.x, viewpoint.y, viewpoint.z};
        float n[3] = {NAN, NAN, NAN};
        if (model_normals) {
            const float4 nn = model_normals[c.first + threadIdx.x];
            n[0] = nn.x;
            n[1] = nn.y;
            n[2] = nn.z;
        }
        if (grip_icp_faces_viewpoint(pose, moved, n, vp)) {
            t[0] = 1.0;
            if (id != kNoId) {
                t[1] = 1.0;
                t[2] = (double)d;
            }
        }
    }
    block_sum<kScoreTerms>(t, warp_sums, partial + (size_t)blockIdx.x * kScoreTerms);
}

// The score of each hypothesis (a warp each): its chunks' counts in chunk order, fitness and RMSE.
__global__ void __launch_bounds__(kUpdateThreads)
    score_finish_kernel(const hyp_state *__restrict__ states, uint32_t n_hyp, const uint32_t *__restrict__ first_chunk,
                        const double *__restrict__ partial, double min_fitness, double max_rmse, grip_icp_result *out)
{
    __shared__ double warp_terms[kUpdateThreads / 32][kScoreTerms];
    const uint32_t warp = threadIdx.x >> 5, h = blockIdx.x * (kUpdateThreads / 32) + warp;
    if (h >= n_hyp)
        return;
    const double *s = warp_terms[warp];
    warp_chunk_sums<kScoreTerms>(partial, first_chunk[h], first_chunk[h + 1], warp_terms[warp]);
    if ((threadIdx.x & 31) != 0)
        return;
    grip_icp_result r;
    for (int k = 0; k < 16; ++k)
        r.pose[k] = states[h].pose[k];
    r.iterations = states[h].iterations;
    r.stop = states[h].stop;
    r.n_points = (size_t)s[0];
    r.n_inliers = (size_t)s[1];
    r.fitness = r.n_points ? (double)r.n_inliers / (double)r.n_points : 0.0;
    r.rmse = r.n_inliers ? sqrt(s[2] / (double)r.n_inliers) : INFINITY;
    r.accepted = r.fitness >= min_fitness && r.rmse <= max_rmse;
    out[h] = r;
}

unsigned blocks_for(size_t n, int threads)
{
    return (unsigned)((n + (size_t)threads - 1) / (size_t)threads);
}

// Blocks of the per-hypothesis kernels: a warp a hypothesis.
unsigned hyp_blocks(uint32_t n_hyp)
{
    return blocks_for(n_hyp, kUpdateThreads / 32);
}

// The largest float f with (double)f <= sq: the search keeps d <= f exactly when the CPU keeps (double)d <= sq.
float float_bound(double sq)
{
    if (!(sq < (double)FLT_MAX))
        return FLT_MAX;
    float f = (float)sq;
    if ((double)f > sq)
        f = nextafterf(f, 0.0f);
    return f;
}

template <typename T> grip_status upload(grip_ctx *ctx, T **p, const T *host, size_t count)
{
    grip_status st = grip_cuda_alloc_n(ctx, p, count);
    if (st == GRIP_OK && count)
        st = grip_cuda_copy_to_device(ctx, *p, host, count * sizeof(T));
    return st;
}

// Rows of 3 floats (stride apart) as float4, w = 0.
__global__ void pack4_kernel(const float *__restrict__ rows, size_t n, size_t stride, float4 *__restrict__ out)
{
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = make_float4(rows[stride * i], rows[stride * i + 1], rows[stride * i + 2], 0.0f);
}

grip_status pack4_launch(grip_ctx *ctx, const float *rows_dev, size_t n, size_t stride, float4 *out)
{
    pack4_kernel<<<blocks_for(n, kPackThreads), kPackThreads>>>(rows_dev, n, stride, out);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}

// Rows of a device array (n rows of 3 floats, stride apart) into a new device array of float4.
grip_status pack4_device(grip_ctx *ctx, float4 **dev, const float *rows_dev, size_t n, size_t stride)
{
    grip_status st = grip_cuda_alloc_n(ctx, dev, n);
    if (st == GRIP_OK && n)
        st = pack4_launch(ctx, rows_dev, n, stride, *dev);
    return st;
}

// Host rows (3 floats, stride apart) as a device array of float4: uploaded as given, in one copy, and packed on the
// device (packing on the host first cost a pass over the rows and a second buffer the size of the scene).
grip_status upload4(grip_ctx *ctx, float4 **dev, const float *rows, size_t n, size_t stride)
{
    float *raw = NULL;
    grip_status st = n ? upload(ctx, &raw, rows, stride * (n - 1) + 3) : GRIP_OK;
    if (st == GRIP_OK)
        st = pack4_device(ctx, dev, raw, n, stride);
    grip_cuda_free(raw);
    return st;
}

} // namespace

struct grip_icp_cuda_scene {
    grip_kdtree3d_cuda *tree;
    float4 *xyz;     // by row
    float4 *normals; // by row, or NULL
    size_t n;
    double viewpoint[3];
};

extern "C" void grip_icp_cuda_scene_free(grip_icp_cuda_scene *s)
{
    if (!s)
        return;
    grip_kdtree3d_cuda_free(s->tree);
    grip_cuda_free(s->xyz);
    grip_cuda_free(s->normals);
    free(s);
}

extern "C" const float *grip_icp_cuda_scene_points(const grip_icp_cuda_scene *s, size_t *stride)
{
    *stride = 4;
    return (const float *)s->xyz;
}

extern "C" grip_status grip_icp_cuda_scene_build(grip_ctx *ctx, const float *xyz, const float *xyz_dev,
                                                 const grip_surface_cuda *kept, size_t n, const float *normals,
                                                 size_t normal_stride, const double viewpoint[3],
                                                 grip_icp_cuda_scene **out)
{
    if (!out)
        return grip_fail(ctx, GRIP_EINVAL, "verify (cuda): scene out is NULL");
    *out = NULL;
    if ((!xyz && !xyz_dev && n > 0) || (normals && normal_stride < 3) || n > INT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "verify (cuda): bad scene (xyz %p, %zu points, normal stride %zu)",
                         (const void *)xyz, n, normal_stride);
    grip_icp_cuda_scene *s = (grip_icp_cuda_scene *)calloc(1, sizeof *s);
    if (!s)
        return grip_fail(ctx, GRIP_ENOMEM, "verify (cuda): out of host memory for the scene");
    s->n = n;
    for (int a = 0; a < 3; ++a)
        s->viewpoint[a] = viewpoint ? viewpoint[a] : 0.0;
    // the points cross once, unless a descriptor left them on the device: the tree is built from the device copy,
    // which is then packed. On a kept surface the tree takes the box the surface measured, and nothing here waits.
    if (kept && kept->n != n)
        kept = NULL;
    float *uploaded = NULL;
    grip_status st = kept || xyz_dev ? GRIP_OK : upload(ctx, &uploaded, xyz, 3 * n);
    const float *points = kept ? kept->xyz : xyz_dev ? xyz_dev : uploaded;
    if (st == GRIP_OK)
        st = kept ? grip_kdtree3d_cuda_build_queued(ctx, points, (uint32_t)n, kept->bounds, 0, &s->tree)
                  : grip_kdtree3d_cuda_build(ctx, points, n, GRIP_MEM_CUDA, 0, &s->tree);
    if (st == GRIP_OK)
        st = pack4_device(ctx, &s->xyz, points, n, 3);
    grip_cuda_free(uploaded);
    if (st == GRIP_OK && normals)
        st = upload4(ctx, &s->normals, normals, n, normal_stride);
    if (st != GRIP_OK) {
        grip_icp_cuda_scene_free(s);
        return st;
    }
    *out = s;
    return GRIP_OK;
}

namespace {

// Device memory of one batch; whatever is set is freed by batch_free.
struct batch_buffers {
    float4 *model, *model_normals;
    chunk *chunks;
    uint32_t *first_chunk, *active;
    hyp_state *states;
    float *bounds;
    uint32_t *previous; // kChunk a chunk: each model point's nearest scene point in the last iteration
    double *partial;
    grip_icp_result *results;
};

void batch_free(batch_buffers *b)
{
    grip_cuda_free(b->model);
    grip_cuda_free(b->model_normals);
    grip_cuda_free(b->chunks);
    grip_cuda_free(b->first_chunk);
    grip_cuda_free(b->active);
    grip_cuda_free(b->states);
    grip_cuda_free(b->bounds);
    grip_cuda_free(b->previous);
    grip_cuda_free(b->partial);
    grip_cuda_free(b->results);
}

grip_status check_batch(grip_ctx *ctx, const grip_icp_params *p, const grip_icp_cuda_scene *scene,
                        const grip_icp_batch *b)
{
    grip_status st = grip_icp_params_check(ctx, p);
    if (st != GRIP_OK)
        return st;
    if (!scene || !b || !b->model_first || (b->n_hypotheses && (!b->hypothesis_model || !b->init_poses)))
        return grip_fail(ctx, GRIP_EINVAL, "verify (cuda): ICP got a NULL scene, batch or batch array");
    if (b->model_first[b->n_models] > 0 && !b->model_xyz)
        return grip_fail(ctx, GRIP_EINVAL, "verify (cuda): ICP batch has model points but model_xyz is NULL");
    if (p->metric == GRIP_ICP_POINT_TO_PLANE && !scene->normals)
        return grip_fail(ctx, GRIP_ECONFIG,
                         "verify.metric: point_to_plane needs scene normals, and the scene has none");
    for (uint32_t m = 0; m < b->n_models; ++m)
        if (b->model_first[m + 1] < b->model_first[m])
            return grip_fail(ctx, GRIP_EINVAL, "verify (cuda): ICP batch model offsets descend at model %u", m);
    for (uint32_t h = 0; h < b->n_hypotheses; ++h) {
        if (b->hypothesis_model[h] >= b->n_models)
            return grip_fail(ctx, GRIP_EINVAL, "verify (cuda): hypothesis %u names model %u of %u", h,
                             b->hypothesis_model[h], b->n_models);
        if (!grip_icp_pose_finite(b->init_poses + 16 * (size_t)h))
            return grip_fail(ctx, GRIP_EINVAL, "verify (cuda): initial pose of hypothesis %u is not finite", h);
    }
    return GRIP_OK;
}

// The chunk table and each hypothesis' first chunk (host arrays, malloc'd into *chunks / *first).
grip_status make_chunks(grip_ctx *ctx, const grip_icp_batch *b, chunk **chunks, uint32_t **first, size_t *n_chunks)
{
    size_t total = 0;
    for (uint32_t h = 0; h < b->n_hypotheses; ++h) {
        const uint32_t m = b->hypothesis_model[h];
        total += (b->model_first[m + 1] - b->model_first[m] + kChunk - 1) / kChunk;
    }
    if (total > INT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "verify (cuda): %zu chunks of %d points, more than one launch holds", total,
                         kChunk);
    *chunks = (chunk *)malloc((total ? total : 1) * sizeof **chunks);
    *first = (uint32_t *)malloc(((size_t)b->n_hypotheses + 1) * sizeof **first);
    if (!*chunks || !*first)
        return grip_fail(ctx, GRIP_ENOMEM, "verify (cuda): out of host memory for %zu chunks", total);
    size_t k = 0;
    for (uint32_t h = 0; h < b->n_hypotheses; ++h) {
        const uint32_t m = b->hypothesis_model[h];
        (*first)[h] = (uint32_t)k;
        for (size_t row = b->model_first[m]; row < b->model_first[m + 1]; row += kChunk) {
            const size_t left = b->model_first[m + 1] - row;
            (*chunks)[k++] = chunk{h, (uint32_t)row, (uint32_t)(left < kChunk ? left : kChunk)};
        }
    }
    (*first)[b->n_hypotheses] = (uint32_t)k;
    *n_chunks = total;
    return GRIP_OK;
}

grip_status upload_batch(grip_ctx *ctx, const grip_icp_params *p, const grip_icp_batch *b, batch_buffers *d,
                         size_t *n_chunks)
{
    const size_t rows = b->model_first[b->n_models];
    if (rows > INT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "verify (cuda): %zu model points, more than the batch indexes", rows);
    grip_status st = upload4(ctx, &d->model, b->model_xyz, rows, 3);
    if (st == GRIP_OK && b->model_normals)
        st = upload4(ctx, &d->model_normals, b->model_normals, rows, 3);
    chunk *chunks = NULL;
    uint32_t *first = NULL;
    if (st == GRIP_OK)
        st = make_chunks(ctx, b, &chunks, &first, n_chunks);
    if (st == GRIP_OK)
        st = upload(ctx, &d->chunks, chunks, *n_chunks);
    if (st == GRIP_OK)
        st = upload(ctx, &d->first_chunk, first, (size_t)b->n_hypotheses + 1);
    free(chunks);
    free(first);
    hyp_state *states = (hyp_state *)calloc((size_t)b->n_hypotheses + 1, sizeof *states);
    if (st == GRIP_OK && !states)
        st = grip_fail(ctx, GRIP_ENOMEM, "verify (cuda): out of host memory for %u hypotheses", b->n_hypotheses);
    for (uint32_t h = 0; h < b->n_hypotheses && st == GRIP_OK; ++h) {
        memcpy(states[h].pose, b->init_poses + 16 * (size_t)h, sizeof states[h].pose);
        states[h].previous_mse = DBL_MAX;
        states[h].stop = GRIP_ICP_STOP_ITERATIONS;
        states[h].model = b->hypothesis_model[h];
        const bool has_points = b->model_first[states[h].model + 1] > b->model_first[states[h].model];
        states[h].active = p->max_iterations > 0 && has_points;
        if (p->max_iterations > 0 && !has_points) // the CPU's first iteration finds no pair
            states[h].stop = GRIP_ICP_STOP_FEW_CORRESPONDENCES;
    }
    if (st == GRIP_OK)
        st = upload(ctx, &d->states, states, b->n_hypotheses);
    free(states);
    float *bounds = (float *)malloc(((size_t)p->max_iterations + 1) * sizeof *bounds);
    if (st == GRIP_OK && !bounds)
        st = grip_fail(ctx, GRIP_ENOMEM, "verify (cuda): out of host memory for %u bounds", p->max_iterations);
    for (uint32_t k = 0; k < p->max_iterations && st == GRIP_OK; ++k) {
        const double r = grip_icp_correspondence_distance(p, k);
        bounds[k] = float_bound(r * r);
    }
    if (st == GRIP_OK)
        st = upload(ctx, &d->bounds, bounds, (size_t)p->max_iterations + 1);
    free(bounds);
    const size_t terms = grip_icp_terms(p->metric) > kScoreTerms ? grip_icp_terms(p->metric) : kScoreTerms;
    if (st == GRIP_OK)
        st = grip_cuda_alloc_n(ctx, &d->partial, *n_chunks * terms);
    if (st == GRIP_OK && *n_chunks > 0) // no nearest point yet: every entry kNoId (all bits set)
        st = grip_cuda_alloc_n(ctx, &d->previous, *n_chunks * kChunk);
    if (st == GRIP_OK && *n_chunks > 0)
        GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(d->previous, 0xff, *n_chunks * kChunk * sizeof *d->previous, 0));
    if (st == GRIP_OK)
        st = grip_cuda_alloc_n(ctx, &d->active, 1);
    if (st == GRIP_OK)
        st = grip_cuda_alloc_n(ctx, &d->results, b->n_hypotheses);
    return st;
}

// Launches the iterations from *next on, looking at the number of active hypotheses before every
// kActiveCheckEvery-th (a wait on the device) and stopping once none is. With queue_only it launches at least
// `queued` iterations without a look and returns at the look that would come next, *next the iteration that look
// comes before; else *next ends at max_iterations. An iteration launched after every hypothesis has stopped
// changes nothing (its blocks return at once), so looking later costs only those empty launches.
template <uint32_t METRIC>
grip_status iterate(grip_ctx *ctx, const grip_icp_params *p, const grip_icp_cuda_scene *s, const batch_buffers *d,
                    uint32_t n_hyp, size_t n_chunks, bool queue_only, uint32_t queued, uint32_t *next)
{
    const kd_view tree = grip_kdtree3d_cuda_view(s->tree);
    loop_params lp;
    lp.metric = METRIC;
    lp.max_iterations = p->max_iterations;
    lp.transformation_epsilon = p->transformation_epsilon;
    lp.rotation_threshold = p->rotation_epsilon > 0.0 ? p->rotation_epsilon : 1.0 - p->transformation_epsilon;
    lp.euclidean_fitness_epsilon = p->euclidean_fitness_epsilon;
    for (uint32_t k = *next; k < p->max_iterations; ++k) {
        if (queue_only && k > 0 && k >= queued && k % kActiveCheckEvery == 0) {
            *next = k;
            return GRIP_OK;
        }
        if (!queue_only && k > 0 && k % kActiveCheckEvery == 0) {
            uint32_t active = 0;
            GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, &active, d->active, sizeof active, cudaMemcpyDeviceToHost));
            if (active == 0)
                break;
        }
        GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(d->active, 0, sizeof(uint32_t), 0));
        pairs_kernel<METRIC><<<(unsigned)n_chunks, kChunk>>>(tree, d->chunks, d->states, d->model, s->xyz, s->normals,
                                                             d->bounds, k, d->previous, d->partial);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
        update_kernel<METRIC><<<hyp_blocks(n_hyp), kUpdateThreads>>>(d->states, n_hyp, d->first_chunk, d->partial,
                                                                     lp, d->active);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
    }
    *next = p->max_iterations;
    return GRIP_OK;
}

} // namespace

// A batch between grip_icp_cuda_refine_start and _finish.
struct grip_icp_cuda_run {
    grip_icp_params params;
    const grip_icp_cuda_scene *scene;
    uint32_t n_hyp;
    size_t n_chunks;
    uint32_t next; // the iteration to launch next
    batch_buffers d;
};

namespace {

grip_status iterate_run(grip_ctx *ctx, grip_icp_cuda_run *r, bool queue_only, uint32_t queued)
{
    if (r->n_chunks == 0)
        return GRIP_OK;
    return r->params.metric == GRIP_ICP_POINT_TO_PLANE
               ? iterate<GRIP_ICP_POINT_TO_PLANE>(ctx, &r->params, r->scene, &r->d, r->n_hyp, r->n_chunks, queue_only,
                                                  queued, &r->next)
               : iterate<GRIP_ICP_POINT_TO_POINT>(ctx, &r->params, r->scene, &r->d, r->n_hyp, r->n_chunks, queue_only,
                                                  queued, &r->next);
}

// The iterations left, the score and the results into out.
grip_status finish_run(grip_ctx *ctx, grip_icp_cuda_run *r, grip_icp_result *out)
{
    const grip_icp_params *p = &r->params;
    batch_buffers *d = &r->d;
    grip_status st = iterate_run(ctx, r, false, 0);
    if (st != GRIP_OK)
        return st;
    if (r->n_chunks > 0) {
        const grip_icp_cuda_scene *s = r->scene;
        const double3 vp = make_double3(s->viewpoint[0], s->viewpoint[1], s->viewpoint[2]);
        score_kernel<<<(unsigned)r->n_chunks, kChunk>>>(grip_kdtree3d_cuda_view(s->tree), d->chunks, d->states,
                                                        d->model, d->model_normals, vp,
                                                        float_bound(p->inlier_distance * p->inlier_distance),
                                                        d->partial);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
    }
    const uint32_t n_hyp = r->n_hyp;
    if (n_hyp == 0)
        return GRIP_OK;
    // The kernel writes each result field by field; zero the padding between them too, so that the copy below
    // reads no uninitialized bytes.
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(d->results, 0, (size_t)n_hyp * sizeof *out, 0));
    score_finish_kernel<<<hyp_blocks(n_hyp), kUpdateThreads>>>(d->states, n_hyp, d->first_chunk, d->partial,
                                                                p->min_fitness, p->max_rmse, d->results);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, out, d->results, (size_t)n_hyp * sizeof *out, cudaMemcpyDeviceToHost));
    return GRIP_OK;
}

} // namespace

extern "C" void grip_icp_cuda_run_free(grip_icp_cuda_run *run)
{
    if (!run)
        return;
    batch_free(&run->d);
    free(run);
}

extern "C" grip_status grip_icp_cuda_refine_start(grip_ctx *ctx, const grip_icp_params *params,
                                                  const grip_icp_cuda_scene *scene, const grip_icp_batch *batch,
                                                  uint32_t queued, grip_icp_cuda_run **out)
{
    if (!out)
        return grip_fail(ctx, GRIP_EINVAL, "verify (cuda): run out is NULL");
    *out = NULL;
    grip_status st = check_batch(ctx, params, scene, batch);
    if (st != GRIP_OK)
        return st;
    grip_icp_cuda_run *r = (grip_icp_cuda_run *)calloc(1, sizeof *r);
    if (!r)
        return grip_fail(ctx, GRIP_ENOMEM, "verify (cuda): out of host memory for the run");
    r->params = *params;
    r->scene = scene;
    r->n_hyp = batch->n_hypotheses;
    st = upload_batch(ctx, params, batch, &r->d, &r->n_chunks);
    if (st == GRIP_OK)
        st = iterate_run(ctx, r, true, queued);
    if (st != GRIP_OK) {
        grip_icp_cuda_run_free(r);
        return st;
    }
    *out = r;
    return GRIP_OK;
}

extern "C" grip_status grip_icp_cuda_refine_finish(grip_ctx *ctx, grip_icp_cuda_run *run, grip_icp_result *out)
{
    grip_status st = !run ? grip_fail(ctx, GRIP_EINVAL, "verify (cuda): run is NULL")
                     : !out && run->n_hyp > 0 ? grip_fail(ctx, GRIP_EINVAL, "verify (cuda): out is NULL")
                                              : finish_run(ctx, run, out);
    grip_icp_cuda_run_free(run);
    return st;
}

extern "C" grip_status grip_icp_cuda_refine(grip_ctx *ctx, const grip_icp_params *params,
                                            const grip_icp_cuda_scene *scene, const grip_icp_batch *batch,
                                            grip_icp_result *out)
{
    if (!out)
        return grip_fail(ctx, GRIP_EINVAL, "verify (cuda): ICP got a NULL output");
    grip_icp_cuda_run *run = NULL;
    grip_status st = grip_icp_cuda_refine_start(ctx, params, scene, batch, 0, &run);
    return st == GRIP_OK ? grip_icp_cuda_refine_finish(ctx, run, out) : st;
}
