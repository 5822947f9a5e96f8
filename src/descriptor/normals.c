/* normals.c -- PCA normals, reproducing PCL 1.13's NormalEstimation step by step (see normals.h). */
#include "descriptor/normals.h"

#include <math.h>
#include <stdlib.h>

#include "math/sym3_eigen.h"

/* What every worker thread reads. */
typedef struct normals_job {
    const float *xyz;
    const grip_kdtree3d *tree;
    uint32_t k;
    float radius;
    float viewpoint[3];
    float *out;
} normals_job;

/* One thread's neighbour buffers: kNN writes into idx/sqdist (k entries), radius search into nb. */
typedef struct normals_scratch {
    uint32_t *idx;
    float *sqdist;
    grip_neighbors nb;
} normals_scratch;

static void set_nan_row(float row[4])
{
    row[0] = row[1] = row[2] = row[3] = NAN;
}

/* The covariance of the neighbourhood, in float, as pcl::computeMeanAndCovarianceMatrix computes it: the
 * coordinates shifted by the first neighbour (for accuracy), the nine sums accumulated in neighbour order,
 * divided by the count, then E[xy] - E[x]E[y]. */
static void covariance_as_pcl(const float *xyz, const uint32_t *nbr, size_t m, float cov[9])
{
    const float *k0 = xyz + (size_t)nbr[0] * 3;
    float accu[9] = {0};
    for (size_t j = 0; j < m; ++j) {
        const float *p = xyz + (size_t)nbr[j] * 3;
        float x = p[0] - k0[0], y = p[1] - k0[1], z = p[2] - k0[2];
        accu[0] += x * x;
        accu[1] += x * y;
        accu[2] += x * z;
        accu[3] += y * y;
        accu[4] += y * z;
        accu[5] += z * z;
        accu[6] += x;
        accu[7] += y;
        accu[8] += z;
    }
    float count = (float)m;
    for (int a = 0; a < 9; ++a)
        accu[a] /= count;
    cov[0] = accu[0] - accu[6] * accu[6];
    cov[1] = accu[1] - accu[6] * accu[7];
    cov[2] = accu[2] - accu[6] * accu[8];
    cov[4] = accu[3] - accu[7] * accu[7];
    cov[5] = accu[4] - accu[7] * accu[8];
    cov[8] = accu[5] - accu[8] * accu[8];
    cov[3] = cov[1];
    cov[6] = cov[2];
    cov[7] = cov[5];
}

/* pcl::solvePlaneParameters: the normal is the eigenvector of the smallest eigenvalue l0 from PCL's own float
 * solver, the curvature |l0 / trace| with the trace summed in float (0 when the trace is 0). */
static void plane_from_covariance(const float cov[9], float row[4])
{
    float l0 = grip_sym3_smallest_pcl(cov, row);
    float trace = cov[0] + cov[4] + cov[8];
    row[3] = trace != 0.0f ? fabsf(l0 / trace) : 0.0f;
}

/* pcl::flipNormalTowardsViewpoint, in float and in PCL's order of operations. */
static void flip_toward_viewpoint(const float p[3], const float vp[3], float row[4])
{
    float vx = vp[0] - p[0], vy = vp[1] - p[1], vz = vp[2] - p[2];
    float cos_theta = vx * row[0] + vy * row[1] + vz * row[2];
    if (cos_theta < 0.0f) {
        row[0] = -row[0];
        row[1] = -row[1];
        row[2] = -row[2];
    }
}

/* The neighbours of point i, nearest first (so the first is the point itself or a duplicate of it): in kNN mode
 * in PCL's own order, ties included. Returns their count, or (size_t)-1 when the radius buffer could not
 * grow. */
static size_t find_neighbors(const normals_job *job, size_t i, normals_scratch *s, const uint32_t **nbr)
{
    const float *p = job->xyz + i * 3;
    if (job->k > 0) {
        *nbr = s->idx;
        return grip_kdtree3d_knn_pcl(job->tree, p, job->k, s->idx, s->sqdist);
    }
    if (grip_kdtree3d_radius(job->tree, p, job->radius, &s->nb) != GRIP_OK)
        return (size_t)-1;
    *nbr = s->nb.idx; /* read after the search: it may have moved the buffer */
    return s->nb.count;
}

