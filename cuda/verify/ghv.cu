// ghv.cu -- the terms of global hypotheses verification on the GPU, the twin of grip_ghv_terms_compute
// (see src/verify/ghv_cuda.h for the steps and why every result is order-independent).
//
// The (hypothesis, scene point) tables hold float bits under an atomic minimum: squared distances are >= 0, whose
// bits order as the floats do, and UNSET (all ones) is above every one of them. A batch of hypotheses is bounded so
// that its two tables and its model points fit in a fixed budget of device memory, whatever the number of
// hypotheses.
#include "cuda/core/check.cuh"

extern "C" {
#include "core/cuda_bridge.h"
#include "descriptor/uniform_sampling_cuda.h"
#include "spatial/kdtree3d_cuda.h"
#include "spatial/neighborhood_cuda.h"
#include "spatial/resolution.h"
#include "verify/ghv.h"
#include "verify/ghv_cuda.h"
}
#include "verify/ghv_math.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <stdlib.h>
#include <string.h>

struct grip_ghv_scene_cuda {
    grip_ghv_scene host;
    const grip_surface_cuda *surface; // the full cloud on the device: visibility reads its points
    grip_surface_cuda *own_surface;   // the same when built here, not lent by the descriptor stage's features
    float *xyz;                       // sampled points, n x 3
    grip_kdtree3d_cuda *tree;         // over them
    uint32_t *neighbors;              // n x GRIP_GHV_NEIGHBORS
    float *neighbor_sqdist;
};

namespace {

constexpr int kThreads = 256;
constexpr uint32_t kUnset = 0xFFFFFFFFu;
constexpr size_t kTableEntries = (size_t)1 << 25; // per table and batch: 128 MiB
constexpr size_t kBatchPoints = (size_t)1 << 22;  // model points per batch

struct hyp_dev {
    float pose[12];
    uint32_t model_offset; // first point of its model in the uploaded models
};

struct scene_dev {
    const float *full_xyz; // width x height x 3
    uint32_t width, height;
    int camera_valid;
    double cam[4];
    float occlusion, inlier2, clutter2;
    uint32_t n; // sampled points
};

// The hypothesis of flat point p: the h with offsets[h] <= p < offsets[h + 1].
__device__ __forceinline__ uint32_t hypothesis_of(const uint32_t *offsets, uint32_t count, uint32_t p)
{
    uint32_t lo = 0, hi = count; // offsets[lo] <= p < offsets[hi]
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (offsets[mid] <= p)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

// 1. each model point of each hypothesis moved by its pose; hidden ones become NaN queries (found nothing).
__global__ void transform_kernel(const float *__restrict__ models, const hyp_dev *__restrict__ hyps,
                                 const uint32_t *__restrict__ offsets, uint32_t count, uint32_t points, scene_dev sc,
                                 float *__restrict__ queries, uint8_t *__restrict__ visible)
{
    uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= points)
        return;
    uint32_t h = hypothesis_of(offsets, count, p);
    const hyp_dev &hy = hyps[h];
    float q[3];
    grip_ghv_transform(hy.pose, models + 3 * ((size_t)hy.model_offset + (p - offsets[h])), q);
    int vis = !sc.camera_valid || grip_ghv_visible(sc.cam, sc.full_xyz, sc.width, sc.height, q, sc.occlusion);
    visible[p] = (uint8_t)vis;
    for (int a = 0; a < 3; a++)
        queries[3 * (size_t)p + a] = vis ? q[a] : __int_as_float(0x7fc00000);
}

// 3. counts, the inlier sum and the explained table, from each visible point's nearest scene points.
__global__ void explain_kernel(const uint32_t *__restrict__ offsets, uint32_t count, uint32_t points,
                               const uint8_t *__restrict__ visible, const uint32_t *__restrict__ ids,
                               const float *__restrict__ sqdist, scene_dev sc, uint32_t *visible_count,
                               uint32_t *outliers, unsigned long long *inlier_sq, uint32_t *explained)
{
    uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= points || !visible[p])
        return;
    uint32_t h = hypothesis_of(offsets, count, p);
    atomicAdd(&visible_count[h], 1u);
    const uint32_t *id = ids + (size_t)p * GRIP_GHV_EXPLAIN_K;
    const float *d2 = sqdist + (size_t)p * GRIP_GHV_EXPLAIN_K;
    if (!(d2[0] <= sc.inlier2)) {
        atomicAdd(&outliers[h], 1u);
        return;
    }
    atomicAdd(&inlier_sq[h], (unsigned long long)grip_ghv_fixed_sq(d2[0], sc.inlier2));
    uint32_t *row = explained + (size_t)h * sc.n;
    for (int j = 0; j < GRIP_GHV_EXPLAIN_K && d2[j] <= sc.inlier2; j++)
        atomicMin(&row[id[j]], __float_as_uint(d2[j]));
}

