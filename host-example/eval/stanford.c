/* stanford.c -- see stanford.h. */
#include "eval/stanford.h"
#include "bench/retrieval.h"
#include "io/mesh_io.h"

#include <stdio.h>

int stanford_meshes_load(const bologna_selection *s, synth_mesh meshes[BOLOGNA_MODELS], uint32_t *n, double *noise_unit)
{
    *n = 0;
    double sum = 0;
    for (int mi = 0; mi < BOLOGNA_MODELS; mi++) {
        if (!s->use_model[mi])
            continue;
        char path[4200], err[1024];
        snprintf(path, sizeof path, "%s/models/%s", s->root, bologna_models[mi].file);
        host_mesh mesh;
        if (mesh_read(path, &mesh, err, sizeof err) != 0) {
            fprintf(stderr, "grip-host: eval: %s\n", err);
            return 1;
        }
        double mr = retrieval_mesh_resolution(&mesh.vertices);
        int rc = synth_mesh_make(&mesh, bologna_models[mi].name, SYNTH_MESH_Y_UP, &meshes[*n], err, sizeof err);
        host_mesh_free(&mesh);
        if (rc != 0) {
            fprintf(stderr, "grip-host: eval: %s\n", err);
            return 1;
        }
        ++*n;
        if (!(mr > 0)) {
            fprintf(stderr, "grip-host: eval: %s: cannot measure its mesh resolution\n", path);
            return 1;
        }
        sum += BOLOGNA_NOISE_UNIT_MR * mr;
    }
    *noise_unit = *n ? sum / *n : 0;
    return 0;
}
