/* verify_common.c -- the argument checks every verify stage makes (verify_common.h). */
#include "stages/verify_common.h"
#include "core/array.h"

#include <math.h>
#include <stdio.h>

const grip_hypothesis *grip_verify_hypothesis_at(const grip_hypotheses *h, uint32_t i)
{
    return (const grip_hypothesis *)((const char *)h->items + (size_t)i * h->item_size);
}

static grip_status check_hypotheses(grip_ctx *ctx, const grip_hypotheses *h, uint32_t n_models)
{
    grip_status s = grip_struct_check(ctx, h, sizeof *h, "verify: hypotheses", "grip_hypotheses");
    if (s || h->count == 0)
        return s;
    if (!h->items)
        return grip_fail(ctx, GRIP_EINVAL, "verify: hypotheses: %u hypotheses but items is NULL", h->count);
    if (h->item_size < sizeof(grip_hypothesis))
        return grip_fail(ctx, GRIP_EINVAL,
                         "verify: hypotheses: item_size %u is below the %zu bytes of a grip_hypothesis", h->item_size,
                         sizeof(grip_hypothesis));
    for (uint32_t i = 0; i < h->count && !s; i++) {
        const grip_hypothesis *hy = grip_verify_hypothesis_at(h, i);
        if (hy->struct_size < sizeof *hy)
            s = grip_fail(ctx, GRIP_EINVAL,
                          "verify: hypotheses.items[%u].struct_size %u is below the %zu bytes of a "
                          "grip_hypothesis",
                          i, hy->struct_size, sizeof *hy);
        else if (hy->model_id >= n_models)
            s = grip_fail(ctx, GRIP_EINVAL,
                          "verify: hypotheses.items[%u] names model %u, but %u model views were given", i, hy->model_id,
                          n_models);
        for (int k = 0; k < 16 && !s; k++)
            if (!isfinite(hy->pose[k]))
                s = grip_fail(ctx, GRIP_EINVAL, "verify: hypotheses.items[%u].pose is not finite", i);
    }
    return s;
}

static grip_status check_view(grip_ctx *ctx, const grip_view *view, const char *what)
{
    grip_status s = grip_struct_check(ctx, view, sizeof *view, what, "grip_view");
    if (!s && !view->cloud)
        s = grip_fail(ctx, GRIP_EINVAL, "%s.cloud is NULL", what);
    return s;
}

grip_status grip_verify_check_inputs(grip_ctx *ctx, const grip_view *models, uint32_t n_models, const grip_view *scene,
                                     const grip_hypotheses *h)
{
    grip_status s = check_hypotheses(ctx, h, n_models);
    if (!s)
        s = check_view(ctx, scene, "verify: scene");
    if (s)
        return s;
    if (n_models && !models)
        return grip_fail(ctx, GRIP_EINVAL, "verify: %u model views, but models is NULL", n_models);
    for (uint32_t m = 0; m < n_models && !s; m++) {
        char what[64];
        snprintf(what, sizeof what, "verify: models[%u]", m);
        s = check_view(ctx, &models[m], what);
    }
    return s;
}
