/* mesh.c -- see mesh.h. */
#include "synth/mesh.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_util.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The rotation taking `up` to z: y up turns by +90 degrees about x ((x, y, z) -> (x, -z, y)). */
static void up_rotation(synth_mesh_up up, double R[9])
{
    static const double y_up[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0}, z_up[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(R, up == SYNTH_MESH_Y_UP ? y_up : z_up, sizeof y_up);
}

/* Area-weighted vertex normals: the cross product of two edges is twice the face's area along its normal. */
static void vertex_normals(synth_mesh *m)
{
    memset(m->nrm, 0, m->n_vertices * 3 * sizeof *m->nrm);
    for (size_t t = 0; t < m->n_triangles; t++) {
        const uint32_t *f = &m->tri[3 * t];
        const double *a = &m->xyz[3 * f[0]], *b = &m->xyz[3 * f[1]], *c = &m->xyz[3 * f[2]];
        double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 3; i++)
                m->nrm[3 * f[k] + i] += n[i];
    }
    for (size_t v = 0; v < m->n_vertices; v++) {
        double *n = &m->nrm[3 * v], len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int i = 0; i < 3; i++)
            n[i] = len > 0 ? n[i] / len : 0;
    }
}

int synth_mesh_make(const host_mesh *m, const char *name, synth_mesh_up up, synth_mesh *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t n = m->vertices.n;
    if (n == 0 || m->n_triangles == 0)
        return fail(err, errlen, "%s: a mesh needs vertices and triangles", name);
    out->name = host_strdup(name);
    out->xyz = malloc(n * 3 * sizeof *out->xyz);
    out->nrm = malloc(n * 3 * sizeof *out->nrm);
    out->tri = malloc(m->n_triangles * 3 * sizeof *out->tri);
    if (!out->name || !out->xyz || !out->nrm || !out->tri) {
        synth_mesh_free(out);
        return fail(err, errlen, "%s: out of memory", name);
    }
    out->n_vertices = n;
    out->n_triangles = m->n_triangles;
    memcpy(out->tri, m->triangles, m->n_triangles * 3 * sizeof *out->tri);
    double R[9], lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    up_rotation(up, R);
    for (size_t v = 0; v < n; v++) {
        const float *p = &m->vertices.xyz[3 * v];
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) {
            synth_mesh_free(out);
            return fail(err, errlen, "%s: vertex %zu has a non-finite coordinate", name, v);
        }
        for (int r = 0; r < 3; r++) {
            double q = R[3 * r] * p[0] + R[3 * r + 1] * p[1] + R[3 * r + 2] * p[2];
            out->xyz[3 * v + r] = q;
            lo[r] = fmin(lo[r], q);
            hi[r] = fmax(hi[r], q);
        }
    }
    double shift[3] = {-0.5 * (lo[0] + hi[0]), -0.5 * (lo[1] + hi[1]), -lo[2]};
    for (size_t v = 0; v < n; v++)
        for (int r = 0; r < 3; r++)
            out->xyz[3 * v + r] += shift[r];
    memset(out->to_object, 0, sizeof out->to_object);
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            out->to_object[4 * r + c] = R[3 * r + c];
        out->to_object[4 * r + 3] = shift[r];
    }
    out->to_object[15] = 1;
    vertex_normals(out);
    return 0;
}

void synth_mesh_free(synth_mesh *m)
{
    if (!m)
        return;
    free(m->name);
    free(m->xyz);
    free(m->nrm);
    free(m->tri);
    memset(m, 0, sizeof *m);
}
