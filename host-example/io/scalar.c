/* scalar.c -- the numeric types of PCD fields and PLY properties: sizes, decoding from bytes (either
 * byte order) and parsing from text. */
#include "io/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

size_t cloud_io_scalar_size(cloud_io_scalar t)
{
    switch (t) {
    case CLOUD_IO_I8: case CLOUD_IO_U8: return 1;
    case CLOUD_IO_I16: case CLOUD_IO_U16: return 2;
    case CLOUD_IO_I32: case CLOUD_IO_U32: case CLOUD_IO_F32: return 4;
    case CLOUD_IO_I64: case CLOUD_IO_U64: case CLOUD_IO_F64: return 8;
    case CLOUD_IO_NONE: break;
    }
    return 0;
}

int cloud_io_scalar_is_integer(cloud_io_scalar t)
{
    return t != CLOUD_IO_NONE && t != CLOUD_IO_F32 && t != CLOUD_IO_F64;
}

/* Copies n bytes, reversed when swap is set (n <= 8). */
static void copy_bytes(unsigned char *dst, const unsigned char *src, size_t n, int swap)
{
    if (!swap) {
        memcpy(dst, src, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        dst[i] = src[n - 1 - i];
}

cloud_io_value cloud_io_scalar_load(const unsigned char *p, cloud_io_scalar t, int swap)
{
    unsigned char b[8];
    copy_bytes(b, p, cloud_io_scalar_size(t), swap);
    cloud_io_value v = {0.0, 0};
    switch (t) {
    case CLOUD_IO_I8: { int8_t x; memcpy(&x, b, 1); v.number = x; v.bits = (uint32_t)x; break; }
    case CLOUD_IO_U8: v.number = b[0]; v.bits = b[0]; break;
    case CLOUD_IO_I16: { int16_t x; memcpy(&x, b, 2); v.number = x; v.bits = (uint32_t)x; break; }
    case CLOUD_IO_U16: { uint16_t x; memcpy(&x, b, 2); v.number = x; v.bits = x; break; }
    case CLOUD_IO_I32: { int32_t x; memcpy(&x, b, 4); v.number = x; v.bits = (uint32_t)x; break; }
    case CLOUD_IO_U32: { uint32_t x; memcpy(&x, b, 4); v.number = x; v.bits = x; break; }
    case CLOUD_IO_I64: { int64_t x; memcpy(&x, b, 8); v.number = (double)x; v.bits = (uint32_t)x; break; }
    case CLOUD_IO_U64: { uint64_t x; memcpy(&x, b, 8); v.number = (double)x; v.bits = (uint32_t)x; break; }
    case CLOUD_IO_F32: { float x; memcpy(&x, b, 4); v.number = x; memcpy(&v.bits, b, 4); break; }
    case CLOUD_IO_F64: { double x; memcpy(&x, b, 8); v.number = x; break; }
    case CLOUD_IO_NONE: break;
    }
    return v;
}

/* Inclusive range of an integer type, as doubles (exact for the 8..32-bit types). */
static void integer_range(cloud_io_scalar t, double *lo, double *hi)
{
    switch (t) {
    case CLOUD_IO_I8: *lo = -128.0; *hi = 127.0; break;
    case CLOUD_IO_U8: *lo = 0.0; *hi = 255.0; break;
    case CLOUD_IO_I16: *lo = -32768.0; *hi = 32767.0; break;
    case CLOUD_IO_U16: *lo = 0.0; *hi = 65535.0; break;
    case CLOUD_IO_I32: *lo = -2147483648.0; *hi = 2147483647.0; break;
    case CLOUD_IO_U32: *lo = 0.0; *hi = 4294967295.0; break;
    case CLOUD_IO_I64: *lo = -9223372036854775808.0; *hi = 9223372036854775807.0; break;
    default: *lo = 0.0; *hi = 18446744073709551615.0; break;
    }
}

/* Integers: strtoll/strtoull in base 10, range-checked against the type (a '-' is refused for unsigned types,
 * where strtoull would silently wrap it). */
static int parse_integer(const char *tok, size_t len, cloud_io_scalar t, cloud_io_value *v)
{
    char *endp = NULL;
    errno = 0;
    int is_signed = t == CLOUD_IO_I8 || t == CLOUD_IO_I16 || t == CLOUD_IO_I32 || t == CLOUD_IO_I64;
    if (is_signed) {
        long long x = strtoll(tok, &endp, 10);
        v->number = (double)x;
        v->bits = (uint32_t)x;
    } else {
        if (tok[0] == '-')
            return -1;
        unsigned long long x = strtoull(tok, &endp, 10);
        v->number = (double)x;
        v->bits = (uint32_t)x;
    }
    if (errno != 0 || endp != tok + len)
        return -1;
    double lo, hi;
    integer_range(t, &lo, &hi);
    return v->number < lo || v->number > hi ? -1 : 0;
}

int cloud_io_parse_count(const char *tok, size_t len, uint64_t max, uint64_t *out)
{
    if (len == 0)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (tok[i] < '0' || tok[i] > '9')
            return -1;
        unsigned digit = (unsigned)(tok[i] - '0');
        if (digit > max || v > (max - digit) / 10) /* v * 10 + digit > max, without wrapping */
            return -1;
        v = v * 10 + digit;
    }
    *out = v;
    return 0;
}

int cloud_io_scalar_parse(const char *tok, size_t len, cloud_io_scalar t, cloud_io_value *v)
{
    if (len == 0)
        return -1;
    if (cloud_io_scalar_is_integer(t))
        return parse_integer(tok, len, t, v);
    char *endp = NULL;
    if (t == CLOUD_IO_F32) {
        /* strtof rounds once, so a value written with %.9g comes back bit for bit */
        float x = strtof(tok, &endp);
        v->number = x;
        memcpy(&v->bits, &x, 4);
    } else {
        v->number = strtod(tok, &endp);
        v->bits = 0;
    }
    /* ERANGE (underflow to a denormal or overflow to inf) is a number all the same, as for PCL's stream >> */
    return endp == tok + len ? 0 : -1;
}