// 4. clutter: the neighbours of each explained point that its hypothesis does not explain.
__global__ void clutter_kernel(const uint32_t *__restrict__ explained, size_t entries, scene_dev sc,
                               const uint32_t *__restrict__ neighbors, const float *__restrict__ neighbor_sqdist,
                               uint32_t *clutter)
{
    size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= entries || explained[e] == kUnset)
        return;
    size_t h = e / sc.n, s = e % sc.n;
    const uint32_t *row = explained + h * sc.n;
    const uint32_t *nb = neighbors + s * GRIP_GHV_NEIGHBORS;
    const float *nd = neighbor_sqdist + s * GRIP_GHV_NEIGHBORS;
    for (int j = 0; j < GRIP_GHV_NEIGHBORS && nd[j] < sc.clutter2; j++)
        if (row[nb[j]] == kUnset)
            atomicMin(&clutter[h * sc.n + nb[j]], __float_as_uint(nd[j]));
}

// 5a. set entries per row (one block a row).
__global__ void row_count_kernel(const uint32_t *__restrict__ table, uint32_t n, uint32_t *counts)
{
    using reduce = cub::BlockReduce<uint32_t, kThreads>;
    __shared__ typename reduce::TempStorage tmp;
    const uint32_t *row = table + (size_t)blockIdx.x * n;
    uint32_t c = 0;
    for (uint32_t s = threadIdx.x; s < n; s += kThreads)
        c += row[s] != kUnset;
    uint32_t total = reduce(tmp).Sum(c);
    if (threadIdx.x == 0)
        counts[blockIdx.x] = total;
}

// 5b. each row's set entries written in scene-point order from its offset (one block a row, a block-wide scan per
// chunk of kThreads points).
__global__ void row_write_kernel(const uint32_t *__restrict__ table, uint32_t n, const uint64_t *__restrict__ starts,
                                 uint32_t *ids, float *sqdist)
{
    using scan = cub::BlockScan<uint32_t, kThreads>;
    __shared__ typename scan::TempStorage tmp;
    const uint32_t *row = table + (size_t)blockIdx.x * n;
    uint64_t at = starts[blockIdx.x];
    for (uint32_t base = 0; base < n; base += kThreads) {
        uint32_t s = base + threadIdx.x;
        uint32_t bits = s < n ? row[s] : kUnset;
        uint32_t set = bits != kUnset, pos, chunk;
        scan(tmp).ExclusiveSum(set, pos, chunk);
        if (set) {
            ids[at + pos] = s;
            sqdist[at + pos] = __uint_as_float(bits);
        }
        at += chunk;
        __syncthreads(); // tmp is reused by the next chunk's scan
    }
}

uint32_t blocks_for(size_t n)
{
    return (uint32_t)((n + kThreads - 1) / kThreads);
}

// Device buffers of one terms call, freed together.
struct terms_buffers {
    float *models, *queries, *sqdist;
    uint8_t *visible;
    uint32_t *ids, *offsets, *visible_count, *outliers, *explained, *clutter, *row_counts, *list_ids;
    uint64_t *row_starts;
    unsigned long long *inlier_sq;
    hyp_dev *hyps;
    float *list_sqdist;
};

