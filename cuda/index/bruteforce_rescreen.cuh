// bruteforce_rescreen.cuh -- the second chance of a screened query whose 32 candidates could not certify its answer
// (cuda/index/bruteforce_tensor.cu's rerank). The rerank knows U, the k-th exact distance among the candidates, and no
// row whose exact distance exceeds U can rank among the first k. The query is screened again over all rows with the
// same tensor-core products (cuda/index/sm90a/bruteforce_wgmma.cu's re-screen), this time keeping every row whose
// screened lower bound is at most U, and those rows are ranked exactly. That costs a screening pass for 128 queries,
// where the exact kernel's fp32 pass over all rows cost about a quarter of the 1e6 x 1e6 search at D = 352. A query
// with more such rows than the capacity (near-duplicates in bulk; grip_bruteforce_cuda_options' rescreen_capacity) goes
// on to the exact kernel.
#ifndef GRIP_CUDA_KNN_RESCREEN_CUH
#define GRIP_CUDA_KNN_RESCREEN_CUH

#include "cuda/index/bruteforce_screen.cuh"
#include "cuda/index/bruteforce_wgmma.cuh"

#include <cuda_runtime.h>

extern "C" {
#include "core/ctx.h"
}

// The screening data the re-screen walks again (the wgmma kernel's): the prepared queries (all of the search's),
// the prepared reference rows, and their shape.
struct grip_bruteforce_rescreen_rows {
    const grip_screen::rows_prep *q, *r;
    size_t n, n_padded, row_bytes;
    int ksteps;
    grip_wgmma_operands operands;
    float ref_inv_scale;
};

// The queries to search again: query[i] (a row of the search) with limit[i], the bound of
// grip_bruteforce_wgmma_rescreen under which its rows must be found.
struct grip_bruteforce_retry {
    const uint32_t *query;
    const float *limit;
    uint32_t count;
};

// Writes the exact answers of the retried queries (ids and sqdist, k a query, as grip_bruteforce_cuda_launch's) and
// appends to failed (n_failed counting, both device memory) those that overflowed the capacity (rows listed a query,
// >= 1): the caller runs the exact kernel on them. ref, queries (dim floats a row): the search's. Allocates and
// frees its own scratch (grip_bruteforce_rescreen_bytes at most); synchronous on the default stream.
grip_status grip_bruteforce_rescreen(grip_ctx *ctx, const grip_bruteforce_rescreen_rows &rows, const float *ref,
                                     const float *queries, size_t dim, const grip_bruteforce_retry &retry,
                                     uint32_t capacity, uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist,
                                     uint32_t *failed, uint32_t *n_failed);

// The most device memory grip_bruteforce_rescreen allocates when m queries are retried with that capacity.
size_t grip_bruteforce_rescreen_bytes(size_t m, size_t row_bytes, uint32_t capacity);

#endif
