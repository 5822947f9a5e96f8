// hough3d.cu -- Hough 3D voting on the GPU (src/group/hough3d_cuda.h).
//
// Steps, each a launch (or a CUB algorithm) on the default stream:
//   1. model votes: one block; its first thread sums the model keypoints' centroid in the CPU twin's order (a float
//      sum whose order decides its bits), then every thread turns its keypoints' vectors into their frames;
//   2. scene votes, one thread a correspondence; the votes' box and the largest descriptor distance by integer
//      atomics on order-preserving keys (min and max are exact in any order);
//   3. (host) the box comes back and the CPU twin's grid_make checks and lays out the grid;
//   4. shares: up to 8 a vote, at slot 8 * correspondence + k, in the CPU twin's order; unused slots get a key past
//      the last bin;
//   5. a stable radix sort of the slots by bin: within a bin the slots stay in voting order;
//   6. runs of equal bins, their offsets; one thread sums each bin's weights in that order (the CPU twin's sum);
//   7. the largest bin (atomics on keys), then each bin's test: over the threshold and not below its 6 face
//      neighbours (binary search among the bins that were voted into); the passing bins, in bin order, are selected;
//   8. (host) the selected bins and the sorted slots come back and become clusters.
#include "cuda/core/check.cuh"
#include "cuda/group/group_dev.cuh"

extern "C" {
#include "group/hough3d_cuda.h"
}
#include "group/hough3d_math.h"

#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

namespace {

constexpr int kThreads = 256;
constexpr uint32_t kCentroidStage = 1024; // model keypoints in shared memory at a time (12 KiB)

// Order-preserving keys: a < b as numbers iff key(a) < key(b) as unsigned integers (no NaN here).
__device__ __forceinline__ unsigned long long double_key(double v)
{
    const unsigned long long b = (unsigned long long)__double_as_longlong(v);
    return (b >> 63) ? ~b : (b | 0x8000000000000000ull);
}
__host__ __device__ inline double double_of_key(unsigned long long k)
{
    const unsigned long long b = (k >> 63) ? (k & 0x7fffffffffffffffull) : ~k;
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}
__device__ __forceinline__ unsigned int float_key(float v)
{
    const unsigned int b = __float_as_uint(v);
    return (b >> 31) ? ~b : (b | 0x80000000u);
}
__host__ __device__ inline float float_of_key(unsigned int k)
{
    const unsigned int b = (k >> 31) ? (k & 0x7fffffffu) : ~k;
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

// What the kernels accumulate and the host reads back.
struct hough_stats {
    unsigned long long lo[3], hi[3]; // the valid votes' box (double keys)
    unsigned long long max_value;    // the largest bin value (double key), from DBL_MIN as in PCL
    unsigned int max_sqdist;         // the largest descriptor distance (float key), from -FLT_MAX
    unsigned int n_valid;            // votes cast
    unsigned int n_runs;             // bins voted into (+ the unused slots' run)
    unsigned int n_selected;         // instances
};

// One selected bin: its shares are sorted slots [first, first + count).
struct hough_peak {
    uint32_t first, count;
    double value;
};

__global__ void init_stats_kernel(hough_stats *s)
{
    for (int d = 0; d < 3; ++d) {
        s->lo[d] = ~0ull;
        s->hi[d] = 0ull;
    }
    s->max_value = double_key(DBL_MIN);
    s->max_sqdist = float_key(-FLT_MAX);
    s->n_valid = s->n_runs = s->n_selected = 0;
}

// One block. Thread 0 sums the centroid in the CPU twin's order (a running float sum over the keypoints) from
// shared memory, into which the block copies kCentroidStage keypoints at a time: read one by one from global memory,
// each addition would wait for its load.
__global__ void model_votes_kernel(const float *__restrict__ xyz, const float *__restrict__ rf, uint32_t n,
                                   float *__restrict__ votes)
{
    __shared__ float staged[3 * kCentroidStage];
    __shared__ float c[3];
    float sum[3] = {0.0f, 0.0f, 0.0f}; // thread 0's
    for (uint32_t base = 0; base < n; base += kCentroidStage) {
        const uint32_t m = n - base < kCentroidStage ? n - base : kCentroidStage;
        for (uint32_t i = threadIdx.x; i < 3 * m; i += blockDim.x)
            staged[i] = xyz[3 * (size_t)base + i];
        __syncthreads();
        if (threadIdx.x == 0)
#pragma unroll 4
            for (uint32_t i = 0; i < m; ++i)
                for (int d = 0; d < 3; ++d)
                    sum[d] = GRIP_FADD(sum[d], staged[3 * i + d]);
        __syncthreads(); // the next copy waits for the sum
    }
    if (threadIdx.x == 0)
        for (int d = 0; d < 3; ++d)
            c[d] = GRIP_FDIV(sum[d], (float)n);
    __syncthreads();
    const float centroid[3] = {c[0], c[1], c[2]};
    for (uint32_t i = threadIdx.x; i < n; i += blockDim.x)
        grip_hough3d_model_vote(xyz + 3 * (size_t)i, rf + 9 * (size_t)i, centroid, votes + 3 * (size_t)i);
}

__global__ void scene_votes_kernel(const grip_corr *__restrict__ corr, uint32_t n_corr,
                                   const float *__restrict__ mvotes, const float *__restrict__ model_rf,
                                   const float *__restrict__ scene_kp, const float *__restrict__ scene_rf,
                                   int measure_sqdist, double *__restrict__ votes, unsigned char *__restrict__ valid,
                                   hough_stats *stats)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_corr)
        return;
    const grip_corr c = corr[i];
    double v[3];
    const int ok = grip_hough3d_scene_vote(scene_kp + 3 * (size_t)c.scene, scene_rf + 9 * (size_t)c.scene,
                                           model_rf + 9 * (size_t)c.model, mvotes + 3 * (size_t)c.model, v);
    valid[i] = (unsigned char)ok;
    if (ok) {
        for (int d = 0; d < 3; ++d) {
            votes[3 * (size_t)i + d] = v[d];
            atomicMin(&stats->lo[d], double_key(v[d]));
            atomicMax(&stats->hi[d], double_key(v[d]));
        }
        atomicAdd(&stats->n_valid, 1u);
    }
    if (measure_sqdist)
        atomicMax(&stats->max_sqdist, float_key(c.sqdist));
}

