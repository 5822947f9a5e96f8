/* fuzz_ply.c -- libFuzzer harness of grip-host's PLY readers: the input is a whole .ply file, ascii,
 * binary_little_endian or binary_big_endian (the corpus has each), read as a cloud (ply_read_mem) and as a triangle
 * mesh (mesh_read_mem: every index it returns must lie below the vertex count). */
#include "fuzz_common.h"
#include "io/mesh_io.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    host_cloud c;
    char err[512] = "";
    int rc = ply_read_mem(data, size, "fuzz.ply", &c, err, sizeof err);
    fuzz_check_read(rc, &c, err, "fuzz.ply");
    host_cloud_free(&c);

    host_mesh m;
    err[0] = '\0';
    rc = mesh_read_mem(data, size, "fuzz.ply", &m, err, sizeof err);
    fuzz_check_read(rc, &m.vertices, err, "fuzz.ply");
    fuzz_require(rc == 0 ? m.vertices.n > 0 && m.n_triangles > 0 && m.triangles : !m.triangles && !m.n_triangles,
                 "a mesh has vertices and triangles; a failure leaves none", err);
    for (size_t i = 0; i < 3 * m.n_triangles; i++)
        fuzz_require(m.triangles[i] < m.vertices.n, "every index is below the vertex count", err);
    host_mesh_free(&m);
    return 0;
}
