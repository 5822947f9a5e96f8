/* test_ply.c -- PLY reading and writing: round trips, ascii and both binary byte orders with every property type,
 * list properties and elements around the vertices (generated files), the Bologna meshes, and a clear error for
 * each kind of bad input. */
#include "test_support.h"
#include "io/cloud_io.h"
#include "host_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect_ply_error(const char *path, const char *needle)
{
    grip_test_expect_read_error(ply_read, path, needle, NULL);
}

/* ---- round trips ----------------------------------------------------------------------------------------- */

static host_cloud sample_cloud(void)
{
    host_cloud c = {0};
    c.width = 7;
    c.height = 1;
    c.n = 7;
    c.xyz = malloc(c.n * 3 * sizeof(float));
    c.normals = malloc(c.n * 3 * sizeof(float));
    c.rgb = malloc(c.n * 3);
    c.path = host_strdup("sample");
    ck_assert(c.xyz && c.normals && c.rgb && c.path);
    uint64_t seed = 11;
    for (size_t i = 0; i < c.n * 3; i++) {
        c.xyz[i] = grip_test_uniform(&seed, -1.0f, 1.0f) / (float)(i + 1);
        c.normals[i] = grip_test_uniform(&seed, -1.0f, 1.0f);
        c.rgb[i] = (uint8_t)(53 * i + 5);
    }
    c.xyz[6] = NAN;
    return c;
}

static void assert_same_cloud(const host_cloud *a, const host_cloud *b)
{
    grip_test_assert_same_points(a, b);
    ck_assert_uint_eq(b->width, a->n);
    ck_assert_uint_eq(b->height, 1);
}

