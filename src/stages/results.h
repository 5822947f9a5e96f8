/* results.h -- the result objects the stages hand out (grip_features, grip_matches, grip_hypotheses, grip_verdicts):
 * making them, and their release functions.
 *
 * Each object is allocated with a liveness cookie behind its public struct, set when it is made and cleared by its
 * release: a second release is refused while the memory has not been handed out again (best effort: reading freed
 * memory is undefined behaviour, which a sanitizer reports). A stage that reads such an object as its input does
 * not look at the cookie: a host may hand in a copy of the public struct, or a struct of its own. */
#ifndef GRIP_STAGES_RESULTS_H
#define GRIP_STAGES_RESULTS_H

#include "core/array.h"
#include "spatial/neighborhood_cuda.h"

/* A new, empty grip_features (host arrays of 0 rows, keypoints U32, the others F32); its release pointer frees every
 * array it holds, host or device (grip_result_array_free). */
grip_status grip_features_new(grip_ctx *ctx, uint32_t descriptor_dim, grip_features **out);
/* A new grip_matches of count 0 and empty host arrays (query, reference and model_id U32, sqdist F32); its release
 * pointer frees them wherever they live. */
grip_status grip_matches_new(grip_ctx *ctx, grip_matches **out);
/* A new grip_hypotheses of count 0 (items grown by grip_hypotheses_append, stages/group_common.h); its release
 * pointer frees the items and their member lists. */
grip_status grip_hypotheses_new(grip_ctx *ctx, grip_hypotheses **out);
/* A new grip_verdicts of `count` zeroed items. */
grip_status grip_verdicts_new(grip_ctx *ctx, uint32_t count, grip_verdicts **out);

/* The described cloud's device surface (its points, normals and grid), kept with device features so that the group
 * and verify stages of this plugin search the scene without building a grid of their own over it. f (made by
 * grip_features_new, its xyz and normals already the surface's copies on the device) takes ownership of surface: its
 * release frees it. */
void grip_features_keep_surface(grip_features *f, grip_surface_cuda *surface);
/* The surface f keeps, when f is a live features object of this plugin (the very struct it handed out, not a copy)
 * whose xyz and normals are still the arrays it was described with, n rows on ctx's device; NULL otherwise (the
 * caller builds its own). Borrowed: valid while f is. Safe from any thread. */
const grip_surface_cuda *grip_features_kept_surface(const grip_ctx *ctx, const grip_features *f, size_t n);

#endif