/* Fills row i; returns 0, or -1 on out-of-memory. */
static int normal_of_point(const normals_job *job, size_t i, normals_scratch *s)
{
    const float *p = job->xyz + i * 3;
    float *row = job->out + i * 4;
    if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) {
        set_nan_row(row);
        return 0;
    }
    const uint32_t *nbr = NULL;
    size_t m = find_neighbors(job, i, s, &nbr);
    if (m == (size_t)-1) {
        set_nan_row(row);
        return -1;
    }
    if (m < 3) {
        set_nan_row(row);
        return 0;
    }
    float cov[9];
    covariance_as_pcl(job->xyz, nbr, m, cov);
    plane_from_covariance(cov, row);
    flip_toward_viewpoint(p, job->viewpoint, row);
    return 0;
}

/* Every point, in parallel; each thread has its own neighbour buffers. Returns 0, or -1 on out-of-memory. */
static int normals_run(const normals_job *job, size_t n, int threads)
{
    int failed = 0;
#pragma omp parallel num_threads(threads)
    {
        normals_scratch s = {NULL, NULL, {0}};
        if (job->k > 0) {
            s.idx = malloc(job->k * sizeof *s.idx);
            s.sqdist = malloc(job->k * sizeof *s.sqdist);
            if (!s.idx || !s.sqdist) {
#pragma omp atomic write
                failed = 1;
            }
        }
#pragma omp for schedule(dynamic, 512)
        for (ptrdiff_t i = 0; i < (ptrdiff_t)n; ++i) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (stop)
                continue;
            if (normal_of_point(job, (size_t)i, &s) != 0) {
#pragma omp atomic write
                failed = 1;
            }
        }
        free(s.idx);
        free(s.sqdist);
        grip_neighbors_free(&s.nb);
    }
    return failed ? -1 : 0;
}

grip_status grip_normals_compute(grip_ctx *ctx, const float *xyz, size_t n, const grip_kdtree3d *tree,
                                 uint32_t k, float radius, const float viewpoint[3], float *out)
{
    if ((!xyz || !out) && n > 0)
        return grip_fail(ctx, GRIP_EINVAL, "normals: %s is NULL with %zu points", xyz ? "out" : "xyz", n);
    if (k == 0 && !(radius > 0.0f && isfinite(radius)))
        return grip_fail(ctx, GRIP_EINVAL, "normals: need k > 0 or a finite radius > 0 (k = 0, radius = %g)",
                         (double)radius);
    normals_job job = {xyz, tree, k, radius, {0.0f, 0.0f, 0.0f}, out};
    if (viewpoint)
        for (int a = 0; a < 3; ++a)
            job.viewpoint[a] = viewpoint[a];
    grip_kdtree3d *own = NULL;
    if (!tree) {
        grip_status st = grip_kdtree3d_build(ctx, xyz, n, &own);
        if (st != GRIP_OK)
            return st;
        job.tree = own;
    }
    int rc = normals_run(&job, n, grip_ctx_threads(ctx));
    grip_kdtree3d_free(own);
    if (rc != 0)
        return grip_fail(ctx, GRIP_ENOMEM, "normals: out of memory for the neighbour lists (k = %u, radius = %g)",
                         k, (double)radius);
    return GRIP_OK;
}

void grip_normals_centroid(const float *xyz, size_t n, float out[3])
{
    double sum[3] = {0.0, 0.0, 0.0};
    size_t finite = 0;
    for (size_t i = 0; i < n; ++i) {
        const float *p = xyz + i * 3;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
            continue;
        for (int a = 0; a < 3; ++a)
            sum[a] += p[a];
        ++finite;
    }
    for (int a = 0; a < 3; ++a)
        out[a] = finite ? (float)(sum[a] / (double)finite) : 0.0f;
}

void grip_normals_turn_around(float *normals, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        for (int a = 0; a < 3; ++a)
            normals[i * 4 + a] = -normals[i * 4 + a];
}
