/* closed_shapes.c -- see closed_shapes.h. */
#include "closed_shapes.h"
#include "test_support.h"
#include "descriptor/normals.h"

#include <math.h>
#include <stdlib.h>

static int shape_alloc(size_t n, grip_closed_shape *out)
{
    out->n = n;
    out->xyz = malloc((n ? n : 1) * 3 * sizeof *out->xyz);
    out->truth = malloc((n ? n : 1) * 3 * sizeof *out->truth);
    if (out->xyz && out->truth)
        return 1;
    grip_closed_shape_free(out);
    return 0;
}

int grip_closed_torus(uint64_t *seed, size_t n, const float centre[3], float R, float r, grip_closed_shape *out)
{
    if (!shape_alloc(n, out))
        return 0;
    const float two_pi = 6.28318530718f;
    for (size_t i = 0; i < n;) {
        const float u = grip_test_uniform(seed, 0.0f, two_pi), v = grip_test_uniform(seed, 0.0f, two_pi);
        /* area element (R + r cos v): rejection keeps the density uniform on the surface */
        if (grip_test_uniform(seed, 0.0f, R + r) > R + r * cosf(v))
            continue;
        const float n3[3] = {cosf(v) * cosf(u), cosf(v) * sinf(u), sinf(v)};
        out->xyz[3 * i] = centre[0] + (R + r * cosf(v)) * cosf(u);
        out->xyz[3 * i + 1] = centre[1] + (R + r * cosf(v)) * sinf(u);
        out->xyz[3 * i + 2] = centre[2] + r * sinf(v);
        for (int a = 0; a < 3; ++a)
            out->truth[3 * i + a] = n3[a];
        ++i;
    }
    return 1;
}

int grip_closed_two_spheres(uint64_t *seed, size_t n, float d, float r, grip_closed_shape *out)
{
    if (!shape_alloc(n, out))
        return 0;
    for (size_t i = 0; i < n;) {
        float v[3] = {grip_test_uniform(seed, -1.0f, 1.0f), grip_test_uniform(seed, -1.0f, 1.0f),
                      grip_test_uniform(seed, -1.0f, 1.0f)};
        const float len = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        if (len > 1.0f || len < 0.1f) /* uniform directions: inside the unit ball, away from its centre */
            continue;
        const float cx = i < n / 2 ? -d : d;
        for (int a = 0; a < 3; ++a)
            out->truth[3 * i + a] = v[a] / len;
        out->xyz[3 * i] = cx + r * out->truth[3 * i];
        out->xyz[3 * i + 1] = r * out->truth[3 * i + 1];
        out->xyz[3 * i + 2] = r * out->truth[3 * i + 2];
        ++i;
    }
    return 1;
}

void grip_closed_shape_free(grip_closed_shape *s)
{
    free(s->xyz);
    free(s->truth);
    s->xyz = s->truth = NULL;
    s->n = 0;
}

size_t grip_closed_against(const grip_closed_shape *s, const float *normals, size_t *defined)
{
    size_t against = 0;
    *defined = 0;
    for (size_t i = 0; i < s->n; ++i) {
        const float *nrm = normals + 4 * i, *t = s->truth + 3 * i;
        if (isnan(nrm[0]))
            continue;
        ++*defined;
        against += (double)t[0] * nrm[0] + (double)t[1] * nrm[1] + (double)t[2] * nrm[2] < 0.0;
    }
    return against;
}

float *grip_closed_outward_normals(grip_ctx *ctx, const grip_closed_shape *s, float centroid[3])
{
    float *out = malloc((s->n ? s->n : 1) * 4 * sizeof *out);
    ck_assert_ptr_nonnull(out);
    grip_normals_centroid(s->xyz, s->n, centroid);
    ck_assert_int_eq(grip_normals_compute(ctx, s->xyz, s->n, NULL, 10, 0.0f, centroid, out), GRIP_OK);
    grip_normals_turn_around(out, s->n);
    return out;
}
