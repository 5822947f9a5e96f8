/* neighborhood_cuda_absent.c -- the device surface and neighbourhoods of a CPU-only build (see
 * spatial/neighborhood_cuda.h): every call that would need the GPU fails with GRIP_EUNSUPPORTED; freeing accepts
 * what such a build can hand out (NULL surfaces, zeroed lists). */
#include "spatial/neighborhood_cuda.h"

#include <string.h>

#ifndef GRIP_HAVE_CUDA
static grip_status neighborhood_cuda_unsupported(grip_ctx *ctx, const char *what)
{
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "%s (cuda): asked for from a CPU-only build of grip", what);
}

grip_status grip_surface_cuda_create(grip_ctx *ctx, const float *xyz, size_t n, grip_surface_cuda **out)
{
    (void)xyz; (void)n;
    *out = NULL;
    return neighborhood_cuda_unsupported(ctx, "surface");
}

void grip_surface_cuda_free(grip_surface_cuda *s)
{
    (void)s; /* no surface can exist in this build */
}

grip_surface_cuda_view grip_surface_cuda_get_view(const grip_surface_cuda *s)
{
    (void)s;
    grip_surface_cuda_view v;
    memset(&v, 0, sizeof v);
    v.device = -1;
    return v;
}

grip_status grip_surface_cuda_set_normals(grip_ctx *ctx, grip_surface_cuda *s, const float *normals, size_t stride)
{
    (void)s; (void)normals; (void)stride;
    return neighborhood_cuda_unsupported(ctx, "surface normals");
}

void grip_surface_cuda_mark_normals(grip_surface_cuda *s)
{
    (void)s;
}

grip_status grip_surface_cuda_gather(grip_ctx *ctx, const grip_surface_cuda *s, const uint32_t *idx, size_t count,
                                     float *xyz_out)
{
    (void)s; (void)idx; (void)count; (void)xyz_out;
    return neighborhood_cuda_unsupported(ctx, "surface gather");
}

grip_status grip_neighborhoods_cuda_radius(grip_ctx *ctx, const grip_surface_cuda *s, const float *queries,
                                           uint32_t m, float radius, uint32_t max_neighbors,
                                           grip_neighborhoods_cuda *out)
{
    (void)s; (void)queries; (void)m; (void)radius; (void)max_neighbors;
    if (out)
        memset(out, 0, sizeof *out);
    return neighborhood_cuda_unsupported(ctx, "neighborhoods radius");
}

grip_status grip_neighborhoods_cuda_knn(grip_ctx *ctx, const grip_surface_cuda *s, const float *queries, uint32_t m,
                                        uint32_t k, grip_neighborhoods_cuda *out)
{
    (void)s; (void)queries; (void)m; (void)k;
    if (out)
        memset(out, 0, sizeof *out);
    return neighborhood_cuda_unsupported(ctx, "neighborhoods knn");
}

void grip_neighborhoods_cuda_free(grip_neighborhoods_cuda *nb)
{
    if (nb)
        memset(nb, 0, sizeof *nb); /* nothing of it can be allocated in this build */
}
#else
/* the CUDA build gets these from cuda/surface.cu and cuda/neighborhood.cu; keep this translation unit non-empty */
typedef int grip_neighborhood_cuda_absent_unused;
#endif
