// shot.cu -- SHOT local reference frames and SHOT-352 on the GPU, the twins of src/descriptor/shot.c and
// shot.c (see src/descriptor/shot_cuda.h).
//
// One block per keypoint, its support's neighbours strided over the threads, reading the lists' structure of
// arrays in a row. The per-point and per-keypoint arithmetic is the CPU's own (shot_math.h, shot_math.h,
// sym3_jacobi.h); only the order of additions is the GPU's where it may be:
//  - frame: the 7 sums of the weighted covariance are kept in the CPU's order (a chunk's terms are computed in
//    parallel into shared memory, then each sum adds them one by one in list order), so frames are the CPU's to
//    the bit; the sign votes are integer counts, and the tie-breaking neighbours around the median are found by
//    one warp with ballots over the list;
//  - descriptor: the votes go to a 352-bin shared-memory histogram by shared-memory atomics on fixed-point sums
//    (cuda/core/fixed_sum.cuh), so that the histogram has the same bits in any order of arrival (float rounding
//    apart, the CPU's histogram), and the squares of the L2 norm are summed by a block reduction in a fixed order.
#include "cuda/core/check.cuh"
#include "cuda/core/fixed_sum.cuh"

#include "descriptor/shot_math.h"

extern "C" {
#include "descriptor/shot_cuda.h"
}

#include <stdint.h>

namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullWarp = 0xffffffffu;

// The arrays of the support lists the kernels read (device memory).
struct support_lists {
    const uint64_t *offsets;
    const float *x, *y, *z, *sqdist;
    const float *nx, *ny, *nz; // NULL for the frame kernel
};

__device__ __forceinline__ void point_at(const support_lists &s, uint64_t e, float q[3])
{
    q[0] = __ldg(s.x + e);
    q[1] = __ldg(s.y + e);
    q[2] = __ldg(s.z + e);
}

__device__ __forceinline__ void keypoint_at(const float *keypoints, uint32_t i, float p[3])
{
    for (int d = 0; d < 3; ++d)
        p[d] = keypoints[3 * (size_t)i + d];
}

__device__ __forceinline__ void fill_nan(float *row, int count)
{
    for (int j = threadIdx.x; j < count; j += blockDim.x)
        row[j] = NAN;
}

__device__ __forceinline__ int block_sum_int(int v, int *slot)
{
    v = (int)__reduce_add_sync(kFullWarp, (unsigned)v);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(slot, v);
    __syncthreads();
    return *slot;
}

// ---- frame ------------------------------------------------------------------------------------------------

struct lrf_shared {
    double terms[GRIP_SHOT_LRF_SUMS][kThreads + 1]; // + 1: the 7 summing threads read distinct banks
    double axes[2][3];                              // x, z
    int nonneg[2];                                  // offsets with dot >= 0, per axis
    int solved;
};

// The 7 covariance sums over [begin, end), each added in list order (by thread s < 7, returned there), and the
// number of support points that are not copies of the keypoint (returned to every thread).
__device__ int lrf_sums(lrf_shared &sh, const support_lists &s, uint64_t begin, uint64_t end, const float p[3],
                        double radius, double *sum)
{
    int valid = 0;
    *sum = 0.0;
    for (uint64_t base = begin; base < end; base += kThreads) {
        const uint64_t e = base + threadIdx.x;
        double terms[GRIP_SHOT_LRF_SUMS];
        int keep = 0;
        if (e < end) {
            float q[3];
            point_at(s, e, q);
            keep = !grip_shot_lrf_is_copy(q, p);
            if (keep)
                grip_shot_lrf_terms(q, p, __ldg(s.sqdist + e), radius, terms);
        }
        // a copy adds +0, which leaves a sum as it is (a sum that starts at +0 is never -0): the CPU's skip
#pragma unroll
        for (int t = 0; t < GRIP_SHOT_LRF_SUMS; ++t)
            sh.terms[t][threadIdx.x] = keep ? terms[t] : 0.0;
        valid += __syncthreads_count(keep);
        if (threadIdx.x < GRIP_SHOT_LRF_SUMS) {
            const int n = (int)min((uint64_t)kThreads, end - base);
            for (int j = 0; j < n; ++j)
                *sum += sh.terms[threadIdx.x][j];
        }
        __syncthreads();
    }
    return valid;
}

