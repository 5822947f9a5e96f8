/* test_mesh.c -- triangle meshes: mesh_read reads a binary PLY mesh's vertices and triangles (skipping other
 * elements and properties) and refuses bad files with a message naming what is wrong; the rasterizer gives the
 * depth of a tilted plane exactly and renders a box mesh as the ray caster renders the same box as a catalogue
 * shape (depth and labels pixel for pixel); a generated scene of mesh kinds has every labelled point on its
 * object's surface, and views on it too. */
#define _POSIX_C_SOURCE 200809L
#include "test_support.h"
#include "io/mesh_io.h"
#include "synth/mesh.h"
#include "synth/raster.h"
#include "synth/render.h"
#include "synth/shapes.h"
#include "synth/synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- PLY files in memory ------------------------------------------------------------------------------------ */

typedef struct buf {
    unsigned char data[4096];
    size_t n;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    ck_assert(b->n + n <= sizeof b->data);
    memcpy(b->data + b->n, p, n);
    b->n += n;
}
static void put_text(buf *b, const char *s)
{
    put(b, s, strlen(s));
}
static void put_f32(buf *b, float v)
{
    put(b, &v, 4);
}
static void put_i32(buf *b, int32_t v)
{
    put(b, &v, 4);
}
static void put_u8(buf *b, uint8_t v)
{
    put(b, &v, 1);
}

/* The box [-0.05, 0.05] x [-0.04, 0.04] x [0, 0.06]: 8 corners, 12 triangles wound outward. */
static const float box_corners[8][3] = {{-0.05f, -0.04f, 0},   {0.05f, -0.04f, 0},      {0.05f, 0.04f, 0},
                                        {-0.05f, 0.04f, 0},    {-0.05f, -0.04f, 0.06f}, {0.05f, -0.04f, 0.06f},
                                        {0.05f, 0.04f, 0.06f}, {-0.05f, 0.04f, 0.06f}};
static const int box_faces[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7}, {0, 1, 5}, {0, 5, 4},
                                     {1, 2, 6}, {1, 6, 5}, {2, 3, 7}, {2, 7, 6}, {3, 0, 4}, {3, 4, 7}};

/* A binary little-endian box mesh with an element between the vertices and the faces, and a property before each
 * face's index list; `face_count` is what the header declares, `bad_face` (< 12) gets `bad` as its first index or,
 * with bad_len, `bad_len` indices. */
static void box_ply(buf *b, const char *face_count, int bad_face, int bad, int bad_len)
{
    b->n = 0;
    put_text(b, "ply\nformat binary_little_endian 1.0\ncomment a box\nelement vertex 8\nproperty float x\n"
                "property float y\nproperty float z\nelement edge 1\nproperty int a\nproperty int b\n"
                "element face ");
    put_text(b, face_count);
    put_text(b, "\nproperty uchar flags\nproperty list uchar int vertex_indices\nend_header\n");
    for (int v = 0; v < 8; v++)
        for (int c = 0; c < 3; c++)
            put_f32(b, box_corners[v][c]);
    put_i32(b, 0);
    put_i32(b, 1);
    for (int f = 0; f < 12; f++) {
        put_u8(b, 7);
        int len = f == bad_face && bad_len ? bad_len : 3;
        put_u8(b, (uint8_t)len);
        for (int k = 0; k < len; k++)
            put_i32(b, f == bad_face && !bad_len && k == 0 ? bad : box_faces[f][k % 3]);
    }
}

static void expect_refused(const buf *b, const char *what)
{
    host_mesh m;
    char err[512] = "";
    ck_assert_int_eq(mesh_read_mem(b->data, b->n, "box.ply", &m, err, sizeof err), -1);
    ck_assert_msg(strstr(err, what) && strstr(err, "box.ply"), "expected '%s' in: %s", what, err);
    ck_assert_ptr_null(m.triangles);
    ck_assert_ptr_null(m.vertices.xyz);
}

