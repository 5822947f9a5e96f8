/* surface.h -- the benchmarks' generated surface. Internal to bench/. */
#ifndef GRIP_HOST_BENCH_SURFACE_H
#define GRIP_HOST_BENCH_SURFACE_H

#include <stddef.h>
#include <stdint.h>

/* n points drawn uniformly by area from a smooth closed surface -- a torus whose tube radius undulates, so that
 * no two places look alike -- scaled to the given total area, with outward unit normals. *xyz and *normals are
 * malloc'd n x 3 arrays (caller frees). The same seed gives the same points. 0, or -1 when out of memory. */
int bench_surface_sample(size_t n, double area, uint64_t seed, float **xyz, float **normals);

#endif
