/* bench_normal_orientation.c -- how descriptor.model_normals orients the normals of complete models: computed
 * normals (the CPU twin, from a radius) flipped toward the viewpoint (the origin of the model's frame: PCL's way,
 * model_normals = viewpoint) and pointed away from the centroid (model_normals = outward: flipped toward
 * grip_normals_centroid, then grip_normals_turn_around, as the descriptor front does) and those made consistent along
 * the surface (model_normals = propagate: grip_normals_propagate over the k-nearest graph, k = propagate_k's
 * default 15 unless --k says otherwise), each compared with the model's true outward normals. The GPU gives the same
 * orientation (test_descriptor_front_cuda, test_normals_propagate_cuda).
 *
 * Models: triangle meshes (.ply with faces, e.g. the six Stanford models of bologna_retrieval/models: put z up
 * and on the origin as synth/mesh.c does; truth = the faces' area-weighted vertex normals, oriented by their
 * winding) or clouds that carry outward normals (.pcd, e.g. `grip-host synth`'s complete models; their own
 * VIEWPOINT). Prints one line per model: the share of defined normals that point against the truth, for each
 * orientation, and the propagation's own time (the median of 5 runs). Usage: bench_normal_orientation <radius>
 * [--k K] <model.ply|model.pcd>... (K: the propagation's neighbours, default 15 as propagate_k's). Not a test. */
#include "core/ctx.h"
#include "host_util.h"
#include "descriptor/normals.h"
#include "descriptor/normals_propagate.h"
#include "io/cloud_io.h"
#include "io/mesh_io.h"
#include "synth/mesh.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A model as the bench compares it: points, the truth's normals (n x 3, 0 0 0 where it has none), viewpoint. */
typedef struct model {
    size_t n;
    float *xyz;
    double *truth;
    float viewpoint[3];
} model;

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

static int model_of_mesh(const char *path, model *m, char *err, size_t errlen)
{
    host_mesh hm = {0};
    synth_mesh sm = {0};
    if (mesh_read(path, &hm, err, errlen) != 0)
        return -1;
    int rc = synth_mesh_make(&hm, path, SYNTH_MESH_Y_UP, &sm, err, errlen);
    host_mesh_free(&hm);
    if (rc != 0)
        return -1;
    m->n = sm.n_vertices;
    m->xyz = malloc(m->n * 3 * sizeof *m->xyz);
    m->truth = malloc(m->n * 3 * sizeof *m->truth);
    if (m->xyz && m->truth) {
        for (size_t i = 0; i < 3 * m->n; ++i)
            m->xyz[i] = (float)sm.xyz[i];
        memcpy(m->truth, sm.nrm, m->n * 3 * sizeof *m->truth);
    }
    synth_mesh_free(&sm);
    if (!m->xyz || !m->truth) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    return 0;
}

static int model_of_cloud(const char *path, model *m, char *err, size_t errlen)
{
    host_cloud c = {0};
    if (cloud_read(path, &c, err, errlen) != 0)
        return -1;
    if (!c.normals) {
        snprintf(err, errlen, "%s: carries no normals to compare with", path);
        host_cloud_free(&c);
        return -1;
    }
    m->n = c.n;
    m->xyz = c.xyz;
    c.xyz = NULL;
    memcpy(m->viewpoint, c.viewpoint, sizeof m->viewpoint);
    m->truth = malloc(m->n * 3 * sizeof *m->truth);
    for (size_t i = 0; m->truth && i < 3 * m->n; ++i)
        m->truth[i] = c.normals[i];
    host_cloud_free(&c);
    if (!m->truth) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    return 0;
}

/* Of the rows where both normals and the truth are defined: how many point against the truth; *compared, their
 * count. */
static size_t count_against(const model *m, const float *normals, size_t *compared)
{
    size_t against = 0;
    *compared = 0;
    for (size_t i = 0; i < m->n; ++i) {
        const double *t = m->truth + 3 * i;
        if (isnan(normals[4 * i]) || (t[0] == 0 && t[1] == 0 && t[2] == 0))
            continue;
        ++*compared;
        against += t[0] * normals[4 * i] + t[1] * normals[4 * i + 1] + t[2] * normals[4 * i + 2] < 0;
    }
    return against;
}

