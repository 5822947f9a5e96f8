/* libm_float.h -- glibc's float atanf, atan2f and acosf, bit for bit, as inline functions the CPU twins and the
 * CUDA kernels share, so that a feature binned by one of them lands in the same bin on both (PCL 1.13 calls
 * glibc's; the device's own atan2f/acosf are only within 2 ulp of them).
 *
 * What is ported: the fdlibm code of sysdeps/ieee754/flt-32 (s_atanf.c, e_atan2f.c, e_acosf.c) that x86-64 glibc
 * runs for these three from 2.36 (Debian 12, checked against its libm.so.6) to 2.40 (2.39: Ubuntu 24.04), the
 * files being unchanged in between. x86-64 has no multiarch (FMA) variant of them: libm's atanf, atan2f and
 * acosf are plain symbols, not IFUNCs, and their code is SSE scalar arithmetic, one rounding per operation, with
 * the constants used here (read from that binary: aT[0] is 0x3eaaaaab, although the source's comment says ...aa),
 * atanf's cut at |x| >= 2^25 and acosf's at |x| <= 2^-26. glibc 2.41 replaced them with CORE-MATH's correctly
 * rounded functions: on a newer glibc these are no longer libm's results.
 *
 * Every float operation is rounded on its own, as glibc's compiled code does (math/rounded.h: the _rn intrinsics
 * in device code, plain C on the CPU, and a host build that would contract into a multiply-add is refused).
 * Results: the bits of glibc's for every input (tests/unit/test_libm_float.c), except that a NaN result may carry
 * another payload or sign. Nothing is allocated; errno and the floating-point exception flags are left alone
 * (glibc's wrappers set them). */
#ifndef GRIP_MATH_LIBM_FLOAT_H
#define GRIP_MATH_LIBM_FLOAT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "math/rounded.h"

GRIP_HD static inline uint32_t grip_lf_bits(float v)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(v);
#else
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
#endif
}

GRIP_HD static inline float grip_lf_from_bits(uint32_t b)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(b);
#else
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
#endif
}

/* fdlibm's atan series on the reduced argument x: s1 + s2, the odd and even halves of sum aT[i] x^(2i + 2),
 * Horner in w = x^4, in s_atanf.c's order. */
GRIP_HD static inline float grip_lf_atan_series(float x)
{
    float z = GRIP_FMUL(x, x);
    float w = GRIP_FMUL(z, z);
    float s1 = GRIP_FADD(0x1.97b4b2p-5f, GRIP_FMUL(w, 0x1.0ad3aep-6f)); /* aT[8] + w aT[10] */
    s1 = GRIP_FADD(0x1.10d66ap-4f, GRIP_FMUL(w, s1));                   /* aT[6] */
    s1 = GRIP_FADD(0x1.745cdcp-4f, GRIP_FMUL(w, s1));                   /* aT[4] */
    s1 = GRIP_FADD(0x1.24924ap-3f, GRIP_FMUL(w, s1));                   /* aT[2] */
    s1 = GRIP_FADD(0x1.555556p-2f, GRIP_FMUL(w, s1));                   /* aT[0] */
    s1 = GRIP_FMUL(z, s1);
    float s2 = GRIP_FADD(-0x1.dde2d6p-5f, GRIP_FMUL(w, -0x1.2b4442p-5f)); /* aT[7] + w aT[9] */
    s2 = GRIP_FADD(-0x1.3b0f2ap-4f, GRIP_FMUL(w, s2));                    /* aT[5] */
    s2 = GRIP_FADD(-0x1.c71c70p-4f, GRIP_FMUL(w, s2));                    /* aT[3] */
    s2 = GRIP_FADD(-0x1.99999ap-3f, GRIP_FMUL(w, s2));                    /* aT[1] */
    s2 = GRIP_FMUL(w, s2);
    return GRIP_FADD(s1, s2);
}

/* glibc's atanf(x) (s_atanf.c): |x| is reduced around 0.5, 1, 1.5 or infinity, whose atan is a float pair
 * hi + lo. */
