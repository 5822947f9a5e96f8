/* shapes.h -- the catalogue of synthetic objects grip-host's scenes are made of, and the exact geometry
 * on them: ray casting, a signed distance field and uniform surface sampling.
 *
 * An object is a small constructive solid: the union of its "added" convex primitives minus the union of its
 * "subtracted" ones (boxes, capped cylinders, capsules, spheres). Convex primitives make ray casting exact (each
 * gives one entry/exit interval along a ray) and give exact distance fields. Objects are described in their own
 * frame: metres, z up, the base resting on z = 0, the origin near the middle of the footprint. */
#ifndef GRIP_HOST_SYNTH_SHAPES_H
#define GRIP_HOST_SYNTH_SHAPES_H

#include <stddef.h>
#include <stdint.h>

typedef enum synth_prim_type { SYNTH_BOX, SYNTH_CYLINDER, SYNTH_CAPSULE, SYNTH_SPHERE } synth_prim_type;

typedef struct synth_prim {
    synth_prim_type type;
    int subtract;      /* 1: carved out of the union of the added primitives */
    double a[3], b[3]; /* box: min and max corners; cylinder, capsule: axis end points; sphere: a = centre */
    double r;          /* radius of cylinders, capsules, spheres */
} synth_prim;

/* Most primitives one shape may have. */
#define SYNTH_MAX_PRIMS 32

typedef struct synth_shape {
    const char *name;
    const char *about; /* one line, for reports */
    uint32_t n_prims;  /* <= SYNTH_MAX_PRIMS */
    const synth_prim *prims;
} synth_shape;

/* The catalogue (static, never freed) holds at most this many kinds. */
#define SYNTH_MAX_KINDS 16
uint32_t synth_shape_count(void);
const synth_shape *synth_shape_get(uint32_t kind);

/* Signed field of the solid at q (object frame): 0 exactly on the surface, negative inside, 1-Lipschitz (it is
 * the exact distance outside unions; min/max combinations of exact distances elsewhere). */
double synth_shape_field(const synth_shape *s, const double q[3]);

/* Radius of a sphere about the object origin that holds the whole solid. */
double synth_shape_bound(const synth_shape *s);

/* First point where the ray o + t d (d need not be unit) enters the solid with t > t_min. Returns 1 and sets *t
 * and the outward unit normal n there, or returns 0. */
int synth_shape_ray(const synth_shape *s, const double o[3], const double d[3], double t_min, double *t,
                    double n[3]);

/* Samples the solid's surface on near-uniform lattices (spacing metres apart) with outward unit normals.
 * Sets *xyz and *normals to malloc'd n x 3 arrays (caller frees) and *n. Returns 0, or -1 when out of memory
 * (nothing allocated then). */
int synth_shape_sample(const synth_shape *s, double spacing, double **xyz, double **normals, size_t *n);

#endif
