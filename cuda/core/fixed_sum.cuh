// fixed_sum.cuh -- sums of floating-point votes that have the same bits whatever order the threads add them in.
//
// A float (or double) atomicAdd rounds after every addition, so its sum depends on the order the threads arrive
// in, and two runs of one kernel on one input may differ in the last bits (and, through a borderline match or
// vote, in the instances a pipeline reports). Here each vote is rounded once to a signed 64-bit fixed-point
// integer and the integers are added with atomics: integer addition is associative, so the sum is the same in
// any order. The scale is chosen from how many votes a sum may take and how large each may be, so that no sum can
// overflow: 2^(62 - bits(n) - bound_log2) for at most n votes of magnitude at most 2^bound_log2. A vote keeps at
// least 62 - bits(n) - bound_log2 fraction bits (45 for 100,000 votes of magnitude 1): the result is the exact sum
// of the rounded votes, rounded once when read back -- nearer the exact sum than a float atomic sum.
#ifndef GRIP_CUDA_CORE_FIXED_SUM_CUH
#define GRIP_CUDA_CORE_FIXED_SUM_CUH

#include <stdint.h>

// The scale's exponent for at most n votes of magnitude at most 2^bound_log2.
__device__ __forceinline__ int grip_fixed_shift(uint64_t n, int bound_log2)
{
    return 62 - (64 - __clzll((long long)(n | 1))) - bound_log2;
}

// Adds v (|v| <= 2^bound_log2 of the shift) to the fixed-point sum at slot (shared or global memory).
__device__ __forceinline__ void grip_fixed_add(unsigned long long *slot, double v, int shift)
{
    atomicAdd(slot, (unsigned long long)__double2ll_rn(scalbn(v, shift)));
}

// The value of a fixed-point sum.
__device__ __forceinline__ double grip_fixed_value(unsigned long long sum, int shift)
{
    return scalbn((double)(long long)sum, -shift);
}

#endif
