/* ghv_cases.h -- small hand-made inputs of global hypotheses verification, for test_ghv.c and test_ghv_cuda.c: a
 * wavy surface patch (the object, also the model) before a background plane, unorganized or organized as a pinhole
 * camera at the origin sees it, and hypotheses placing the model. */
#ifndef GRIP_TEST_GHV_CASES_H
#define GRIP_TEST_GHV_CASES_H

#include "test_support.h"
#include "verify/ghv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GHV_SPACING 0.004f   /* grid step of every part of the scene */
#define GHV_HALF 0.1f        /* the background plane spans [-GHV_HALF, GHV_HALF]^2 in x and y ... */
#define GHV_BACK 0.8f        /* ... at z = GHV_BACK */
#define GHV_DEPTH 0.6f       /* the object: a wavy patch around z = GHV_DEPTH ... */
#define GHV_MODEL_HALF 0.06f /* ... over |x|, |y| < GHV_MODEL_HALF */

static inline float ghv_surface_z(float x, float y)
{
    return GHV_DEPTH + 0.015f * sinf(60.0f * x) * cosf(40.0f * y);
}

static inline int ghv_on_object(float x, float y)
{
    return fabsf(x) < GHV_MODEL_HALF && fabsf(y) < GHV_MODEL_HALF;
}

static inline size_t ghv_grid_side(float half)
{
    return (size_t)lroundf(2 * half / GHV_SPACING) + 1;
}

/* The unorganized scene: the object, a background plane 20 cm behind it, and a short strip 1 cm in front of the
 * object's level and 2 cm beside it (clutter next to the object). malloc'd, *n x 3. */
static inline float *ghv_scene(size_t *n)
{
    size_t back = ghv_grid_side(GHV_HALF);
    float *xyz = malloc((back * back * 2 + 64) * 3 * sizeof *xyz);
    ck_assert_ptr_nonnull(xyz);
    *n = 0;
    for (size_t r = 0; r < back; r++)
        for (size_t c = 0; c < back; c++) {
            float x = -GHV_HALF + GHV_SPACING * (float)c, y = -GHV_HALF + GHV_SPACING * (float)r;
            float *p = xyz + 3 * (*n)++;
            p[0] = x, p[1] = y, p[2] = GHV_BACK;
            if (ghv_on_object(x, y)) {
                p = xyz + 3 * (*n)++;
                p[0] = x, p[1] = y, p[2] = ghv_surface_z(x, y);
            }
        }
    for (int c = 0; c < 2; c++)
        for (int r = 0; r < 11; r++) {
            float *p = xyz + 3 * (*n)++;
            p[0] = GHV_MODEL_HALF + 0.02f + GHV_SPACING * (float)c;
            p[1] = -0.02f + GHV_SPACING * (float)r;
            p[2] = GHV_DEPTH - 0.01f;
        }
    return xyz;
}

/* The object and the background as a pinhole camera at the origin looking along +z sees them: side x side pixels,
 * focal `f` pixels, each pixel's ray intersected with the object (fixed-point iteration on z) or else the plane.
 * malloc'd, side^2 x 3. */
static inline float *ghv_scene_organized(uint32_t side, float f)
{
    float *xyz = malloc((size_t)side * side * 3 * sizeof *xyz);
    ck_assert_ptr_nonnull(xyz);
    float c = 0.5f * (float)(side - 1);
    for (uint32_t v = 0; v < side; v++)
        for (uint32_t u = 0; u < side; u++) {
            float a = ((float)u - c) / f, b = ((float)v - c) / f, z = GHV_DEPTH;
            for (int it = 0; it < 50; it++)
                z = ghv_surface_z(a * z, b * z);
            if (!ghv_on_object(a * z, b * z))
                z = GHV_BACK;
            float *p = xyz + 3 * ((size_t)v * side + u);
            p[0] = a * z;
            p[1] = b * z;
            p[2] = z;
        }
    return xyz;
}

/* The model: the scene's object points (in scene coordinates: the identity places it). malloc'd, *count x 3. */
static inline float *ghv_model(const float *scene, size_t n, size_t *count)
{
    float *m = malloc(n * 3 * sizeof *m);
    ck_assert_ptr_nonnull(m);
    *count = 0;
    for (size_t i = 0; i < n; i++)
        if (ghv_on_object(scene[3 * i], scene[3 * i + 1]) && scene[3 * i + 2] < GHV_BACK - 0.1f)
            memcpy(m + 3 * (*count)++, scene + 3 * i, 3 * sizeof *m);
    return m;
}

/* A hypothesis of model `model`: rotation by `angle` about z (radians) through the model's centre (0, 0,
 * GHV_DEPTH), then the translation t. */
static inline grip_ghv_hypothesis ghv_hypothesis(uint32_t model, float angle, float tx, float ty, float tz)
{
    grip_ghv_hypothesis h;
    memset(&h, 0, sizeof h);
    h.model = model;
    float c = cosf(angle), s = sinf(angle);
    float r[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
    float centre[3] = {0, 0, GHV_DEPTH}, t[3] = {tx, ty, tz};
    for (int i = 0; i < 3; i++) {
        float rc = 0;
        for (int j = 0; j < 3; j++) {
            h.pose[4 * i + j] = r[3 * i + j];
            rc += r[3 * i + j] * centre[j];
        }
        h.pose[4 * i + 3] = centre[i] - rc + t[i];
    }
    return h;
}

/* Defaults: every length derived from the scene, PCL's tutorial regularizers, local search. */
static inline grip_ghv_params ghv_default_params(void)
{
    grip_ghv_params p;
    memset(&p, 0, sizeof p);
    p.regularizer = 3;
    p.clutter_regularizer = 5;
    p.annealing_iterations = 2000;
    p.initial_temperature = 1000;
    p.seed = 1;
    return p;
}

#endif
