/* mt19937.h -- the 32-bit Mersenne Twister (Matsumoto & Nishimura 1998), the generator PCL's sample consensus
 * draws from (boost::mt19937 seeded with 12345). Reproducing it makes grip's RANSAC draw PCL's samples. */
#ifndef GRIP_GROUP_MT19937_H
#define GRIP_GROUP_MT19937_H

#include <stdint.h>

typedef struct grip_mt19937 {
    uint32_t state[624];
    int next;
} grip_mt19937;

/* Seeds as std::mt19937 / boost::mt19937 do for a 32-bit seed. */
void grip_mt19937_seed(grip_mt19937 *mt, uint32_t seed);

/* The next 32-bit output. */
uint32_t grip_mt19937_next(grip_mt19937 *mt);

/* An int uniform on [0, INT32_MAX], as boost::uniform_int<>(0, INT_MAX) makes it from this generator
 * (bucket size 2, so one draw per value: next() >> 1). */
int32_t grip_mt19937_next_int31(grip_mt19937 *mt);

#endif
