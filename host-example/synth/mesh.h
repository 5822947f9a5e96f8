/* mesh.h -- triangle meshes as synth kinds: a loaded mesh (mesh_io.h) put in a synth object frame (metres, z up,
 * base on z = 0, origin in the middle of its footprint) with a normal per vertex, ready to be placed, rendered
 * (raster.h) and sampled like a catalogue object. The Stanford models are stored y up, as in the Stanford 3D
 * Scanning Repository; synth_mesh_make turns y up into z up. */
#ifndef GRIP_HOST_SYNTH_MESH_H
#define GRIP_HOST_SYNTH_MESH_H

#include <stddef.h>
#include <stdint.h>

#include "io/mesh_io.h"

/* Every pointer is malloc'd and owned by the struct: free with synth_mesh_free(). */
typedef struct synth_mesh {
    char *name;
    size_t n_vertices;
    double *xyz; /* n_vertices x 3, object frame */
    double *nrm; /* n_vertices x 3 unit normals: the area-weighted mean of the faces' about each vertex,
                          oriented by the faces' winding (0 0 0 for a vertex of no face of nonzero area) */
    size_t n_triangles;
    uint32_t *tri;        /* n_triangles x 3 */
    double to_object[16]; /* the file's frame -> the object frame (row-major): a rotation and a translation */
} synth_mesh;

/* The up axis of the file's frame. */
typedef enum synth_mesh_up { SYNTH_MESH_Y_UP, SYNTH_MESH_Z_UP } synth_mesh_up;

/* Makes a kind of `m` named `name`: vertices turned so that `up` is z, then moved so that the lowest vertex is at
 * z = 0 and the middle of the x-y bounding box at the origin. Vertices with a non-finite coordinate are refused.
 * 0, or -1 with a message in err (nothing left allocated). */
int synth_mesh_make(const host_mesh *m, const char *name, synth_mesh_up up, synth_mesh *out, char *err, size_t errlen);

void synth_mesh_free(synth_mesh *m);

#endif
