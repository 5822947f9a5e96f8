/* mt19937.c -- see mt19937.h. Constants from the reference implementation (MT19937, 32-bit). */
#include "group/mt19937.h"

#define MT_N GRIP_MT19937_N
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

static uint32_t twisted(uint32_t upper_of, uint32_t lower_of, uint32_t far)
{
    uint32_t y = (upper_of & MT_UPPER) | (lower_of & MT_LOWER);
    return far ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX_A : 0u);
}

/* The reference's three loops: the same values as one loop with every index taken modulo N, without the modulo. */
void grip_mt19937_twist(grip_mt19937 *mt)
{
    uint32_t *s = mt->state;
    int i = 0;
    for (; i < MT_N - MT_M; ++i)
        s[i] = twisted(s[i], s[i + 1], s[i + MT_M]);
    for (; i < MT_N - 1; ++i)
        s[i] = twisted(s[i], s[i + 1], s[i + MT_M - MT_N]);
    s[MT_N - 1] = twisted(s[MT_N - 1], s[0], s[MT_M - 1]);
    mt->next = 0;
}