void terms_buffers_free(terms_buffers *b)
{
    void *all[] = {b->models,        b->queries,   b->sqdist,    b->visible,    b->ids,        b->offsets,
                   b->visible_count, b->outliers,  b->explained, b->clutter,    b->row_counts, b->list_ids,
                   b->row_starts,    b->inlier_sq, b->hyps,      b->list_sqdist};
    for (void *p : all)
        grip_cuda_free(p);
    memset(b, 0, sizeof *b);
}

grip_status alloc_dev(grip_ctx *ctx, size_t bytes, void *out)
{
    return grip_cuda_alloc(ctx, bytes ? bytes : 1, (void **)out);
}

// Host CSR lists growing batch by batch.
struct host_list {
    uint32_t *ids;
    float *sqdist;
    size_t n, cap;
};

int host_list_reserve(host_list *l, size_t more)
{
    if (l->n + more <= l->cap)
        return 0;
    size_t cap = l->cap ? l->cap : 1024;
    while (cap < l->n + more)
        cap *= 2;
    uint32_t *ids = (uint32_t *)realloc(l->ids, cap * sizeof *ids);
    if (ids)
        l->ids = ids;
    float *sq = (float *)realloc(l->sqdist, cap * sizeof *sq);
    if (sq)
        l->sqdist = sq;
    if (!ids || !sq)
        return -1;
    l->cap = cap;
    return 0;
}

// One table compacted row by row and appended to the host list; offsets[h0 + r + 1] set for each row r.
grip_status compact_table(grip_ctx *ctx, terms_buffers *b, const uint32_t *table, uint32_t rows, uint32_t n,
                          host_list *out, uint64_t *offsets, size_t h0)
{
    row_count_kernel<<<rows, kThreads>>>(table, n, b->row_counts);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    uint32_t *counts = (uint32_t *)malloc((size_t)rows * sizeof *counts);
    uint64_t *starts = (uint64_t *)malloc((size_t)rows * sizeof *starts);
    grip_status st = counts && starts ? GRIP_OK : grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    if (!st)
        st = grip_cuda_copy_to_host(ctx, counts, b->row_counts, (size_t)rows * sizeof *counts);
    size_t total = 0;
    for (uint32_t r = 0; !st && r < rows; r++) {
        starts[r] = total;
        total += counts[r];
        offsets[h0 + r + 1] = offsets[h0 + r] + counts[r];
    }
    if (!st)
        st = grip_cuda_copy_to_device(ctx, b->row_starts, starts, (size_t)rows * sizeof *starts);
    if (!st && host_list_reserve(out, total))
        st = grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    grip_cuda_free(b->list_ids);
    grip_cuda_free(b->list_sqdist);
    b->list_ids = NULL;
    b->list_sqdist = NULL;
    if (!st)
        st = alloc_dev(ctx, total * sizeof(uint32_t), &b->list_ids);
    if (!st)
        st = alloc_dev(ctx, total * sizeof(float), &b->list_sqdist);
    if (!st) {
        row_write_kernel<<<rows, kThreads>>>(table, n, b->row_starts, b->list_ids, b->list_sqdist);
        st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "row_write_kernel", __FILE__, __LINE__);
    }
    if (!st)
        st = grip_cuda_copy_to_host(ctx, out->ids + out->n, b->list_ids, total * sizeof(uint32_t));
    if (!st)
        st = grip_cuda_copy_to_host(ctx, out->sqdist + out->n, b->list_sqdist, total * sizeof(float));
    if (!st)
        out->n += total;
    free(counts);
    free(starts);
    return st;
}

scene_dev scene_dev_of(const grip_ghv_scene_cuda *s)
{
    const grip_ghv_scene *h = &s->host;
    scene_dev d;
    d.full_xyz = grip_surface_cuda_get_view(s->surface).xyz;
    d.width = h->width;
    d.height = h->height;
    d.camera_valid = h->camera.valid;
    d.cam[0] = h->camera.fx;
    d.cam[1] = h->camera.fy;
    d.cam[2] = h->camera.cx;
    d.cam[3] = h->camera.cy;
    d.occlusion = (float)h->params.occlusion_threshold;
    d.inlier2 = h->inlier2;
    d.clutter2 = h->clutter2;
    d.n = (uint32_t)h->n;
    return d;
}

