/* shard.h -- the arithmetic of an index sharded across ranks, with no MPI in it (shard.c), so that it is tested
 * in every build:
 *  - the reference rows are split into contiguous ranges, one a rank, the first n % ranks ranges one row longer;
 *  - each rank's k nearest of a query are turned into hits on global rows (the rank's first row added);
 *  - two sorted lists of k hits merge into the k best, sorted by squared distance, ties to the lower global row:
 *    the order one process's index returns, so that merging the ranks' exact lists in any order (an MPI
 *    reduction's tree) gives one process's exact result;
 *  - a 64-bit FNV-1a hash, with which ranks check that they were given the same command. */
#ifndef GRIP_HOST_SHARD_H
#define GRIP_HOST_SHARD_H

#include <stddef.h>
#include <stdint.h>

/* One neighbour of a query: a padding hit is {+inf, UINT32_MAX}. 8 bytes, no padding inside. */
typedef struct shard_hit {
    float sqdist;
    uint32_t row; /* global reference row */
} shard_hit;

/* The contiguous rows [*begin, *begin + *count) of rank `rank` among `ranks` (ranks >= 1, rank < ranks). */
void shard_range(uint64_t n, int ranks, int rank, uint64_t *begin, uint64_t *count);

/* hits[i * k + j] = {sqdist, ids + first} of the m x k lists an index search wrote (padding stays padding). */
void shard_hits_of(const uint32_t *ids, const float *sqdist, size_t m, uint32_t k, uint64_t first, shard_hit *hits);

/* Merges the sorted k hits of `in` into the sorted k hits of `inout`, keeping the k best (distance, then row). */
void shard_merge(const shard_hit *in, shard_hit *inout, uint32_t k);

/* 1 when hit a ranks before hit b. */
int shard_hit_before(shard_hit a, shard_hit b);

/* FNV-1a over bytes, continuing from h (start with SHARD_HASH_SEED). */
#define SHARD_HASH_SEED 14695981039346656037ull
uint64_t shard_hash(uint64_t h, const void *bytes, size_t n);

#endif
