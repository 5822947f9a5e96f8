/* retrieval.h -- what `bench recall` and `eval descriptors` share about the Bologna "Retrieval" kind of data: a
 * scene that is a rigidly posed, noisy copy of its model, scene vertex k being model vertex k. Reading the pose
 * (.xf), drawing a random one, posing points, measuring a cloud's mesh resolution and making a posed noisy copy.
 * Internal to grip-host (bench/ and eval/). */
#ifndef GRIP_HOST_BENCH_RETRIEVAL_H
#define GRIP_HOST_BENCH_RETRIEVAL_H

#include <stddef.h>
#include <stdint.h>

#include "io/cloud_io.h"

/* Reads a 4 x 4 row-major pose (16 numbers, last row 0 0 0 1) from a .xf file. 0, or -1 with the reason in err. */
int retrieval_read_xf(const char *path, double T[16], char *err, size_t errlen);

/* A rotation drawn uniformly (a random unit quaternion) and a translation within 0.1 per axis, from rng. */
void retrieval_random_pose(uint64_t *rng, double T[16]);

/* out = T p (row-major T). */
void retrieval_apply_pose(const double T[16], const float p[3], float out[3]);

/* The mesh resolution as the host measures it: the median distance from a point to its nearest other point.
 * NaN when it cannot be measured (no finite point, or out of memory). */
double retrieval_mesh_resolution(const host_cloud *c);

/* *scene (zeroed first; free with host_cloud_free) = T model + Gaussian noise of sigma per axis (clipped at
 * SYNTH_NOISE_CLIP sigma, drawn from rng), vertex for vertex, unorganized, named `name`. Non-finite model points
 * stay non-finite. 0, or -1 when out of memory (nothing left allocated). */
int retrieval_noisy_copy(const host_cloud *model, const double T[16], double sigma, uint64_t *rng, const char *name,
                         host_cloud *scene);

/* RMS of |scene_k - T model_k| over the vertices finite in both (the clouds must have the same count), in the
 * cloud's units; NaN when none is. How well T fits, and how much noise the scene carries. */
double retrieval_residual(const host_cloud *model, const host_cloud *scene, const double T[16]);

#endif
