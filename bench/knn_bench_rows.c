/* knn_bench_rows.c -- see knn_bench_rows.h. */
#include "knn_bench_rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

float knn_bench_next_uniform(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (float)((*x >> 40) / (double)(1ull << 24));
}

static float next_gaussian(uint64_t *x)
{
    double u = 1.0 - knn_bench_next_uniform(x), v = knn_bench_next_uniform(x);
    return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

float *knn_bench_uniform_rows(size_t rows, size_t dim, uint64_t seed)
{
    float *a = malloc(rows * dim * sizeof *a);
    if (!a)
        return NULL;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < rows * dim; ++i)
        a[i] = -1.0f + 2.0f * knn_bench_next_uniform(&x);
    return a;
}

static void normalise(float *row, size_t dim)
{
    double s = 0;
    for (size_t d = 0; d < dim; ++d)
        s += (double)row[d] * row[d];
    const float inv = s > 0 ? (float)(1.0 / sqrt(s)) : 0.0f;
    for (size_t d = 0; d < dim; ++d)
        row[d] *= inv;
}

/* Descriptor-like reference rows (shot: u^4 normalised; fpfh: 11-bin groups of -log u summing to 100). */
static float *descriptor_rows(const char *kind, size_t rows, size_t dim, uint64_t *x)
{
    float *a = malloc(rows * dim * sizeof *a);
    if (!a)
        return NULL;
    const int shot = strcmp(kind, "shot") == 0;
    for (size_t i = 0; i < rows; ++i) {
        float *r = a + i * dim;
        for (size_t d = 0; d < dim; ++d) {
            const float u = knn_bench_next_uniform(x);
            r[d] = shot ? u * u * u * u : -logf(u > 1e-12f ? u : 1e-12f);
        }
        if (shot) {
            normalise(r, dim);
            continue;
        }
        for (size_t d0 = 0; d0 < dim; d0 += 11) {
            double sum = 0;
            for (size_t d = d0; d < d0 + 11 && d < dim; ++d)
                sum += r[d];
            for (size_t d = d0; d < d0 + 11 && d < dim; ++d)
                r[d] = (float)(100.0 * r[d] / sum);
        }
    }
    return a;
}

/* Queries: noisy copies of random reference rows, as knn_bench_torch.py's make_desc(). */
static float *noisy_queries(const char *kind, const float *ref, size_t n, size_t m, size_t dim, uint64_t *x)
{
    float *q = malloc(m * dim * sizeof *q);
    if (!q)
        return NULL;
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n * dim; ++i) {
        s += ref[i];
        s2 += (double)ref[i] * ref[i];
    }
    const double mean = s / (double)(n * dim);
    const float sigma = (float)(0.25 * sqrt(s2 / (double)(n * dim) - mean * mean));
    for (size_t i = 0; i < m; ++i) {
        const float *src = ref + (size_t)(knn_bench_next_uniform(x) * (float)n) % n * dim;
        for (size_t d = 0; d < dim; ++d) {
            const float v = src[d] + sigma * next_gaussian(x);
            q[i * dim + d] = v > 0.0f ? v : 0.0f;
        }
        if (strcmp(kind, "shot") == 0)
            normalise(q + i * dim, dim);
    }
    return q;
}

int knn_bench_rows_make(const char *kind, size_t dim, size_t n, size_t m, float **ref, float **q)
{
    if (strcmp(kind, "uniform") == 0) {
        *ref = knn_bench_uniform_rows(n, dim, 1);
        *q = knn_bench_uniform_rows(m, dim, 2);
    } else {
        uint64_t x = 0x9E3779B97F4A7C15ull * (n + dim);
        *ref = descriptor_rows(kind, n, dim, &x);
        *q = *ref ? noisy_queries(kind, *ref, n, m, dim, &x) : NULL;
    }
    return *ref && *q;
}
