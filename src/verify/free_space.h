/* free_space.h -- free-space consistency of a pose hypothesis in an organized (range-camera) scene.
 *
 * A camera that sees a surface at depth z along a ray has seen empty space in front of it. A model placed by a
 * hypothesis whose points float in that empty space (the scene shows a farther surface where the model should
 * be) contradicts the observation: such points are free-space violations. Points the scene shows a nearer
 * surface in front of are occluded and say nothing. This catches hypotheses that ICP slides along a wall or a
 * table: part of the model fits, the rest hangs in front of the surface.
 *
 * The camera is recovered from the organized cloud itself: a pinhole with u = fx x/z + cx, v = fy y/z + cy fitted
 * by least squares over the finite points (column u, row v). */
#ifndef GRIP_VERIFY_FREE_SPACE_H
#define GRIP_VERIFY_FREE_SPACE_H

#include "core/ctx.h"

#include <stddef.h>
#include <stdint.h>

typedef struct grip_pinhole {
    double fx, fy, cx, cy;
    double rms_residual_px; /* of the fit, in pixels */
    int valid;              /* 1 when the cloud is organized and projects like a pinhole (residual < 0.5 px) */
} grip_pinhole;

/* Fits the camera of an organized cloud (width x height points, row-major, NaN where nothing was seen), on up to
 * `threads` threads: the sums, and those of the residual over every 4th pixel of every 4th row, run over
 * GRIP_PINHOLE_BLOCKS fixed blocks of rows, added in block order, so the fit has the same bits whatever the thread
 * count (both verify backends call it on the same scene). */
#define GRIP_PINHOLE_BLOCKS 64
void grip_pinhole_estimate(const float *xyz, uint32_t width, uint32_t height, int threads, grip_pinhole *out);

/* Counts, over the model points moved by pose (row-major 4x4), those the camera should see at their place and
 * does (`seen`: the scene surface lies within tolerance of the point), and those in free space (`violations`:
 * every finite scene point of the 3x3 pixel neighbourhood lies more than tolerance behind the point). Points
 * outside the image, on pixels with no data, or occluded are not counted. */
void grip_free_space_count(const grip_pinhole *cam, const float *scene_xyz, uint32_t width, uint32_t height,
                           const float *model_xyz, size_t n_model, const double pose[16], double tolerance,
                           size_t *seen, size_t *violations);

/* One pose of a model for grip_free_space_violations: the model's points (n_model x 3) and the pose (row-major 4x4),
 * both borrowed. */
typedef struct grip_free_space_job {
    const float *model_xyz;
    size_t n_model;
    const double *pose;
} grip_free_space_job;

/* For n poses at once, the fraction of each model the camera should see in place but sees through: violations /
 * (seen + violations) of grip_free_space_count, 0 when it counts neither, NaN when the camera is not valid (an
 * unorganized scene). Runs on the context's threads, each pose's points in chunks of GRIP_FREE_SPACE_CHUNK, so that
 * a few poses of large models fill the threads as many poses do; the counts are integer sums, the same for any
 * thread count. violation: n (the caller's). GRIP_ENOMEM, with nothing written. */
#define GRIP_FREE_SPACE_CHUNK 4096
grip_status grip_free_space_violations(grip_ctx *ctx, const grip_pinhole *cam, const float *scene_xyz, uint32_t width,
                                       uint32_t height, const grip_free_space_job *jobs, size_t n, double tolerance,
                                       float *violation);

#endif
