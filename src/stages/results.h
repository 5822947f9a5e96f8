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

#endif
