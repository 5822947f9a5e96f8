/* closed_shapes.h -- complete closed surfaces for the normal-orientation tests (model_normals = outward |
 * propagate), sampled uniformly by area with their true outward normals, where pointing away from the centroid is
 * wrong on part of the surface: a torus (its inner ring faces the centroid) and two disjoint spheres (their facing
 * halves face it; two components of the neighbour graph). Deterministic for a given seed (grip_test_uniform). */
#ifndef GRIP_TESTS_CLOSED_SHAPES_H
#define GRIP_TESTS_CLOSED_SHAPES_H

#include <stddef.h>
#include <stdint.h>

typedef struct grip_closed_shape {
    float *xyz;   /* n x 3 */
    float *truth; /* n x 3: the outward unit normal */
    size_t n;
} grip_closed_shape;

/* n points of the torus about the z axis through centre, ring radius R, tube radius r (r < R). */
int grip_closed_torus(uint64_t *seed, size_t n, const float centre[3], float R, float r, grip_closed_shape *out);
/* n points, half on the sphere of radius r about (-d, 0, 0), half on the one about (+d, 0, 0) (d > r). */
int grip_closed_two_spheres(uint64_t *seed, size_t n, float d, float r, grip_closed_shape *out);
void grip_closed_shape_free(grip_closed_shape *s);

/* The shape's normals computed from its 10 nearest by the CPU twin and pointed away from its centroid
 * (model_normals = outward), malloc'd n x 4 (the caller frees); the centroid into centroid. Asserts success. */
#include "plugin.h"
float *grip_closed_outward_normals(grip_ctx *ctx, const grip_closed_shape *s, float centroid[3]);

/* Of the rows whose normal (n x 4 rows) is defined: how many point against the truth ((truth . n) < 0); *defined:
 * their count. */
size_t grip_closed_against(const grip_closed_shape *s, const float *normals, size_t *defined);

#endif