static void round_trip(int binary)
{
    host_cloud c = sample_cloud(), back;
    char err[512] = "";
    const char *path = grip_test_tmp_path(binary ? "rt_binary.ply" : "rt_ascii.ply");
    ck_assert_msg(ply_write(path, &c, binary, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(ply_read(path, &back, err, sizeof err) == 0, "%s", err);
    assert_same_cloud(&c, &back);
    ck_assert_uint_eq(host_cloud_count_finite(&back), 6);
    host_cloud_free(&back);
    free(c.rgb);
    c.rgb = NULL;
    ck_assert_msg(ply_write(path, &c, binary, err, sizeof err) == 0, "%s", err);
    ck_assert_msg(cloud_read(path, &back, err, sizeof err) == 0, "%s", err);
    assert_same_cloud(&c, &back);
    host_cloud_free(&back);
    host_cloud_free(&c);
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

/* ---- every property type, lists, elements before and after the vertices --------------------------------- */

static const char *mixed_header_body =
    "comment a face element before the vertices, an edge element after\n"
    "element face 2\n"
    "property list uchar int vertex_indices\n"
    "property float quality\n"
    "element vertex 3\n"
    "property double x\n"
    "property int y\n"
    "property short z\n"
    "property list ushort float extra\n"
    "property float nx\n"
    "property float ny\n"
    "property float nz\n"
    "property uchar red\n"
    "property uchar green\n"
    "property uchar blue\n"
    "property float confidence\n"
    "element edge 1\n"
    "property int vertex1\n"
    "property int vertex2\n"
    "end_header\n";

/* Appends bytes in the file's byte order. */
typedef struct byte_out {
    unsigned char *p;
    int big;
} byte_out;

static void put(byte_out *o, const void *v, size_t n)
{
    const unsigned char *b = v;
    for (size_t i = 0; i < n; i++)
        *o->p++ = o->big ? b[n - 1 - i] : b[i];
}

static void put_u8(byte_out *o, uint8_t v) { put(o, &v, 1); }
static void put_u16(byte_out *o, uint16_t v) { put(o, &v, 2); }
static void put_i16(byte_out *o, int16_t v) { put(o, &v, 2); }
static void put_i32(byte_out *o, int32_t v) { put(o, &v, 4); }
static void put_f32(byte_out *o, float v) { put(o, &v, 4); }
static void put_f64(byte_out *o, double v) { put(o, &v, 8); }

static size_t mixed_binary(unsigned char *buf, int big)
{
    byte_out o = {buf, big};
    const char *head = big ? "ply\nformat binary_big_endian 1.0\n" : "ply\nformat binary_little_endian 1.0\n";
    memcpy(o.p, head, strlen(head));
    o.p += strlen(head);
    memcpy(o.p, mixed_header_body, strlen(mixed_header_body));
    o.p += strlen(mixed_header_body);
    for (int f = 0; f < 2; f++) { /* faces of 3 and 4 indices */
        put_u8(&o, (uint8_t)(3 + f));
        for (int k = 0; k < 3 + f; k++)
            put_i32(&o, k);
        put_f32(&o, 0.5f);
    }
    for (int i = 0; i < 3; i++) {
        put_f64(&o, 0.25 + i);
        put_i32(&o, -1000 + i);
        put_i16(&o, (int16_t)(7 * i));
        put_u16(&o, (uint16_t)i); /* a list of i floats */
        for (int k = 0; k < i; k++)
            put_f32(&o, 99.0f);
        put_f32(&o, 0.0f), put_f32(&o, 0.5f), put_f32(&o, -1.0f + 0.25f * (float)i);
        put_u8(&o, (uint8_t)i), put_u8(&o, (uint8_t)(100 + i)), put_u8(&o, (uint8_t)(200 + i));
        put_f32(&o, 0.9f);
    }
    put_i32(&o, 0), put_i32(&o, 1);
    return (size_t)(o.p - buf);
}

static const char *mixed_ascii(void)
{
    static char text[2048];
    snprintf(text, sizeof text,
             "ply\nformat ascii 1.0\n%s"
             "3 0 1 2 0.5\n4 0 1 2 3 0.5\n"
             "0.25 -1000 0 0 0 0.5 -1 0 100 200 0.9\n"
             "1.25 -999 7 1 99 0 0.5 -0.75 1 101 201 0.9\n"
             "\n" /* a blank line is no row */
             "2.25 -998 14 2 99 99 0 0.5 -0.5 2 102 202 0.9\n"
             "0 1\n",
             mixed_header_body);
    return text;
}

static void assert_mixed_cloud(const char *path)
{
    host_cloud c;
    char err[512] = "";
    ck_assert_msg(ply_read(path, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(c.n, 3);
    ck_assert_ptr_nonnull(c.normals);
    ck_assert_ptr_nonnull(c.rgb);
    for (size_t i = 0; i < 3; i++) {
        ck_assert_float_eq(c.xyz[3 * i + 0], 0.25f + (float)i);
        ck_assert_float_eq(c.xyz[3 * i + 1], -1000.0f + (float)i);
        ck_assert_float_eq(c.xyz[3 * i + 2], 7.0f * (float)i);
        ck_assert_float_eq(c.normals[3 * i + 0], 0.0f);
        ck_assert_float_eq(c.normals[3 * i + 1], 0.5f);
        ck_assert_float_eq(c.normals[3 * i + 2], -1.0f + 0.25f * (float)i);
        ck_assert_uint_eq(c.rgb[3 * i + 0], i);
        ck_assert_uint_eq(c.rgb[3 * i + 1], 100 + i);
        ck_assert_uint_eq(c.rgb[3 * i + 2], 200 + i);
    }
    host_cloud_free(&c);
}

START_TEST(every_type_lists_and_other_elements_in_three_formats)
{
    unsigned char buf[2048];
    assert_mixed_cloud(grip_test_write_file("mixed_le.ply", buf, mixed_binary(buf, 0)));
    assert_mixed_cloud(grip_test_write_file("mixed_be.ply", buf, mixed_binary(buf, 1)));
    assert_mixed_cloud(grip_test_write_text("mixed_ascii.ply", mixed_ascii()));
}
END_TEST

START_TEST(partial_normals_and_float_colours_are_left_out)
{
    const char *path = grip_test_write_text("partial.ply", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n"
                                                 "property float y\nproperty float z\nproperty float nx\n"
                                                 "property float ny\nproperty float red\nproperty float green\n"
                                                 "property float blue\nend_header\n1 2 3 0 1 0.5 0.5 0.5\n");
    host_cloud c;
    char err[512] = "";
    ck_assert_msg(ply_read(path, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_ptr_null(c.normals);
    ck_assert_ptr_null(c.rgb);
    ck_assert_float_eq(c.xyz[2], 3.0f);
    host_cloud_free(&c);
}
END_TEST

START_TEST(format_found_by_content_when_the_name_says_nothing)
{
    const char *path = grip_test_write_text("mesh.dat", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n"
                                              "property float y\nproperty float z\nend_header\n1 2 3\n");
    host_cloud c;
    char err[512] = "";
    ck_assert_msg(cloud_read(path, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(c.n, 1);
    host_cloud_free(&c);
}
END_TEST

/* ---- bad input ------------------------------------------------------------------------------------------- */

#define XYZ_PROPS "property float x\nproperty float y\nproperty float z\n"

/* From memory: the bytes past size are never read (no NUL needed), the name stands for the path. */
START_TEST(read_from_memory)
{
    static const char text[] = "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\n"
                               "property float z\nend_header\n1 2 3\n4 5 6999";
    host_cloud c;
    char err[512] = "";
    ck_assert_msg(ply_read_mem(text, sizeof text - 4, "mem.ply", &c, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(c.n, 2);
    ck_assert_float_eq(c.xyz[5], 6.0f);
    ck_assert_str_eq(c.path, "mem.ply");
    host_cloud_free(&c);
    ck_assert_int_eq(ply_read_mem(text, sizeof text - 8, "mem.ply", &c, err, sizeof err), -1);
    ck_assert_str_eq(err, "mem.ply:9: vertex 1: row ends before 'y'");
    ck_assert(grip_test_cloud_is_zeroed(&c));
    ck_assert_int_eq(ply_read_mem(text, 0, "mem.ply", &c, err, sizeof err), -1);
    ck_assert_str_eq(err, "mem.ply: file is empty");
}
END_TEST

START_TEST(header_errors_name_the_line)
{
    host_cloud c;
    char err[512] = "";
    expect_ply_error(grip_test_tmp_path("nope.ply"), "nope.ply: cannot open (No such file or directory)");
    expect_ply_error(grip_test_write_text("empty.ply", ""), "empty.ply: file is empty");
    expect_ply_error(grip_test_write_text("magic.ply", "# .PCD v0.7\nVERSION 0.7\n"),
                     "magic.ply:1: not a PLY file: the first line is not 'ply'");
    expect_ply_error(grip_test_write_text("format.ply", "ply\nformat binary_middle_endian 1.0\nend_header\n"),
                     "format.ply:2: format 'binary_middle_endian' is not one of ascii, binary_little_endian, "
                     "binary_big_endian");
    expect_ply_error(grip_test_write_text("noformat.ply", "ply\nelement vertex 1\n" XYZ_PROPS "end_header\n1 2 3\n"),
                     "noformat.ply:2: expected the format line after 'ply'");
    expect_ply_error(grip_test_write_text("novertex.ply", "ply\nformat ascii 1.0\nelement face 1\n"
                                                "property list uchar int vertex_indices\nend_header\n3 0 1 2\n"),
                     "novertex.ply:5: header has no 'element vertex'");
    expect_ply_error(grip_test_write_text("nox.ply", "ply\nformat ascii 1.0\ncomment x is missing\nelement vertex 1\n"
                                           "property float y\nproperty float z\nend_header\n1 2\n"),
                     "nox.ply:4: element vertex has no scalar property 'x' (x, y and z are required)");
    expect_ply_error(grip_test_write_text("listx.ply", "ply\nformat ascii 1.0\nelement vertex 1\n"
                                             "property list uchar float x\nproperty float y\nproperty float z\n"
                                             "end_header\n1 1 2 3\n"),
                     "listx.ply:3: element vertex has no scalar property 'x'");
    expect_ply_error(grip_test_write_text("type.ply", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float128 x\n"),
                     "type.ply:4: unknown property type 'float128'");
    expect_ply_error(grip_test_write_text("orphan.ply", "ply\nformat ascii 1.0\nproperty float x\n"),
                     "orphan.ply:3: property before any element");
    expect_ply_error(grip_test_write_text("noend.ply", "ply\nformat ascii 1.0\nelement vertex 1\n" XYZ_PROPS),
                     "noend.ply:7: header ends without end_header");
    expect_ply_error(
        grip_test_write_text("count.ply", "ply\nformat ascii 1.0\nelement vertex -4\n" XYZ_PROPS "end_header\n"),
        "count.ply:3: expected 'element <name> <count>' with a count from 0 to 18446744073709551615");
    expect_ply_error(grip_test_write_text("huge.ply", "ply\nformat ascii 1.0\nelement vertex 5000000000\n" XYZ_PROPS
                                            "end_header\n1 2 3\n"),
                     "huge.ply:3: element vertex count 5000000000 is too large");

    /* 0 vertices: a valid file, but no cloud for the pipeline */
    const char *path = grip_test_write_text(
        "zero.ply", "ply\nformat binary_little_endian 1.0\nelement vertex 0\n" XYZ_PROPS "end_header\n");
    ck_assert_msg(ply_read(path, &c, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(c.n, 0);
    host_cloud_free(&c);
    ck_assert_int_eq(cloud_read(path, &c, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "zero.ply: has no points"));
    ck_assert(grip_test_cloud_is_zeroed(&c));
}
END_TEST

START_TEST(ascii_errors_name_the_line)
{
    const char *head = "ply\nformat ascii 1.0\nelement vertex 3\n" XYZ_PROPS "end_header\n"; /* data from line 8 */
    char text[1024];
    snprintf(text, sizeof text, "%s1 2 3\n4 5 6\n", head);
    expect_ply_error(grip_test_write_text("short.ply", text),
                     "short.ply:10: data ends after 2 rows, the elements up to and including vertex need 3");
    snprintf(text, sizeof text, "%s1 2 3\n4 abc 6\n7 8 9\n", head);
    expect_ply_error(grip_test_write_text("token.ply", text),
                     "token.ply:9: vertex 1: 'abc' is not a valid number for 'y'");
    snprintf(text, sizeof text, "%s1 2 3\n4 5\n7 8 9\n", head);
    expect_ply_error(grip_test_write_text("row.ply", text), "row.ply:9: vertex 1: row ends before 'z'");
    snprintf(text, sizeof text, "%s1 2 3\n4 5 6 7\n7 8 9\n", head);
    expect_ply_error(grip_test_write_text("long.ply", text),
                     "long.ply:9: vertex 1: row has more values than element vertex");
    expect_ply_error(grip_test_write_text("neglist.ply", "ply\nformat ascii 1.0\nelement vertex 1\n" XYZ_PROPS
                                                         "property list int float w\nend_header\n1 2 3 -2 4 5\n"),
                     "neglist.ply:9: vertex 0: list 'w' has a negative length -2");
    /* a billion declared vertices in a small file: counted rows, no allocation */
    expect_ply_error(grip_test_write_text("huge.ply", "ply\nformat ascii 1.0\nelement vertex 1000000000\n" XYZ_PROPS
                                            "end_header\n1 2 3\n"),
                     "huge.ply:9: data ends after 1 rows, the elements up to and including vertex need 1000000000");
}
END_TEST

START_TEST(binary_errors_give_byte_counts)
{
    const char *head = "ply\nformat binary_little_endian 1.0\nelement vertex 10\n" XYZ_PROPS "end_header\n";
    unsigned char buf[512] = {0};
    size_t hn = strlen(head);
    memcpy(buf, head, hn);
    char want[256];
    snprintf(want, sizeof want,
             "trunc.ply: binary data truncated: element 'vertex' needs at least 10 x 12 = 120 bytes after byte "
             "offset %zu, the file has 60",
             hn);
    expect_ply_error(grip_test_write_file("trunc.ply", buf, hn + 60), want);

    head = "ply\nformat binary_little_endian 1.0\nelement vertex 1000000000\n" XYZ_PROPS "end_header\n";
    hn = strlen(head);
    memcpy(buf, head, hn);
    expect_ply_error(grip_test_write_file("huge.ply", buf, hn + 60),
                     "huge.ply: binary data truncated: element 'vertex' needs at least 1000000000 x 12 = 12000000000 "
                     "bytes");

    /* a face list that claims more indices than the file holds */
    head = "ply\nformat binary_little_endian 1.0\nelement face 2\nproperty list uchar int vertex_indices\n"
           "element vertex 1\n" XYZ_PROPS "end_header\n";
    hn = strlen(head);
    memcpy(buf, head, hn);
    byte_out o = {buf + hn, 0};
    put_u8(&o, 3), put_i32(&o, 0), put_i32(&o, 1), put_i32(&o, 2);
    put_u8(&o, 200), put_i32(&o, 0);
    snprintf(want, sizeof want,
             "list.ply: binary data truncated in element 'face' at row 1 of 2 (byte offset %zu of %zu)", hn + 14,
             hn + 18);
    expect_ply_error(grip_test_write_file("list.ply", buf, (size_t)(o.p - buf)), want);

    /* a negative list length is said to be one, not taken for a truncated file */
    head = "ply\nformat binary_little_endian 1.0\nelement face 2\nproperty list char int vertex_indices\n"
           "element vertex 1\n" XYZ_PROPS "end_header\n";
    hn = strlen(head);
    memcpy(buf, head, hn);
    o.p = buf + hn;
    put_u8(&o, 1), put_i32(&o, 0), put_u8(&o, 0xfe), put_i32(&o, 0);
    snprintf(want, sizeof want, "neg.ply: element 'face' row 1: list 'vertex_indices' has a negative length (byte "
             "offset %zu)", hn + 5);
    expect_ply_error(grip_test_write_file("neg.ply", buf, (size_t)(o.p - buf)), want);
}
END_TEST

/* The header holds 16 elements of 32 properties each: one more is an error at its line. */
START_TEST(header_limits)
{
    char text[4096] = "ply\nformat ascii 1.0\n"; /* element k on line 3 + 2k */
    for (int k = 0; k < 16; k++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "element e%d 0\nproperty float v\n", k);
    strcat(text, "element vertex 1\n" XYZ_PROPS "end_header\n1 2 3\n");
    expect_ply_error(grip_test_write_text("elements.ply", text), "elements.ply:35: more than 16 elements");
    strcpy(text, "ply\nformat ascii 1.0\nelement vertex 1\n" XYZ_PROPS); /* property k on line 3 + k */
    for (int k = 3; k < 32; k++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "property uchar p%d\n", k);
    size_t props_end = strlen(text);
    strcat(text, "end_header\n1 2 3");
    for (int k = 3; k < 32; k++)
        strcat(text, " 7");
    strcat(text, "\n");
    host_cloud c;
    char err[512] = "";
    ck_assert_msg(ply_read(grip_test_write_text("props32.ply", text), &c, err, sizeof err) == 0, "%s", err);
    ck_assert_float_eq(c.xyz[2], 3.0f);
    host_cloud_free(&c);
    strcpy(text + props_end, "property uchar p32\nend_header\n");
    expect_ply_error(grip_test_write_text("props33.ply", text),
                     "props33.ply:36: element 'vertex' has more than 32 properties");
}
END_TEST

/* Counts up to 2^64 - 1: parsed exactly, never walked row by row when the rows take no data, never summed into a
 * total that can wrap (found by fuzzing and by hand; each once hung, read a wrong cloud or was undefined). */
START_TEST(hostile_element_counts)
{
    static const char *formats[] = {"ascii", "binary_little_endian", "binary_big_endian"};
    static const unsigned char xyz_le[12] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40};
    static const unsigned char xyz_be[12] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0, 0x40, 0x40, 0, 0};
    char text[1024];
    host_cloud c;
    char err[512] = "";
    /* an element without properties takes no data, however many rows it declares */
    for (int k = 0; k < 3; k++) {
        int n = snprintf(text, sizeof text,
                         "ply\nformat %s 1.0\nelement nothing 18446744073709551615\nelement vertex 1\n" XYZ_PROPS
                         "element more_nothing 18446744073709551615\nend_header\n",
                         formats[k]);
        size_t len = (size_t)n;
        if (k == 0)
            len += (size_t)snprintf(text + n, sizeof text - len, "1 2 3\n");
        else
            memcpy(text + n, k == 1 ? xyz_le : xyz_be, 12), len += 12;
        ck_assert_msg(ply_read(grip_test_write_file("empty_rows.ply", text, len), &c, err, sizeof err) == 0, "%s: %s",
                      formats[k], err);
        ck_assert_uint_eq(c.n, 1);
        ck_assert_float_eq(c.xyz[2], 3.0f);
        host_cloud_free(&c);
    }
    /* leading zeros are only zeros; 2^64 - 1 is a count, 2^64 is not */
    ck_assert_msg(ply_read(grip_test_write_text("zeros.ply", "ply\nformat ascii 1.0\nelement vertex "
                                                              "0000000000000000000000001\n" XYZ_PROPS "end_header\n"
                                                              "1 2 3\n"),
                           &c, err, sizeof err) == 0,
                  "%s", err);
    ck_assert_uint_eq(c.n, 1);
    host_cloud_free(&c);
    expect_ply_error(grip_test_write_text("max.ply", "ply\nformat ascii 1.0\nelement face 18446744073709551615\n"
                                                     "property uchar n\nelement vertex 1\n" XYZ_PROPS "end_header\n"
                                                     "1 2 3\n"),
                     "max.ply:11: data ends after 1 rows, the elements up to and including vertex need more than "
                     "18446744073709551615 (truncated ascii data)");
    expect_ply_error(grip_test_write_text("over.ply", "ply\nformat ascii 1.0\nelement face 18446744073709551616\n"),
                     "over.ply:3: expected 'element <name> <count>' with a count from 0 to 18446744073709551615");
    expect_ply_error(grip_test_write_text("maxbin.ply", "ply\nformat binary_big_endian 1.0\n"
                                                        "element face 18446744073709551615\nproperty short n\n"
                                                        "element vertex 1\n" XYZ_PROPS "end_header\n1234"),
                     "maxbin.ply: binary data truncated: element 'face' needs at least 18446744073709551615 x 2 bytes "
                     "(more than 2^64) after byte offset");
    /* counts whose sum wraps past 2^64: once to 2 rows, which the file has, and the vertex was read from the first
     * element's row; once to 1 row with 3 vertices, and skipping "2^64 - 2 rows" hung */
    static const char *wrap_head = "ply\nformat ascii 1.0\nelement a 9223372036854775808\nproperty float v\n"
                                   "element b 9223372036854775808\nproperty float v\n";
    snprintf(text, sizeof text,
             "%selement c 3\nproperty float v\nelement vertex 1\n" XYZ_PROPS "end_header\n7\n1 2 3\n", wrap_head);
    expect_ply_error(grip_test_write_text("wrap.ply", text),
                     "wrap.ply:16: data ends after 2 rows, the elements up to and including vertex need more than "
                     "18446744073709551615 (truncated ascii data)");
    snprintf(text, sizeof text, "%selement vertex 3\n" XYZ_PROPS "end_header\n1 2 3\n", wrap_head);
    expect_ply_error(grip_test_write_text("wrap_hang.ply", text),
                     "wrap_hang.ply:13: data ends after 1 rows, the elements up to and including vertex need more than "
                     "18446744073709551615 (truncated ascii data)");
}
END_TEST

/* ---- the Bologna meshes ---------------------------------------------------------------------------------- */

#define MODEL_REL "bologna_retrieval/models/bun_zipper_0.ply"

/* RMS of |scene_k - T model_(k+shift)| over all k. */
static double pose_rms(const host_cloud *model, const host_cloud *scene, const double t[12], size_t shift)
{
    double sum = 0.0;
    for (size_t k = 0; k < scene->n; k++) {
        const float *m = model->xyz + 3 * ((k + shift) % model->n), *s = scene->xyz + 3 * k;
        for (int r = 0; r < 3; r++) {
            double q = t[4 * r] * m[0] + t[4 * r + 1] * m[1] + t[4 * r + 2] * m[2] + t[4 * r + 3];
            sum += (q - s[r]) * (q - s[r]);
        }
    }
    return sqrt(sum / (double)scene->n);
}

START_TEST(bunny_mesh_and_its_posed_scene)
{
    host_cloud model = grip_test_read_cloud(MODEL_REL);
    ck_assert_uint_eq(model.n, 34834); /* "element vertex 34834" of the header; 69,451 faces follow, unread */
    ck_assert_uint_eq(model.width, 34834);
    ck_assert_uint_eq(model.height, 1);
    ck_assert_uint_eq(host_cloud_count_finite(&model), 34834);
    ck_assert_ptr_null(model.normals);
    ck_assert_ptr_null(model.rgb);
    ck_assert_uint_eq(grip_test_float_bits(model.xyz[0]), 0xbdbd0f55u); /* first vertex, decoded independently */
    ck_assert_uint_eq(grip_test_float_bits(model.xyz[1]), 0x3e078a6eu);
    ck_assert_uint_eq(grip_test_float_bits(model.xyz[2]), 0x3c9546b9u);

    /* scene vertex k = T * model vertex k + noise (sigma ~0.1 mesh resolution): the order is intact */
    host_cloud scene = grip_test_read_cloud("bologna_retrieval/scenes/Scene0_0.1.ply");
    ck_assert_uint_eq(scene.n, model.n);
    char path[4096];
    ck_assert(grip_test_data_path(path, sizeof path, "bologna_retrieval/gt/Scene0-rs0.xf"));
    FILE *fp = fopen(path, "r");
    ck_assert_ptr_nonnull(fp);
    double t[16];
    for (int i = 0; i < 16; i++)
        ck_assert_int_eq(fscanf(fp, "%lf", &t[i]), 1);
    fclose(fp);
    double rms = pose_rms(&model, &scene, t, 0), shifted = pose_rms(&model, &scene, t, 1);
    fprintf(stderr, "Scene0 vs T*bunny: RMS %.3f mm in order, %.1f mm shifted by one vertex\n", rms * 1e3,
            shifted * 1e3);
    ck_assert_double_lt(rms, 0.3e-3);
    ck_assert_double_gt(shifted, 10e-3);
    host_cloud_free(&scene);

    /* written back in both kinds and read again: identical */
    char err[512] = "";
    host_cloud back;
    for (int binary = 0; binary < 2; binary++) {
        ck_assert_msg(ply_write(grip_test_tmp_path("bunny.ply"), &model, binary, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(ply_read(grip_test_tmp_path("bunny.ply"), &back, err, sizeof err) == 0, "%s", err);
        assert_same_cloud(&model, &back);
        host_cloud_free(&back);
    }
    host_cloud_free(&model);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ply");
    TCase *gen = tcase_create("generated");
    tcase_add_checked_fixture(gen, grip_test_tmp_dir_make, grip_test_tmp_dir_remove);
    tcase_add_test(gen, ascii_round_trip_is_exact);
    tcase_add_test(gen, binary_round_trip_is_exact);
    tcase_add_test(gen, every_type_lists_and_other_elements_in_three_formats);
    tcase_add_test(gen, partial_normals_and_float_colours_are_left_out);
    tcase_add_test(gen, format_found_by_content_when_the_name_says_nothing);
    tcase_add_test(gen, header_errors_name_the_line);
    tcase_add_test(gen, read_from_memory);
    tcase_add_test(gen, ascii_errors_name_the_line);
    tcase_add_test(gen, binary_errors_give_byte_counts);
    tcase_add_test(gen, header_limits);
    tcase_add_test(gen, hostile_element_counts);
    suite_add_tcase(s, gen);

    /* the generated cases always run; the Bologna meshes only where the shared data is */
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, MODEL_REL)) {
        fprintf(stderr, "real-file cases skipped: shared data '%s' is absent\n", MODEL_REL);
        return grip_test_run(s);
    }
    TCase *real = tcase_create("bologna_files");
    tcase_add_checked_fixture(real, grip_test_tmp_dir_make, grip_test_tmp_dir_remove);
    tcase_add_test(real, bunny_mesh_and_its_posed_scene);
    suite_add_tcase(s, real);
    return grip_test_run_with_data(s, MODEL_REL);
}
