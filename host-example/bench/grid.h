/* grid.h -- a uniform grid over a host cloud for the benchmarks' own measurements: support sizes, the mesh
 * resolution (nearest-neighbour spacing) and uniform-sampling keypoints. Internal to bench/. */
#ifndef GRIP_HOST_BENCH_GRID_H
#define GRIP_HOST_BENCH_GRID_H

#include <stddef.h>
#include <stdint.h>

/* The finite points of a cloud sorted by cell (cells of `cell` units, aligned to multiples of it, as PCL's voxel
 * filters align theirs). Borrows xyz; owns the rest. */
typedef struct bench_grid {
    const float *xyz;
    double cell;
    int64_t lo[3];     /* cell coordinates of the first cell on each axis */
    int64_t dims[3];   /* cells on each axis */
    size_t count;      /* finite points */
    uint64_t *keys;    /* count cell keys, ascending */
    uint32_t *points;  /* count point indices, in the order of keys (ascending within a cell) */
} bench_grid;

/* Builds the grid. 0, or -1 when out of memory or when the cloud spans too many cells (nothing allocated). */
int bench_grid_build(bench_grid *g, const float *xyz, size_t n, double cell);
void bench_grid_free(bench_grid *g);

/* Points within distance r of p (inclusive), p itself included when it is a cloud point. */
size_t bench_grid_count_within(const bench_grid *g, const float p[3], double r);

/* Distance from cloud point i to the nearest other cloud point (0 for a duplicate); INFINITY when there is none. */
double bench_grid_nearest(const bench_grid *g, size_t i);

/* PCL's uniform sampling: of the points in each cell, the one nearest the cell's centre (ties to the lower
 * index), in cell order. *idx is malloc'd (caller frees). 0, or -1 when out of memory. */
int bench_grid_sample(const bench_grid *g, uint32_t **idx, size_t *count);

#endif
