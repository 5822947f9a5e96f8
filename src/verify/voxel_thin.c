/* voxel_thin.c -- see voxel_thin.h. The points are sorted by voxel key; each run gives its centroid, then the
 * run's point nearest to it. */
#include "verify/voxel_thin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct keyed_point {
    uint64_t key;
    uint32_t index;
} keyed_point;

/* Sorts kp by key, stably, so that points of one voxel stay in index order (the order key_points writes them): a
 * least-significant-digit radix sort over the key bytes that differ between points, since icp thins each model it
 * has not seen (or that changed: stages/verify_model_cache.h) and a comparison sort of hundreds of thousands of
 * points costs tens of milliseconds. scratch holds count entries. */
static void sort_by_key(keyed_point *kp, keyed_point *scratch, size_t count)
{
    if (count < 2)
        return;
    uint64_t differ = 0;
    for (size_t i = 1; i < count; ++i)
        differ |= kp[i].key ^ kp[0].key;
    keyed_point *from = kp, *to = scratch;
    for (int shift = 0; shift < 64; shift += 8) {
        if (!((differ >> shift) & 0xffu))
            continue;
        size_t start[256] = {0};
        for (size_t i = 0; i < count; ++i)
            ++start[(from[i].key >> shift) & 0xffu];
        size_t at = 0;
        for (int d = 0; d < 256; ++d) {
            size_t c = start[d];
            start[d] = at;
            at += c;
        }
        for (size_t i = 0; i < count; ++i)
            to[start[(from[i].key >> shift) & 0xffu]++] = from[i];
        keyed_point *t = from;
        from = to;
        to = t;
    }
    if (from != kp)
        memcpy(kp, from, count * sizeof *kp);
}

