/* test_pcd.c -- PCD reading and writing: round trips, every field type and DATA kind (generated files), PCL's real
 * files (ascii, binary, binary_compressed), and a clear error, naming file and line or byte counts, for each kind of
 * bad input. */
#define _POSIX_C_SOURCE 200809L
#include "test_support.h"
#include "io/cloud_io.h"
#include "host_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* pcd_read must fail, leave the cloud zeroed, and say each of the needles. */
static void expect_pcd_error(const char *path, const char *needle1, const char *needle2)
{
    grip_test_expect_read_error(pcd_read, path, needle1, needle2);
}

/* A v0.7 header; lines: 1 comment, 2 VERSION, 3 FIELDS, 4 SIZE, 5 TYPE, 6 COUNT, 7 WIDTH, 8 HEIGHT, 9 VIEWPOINT,
 * 10 POINTS, 11 DATA, data from line 12. */
static const char *header(const char *fields, const char *size, const char *type, const char *count,
                          const char *width, const char *height, const char *points, const char *data)
{
    static char text[1024];
    snprintf(text, sizeof text,
             "# .PCD v0.7 - Point Cloud Data file format\nVERSION 0.7\nFIELDS %s\nSIZE %s\nTYPE %s\nCOUNT %s\n"
             "WIDTH %s\nHEIGHT %s\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS %s\nDATA %s\n",
             fields, size, type, count, width, height, points, data);
    return text;
}

static const char *xyz_header(const char *points, const char *data)
{
    return header("x y z", "4 4 4", "F F F", "1 1 1", points, "1", points, data);
}

/* Writes header text followed by n data bytes. */
static const char *write_with_data(const char *name, const char *head, const void *data, size_t n)
{
    size_t hn = strlen(head);
    char *buf = malloc(hn + n + 1);
    ck_assert_ptr_nonnull(buf);
    memcpy(buf, head, hn);
    if (n)
        memcpy(buf + hn, data, n);
    const char *path = grip_test_write_file(name, buf, hn + n);
    free(buf);
    return path;
}

/* ---- a small organized cloud with normals, colours and a NaN point -------------------------------------- */

static host_cloud sample_cloud(void)
{
    host_cloud c = {0};
    c.width = 3;
    c.height = 2;
    c.n = 6;
    c.xyz = malloc(c.n * 3 * sizeof(float));
    c.normals = malloc(c.n * 3 * sizeof(float));
    c.rgb = malloc(c.n * 3);
    c.path = host_strdup("sample");
    ck_assert(c.xyz && c.normals && c.rgb && c.path);
    uint64_t seed = 7;
    for (size_t i = 0; i < c.n * 3; i++) {
        c.xyz[i] = grip_test_uniform(&seed, -2.0f, 2.0f) * 1.0e-3f * (float)(i + 1);
        c.normals[i] = grip_test_uniform(&seed, -1.0f, 1.0f);
        c.rgb[i] = (uint8_t)(37 * i + 11);
    }
    c.xyz[3 * 4 + 0] = c.xyz[3 * 4 + 1] = c.xyz[3 * 4 + 2] = NAN; /* an invalid pixel of an organized cloud */
    c.xyz[3] = 1.0e-30f;                                            /* tiny and huge values survive ascii too */
    c.xyz[4] = 3.4e37f;
    return c;
}

/* Equal bit for bit, NaN included. */
static void assert_same_cloud(const host_cloud *a, const host_cloud *b)
{
    ck_assert_uint_eq(a->width, b->width);
    ck_assert_uint_eq(a->height, b->height);
    grip_test_assert_same_points(a, b);
}

