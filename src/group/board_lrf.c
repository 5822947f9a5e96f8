/* board_lrf.c -- see board_lrf.h. Follows PCL 1.13's BOARDLocalReferenceFrameEstimation::computePointLRF step
 * by step, in float where PCL computes in float (axes, angles, the gap search), so that the comparisons that
 * pick the x axis decide as PCL's do. The plane normal comes from a double-precision eigen-decomposition of the
 * support's covariance instead of PCL's float SVD of the centred points: the same vector, more accurate. */
#include "group/board_lrf.h"
#include "math/sym3_eigen.h"

#include <float.h>
#include <math.h>

#define BOARD_MIN_SUPPORT 6       /* fewer support points (keypoint included) give a NaN frame */
#define BOARD_SECTORS 24          /* PCL check_margin_array_size_ */
#define BOARD_HOLE_MIN_FRACTION 0.2f /* PCL hole_size_prob_thresh_: a gap must cover more of the circle */
#define BOARD_STEEP_MIN 0.1f      /* PCL steep_thresh_ */
/* PCL's margin: squared distance above margin_thresh^2 * tangent_radius^2, and the tangent radius is unset (0) */
#define BOARD_MARGIN_SQDIST 0.0f

static const float board_two_pi = 2.0f * 3.14159265358979323846f; /* PCL: 2 * static_cast<float>(M_PI) */

typedef struct board_job {
    const float *xyz, *normals; /* surface points n x 3, normals n x 4 */
    int find_holes;
    float *frames;
} board_job;

/* The border of the support seen around z: per sector whether a margin point falls in it, and its points of
 * smallest and largest angle with their normals' cosines to z. */
typedef struct board_sectors {
    unsigned char hit[BOARD_SECTORS];
    float min_angle[BOARD_SECTORS], max_angle[BOARD_SECTORS];
    float min_angle_cos[BOARD_SECTORS], max_angle_cos[BOARD_SECTORS];
} board_sectors;

