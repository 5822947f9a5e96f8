/* make_seeds.c -- writes the seed corpora of fuzz_pcd and fuzz_ply (tests/fuzz/corpus/): a tiny generated scene
 * (8 x 8 pixels: organized, NaN, colours) and a few points of a generated model (normals), each through
 * grip-host's own writers (PCD ascii and binary, PLY ascii and binary_little_endian), plus what the writers never
 * produce: binary_compressed, binary_big_endian, every field type, COUNT > 1, padding, lists, elements around the
 * vertices, old headers, empty clouds. Kept small so that libFuzzer mutates structure, not bulk.
 *
 * The seed of fuzz_model_db is a model database of two models made from the same points: one with every optional
 * array (cloud normals, colours, normals, frames), one with none.
 *
 *   fuzz_make_seeds OUT_DIR    (writes OUT_DIR/pcd/, OUT_DIR/ply/ and OUT_DIR/model_db/, which must exist) */
#define _POSIX_C_SOURCE 200809L
#include "io/cloud_io.h"
#include "model_db.h"
#include "synth/synth.h"

#include <liblzf/lzf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *out_dir;

static const char *path_of(const char *kind, const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", out_dir, kind, name);
    return path;
}

static void die(const char *what)
{
    fprintf(stderr, "fuzz_make_seeds: %s\n", what);
    exit(1);
}

static void write_bytes(const char *kind, const char *name, const void *data, size_t n)
{
    FILE *fp = fopen(path_of(kind, name), "wb");
    if (!fp || fwrite(data, 1, n, fp) != n || fclose(fp) != 0)
        die(path_of(kind, name));
}

static void write_text(const char *kind, const char *name, const char *text)
{
    write_bytes(kind, name, text, strlen(text));
}

static void write_cloud(const host_cloud *c, const char *name)
{
    char err[512], pcd[64], ply[64];
    for (int binary = 0; binary < 2; binary++) {
        snprintf(pcd, sizeof pcd, "%s_%s.pcd", name, binary ? "binary" : "ascii");
        snprintf(ply, sizeof ply, "%s_%s.ply", name, binary ? "binary_le" : "ascii");
        if (pcd_write(path_of("pcd", pcd), c, binary, err, sizeof err) != 0 ||
            ply_write(path_of("ply", ply), c, binary, err, sizeof err) != 0)
            die(err);
    }
}

/* The first n points of c (n <= c->n), unorganized. */
static host_cloud head_of(const host_cloud *c, size_t n)
{
    host_cloud h = {.width = (uint32_t)n, .height = 1, .n = n};
    h.xyz = malloc(n * 3 * sizeof(float));
    h.normals = c->normals ? malloc(n * 3 * sizeof(float)) : NULL;
    if (!h.xyz || (c->normals && !h.normals))
        die("out of memory");
    memcpy(h.xyz, c->xyz, n * 3 * sizeof(float));
    if (c->normals)
        memcpy(h.normals, c->normals, n * 3 * sizeof(float));
    return h;
}

/* x y z normal_x normal_y normal_z as PCD binary_compressed: LZF over the field-major arrays. */
static void write_compressed(const host_cloud *c, const char *name)
{
    size_t n = c->n, raw_n = n * 6 * sizeof(float);
    float *raw = malloc(raw_n);
    unsigned char *packed = malloc(raw_n + 64);
    char *file = malloc(raw_n + 1024);
    if (!raw || !packed || !file)
        die("out of memory");
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < 3; k++) {
            raw[k * n + i] = c->xyz[3 * i + k];
            raw[(3 + k) * n + i] = c->normals[3 * i + k];
        }
    unsigned got = lzf_compress(raw, (unsigned)raw_n, packed, (unsigned)raw_n + 64);
    if (got == 0)
        die("lzf_compress failed");
    int head = snprintf(file, 1024,
                        "# .PCD v0.7 - Point Cloud Data file format\nVERSION 0.7\n"
                        "FIELDS x y z normal_x normal_y normal_z\nSIZE 4 4 4 4 4 4\nTYPE F F F F F F\n"
                        "COUNT 1 1 1 1 1 1\nWIDTH %zu\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS %zu\n"
                        "DATA binary_compressed\n",
                        n, n);
    uint32_t sizes[2] = {got, (uint32_t)raw_n};
    memcpy(file + head, sizes, 8);
    memcpy(file + head + 8, packed, got);
    write_bytes("pcd", name, file, (size_t)head + 8 + got);
    free(raw);
    free(packed);
    free(file);
}

