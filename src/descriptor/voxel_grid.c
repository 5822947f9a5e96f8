/* voxel_grid.c -- the voxel grid's CPU twin (see voxel_grid.h): every finite point's voxel, one sort by
 * (i, j, k, point index), then one pass that numbers the voxels. */
#include "descriptor/voxel_grid.h"
#include "descriptor/voxel_grid_math.h"
#include "descriptor/voxel_key.h"

#include <stdlib.h>
#include <string.h>

typedef struct keyed_point {
    int32_t ijk[3];
    uint32_t index;
} keyed_point;

static int compare_keyed(const void *a, const void *b)
{
    const keyed_point *p = a, *q = b;
    for (int i = 0; i < 3; ++i)
        if (p->ijk[i] != q->ijk[i])
            return p->ijk[i] < q->ijk[i] ? -1 : 1;
    return (p->index > q->index) - (p->index < q->index);
}

/* The finite points with their voxels, in cloud order; *count of them. */
static grip_status key_points(grip_ctx *ctx, const char *what, const float *xyz, size_t n, float leaf,
                              keyed_point *keyed, size_t *count)
{
    const float inv = 1.0f / leaf;
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        const float *p = xyz + 3 * i;
        if (!grip_voxel_point_finite(p))
            continue;
        if (grip_voxel_of(p, inv, keyed[k].ijk) != 0)
            return grip_voxel_fail_too_far(ctx, what, i, p, leaf);
        keyed[k++].index = (uint32_t)i;
    }
    *count = k;
    return GRIP_OK;
}

/* order, start and voxel_of from the sorted points. */
static void number_voxels(const keyed_point *sorted, size_t finite, grip_voxel_grid *g)
{
    for (size_t i = 0; i < g->n; ++i)
        g->voxel_of[i] = GRIP_VOXEL_NONE;
    size_t v = 0;
    for (size_t e = 0; e < finite; ++e) {
        if (e == 0 || memcmp(sorted[e].ijk, sorted[e - 1].ijk, sizeof sorted[e].ijk) != 0)
            g->start[v++] = (uint32_t)e;
        g->order[e] = sorted[e].index;
        g->voxel_of[sorted[e].index] = (uint32_t)(v - 1);
    }
    g->start[v] = (uint32_t)finite;
    g->voxels = v;
    g->finite = finite;
}

grip_status grip_voxel_grid_build(grip_ctx *ctx, const char *what, const float *xyz, size_t n, float leaf,
                                  grip_voxel_grid *grid)
{
    memset(grid, 0, sizeof *grid);
    grip_status s = grip_voxel_check_leaf(ctx, what, leaf);
    if (s)
        return s;
    if (!xyz && n > 0)
        return grip_fail(ctx, GRIP_EINVAL, "%s: the cloud is NULL with %zu points", what, n);
    if (n >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "%s: %zu points exceed the 32-bit index range", what, n);
    keyed_point *keyed = malloc((n ? n : 1) * sizeof *keyed);
    grid->n = n;
    grid->order = malloc((n ? n : 1) * sizeof *grid->order);
    grid->start = malloc((n + 1) * sizeof *grid->start);
    grid->voxel_of = malloc((n ? n : 1) * sizeof *grid->voxel_of);
    size_t finite = 0;
    if (!keyed || !grid->order || !grid->start || !grid->voxel_of)
        s = grip_fail(ctx, GRIP_ENOMEM, "%s: out of memory for the voxel grid of %zu points", what, n);
    if (!s)
        s = key_points(ctx, what, xyz, n, leaf, keyed, &finite);
    if (!s) {
        qsort(keyed, finite, sizeof *keyed, compare_keyed);
        number_voxels(keyed, finite, grid);
    }
    free(keyed);
    if (s)
        grip_voxel_grid_free(grid);
    return s;
}

void grip_voxel_grid_centroids(const grip_voxel_grid *grid, const float *xyz, float *out)
{
    for (size_t v = 0; v < grid->voxels; ++v)
        grip_voxel_grid_centroid_of(grid->order, grid->start[v], grid->start[v + 1], xyz, out + 3 * v);
}

void grip_voxel_grid_mean_normals(const grip_voxel_grid *grid, const float *normals, float *out)
{
    for (size_t v = 0; v < grid->voxels; ++v)
        grip_voxel_grid_mean_normal_of(grid->order, grid->start[v], grid->start[v + 1], normals, out + 4 * v);
}

void grip_voxel_grid_spread(const grip_voxel_grid *grid, const float *rows, float *out)
{
    for (size_t i = 0; i < grid->n; ++i) {
        const uint32_t v = grid->voxel_of[i];
        if (v == GRIP_VOXEL_NONE)
            out[4 * i] = out[4 * i + 1] = out[4 * i + 2] = out[4 * i + 3] = NAN;
        else
            memcpy(out + 4 * i, rows + 4 * (size_t)v, 4 * sizeof *out);
    }
}

void grip_voxel_grid_free(grip_voxel_grid *grid)
{
    free(grid->order);
    free(grid->start);
    free(grid->voxel_of);
    memset(grid, 0, sizeof *grid);
}
