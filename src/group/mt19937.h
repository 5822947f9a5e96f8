/* mt19937.h -- the 32-bit Mersenne Twister (Matsumoto & Nishimura 1998), the generator PCL's sample consensus
 * draws from (boost::mt19937 seeded with 12345). Reproducing it makes grip's RANSAC draw PCL's samples. The
 * output functions are inline: RANSAC's draws take hundreds of thousands of outputs a search. */
#ifndef GRIP_GROUP_MT19937_H
#define GRIP_GROUP_MT19937_H

#include <stdint.h>

#define GRIP_MT19937_N 624

typedef struct grip_mt19937 {
    uint32_t state[GRIP_MT19937_N];
    int next;
} grip_mt19937;

/* Seeds as std::mt19937 / boost::mt19937 do for a 32-bit seed. */
void grip_mt19937_seed(grip_mt19937 *mt, uint32_t seed);

/* Twists the whole state into the next 624 untempered outputs (grip_mt19937_next calls it when they run out). */
void grip_mt19937_twist(grip_mt19937 *mt);

/* The output of a twisted state word. */
static inline uint32_t grip_mt19937_temper(uint32_t y)
{
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/* The next 32-bit output. */
static inline uint32_t grip_mt19937_next(grip_mt19937 *mt)
{
    if (mt->next >= GRIP_MT19937_N)
        grip_mt19937_twist(mt);
    return grip_mt19937_temper(mt->state[mt->next++]);
}

/* An int uniform on [0, INT32_MAX], as boost::uniform_int<>(0, INT_MAX) makes it from this generator
 * (bucket size 2, so one draw per value: next() >> 1). */
static inline int32_t grip_mt19937_next_int31(grip_mt19937 *mt)
{
    return (int32_t)(grip_mt19937_next(mt) >> 1);
}

#endif
