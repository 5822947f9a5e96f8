/* mesh_read.c -- see mesh_io.h. The vertices are read by the PLY reader (ply_rows.h), then the elements between
 * them and the faces are skipped row by row, then the face rows are read: the vertex_indices list of each (its
 * length must be 3), other properties of a face skipped by their size. */
#include "io/mesh_io.h"
#include "io/ply_rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The face element and its index list, or -1 with a message. */
static int find_faces(const cloud_io_file *f, const ply_header *h, size_t *face, size_t *list, char *err, size_t errlen)
{
    for (size_t k = 0; k < h->nelements; k++) {
        if (strcmp(h->elements[k].name, "face") != 0)
            continue;
        if (k < h->vertex)
            return cloud_io_fail(err, errlen, f->path, h->elements[k].line,
                                 "element face comes before element vertex; a mesh needs its vertices first");
        for (size_t p = 0; p < h->elements[k].nprops; p++) {
            const ply_property *q = &h->elements[k].props[p];
            if (strcmp(q->name, "vertex_indices") != 0 && strcmp(q->name, "vertex_index") != 0)
                continue;
            if (q->count_type == CLOUD_IO_NONE || !cloud_io_scalar_is_integer(q->type) ||
                !cloud_io_scalar_is_integer(q->count_type))
                return cloud_io_fail(err, errlen, f->path, h->elements[k].line,
                                     "face property '%s' must be a list of integers", q->name);
            *face = k;
            *list = p;
            return 0;
        }
        return cloud_io_fail(err, errlen, f->path, h->elements[k].line,
                             "element face has no 'vertex_indices' list property");
    }
    return cloud_io_fail(err, errlen, f->path, 0, "has no element face: not a mesh");
}

/* Reads face row `row` into tri[0..3): the index list checked, the other properties skipped. */
static int read_face(const cloud_io_file *f, const ply_element *e, size_t list, uint64_t row, size_t n_vertices,
                     ply_bytes *b, uint32_t tri[3], char *err, size_t errlen)
{
    for (size_t k = 0; k < e->nprops; k++) {
        const ply_property *p = &e->props[k];
        size_t size = cloud_io_scalar_size(p->type);
        if (k != list) {
            ply_element one = *e; /* a row of this property alone: the walker skips it by its size */
            one.props[0] = *p;
            one.nprops = 1;
            const ply_property *bad = NULL;
            int rc = ply_walk_binary_row(&one, b, NULL, 0, &bad);
            if (rc != 0)
                return ply_binary_bad_row(f, e, row, b, rc, bad, err, errlen);
            continue;
        }
        size_t csize = cloud_io_scalar_size(p->count_type);
        if ((size_t)(b->end - b->p) < csize)
            return ply_binary_bad_row(f, e, row, b, -1, NULL, err, errlen);
        double items = cloud_io_scalar_load(b->p, p->count_type, b->swap).number;
        if (items != 3)
            return cloud_io_fail(err, errlen, f->path, 0,
                                 "face %llu has %.0f vertices; only triangles are supported (byte offset %zu)",
                                 (unsigned long long)row, items, (size_t)(b->p - b->begin));
        b->p += csize;
        if ((size_t)(b->end - b->p) < 3 * size)
            return ply_binary_bad_row(f, e, row, b, -1, NULL, err, errlen);
        for (int c = 0; c < 3; c++, b->p += size) {
            double v = cloud_io_scalar_load(b->p, p->type, b->swap).number;
            if (!(v >= 0 && v < (double)n_vertices))
                return cloud_io_fail(err, errlen, f->path, 0,
                                     "face %llu: vertex index %.0f is out of range (the mesh has %zu vertices)",
                                     (unsigned long long)row, v, n_vertices);
            tri[c] = (uint32_t)v;
        }
    }
    return 0;
}

/* The faces of the parsed file (element `face`, index list property `list`), b just after the vertex rows. */
static int read_faces(const cloud_io_file *f, const ply_header *h, size_t face, size_t list, ply_bytes *b, host_mesh *m,
                      char *err, size_t errlen)
{
    for (size_t k = h->vertex + 1; k < face; k++) { /* elements between the vertices and the faces */
        const ply_element *e = &h->elements[k];
        if (e->nprops == 0)
            continue;
        if (ply_check_binary_room(f, e, b, err, errlen) != 0)
            return -1;
        for (uint64_t r = 0; r < e->count; r++) {
            const ply_property *bad = NULL;
            int rc = ply_walk_binary_row(e, b, NULL, 0, &bad);
            if (rc != 0)
                return ply_binary_bad_row(f, e, r, b, rc, bad, err, errlen);
        }
    }
    const ply_element *e = &h->elements[face];
    if (e->count == 0)
        return cloud_io_fail(err, errlen, f->path, e->line, "element face has no faces");
    /* room for the count: every row holds at least the list's length */
    if (ply_check_binary_room(f, e, b, err, errlen) != 0)
        return -1;
    m->triangles = malloc((size_t)e->count * 3 * sizeof *m->triangles);
    if (!m->triangles)
        return cloud_io_fail(err, errlen, f->path, 0, "out of memory for %llu faces", (unsigned long long)e->count);
    for (uint64_t r = 0; r < e->count; r++)
        if (read_face(f, e, list, r, m->vertices.n, b, &m->triangles[3 * r], err, errlen) != 0)
            return -1;
    m->n_triangles = (size_t)e->count;
    return 0;
}

static int read_mesh(const cloud_io_file *f, host_mesh *out, char *err, size_t errlen)
{
    ply_header *h = malloc(sizeof *h); /* ~20 KiB: kept off the stack */
    int rc = h ? ply_header_parse(f, h, err, errlen) : cloud_io_fail(err, errlen, f->path, 0, "out of memory");
    if (rc == 0 && h->format == PLY_ASCII)
        rc = cloud_io_fail(err, errlen, f->path, 0, "is ascii PLY; meshes are read from binary PLY only");
    ply_bytes b;
    size_t face = 0, list = 0;
    if (rc == 0)
        rc = find_faces(f, h, &face, &list, err, errlen);
    if (rc == 0)
        rc = ply_read_vertices(f, h, &out->vertices, &b, err, errlen);
    if (rc == 0 && out->vertices.n == 0)
        rc = cloud_io_fail(err, errlen, f->path, 0, "has no vertices");
    if (rc == 0)
        rc = read_faces(f, h, face, list, &b, out, err, errlen);
    free(h);
    if (rc != 0)
        host_mesh_free(out);
    return rc == 0 ? 0 : -1;
}

int mesh_read(const char *path, host_mesh *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    cloud_io_file f;
    if (cloud_io_file_load(path, &f, err, errlen) != 0)
        return -1;
    int rc = read_mesh(&f, out, err, errlen);
    cloud_io_file_free(&f);
    return rc;
}

int mesh_read_mem(const void *data, size_t size, const char *name, host_mesh *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    cloud_io_file f;
    if (cloud_io_file_from_mem(name, data, size, &f, err, errlen) != 0)
        return -1;
    int rc = read_mesh(&f, out, err, errlen);
    cloud_io_file_free(&f);
    return rc;
}

void host_mesh_free(host_mesh *m)
{
    if (!m)
        return;
    host_cloud_free(&m->vertices);
    free(m->triangles);
    memset(m, 0, sizeof *m);
}
