/* voxel_thin.c -- see voxel_thin.h. The points are sorted by voxel key; each run gives its centroid, then the
 * run's point nearest to it. */
#include "verify/voxel_thin.h"

#include <math.h>
#include <stdlib.h>

typedef struct keyed_point {
    uint64_t key;
    uint32_t index;
} keyed_point;

static int compare_keyed(const void *a, const void *b)
{
    const keyed_point *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int point_is_finite(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

/* Grid origin and extent, in cells, of the finite points; returns their count. */
static size_t grid_bounds(const float *xyz, size_t n, double leaf, double lo[3], double cells[3])
{
    double hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    lo[0] = lo[1] = lo[2] = INFINITY;
    size_t finite = 0;
    for (size_t i = 0; i < n; ++i) {
        const float *p = xyz + 3 * i;
        if (!point_is_finite(p))
            continue;
        ++finite;
        for (int a = 0; a < 3; ++a) {
            double c = floor((double)p[a] / leaf);
            lo[a] = c < lo[a] ? c : lo[a];
            hi[a] = c > hi[a] ? c : hi[a];
        }
    }
    for (int a = 0; a < 3; ++a)
        cells[a] = finite ? hi[a] - lo[a] + 1.0 : 0.0;
    return finite;
}

/* The finite points with their voxel keys, sorted by key then index. */
static grip_status key_points(grip_ctx *ctx, const float *xyz, size_t n, double leaf, keyed_point **out, size_t *count)
{
    double lo[3], cells[3];
    *out = NULL;
    *count = grid_bounds(xyz, n, leaf, lo, cells);
    if (*count == 0)
        return GRIP_OK;
    if (cells[0] * cells[1] * cells[2] > 4611686018427387904.0 /* 2^62 */)
        return grip_fail(ctx, GRIP_EINVAL, "verify.voxel_leaf: %g is too small for the cloud's extent", leaf);
    keyed_point *kp = malloc(*count * sizeof *kp);
    if (!kp)
        return grip_fail(ctx, GRIP_ENOMEM, "verify: cannot allocate %zu voxel keys", *count);
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
    qsort(kp, *count, sizeof *kp, compare_keyed);
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
    if (voxels && !kept) {
        free(kp);
        return grip_fail(ctx, GRIP_ENOMEM, "verify: cannot allocate %zu voxel points", voxels);
    }
    size_t v = 0;
    for (size_t i = 0; i < count;) {
        size_t j = i + 1;
        while (j < count && kp[j].key == kp[i].key)
            ++j;
        kept[v++] = nearest_to_centroid(xyz, kp, i, j);
        i = j;
    }
    free(kp);
    *indices = kept;
    *n_out = voxels;
    return GRIP_OK;
}