static int point_is_finite(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

/* Grid origin and extent, in cells, of the finite points; returns their count. Minima, maxima and a count: the
 * same on any number of threads. */
static size_t grid_bounds(const float *xyz, size_t n, double leaf, int threads, double lo[3], double cells[3])
{
    double lo0 = INFINITY, lo1 = INFINITY, lo2 = INFINITY, hi0 = -INFINITY, hi1 = -INFINITY, hi2 = -INFINITY;
    size_t finite = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(min : lo0, lo1, lo2) \
    reduction(max : hi0, hi1, hi2) reduction(+ : finite)
    for (size_t i = 0; i < n; ++i) {
        const float *p = xyz + 3 * i;
        if (!point_is_finite(p))
            continue;
        ++finite;
        double c0 = floor((double)p[0] / leaf), c1 = floor((double)p[1] / leaf), c2 = floor((double)p[2] / leaf);
        lo0 = c0 < lo0 ? c0 : lo0;
        lo1 = c1 < lo1 ? c1 : lo1;
        lo2 = c2 < lo2 ? c2 : lo2;
        hi0 = c0 > hi0 ? c0 : hi0;
        hi1 = c1 > hi1 ? c1 : hi1;
        hi2 = c2 > hi2 ? c2 : hi2;
    }
    lo[0] = lo0, lo[1] = lo1, lo[2] = lo2;
    cells[0] = finite ? hi0 - lo0 + 1.0 : 0.0;
    cells[1] = finite ? hi1 - lo1 + 1.0 : 0.0;
    cells[2] = finite ? hi2 - lo2 + 1.0 : 0.0;
    return finite;
}

/* The finite points with their voxel keys, sorted by key then index. */
static grip_status key_points(grip_ctx *ctx, const float *xyz, size_t n, double leaf, keyed_point **out, size_t *count)
{
    double lo[3], cells[3];
    *out = NULL;
    *count = grid_bounds(xyz, n, leaf, grip_ctx_threads(ctx), lo, cells);
    if (*count == 0)
        return GRIP_OK;
    if (cells[0] * cells[1] * cells[2] > 4611686018427387904.0 /* 2^62 */)
        return grip_fail(ctx, GRIP_EINVAL, "verify.voxel_leaf: %g is too small for the cloud's extent", leaf);
    keyed_point *kp = malloc(*count * sizeof *kp), *scratch = malloc(*count * sizeof *scratch);
    if (!kp || !scratch) {
        free(kp);
        free(scratch);
        return grip_fail(ctx, GRIP_ENOMEM, "verify: cannot allocate %zu voxel keys", *count);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        const float *p = xyz + 3 * i;
        if (!point_is_finite(p))
            continue;
        uint64_t c[3];
        for (int a = 0; a < 3; ++a)
            c[a] = (uint64_t)(floor((double)p[a] / leaf) - lo[a]);
        kp[k].key = c[0] + (uint64_t)cells[0] * (c[1] + (uint64_t)cells[1] * c[2]);
        kp[k++].index = (uint32_t)i;
    }
    sort_by_key(kp, scratch, *count);
    free(scratch);
    *out = kp;
    return GRIP_OK;
}

/* The point of run [begin, end) nearest to the run's centroid (the run is in index order: ties to the lower). */
static uint32_t nearest_to_centroid(const float *xyz, const keyed_point *kp, size_t begin, size_t end)
{
    double c[3] = {0.0, 0.0, 0.0};
    for (size_t i = begin; i < end; ++i)
        for (int a = 0; a < 3; ++a)
            c[a] += xyz[3 * (size_t)kp[i].index + a];
    for (int a = 0; a < 3; ++a)
        c[a] /= (double)(end - begin);
    uint32_t best = kp[begin].index;
    double best_d = INFINITY;
    for (size_t i = begin; i < end; ++i) {
        const float *p = xyz + 3 * (size_t)kp[i].index;
        double d = (p[0] - c[0]) * (p[0] - c[0]) + (p[1] - c[1]) * (p[1] - c[1]) + (p[2] - c[2]) * (p[2] - c[2]);
        if (d < best_d) {
            best_d = d;
            best = kp[i].index;
        }
    }
    return best;
}

grip_status grip_voxel_thin(grip_ctx *ctx, const float *xyz, size_t n, double leaf, uint32_t **indices,
                            size_t *n_out)
{
    if (!indices || !n_out || (n > 0 && !xyz))
        return grip_fail(ctx, GRIP_EINVAL, "verify: voxel_thin: NULL argument");
    if (!(leaf > 0.0) || !isfinite(leaf))
        return grip_fail(ctx, GRIP_EINVAL, "verify.voxel_leaf: must be > 0, got %g", leaf);
    if (n >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "verify: %zu points exceed the 32-bit indices", n);
    keyed_point *kp;
    size_t count;
    grip_status st = key_points(ctx, xyz, n, leaf, &kp, &count);
    if (st != GRIP_OK)
        return st;
    size_t voxels = 0;
    for (size_t i = 0; i < count; ++i)
        voxels += i == 0 || kp[i].key != kp[i - 1].key;
    uint32_t *kept = voxels ? malloc(voxels * sizeof *kept) : NULL;
    size_t *first = malloc((voxels + 1) * sizeof *first); /* each voxel's run in kp */
    if (!first || (voxels && !kept)) {
        free(kp);
        free(kept);
        free(first);
        return grip_fail(ctx, GRIP_ENOMEM, "verify: cannot allocate %zu voxel points", voxels);
    }
    for (size_t i = 0, v = 0; i < count; ++i)
        if (i == 0 || kp[i].key != kp[i - 1].key)
            first[v++] = i;
    first[voxels] = count;
    /* each voxel on its own (its points are scattered through xyz: the reads dominate) */
#pragma omp parallel for schedule(static, 256) num_threads(grip_ctx_threads(ctx))
    for (size_t v = 0; v < voxels; ++v)
        kept[v] = nearest_to_centroid(xyz, kp, first[v], first[v + 1]);
    free(first);
    free(kp);
    *indices = kept;
    *n_out = voxels;
    return GRIP_OK;
}