// The batch's counters zeroed and its tables unset.
grip_status reset_batch(grip_ctx *ctx, terms_buffers *b, uint32_t count, size_t entries)
{
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(b->visible_count, 0, count * sizeof(uint32_t)));
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(b->outliers, 0, count * sizeof(uint32_t)));
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(b->inlier_sq, 0, count * sizeof(unsigned long long)));
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(b->explained, 0xFF, entries * sizeof(uint32_t)));
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(b->clutter, 0xFF, entries * sizeof(uint32_t)));
    return GRIP_OK;
}

// The terms of hypotheses [h0, h1), appended to t's arrays and the lists.
grip_status terms_batch(grip_ctx *ctx, const grip_ghv_scene_cuda *s, terms_buffers *b, const uint32_t *model_offsets,
                        const grip_ghv_model *models, const grip_ghv_hypothesis *hyps, size_t h0, size_t h1,
                        grip_ghv_terms *t, host_list *explained, host_list *clutter)
{
    uint32_t count = (uint32_t)(h1 - h0);
    uint32_t n = (uint32_t)s->host.n;
    size_t entries = (size_t)count * n;
    scene_dev sc = scene_dev_of(s);
    hyp_dev *hd = (hyp_dev *)malloc(count * sizeof *hd);
    uint32_t *offsets = (uint32_t *)malloc((count + 1) * sizeof *offsets);
    grip_status st = hd && offsets ? GRIP_OK : grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    uint32_t points = 0;
    for (uint32_t i = 0; !st && i < count; i++) {
        const grip_ghv_hypothesis *hy = &hyps[h0 + i];
        memcpy(hd[i].pose, hy->pose, sizeof hd[i].pose);
        hd[i].model_offset = model_offsets[hy->model];
        offsets[i] = points;
        points += (uint32_t)models[hy->model].n;
    }
    if (!st)
        offsets[count] = points;
    if (!st)
        st = grip_cuda_copy_to_device(ctx, b->hyps, hd, count * sizeof *hd);
    if (!st)
        st = grip_cuda_copy_to_device(ctx, b->offsets, offsets, (count + 1) * sizeof *offsets);
    if (!st)
        st = reset_batch(ctx, b, count, entries);
    if (!st && points) {
        transform_kernel<<<blocks_for(points), kThreads>>>(b->models, b->hyps, b->offsets, count, points, sc,
                                                           b->queries, b->visible);
        st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "transform_kernel", __FILE__, __LINE__);
        if (!st)
            st = grip_kdtree3d_cuda_knn(ctx, s->tree, b->queries, points, GRIP_MEM_CUDA, GRIP_GHV_EXPLAIN_K, b->ids,
                                        b->sqdist, GRIP_MEM_CUDA);
        if (!st) {
            explain_kernel<<<blocks_for(points), kThreads>>>(b->offsets, count, points, b->visible, b->ids, b->sqdist,
                                                             sc, b->visible_count, b->outliers, b->inlier_sq,
                                                             b->explained);
            st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "explain_kernel", __FILE__, __LINE__);
        }
    }
    if (!st && entries) {
        clutter_kernel<<<blocks_for(entries), kThreads>>>(b->explained, entries, sc, s->neighbors, s->neighbor_sqdist,
                                                          b->clutter);
        st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "clutter_kernel", __FILE__, __LINE__);
    }
    if (!st)
        st = grip_cuda_copy_to_host(ctx, t->visible + h0, b->visible_count, count * sizeof(uint32_t));
    if (!st)
        st = grip_cuda_copy_to_host(ctx, t->outliers + h0, b->outliers, count * sizeof(uint32_t));
    if (!st)
        st = grip_cuda_copy_to_host(ctx, t->inlier_sq_fixed + h0, b->inlier_sq, count * sizeof(uint64_t));
    if (!st && n)
        st = compact_table(ctx, b, b->explained, count, n, explained, t->explained_offsets, h0);
    if (!st && n)
        st = compact_table(ctx, b, b->clutter, count, n, clutter, t->clutter_offsets, h0);
    for (uint32_t r = 0; !st && !n && r < count; r++) // no scene point: empty lists
        t->explained_offsets[h0 + r + 1] = t->clutter_offsets[h0 + r + 1] = 0;
    free(hd);
    free(offsets);
    return st;
}

} // namespace

