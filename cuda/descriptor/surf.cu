// surf.cu -- SURF on the GPU, the twin of src/descriptor/surf.c (see src/descriptor/surf_cuda.h). The per-pixel
// and per-keypoint arithmetic is surf_math.h's, shared with the CPU twin; this file only lays it out in threads.
#include "cuda/core/check.cuh"
#include "cuda/core/device.cuh"

#include <cub/cub.cuh>

extern "C" {
#include "descriptor/surf.h"
#include "descriptor/surf_cuda.h"
}

#include <string.h>

namespace {

constexpr int kWarp = 32;
constexpr int kScanThreads = 256; // a row scan's block
constexpr int kColumnTile = 32;   // columns per column-scan block (x), and row segments per column (y)
constexpr int kWarpsPerBlock = 4; // keypoints per block of the orientation and descriptor kernels
constexpr int kThreads = 256;     // the flat kernels' block

__constant__ float c_gauss25[36] = GRIP_SURF_GAUSS25_TABLE;

unsigned blocks_for(size_t n, unsigned per_block)
{
    return (unsigned)((n + per_block - 1) / per_block);
}

// Row pass of the integral image: block r writes row r + 1 of ii, the inclusive prefix sums of grey's row r (a
// block-wide scan over chunks of kScanThreads columns, the running total carried across chunks); column 0 is 0.
__global__ void row_scan_kernel(const uint8_t *__restrict__ grey, uint32_t width, uint32_t *__restrict__ ii)
{
    using Scan = cub::BlockScan<uint32_t, kScanThreads>;
    __shared__ typename Scan::TempStorage tmp;
    const uint32_t r = blockIdx.x;
    uint32_t *out = ii + (size_t)(r + 1) * (width + 1);
    if (threadIdx.x == 0)
        out[0] = 0;
    uint32_t carry = 0;
    for (uint32_t base = 0; base < width; base += kScanThreads) {
        const uint32_t c = base + threadIdx.x;
        const uint32_t v = c < width ? grey[(size_t)r * width + c] : 0u;
        uint32_t incl, total;
        Scan(tmp).InclusiveSum(v, incl, total);
        if (c < width)
            out[c + 1] = carry + incl;
        carry += total;
        __syncthreads(); // tmp is reused by the next chunk's scan
    }
}

// Column pass: a block owns kColumnTile columns of ii (x) and cuts rows 1 .. height into kColumnTile segments (y).
// Each thread scans its segment of its column, the segment totals are scanned in shared memory, and each thread
// adds the total of the segments above its own. uint32 arithmetic: exact in any order.
__global__ void column_scan_kernel(uint32_t width, uint32_t height, uint32_t *__restrict__ ii)
{
    __shared__ uint32_t totals[kColumnTile][kColumnTile]; // [segment][column]
    const uint32_t c = blockIdx.x * kColumnTile + threadIdx.x, seg = threadIdx.y;
    const uint32_t len = (height + kColumnTile - 1) / kColumnTile;
    const uint32_t first = 1 + seg * len, last = min(height, first + len - 1); // rows first .. last
    const size_t stride = (size_t)width + 1;
    uint32_t run = 0;
    if (c <= width)
        for (uint32_t r = first; r <= last; ++r) {
            run += ii[r * stride + c];
            ii[r * stride + c] = run;
        }
    totals[seg][threadIdx.x] = run;
    __syncthreads();
    uint32_t above = 0;
    for (uint32_t s = 0; s < seg; ++s)
        above += totals[s][threadIdx.x];
    if (c <= width && above)
        for (uint32_t r = first; r <= last; ++r)
            ii[r * stride + c] += above;
}

__global__ void response_kernel(const uint32_t *__restrict__ ii, int width, int height, grip_surf_layer layer,
                                float *__restrict__ resp, uint8_t *__restrict__ lap)
{
    const uint32_t ac = blockIdx.x * blockDim.x + threadIdx.x, ar = blockIdx.y;
    const grip_surf_layer L = layer;
    if (ac >= L.width)
        return;
    const size_t at = L.offset + (size_t)ar * L.width + ac;
    resp[at] = grip_surf_response(ii, width, height, &L, (int)ar, (int)ac, lap + at);
}

// The sort key of a keypoint: no depth last, then the CPU twin's (slot, row, column) order.
__device__ __forceinline__ unsigned long long key_of(bool no_depth, uint32_t slot, uint32_t r, uint32_t c)
{
    return ((unsigned long long)no_depth << 63) | ((unsigned long long)slot << 48) | ((unsigned long long)r << 24) |
           (unsigned long long)c;
}

struct detect_args {
    const float *resp;
    const uint8_t *lap;
    const grip_surf_pyramid *pyr; // device memory
    uint32_t bi, mi, ti, slot;
    float threshold;
    const float *xyz; // NULL: no depth check
    uint32_t width, height, capacity;
    grip_surf_keypoint *kps;
    unsigned long long *keys;
    uint32_t *vals;
    uint32_t *counters; // [0] found, [1] of which without depth
};

// A thread per sample of the top layer: the 3 x 3 x 3 test and the fit (surf_math.h), the depth at the rounded
// pixel, and an append through the atomic counter; past capacity the point is only counted.
__global__ void extremum_kernel(const detect_args a)
{
    const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
    if (c >= a.pyr->layer[a.ti].width)
        return;
    grip_surf_keypoint kp;
    if (!grip_surf_extremum(a.resp, a.lap, a.pyr, a.bi, a.mi, a.ti, (int)r, (int)c, a.threshold, &kp))
        return;
    const int px = grip_surf_clampi(grip_surf_round(kp.x), 0, (int)a.width - 1);
    const int py = grip_surf_clampi(grip_surf_round(kp.y), 0, (int)a.height - 1);
    kp.pixel = (uint32_t)py * a.width + (uint32_t)px;
    kp.slot = a.slot;
    bool no_depth = false;
    if (a.xyz) {
        const float *p = a.xyz + 3 * (size_t)kp.pixel;
        no_depth = !(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]));
    }
    const uint32_t at = atomicAdd(&a.counters[0], 1u);
    if (no_depth)
        atomicAdd(&a.counters[1], 1u);
    if (at >= a.capacity)
        return;
    a.kps[at] = kp;
    a.keys[at] = key_of(no_depth, a.slot, r, c);
    a.vals[at] = at;
}

