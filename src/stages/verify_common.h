/* verify_common.h -- what the verify stages share: reading the hypotheses given to verify() and checking the
 * arguments of a verify() call. */
#ifndef GRIP_STAGES_VERIFY_COMMON_H
#define GRIP_STAGES_VERIFY_COMMON_H

#include "core/ctx.h"

/* Item i of h (items are h->item_size bytes apart). */
const grip_hypothesis *grip_verify_hypothesis_at(const grip_hypotheses *h, uint32_t i);

/* The arguments of verify() as a verify stage reads them: the whole grip_hypotheses, with items when count > 0, a
 * grip_hypothesis apart at least, each naming one of the n_models model views and with a finite pose; the scene
 * and every model a whole grip_view with a cloud (the clouds are checked in full when opened). GRIP_EINVAL naming
 * the argument ("verify: hypotheses.items[3] ..."). */
grip_status grip_verify_check_inputs(grip_ctx *ctx, const grip_view *models, uint32_t n_models, const grip_view *scene,
                                     const grip_hypotheses *h);

#endif