extern "C" grip_ghv_scene *grip_ghv_scene_cuda_host(grip_ghv_scene_cuda *s)
{
    return &s->host;
}

extern "C" void grip_ghv_scene_cuda_free(grip_ghv_scene_cuda *s)
{
    if (!s)
        return;
    grip_ghv_scene_free(&s->host);
    grip_surface_cuda_free(s->own_surface);
    grip_kdtree3d_cuda_free(s->tree);
    grip_cuda_free(s->xyz);
    grip_cuda_free(s->neighbors);
    grip_cuda_free(s->neighbor_sqdist);
    free(s);
}

// The resolution from the 2-nearest lists of the full cloud, searched on the device and summed on the host.
static grip_status measure_resolution(grip_ctx *ctx, grip_ghv_scene_cuda *s, size_t n)
{
    grip_kdtree3d_cuda *full = NULL;
    uint32_t *ids = NULL;
    float *d2 = NULL;
    float *host = (float *)malloc(n * 2 * sizeof *host + 1);
    grip_status st = host ? GRIP_OK : grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    if (!st)
        st = grip_kdtree3d_cuda_build(ctx, grip_surface_cuda_get_view(s->surface).xyz, n, GRIP_MEM_CUDA, 0, &full);
    if (!st)
        st = alloc_dev(ctx, n * 2 * sizeof *ids, &ids);
    if (!st)
        st = alloc_dev(ctx, n * 2 * sizeof *d2, &d2);
    if (!st)
        st = grip_kdtree3d_cuda_knn(ctx, full, NULL, n, GRIP_MEM_CUDA, 2, ids, d2, GRIP_MEM_CUDA);
    if (!st)
        st = grip_cuda_copy_to_host(ctx, host, d2, n * 2 * sizeof *host);
    if (!st)
        s->host.resolution = grip_mean_spacing(host, n, 2, grip_ctx_threads(ctx));
    grip_kdtree3d_cuda_free(full);
    grip_cuda_free(ids);
    grip_cuda_free(d2);
    free(host);
    return st;
}

// The sampled points (rows and coordinates, on both sides), their tree and neighbourhoods.
static grip_status sample_scene(grip_ctx *ctx, grip_ghv_scene_cuda *s)
{
    grip_ghv_scene *h = &s->host;
    uint32_t *rows_dev = NULL;
    grip_status st = grip_uniform_sampling_cuda(ctx, s->surface, h->leaf, &rows_dev, &h->n);
    size_t n = h->n;
    if (!st) {
        h->rows = (uint32_t *)malloc(n * sizeof *h->rows + 1);
        h->xyz = (float *)malloc(n * 3 * sizeof *h->xyz + 1);
        if (!h->rows || !h->xyz)
            st = grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    }
    if (!st)
        st = grip_cuda_copy_to_host(ctx, h->rows, rows_dev, n * sizeof *h->rows);
    if (!st)
        st = alloc_dev(ctx, n * 3 * sizeof(float), &s->xyz);
    if (!st && n)
        st = grip_surface_cuda_gather(ctx, s->surface, rows_dev, n, s->xyz);
    if (!st)
        st = grip_cuda_copy_to_host(ctx, h->xyz, s->xyz, n * 3 * sizeof(float));
    if (!st)
        st = grip_kdtree3d_cuda_build(ctx, s->xyz, n, GRIP_MEM_CUDA, 0, &s->tree);
    if (!st)
        st = alloc_dev(ctx, n * GRIP_GHV_NEIGHBORS * sizeof(uint32_t), &s->neighbors);
    if (!st)
        st = alloc_dev(ctx, n * GRIP_GHV_NEIGHBORS * sizeof(float), &s->neighbor_sqdist);
    if (!st && n)
        st = grip_kdtree3d_cuda_knn(ctx, s->tree, NULL, n, GRIP_MEM_CUDA, GRIP_GHV_NEIGHBORS, s->neighbors,
                                    s->neighbor_sqdist, GRIP_MEM_CUDA);
    grip_cuda_free(rows_dev);
    return st;
}