// The kept keypoints (the first `count` after the sort) in order, with their pixel and point.
__global__ void gather_kernel(const grip_surf_keypoint *__restrict__ kps, const uint32_t *__restrict__ order,
                              uint32_t count, const float *__restrict__ xyz, grip_surf_keypoint *__restrict__ out,
                              uint32_t *__restrict__ pixels, float *__restrict__ out_xyz)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    const grip_surf_keypoint kp = kps[order[i]];
    out[i] = kp;
    pixels[i] = kp.pixel;
    if (xyz)
        for (int d = 0; d < 3; ++d)
            out_xyz[3 * (size_t)i + d] = xyz[3 * (size_t)kp.pixel + d];
}

// A warp per keypoint: the lanes compute the 109 samples into the warp's shared arrays, then each lane sums whole
// windows in the twin's order; the longest sum wins, ties to the earlier window (the twin's first strict maximum).
__global__ void orientation_kernel(const uint32_t *__restrict__ ii, int width, int height,
                                   grip_surf_keypoint *__restrict__ kps, uint32_t count)
{
    __shared__ float rx[kWarpsPerBlock][GRIP_SURF_ORIENT_SAMPLES], ry[kWarpsPerBlock][GRIP_SURF_ORIENT_SAMPLES],
        ang[kWarpsPerBlock][GRIP_SURF_ORIENT_SAMPLES];
    const uint32_t warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const uint32_t k = blockIdx.x * kWarpsPerBlock + warp;
    if (k >= count)
        return; // warps never synchronise with each other
    const grip_surf_keypoint kp = kps[k];
    for (int s = (int)lane; s < GRIP_SURF_ORIENT_SAMPLES; s += kWarp)
        grip_surf_orient_sample(ii, width, height, &kp, c_gauss25, s, &rx[warp][s], &ry[warp][s], &ang[warp][s]);
    __syncwarp();
    float best = 0.0f, bx = 0.0f, by = 0.0f;
    int bw = GRIP_SURF_ORIENT_WINDOWS;
    for (int w = (int)lane; w < GRIP_SURF_ORIENT_WINDOWS; w += kWarp) {
        float sx, sy;
        grip_surf_window_sum(rx[warp], ry[warp], ang[warp], w, &sx, &sy);
        const float n2 = grip_surf_norm2(sx, sy);
        if (n2 > best) { // a lane's windows ascend: its first strict maximum
            best = n2;
            bx = sx;
            by = sy;
            bw = w;
        }
    }
    for (int off = kWarp / 2; off > 0; off /= 2) {
        const float ob = __shfl_xor_sync(0xffffffffu, best, off), ox = __shfl_xor_sync(0xffffffffu, bx, off),
                    oy = __shfl_xor_sync(0xffffffffu, by, off);
        const int ow = __shfl_xor_sync(0xffffffffu, bw, off);
        if (ob > best || (ob == best && ow < bw)) {
            best = ob;
            bx = ox;
            by = oy;
            bw = ow;
        }
    }
    if (lane == 0)
        kps[k].orientation = grip_surf_angle(bx, by); // (0, 0) when no window has a positive length: angle 0
}

