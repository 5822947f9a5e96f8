/* support_plane.h -- the surface the objects of a tabletop scene stand on, and how deep a pose sinks a model into it.
 *
 * In a scene of objects on a table, a flat face of a model fits the table itself: a bracket lying upside down, its
 * plate flush with the table top and the rest of it under the table, explains table points, and the free-space
 * check cannot object (what is under the table is hidden, not seen through). What rules such a pose out is that the
 * table is solid: no object reaches below the surface it stands on. The support is the scene's dominant plane,
 * found by RANSAC; a pose that puts more than a small part of the model farther than a margin beneath it (on the
 * side away from the camera) is sunk into the table.
 *
 * The fit is deterministic: 3-point planes drawn by a Mersenne Twister from a fixed seed over a fixed stride of the
 * finite points, the plane with most inliers kept (the first on ties), then refined by least squares over its
 * inliers among all the points. It runs on the host for both verify backends (it reads the scene once). */
#ifndef GRIP_VERIFY_SUPPORT_PLANE_H
#define GRIP_VERIFY_SUPPORT_PLANE_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

/* RANSAC's draws and the most finite points it scores each plane on (a fixed stride of them). */
#define GRIP_SUPPORT_ITERATIONS 200
#define GRIP_SUPPORT_SAMPLES 8192

typedef struct grip_support_plane {
    double normal[3]; /* unit, toward the viewpoint's side */
    double offset;    /* height of a point p above the plane: normal . p + offset */
    size_t inliers;   /* points within the tolerance of the refined plane */
    int valid;        /* 0: fewer than 3 finite points, or no plane found (then nothing is sunk) */
} grip_support_plane;

/* Fits the dominant plane of the n points xyz (n x 3, NaN rows skipped): inliers lie within `tolerance` of it;
 * the normal is turned toward `viewpoint`. GRIP_EINVAL for a tolerance that is not finite and > 0, GRIP_ENOMEM;
 * *out is then invalid. */
grip_status grip_support_plane_fit(grip_ctx *ctx, const float *xyz, size_t n, double tolerance,
                                   const float viewpoint[3], grip_support_plane *out);

/* The fraction of the finite points of model_xyz (n x 3) that pose (row-major 4x4, model -> scene) puts more than
 * `margin` beneath the plane; 0 for an invalid plane or a model without finite points. */
double grip_support_sunk_fraction(const grip_support_plane *plane, const float *model_xyz, size_t n,
                                  const double pose[16], double margin);

#endif