__global__ void shares_kernel(const grip_corr *__restrict__ corr, uint32_t n_corr, const double *__restrict__ votes,
                              const unsigned char *__restrict__ valid, grip_hough3d_grid g, int interpolate,
                              int use_distance_weight, float max_sqdist, uint64_t unused_key,
                              uint64_t *__restrict__ keys, uint32_t *__restrict__ slots, double *__restrict__ weights)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_corr)
        return;
    int64_t bins[GRIP_HOUGH3D_MAX_SHARES];
    double w[GRIP_HOUGH3D_MAX_SHARES];
    int n = 0;
    if (valid[i]) {
        const double v[3] = {votes[3 * (size_t)i], votes[3 * (size_t)i + 1], votes[3 * (size_t)i + 2]};
        const double weight = grip_hough3d_weight(use_distance_weight, corr[i].sqdist, max_sqdist);
        n = grip_hough3d_shares(&g, v, weight, interpolate, bins, w);
    }
    for (int k = 0; k < GRIP_HOUGH3D_MAX_SHARES; ++k) {
        const size_t slot = (size_t)i * GRIP_HOUGH3D_MAX_SHARES + k;
        keys[slot] = k < n ? (uint64_t)bins[k] : unused_key;
        slots[slot] = (uint32_t)slot;
        weights[slot] = k < n ? w[k] : 0.0;
    }
}

// Each bin's value: its weights summed in voting order, as the CPU twin sums them.
__global__ void bin_values_kernel(const uint64_t *__restrict__ bins, const uint32_t *__restrict__ offsets,
                                  const uint32_t *__restrict__ counts, const uint32_t *__restrict__ sorted_slots,
                                  const double *__restrict__ weights, uint64_t unused_key, double *__restrict__ values,
                                  hough_stats *stats)
{
    const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= stats->n_runs || bins[r] == unused_key)
        return;
    double value = 0.0;
    for (uint32_t j = offsets[r], e = offsets[r] + counts[r]; j < e; ++j)
        value = GRIP_DADD(value, weights[sorted_slots[j]]);
    values[r] = value;
    atomicMax(&stats->max_value, double_key(value));
}