/* Every PCD field type, COUNT 2, '_' padding and rgba, in all three DATA kinds (3 points). */
static void write_mixed_pcd(void)
{
    static const char *head = "VERSION .7\nFIELDS x y z _ label rgba normal_x normal_y normal_z curv\n"
                              "SIZE 8 4 2 1 1 4 4 4 4 4\nTYPE F F I U U U F F F I\nCOUNT 1 1 1 3 2 1 1 1 1 1\n"
                              "WIDTH 3\nHEIGHT 1\nVIEWPOINT 0.5 0 -1 1 0 0 0\nPOINTS 3\nDATA %s\n";
    /* x F8, y F4, z I2, _ 3 x U1, label 2 x U1, rgba U4, normals F4 x 3, curv I4: 39 bytes a point */
    unsigned char rec[3][39], soa[3 * 36], file[1024], packed[512];
    size_t soa_at = 0;
    for (int i = 0; i < 3; i++) {
        unsigned char *p = rec[i];
        double x = 0.25 * i - 1;
        float y = 1.5f * (float)i, nx = 0, ny = 0, nz = 1;
        int16_t z = (int16_t)(-7 + 300 * i);
        uint32_t rgba = 0xff102030u + (uint32_t)i;
        int32_t curv = -i;
        memcpy(p, &x, 8), memcpy(p + 8, &y, 4), memcpy(p + 12, &z, 2);
        p[14] = p[15] = p[16] = 0xAA, p[17] = (unsigned char)i, p[18] = 200;
        memcpy(p + 19, &rgba, 4), memcpy(p + 23, &nx, 4), memcpy(p + 27, &ny, 4), memcpy(p + 31, &nz, 4);
        memcpy(p + 35, &curv, 4);
    }
    /* binary: point-major records of 39 bytes */
    int h = snprintf((char *)file, sizeof file, head, "binary");
    for (int i = 0; i < 3; i++)
        memcpy(file + h + 39 * i, rec[i], 39);
    write_bytes("pcd", "mixed_binary.pcd", file, (size_t)h + 3 * 39);
    /* binary_compressed: field-major, the '_' padding left out (36 bytes a point) */
    static const size_t offs[] = {0, 8, 12, 17, 19, 23, 27, 31, 35}, lens[] = {8, 4, 2, 2, 4, 4, 4, 4, 4};
    for (size_t f = 0; f < 9; f++)
        for (int i = 0; i < 3; i++, soa_at += lens[f])
            memcpy(soa + soa_at, rec[i] + offs[f], lens[f]);
    unsigned got = lzf_compress(soa, (unsigned)soa_at, packed, sizeof packed);
    if (got == 0)
        die("lzf_compress failed");
    h = snprintf((char *)file, sizeof file, head, "binary_compressed");
    uint32_t sizes[2] = {got, (uint32_t)soa_at};
    memcpy(file + h, sizes, 8);
    memcpy(file + h + 8, packed, got);
    write_bytes("pcd", "mixed_compressed.pcd", file, (size_t)h + 8 + got);
    h = snprintf((char *)file, sizeof file, head, "ascii");
    snprintf((char *)file + h, sizeof file - (size_t)h,
             "-1 0 -7 170 170 170 0 200 4278194224 0 0 1 0\n"
             "-0.75 1.5 293 0 0 0 1 200 4278194225 nan nan nan -1\n"
             "-0.5 3e0 593 1 2 3 2 200 4278194226 0 -0 1 -2\n");
    write_text("pcd", "mixed_ascii.pcd", (const char *)file);
}

