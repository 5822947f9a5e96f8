/* mt19937.c -- see mt19937.h. Constants from the reference implementation (MT19937, 32-bit). */
#include "group/mt19937.h"

#define MT_N 624
#define MT_M 397
#define MT_MATRIX_A 0x9908b0dfu
#define MT_UPPER 0x80000000u
#define MT_LOWER 0x7fffffffu

void grip_mt19937_seed(grip_mt19937 *mt, uint32_t seed)
{
    mt->state[0] = seed;
    for (uint32_t i = 1; i < MT_N; ++i)
        mt->state[i] = 1812433253u * (mt->state[i - 1] ^ (mt->state[i - 1] >> 30)) + i;
    mt->next = MT_N;
}

static void regenerate(grip_mt19937 *mt)
{
    for (int i = 0; i < MT_N; ++i) {
        uint32_t y = (mt->state[i] & MT_UPPER) | (mt->state[(i + 1) % MT_N] & MT_LOWER);
        mt->state[i] = mt->state[(i + MT_M) % MT_N] ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX_A : 0u);
    }
    mt->next = 0;
}

uint32_t grip_mt19937_next(grip_mt19937 *mt)
{
    if (mt->next >= MT_N)
        regenerate(mt);
    uint32_t y = mt->state[mt->next++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

int32_t grip_mt19937_next_int31(grip_mt19937 *mt)
{
    return (int32_t)(grip_mt19937_next(mt) >> 1);
}
