/* test_libm_float.c -- grip_atanf, grip_atan2f and grip_acosf give glibc's atanf, atan2f and acosf bit for bit
 * (a NaN for a NaN, whatever its payload): on random bit patterns (every exponent, both signs, subnormals, NaN),
 * on the ranges the pair features feed them, on every float of [0.5, 1] for acosf, around each breakpoint of the
 * code and on the special values. glibc's functions are called through volatile pointers so that gcc cannot
 * evaluate them itself (it would round correctly, which glibc does not). */
#include "test_support.h"
#include "math/libm_float.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

static float (*volatile glibc_atanf)(float) = atanf;
static float (*volatile glibc_atan2f)(float, float) = atan2f;
static float (*volatile glibc_acosf)(float) = acosf;

/* Inputs tried and results that differ, with the first difference (x is 0 for the one-argument functions). */
typedef struct {
    const char *what;
    size_t tried, differ;
    float first_y, first_x, first_ours, first_glibc;
} tally;

static int same_result(float ours, float glibc)
{
    return isnan(glibc) ? isnan(ours) : grip_test_float_bits(ours) == grip_test_float_bits(glibc);
}

static void tally_one(tally *t, float y, float x, float ours, float glibc)
{
    ++t->tried;
    if (same_result(ours, glibc))
        return;
    if (t->differ++ == 0) {
        t->first_y = y;
        t->first_x = x;
        t->first_ours = ours;
        t->first_glibc = glibc;
    }
}

static void check_atanf(tally *t, float x) { tally_one(t, x, 0.0f, grip_atanf(x), glibc_atanf(x)); }
static void check_atan2f(tally *t, float y, float x) { tally_one(t, y, x, grip_atan2f(y, x), glibc_atan2f(y, x)); }
static void check_acosf(tally *t, float x) { tally_one(t, x, 0.0f, grip_acosf(x), glibc_acosf(x)); }

static void assert_all_same(const tally *t)
{
    printf("libm_float: %s: %zu inputs, %zu differ\n", t->what, t->tried, t->differ);
    ck_assert_msg(t->differ == 0, "%s: %zu of %zu differ from glibc, first (y %a, x %a): ours %a, glibc %a", t->what,
                  t->differ, t->tried, (double)t->first_y, (double)t->first_x, (double)t->first_ours,
                  (double)t->first_glibc);
}

/* splitmix64: every 32-bit pattern equally likely */
static uint32_t random_bits(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}

static float random_float_bits(uint64_t *state)
{
    return grip_lf_from_bits(random_bits(state));
}

/* Uniform in [-1, 1), the range of the dot products of unit vectors the pair features take atan2f and acosf of. */
static float random_unit(uint64_t *state)
{
    return (float)((double)random_bits(state) / 2147483648.0 - 1.0);
}

/* Uniform in [1, 2). */
static float random_mantissa(uint64_t *state)
{
    return grip_lf_from_bits(0x3f800000u | (random_bits(state) >> 9));
}

static float random_sign(uint64_t *state, float v)
{
    return (random_bits(state) & 1u) ? -v : v;
}

/* The float `ulps` representable steps away from v > 0 (toward +inf when ulps > 0). */
static float ulps_from(float v, int32_t ulps)
{
    return grip_lf_from_bits((uint32_t)((int32_t)grip_lf_bits(v) + ulps));
}

/* Values where the code switches path, and the classes every function must pass through unchanged. */
static const float special_values[] = {
    0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f, 0.4375f, -0.4375f,
    0.6875f, 1.1875f, 2.4375f, -2.4375f, FLT_MIN, -FLT_MIN, 0x1p-149f, -0x1p-149f, 0x1.fffffcp-127f,
    -0x1.fffffcp-127f, FLT_MAX, -FLT_MAX, 1e-30f, -1e-30f, 1e30f, -1e30f, 0x1p-26f, -0x1p-26f, 0x1p-29f,
    0x1p25f, -0x1p25f, 0x1p60f, 0x1p-60f, 0x1p61f, 0x1p-61f, 3.14159265f, 0.99999994f, -0.99999994f,
    1.00000012f, -1.00000012f};
#define N_SPECIAL (sizeof special_values / sizeof special_values[0])

/* atanf's breakpoints (bit patterns): 2^-29, 7/16, 11/16, 1, 19/16, 39/16, 2^25 */
static const uint32_t atanf_breakpoints[] = {0x31000000u, 0x3ee00000u, 0x3f300000u, 0x3f800000u,
                                              0x3f980000u, 0x401c0000u, 0x4c000000u};
#define N_ATANF_BREAKPOINTS (sizeof atanf_breakpoints / sizeof atanf_breakpoints[0])