static float dot3(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross3(const float a[3], const float b[3], float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* Eigen's normalize(): a zero vector stays zero. */
static void normalize3(float v[3])
{
    float n2 = dot3(v, v);
    if (n2 > 0.0f) {
        float n = sqrtf(n2);
        v[0] /= n;
        v[1] /= n;
        v[2] /= n;
    }
}

/* The normal of the least-squares plane through the support (unit, sign arbitrary). */
static void plane_normal(const float *xyz, const grip_neighbors *s, float z[3])
{
    double mean[3] = {0.0, 0.0, 0.0}, cov[9] = {0.0};
    for (size_t i = 0; i < s->count; ++i)
        for (int d = 0; d < 3; ++d)
            mean[d] += xyz[(size_t)s->idx[i] * 3 + d];
    for (int d = 0; d < 3; ++d)
        mean[d] /= (double)s->count;
    for (size_t i = 0; i < s->count; ++i) {
        const float *p = xyz + (size_t)s->idx[i] * 3;
        for (int r = 0; r < 3; ++r)
            for (int c = r; c < 3; ++c)
                cov[r * 3 + c] += (p[r] - mean[r]) * (p[c] - mean[c]);
    }
    cov[3] = cov[1];
    cov[6] = cov[2];
    cov[7] = cov[5];
    double values[3], vecs[9];
    grip_sym3_eigen(cov, values, vecs);
    for (int d = 0; d < 3; ++d)
        z[d] = (float)vecs[d * 3 + 0];
}

/* PCL normalDisambiguation: z turns toward the mean of the support's normals (a NaN normal makes the mean NaN
 * and leaves z as it is, as in PCL). */
static void orient_by_normals(const float *normals, const grip_neighbors *s, float z[3])
{
    float mean[3] = {0.0f, 0.0f, 0.0f};
    for (size_t i = 0; i < s->count; ++i)
        for (int d = 0; d < 3; ++d)
            mean[d] += normals[(size_t)s->idx[i] * 4 + d];
    normalize3(mean);
    if (dot3(z, mean) < 0.0f)
        for (int d = 0; d < 3; ++d)
            z[d] = -z[d];
}

/* PCL directedOrthogonalAxis: the unit direction from origin to p's projection on the plane through origin
 * orthogonal to z. */
static void directed_axis(const float z[3], const float origin[3], const float p[3], float out[3])
{
    float rel[3] = {p[0] - origin[0], p[1] - origin[1], p[2] - origin[2]};
    float t = dot3(z, rel);
    for (int d = 0; d < 3; ++d)
        out[d] = (p[d] - t * z[d]) - origin[d];
    normalize3(out);
}

/* PCL getAngleBetweenUnitVectors: the angle in [0, 2 pi) that turns v1 to v2 about axis. */
static float angle_about(const float v1[3], const float v2[3], const float axis[3])
{
    float c[3];
    cross3(v1, v2, c);
    float angle = acosf(fmaxf(-1.0f, fminf(1.0f, dot3(v1, v2))));
    return dot3(c, axis) < 0.0f ? board_two_pi - angle : angle;
}

/* The sectors' origin. PCL draws it with rand(); any axis orthogonal to z gives the same frame (the gap's
 * edges are actual support points) unless support points lie exactly on a sector boundary. Those are common
 * along the scan lines of range images, which run along the image axes, so the axis here is the projection of a
 * fixed direction unrelated to the coordinate axes (or of a second one when z is nearly parallel to it). */
static void reference_axis(const float z[3], float x[3])
{
    static const float generic[2][3] = {{0.4926f, 0.7286f, 0.4759f}, {-0.6123f, 0.2197f, 0.7595f}};
    const float *g = fabsf(dot3(z, generic[0])) < 0.9f ? generic[0] : generic[1];
    float t = dot3(z, g);
    for (int d = 0; d < 3; ++d)
        x[d] = g[d] - t * z[d];
    normalize3(x);
}

static void sectors_reset(board_sectors *m)
{
    for (int i = 0; i < BOARD_SECTORS; ++i) {
        m->hit[i] = 0;
        m->min_angle[i] = FLT_MAX;
        m->max_angle[i] = -FLT_MAX;
        m->min_angle_cos[i] = -1.0f;
        m->max_angle_cos[i] = -1.0f;
    }
}

static void sectors_add(board_sectors *m, float angle, float normal_cos)
{
    int i = (int)floorf(angle / (board_two_pi / (float)BOARD_SECTORS));
    if (i > BOARD_SECTORS - 1)
        i = BOARD_SECTORS - 1;
    m->hit[i] = 1;
    if (angle < m->min_angle[i]) {
        m->min_angle[i] = angle;
        m->min_angle_cos[i] = normal_cos;
    }
    if (angle > m->max_angle[i]) {
        m->max_angle[i] = angle;
        m->max_angle_cos[i] = normal_cos;
    }
}

/* PCL's hole search: the widest gap between hit sectors covering more than 20% of the circle whose edge normals
 * are steep enough (relative to the smallest cosine min_cos). Writes the angle, from the sectors' origin, at
 * which x points into it. Returns 0 when there is no such gap. */
static int widest_hole(const board_sectors *m, float min_cos, float *angle)
{
    int first = 0;
    if (!m->hit[BOARD_SECTORS - 1])
        while (first < BOARD_SECTORS && !m->hit[first])
            ++first;
    float best = -FLT_MAX;
    for (int ch = first; ch < BOARD_SECTORS; ++ch) {
        if (m->hit[ch])
            continue;
        int hole_end = ch + 1;
        while (!m->hit[hole_end % BOARD_SECTORS])
            ++hole_end;
        int before = (ch - 1 + BOARD_SECTORS) % BOARD_SECTORS, after = hole_end % BOARD_SECTORS;
        float steep_begin = 1.0f - (m->max_angle_cos[before] - min_cos) / (1.0f - min_cos);
        float steep_end = 1.0f - (m->min_angle_cos[after] - min_cos) / (1.0f - min_cos);
        float width = after < before ? m->min_angle[after] + board_two_pi - m->max_angle[before]
                                     : m->min_angle[after] - m->max_angle[before];
        float fraction = width / board_two_pi;
        if (fraction > BOARD_HOLE_MIN_FRACTION && (steep_end + steep_begin) / 2.0f > BOARD_STEEP_MIN &&
            fraction > best) {
            best = fraction;
            float weight = ((steep_end - steep_begin) + 1.0f) / 2.0f;
            *angle = m->max_angle[before] + width * weight;
        }
        if (hole_end >= BOARD_SECTORS)
            break;
        ch = hole_end - 1;
    }
    return best > -FLT_MAX;
}

/* Rodrigues: v turned by angle about the unit axis. */
static void rotate_about(const float axis[3], float angle, const float v[3], float out[3])
{
    float c = cosf(angle), s = sinf(angle), k = dot3(axis, v) * (1.0f - c), w[3];
    cross3(axis, v, w);
    for (int d = 0; d < 3; ++d)
        out[d] = v[d] * c + w[d] * s + axis[d] * k;
}

static void write_nan_frame(float *f)
{
    for (int i = 0; i < 9; ++i)
        f[i] = NAN;
}

static void write_frame(float *f, const float x[3], const float z[3])
{
    float y[3];
    cross3(z, x, y);
    for (int d = 0; d < 3; ++d) {
        f[d] = x[d];
        f[3 + d] = y[d];
        f[6 + d] = z[d];
    }
}

/* Scans the margin: the point whose normal differs most from z (-1 if none has a normal) and, with holes, the
 * sectors. Returns whether any margin point exists. */
static int scan_margin(const board_job *job, const float kp[3], const grip_neighbors *s, const float z[3],
                       const float x_ref[3], board_sectors *m, long *min_index, float *min_cos)
{
    int found = 0;
    for (size_t i = 0; i < s->count; ++i) {
        if (s->sqdist[i] <= BOARD_MARGIN_SQDIST)
            continue;
        found = 1;
        const float *p = job->xyz + (size_t)s->idx[i] * 3;
        float normal_cos = dot3(z, job->normals + (size_t)s->idx[i] * 4);
        if (normal_cos < *min_cos) {
            *min_index = (long)s->idx[i];
            *min_cos = normal_cos;
        }
        if (job->find_holes) {
            float toward[3];
            directed_axis(z, kp, p, toward);
            sectors_add(m, angle_about(x_ref, toward, z), normal_cos);
        }
    }
    return found;
}

/* PCL computePointLRF for one keypoint, given its support in FLANN's order. */
static void board_keypoint(const board_job *job, size_t i, const float kp[3], const grip_neighbors *s)
{
    float *frame = job->frames + i * 9;
    if (s->count < BOARD_MIN_SUPPORT) {
        write_nan_frame(frame);
        return;
    }
    float z[3], x[3], x_ref[3] = {0.0f, 0.0f, 0.0f};
    plane_normal(job->xyz, s, z);
    orient_by_normals(job->normals, s, z);

    board_sectors m;
    long min_index = -1;
    float min_cos = FLT_MAX;
    if (job->find_holes) {
        reference_axis(z, x_ref);
        sectors_reset(&m);
    }
    int margin = scan_margin(job, kp, s, z, x_ref, &m, &min_index, &min_cos);
    if (!margin) /* only points at the keypoint's position: the most different normal among them */
        for (size_t j = 0; j < s->count; ++j) {
            float normal_cos = dot3(z, job->normals + (size_t)s->idx[j] * 4);
            if (normal_cos < min_cos) {
                min_index = (long)s->idx[j];
                min_cos = normal_cos;
            }
        }

    float hole_angle = 0.0f;
    if (margin && job->find_holes && widest_hole(&m, min_cos, &hole_angle)) {
        rotate_about(z, hole_angle, x_ref, x);
    } else if (min_index >= 0) {
        directed_axis(z, kp, job->xyz + (size_t)min_index * 3, x);
    } else {
        write_nan_frame(frame); /* no support point has a normal */
        return;
    }
    write_frame(frame, x, z);
}

static grip_status check_inputs(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                                const float *keypoint_xyz, size_t k, float radius, const float *frames_out)
{
    if (k == 0)
        return GRIP_OK;
    if (!keypoint_xyz || !frames_out)
        return grip_fail(ctx, GRIP_EINVAL, "board: keypoints and frames_out must not be NULL");
    if (n > 0 && (!surface_xyz || !surface_normals))
        return grip_fail(ctx, GRIP_EINVAL, "board: surface points and normals must not be NULL");
    if (!(radius > 0.0f) || !isfinite(radius))
        return grip_fail(ctx, GRIP_EINVAL, "board.radius: %g must be finite and > 0", (double)radius);
    return GRIP_OK;
}

static grip_status frames_for_keypoints(grip_ctx *ctx, const board_job *job, const grip_kdtree3d *tree,
                                        const float *keypoint_xyz, size_t k, float radius)
{
    int failed = 0;
#pragma omp parallel num_threads(grip_ctx_threads(ctx)) reduction(| : failed)
    {
        grip_neighbors support = {0};
#pragma omp for schedule(dynamic, 16)
        for (size_t i = 0; i < k; ++i) {
            if (failed || grip_kdtree3d_radius_pcl(tree, keypoint_xyz + i * 3, radius, &support) != GRIP_OK) {
                failed = 1;
                continue;
            }
            board_keypoint(job, i, keypoint_xyz + i * 3, &support);
        }
        grip_neighbors_free(&support);
    }
    if (failed)
        return grip_fail(ctx, GRIP_ENOMEM, "board: out of memory for the support of a keypoint");
    return GRIP_OK;
}

grip_status grip_board_lrf(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                           const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, float radius,
                           int find_holes, float *frames_out)
{
    grip_status st = check_inputs(ctx, surface_xyz, surface_normals, n, keypoint_xyz, k, radius, frames_out);
    if (st != GRIP_OK || k == 0)
        return st;
    grip_kdtree3d *own_tree = NULL;
    if (!tree) {
        st = grip_kdtree3d_build(ctx, surface_xyz, n, &own_tree);
        if (st != GRIP_OK)
            return st;
        tree = own_tree;
    }
    board_job job = {surface_xyz, surface_normals, find_holes, frames_out};
    st = frames_for_keypoints(ctx, &job, tree, keypoint_xyz, k, radius);
    grip_kdtree3d_free(own_tree);
    return st;
}