// A warp per keypoint: lane j < 16 computes subregion (j / 4, j % 4) into the warp's row in shared memory, lane 0
// normalises the row in the twin's order, and the lanes write it out.
__global__ void descriptor_kernel(const uint32_t *__restrict__ ii, int width, int height,
                                  const grip_surf_keypoint *__restrict__ kps, uint32_t count, int upright, int extended,
                                  int sign_column, float *__restrict__ out)
{
    __shared__ float row[kWarpsPerBlock][129];
    const uint32_t warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const uint32_t k = blockIdx.x * kWarpsPerBlock + warp;
    if (k >= count)
        return;
    const grip_surf_keypoint kp = kps[k];
    const int cv = grip_surf_cell_values(extended), core = 16 * cv, dim = core + (sign_column ? 1 : 0);
    if (lane < 16) {
        float co, si;
        grip_surf_frame(&kp, upright, &co, &si);
        grip_surf_cell(ii, width, height, &kp, co, si, extended, (int)lane / 4, (int)lane % 4, row[warp] + lane * cv);
    }
    __syncwarp();
    if (lane == 0) {
        grip_surf_normalise(row[warp], core);
        if (sign_column)
            row[warp][core] = grip_surf_sign_value(&kp, row[warp][0]);
    }
    __syncwarp();
    for (int j = (int)lane; j < dim; j += kWarp)
        out[(size_t)k * dim + j] = row[warp][j];
}

// Scratch of one run, freed by scratch_free.
struct scratch {
    uint32_t *ii = nullptr;
    float *resp = nullptr;
    uint8_t *lap = nullptr;
    grip_surf_keypoint *kps = nullptr;
    unsigned long long *keys[2] = {nullptr, nullptr};
    uint32_t *vals[2] = {nullptr, nullptr};
    uint32_t *counters = nullptr;
    grip_surf_pyramid *pyr = nullptr;
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
};

void scratch_free(scratch *s)
{
    grip_cuda_free(s->ii);
    grip_cuda_free(s->resp);
    grip_cuda_free(s->lap);
    grip_cuda_free(s->kps);
    grip_cuda_free(s->keys[0]);
    grip_cuda_free(s->keys[1]);
    grip_cuda_free(s->vals[0]);
    grip_cuda_free(s->vals[1]);
    grip_cuda_free(s->counters);
    grip_cuda_free(s->pyr);
    grip_cuda_free(s->tmp);
}