GRIP_HD static inline float grip_atanf(float x)
{
    uint32_t hx = grip_lf_bits(x), ix = hx & 0x7fffffffu;
    int negative = (hx >> 31) != 0;
    float hi, lo;
    if (ix >= 0x4c000000u) { /* |x| >= 2^25, or NaN */
        if (ix > 0x7f800000u)
            return GRIP_FADD(x, x);
        return negative ? GRIP_FSUB(-0x1.921fb4p+0f, 0x1.4442d0p-24f) : GRIP_FADD(0x1.921fb4p+0f, 0x1.4442d0p-24f);
    }
    if (ix < 0x3ee00000u) { /* |x| < 0.4375: no reduction */
        if (ix < 0x31000000u)
            return x; /* |x| < 2^-29 (fdlibm's huge + x > 1 test is always true here) */
        return GRIP_FSUB(x, GRIP_FMUL(x, grip_lf_atan_series(x)));
    }
    float ax = grip_lf_from_bits(ix);
    if (ix < 0x3f300000u) { /* |x| < 11/16: (2|x| - 1) / (2 + |x|) */
        hi = 0x1.dac670p-2f;
        lo = 0x1.586ed2p-28f;
        x = GRIP_FDIV(GRIP_FSUB(GRIP_FMUL(2.0f, ax), 1.0f), GRIP_FADD(2.0f, ax));
    } else if (ix < 0x3f980000u) { /* |x| < 19/16: (|x| - 1) / (|x| + 1) */
        hi = 0x1.921fb4p-1f;
        lo = 0x1.4442d0p-25f;
        x = GRIP_FDIV(GRIP_FSUB(ax, 1.0f), GRIP_FADD(ax, 1.0f));
    } else if (ix < 0x401c0000u) { /* |x| < 39/16: (|x| - 1.5) / (1 + 1.5 |x|) */
        hi = 0x1.f730bcp-1f;
        lo = 0x1.281f68p-25f;
        x = GRIP_FDIV(GRIP_FSUB(ax, 1.5f), GRIP_FADD(1.0f, GRIP_FMUL(1.5f, ax)));
    } else { /* -1 / |x| */
        hi = 0x1.921fb4p+0f;
        lo = 0x1.4442d0p-24f;
        x = GRIP_FDIV(-1.0f, ax);
    }
    float z = GRIP_FSUB(hi, GRIP_FSUB(GRIP_FSUB(GRIP_FMUL(x, grip_lf_atan_series(x)), lo), x));
    return negative ? -z : z;
}

/* glibc's atan2f(y, x) (e_atan2f.c): the special cases by sign and class, else atanf(|y / x|) moved into the
 * quadrant of (x, y) with pi = pi_hi - pi_lo. */
GRIP_HD static inline float grip_atan2f(float y, float x)
{
    const float tiny = 0x1.4484c0p-100f, pi_o_4 = 0x1.921fb6p-1f, pi_o_2 = 0x1.921fb6p+0f, pi = 0x1.921fb6p+1f,
                pi_lo = -0x1.777a5cp-24f;
    uint32_t hx = grip_lf_bits(x), ix = hx & 0x7fffffffu;
    uint32_t hy = grip_lf_bits(y), iy = hy & 0x7fffffffu;
    if (ix > 0x7f800000u || iy > 0x7f800000u) /* x or y is NaN */
        return GRIP_FADD(x, y);
    if (hx == 0x3f800000u) /* x = 1 */
        return grip_atanf(y);
    uint32_t m = (hy >> 31) | ((hx >> 30) & 2u); /* 2 sign(x) + sign(y) */
    if (iy == 0) {
        if (m < 2)
            return y;                                                          /* atan(+-0, +x) = +-0 */
        return m == 2 ? GRIP_FADD(pi, tiny) : GRIP_FSUB(-pi, tiny); /* atan(+-0, -x) = +-pi */
    }
    if (ix == 0)
        return (hy >> 31) ? GRIP_FSUB(-pi_o_2, tiny) : GRIP_FADD(pi_o_2, tiny);
    if (ix == 0x7f800000u) {
        if (iy == 0x7f800000u) {
            switch (m) {
            case 0: return GRIP_FADD(pi_o_4, tiny);
            case 1: return GRIP_FSUB(-pi_o_4, tiny);
            case 2: return GRIP_FADD(GRIP_FMUL(3.0f, pi_o_4), tiny);
            default: return GRIP_FSUB(GRIP_FMUL(-3.0f, pi_o_4), tiny);
            }
        }
        switch (m) {
        case 0: return 0.0f;
        case 1: return -0.0f;
        case 2: return GRIP_FADD(pi, tiny);
        default: return GRIP_FSUB(-pi, tiny);
        }
    }
    if (iy == 0x7f800000u)
        return (hy >> 31) ? GRIP_FSUB(-pi_o_2, tiny) : GRIP_FADD(pi_o_2, tiny);
    /* fdlibm's k = (iy - ix) >> 23, the difference of the exponents, compared with +-60 */
    int32_t exponent_gap = (int32_t)iy - (int32_t)ix;
    float z;
    if (exponent_gap >= (61 << 23)) /* |y / x| > 2^60 */
        z = GRIP_FADD(pi_o_2, GRIP_FMUL(0.5f, pi_lo));
    else if ((hx >> 31) && exponent_gap < -(60 << 23)) /* |y| / x < -2^60 */
        z = 0.0f;
    else
        z = grip_atanf(fabsf(GRIP_FDIV(y, x)));
    switch (m) {
    case 0: return z;
    case 1: return -z;
    case 2: return GRIP_FSUB(pi, GRIP_FSUB(z, pi_lo));
    default: return GRIP_FSUB(GRIP_FSUB(z, pi_lo), pi);
    }
}

