/* icp_scene.h -- synthetic data for the ICP tests and benchmarks: a wavy terrain patch (a height field with a few
 * incommensurate waves, so that it pins all six degrees of freedom) sampled at random points with its exact
 * normals, poses, and random perturbations of a pose. Deterministic for a given seed (a 64-bit state, SplitMix). */
#ifndef GRIP_TESTS_ICP_SCENE_H
#define GRIP_TESTS_ICP_SCENE_H

#include <stddef.h>
#include <stdint.h>

typedef struct grip_icp_cloud {
    float *xyz;     /* n x 3 */
    float *normals; /* n x 3, unit, +z side (toward a viewpoint above the patch) */
    size_t n;
} grip_icp_cloud;

/* n points drawn uniformly over the square [-extent, extent]^2 of the terrain of scale `scale` (waves of a few
 * `scale` long, heights ~ 0.1 scale), each moved along its normal by Gaussian noise of deviation sigma. Returns 0
 * when memory is short. The caller frees with grip_icp_cloud_free. */
int grip_icp_terrain(uint64_t *seed, size_t n, double scale, double extent, double sigma, grip_icp_cloud *out);
void grip_icp_cloud_free(grip_icp_cloud *c);

/* Moves every point and normal of c by T (row-major 4x4). */
void grip_icp_cloud_transform(grip_icp_cloud *c, const double T[16]);

/* T = rotation by `degrees` about a random axis through `center`, then a translation of `metres` in a random
 * direction, composed before `pose` (out = D pose). */
void grip_icp_perturb(uint64_t *seed, const double pose[16], const double center[3], double degrees, double metres,
                      double out[16]);

/* The angle (degrees) of a's rotation relative to b's, and the distance between their translations. */
double grip_icp_rotation_error_deg(const double a[16], const double b[16]);
double grip_icp_translation_error(const double a[16], const double b[16]);

/* A uniform double in [0, 1). */
double grip_icp_uniform(uint64_t *seed);

#endif
