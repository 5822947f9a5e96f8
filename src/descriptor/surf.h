/* surf.h -- SURF interest points and descriptors on the grey image of an organized RGB-D cloud, lifted to 3D
 * through the cloud: the CPU twin (surf.c) of cuda/descriptor/surf.cu. Semantics and rounding: surf_math.h.
 *
 * Pipeline: grey (BT.601, 8 bits) -> integral image (uint32, exact) -> box-Hessian layers over octaves x
 * intervals -> strict 3 x 3 x 3 maxima at or above the threshold, fitted to sub-pixel and sub-scale (offsets
 * >= 0.5 rejected) -> keypoints in (slot, row, column) order -> those whose rounded pixel has no finite xyz are
 * dropped and counted -> orientation (unless upright) -> 64 or 128 values per keypoint. */
#ifndef GRIP_DESCRIPTOR_SURF_H
#define GRIP_DESCRIPTOR_SURF_H

#include "core/ctx.h"
#include "descriptor/surf_math.h"

#include <stddef.h>
#include <stdint.h>

typedef struct grip_surf_params {
    uint32_t octaves;   /* 1 .. GRIP_SURF_MAX_OCTAVES */
    uint32_t intervals; /* 3 .. GRIP_SURF_MAX_INTERVALS: the outer two of an octave only bound the middle ones */
    uint32_t init_step; /* sampling step of the first octave, 1 .. 8; doubles per octave */
    float threshold;    /* least det of the Hessian (grey in [0, 1]; OpenSURF's 0.0004) */
    int upright;        /* 1: no orientation (U-SURF) */
    int extended;       /* 1: 128 values, else 64 */
    uint32_t capacity;  /* most keypoints found (before the depth check); more is an error, never a silent cut */
    int sign_column;    /* 1: one more value per row, +1 where the Laplacian's sign is 1, -1 where it is 0: any
                           nearest-neighbour search then prefers the keypoint's own sign (the squared distance
                           between unit descriptors is below 4, which the column adds across signs), which is
                           the sign-of-Laplacian filter of SURF matching done by an ordinary match stage */
} grip_surf_params;

/* What a run found and kept. */
typedef struct grip_surf_result {
    size_t n_found;    /* maxima that passed the fit, before the depth check (may exceed capacity: then an error) */
    size_t n_no_depth; /* of these, dropped for a non-finite xyz at their pixel (0 when no cloud was given) */
    size_t count;      /* kept: n_found - n_no_depth */
    grip_surf_keypoint *keypoints; /* count, in (slot, row, column) order of detection; malloc'd */
    float *descriptors;            /* count x grip_surf_dim(p); malloc'd */
} grip_surf_result;

/* Values per descriptor row: 64 or 128, plus the sign column when asked for. */
static inline uint32_t grip_surf_dim(const grip_surf_params *p)
{
    return (p->extended ? 128u : 64u) + (p->sign_column ? 1u : 0u);
}

/* The largest filter of the parameters' scale space, in pixels. */
uint32_t grip_surf_largest_filter(const grip_surf_params *p);

/* Checks the parameters (GRIP_EINVAL naming the field) and the image: width and height at least the largest
 * filter, and 255 width height below 2^32 (the integral image is uint32). `what` prefixes the error text. */
grip_status grip_surf_check(grip_ctx *ctx, const grip_surf_params *p, uint32_t width, uint32_t height,
                            const char *what);

/* grey[i] = BT.601 luma of rgb[3 i .. 3 i + 2], n pixels. */
void grip_surf_grey_image(const uint8_t *rgb, size_t n, uint8_t *grey);

/* The (height + 1) x (width + 1) integral image of grey (width x height), allocated by the caller. */
void grip_surf_integral(const uint8_t *grey, uint32_t width, uint32_t height, uint32_t *ii);

/* The whole CPU twin on a width x height grey image. xyz: the organized cloud (width height x 3, host) through
 * which keypoints are lifted, or NULL to keep every keypoint (a plain image). On success *out holds the kept
 * keypoints and descriptors (free with grip_surf_result_free). Errors: GRIP_EINVAL (grip_surf_check), GRIP_ECONFIG
 * when more than capacity keypoints are found (the text gives the number; out->n_found is set, nothing else),
 * GRIP_ENOMEM. *out is zeroed first, and after a failure holds no memory. */
grip_status grip_surf_run(grip_ctx *ctx, const uint8_t *grey, const float *xyz, uint32_t width, uint32_t height,
                          const grip_surf_params *p, grip_surf_result *out);

void grip_surf_result_free(grip_surf_result *r);

#endif
