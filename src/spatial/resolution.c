/* resolution.c -- see resolution.h. */
#include "spatial/resolution.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "spatial/kdtree3d.h"

double grip_mean_spacing(const float *sqdist, size_t rows, size_t stride, int threads)
{
    double block_sum[GRIP_SPACING_BLOCKS];
    size_t block_count[GRIP_SPACING_BLOCKS];
#pragma omp parallel for schedule(static) num_threads(threads > 0 ? threads : 1)
    for (int b = 0; b < GRIP_SPACING_BLOCKS; b++) {
        double sum = 0;
        size_t n = 0;
        for (size_t i = rows * b / GRIP_SPACING_BLOCKS; i < rows * (b + 1) / GRIP_SPACING_BLOCKS; i++) {
            float d2 = sqdist[i * stride + 1];
            if (isfinite(d2)) {
                sum += sqrt((double)d2);
                n++;
            }
        }
        block_sum[b] = sum;
        block_count[b] = n;
    }
    double sum = 0;
    size_t n = 0;
    for (int b = 0; b < GRIP_SPACING_BLOCKS; b++) {
        sum += block_sum[b];
        n += block_count[b];
    }
    return n ? sum / (double)n : 0.0;
}

grip_status grip_cloud_resolution_measure(grip_ctx *ctx, const float *xyz, size_t n, double *out)
{
    *out = 0;
    grip_kdtree3d *tree = NULL;
    float *d2 = malloc(n * 2 * sizeof *d2 + 1);
    grip_status st = d2 ? GRIP_OK : grip_fail(ctx, GRIP_ENOMEM, "resolution: out of memory");
    if (!st)
        st = grip_kdtree3d_build(ctx, xyz, n, &tree);
    if (!st) {
#pragma omp parallel for schedule(dynamic, 256) num_threads(grip_ctx_threads(ctx))
        for (size_t i = 0; i < n; i++) {
            uint32_t ids[2];
            size_t got = grip_kdtree3d_knn(tree, xyz + 3 * i, 2, ids, d2 + 2 * i);
            for (size_t j = got; j < 2; j++)
                d2[2 * i + j] = INFINITY;
        }
        *out = grip_mean_spacing(d2, n, 2, grip_ctx_threads(ctx));
    }
    grip_kdtree3d_free(tree);
    free(d2);
    return st;
}