extern "C" grip_status grip_ghv_scene_cuda_create(grip_ctx *ctx, const float *xyz, const float *xyz_dev,
                                                  const grip_surface_cuda *kept, size_t n, uint32_t width,
                                                  uint32_t height, const grip_ghv_params *p, grip_ghv_scene_cuda **out)
{
    *out = NULL;
    grip_status st = grip_ghv_params_check(ctx, p);
    if (st)
        return st;
    if (n >= ((size_t)1 << 31))
        return grip_fail(ctx, GRIP_EINVAL, "verify: the scene's %zu points are too many for the GPU", n);
    grip_ghv_scene_cuda *s = (grip_ghv_scene_cuda *)calloc(1, sizeof *s);
    if (!s)
        return grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    if (kept)
        s->surface = kept;
    else
        st = xyz_dev ? grip_surface_cuda_create_on_device(ctx, xyz_dev, n, &s->own_surface)
                     : grip_surface_cuda_create(ctx, xyz, n, &s->own_surface);
    if (!kept && !st)
        s->surface = s->own_surface;
    if (!st)
        st = measure_resolution(ctx, s, n);
    if (!st)
        st = grip_ghv_scene_resolve(ctx, p, &s->host);
    if (!st)
        st = sample_scene(ctx, s);
    if (!st) {
        s->host.full_xyz = xyz;
        s->host.width = width;
        s->host.height = height;
        if (height > 1 && (size_t)width * height == n)
            grip_pinhole_estimate(xyz, width, height, grip_ctx_threads(ctx), &s->host.camera);
    }
    if (st) {
        grip_ghv_scene_cuda_free(s);
        return st;
    }
    *out = s;
    return GRIP_OK;
}

