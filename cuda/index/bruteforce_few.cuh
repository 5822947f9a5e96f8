// bruteforce_few.cuh -- exact k-NN for a few queries (cuda/index/bruteforce_few.cu), for cuda/index/bruteforce.cu's
// launcher, which picks it when grip_bruteforce_few_applies and merges its row ranges' lists. Semantics are
// grip_bruteforce_search's
// (src/index/bruteforce.h), bit for bit.
#ifndef GRIP_CUDA_KNN_FEW_CUH
#define GRIP_CUDA_KNN_FEW_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#define GRIP_BRUTEFORCE_FEW_GROUP 16 // queries a block holds
// up to here the few-queries kernel beats the 64-query one (H100, 1e6 x 352 rows, k = 32: 5 queries 1.51 ms
// against 3.35, 16: 2.65 against 3.43, 32: 4.05 against 3.43; bench_knn_cuda, each kernel timed alone)
#define GRIP_BRUTEFORCE_FEW_MAX_QUERIES 16
#define GRIP_BRUTEFORCE_FEW_MAX_DIM 768   // the group's query rows fill at most 48 KB of shared memory
#define GRIP_BRUTEFORCE_FEW_MIN_ROWS 1024 // a row range shorter than this is not worth its merge

// Whether the few-queries kernel serves m queries of dim dimensions.
bool grip_bruteforce_few_applies(size_t m, size_t dim);

// How many row ranges to split n rows into, for m queries on a device of `sms` multiprocessors.
size_t grip_bruteforce_few_ranges(size_t m, size_t n, int sms);

// Enqueues the search of m queries (m <= GRIP_BRUTEFORCE_FEW_MAX_QUERIES, dim <= GRIP_BRUTEFORCE_FEW_MAX_DIM, 1 <= k <=
// 32) against n rows split into `ranges` ranges of `span` rows: range y's k-lists go to ids and sqdist + y m k (m x k
// each, padded with UINT32_MAX / +inf), for the caller to merge in range order. All pointers are device memory.
// Enqueued on the calling thread's default stream.
cudaError_t grip_bruteforce_few_enqueue(const float *ref, size_t n, size_t span, size_t ranges, const float *queries,
                                        size_t m, size_t dim, int k, float max_sqdist, uint32_t *ids, float *sqdist);

#endif