/* The low n bytes of v, in the byte order asked for. */
static void put_int(unsigned char **p, uint32_t v, size_t n, int be)
{
    for (size_t k = 0; k < n; k++)
        *(*p)++ = (unsigned char)(v >> (8 * (be ? n - 1 - k : k)));
}

static void put_f32(unsigned char **p, float v, int be)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    put_int(p, bits, 4, be);
}

/* A mesh with an element before the vertices and a face list after them, in all three PLY formats. */
static void write_mesh_ply(void)
{
    static const char *head = "ply\nformat %s 1.0\ncomment made by make_seeds\nobj_info tiny\n"
                              "element camera 1\nproperty float view_px\nproperty list uchar short tag\n"
                              "element vertex 4\nproperty double x\nproperty float y\nproperty int z\n"
                              "property float nx\nproperty float ny\nproperty float nz\nproperty uchar red\n"
                              "property uchar green\nproperty uchar blue\nproperty ushort flags\n"
                              "element face 2\nproperty list uchar int vertex_indices\nend_header\n";
    char file[2048];
    int h = snprintf(file, sizeof file, head, "ascii");
    snprintf(file + h, sizeof file - (size_t)h,
             "0.5 2 7 -7\n0 0 0 0 0 1 255 0 0 1\n1 0 0 0 0 1 0 255 0 2\n0 1 1 0 0 1 0 0 255 3\n1 1 1 0 0 1 9 9 9 4\n"
             "3 0 1 2\n3 1 3 2\n");
    write_text("ply", "mesh_ascii.ply", file);
    for (int be = 0; be < 2; be++) {
        unsigned char *p = (unsigned char *)file + snprintf(file, sizeof file, head,
                                                            be ? "binary_big_endian" : "binary_little_endian");
        const unsigned char *begin = (const unsigned char *)file;
        put_f32(&p, 0.5f, be), put_int(&p, 2, 1, be), put_int(&p, 7, 2, be), put_int(&p, (uint16_t)-7, 2, be);
        for (int i = 0; i < 4; i++) {
            double x = i & 1;
            unsigned char xb[8];
            memcpy(xb, &x, 8);
            for (int k = 0; k < 8; k++)
                *p++ = xb[be ? 7 - k : k];
            put_f32(&p, (float)(i >> 1), be), put_int(&p, i == 3, 4, be);
            put_f32(&p, 0, be), put_f32(&p, 0, be), put_f32(&p, 1, be);
            put_int(&p, i == 0 ? 255 : 0, 1, be), put_int(&p, i == 1 ? 255 : 0, 1, be);
            put_int(&p, i == 2 ? 255 : 9, 1, be), put_int(&p, (uint32_t)i + 1, 2, be);
        }
        put_int(&p, 3, 1, be), put_int(&p, 0, 4, be), put_int(&p, 1, 4, be), put_int(&p, 2, 4, be);
        put_int(&p, 3, 1, be), put_int(&p, 1, 4, be), put_int(&p, 3, 4, be), put_int(&p, 2, 4, be);
        write_bytes("ply", be ? "mesh_binary_be.ply" : "mesh_binary_le.ply", file, (size_t)(p - begin));
    }
}