grip_status scratch_alloc(grip_ctx *ctx, const grip_surf_pyramid &pyr, uint32_t width, uint32_t height,
                          uint32_t capacity, scratch *s)
{
    grip_status st = grip_cuda_alloc_n(ctx, &s->ii, ((size_t)width + 1) * ((size_t)height + 1));
    if (!st)
        st = grip_cuda_alloc_n(ctx, &s->resp, pyr.total);
    if (!st)
        st = grip_cuda_alloc_n(ctx, &s->lap, pyr.total);
    if (!st)
        st = grip_cuda_alloc_n(ctx, &s->kps, capacity);
    for (int i = 0; i < 2 && !st; ++i) {
        st = grip_cuda_alloc_n(ctx, &s->keys[i], capacity);
        if (!st)
            st = grip_cuda_alloc_n(ctx, &s->vals[i], capacity);
    }
    if (!st)
        st = grip_cuda_alloc_n(ctx, &s->counters, 2);
    if (!st)
        st = grip_cuda_alloc_n(ctx, &s->pyr, 1);
    if (st)
        return st;
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, s->pyr, &pyr, sizeof pyr, cudaMemcpyHostToDevice));
    GRIP_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(NULL, s->tmp_bytes, s->keys[0], s->keys[1], s->vals[0],
                                                         s->vals[1], (int)capacity));
    void *v = nullptr;
    st = grip_cuda_alloc(ctx, s->tmp_bytes, &v);
    s->tmp = v;
    return st;
}

// Integral image, layers, and the maxima appended in s; *found and *no_depth their counts.
grip_status detect(grip_ctx *ctx, const uint8_t *grey, const float *xyz, uint32_t width, uint32_t height,
                   const grip_surf_params *p, const grip_surf_pyramid &pyr, scratch *s, uint32_t *found,
                   uint32_t *no_depth)
{
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemset(s->ii, 0, ((size_t)width + 1) * sizeof(uint32_t)));
    row_scan_kernel<<<height, kScanThreads>>>(grey, width, s->ii);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    column_scan_kernel<<<blocks_for((size_t)width + 1, kColumnTile), dim3(kColumnTile, kColumnTile)>>>(width, height,
                                                                                                       s->ii);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    for (uint32_t l = 0; l < pyr.n_layers; ++l) {
        const grip_surf_layer &L = pyr.layer[l];
        if (L.width == 0 || L.height == 0)
            continue;
        response_kernel<<<dim3(blocks_for(L.width, kThreads), L.height), kThreads>>>(s->ii, (int)width, (int)height, L,
                                                                                     s->resp, s->lap);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
    }
    GRIP_CUDA_CHECK_COPY(ctx, cudaMemset(s->counters, 0, 2 * sizeof(uint32_t)));
    detect_args a;
    a.resp = s->resp;
    a.lap = s->lap;
    a.pyr = s->pyr;
    a.threshold = p->threshold;
    a.xyz = xyz;
    a.width = width;
    a.height = height;
    a.capacity = p->capacity;
    a.kps = s->kps;
    a.keys = s->keys[0];
    a.vals = s->vals[0];
    a.counters = s->counters;
    for (uint32_t o = 0; o < p->octaves; ++o)
        for (uint32_t i = 1; i + 1 < p->intervals; ++i) {
            a.bi = pyr.map[o][i - 1];
            a.mi = pyr.map[o][i];
            a.ti = pyr.map[o][i + 1];
            a.slot = o * p->intervals + i;
            const grip_surf_layer &T = pyr.layer[a.ti];
            if (T.width == 0 || T.height == 0)
                continue;
            extremum_kernel<<<dim3(blocks_for(T.width, kThreads), T.height), kThreads>>>(a);
            GRIP_CUDA_CHECK_LAUNCHED(ctx);
        }
    uint32_t counts[2];
    GRIP_CUDA_CHECK(ctx, grip_cuda_memcpy(ctx, counts, s->counters, sizeof counts, cudaMemcpyDeviceToHost));
    *found = counts[0];
    *no_depth = counts[1];
    return GRIP_OK;
}