// The value of a bin among the n sorted bins voted into (0 when nobody voted into it).
__device__ double bin_value(const uint64_t *bins, const double *values, uint32_t n, uint64_t bin)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (bins[mid] < bin)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && bins[lo] == bin ? values[lo] : 0.0;
}

// HoughSpace3D::findMaxima on the bins voted into: at least the threshold and not lower than any of the 6 face
// neighbours inside the grid.
__global__ void maxima_kernel(const uint64_t *__restrict__ bins, const double *__restrict__ values, grip_hough3d_grid g,
                              double threshold, uint64_t unused_key, const hough_stats *stats,
                              unsigned char *__restrict__ is_peak)
{
    const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t n = stats->n_runs;
    if (r >= n)
        return;
    const uint64_t bin = bins[r];
    if (bin == unused_key)
        return;
    const double value = values[r];
    int peak = value >= grip_hough3d_threshold(threshold, double_of_key(stats->max_value));
    int64_t rest = (int64_t)bin, coord[3];
    coord[2] = rest / g.stride[2];
    rest %= g.stride[2];
    coord[1] = rest / g.stride[1];
    coord[0] = rest % g.stride[1];
    for (int d = 2; d >= 0 && peak; --d) {
        if (coord[d] > 0 && value < bin_value(bins, values, n, bin - (uint64_t)g.stride[d]))
            peak = 0;
        if (coord[d] < g.count[d] - 1 && value < bin_value(bins, values, n, bin + (uint64_t)g.stride[d]))
            peak = 0;
    }
    is_peak[r] = (unsigned char)peak;
}

__global__ void peaks_kernel(const uint32_t *__restrict__ selected, const uint32_t *__restrict__ offsets,
                             const uint32_t *__restrict__ counts, const double *__restrict__ values,
                             const hough_stats *stats, hough_peak *__restrict__ peaks)
{
    const uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= stats->n_selected)
        return;
    const uint32_t r = selected[s];
    peaks[s].first = offsets[r];
    peaks[s].count = counts[r];
    peaks[s].value = values[r];
}

unsigned int blocks(size_t n)
{
    return (unsigned int)((n + kThreads - 1) / kThreads);
}

// The device arrays of one call; all freed by hough_free.
struct hough_dev {
    float *model_kp, *model_rf, *scene_kp, *scene_rf, *mvotes;
    grip_corr *corr;
    double *votes, *weights, *values;
    unsigned char *valid, *is_peak;
    uint64_t *keys[2], *bins;
    uint32_t *slots[2], *counts, *offsets, *selected;
    hough_stats *stats;
    hough_peak *peaks;
    void *temp;
};

void hough_free(hough_dev *d)
{
    void *all[] = {d->model_kp, d->model_rf, d->scene_kp, d->scene_rf, d->mvotes,  d->corr, d->votes,    d->weights,
                   d->values,   d->valid,    d->is_peak,  d->keys[0],  d->keys[1], d->bins, d->slots[0], d->slots[1],
                   d->counts,   d->offsets,  d->selected, d->stats,    d->peaks,   d->temp};
    for (void *p : all)
        grip_cuda_free(p);
    memset(d, 0, sizeof *d);
}

struct hough_sizes {
    size_t n_model, n_scene, n_corr, n_slots;
};

grip_status upload_inputs(grip_ctx *ctx, hough_dev *d, const hough_sizes &z, const float *model_kp,
                          const float *model_rf, const float *scene_kp, const float *scene_rf, const grip_corr *corr)
{
    grip_status st = grip_group_dev_upload(ctx, &d->model_kp, model_kp, z.n_model * 3);
    if (!st)
        st = grip_group_dev_upload(ctx, &d->model_rf, model_rf, z.n_model * 9);
    if (!st)
        st = grip_group_dev_upload(ctx, &d->scene_kp, scene_kp, z.n_scene * 3);
    if (!st)
        st = grip_group_dev_upload(ctx, &d->scene_rf, scene_rf, z.n_scene * 9);
    if (!st)
        st = grip_group_dev_upload(ctx, &d->corr, corr, z.n_corr);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->mvotes, z.n_model * 3);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->votes, z.n_corr * 3);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->valid, z.n_corr);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->stats, 1);
    return st;
}

