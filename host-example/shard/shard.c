/* shard.c -- see shard.h. */
#include "shard/shard.h"

#include <math.h>

void shard_range(uint64_t n, int ranks, int rank, uint64_t *begin, uint64_t *count)
{
    uint64_t base = n / (uint64_t)ranks, extra = n % (uint64_t)ranks, r = (uint64_t)rank;
    *begin = r * base + (r < extra ? r : extra);
    *count = base + (r < extra ? 1 : 0);
}

void shard_hits_of(const uint32_t *ids, const float *sqdist, size_t m, uint32_t k, uint64_t first, shard_hit *hits)
{
    for (size_t i = 0; i < m * (size_t)k; i++) {
        shard_hit h = {INFINITY, UINT32_MAX};
        if (ids[i] != UINT32_MAX) {
            h.sqdist = sqdist[i];
            h.row = (uint32_t)(ids[i] + first);
        }
        hits[i] = h;
    }
}

int shard_hit_before(shard_hit a, shard_hit b)
{
    return a.sqdist < b.sqdist || (a.sqdist == b.sqdist && a.row < b.row);
}

void shard_merge(const shard_hit *in, shard_hit *inout, uint32_t k)
{
    for (uint32_t i = 0; i < k; i++) {
        shard_hit h = in[i];
        if (!shard_hit_before(h, inout[k - 1]))
            break; /* in is sorted: none after it enters either */
        uint32_t j = k - 1;
        while (j > 0 && shard_hit_before(h, inout[j - 1])) {
            inout[j] = inout[j - 1];
            j--;
        }
        inout[j] = h;
    }
}

uint64_t shard_hash(uint64_t h, const void *bytes, size_t n)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}