grip_status run(grip_ctx *ctx, const uint8_t *grey, const float *xyz, uint32_t width, uint32_t height,
                const grip_surf_params *p, scratch *s, grip_surf_cuda_result *out)
{
    GRIP_CUDA_CHECK(ctx, cudaSetDevice(ctx->device));
    grip_surf_pyramid pyr;
    grip_surf_pyramid_make(p->octaves, p->intervals, p->init_step, width, height, &pyr);
    grip_status st = scratch_alloc(ctx, pyr, width, height, p->capacity, s);
    if (st)
        return st;
    uint32_t found = 0, no_depth = 0;
    st = detect(ctx, grey, xyz, width, height, p, pyr, s, &found, &no_depth);
    if (st)
        return st;
    out->n_found = found;
    if (found > p->capacity)
        return grip_fail(ctx, GRIP_ECONFIG,
                         "surf (cuda): %u keypoints found, more than capacity %u: raise capacity "
                         "or threshold",
                         found, p->capacity);
    out->n_no_depth = no_depth;
    out->count = found - no_depth;
    const uint32_t count = (uint32_t)out->count, dim = grip_surf_dim(p);
    if (found == 0)
        return GRIP_OK;
    GRIP_CUDA_CHECK_LAUNCH(ctx, cub::DeviceRadixSort::SortPairs(s->tmp, s->tmp_bytes, s->keys[0], s->keys[1],
                                                                s->vals[0], s->vals[1], (int)found));
    if (count == 0)
        return GRIP_OK;
    st = grip_cuda_alloc_n(ctx, &out->keypoints, count);
    if (!st)
        st = grip_cuda_alloc_n(ctx, &out->pixels, count);
    if (!st && xyz)
        st = grip_cuda_alloc_n(ctx, &out->xyz, 3 * (size_t)count);
    if (!st)
        st = grip_cuda_alloc_n(ctx, &out->descriptors, (size_t)count * dim);
    if (st)
        return st;
    gather_kernel<<<blocks_for(count, kThreads), kThreads>>>(s->kps, s->vals[1], count, xyz, out->keypoints,
                                                             out->pixels, out->xyz);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    const unsigned warps_blocks = blocks_for(count, kWarpsPerBlock);
    if (!p->upright) {
        orientation_kernel<<<warps_blocks, kWarpsPerBlock * kWarp>>>(s->ii, (int)width, (int)height, out->keypoints,
                                                                     count);
        GRIP_CUDA_CHECK_LAUNCHED(ctx);
    }
    descriptor_kernel<<<warps_blocks, kWarpsPerBlock * kWarp>>>(s->ii, (int)width, (int)height, out->keypoints, count,
                                                                p->upright, p->extended, p->sign_column,
                                                                out->descriptors);
    GRIP_CUDA_CHECK_LAUNCHED(ctx);
    GRIP_CUDA_CHECK(ctx, cudaStreamSynchronize(0));
    return GRIP_OK;
}

} // namespace

extern "C" void grip_surf_cuda_result_free(grip_surf_cuda_result *r)
{
    if (!r)
        return;
    grip_cuda_free(r->keypoints);
    grip_cuda_free(r->pixels);
    grip_cuda_free(r->xyz);
    grip_cuda_free(r->descriptors);
    memset(r, 0, sizeof *r);
}

extern "C" grip_status grip_surf_cuda(grip_ctx *ctx, const uint8_t *grey, const float *xyz, uint32_t width,
                                      uint32_t height, const grip_surf_params *p, grip_surf_cuda_result *out)
{
    if (!out || !grey || !p)
        return grip_fail(ctx, GRIP_EINVAL, "surf (cuda): the grey image, parameters and result must not be NULL");
    memset(out, 0, sizeof *out);
    grip_status st = grip_surf_check(ctx, p, width, height, "surf (cuda)");
    if (st)
        return st;
    if (ctx->device < 0)
        return grip_fail(ctx, GRIP_ENODEV, "surf (cuda): the context has no device");
    scratch s;
    st = run(ctx, grey, xyz, width, height, p, &s, out);
    scratch_free(&s);
    if (st) {
        const size_t found = out->n_found;
        grip_surf_cuda_result_free(out);
        out->n_found = found;
    }
    return st;
}