__device__ __forceinline__ void axes_from_shared(const lrf_shared &sh, double x[3], double z[3])
{
    for (int d = 0; d < 3; ++d) {
        x[d] = sh.axes[0][d];
        z[d] = sh.axes[1][d];
    }
}

// The sign votes of both axes over the whole support (copies left out): offsets with dot >= 0.
__device__ void lrf_sign_votes(lrf_shared &sh, const support_lists &s, uint64_t begin, uint64_t end,
                               const float p[3], int nonneg[2])
{
    double x[3], z[3];
    axes_from_shared(sh, x, z);
    int nx = 0, nz = 0;
    for (uint64_t e = begin + threadIdx.x; e < end; e += kThreads) {
        float q[3];
        point_at(s, e, q);
        if (grip_shot_lrf_is_copy(q, p))
            continue;
        double v[3];
        grip_shot_lrf_offset(q, p, v);
        nx += grip_shot_lrf_dot(v, x) >= 0.0;
        nz += grip_shot_lrf_dot(v, z) >= 0.0;
    }
    nonneg[0] = block_sum_int(nx, &sh.nonneg[0]);
    nonneg[1] = block_sum_int(nz, &sh.nonneg[1]);
}

// One warp: the offsets with dot > 0, per axis, among the tie voters (the valid support points ranked
// first .. first + 4 in list order, copies of the keypoint not counted), as grip_shot_lrf_must_flip wants them.
__device__ void lrf_tie_voters(const lrf_shared &sh, const support_lists &s, uint64_t begin, uint64_t end,
                               const float p[3], int valid, int positive[2])
{
    double x[3], z[3];
    axes_from_shared(sh, x, z);
    const int lane = threadIdx.x & 31;
    const long first = grip_shot_lrf_first_tie_voter(valid), last = first + GRIP_SHOT_LRF_TIE_VOTERS - 1;
    long ranked = 0;
    positive[0] = positive[1] = 0;
    for (uint64_t base = begin; base < end && ranked <= last; base += 32) {
        const uint64_t e = base + lane;
        float q[3];
        bool keep = false;
        if (e < end) {
            point_at(s, e, q);
            keep = !grip_shot_lrf_is_copy(q, p);
        }
        const unsigned kept = __ballot_sync(kFullWarp, keep);
        const long rank = ranked + __popc(kept & ((1u << lane) - 1u));
        bool px = false, pz = false;
        if (keep && rank >= first && rank <= last) {
            double v[3];
            grip_shot_lrf_offset(q, p, v);
            px = grip_shot_lrf_dot(v, x) > 0.0;
            pz = grip_shot_lrf_dot(v, z) > 0.0;
        }
        positive[0] += __popc(__ballot_sync(kFullWarp, px));
        positive[1] += __popc(__ballot_sync(kFullWarp, pz));
        ranked += __popc(kept);
    }
}

