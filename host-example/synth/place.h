/* place.h -- where synth.c's objects go: random poses standing on the table, footprints apart, wholly in
 * the image. Also the small random and pose helpers the files of synth/ share. Internal to synth/, but for the
 * seeded random stream, which bench/ draws from too. */
#ifndef GRIP_HOST_SYNTH_PLACE_H
#define GRIP_HOST_SYNTH_PLACE_H

#include <stddef.h>
#include <stdint.h>

#include "synth/render.h"
#include "synth/shapes.h"
#include "synth/synth.h"

/* Sides of the polygon kept around each model's footprint. */
#define SYNTH_FOOTPRINT_SIDES 32

/* splitmix64: small, fast, and every seed (0 included) starts a good stream. */
uint64_t synth_rng_next(uint64_t *state);
/* Uniform in [lo, hi). */
double synth_rng_uniform(uint64_t *state, double lo, double hi);
/* Depth noise is truncated at this many sigma. */
#define SYNTH_NOISE_CLIP 4.0
/* Standard normal (Box-Muller) redrawn until it lies within SYNTH_NOISE_CLIP. */
double synth_rng_clipped_normal(uint64_t *state);

/* out = a * b for row-major 4x4 transforms (out must not alias a or b); out = T p for a point. */
void synth_pose_mul(const double a[16], const double b[16], double out[16]);
void synth_pose_apply(const double T[16], const double p[3], double out[3]);

/* A kind's surface samples and what placement needs to know of them. */
typedef struct synth_model {
    const synth_shape *shape; /* a catalogue object, or NULL for a mesh */
    const synth_mesh *mesh;   /* a mesh (borrowed), or NULL */
    double *xyz, *nrm; /* n x 3 samples and outward normals, object frame (malloc'd): a mesh's are its vertices */
    size_t n;
    double reach, top; /* largest distance of a sample from the z axis; largest height */
    /* the polygon circumscribing every sample's (x, y) seen from above: edge k lies on the line
     * x . dir[k] = support[k], dir[k] at angle 2 pi k / SIDES; vertex k joins edges k and k + 1 */
    double dir[SYNTH_FOOTPRINT_SIDES][2], support[SYNTH_FOOTPRINT_SIDES];
    double footprint[SYNTH_FOOTPRINT_SIDES][2];
    double footprint_reach; /* largest distance of a footprint vertex from the z axis */
} synth_model;

/* Samples the shape `spacing` apart. Returns 0, or -1 when out of memory (nothing allocated then). */
int synth_model_make(const synth_shape *shape, double spacing, synth_model *m);
/* The model of a mesh (borrowed: it must outlive m): its vertices and normals are the samples. 0, or -1 when out
 * of memory (nothing allocated then). */
int synth_model_of_mesh(const synth_mesh *mesh, synth_model *m);
void synth_model_free(synth_model *m);
/* The kind's name: the catalogue's or the mesh's. */
const char *synth_model_name(const synth_model *m);
/* What the renderer is given of the model posed by pose (object -> camera). */
synth_placed synth_model_placed(const synth_model *m, const double pose[16]);

/* The fixed inputs of a placement: the parameters and the camera. */
typedef struct synth_stage {
    const synth_params *p;
    synth_camera cam;
    double T_cw[16];         /* world (table) frame -> camera frame */
    double placement_radius; /* m, objects' centres are drawn within this distance of the world origin */
} synth_stage;

/* One object's place on the table. */
typedef struct synth_spot {
    uint32_t model;
    double T_wo[16]; /* object frame -> world frame */
    double yaw;      /* turn about the vertical: the footprint's rotation */
    double slack;    /* how far the tilt can push the footprint's edges outward */
} synth_spot;

/* Draws a spot for each of the p->n_objects objects in turn (object i shows model model_of[i]): each stands on
 * the table (lowest sample at z = 0), inside the table edge, its footprint at least a few millimetres from the
 * others', every sample inside the image. Returns 1 when all found one, 0 when one did not (draw again). */
int synth_arrange(const synth_stage *st, const synth_model *models, const uint32_t *model_of, uint64_t *rng,
                  synth_spot *spots);

#endif