static void write_small_cases(void)
{
    write_text("pcd", "old_v5_points_only.pcd", "# .PCD v.5\nVERSION .5\nFIELDS x y z\nPOINTS 2\nDATA ascii\n"
                                                "1 2 3\n\n  4e-3\t5 nan\n");
    write_text("pcd", "columns_no_size.pcd", "COLUMNS x y z rgb\nWIDTH 1\nDATA ascii\n1 2 3 4.2108e+06\n");
    write_text("pcd", "empty_binary.pcd", "FIELDS x y z\nWIDTH 0\nHEIGHT 0\nPOINTS 0\nDATA binary\n");
    char empty_compressed[128];
    int h = snprintf(empty_compressed, sizeof empty_compressed, "FIELDS x y z\nWIDTH 0\nPOINTS 0\nDATA %s\n",
                     "binary_compressed");
    memset(empty_compressed + h, 0, 8);
    write_bytes("pcd", "empty_compressed.pcd", empty_compressed, (size_t)h + 8);
    write_text("ply", "empty_vertex.ply", "ply\nformat binary_little_endian 1.0\nelement vertex 0\n"
                                          "property float x\nproperty float y\nproperty float z\nend_header\n");
    write_text("ply", "lists_ascii.ply", "ply\nformat ascii 1.0\nelement vertex 2\nproperty list uchar float w\n"
                                         "property float x\nproperty float y\nproperty float z\n"
                                         "property list int uint ids\nend_header\n"
                                         "2 0.5 0.25 1 2 3 0\n0 4 5 6 3 7 8 9\n");
}

/* The model database seed: c's points twice, as a model with every optional array and as one with none; every
 * fourth point a keypoint, descriptors of 4 values. */
static void write_model_db(const host_cloud *c)
{
    model_set s;
    uint64_t np = c->n, nk = (c->n + 3) / 4;
    if (model_set_alloc(&s, 2, 4, 2 * nk) != 0 ||
        !(s.settings = strdup("plugin = grip seed\ndescriptor.impl = shot\n")))
        die("out of memory");
    s.abi_major = GRIP_ABI_MAJOR;
    s.abi_minor = GRIP_ABI_MINOR;
    stored_model_shape full = {np, nk, (uint32_t)np, 1, np, np, np, nk}, bare = {np, nk, (uint32_t)np, 1, 0, 0, 0, 0};
    if (model_set_shape(&s, 0, "full", &full, 0) != 0 || model_set_shape(&s, 1, "bare", &bare, nk) != 0)
        die("out of memory");
    for (uint32_t m = 0; m < 2; m++) {
        stored_model *sm = &s.models[m];
        memcpy(sm->xyz, c->xyz, np * 3 * sizeof(float));
        for (uint64_t i = 0; m == 0 && i < np * 3; i++) {
            sm->cloud_normals[i] = c->normals ? c->normals[i] : 0;
            sm->rgb[i] = (uint8_t)(i * 37);
        }
        for (uint64_t i = 0; m == 0 && i < np * 4; i++)
            sm->normals[i] = (float)(i % 4) * 0.5f;
        for (uint64_t k = 0; k < nk; k++) {
            sm->keypoints[k] = (uint32_t)(4 * k);
            memcpy(sm->keypoint_xyz + 3 * k, c->xyz + 12 * k, 3 * sizeof(float));
            for (int j = 0; m == 0 && j < 9; j++)
                sm->frames[9 * k + j] = j % 4 == 0 ? 1.0f : 0.0f;
        }
    }
    for (uint64_t i = 0; i < s.rows * s.dim; i++)
        s.reference[i] = (float)(i % 11) / 11.0f;
    char err[512];
    if (model_db_write(path_of("model_db", "two_models.grip"), &s, err, sizeof err) != 0)
        die(err);
    model_set_free(&s);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: fuzz_make_seeds OUT_DIR");
    out_dir = argv[1];
    synth_params p;
    synth_params_default(&p);
    p.n_objects = 1;
    p.width = 8;
    p.height = 8;
    p.model_spacing = 0.02;
    synth_scene s;
    char err[512];
    if (synth_generate(&p, &s, err, sizeof err) != 0)
        die(err);
    write_cloud(&s.scene, "scene");
    host_cloud model = head_of(&s.models[0], s.models[0].n < 12 ? s.models[0].n : 12);
    write_cloud(&model, "model");
    write_compressed(&model, "model_compressed.pcd");
    write_model_db(&model);
    host_cloud_free(&model);
    synth_scene_free(&s);
    write_mixed_pcd();
    write_mesh_ply();
    write_small_cases();
    return 0;
}