__global__ void __launch_bounds__(kThreads) lrf_kernel(support_lists s, const float *__restrict__ keypoints,
                                                       double radius, float *__restrict__ frames)
{
    __shared__ lrf_shared sh;
    const uint32_t i = blockIdx.x;
    const uint64_t begin = s.offsets[i], end = s.offsets[i + 1];
    float *rf = frames + 9 * (size_t)i;
    float p[3];
    keypoint_at(keypoints, i, p);
    double sum;
    const int valid = lrf_sums(sh, s, begin, end, p, radius, &sum);
    if (valid < GRIP_SHOT_LRF_MIN_SUPPORT) {
        fill_nan(rf, 9);
        return;
    }
    if (threadIdx.x < GRIP_SHOT_LRF_SUMS)
        sh.terms[threadIdx.x][0] = sum;
    if (threadIdx.x < 2)
        sh.nonneg[threadIdx.x] = 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        double sums[GRIP_SHOT_LRF_SUMS], x[3], z[3];
        for (int t = 0; t < GRIP_SHOT_LRF_SUMS; ++t)
            sums[t] = sh.terms[t][0];
        sh.solved = grip_shot_lrf_axes(sums, x, z);
        for (int d = 0; d < 3; ++d) {
            sh.axes[0][d] = x[d];
            sh.axes[1][d] = z[d];
        }
    }
    __syncthreads();
    if (!sh.solved) {
        fill_nan(rf, 9);
        return;
    }
    int nonneg[2], positive[2] = {0, 0};
    lrf_sign_votes(sh, s, begin, end, p, nonneg);
    const long balance_x = 2L * nonneg[0] - valid, balance_z = 2L * nonneg[1] - valid;
    if ((balance_x == 0 || balance_z == 0) && threadIdx.x < 32)
        lrf_tie_voters(sh, s, begin, end, p, valid, positive);
    if (threadIdx.x == 0) {
        double x[3], z[3];
        axes_from_shared(sh, x, z);
        const bool flip_x = grip_shot_lrf_must_flip(balance_x, positive[0]);
        const bool flip_z = grip_shot_lrf_must_flip(balance_z, positive[1]);
        for (int d = 0; d < 3; ++d) {
            x[d] = flip_x ? -x[d] : x[d];
            z[d] = flip_z ? -z[d] : z[d];
        }
        float out[9];
        grip_shot_lrf_store(x, z, out);
        for (int e = 0; e < 9; ++e)
            rf[e] = out[e];
    }
}

// ---- descriptor ---------------------------------------------------------------------------------------------

__device__ __forceinline__ double warp_sum(double v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(kFullWarp, v, offset);
    return v;
}

__global__ void __launch_bounds__(kThreads) shot_kernel(support_lists s, const float *__restrict__ keypoints,
                                                        const float *__restrict__ frames, grip_shot_shells shells,
                                                        float *__restrict__ descriptors)
{
    __shared__ unsigned long long votes[GRIP_SHOT_DIM]; // fixed-point sums (fixed_sum.cuh)
    __shared__ float hist[GRIP_SHOT_DIM];
    __shared__ double partial[kWarps];
    const uint32_t i = blockIdx.x;
    const uint64_t begin = s.offsets[i], end = s.offsets[i + 1];
    float *row = descriptors + (size_t)GRIP_SHOT_DIM * i;
    float rf[9], p[3];
    for (int e = 0; e < 9; ++e)
        rf[e] = frames[9 * (size_t)i + e];
    if (!grip_shot_keypoint_valid(rf, end - begin)) {
        fill_nan(row, GRIP_SHOT_DIM);
        return;
    }
    keypoint_at(keypoints, i, p);
    for (int j = threadIdx.x; j < GRIP_SHOT_DIM; j += kThreads)
        votes[j] = 0;
    __syncthreads();
    // GRIP_SHOT_VOTE_BINS votes a support point, each of magnitude at most 1 (shot_math.h; 2 taken, for margin)
    const int shift = grip_fixed_shift((end - begin) * GRIP_SHOT_VOTE_BINS, 1);
    for (uint64_t e = begin + threadIdx.x; e < end; e += kThreads) {
        float q[3], n[3] = {__ldg(s.nx + e), __ldg(s.ny + e), __ldg(s.nz + e)};
        point_at(s, e, q);
        grip_shot_vote vote;
        if (!grip_shot_vote_compute(&shells, p, rf, q, n, __ldg(s.sqdist + e), &vote))
            continue;
#pragma unroll
        for (int b = 0; b < GRIP_SHOT_VOTE_BINS; ++b)
            if (vote.bin[b] >= 0)
                grip_fixed_add(&votes[vote.bin[b]], vote.value[b], shift);
    }
    __syncthreads();
    for (int j = threadIdx.x; j < GRIP_SHOT_DIM; j += kThreads)
        hist[j] = (float)grip_fixed_value(votes[j], shift);
    __syncthreads();
    double sum = 0.0;
    for (int j = threadIdx.x; j < GRIP_SHOT_DIM; j += kThreads)
        sum += grip_shot_norm_term(hist[j]);
    sum = warp_sum(sum);
    if ((threadIdx.x & 31) == 0)
        partial[threadIdx.x >> 5] = sum;
    __syncthreads();
    double total = 0.0;
    for (int w = 0; w < kWarps; ++w)
        total += partial[w];
    const float norm = grip_shot_norm(total);
    for (int j = threadIdx.x; j < GRIP_SHOT_DIM; j += kThreads)
        row[j] = hist[j] / norm;
}