START_TEST(box_mesh_reads_back)
{
    buf b;
    box_ply(&b, "12", -1, 0, 0);
    const char *path = grip_test_write_file("box.ply", b.data, b.n);
    host_mesh m;
    char err[512] = "";
    ck_assert_msg(mesh_read(path, &m, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(m.vertices.n, 8);
    ck_assert_uint_eq(m.n_triangles, 12);
    for (int v = 0; v < 8; v++)
        for (int c = 0; c < 3; c++)
            ck_assert(m.vertices.xyz[3 * v + c] == box_corners[v][c]);
    for (int f = 0; f < 12; f++)
        for (int k = 0; k < 3; k++)
            ck_assert_uint_eq(m.triangles[3 * f + k], (uint32_t)box_faces[f][k]);
    host_mesh_free(&m);
    ck_assert_ptr_null(m.triangles);
}
END_TEST

START_TEST(bad_meshes_are_refused_with_a_reason)
{
    buf b;
    box_ply(&b, "12", -1, 0, 0);
    buf cut = b;
    cut.n -= 7; /* ends inside the last face */
    expect_refused(&cut, "truncated");
    box_ply(&b, "13", -1, 0, 0); /* one face more than the data holds */
    expect_refused(&b, "truncated");
    box_ply(&b, "1000000000000", -1, 0, 0); /* refused before anything is allocated for it */
    expect_refused(&b, "truncated");
    box_ply(&b, "12", 5, 8, 0);
    expect_refused(&b, "face 5: vertex index 8 is out of range (the mesh has 8 vertices)");
    box_ply(&b, "12", 2, -1, 0);
    expect_refused(&b, "face 2: vertex index -1 is out of range");
    box_ply(&b, "12", 3, 0, 4);
    expect_refused(&b, "face 3 has 4 vertices; only triangles");
    buf t = {.n = 0};
    put_text(&t, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
                 "element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n");
    expect_refused(&t, "binary PLY only");
    t.n = 0;
    put_text(&t, "ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
                 "property float z\nend_header\n");
    put_f32(&t, 0), put_f32(&t, 0), put_f32(&t, 0);
    expect_refused(&t, "no element face");
    t.n = 0;
    put_text(&t, "ply\nformat binary_little_endian 1.0\nelement face 0\nproperty list uchar int vertex_indices\n"
                 "element vertex 1\nproperty float x\nproperty float y\nproperty float z\nend_header\n");
    put_f32(&t, 0), put_f32(&t, 0), put_f32(&t, 0);
    expect_refused(&t, "comes before element vertex");
    t.n = 0;
    put_text(&t, "ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
                 "property float z\nelement face 1\nproperty list uchar float vertex_indices\nend_header\n");
    expect_refused(&t, "must be a list of integers");
}
END_TEST

/* ---- rendering -------------------------------------------------------------------------------------------- */

static host_mesh box_host_mesh(void)
{
    host_mesh m;
    memset(&m, 0, sizeof m);
    m.vertices.xyz = malloc(sizeof box_corners);
    m.triangles = malloc(sizeof box_faces);
    ck_assert(m.vertices.xyz && m.triangles);
    memcpy(m.vertices.xyz, box_corners, sizeof box_corners);
    m.vertices.n = 8;
    for (int f = 0; f < 12; f++)
        for (int k = 0; k < 3; k++)
            m.triangles[3 * f + k] = (uint32_t)box_faces[f][k];
    m.n_triangles = 12;
    return m;
}

static void box_mesh(synth_mesh *out)
{
    host_mesh m = box_host_mesh();
    char err[256] = "";
    ck_assert_msg(synth_mesh_make(&m, "box", SYNTH_MESH_Z_UP, out, err, sizeof err) == 0, "%s", err);
    host_mesh_free(&m);
}

/* Object -> camera: turned by yaw about z, then tilted by pitch about x, at t. */
static void make_pose(double yaw, double pitch, const double t[3], double T[16])
{
    double cy = cos(yaw), sy = sin(yaw), cp = cos(pitch), sp = sin(pitch);
    double R[9] = {cy, -sy, 0, cp * sy, cp * cy, -sp, sp * sy, sp * cy, cp};
    memset(T, 0, 16 * sizeof *T);
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            T[4 * r + c] = R[3 * r + c];
        T[4 * r + 3] = t[r];
    }
    T[15] = 1;
}

START_TEST(plane_depth_is_exact)
{
    /* the box's top face alone (two triangles), tilted: every covered pixel's depth is the ray's hit on its plane */
    synth_mesh m;
    box_mesh(&m);
    m.n_triangles = 2;
    memcpy(m.tri, &m.tri[6], 6 * sizeof *m.tri); /* faces {4 5 6} {4 6 7}: z = 0.06 */
    synth_camera cam = {160, 120, 200, 210, 79.5, 59.5};
    double T[16], t[3] = {0.01, -0.005, 0.4};
    make_pose(0.5, 2.5, t, T); /* the top faces the camera */
    size_t n = (size_t)cam.width * cam.height;
    double *depth = malloc(n * sizeof *depth), *scratch = malloc(m.n_vertices * 3 * sizeof *scratch);
    float *facing = calloc(n, sizeof *facing);
    ck_assert(depth && scratch && facing);
    for (size_t i = 0; i < n; i++)
        depth[i] = INFINITY;
    size_t set = synth_raster_mesh(&cam, &m, T, scratch, depth, facing);
    /* the plane: normal T's z column, through T (0, 0, top) (the corners are floats: 0.06f, not 0.06) */
    const double top = 0.06f;
    double nrm[3] = {T[2], T[6], T[10]}, on[3] = {T[2] * top + T[3], T[6] * top + T[7], T[10] * top + T[11]};
    size_t counted = 0;
    for (uint32_t v = 0; v < cam.height; v++)
        for (uint32_t u = 0; u < cam.width; u++) {
            double z = depth[(size_t)v * cam.width + u];
            if (z == INFINITY)
                continue;
            counted++;
            double d[3] = {(u - cam.cx) / cam.fx, (v - cam.cy) / cam.fy, 1};
            double expect = (nrm[0] * on[0] + nrm[1] * on[1] + nrm[2] * on[2]) /
                            (nrm[0] * d[0] + nrm[1] * d[1] + nrm[2] * d[2]);
            ck_assert_msg(fabs(z - expect) < 1e-12, "pixel %u,%u: depth %.15g, the plane's %.15g", u, v, z, expect);
            double q[3] = {d[0] * z - T[3], d[1] * z - T[7], d[2] * z - T[11]}, local[2];
            for (int c = 0; c < 2; c++) /* back to the face's frame: inside the 10 x 8 cm rectangle */
                local[c] = T[c] * q[0] + T[4 + c] * q[1] + T[8 + c] * q[2];
            ck_assert(fabs(local[0]) <= 0.05 + 1e-7 && fabs(local[1]) <= 0.04 + 1e-7);
        }
    ck_assert_uint_eq(set, counted);
    ck_assert_uint_gt(set, 1000); /* 10 x 8 cm at 0.4 m and 200 px per unit: about 2000 pixels, foreshortened */
    free(depth);
    free(scratch);
    free(facing);
    synth_mesh_free(&m);
}
END_TEST

START_TEST(box_mesh_renders_as_the_ray_cast_box)
{
    synth_mesh m;
    box_mesh(&m);
    static const synth_prim prim = {SYNTH_BOX, 0, {-0.05f, -0.04f, 0}, {0.05f, 0.04f, 0.06f}, 0}; /* the corners' */
    synth_shape shape = {"box", "a box", 1, &prim};
    synth_camera cam = {160, 120, 200, 200, 79.5, 59.5};
    double T[16], t[3] = {-0.02, 0.01, 0.45};
    make_pose(0.7, 2.2, t, T);
    synth_image a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    ck_assert(synth_image_alloc(&cam, 1, NULL, m.n_vertices, &a) == 0 && synth_image_alloc(&cam, 1, NULL, 0, &b) == 0);
    synth_placed as_mesh = {NULL, &m, {0}}, as_shape = {&shape, NULL, {0}};
    memcpy(as_mesh.pose, T, sizeof T);
    memcpy(as_shape.pose, T, sizeof T);
    synth_render(&cam, NULL, NULL, &as_mesh, 1, &a);
    synth_render(&cam, NULL, NULL, &as_shape, 1, &b);
    size_t n = (size_t)cam.width * cam.height, hits = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(a.label[i] == b.label[i], "pixel %zu: mesh label %d, shape label %d", i, a.label[i], b.label[i]);
        if (a.label[i] < 0)
            continue;
        hits++;
        ck_assert_msg(fabs(a.depth[i] - b.depth[i]) < 1e-9, "pixel %zu: mesh %.12g, shape %.12g", i, a.depth[i],
                      b.depth[i]);
        ck_assert_msg(fabs(a.facing[i] - b.facing[i]) < 1e-5, "pixel %zu: facing %g, %g", i, a.facing[i], b.facing[i]);
    }
    ck_assert_uint_eq(a.alone[0], hits);
    ck_assert_uint_eq(b.alone[0], hits);
    ck_assert_uint_gt(hits, 1000);
    synth_image_free(&a);
    synth_image_free(&b);
    synth_mesh_free(&m);
}
END_TEST

