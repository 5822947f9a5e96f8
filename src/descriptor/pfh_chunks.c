/* pfh_chunks.c -- see pfh_chunks.h. */
#include "descriptor/pfh_chunks.h"

grip_status grip_pfh_for_each_chunk(grip_ctx *ctx, const grip_surface_cuda *s, const float *queries, uint32_t m,
                                    float radius, grip_pfh_chunk_fn fn, void *user)
{
    uint32_t chunk = m;
    for (uint32_t first = 0; first < m;) {
        uint32_t count = m - first < chunk ? m - first : chunk;
        const float *part = queries + 3 * (size_t)first;
        grip_neighborhoods_cuda nb = {0};
        grip_status st = grip_neighborhoods_cuda_radius(ctx, s, part, count, radius, 0, &nb);
        if (st == GRIP_OK)
            st = fn(ctx, &nb, part, first, count, user);
        grip_neighborhoods_cuda_free(&nb);
        if (st == GRIP_ENOMEM && count > 1) {
            grip_ctx_clear_error(ctx); /* handled: a call that succeeds in smaller chunks leaves no error text */
            chunk = count / 2; /* the device is short: the same queries again, fewer at a time */
            continue;
        }
        if (st != GRIP_OK)
            return st;
        first += count;
    }
    return GRIP_OK;
}