START_TEST(atanf_equals_glibc)
{
    uint64_t state = 1;
    tally t = {.what = "atanf"};
    for (size_t i = 0; i < N_SPECIAL; ++i)
        check_atanf(&t, special_values[i]);
    for (size_t b = 0; b < N_ATANF_BREAKPOINTS; ++b) /* every float within 2^16 ulps of a breakpoint */
        for (int32_t d = -65536; d < 65536; ++d) {
            float v = grip_lf_from_bits(atanf_breakpoints[b] + (uint32_t)d);
            check_atanf(&t, v);
            check_atanf(&t, -v);
        }
    for (int i = 0; i < 2000000; ++i)
        check_atanf(&t, random_float_bits(&state));
    for (int i = 0; i < 2000000; ++i)
        check_atanf(&t, 4.0f * random_unit(&state));
    assert_all_same(&t);
}
END_TEST

START_TEST(atan2f_equals_glibc_on_random_bits_and_specials)
{
    uint64_t state = 2;
    tally t = {.what = "atan2f, random bits and special values"};
    for (size_t i = 0; i < N_SPECIAL; ++i)
        for (size_t j = 0; j < N_SPECIAL; ++j)
            check_atan2f(&t, special_values[i], special_values[j]);
    for (int i = 0; i < 4000000; ++i) {
        float y = random_float_bits(&state);
        check_atan2f(&t, y, random_float_bits(&state));
    }
    for (int i = 0; i < 250000; ++i) { /* x = +-1 exactly: +1 goes straight to atanf */
        float y = (i & 1) ? random_float_bits(&state) : random_unit(&state);
        check_atan2f(&t, y, 1.0f);
        check_atan2f(&t, y, -1.0f);
    }
    assert_all_same(&t);
}
END_TEST

START_TEST(atan2f_equals_glibc_on_unit_components)
{
    uint64_t state = 3;
    tally t = {.what = "atan2f, components in [-1, 1]"};
    for (int i = 0; i < 4000000; ++i) {
        float y = random_unit(&state);
        check_atan2f(&t, y, random_unit(&state));
    }
    assert_all_same(&t);
}
END_TEST

/* |y / x| within 4096 ulps of an atanf breakpoint, and exponent gaps around atan2f's +-60 cut. */
START_TEST(atan2f_equals_glibc_near_its_breakpoints)
{
    uint64_t state = 4;
    tally t = {.what = "atan2f, ratios near the breakpoints"};
    for (int i = 0; i < 2000000; ++i) {
        float ratio = grip_lf_from_bits(atanf_breakpoints[random_bits(&state) % N_ATANF_BREAKPOINTS]);
        ratio = ulps_from(ratio, (int32_t)(random_bits(&state) % 8193u) - 4096);
        float x = random_sign(&state, ldexpf(random_mantissa(&state), (int)(random_bits(&state) % 41u) - 20));
        check_atan2f(&t, random_sign(&state, ratio * fabsf(x)), x);
    }
    for (int i = 0; i < 1000000; ++i) {
        float x = random_sign(&state, ldexpf(random_mantissa(&state), (int)(random_bits(&state) % 61u) - 30));
        int gap = 58 + (int)(random_bits(&state) % 5u); /* 58 .. 62 */
        float y = random_sign(&state, ldexpf(random_mantissa(&state) * fabsf(x), (i & 1) ? gap : -gap));
        check_atan2f(&t, y, x);
    }
    assert_all_same(&t);
}
END_TEST

START_TEST(acosf_equals_glibc_on_every_float_of_half_to_one)
{
    tally t = {.what = "acosf, every float with 0.5 <= |x| <= 1"};
    for (uint32_t bits = 0x3f000000u; bits <= 0x3f800000u; ++bits) {
        float v = grip_lf_from_bits(bits);
        check_acosf(&t, v);
        check_acosf(&t, -v);
    }
    assert_all_same(&t);
}
END_TEST

START_TEST(acosf_equals_glibc_elsewhere)
{
    uint64_t state = 5;
    tally t = {.what = "acosf, random bits, [-1, 1], near 2^-26 and special values"};
    for (size_t i = 0; i < N_SPECIAL; ++i)
        check_acosf(&t, special_values[i]);
    for (int32_t d = -65536; d < 65536; ++d) { /* the small-argument cut at 2^-26 */
        float v = ulps_from(0x1p-26f, d);
        check_acosf(&t, v);
        check_acosf(&t, -v);
    }
    for (int i = 0; i < 2000000; ++i)
        check_acosf(&t, random_float_bits(&state));
    for (int i = 0; i < 2000000; ++i)
        check_acosf(&t, random_unit(&state));
    assert_all_same(&t);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("libm_float");
    TCase *tc = tcase_create("glibc");
    tcase_add_test(tc, atanf_equals_glibc);
    tcase_add_test(tc, atan2f_equals_glibc_on_random_bits_and_specials);
    tcase_add_test(tc, atan2f_equals_glibc_on_unit_components);
    tcase_add_test(tc, atan2f_equals_glibc_near_its_breakpoints);
    tcase_add_test(tc, acosf_equals_glibc_on_every_float_of_half_to_one);
    tcase_add_test(tc, acosf_equals_glibc_elsewhere);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return grip_test_run(suite()); }
