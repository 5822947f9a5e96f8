/* uniform_sampling.c -- PCL 1.13's UniformSampling (see uniform_sampling.h): one pass over the points in cloud
 * order with a hash table of voxels, each remembering its best point so far, as PCL's leaf map does. */
#include "descriptor/uniform_sampling.h"
#include "descriptor/voxel_key.h"

#include <math.h>
#include <stdlib.h>

#define SLOT_EMPTY UINT32_MAX /* point indices are < n <= UINT32_MAX */

typedef struct voxel_slot {
    int32_t ijk[3];
    uint32_t best; /* index of the point kept so far, SLOT_EMPTY for a free slot */
    float score;   /* its score (see uniform_sampling.h) */
} voxel_slot;

typedef struct voxel_table {
    voxel_slot *slots;
    size_t mask; /* capacity - 1, capacity a power of two */
} voxel_table;

/* PCL 1.13 compares ((x, y, z, 1) - (c, 0)).squaredNorm() in float, with the voxel centre
 * c = ((float)ijk + 0.5f) * leaf. Eigen evaluates that squared norm as one SSE packet, whose horizontal sum
 * adds lanes 0+2 and 1+3 first: (dx^2 + dz^2) + (dy^2 + 1). */
static float voxel_score(const float *p, const int32_t ijk[3], float leaf)
{
    float dx = p[0] - ((float)ijk[0] + 0.5f) * leaf;
    float dy = p[1] - ((float)ijk[1] + 0.5f) * leaf;
    float dz = p[2] - ((float)ijk[2] + 0.5f) * leaf;
    return (dx * dx + dz * dz) + (dy * dy + 1.0f);
}

static size_t voxel_hash(const int32_t ijk[3])
{
    uint64_t h = (uint64_t)(uint32_t)ijk[0] * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uint32_t)ijk[1] * 0xC2B2AE3D27D4EB4Full;
    h ^= (uint64_t)(uint32_t)ijk[2] * 0x165667B19E3779F9ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return (size_t)h;
}

/* The slot of voxel ijk: its own, or the free slot where it belongs (linear probing; the table is at most
 * half full, so there always is one). */
static voxel_slot *voxel_find(const voxel_table *t, const int32_t ijk[3])
{
    for (size_t s = voxel_hash(ijk) & t->mask;; s = (s + 1) & t->mask) {
        voxel_slot *v = &t->slots[s];
        if (v->best == SLOT_EMPTY || (v->ijk[0] == ijk[0] && v->ijk[1] == ijk[1] && v->ijk[2] == ijk[2]))
            return v;
    }
}

/* A table with room for `points` voxels at load <= 1/2. */
static grip_status voxel_table_new(grip_ctx *ctx, size_t points, voxel_table *t)
{
    size_t cap = 16;
    while (cap < 2 * points) {
        if (cap > ((size_t)-1 / sizeof(voxel_slot)) / 2)
            return grip_fail(ctx, GRIP_ENOMEM, "uniform_sampling: %zu points are too many for the voxel table",
                             points);
        cap *= 2;
    }
    t->slots = malloc(cap * sizeof *t->slots);
    if (!t->slots)
        return grip_fail(ctx, GRIP_ENOMEM, "uniform_sampling: out of memory for %zu voxels", cap);
    for (size_t s = 0; s < cap; ++s)
        t->slots[s].best = SLOT_EMPTY;
    t->mask = cap - 1;
    return GRIP_OK;
}

/* First pass, in cloud order: every finite point enters its voxel and replaces the kept point only when its
 * score is strictly smaller, so the first of equal scores stays. Returns the number of voxels. */
static grip_status fill_voxels(grip_ctx *ctx, const float *xyz, size_t n, float leaf, const voxel_table *t,
                               size_t *voxels)
{
    float inv = 1.0f / leaf;
    *voxels = 0;
    for (size_t i = 0; i < n; ++i) {
        const float *p = xyz + i * 3;
        if (!grip_voxel_point_finite(p))
            continue;
        int32_t ijk[3];
        if (grip_voxel_of(p, inv, ijk) != 0)
            return grip_voxel_fail_too_far(ctx, "uniform_sampling", i, p, leaf);
        float score = voxel_score(p, ijk, leaf);
        voxel_slot *v = voxel_find(t, ijk);
        if (v->best == SLOT_EMPTY) {
            v->ijk[0] = ijk[0];
            v->ijk[1] = ijk[1];
            v->ijk[2] = ijk[2];
            v->best = (uint32_t)i;
            v->score = score;
            ++*voxels;
        } else if (score < v->score) {
            v->best = (uint32_t)i;
            v->score = score;
        }
    }
    return GRIP_OK;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The kept point of every voxel, ascending. */
static grip_status collect_sorted(grip_ctx *ctx, const voxel_table *t, size_t voxels, uint32_t **out_idx)
{
    if (voxels == 0)
        return GRIP_OK;
    uint32_t *idx = malloc(voxels * sizeof *idx);
    if (!idx)
        return grip_fail(ctx, GRIP_ENOMEM, "uniform_sampling: out of memory for %zu keypoints", voxels);
    size_t k = 0;
    for (size_t s = 0; s <= t->mask; ++s)
        if (t->slots[s].best != SLOT_EMPTY)
            idx[k++] = t->slots[s].best;
    qsort(idx, k, sizeof *idx, compare_u32);
    *out_idx = idx;
    return GRIP_OK;
}

grip_status grip_uniform_sampling(grip_ctx *ctx, const float *xyz, size_t n, float leaf, uint32_t **out_idx,
                                  size_t *out_count)
{
    if (!out_idx || !out_count)
        return grip_fail(ctx, GRIP_EINVAL, "uniform_sampling: out_idx and out_count must not be NULL");
    *out_idx = NULL;
    *out_count = 0;
    if (!xyz && n > 0)
        return grip_fail(ctx, GRIP_EINVAL, "uniform_sampling: xyz is NULL with %zu points", n);
    if (n > UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "uniform_sampling: %zu points exceed the 32-bit index range", n);
    grip_status st = grip_voxel_check_leaf(ctx, "uniform_sampling", leaf);
    if (st != GRIP_OK)
        return st;
    size_t finite = 0;
    for (size_t i = 0; i < n; ++i)
        finite += grip_voxel_point_finite(xyz + i * 3);
    voxel_table t = {NULL, 0};
    st = voxel_table_new(ctx, finite, &t);
    if (st != GRIP_OK)
        return st;
    size_t voxels = 0;
    st = fill_voxels(ctx, xyz, n, leaf, &t, &voxels);
    if (st == GRIP_OK)
        st = collect_sorted(ctx, &t, voxels, out_idx);
    free(t.slots);
    if (st == GRIP_OK)
        *out_count = voxels;
    return st;
}