static void round_trip(int binary)
{
    host_cloud c = sample_cloud(), back;
    char err[512] = "";
    const char *path = grip_test_tmp_path(binary ? "rt_binary.pcd" : "rt_ascii.pcd");
    ck_assert_msg(pcd_write(path, &c, binary, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(pcd_read(path, &back, err, sizeof err) == 0, "%s", err);
    assert_same_cloud(&c, &back);
    ck_assert_str_eq(back.path, path);
    ck_assert_uint_eq(host_cloud_count_finite(&back), 5);
    host_cloud_free(&back);
    /* without normals and colours, through cloud_read */
    free(c.normals);
    free(c.rgb);
    c.normals = NULL;
    c.rgb = NULL;
    ck_assert_msg(pcd_write(path, &c, binary, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(cloud_read(path, &back, err, sizeof err) == 0, "%s", err);
    assert_same_cloud(&c, &back);
    host_cloud_free(&back);
    host_cloud_free(&c);
    ck_assert(grip_test_cloud_is_zeroed(&c));
}

START_TEST(ascii_round_trip_is_exact)
{
    round_trip(0);
}
END_TEST

START_TEST(binary_round_trip_is_exact)
{
    round_trip(1);
}
END_TEST

/* ---- every field type, padding, COUNT > 1, rgba: the same 3 points as ascii, binary and binary_compressed --- */

#define MIXED_FIELDS "x y z _ hist rgba normal_x normal_y normal_z"
#define MIXED_SIZE "8 2 1 4 2 4 4 4 4"
#define MIXED_TYPE "F I U U U U F F F"
#define MIXED_COUNT "1 1 1 1 3 1 1 1 1"
#define MIXED_N 3

typedef struct mixed_point {
    double x;
    int16_t y;
    uint8_t z;
    uint32_t pad;
    uint16_t hist[3];
    uint32_t rgba;
    float normal[3];
} mixed_point;

static mixed_point mixed(size_t i)
{
    mixed_point p;
    p.x = 0.5 + (double)i;
    p.y = (int16_t)(-7 + (int)i);
    p.z = (uint8_t)(200 + i);
    p.pad = 0xDEADBEEFu;
    for (int k = 0; k < 3; k++)
        p.hist[k] = (uint16_t)(1000 * (k + 1) + i);
    p.rgba = 0xFF000000u | (uint32_t)(10 + i) << 16 | (uint32_t)(20 + i) << 8 | (uint32_t)(30 + i);
    p.normal[0] = 0.25f * (float)i;
    p.normal[1] = 0.5f;
    p.normal[2] = -0.75f;
    return p;
}

/* Appends n bytes at *at. */
static void put(unsigned char **at, const void *v, size_t n)
{
    memcpy(*at, v, n);
    *at += n;
}

static size_t mixed_binary(unsigned char *buf)
{
    unsigned char *at = buf;
    for (size_t i = 0; i < MIXED_N; i++) {
        mixed_point p = mixed(i);
        put(&at, &p.x, 8), put(&at, &p.y, 2), put(&at, &p.z, 1), put(&at, &p.pad, 4), put(&at, p.hist, 6);
        put(&at, &p.rgba, 4), put(&at, p.normal, 12);
    }
    return (size_t)(at - buf);
}

/* Field-major, '_' left out, as PCL's writer lays out binary_compressed. */
static size_t mixed_field_major(unsigned char *buf)
{
    unsigned char *at = buf;
    mixed_point p[MIXED_N];
    for (size_t i = 0; i < MIXED_N; i++)
        p[i] = mixed(i);
    for (size_t i = 0; i < MIXED_N; i++) put(&at, &p[i].x, 8);
    for (size_t i = 0; i < MIXED_N; i++) put(&at, &p[i].y, 2);
    for (size_t i = 0; i < MIXED_N; i++) put(&at, &p[i].z, 1);
    for (size_t i = 0; i < MIXED_N; i++) put(&at, p[i].hist, 6);
    for (size_t i = 0; i < MIXED_N; i++) put(&at, &p[i].rgba, 4);
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < MIXED_N; i++) put(&at, &p[i].normal[k], 4);
    return (size_t)(at - buf);
}

/* binary_compressed payload: compressed size, uncompressed size, then LZF data of the field-major bytes. The LZF
 * stream is made of literal runs only (a control byte len - 1 < 32, then len bytes), which lzf_decompress reads like
 * any other; real back references are exercised by PCL's files. (lzf_compress is not used: valgrind reports its
 * uninitialised hash table.) */
static size_t compress_payload(unsigned char *out, size_t cap, const unsigned char *raw, size_t n)
{
    unsigned char *at = out + 8;
    for (size_t done = 0; done < n;) {
        size_t run = n - done < 32 ? n - done : 32;
        ck_assert_uint_le((size_t)(at - out) + 1 + run, cap);
        *at++ = (unsigned char)(run - 1);
        memcpy(at, raw + done, run);
        at += run;
        done += run;
    }
    uint32_t sizes[2] = {(uint32_t)(at - out - 8), (uint32_t)n};
    memcpy(out, sizes, 8);
    return (size_t)(at - out);
}

static void assert_mixed_cloud(const char *path)
{
    host_cloud c;
    char err[512] = "";
    ck_assert_msg(pcd_read(path, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(c.n, MIXED_N);
    ck_assert_ptr_nonnull(c.normals);
    ck_assert_ptr_nonnull(c.rgb);
    for (size_t i = 0; i < MIXED_N; i++) {
        mixed_point p = mixed(i);
        ck_assert_float_eq(c.xyz[3 * i + 0], (float)p.x);
        ck_assert_float_eq(c.xyz[3 * i + 1], (float)p.y);
        ck_assert_float_eq(c.xyz[3 * i + 2], (float)p.z);
        for (int k = 0; k < 3; k++)
            ck_assert_float_eq(c.normals[3 * i + (size_t)k], p.normal[k]);
        ck_assert_uint_eq(c.rgb[3 * i + 0], 10 + i);
        ck_assert_uint_eq(c.rgb[3 * i + 1], 20 + i);
        ck_assert_uint_eq(c.rgb[3 * i + 2], 30 + i);
    }
    host_cloud_free(&c);
}

START_TEST(every_type_padding_and_count_in_all_three_data_kinds)
{
    const char *fields = MIXED_FIELDS, *size = MIXED_SIZE, *type = MIXED_TYPE, *count = MIXED_COUNT;
    unsigned char raw[256], packed[512];
    size_t n = mixed_binary(raw);
    ck_assert_uint_eq(n, MIXED_N * 37);
    assert_mixed_cloud(write_with_data("mixed_binary.pcd", header(fields, size, type, count, "3", "1", "3", "binary"),
                                       raw, n));

    n = mixed_field_major(raw);
    ck_assert_uint_eq(n, MIXED_N * 33); /* the 4 padding bytes are not stored */
    size_t pn = compress_payload(packed, sizeof packed, raw, n);
    assert_mixed_cloud(write_with_data(
        "mixed_compressed.pcd", header(fields, size, type, count, "3", "1", "3", "binary_compressed"), packed, pn));

    char text[2048];
    size_t used = (size_t)snprintf(text, sizeof text, "%s", header(fields, size, type, count, "3", "1", "3", "ascii"));
    for (size_t i = 0; i < MIXED_N; i++) {
        mixed_point p = mixed(i);
        used += (size_t)snprintf(text + used, sizeof text - used, "%.17g %d %u 0 %u %u %u %u %.9g %.9g %.9g\n", p.x,
                                 p.y, p.z, p.hist[0], p.hist[1], p.hist[2], p.rgba, p.normal[0], p.normal[1],
                                 p.normal[2]);
    }
    assert_mixed_cloud(grip_test_write_text("mixed_ascii.pcd", text));
}
END_TEST

START_TEST(rgb_packed_as_float)
{
    /* PCL's PointXYZRGB stores 0x00RRGGBB in the bits of a float */
    uint32_t bits = 0x00FF8040u;
    float rec[4] = {1.0f, 2.0f, 3.0f, 0.0f};
    memcpy(&rec[3], &bits, 4);
    const char *path = write_with_data("rgbf.pcd", header("x y z rgb", "4 4 4 4", "F F F F", "1 1 1 1", "1", "1", "1",
                                                          "binary"),
                                       rec, sizeof rec);
    host_cloud c;
    char err[512] = "";
    ck_assert_msg(pcd_read(path, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_ptr_nonnull(c.rgb);
    ck_assert_uint_eq(c.rgb[0], 255);
    ck_assert_uint_eq(c.rgb[1], 128);
    ck_assert_uint_eq(c.rgb[2], 64);
    ck_assert_ptr_null(c.normals);
    host_cloud_free(&c);
}
END_TEST

START_TEST(old_headers_and_nan_tokens)
{
    /* VERSION .5, no VIEWPOINT, no COUNT; comments and blank lines; nan/NaN/inf tokens; CRLF line ends */
    const char *path = grip_test_write_text("old.pcd", "# .PCD v.5 - Point Cloud Data file format\r\nVERSION .5\r\n"
                                             "FIELDS x y z\r\nSIZE 4 4 4\r\nTYPE F F F\r\nWIDTH 2\r\nHEIGHT 2\r\n"
                                             "POINTS 4\r\n\r\nDATA ascii\r\n1 2 3\r\nnan NaN nan\r\n\r\n"
                                             "-4.5e-3 5 6\r\ninf 0 -inf\r\n");
    host_cloud c;
    char err[512] = "";
    ck_assert_msg(cloud_read(path, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(c.width, 2);
    ck_assert_uint_eq(c.height, 2);
    ck_assert_uint_eq(c.n, 4);
    ck_assert_uint_eq(host_cloud_count_finite(&c), 2);
    ck_assert(isnan(c.xyz[3]) && isnan(c.xyz[4]) && isnan(c.xyz[5]));
    ck_assert_float_eq(c.xyz[6], -4.5e-3f);
    ck_assert(isinf(c.xyz[9]) && c.xyz[11] < 0);
    host_cloud_free(&c);

    /* no WIDTH/HEIGHT at all: PCL reads POINTS x 1 */
    path = grip_test_write_text("points_only.pcd", "VERSION .5\nFIELDS x y z\nPOINTS 2\nDATA ascii\n1 2 3\n4 5 6\n");
    ck_assert_msg(pcd_read(path, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(c.width, 2);
    ck_assert_uint_eq(c.height, 1);
    ck_assert_float_eq(c.xyz[5], 6.0f);
    host_cloud_free(&c);
}
END_TEST

START_TEST(format_found_by_content_when_the_name_says_nothing)
{
    const char *path =
        grip_test_write_text("cloud.dat", "VERSION 0.7\nFIELDS x y z\nWIDTH 1\nPOINTS 1\nDATA ascii\n1 2 3\n");
    host_cloud c;
    char err[512] = "";
    ck_assert_msg(cloud_read(path, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(c.n, 1);
    host_cloud_free(&c);
    path = grip_test_write_text("cloud.txt", "hello\n");
    ck_assert_int_eq(cloud_read(path, &c, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "unknown format"));
    ck_assert(grip_test_cloud_is_zeroed(&c));
}
END_TEST

/* From memory: the bytes past size are never read (no NUL needed), the name stands for the path. */
START_TEST(read_from_memory)
{
    static const char text[] = "FIELDS x y z\nWIDTH 2\nPOINTS 2\nDATA ascii\n1 2 3\n4 5 6999";
    host_cloud c;
    char err[512] = "";
    ck_assert_msg(pcd_read_mem(text, sizeof text - 4, "mem.pcd", &c, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(c.n, 2);
    ck_assert_float_eq(c.xyz[5], 6.0f);
    ck_assert_str_eq(c.path, "mem.pcd");
    host_cloud_free(&c);
    ck_assert_int_eq(pcd_read_mem(text, sizeof text - 8, "mem.pcd", &c, err, sizeof err), -1);
    ck_assert_str_eq(err, "mem.pcd:6: row of point 1 has 1 values, FIELDS/COUNT declare 3");
    ck_assert(grip_test_cloud_is_zeroed(&c));
    ck_assert_int_eq(pcd_read_mem(text, 0, "mem.pcd", &c, err, sizeof err), -1);
    ck_assert_str_eq(err, "mem.pcd: file is empty");
}
END_TEST

START_TEST(empty_cloud_is_read_but_refused_by_cloud_read)
{
    const char *path = grip_test_write_text("empty_cloud.pcd", xyz_header("0", "binary"));
    host_cloud c;
    char err[512] = "";
    ck_assert_msg(pcd_read(path, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(c.n, 0);
    ck_assert_ptr_null(c.xyz);
    host_cloud_free(&c);
    ck_assert_int_eq(cloud_read(path, &c, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "empty_cloud.pcd: has no points"));
    ck_assert(grip_test_cloud_is_zeroed(&c));

    path = grip_test_write_text("all_nan.pcd", "FIELDS x y z\nWIDTH 2\nPOINTS 2\nDATA ascii\nnan nan nan\n1 nan 2\n");
    ck_assert_int_eq(cloud_read(path, &c, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "has 2 points but none with finite x y z"));
    ck_assert(grip_test_cloud_is_zeroed(&c));
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------------------------- */

START_TEST(missing_empty_and_foreign_files)
{
    expect_pcd_error(grip_test_tmp_path("nope.pcd"), "nope.pcd: cannot open (No such file or directory)", NULL);
    expect_pcd_error(grip_test_write_text("empty.pcd", ""), "empty.pcd: file is empty", NULL);
    expect_pcd_error(grip_test_write_text("magic.pcd", "ply\nformat ascii 1.0\n"),
                     "magic.pcd:1: not a PCD file: expected a header keyword such as VERSION or FIELDS, found 'ply'",
                     NULL);
    host_cloud c;
    char err[512];
    ck_assert_int_eq(cloud_read(grip_test_tmp_path("nope.pcd"), &c, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "cannot open"));
}
END_TEST

START_TEST(header_errors_name_the_line)
{
    expect_pcd_error(grip_test_write_text("kind.pcd", xyz_header("1", "binary_lzma")),
                     "kind.pcd:11: DATA 'binary_lzma' is not one of ascii, binary, binary_compressed", NULL);
    expect_pcd_error(grip_test_write_text("nofields.pcd", "VERSION 0.7\nWIDTH 1\nPOINTS 1\nDATA ascii\n1 2 3\n"),
                     "nofields.pcd:4: no FIELDS line before DATA", NULL);
    expect_pcd_error(
        grip_test_write_text("noz.pcd", header("x y w", "4 4 4", "F F F", "1 1 1", "1", "1", "1", "ascii")),
        "noz.pcd:3: FIELDS has no 'z' (x, y and z are required)", NULL);
    expect_pcd_error(
        grip_test_write_text("size.pcd", header("x y z rgb", "4 4 4", "F F F U", "1 1 1 1", "1", "1", "1", "ascii")),
        "size.pcd:4: FIELDS has 4 entries but SIZE has 3", NULL);
    expect_pcd_error(grip_test_write_text("type.pcd", header("x y z", "4 4 4", "F F", "1 1 1", "1", "1", "1", "ascii")),
                     "type.pcd:5: FIELDS has 3 entries but TYPE has 2", NULL);
    expect_pcd_error(
        grip_test_write_text("count.pcd", header("x y z", "4 4 4", "F F F", "1 1 1 1", "1", "1", "1", "ascii")),
        "count.pcd:6: FIELDS has 3 entries but COUNT has 4", NULL);
    expect_pcd_error(
        grip_test_write_text("points.pcd", header("x y z", "4 4 4", "F F F", "1 1 1", "3", "3", "10", "ascii")),
        "points.pcd:10: POINTS is 10 but WIDTH x HEIGHT is 3 x 3 = 9", NULL);
    expect_pcd_error(
        grip_test_write_text("badsize.pcd", header("x y z", "4 4 3", "F F F", "1 1 1", "1", "1", "1", "ascii")),
        "badsize.pcd:4: SIZE of field 'z' is '3', expected 1, 2, 4 or 8", NULL);
    expect_pcd_error(
        grip_test_write_text("badtype.pcd", header("x y z", "4 4 2", "F F F", "1 1 1", "1", "1", "1", "ascii")),
        "badtype.pcd:5: field 'z' has TYPE F and SIZE 2 (F needs SIZE 4 or 8)", NULL);
    expect_pcd_error(
        grip_test_write_text("badcount.pcd", header("x y z", "4 4 4", "F F F", "1 0 1", "1", "1", "1", "ascii")),
        "badcount.pcd:6: COUNT of field 'y' is '0'", NULL);
    expect_pcd_error(
        grip_test_write_text("width.pcd", header("x y z", "4 4 4", "F F F", "1 1 1", "-3", "1", "1", "ascii")),
        "width.pcd:7: WIDTH needs one integer", NULL);
    expect_pcd_error(
        grip_test_write_text("twice.pcd", "VERSION 0.7\nFIELDS x y z\nFIELDS x y z\nPOINTS 1\nDATA ascii\n"),
        "twice.pcd:3: FIELDS given twice (first on line 2)", NULL);
    expect_pcd_error(grip_test_write_text("unknown.pcd", "VERSION 0.7\nFIELDS x y z\nCOLOUR 1\nDATA ascii\n"),
                     "unknown.pcd:3: unknown header keyword 'COLOUR'", NULL);
    expect_pcd_error(grip_test_write_text("nodata.pcd", "VERSION 0.7\nFIELDS x y z\nPOINTS 1\n"),
                     "nodata.pcd:4: header ends without a DATA line", NULL);
    expect_pcd_error(grip_test_write_text("rgbsize.pcd",
                                          header("x y z rgb", "4 4 4 1", "F F F U", "1 1 1 1", "1", "1", "1", "ascii")),
                     "rgbsize.pcd:5: field 'rgb' has SIZE 1, expected 4", NULL);
}
END_TEST

/* FIELDS of n entries: x y z and n - 3 more, as many SIZE/TYPE/COUNT entries, 1 point of ascii data. */
static const char *wide_header(size_t n)
{
    static char text[16384];
    size_t at = (size_t)snprintf(text, sizeof text, "# wide\nVERSION 0.7\nFIELDS x y z");
    for (size_t i = 3; i < n; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, " f%zu", i);
    static const char *const keys[] = {"\nSIZE", "\nTYPE", "\nCOUNT"}, *const values[] = {" 4", " F", " 1"};
    for (size_t k = 0; k < 3; k++) {
        at += (size_t)snprintf(text + at, sizeof text - at, "%s", keys[k]);
        for (size_t i = 0; i < n; i++)
            at += (size_t)snprintf(text + at, sizeof text - at, "%s", values[k]);
    }
    at += (size_t)snprintf(text + at, sizeof text - at, "\nPOINTS 1\nDATA ascii\n");
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "%zu ", i);
    snprintf(text + at, sizeof text - at, "\n");
    return text;
}

/* The header holds PCD_MAX_FIELDS fields: one more is an error naming the line, never a write past the table. */
START_TEST(field_count_limit)
{
    host_cloud c;
    char err[512] = "";
    ck_assert_msg(pcd_read(grip_test_write_text("f128.pcd", wide_header(128)), &c, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(c.n, 1);
    ck_assert_float_eq(c.xyz[2], 2.0f);
    host_cloud_free(&c);
    expect_pcd_error(grip_test_write_text("scene.pcd", wide_header(129)),
                     "scene.pcd:3: FIELDS: 129 fields, at most 128", NULL);
    expect_pcd_error(grip_test_write_text("scene.pcd", wide_header(200)),
                     "scene.pcd:3: FIELDS: 200 fields, at most 128", NULL);
    /* a long line under another keyword is refused by that keyword, with the real count */
    char text[1024] = "FIELDS x y z\nSIZE";
    for (int i = 0; i < 200; i++)
        strcat(text, " 4");
    strcat(text, "\nPOINTS 0\nDATA ascii\n");
    expect_pcd_error(grip_test_write_text("size.pcd", text), "size.pcd:2: FIELDS has 3 entries but SIZE has 200", NULL);
}
END_TEST

/* 128 fields of COUNT 2^20 declare 2^27 values a row in a 1.6 KB file: the row is refused as it is read, without
 * the 1 GiB table of value -> field the reader once built and filled for it. */
START_TEST(huge_count_allocates_nothing_large)
{
    char text[4096] = "FIELDS x y z";
    for (int i = 3; i < 128; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), " f%d", i);
    strcat(text, "\nCOUNT");
    for (int i = 0; i < 128; i++)
        strcat(text, " 1048576");
    strcat(text, "\nPOINTS 1\nDATA ascii\n1 2 3\n");
    ck_assert_uint_lt(strlen(text), 1700);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    expect_pcd_error(grip_test_write_text("counts.pcd", text),
                     "counts.pcd:5: row of point 0 has 3 values, FIELDS/COUNT declare 134217728", NULL);
    getrusage(RUSAGE_SELF, &after);
    ck_assert_int_lt(after.ru_maxrss - before.ru_maxrss, 64 * 1024); /* KiB */
}
END_TEST

START_TEST(ascii_errors_name_the_line)
{
    char text[2048];
    snprintf(text, sizeof text, "%s1 2 3\n4 5 6\n7 8 9\n", xyz_header("5", "ascii"));
    expect_pcd_error(grip_test_write_text("short.pcd", text), "short.pcd:15: data ends after 3 of 5 points", NULL);
    snprintf(text, sizeof text, "%s1 2 3\n4 abc 6\n7 8 9\n", xyz_header("3", "ascii"));
    expect_pcd_error(grip_test_write_text("token.pcd", text),
                     "token.pcd:13: 'abc' is not a valid number (field 'y' of point 1)", NULL);
    snprintf(text, sizeof text, "%s1 2 3\n4 5\n7 8 9\n", xyz_header("3", "ascii"));
    expect_pcd_error(grip_test_write_text("row.pcd", text),
                     "row.pcd:13: row of point 1 has 2 values, FIELDS/COUNT declare 3", NULL);
    snprintf(text, sizeof text, "%s1 2 3\n4 5 6 7\n7 8 9\n", xyz_header("3", "ascii"));
    expect_pcd_error(grip_test_write_text("long.pcd", text), "long.pcd:13: row of point 1 has more than the 3 values",
                     NULL);
    snprintf(text, sizeof text, "%s1 2 3\n4 5 6\n", xyz_header("1", "ascii"));
    expect_pcd_error(grip_test_write_text("extra.pcd", text), "extra.pcd:13: more data rows than the 1 POINTS declare",
                     NULL);
    snprintf(text, sizeof text, "%s1 2 3 -1\n",
             header("x y z label", "4 4 4 4", "F F F U", "1 1 1 1", "1", "1", "1", "ascii"));
    expect_pcd_error(grip_test_write_text("unsigned.pcd", text),
                     "unsigned.pcd:12: '-1' is not a valid integer (field 'label' of point 0)", NULL);
}
END_TEST

START_TEST(binary_errors_give_byte_counts)
{
    float rec[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const char *head = xyz_header("4", "binary");
    char want[256];
    snprintf(want, sizeof want,
             "trunc.pcd: binary data truncated: 4 points x 12 bytes need 48 bytes after the header (byte offset %zu), "
             "the file has 36",
             strlen(head));
    expect_pcd_error(write_with_data("trunc.pcd", head, rec, sizeof rec), want, NULL);
    /* a huge declared count is refused from the file size, not by attempting a 48 GB allocation */
    expect_pcd_error(write_with_data("huge.pcd", xyz_header("4000000000", "binary"), rec, sizeof rec),
                     "huge.pcd: binary data truncated: 4000000000 points x 12 bytes need 48000000000 bytes", NULL);
    expect_pcd_error(write_with_data("hugeascii.pcd", xyz_header("4000000000", "ascii"), "1 2 3\n", 6),
                     "hugeascii.pcd:13: data ends after 1 of 4000000000 points", NULL);
    /* sizes past 2^64 are said so, not quoted wrapped */
    const char *widest = header("x y z", "8 8 8", "F F F", "1048576 1 1", "4294967295", "2147483648",
                                "9223372034707292160", "binary");
    expect_pcd_error(write_with_data("widest.pcd", widest, rec, sizeof rec),
                     "widest.pcd: binary data truncated: 9223372034707292160 points x 8388624 bytes need more than "
                     "18446744073709551615 bytes",
                     NULL);
}
END_TEST

START_TEST(compressed_errors_give_sizes)
{
    float raw[3 * 100];
    for (int i = 0; i < 300; i++)
        raw[i] = (float)(i % 7);
    unsigned char payload[4096];
    size_t pn = compress_payload(payload, sizeof payload, (const unsigned char *)raw, sizeof raw);
    const char *head = xyz_header("100", "binary_compressed");
    uint32_t sizes[2];
    memcpy(sizes, payload, 8);
    /* the good file reads */
    host_cloud c;
    char err[512] = "";
    ck_assert_msg(pcd_read(write_with_data("good.pcd", head, payload, pn), &c, err, sizeof err) == 0, "%s", err);
    for (size_t i = 0; i < 100; i++) /* stored field-major: the x column, then y, then z */
        for (size_t k = 0; k < 3; k++)
            ck_assert_float_eq(c.xyz[3 * i + k], raw[100 * k + i]);
    host_cloud_free(&c);

    char want[256];
    uint32_t bad[2] = {sizes[0] + 100, sizes[1]};
    memcpy(payload, bad, 8);
    snprintf(want, sizeof want, "packed.pcd: binary_compressed: header says %u compressed bytes but only %u follow",
             bad[0], sizes[0]);
    expect_pcd_error(write_with_data("packed.pcd", head, payload, pn), want, "truncated or corrupt");

    bad[0] = sizes[0];
    bad[1] = sizes[1] - 12;
    memcpy(payload, bad, 8);
    expect_pcd_error(write_with_data("unpacked.pcd", head, payload, pn),
                     "unpacked.pcd: binary_compressed: header says 1188 uncompressed bytes but 100 points x 12 bytes "
                     "need 1200",
                     NULL);

    /* a payload cut short: LZF notices the damage */
    memcpy(payload, sizes, 8);
    expect_pcd_error(write_with_data("cut.pcd", head, payload, pn - 5), "cut.pcd: binary_compressed: ",
                     "only");
    bad[0] = sizes[0] - 5;
    bad[1] = sizes[1];
    memcpy(payload, bad, 8);
    expect_pcd_error(write_with_data("cut2.pcd", head, payload, pn - 5), "cut2.pcd: binary_compressed: LZF payload",
                     NULL);

    /* valid LZF data of 1188 bytes where the header (and the fields) say 1200 */
    pn = compress_payload(payload, sizeof payload, (const unsigned char *)raw, sizeof raw - 12);
    bad[0] = (uint32_t)(pn - 8);
    bad[1] = sizes[1];
    memcpy(payload, bad, 8);
    expect_pcd_error(write_with_data("short.pcd", head, payload, pn),
                     "short.pcd: binary_compressed: LZF payload decompresses to 1188 bytes, header says 1200 "
                     "(truncated or corrupt)",
                     NULL);

    expect_pcd_error(write_with_data("nosizes.pcd", head, payload, 5),
                     "nosizes.pcd: binary_compressed: needs 8 bytes of sizes after the header", NULL);
    expect_pcd_error(write_with_data("widest.pcd",
                                     header("x y z", "4 4 4", "F F F", "1 1 1", "4294967295", "2147483648",
                                            "9223372034707292160", "binary_compressed"),
                                     payload, pn),
                     "widest.pcd: binary_compressed: header says 1200 uncompressed bytes but 9223372034707292160 "
                     "points x 12 bytes need more than 18446744073709551615",
                     NULL);
    /* a huge count with a tiny payload: refused before any allocation */
    expect_pcd_error(write_with_data("huge.pcd", xyz_header("300000000", "binary_compressed"), payload, pn),
                     "huge.pcd: binary_compressed: header says 1200 uncompressed bytes but 300000000 points", NULL);
}
END_TEST

START_TEST(writer_refuses_inconsistent_clouds)
{
    float xyz[6] = {0};
    host_cloud c = {.width = 3, .height = 1, .n = 2, .xyz = xyz};
    char err[512] = "";
    ck_assert_int_eq(pcd_write(grip_test_tmp_path("w.pcd"), &c, 0, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "w.pcd: cloud is 3 x 1 but has 2 points"));
    ck_assert_int_ne(access(grip_test_tmp_path("w.pcd"), F_OK), 0);
    c.width = c.height = 0; /* taken as n x 1 */
    ck_assert_msg(pcd_write(grip_test_tmp_path("w.pcd"), &c, 1, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(pcd_write("/nonexistent-dir/w.pcd", &c, 1, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent-dir/w.pcd: cannot create"));
    host_cloud_free(NULL);
    host_cloud zero = {0};
    host_cloud_free(&zero);
    ck_assert(grip_test_cloud_is_zeroed(&zero));
}
END_TEST

/* ---- PCL's own files ------------------------------------------------------------------------------------- */

#define SCENE_REL "pcl/milk_cartoon_all_small_clorox.pcd"

START_TEST(tutorial_scene_binary_compressed)
{
    host_cloud c = grip_test_read_cloud(SCENE_REL); /* load time: grip-host bench, not here */
    ck_assert_uint_eq(c.width, 640);
    ck_assert_uint_eq(c.height, 480);
    ck_assert_uint_eq(c.n, 307200);
    ck_assert_uint_eq(host_cloud_count_finite(&c), 241407); /* PCL 1.13's count (data README) */
    ck_assert_ptr_nonnull(c.rgb);
    ck_assert_ptr_null(c.normals);

    /* the data repository's copy is the same scene with y and z negated, point for point (NaN where NaN) */
    host_cloud other = grip_test_read_cloud("pcl/data_repo/correspondence_grouping/milk_cartoon_all_small_clorox.pcd");
    ck_assert_uint_eq(other.n, c.n);
    size_t differ = 0;
    for (size_t i = 0; i < c.n; i++) {
        const float *a = c.xyz + 3 * i, *b = other.xyz + 3 * i;
        if (isnan(a[0]) || isnan(b[0]))
            differ += !(isnan(a[0]) && isnan(b[0]));
        else
            differ += !(a[0] == b[0] && a[1] == -b[1] && a[2] == -b[2]);
    }
    ck_assert_uint_eq(differ, 0);
    host_cloud_free(&other);

    /* PCL's test model milk.pcd is an exact copy of scene points, and milk_color.pcd has the same xyz */
    host_cloud milk = grip_test_read_cloud("pcl/milk.pcd"), milk_color = grip_test_read_cloud("pcl/milk_color.pcd");
    ck_assert_uint_eq(milk.n, 13704);
    ck_assert_ptr_null(milk.rgb);
    ck_assert_ptr_nonnull(milk_color.rgb);
    ck_assert_int_eq(memcmp(milk.xyz, milk_color.xyz, milk.n * 3 * sizeof(float)), 0);
    size_t found = 0;
    for (size_t i = 0; i < c.n; i++) /* the first model point, sought in the scene */
        found += memcmp(c.xyz + 3 * i, milk.xyz, 3 * sizeof(float)) == 0;
    ck_assert_uint_eq(found, 1);
    host_cloud_free(&milk);
    host_cloud_free(&milk_color);
    host_cloud_free(&c);
}
END_TEST

START_TEST(tutorial_model_has_rgba)
{
    host_cloud c = grip_test_read_cloud("pcl/data_repo/correspondence_grouping/milk.pcd");
    ck_assert_uint_eq(c.n, 12575);
    ck_assert_uint_eq(c.width, 12575);
    ck_assert_uint_eq(c.height, 1);
    ck_assert_uint_eq(host_cloud_count_finite(&c), 12575);
    ck_assert_ptr_nonnull(c.rgb);
    host_cloud_free(&c);
}
END_TEST

START_TEST(bunny_ascii_with_normals)
{
    host_cloud c = grip_test_read_cloud("pcl/bun0.pcd");
    ck_assert_uint_eq(c.n, 397);
    ck_assert_ptr_nonnull(c.normals);
    /* first row of the file: 0.0054215998 0.11349 0.040748999 -0.16884723 -0.45159745 -0.87609947 0.0030943851 */
    ck_assert_uint_eq(grip_test_float_bits(c.xyz[0]), grip_test_float_bits(0.0054215998f));
    ck_assert_uint_eq(grip_test_float_bits(c.xyz[2]), grip_test_float_bits(0.040748999f));
    ck_assert_uint_eq(grip_test_float_bits(c.normals[0]), grip_test_float_bits(-0.16884723f));
    ck_assert_uint_eq(grip_test_float_bits(c.normals[2]), grip_test_float_bits(-0.87609947f));
    /* the reference copy (VERSION .5 header, x y z only) holds the same float32 coordinates */
    host_cloud ref = grip_test_read_cloud("pcl_reference/bun0_397.pcd");
    ck_assert_uint_eq(ref.n, 397);
    ck_assert_ptr_null(ref.normals);
    ck_assert_int_eq(memcmp(ref.xyz, c.xyz, 397 * 3 * sizeof(float)), 0);
    host_cloud_free(&ref);
    host_cloud_free(&c);
}
END_TEST

START_TEST(keypoints_binary)
{
    host_cloud c = grip_test_read_cloud("pcl/office1_keypoints.pcd");
    ck_assert_uint_eq(c.n, 1318);
    /* bytes of the first and last records, decoded independently */
    ck_assert_uint_eq(grip_test_float_bits(c.xyz[0]), 0x4069832au);
    ck_assert_uint_eq(grip_test_float_bits(c.xyz[1]), 0x4087dc64u);
    ck_assert_uint_eq(grip_test_float_bits(c.xyz[2]), 0x3eeb4c2du);
    ck_assert_uint_eq(grip_test_float_bits(c.xyz[3 * 1317 + 0]), 0xc12d66dbu);
    ck_assert_uint_eq(grip_test_float_bits(c.xyz[3 * 1317 + 2]), 0x3eb2b768u);
    /* written back in both kinds and read again: identical */
    char err[512] = "";
    host_cloud back;
    for (int binary = 0; binary < 2; binary++) {
        ck_assert_msg(pcd_write(grip_test_tmp_path("office.pcd"), &c, binary, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(pcd_read(grip_test_tmp_path("office.pcd"), &back, err, sizeof err) == 0, "%s", err);
        assert_same_cloud(&c, &back);
        host_cloud_free(&back);
    }
    host_cloud_free(&c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pcd");
    TCase *gen = tcase_create("generated");
    tcase_add_checked_fixture(gen, grip_test_tmp_dir_make, grip_test_tmp_dir_remove);
    tcase_add_test(gen, ascii_round_trip_is_exact);
    tcase_add_test(gen, binary_round_trip_is_exact);
    tcase_add_test(gen, every_type_padding_and_count_in_all_three_data_kinds);
    tcase_add_test(gen, rgb_packed_as_float);
    tcase_add_test(gen, old_headers_and_nan_tokens);
    tcase_add_test(gen, format_found_by_content_when_the_name_says_nothing);
    tcase_add_test(gen, empty_cloud_is_read_but_refused_by_cloud_read);
    tcase_add_test(gen, read_from_memory);
    tcase_add_test(gen, missing_empty_and_foreign_files);
    tcase_add_test(gen, header_errors_name_the_line);
    tcase_add_test(gen, field_count_limit);
    tcase_add_test(gen, huge_count_allocates_nothing_large);
    tcase_add_test(gen, ascii_errors_name_the_line);
    tcase_add_test(gen, binary_errors_give_byte_counts);
    tcase_add_test(gen, compressed_errors_give_sizes);
    tcase_add_test(gen, writer_refuses_inconsistent_clouds);
    suite_add_tcase(s, gen);

    /* the generated cases always run; PCL's files only where the shared data is */
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, SCENE_REL)) {
        fprintf(stderr, "real-file cases skipped: shared data '%s' is absent\n", SCENE_REL);
        return grip_test_run(s);
    }
    TCase *real = tcase_create("pcl_files");
    tcase_add_checked_fixture(real, grip_test_tmp_dir_make, grip_test_tmp_dir_remove);
    tcase_add_test(real, tutorial_scene_binary_compressed);
    tcase_add_test(real, tutorial_model_has_rgba);
    tcase_add_test(real, bunny_ascii_with_normals);
    tcase_add_test(real, keypoints_binary);
    suite_add_tcase(s, real);
    return grip_test_run_with_data(s, SCENE_REL);
}
