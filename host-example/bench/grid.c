/* grid.c -- a uniform grid over a host cloud for the benchmarks' own measurements: support sizes,
 * the mesh resolution (nearest-neighbour spacing) and uniform-sampling keypoints. See grid.h. */
#include "bench/grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A key per cell: at most this many cells in all, so that keys never overflow. */
#define GRID_MAX_CELLS (1ull << 62)

typedef struct keyed_point {
    uint64_t key;
    uint32_t point;
} keyed_point;

static int compare_keyed(const void *a, const void *b)
{
    const keyed_point *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->point > y->point) - (x->point < y->point);
}

static int finite_point(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

static int64_t cell_of(double v, double cell)
{
    return (int64_t)floor(v / cell);
}

static uint64_t key_of(const bench_grid *g, const int64_t c[3])
{
    return (uint64_t)(((c[2] - g->lo[2]) * g->dims[1] + (c[1] - g->lo[1])) * g->dims[0] + (c[0] - g->lo[0]));
}

/* The cell range of the finite points; 0, or -1 when there are too many cells or no finite point. */
static int grid_extent(bench_grid *g, const float *xyz, size_t n)
{
    int64_t hi[3] = {INT64_MIN, INT64_MIN, INT64_MIN};
    for (int a = 0; a < 3; a++)
        g->lo[a] = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        if (!finite_point(xyz + 3 * i))
            continue;
        g->count++;
        for (int a = 0; a < 3; a++) {
            int64_t c = cell_of(xyz[3 * i + a], g->cell);
            g->lo[a] = c < g->lo[a] ? c : g->lo[a];
            hi[a] = c > hi[a] ? c : hi[a];
        }
    }
    if (g->count == 0)
        return -1;
    double cells = 1;
    for (int a = 0; a < 3; a++) {
        g->dims[a] = hi[a] - g->lo[a] + 1;
        cells *= (double)g->dims[a];
    }
    return cells < (double)GRID_MAX_CELLS ? 0 : -1;
}

int bench_grid_build(bench_grid *g, const float *xyz, size_t n, double cell)
{
    memset(g, 0, sizeof *g);
    g->xyz = xyz;
    g->cell = cell;
    if (!(cell > 0) || grid_extent(g, xyz, n) != 0) {
        memset(g, 0, sizeof *g);
        return -1;
    }
    keyed_point *kp = malloc(g->count * sizeof *kp);
    g->keys = malloc(g->count * sizeof *g->keys);
    g->points = malloc(g->count * sizeof *g->points);
    if (!kp || !g->keys || !g->points) {
        free(kp);
        bench_grid_free(g);
        return -1;
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (!finite_point(xyz + 3 * i))
            continue;
        int64_t c[3] = {cell_of(xyz[3 * i], cell), cell_of(xyz[3 * i + 1], cell), cell_of(xyz[3 * i + 2], cell)};
        kp[at++] = (keyed_point){key_of(g, c), (uint32_t)i};
    }
    qsort(kp, g->count, sizeof *kp, compare_keyed);
    for (size_t i = 0; i < g->count; i++) {
        g->keys[i] = kp[i].key;
        g->points[i] = kp[i].point;
    }
    free(kp);
    return 0;
}

void bench_grid_free(bench_grid *g)
{
    free(g->keys);
    free(g->points);
    memset(g, 0, sizeof *g);
}

