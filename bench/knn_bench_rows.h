/* knn_bench_rows.h -- the rows the k-NN and match benchmarks search, after ../shared/tools/knn_bench_torch.py's
 * make_desc() so that grip and PyTorch are compared on alike rows:
 *  - uniform: rows uniform in [-1, 1], queries drawn alike (no structure: the hardest case for a screening);
 *  - shot: SHOT-like rows u^4 / |u^4| (u uniform in [0, 1)), queries noisy copies of random rows (Gaussian noise
 *    of 0.25 x the rows' standard deviation, clamped at 0, renormalised);
 *  - fpfh: FPFH-like rows, 3 histograms of 11 bins of -log(u) each scaled to sum 100, queries noisy copies
 *    (same noise, clamped at 0). */
#ifndef GRIP_TESTS_KNN_BENCH_ROWS_H
#define GRIP_TESTS_KNN_BENCH_ROWS_H

#include <stddef.h>
#include <stdint.h>

/* xorshift64: a uniform float in [0, 1) */
float knn_bench_next_uniform(uint64_t *x);

/* rows x dim floats uniform in [-1, 1) from the stream `seed` (malloc'd; NULL when out of memory). */
float *knn_bench_uniform_rows(size_t rows, size_t dim, uint64_t seed);

/* n reference rows and m queries of `kind` (uniform, shot or fpfh), both malloc'd; returns 0 when out of memory
 * (free both: either may be NULL). */
int knn_bench_rows_make(const char *kind, size_t dim, size_t n, size_t m, float **ref, float **q);

#endif