extern "C" grip_status grip_ghv_terms_cuda(grip_ctx *ctx, grip_ghv_scene_cuda *s, const grip_ghv_model *models,
                                           uint32_t n_models, const grip_ghv_hypothesis *hyps, size_t h,
                                           grip_ghv_terms *out)
{
    memset(out, 0, sizeof *out);
    size_t n = s->host.n, max_model = 0, total_model = 0;
    for (size_t i = 0; i < h; i++)
        if (hyps[i].model >= n_models)
            return grip_fail(ctx, GRIP_EINVAL, "verify: hypothesis %zu names model %u of %u", i, hyps[i].model,
                             n_models);
    for (uint32_t m = 0; m < n_models; m++) {
        max_model = models[m].n > max_model ? models[m].n : max_model;
        total_model += models[m].n;
    }
    if (max_model > kBatchPoints || total_model >= ((size_t)1 << 31))
        return grip_fail(ctx, GRIP_EINVAL, "verify: a model of %zu sampled points is too large for the GPU", max_model);
    // hypotheses per batch: both tables and the batch's model points within their budgets
    size_t batch = n ? kTableEntries / n : h;
    batch = batch < 1 ? 1 : batch;
    if (max_model && batch > kBatchPoints / max_model)
        batch = kBatchPoints / max_model;
    batch = batch > h ? h : batch;
    batch = batch < 1 ? 1 : batch;
    if (n && batch * n > kTableEntries * 4)
        return grip_fail(ctx, GRIP_EINVAL, "verify: the sampled scene of %zu points is too large for the GPU", n);

    terms_buffers b;
    memset(&b, 0, sizeof b);
    host_list explained = {}, clutter = {};
    uint32_t *model_offsets = (uint32_t *)malloc((n_models + 1) * sizeof *model_offsets);
    float *packed = (float *)malloc(total_model * 3 * sizeof *packed + 1);
    out->count = h;
    out->visible = (uint32_t *)malloc(h * sizeof(uint32_t) + 1);
    out->outliers = (uint32_t *)malloc(h * sizeof(uint32_t) + 1);
    out->inlier_sq_fixed = (uint64_t *)malloc(h * sizeof(uint64_t) + 1);
    out->explained_offsets = (uint64_t *)calloc(h + 1, sizeof(uint64_t));
    out->clutter_offsets = (uint64_t *)calloc(h + 1, sizeof(uint64_t));
    grip_status st = model_offsets && packed && out->visible && out->outliers && out->inlier_sq_fixed &&
                             out->explained_offsets && out->clutter_offsets
                         ? GRIP_OK
                         : grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
    size_t at = 0;
    for (uint32_t m = 0; !st && m < n_models; m++) {
        model_offsets[m] = (uint32_t)at;
        memcpy(packed + 3 * at, models[m].xyz, models[m].n * 3 * sizeof(float));
        at += models[m].n;
    }
    size_t batch_points = batch * max_model;
    if (!st)
        st = alloc_dev(ctx, total_model * 3 * sizeof(float), &b.models);
    if (!st)
        st = grip_cuda_copy_to_device(ctx, b.models, packed, total_model * 3 * sizeof(float));
    if (!st)
        st = alloc_dev(ctx, batch_points * 3 * sizeof(float), &b.queries);
    if (!st)
        st = alloc_dev(ctx, batch_points, &b.visible);
    if (!st)
        st = alloc_dev(ctx, batch_points * GRIP_GHV_EXPLAIN_K * sizeof(uint32_t), &b.ids);
    if (!st)
        st = alloc_dev(ctx, batch_points * GRIP_GHV_EXPLAIN_K * sizeof(float), &b.sqdist);
    if (!st)
        st = alloc_dev(ctx, batch * sizeof(hyp_dev), &b.hyps);
    if (!st)
        st = alloc_dev(ctx, (batch + 1) * sizeof(uint32_t), &b.offsets);
    if (!st)
        st = alloc_dev(ctx, batch * sizeof(uint32_t), &b.visible_count);
    if (!st)
        st = alloc_dev(ctx, batch * sizeof(uint32_t), &b.outliers);
    if (!st)
        st = alloc_dev(ctx, batch * sizeof(unsigned long long), &b.inlier_sq);
    if (!st)
        st = alloc_dev(ctx, batch * n * sizeof(uint32_t), &b.explained);
    if (!st)
        st = alloc_dev(ctx, batch * n * sizeof(uint32_t), &b.clutter);
    if (!st)
        st = alloc_dev(ctx, batch * sizeof(uint32_t), &b.row_counts);
    if (!st)
        st = alloc_dev(ctx, batch * sizeof(uint64_t), &b.row_starts);
    for (size_t h0 = 0; !st && h0 < h; h0 += batch) {
        size_t h1 = h0 + batch < h ? h0 + batch : h;
        st = terms_batch(ctx, s, &b, model_offsets, models, hyps, h0, h1, out, &explained, &clutter);
    }
    terms_buffers_free(&b);
    free(model_offsets);
    free(packed);
    out->explained_ids = explained.ids;
    out->explained_sqdist = explained.sqdist;
    out->clutter_ids = clutter.ids;
    out->clutter_sqdist = clutter.sqdist;
    if (!st && (!out->explained_ids || !out->clutter_ids)) { // no entries at all: valid, empty arrays
        if (!out->explained_ids && host_list_reserve(&explained, 1))
            st = grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
        if (!st && !out->clutter_ids && host_list_reserve(&clutter, 1))
            st = grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory");
        out->explained_ids = explained.ids;
        out->explained_sqdist = explained.sqdist;
        out->clutter_ids = clutter.ids;
        out->clutter_sqdist = clutter.sqdist;
    }
    if (st)
        grip_ghv_terms_free(out);
    return st;
}
