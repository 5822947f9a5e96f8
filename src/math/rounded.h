/* rounded.h -- what code shared by the CPU twins and the CUDA kernels is written with, so that a GPU result rounds
 * as its CPU twin's does, operation by operation: GRIP_HD, which makes a static inline function callable from
 * both sides, and the float (GRIP_F*) and double (GRIP_D*) operations, each rounded to nearest on its own.
 *
 * Why: nvcc contracts a product and a sum into one fused multiply-add wherever it can, which rounds once where the
 * CPU rounds twice, and a bin, a vote or a sign test can then go another way. In device code (__CUDA_ARCH__) each
 * operation here is therefore a round-to-nearest intrinsic, which nvcc never contracts. On the host it is the
 * plain operator: the library's -std=c11 build contracts nothing (gcc's ISO modes default to -ffp-contract=off, and
 * x86-64's base instruction set has no FMA); a build that would contract is refused below. The order of the
 * operations is the caller's: write them in the CPU twin's order. */
#ifndef GRIP_MATH_ROUNDED_H
#define GRIP_MATH_ROUNDED_H

#include <math.h>

/* gcc contracts a * b + c into a multiply-add, in C++ and in C's GNU dialects, wherever the target has one
 * (-mfma, -march=native): refuse such a host build rather than round otherwise than the CPU twin. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDA_ARCH__) && defined(__FMA__) && \
    (defined(__cplusplus) || !defined(__STRICT_ANSI__))
#error "rounded.h: compile as ISO C (-std=c11) or without FMA, so that gcc keeps every rounding"
#endif

#ifdef __CUDACC__
#define GRIP_HD __host__ __device__
#else
#define GRIP_HD
#endif

/* Unrolls the loop that follows in device code, where a small array indexed by the loop's counters then stays in
 * registers instead of local memory; nothing on the CPU. It changes no operation. */
#ifdef __CUDA_ARCH__
#define GRIP_UNROLL _Pragma("unroll")
#else
#define GRIP_UNROLL
#endif

#ifdef __CUDA_ARCH__
#define GRIP_FMUL(a, b) __fmul_rn((a), (b))
#define GRIP_FADD(a, b) __fadd_rn((a), (b))
#define GRIP_FSUB(a, b) __fsub_rn((a), (b))
#define GRIP_FDIV(a, b) __fdiv_rn((a), (b))
#define GRIP_FSQRT(a) __fsqrt_rn(a)
#define GRIP_DMUL(a, b) __dmul_rn((a), (b))
#define GRIP_DADD(a, b) __dadd_rn((a), (b))
#define GRIP_DSUB(a, b) __dsub_rn((a), (b))
#define GRIP_DDIV(a, b) __ddiv_rn((a), (b))
#else
#define GRIP_FMUL(a, b) ((a) * (b))
#define GRIP_FADD(a, b) ((a) + (b))
#define GRIP_FSUB(a, b) ((a) - (b))
#define GRIP_FDIV(a, b) ((a) / (b))
#define GRIP_FSQRT(a) sqrtf(a)
#define GRIP_DMUL(a, b) ((a) * (b))
#define GRIP_DADD(a, b) ((a) + (b))
#define GRIP_DSUB(a, b) ((a) - (b))
#define GRIP_DDIV(a, b) ((a) / (b))
#endif

#endif
