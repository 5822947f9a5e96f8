/* normals_orientation.c -- see normals_orientation.h. */
#include "stages/normals_orientation.h"
#include "core/cuda_bridge.h"
#include "descriptor/normals.h"
#include "descriptor/normals_cuda.h"
#include "descriptor/normals_propagate.h"
#include "descriptor/normals_propagate_cuda.h"

#include <string.h>

void grip_normals_plan_init(grip_normals_plan *p, const grip_cloud_input *in, uint32_t k, float radius,
                            uint32_t orientation, uint32_t propagate_k)
{
    p->k = k;
    p->radius = k ? 0.0f : radius;
    p->orientation = orientation;
    p->propagate_k = propagate_k;
    if (orientation == GRIP_MODEL_NORMALS_VIEWPOINT)
        memcpy(p->viewpoint, in->viewpoint, sizeof p->viewpoint);
    else
        grip_normals_centroid(in->xyz, in->n, p->viewpoint);
}

grip_status grip_normals_plan_host(grip_ctx *ctx, const grip_normals_plan *p, const grip_cloud_input *in,
                                   const grip_kdtree3d *tree, float *out)
{
    grip_status s = grip_normals_compute(ctx, in->xyz, in->n, tree, p->k, p->radius, p->viewpoint, out);
    if (s || p->orientation == GRIP_MODEL_NORMALS_VIEWPOINT)
        return s;
    grip_normals_turn_around(out, in->n);
    if (p->orientation == GRIP_MODEL_NORMALS_PROPAGATE)
        s = grip_normals_propagate(ctx, in->xyz, in->n, tree, p->propagate_k, p->viewpoint, out);
    return s;
}

grip_status grip_normals_plan_surface(grip_ctx *ctx, const grip_normals_plan *p, const grip_cloud_input *in,
                                      grip_surface_cuda *s, float *scratch)
{
    grip_status st;
    if (p->k <= GRIP_NORMALS_CUDA_MAX_K) {
        st = grip_normals_cuda_surface(ctx, s, p->k, p->radius, p->viewpoint);
    } else {
        st = grip_normals_compute(ctx, in->xyz, in->n, NULL, p->k, p->radius, p->viewpoint, scratch);
        if (!st)
            st = grip_surface_cuda_set_normals(ctx, s, scratch, 4);
    }
    if (st || p->orientation == GRIP_MODEL_NORMALS_VIEWPOINT)
        return st;
    st = grip_normals_cuda_turn_around(ctx, s);
    if (!st && p->orientation == GRIP_MODEL_NORMALS_PROPAGATE)
        st = grip_normals_cuda_propagate(ctx, s, p->propagate_k, p->viewpoint);
    return st;
}

grip_status grip_normals_plan_cuda(grip_ctx *ctx, const grip_normals_plan *p, const grip_cloud_input *in, float *out)
{
    if (in->n == 0)
        return GRIP_OK;
    grip_surface_cuda *s = NULL;
    grip_status st = grip_surface_cuda_create(ctx, in->xyz, in->n, &s);
    if (!st)
        st = grip_normals_plan_surface(ctx, p, in, s, out);
    if (!st)
        st = grip_cuda_copy_to_host(ctx, out, grip_surface_cuda_get_view(s).normals, in->n * 4 * sizeof(float));
    grip_surface_cuda_free(s);
    return st;
}