/* The range [*begin, *end) of g->points in cell c (empty when c is outside the grid or holds nothing). */
static void cell_range(const bench_grid *g, const int64_t c[3], size_t *begin, size_t *end)
{
    *begin = *end = 0;
    for (int a = 0; a < 3; a++)
        if (c[a] < g->lo[a] || c[a] >= g->lo[a] + g->dims[a])
            return;
    uint64_t key = key_of(g, c);
    size_t lo = 0, hi = g->count;
    while (lo < hi) { /* first key >= key */
        size_t mid = lo + (hi - lo) / 2;
        if (g->keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    *begin = *end = lo;
    while (*end < g->count && g->keys[*end] == key)
        (*end)++;
}

static double squared_distance(const float *a, const float *b)
{
    double dx = (double)a[0] - b[0], dy = (double)a[1] - b[1], dz = (double)a[2] - b[2];
    return dx * dx + dy * dy + dz * dz;
}

size_t bench_grid_count_within(const bench_grid *g, const float p[3], double r)
{
    int64_t span = (int64_t)ceil(r / g->cell), c0[3];
    for (int a = 0; a < 3; a++)
        c0[a] = cell_of(p[a], g->cell);
    size_t count = 0;
    double r2 = r * r;
    for (int64_t dz = -span; dz <= span; dz++)
        for (int64_t dy = -span; dy <= span; dy++)
            for (int64_t dx = -span; dx <= span; dx++) {
                int64_t c[3] = {c0[0] + dx, c0[1] + dy, c0[2] + dz};
                size_t b, e;
                cell_range(g, c, &b, &e);
                for (size_t k = b; k < e; k++)
                    count += squared_distance(p, g->xyz + 3 * (size_t)g->points[k]) <= r2;
            }
    return count;
}

/* Nearest other point among the cells at Chebyshev distance exactly `ring` from c0; updates *best2. */
static void search_ring(const bench_grid *g, const int64_t c0[3], int64_t ring, size_t i, double *best2)
{
    const float *p = g->xyz + 3 * i;
    for (int64_t dz = -ring; dz <= ring; dz++)
        for (int64_t dy = -ring; dy <= ring; dy++)
            for (int64_t dx = -ring; dx <= ring; dx++) {
                if (llabs(dx) != ring && llabs(dy) != ring && llabs(dz) != ring)
                    continue;
                int64_t c[3] = {c0[0] + dx, c0[1] + dy, c0[2] + dz};
                size_t b, e;
                cell_range(g, c, &b, &e);
                for (size_t k = b; k < e; k++) {
                    double d2 = g->points[k] == i ? INFINITY : squared_distance(p, g->xyz + 3 * (size_t)g->points[k]);
                    *best2 = d2 < *best2 ? d2 : *best2;
                }
            }
}

double bench_grid_nearest(const bench_grid *g, size_t i)
{
    int64_t c0[3], widest = 0;
    for (int a = 0; a < 3; a++) {
        c0[a] = cell_of(g->xyz[3 * i + a], g->cell);
        widest = g->dims[a] > widest ? g->dims[a] : widest;
    }
    double best2 = INFINITY;
    /* a point `ring + 1` cells away is at least ring * cell away along one axis: once the best is that close,
     * no farther ring can hold a nearer point */
    for (int64_t ring = 0; ring <= widest; ring++) {
        search_ring(g, c0, ring, i, &best2);
        double reach = (double)ring * g->cell;
        if (best2 <= reach * reach)
            break;
    }
    return sqrt(best2);
}

int bench_grid_sample(const bench_grid *g, uint32_t **idx, size_t *count)
{
    *count = 0;
    *idx = malloc((g->count + 1) * sizeof **idx);
    if (!*idx)
        return -1;
    for (size_t b = 0, e; b < g->count; b = e) {
        const float *first = g->xyz + 3 * (size_t)g->points[b];
        float centre[3];
        for (int a = 0; a < 3; a++)
            centre[a] = (float)(((double)cell_of(first[a], g->cell) + 0.5) * g->cell);
        uint32_t best = g->points[b];
        double best2 = squared_distance(centre, first);
        for (e = b + 1; e < g->count && g->keys[e] == g->keys[b]; e++) {
            double d2 = squared_distance(centre, g->xyz + 3 * (size_t)g->points[e]);
            if (d2 < best2) { /* points ascend within a cell: ties keep the lower index */
                best2 = d2;
                best = g->points[e];
            }
        }
        (*idx)[(*count)++] = best;
    }
    return 0;
}