// Steps 1 and 2, and the stats back on the host.
grip_status cast_votes(grip_ctx *ctx, hough_dev *d, const hough_sizes &z, int measure_sqdist, hough_stats *stats)
{
    init_stats_kernel<<<1, 1>>>(d->stats);
    model_votes_kernel<<<1, kThreads>>>(d->model_kp, d->model_rf, (uint32_t)z.n_model, d->mvotes);
    scene_votes_kernel<<<blocks(z.n_corr), kThreads>>>(d->corr, (uint32_t)z.n_corr, d->mvotes, d->model_rf, d->scene_kp,
                                                       d->scene_rf, measure_sqdist, d->votes, d->valid, d->stats);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return grip_cuda_copy_to_host(ctx, stats, d->stats, sizeof *stats);
}

grip_status alloc_shares(grip_ctx *ctx, hough_dev *d, size_t n_slots)
{
    grip_status st = GRIP_OK;
    for (int b = 0; b < 2 && !st; ++b) {
        st = grip_group_dev_alloc(ctx, &d->keys[b], n_slots);
        if (!st)
            st = grip_group_dev_alloc(ctx, &d->slots[b], n_slots);
    }
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->weights, n_slots);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->bins, n_slots);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->counts, n_slots);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->offsets, n_slots);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->values, n_slots);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->is_peak, n_slots);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->selected, n_slots);
    if (!st)
        st = grip_group_dev_alloc(ctx, &d->peaks, n_slots);
    return st;
}

// The CUB algorithms' temporary storage: the largest any of them asks for.
grip_status alloc_temp(grip_ctx *ctx, hough_dev *d, int n, int end_bit)
{
    size_t sort = 0, encode = 0, scan = 0, select = 0;
    thrust::counting_iterator<uint32_t> rows(0);
    GRIP_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(NULL, sort, d->keys[0], d->keys[1], d->slots[0], d->slots[1],
                                                         n, 0, end_bit));
    GRIP_CUDA_CHECK(
        ctx, cub::DeviceRunLengthEncode::Encode(NULL, encode, d->keys[1], d->bins, d->counts, &d->stats->n_runs, n));
    GRIP_CUDA_CHECK(ctx, cub::DeviceScan::ExclusiveSum(NULL, scan, d->counts, d->offsets, n));
    GRIP_CUDA_CHECK(ctx,
                    cub::DeviceSelect::Flagged(NULL, select, rows, d->is_peak, d->selected, &d->stats->n_selected, n));
    size_t bytes = sort;
    bytes = encode > bytes ? encode : bytes;
    bytes = scan > bytes ? scan : bytes;
    bytes = select > bytes ? select : bytes;
    return grip_cuda_alloc(ctx, bytes, &d->temp);
}

