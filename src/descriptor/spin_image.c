/* spin_image.c -- see spin_image.h. The votes come from spin_image_math.h, which the CUDA kernel shares; this file
 * gathers each keypoint's support and sums the votes in double in the support's order, as PCL does. */
#include "descriptor/spin_image.h"
#include "descriptor/keypoint_support.h"

#include <string.h>

#define SPIN_IMAGE_MAX_DIM ((GRIP_SPIN_IMAGE_MAX_WIDTH + 1) * (2 * GRIP_SPIN_IMAGE_MAX_WIDTH + 1))

typedef struct spin_job {
    grip_spin_image_geometry geometry;
    const float *surface, *surface_normals, *keypoint_normals;
    uint32_t min_neighbors, dim;
    float *out;
} spin_job;

static int finite3(const float *v)
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

static void fill_nan(float *row, uint32_t dim)
{
    for (uint32_t j = 0; j < dim; ++j)
        row[j] = NAN;
}

/* Adds every support point's vote to density (and angles, in the angular domain). */
static void accumulate(const spin_job *job, const float origin[3], const float axis[3],
                       const grip_neighbors *support, double *density, double *angles)
{
    static const float no_normal[3] = {0.0f, 0.0f, 0.0f}; /* not read: the geometry uses no normals */
    const int w = job->geometry.width;
    for (size_t j = 0; j < support->count; ++j) {
        const float *q = job->surface + 3 * (size_t)support->idx[j];
        const float *qn = job->surface_normals ? job->surface_normals + 4 * (size_t)support->idx[j] : no_normal;
        grip_spin_image_vote v;
        if (!grip_spin_image_vote_of(&job->geometry, origin, axis, q[0], q[1], q[2], qn[0], qn[1], qn[2], &v))
            continue;
        for (int c = 0; c < 4; ++c) {
            uint32_t bin = grip_spin_image_bin(&v, c, w);
            density[bin] += v.weight[c];
            if (job->geometry.angular)
                angles[bin] += v.weight[c] * v.angle;
        }
    }
}

static void spin_image_one(size_t i, const float p[3], grip_neighbors *support, void *user)
{
    const spin_job *job = user;
    const float *axis = job->keypoint_normals + 4 * i;
    float *row = job->out + (size_t)job->dim * i;
    if (!finite3(p) || !finite3(axis) || support->count < job->min_neighbors) {
        fill_nan(row, job->dim);
        return;
    }
    double density[SPIN_IMAGE_MAX_DIM], angles[SPIN_IMAGE_MAX_DIM];
    memset(density, 0, job->dim * sizeof density[0]);
    memset(angles, 0, job->dim * sizeof angles[0]);
    accumulate(job, p, axis, support, density, angles);
    double total = 0.0;
    for (uint32_t j = 0; j < job->dim; ++j)
        total += density[j];
    for (uint32_t j = 0; j < job->dim; ++j)
        row[j] = grip_spin_image_finish(&job->geometry, density[j], angles[j], total, (uint32_t)support->count);
}

grip_status grip_spin_image_params_check(grip_ctx *ctx, const char *what, const grip_spin_image_params *p)
{
    if (!p)
        return grip_fail(ctx, GRIP_EINVAL, "%s: parameters must not be NULL", what);
    if (!(p->radius > 0.0f) || !isfinite(p->radius))
        return grip_fail(ctx, GRIP_EINVAL, "%s: radius must be finite and > 0 (got %g)", what, (double)p->radius);
    if (p->width < 1 || p->width > GRIP_SPIN_IMAGE_MAX_WIDTH)
        return grip_fail(ctx, GRIP_EINVAL, "%s: width must be in [1, %d] (got %u)", what,
                         GRIP_SPIN_IMAGE_MAX_WIDTH, p->width);
    if (!(p->support_angle_cos >= 0.0f && p->support_angle_cos <= 1.0f))
        return grip_fail(ctx, GRIP_EINVAL, "%s: support_angle_cos must be in [0, 1] (got %g)", what,
                         (double)p->support_angle_cos);
    return GRIP_OK;
}

grip_status grip_spin_image_describe(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals,
                                     size_t n, const grip_kdtree3d *tree, const float *keypoint_xyz,
                                     const float *keypoint_normals, size_t k, const grip_spin_image_params *p,
                                     float *out)
{
    grip_status st = grip_spin_image_params_check(ctx, "spin_image", p);
    if (st != GRIP_OK)
        return st;
    grip_spin_image_geometry g = grip_spin_image_geometry_make(p->radius, (int)p->width, p->support_angle_cos,
                                                               p->radial != 0, p->angular != 0);
    if (!surface_xyz || !tree || !keypoint_xyz || !keypoint_normals || !out)
        return grip_fail(ctx, GRIP_EINVAL,
                         "spin_image: surface, tree, keypoints, keypoint normals and output must not be NULL");
    if (!surface_normals && grip_spin_image_uses_normals(&g))
        return grip_fail(ctx, GRIP_EINVAL,
                         "spin_image: surface normals are needed for the support angle and the angular domain");
    if (grip_kdtree3d_size(tree) > n)
        return grip_fail(ctx, GRIP_EINVAL, "spin_image: the tree holds %zu points but the surface has only %zu",
                         grip_kdtree3d_size(tree), n);
    spin_job job = {g, surface_xyz, surface_normals, keypoint_normals, p->min_neighbors,
                    grip_spin_image_dim(p->width), out};
    return grip_keypoint_support_for_each(ctx, "spin_image", tree, keypoint_xyz, k, p->radius, 0, spin_image_one,
                                       &job);
}
