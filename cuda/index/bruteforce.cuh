// bruteforce.cuh -- the exact brute-force k-NN kernel's launcher, for the CUDA code that builds on it (the C
// side goes through src/index/bruteforce_cuda.h). Semantics are those of grip_bruteforce_search
// (src/index/bruteforce.h), bit for bit: ids and squared distances are the same.
#ifndef GRIP_CUDA_KNN_BRUTEFORCE_CUH
#define GRIP_CUDA_KNN_BRUTEFORCE_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include "core/ctx.h"
}

// The largest k the kernel keeps (one list entry per lane of a warp).
#define GRIP_BRUTEFORCE_CUDA_KERNEL_MAX_K 32

// Enqueues the search on the calling thread's default stream: ref (n x dim), queries (m x dim), ids and sqdist
// (m x k) are device memory of the current device; 1 <= k <= GRIP_BRUTEFORCE_CUDA_KERNEL_MAX_K, m >= 1,
// n < UINT32_MAX, max_sqdist not NaN (the caller checks). Returns the launch's status (GRIP_ECUDA when it could not
// be launched); errors of the run itself show at the next synchronisation.
grip_status grip_bruteforce_cuda_launch(grip_ctx *ctx, const float *ref, size_t n, const float *queries, size_t m,
                                        size_t dim, uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist);

#endif