// Steps 4 to 7 on the device.
grip_status find_peaks(grip_ctx *ctx, hough_dev *d, const hough_sizes &z, const grip_hough3d_params *p,
                       const grip_hough3d_grid &g, float max_sqdist, uint64_t unused_key, int end_bit)
{
    const int n = (int)z.n_slots;
    size_t bytes = 0;
    thrust::counting_iterator<uint32_t> rows(0);
    shares_kernel<<<blocks(z.n_corr), kThreads>>>(d->corr, (uint32_t)z.n_corr, d->votes, d->valid, g,
                                                  p->use_interpolation, p->use_distance_weight, max_sqdist, unused_key,
                                                  d->keys[0], d->slots[0], d->weights);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(NULL, bytes, d->keys[0], d->keys[1], d->slots[0], d->slots[1],
                                                         n, 0, end_bit));
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceRadixSort::SortPairs(d->temp, bytes, d->keys[0], d->keys[1], d->slots[0],
                                                                d->slots[1], n, 0, end_bit));
    // runs past n_runs stay zero, so that the scan and the selection read only written values
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(d->counts, 0, z.n_slots * sizeof *d->counts, 0));
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemsetAsync(d->is_peak, 0, z.n_slots, 0));
    GRIP_CUDA_CHECK(
        ctx, cub::DeviceRunLengthEncode::Encode(NULL, bytes, d->keys[1], d->bins, d->counts, &d->stats->n_runs, n));
    GRIP_CUDA_CHECK_LAUNCH(
        ctx, cub::DeviceRunLengthEncode::Encode(d->temp, bytes, d->keys[1], d->bins, d->counts, &d->stats->n_runs, n));
    GRIP_CUDA_CHECK(ctx, cub::DeviceScan::ExclusiveSum(NULL, bytes, d->counts, d->offsets, n));
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceScan::ExclusiveSum(d->temp, bytes, d->counts, d->offsets, n));
    bin_values_kernel<<<blocks(z.n_slots), kThreads>>>(d->bins, d->offsets, d->counts, d->slots[1], d->weights,
                                                       unused_key, d->values, d->stats);
    maxima_kernel<<<blocks(z.n_slots), kThreads>>>(d->bins, d->values, g, p->threshold, unused_key, d->stats,
                                                   d->is_peak);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx,
                    cub::DeviceSelect::Flagged(NULL, bytes, rows, d->is_peak, d->selected, &d->stats->n_selected, n));
    GRIP_CUDA_CHECK_LAUNCH(
        ctx, cub::DeviceSelect::Flagged(d->temp, bytes, rows, d->is_peak, d->selected, &d->stats->n_selected, n));
    peaks_kernel<<<blocks(z.n_slots), kThreads>>>(d->selected, d->offsets, d->counts, d->values, d->stats, d->peaks);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}

// Step 8: the peaks as clusters (members: the correspondences that voted into the bin, in voting order).
grip_status peaks_to_clusters(grip_ctx *ctx, hough_dev *d, size_t n_slots, grip_cluster **out, size_t *n_out)
{
    hough_stats stats;
    grip_status st = grip_cuda_copy_to_host(ctx, &stats, d->stats, sizeof stats);
    if (st || stats.n_selected == 0)
        return st;
    hough_peak *peaks = (hough_peak *)malloc(stats.n_selected * sizeof *peaks);
    uint32_t *slots = (uint32_t *)malloc(n_slots * sizeof *slots);
    *out = (grip_cluster *)calloc(stats.n_selected, sizeof **out);
    if (!peaks || !slots || !*out)
        st = grip_fail(ctx, GRIP_ENOMEM, "group.hough3d (cuda): out of memory for %u clusters", stats.n_selected);
    if (!st)
        st = grip_cuda_copy_to_host(ctx, peaks, d->peaks, stats.n_selected * sizeof *peaks);
    if (!st)
        st = grip_cuda_copy_to_host(ctx, slots, d->slots[1], n_slots * sizeof *slots);
    for (uint32_t c = 0; c < stats.n_selected && !st; ++c) {
        grip_cluster *cl = &(*out)[c];
        cl->members = (uint32_t *)malloc(peaks[c].count * sizeof *cl->members + 1);
        if (!cl->members) {
            st = grip_fail(ctx, GRIP_ENOMEM, "group.hough3d (cuda): out of memory for a %u-member cluster",
                           peaks[c].count);
            break;
        }
        for (uint32_t j = 0; j < peaks[c].count; ++j)
            cl->members[j] = slots[peaks[c].first + j] / GRIP_HOUGH3D_MAX_SHARES;
        cl->n_members = peaks[c].count;
        cl->votes = peaks[c].value;
        grip_pose_identity(cl->pose);
        ++*n_out;
    }
    free(peaks);
    free(slots);
    if (*out && *n_out == 0) { // nothing was filled: hand back no array
        free(*out);
        *out = NULL;
    }
    return st;
}

// Bits a key below `limit` needs (at least 1).
int bits_for(uint64_t limit)
{
    int b = 1;
    while (b < 64 && (limit >> b) != 0)
        ++b;
    return b;
}