/* fdlibm's rational approximation r(z) = p(z) / q(z) of (asin(sqrt z) - sqrt z) / sqrt z, in e_acosf.c's
 * order. */
GRIP_HD static inline float grip_lf_acos_ratio(float z)
{
    float p = GRIP_FADD(0x1.9efe08p-11f, GRIP_FMUL(z, 0x1.23de10p-15f)); /* pS4 + z pS5 */
    p = GRIP_FADD(-0x1.48228cp-5f, GRIP_FMUL(z, p));                     /* pS3 */
    p = GRIP_FADD(0x1.9c1550p-3f, GRIP_FMUL(z, p));                      /* pS2 */
    p = GRIP_FADD(-0x1.4d6120p-2f, GRIP_FMUL(z, p));                     /* pS1 */
    p = GRIP_FADD(0x1.555556p-3f, GRIP_FMUL(z, p));                      /* pS0 */
    p = GRIP_FMUL(z, p);
    float q = GRIP_FADD(-0x1.6066c2p-1f, GRIP_FMUL(z, 0x1.3b8c5cp-4f)); /* qS3 + z qS4 */
    q = GRIP_FADD(0x1.02ae5ap+1f, GRIP_FMUL(z, q));                     /* qS2 */
    q = GRIP_FADD(-0x1.33a272p+1f, GRIP_FMUL(z, q));                    /* qS1 */
    q = GRIP_FADD(1.0f, GRIP_FMUL(z, q));
    return GRIP_FDIV(p, q);
}

/* glibc's acosf(x) (e_acosf.c): pi/2 - asin x for |x| < 0.5, else 2 asin(sqrt((1 - |x|) / 2)) around +-1, with
 * pi/2 = pio2_hi + pio2_lo. NaN outside [-1, 1]. */
GRIP_HD static inline float grip_acosf(float x)
{
    const float pi = 0x1.921fb4p+1f, pio2_hi = 0x1.921fb4p+0f, pio2_lo = 0x1.4442d0p-24f;
    uint32_t hx = grip_lf_bits(x), ix = hx & 0x7fffffffu;
    if (ix == 0x3f800000u) /* |x| = 1 */
        return (hx >> 31) ? GRIP_FADD(pi, GRIP_FMUL(2.0f, pio2_lo)) : 0.0f;
    if (ix > 0x3f800000u) { /* |x| > 1, or NaN */
        float d = GRIP_FSUB(x, x);
        return GRIP_FDIV(d, d);
    }
    if (ix < 0x3f000000u) { /* |x| < 0.5 */
        if (ix <= 0x32800000u) /* |x| <= 2^-26 */
            return GRIP_FADD(pio2_hi, pio2_lo);
        float r = grip_lf_acos_ratio(GRIP_FMUL(x, x));
        return GRIP_FSUB(pio2_hi, GRIP_FSUB(x, GRIP_FSUB(pio2_lo, GRIP_FMUL(x, r))));
    }
    if (hx >> 31) { /* x <= -0.5 */
        float z = GRIP_FMUL(GRIP_FADD(1.0f, x), 0.5f);
        float s = GRIP_FSQRT(z);
        float w = GRIP_FSUB(GRIP_FMUL(grip_lf_acos_ratio(z), s), pio2_lo);
        return GRIP_FSUB(pi, GRIP_FMUL(2.0f, GRIP_FADD(s, w)));
    }
    /* x >= 0.5: sqrt z = df + c with df its leading 12 bits, so that df^2 is exact */
    float z = GRIP_FMUL(GRIP_FSUB(1.0f, x), 0.5f);
    float s = GRIP_FSQRT(z);
    float df = grip_lf_from_bits(grip_lf_bits(s) & 0xfffff000u);
    float c = GRIP_FDIV(GRIP_FSUB(z, GRIP_FMUL(df, df)), GRIP_FADD(s, df));
    float w = GRIP_FADD(GRIP_FMUL(grip_lf_acos_ratio(z), s), c);
    return GRIP_FMUL(2.0f, GRIP_FADD(df, w));
}

#endif
