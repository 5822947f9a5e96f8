/* surf_scene.h -- synthetic organized RGB-D frames for the SURF tests and benchmark: a smooth background with
 * bright and dark Gaussian blobs of several sizes (SURF's blobs, at known places), seen on a slanted plane
 * (finite xyz everywhere unless holes are asked for). Deterministic for a seed. */
#ifndef GRIP_TEST_SURF_SCENE_H
#define GRIP_TEST_SURF_SCENE_H

#include <stddef.h>
#include <stdint.h>

#define GRIP_SURF_SCENE_MAX_BLOBS 64

typedef struct grip_surf_scene {
    uint32_t width, height;
    uint8_t *rgb; /* width height x 3 */
    float *xyz;   /* width height x 3 */
    uint32_t n_blobs;
    float blob_x[GRIP_SURF_SCENE_MAX_BLOBS], blob_y[GRIP_SURF_SCENE_MAX_BLOBS];
    float blob_sigma[GRIP_SURF_SCENE_MAX_BLOBS];
    int blob_dark[GRIP_SURF_SCENE_MAX_BLOBS]; /* 1: darker than the background */
} grip_surf_scene;

/* n_blobs (<= GRIP_SURF_SCENE_MAX_BLOBS) blobs of sigma 2 .. 10 px, placed 3 sigma + 16 px from the border and
 * from each other where the image has room. Arrays malloc'd (NULL after an allocation failure); free with
 * grip_surf_scene_free. */
grip_surf_scene grip_surf_scene_make(uint32_t width, uint32_t height, uint32_t n_blobs, uint64_t seed);
void grip_surf_scene_free(grip_surf_scene *s);

/* A seeded stream of doubles for the SURF benchmarks' random transforms: the state starts as splitmix64 of the seed
 * (consecutive seeds give unrelated streams), then steps as a 64-bit LCG. */
typedef struct grip_surf_rng {
    uint64_t state;
} grip_surf_rng;
grip_surf_rng grip_surf_rng_seed(uint64_t seed);
/* Uniform in [lo, hi), 53 bits. */
double grip_surf_rng_uniform(grip_surf_rng *r, double lo, double hi);

#endif