grip_status vote_on_device(grip_ctx *ctx, hough_dev *d, const grip_hough3d_params *p, const hough_sizes &z,
                           const float *model_kp, const float *model_rf, const float *scene_kp, const float *scene_rf,
                           const grip_corr *corr, grip_cluster **out, size_t *n_out)
{
    grip_status st = upload_inputs(ctx, d, z, model_kp, model_rf, scene_kp, scene_rf, corr);
    hough_stats stats;
    if (!st)
        st = cast_votes(ctx, d, z, p->use_interpolation, &stats);
    if (st || stats.n_valid == 0)
        return st;
    double lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
        lo[k] = double_of_key(stats.lo[k]);
        hi[k] = double_of_key(stats.hi[k]);
    }
    grip_hough3d_grid g;
    st = grip_hough3d_grid_make(ctx, lo, hi, p->bin_size, &g);
    if (st)
        return st;
    // PCL's maximum distance is only measured with interpolation on (hough3d.h)
    const float max_sqdist = p->use_interpolation ? float_of_key(stats.max_sqdist) : -FLT_MAX;
    const uint64_t unused_key = (uint64_t)(g.count[0] * g.count[1] * g.count[2]); // past the last bin
    const int end_bit = bits_for(unused_key);
    st = alloc_shares(ctx, d, z.n_slots);
    if (!st)
        st = alloc_temp(ctx, d, (int)z.n_slots, end_bit);
    if (!st)
        st = find_peaks(ctx, d, z, p, g, max_sqdist, unused_key, end_bit);
    if (!st)
        st = peaks_to_clusters(ctx, d, z.n_slots, out, n_out);
    return st;
}

} // namespace

extern "C" grip_status grip_hough3d_vote_cuda(grip_ctx *ctx, const grip_hough3d_params *params,
                                              const float *model_kp_xyz, const float *model_rf, size_t n_model_kp,
                                              const float *scene_kp_xyz, const float *scene_rf, size_t n_scene_kp,
                                              const grip_corr *corr, size_t n_corr, grip_cluster **out, size_t *n_out)
{
    if (out)
        *out = NULL;
    if (n_out)
        *n_out = 0;
    grip_status st = grip_hough3d_check_inputs(ctx, params, model_kp_xyz, model_rf, n_model_kp, scene_kp_xyz, scene_rf,
                                               n_scene_kp, corr, n_corr, out, n_out);
    if (st != GRIP_OK || n_corr == 0)
        return st;
    if (n_corr > (size_t)INT32_MAX / GRIP_HOUGH3D_MAX_SHARES)
        return grip_fail(ctx, GRIP_EINVAL, "group.hough3d (cuda): %zu correspondences, more than the GPU sorts",
                         n_corr);
    hough_sizes z = {n_model_kp, n_scene_kp, n_corr, n_corr * GRIP_HOUGH3D_MAX_SHARES};
    hough_dev d;
    memset(&d, 0, sizeof d);
    st = vote_on_device(ctx, &d, params, z, model_kp_xyz, model_rf, scene_kp_xyz, scene_rf, corr, out, n_out);
    hough_free(&d);
    if (st != GRIP_OK) {
        grip_clusters_free(*out, *n_out);
        *out = NULL;
        *n_out = 0;
    }
    return st;
}

extern "C" grip_status grip_hough3d_cluster_cuda(grip_ctx *ctx, const grip_hough3d_params *params,
                                                 const float *model_kp_xyz, const float *model_rf, size_t n_model_kp,
                                                 const float *scene_kp_xyz, const float *scene_rf, size_t n_scene_kp,
                                                 const grip_corr *corr, size_t n_corr, grip_cluster **out,
                                                 size_t *n_out)
{
    grip_status st = grip_hough3d_vote_cuda(ctx, params, model_kp_xyz, model_rf, n_model_kp, scene_kp_xyz, scene_rf,
                                            n_scene_kp, corr, n_corr, out, n_out);
    if (st != GRIP_OK)
        return st;
    const grip_ransac_params rp = grip_hough3d_ransac_params(params);
    return grip_clusters_ransac(ctx, &rp, model_kp_xyz, scene_kp_xyz, corr, out, n_out);
}