// ---- launchers ---------------------------------------------------------------------------------------------

// The checks both entry points share; `what` names the caller in the error text.
grip_status check_common(grip_ctx *ctx, const char *what, const grip_neighborhoods_cuda *support,
                         const float *keypoint_xyz, const float *out, uint32_t k, float radius)
{
    if (!support || !keypoint_xyz || !out || !support->offsets)
        return grip_fail(ctx, GRIP_EINVAL, "%s: support lists, keypoints and output must not be NULL", what);
    if (support->m != k)
        return grip_fail(ctx, GRIP_EINVAL, "%s: the support lists are for %u keypoints, not %u", what, support->m, k);
    if (support->entries > 0 && (!support->x || !support->y || !support->z || !support->sqdist))
        return grip_fail(ctx, GRIP_EINVAL, "%s: the support lists have no coordinates", what);
    if (!(radius > 0.0f) || !isfinite(radius))
        return grip_fail(ctx, GRIP_EINVAL, "%s: radius must be finite and > 0 (got %g)", what, (double)radius);
    if (k > (uint32_t)INT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "%s: %u keypoints exceed the launch limit of %d", what, k, INT32_MAX);
    return GRIP_OK;
}

support_lists lists_of(const grip_neighborhoods_cuda *nb)
{
    return support_lists{nb->offsets, nb->x, nb->y, nb->z, nb->sqdist, nb->nx, nb->ny, nb->nz};
}

} // namespace

extern "C" grip_status grip_shot_lrf_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *support,
                                          const float *keypoint_xyz, uint32_t k, float radius, float *frames)
{
    if (k == 0)
        return GRIP_OK;
    grip_status st = check_common(ctx, "shot_lrf (cuda)", support, keypoint_xyz, frames, k, radius);
    if (st != GRIP_OK)
        return st;
    lrf_kernel<<<k, kThreads>>>(lists_of(support), keypoint_xyz, (double)radius, frames);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}

extern "C" grip_status grip_shot_describe_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *support,
                                               const float *keypoint_xyz, const float *frames, uint32_t k,
                                               float radius, float *descriptors)
{
    if (k == 0)
        return GRIP_OK;
    grip_status st = check_common(ctx, "shot (cuda)", support, keypoint_xyz, descriptors, k, radius);
    if (st != GRIP_OK)
        return st;
    if (!frames)
        return grip_fail(ctx, GRIP_EINVAL, "shot (cuda): frames must not be NULL");
    if (support->entries > 0 && (!support->nx || !support->ny || !support->nz))
        return grip_fail(ctx, GRIP_EINVAL, "shot (cuda): the support lists carry no normals (give the surface its "
                                           "normals before searching them)");
    shot_kernel<<<k, kThreads>>>(lists_of(support), keypoint_xyz, frames, grip_shot_shells_make(radius),
                                 descriptors);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    return GRIP_OK;
}