/* q = T^-1 p for a rigid row-major T. */
static void pose_unapply(const double T[16], const double p[3], double q[3])
{
    double d[3] = {p[0] - T[3], p[1] - T[7], p[2] - T[11]};
    for (int c = 0; c < 3; c++)
        q[c] = T[c] * d[0] + T[4 + c] * d[1] + T[8 + c] * d[2];
}

START_TEST(scene_of_mesh_kinds_lies_on_the_meshes)
{
    synth_mesh m;
    box_mesh(&m);
    static const synth_prim prim = {SYNTH_BOX, 0, {-0.05f, -0.04f, 0}, {0.05f, 0.04f, 0.06f}, 0}; /* the corners' */
    synth_shape shape = {"box", "a box", 1, &prim};
    synth_params p;
    synth_params_default(&p);
    p.width = 320;
    p.height = 240;
    p.n_objects = 2;
    p.noise_sigma = 0;
    p.model_views = 2;
    p.meshes = &m;
    p.n_meshes = 1;
    synth_scene s;
    char err[256] = "";
    ck_assert_msg(synth_generate(&p, &s, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(s.n_kinds, 1);
    ck_assert_str_eq(s.names[0], "box@0");
    ck_assert_uint_eq(s.complete[0].n, 8);
    size_t labelled[2] = {0, 0};
    for (size_t i = 0; i < s.scene.n; i++) {
        if (s.labels[i] < 1)
            continue;
        uint32_t o = (uint32_t)s.labels[i] - 1;
        labelled[o]++;
        double c[3] = {s.scene.xyz[3 * i], s.scene.xyz[3 * i + 1], s.scene.xyz[3 * i + 2]}, q[3];
        pose_unapply(s.poses[o], c, q);
        ck_assert_msg(fabs(synth_shape_field(&shape, q)) < 1e-5, "object %u point off the box by %g", o,
                      synth_shape_field(&shape, q));
    }
    for (uint32_t o = 0; o < 2; o++) {
        ck_assert_uint_eq(labelled[o], s.visible_pixels[o]);
        ck_assert(s.visible_fraction[o] >= p.min_visible_fraction && s.visible_fraction[o] <= 1);
    }
    for (uint32_t v = 0; v < 2; v++) {
        ck_assert_uint_gt(s.models[v].n, 100);
        for (size_t i = 0; i < s.models[v].n; i++) {
            double q[3] = {s.models[v].xyz[3 * i], s.models[v].xyz[3 * i + 1], s.models[v].xyz[3 * i + 2]};
            ck_assert(fabs(synth_shape_field(&shape, q)) < 1e-5);
        }
    }
    synth_scene_free(&s);
    synth_mesh_free(&m);
}
END_TEST

START_TEST(mesh_frame_turns_y_up_into_z_up)
{
    host_mesh h = box_host_mesh();
    synth_mesh m;
    char err[256] = "";
    ck_assert(synth_mesh_make(&h, "box", SYNTH_MESH_Y_UP, &m, err, sizeof err) == 0);
    /* y was up: the file's y extent (0.08) becomes the height, the base at z = 0, centred in x and y */
    double lo[3] = {1, 1, 1}, hi[3] = {-1, -1, -1};
    for (size_t v = 0; v < m.n_vertices; v++)
        for (int c = 0; c < 3; c++) {
            lo[c] = fmin(lo[c], m.xyz[3 * v + c]);
            hi[c] = fmax(hi[c], m.xyz[3 * v + c]);
        }
    ck_assert(fabs(lo[2]) < 1e-12 && fabs(hi[2] - 0.08) < 1e-7);
    ck_assert(fabs(lo[0] + hi[0]) < 1e-7 && fabs(lo[1] + hi[1]) < 1e-7);
    ck_assert(fabs(hi[1] - lo[1] - 0.06) < 1e-7);
    /* outward normals: the top vertex normals point up (area-weighted mean of the faces about them) */
    for (size_t v = 0; v < m.n_vertices; v++)
        if (m.xyz[3 * v + 2] > 0.04)
            ck_assert(m.nrm[3 * v + 2] > 0.3);
    host_mesh_free(&h);
    synth_mesh_free(&m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mesh");
    TCase *tc = tcase_create("mesh");
    tcase_add_checked_fixture(tc, grip_test_tmp_dir_make, grip_test_tmp_dir_remove);
    tcase_add_test(tc, box_mesh_reads_back);
    tcase_add_test(tc, bad_meshes_are_refused_with_a_reason);
    tcase_add_test(tc, plane_depth_is_exact);
    tcase_add_test(tc, box_mesh_renders_as_the_ray_cast_box);
    tcase_add_test(tc, scene_of_mesh_kinds_lies_on_the_meshes);
    tcase_add_test(tc, mesh_frame_turns_y_up_into_z_up);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