/* The outward normals propagated (into propagated, n x 4) 5 times; the median time in *median_s. */
static int propagate_timed(grip_ctx *ctx, const model *m, const float *outward, const float centroid[3], uint32_t k,
                           float *propagated, double *median_s)
{
    enum { RUNS = 5 };
    double t[RUNS];
    for (int r = 0; r < RUNS; ++r) {
        memcpy(propagated, outward, m->n * 4 * sizeof *propagated);
        const double t0 = host_now_ms();
        if (grip_normals_propagate(ctx, m->xyz, m->n, NULL, k, centroid, propagated) != GRIP_OK)
            return -1;
        t[r] = (host_now_ms() - t0) * 1e-3;
    }
    *median_s = host_median(t, RUNS);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s <radius> [--k K] <model.ply|model.pcd>...\n", argv[0]);
        return 2;
    }
    const float radius = strtof(argv[1], NULL);
    uint32_t k = 15; /* propagate_k's default */
    int first = 2;
    if (argc > 4 && strcmp(argv[2], "--k") == 0) {
        k = (uint32_t)strtoul(argv[3], NULL, 10);
        first = 4;
    }
    grip_ctx *ctx = NULL;
    if (grip_ctx_new(NULL, &ctx) != GRIP_OK)
        return 1;
    int rc = 0;
    for (int a = first; a < argc; ++a) {
        model m = {0};
        char err[4096 + GRIP_ERROR_TEXT_MAX];
        float *toward = NULL, *outward = NULL, *propagated = NULL, centroid[3];
        double propagate_s = 0;
        int bad = (ends_with(argv[a], ".pcd") ? model_of_cloud : model_of_mesh)(argv[a], &m, err, sizeof err);
        if (!bad) {
            toward = malloc(m.n * 4 * sizeof *toward);
            outward = malloc(m.n * 4 * sizeof *outward);
            propagated = malloc(m.n * 4 * sizeof *propagated);
            grip_normals_centroid(m.xyz, m.n, centroid);
            bad = !toward || !outward || !propagated ||
                  grip_normals_compute(ctx, m.xyz, m.n, NULL, 0, radius, m.viewpoint, toward) != GRIP_OK ||
                  grip_normals_compute(ctx, m.xyz, m.n, NULL, 0, radius, centroid, outward) != GRIP_OK;
            if (!bad) {
                grip_normals_turn_around(outward, m.n);
                bad = propagate_timed(ctx, &m, outward, centroid, k, propagated, &propagate_s) != 0;
            }
            snprintf(err, sizeof err, "%s: %s", argv[a], ctx->last_error);
        }
        if (bad) {
            fprintf(stderr, "%s\n", err);
            rc = 1;
        } else {
            size_t n_toward = 0, n_outward = 0, n_propagated = 0;
            size_t against_toward = count_against(&m, toward, &n_toward);
            size_t against_outward = count_against(&m, outward, &n_outward);
            size_t against_propagated = count_against(&m, propagated, &n_propagated);
            printf("%s: points=%zu radius=%g inward_viewpoint=%.1f%% (%zu of %zu) inward_outward=%.1f%% (%zu of %zu) "
                   "inward_propagate=%.2f%% (%zu of %zu) k=%u propagate_ms=%.1f\n",
                   argv[a], m.n, (double)radius, 100.0 * (double)against_toward / (double)(n_toward ? n_toward : 1),
                   against_toward, n_toward, 100.0 * (double)against_outward / (double)(n_outward ? n_outward : 1),
                   against_outward, n_outward,
                   100.0 * (double)against_propagated / (double)(n_propagated ? n_propagated : 1), against_propagated,
                   n_propagated, k, 1e3 * propagate_s);
        }
        free(toward);
        free(outward);
        free(propagated);
        free(m.xyz);
        free(m.truth);
    }
    grip_ctx_free(ctx);
    return rc;
}
