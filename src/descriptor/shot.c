/* shot.c -- see shot.h. The arithmetic follows PCL's createBinDistanceShape, interpolateSingleChannel and
 * normalizeHistogram step by step: float dot products in the order Eigen's SSE reduction sums them, double for
 * the interpolation weights, and votes added to the float histogram in PCL's order. */
#include "descriptor/shot.h"
#include "descriptor/shot_support.h"

#include <math.h>
#include <string.h>

#define SHOT_STRIDE (GRIP_SHOT_COSINE_BINS + 1) /* floats per volume */
#define SHOT_MIN_SUPPORT 5

/* PCL's angle constants, to its digits */
#define SHOT_RAD_45 0.78539816339744830961566084581988
#define SHOT_RAD_90 1.5707963267948966192313216916398
#define SHOT_RAD_135 2.3561944901923449288469825374596
#define SHOT_RAD_PI_7_8 2.7488935718910690836548129603691

typedef struct shot_job {
    const float *surface, *normals, *frames;
    double radius1_4, radius1_2, radius3_4;
    float *out;
} shot_job;

/* Dot product of two 3-vectors stored as Vector4f with w = 0, summed as Eigen's SSE reduction does:
 * (a0 b0 + a2 b2) + (a1 b1 + 0), in float. */
static float dot4f(const float a[3], const float b[3])
{
    return (a[0] * b[0] + a[2] * b[2]) + a[1] * b[1];
}

/* Position of a support point's normal on the cosine axis, in [0, 10]; NaN for a non-finite normal. */
static double cosine_bin_distance(const float normal[3], const float z_axis[3])
{
    if (!isfinite(normal[0]) || !isfinite(normal[1]) || !isfinite(normal[2]))
        return NAN;
    double cosine = (double)dot4f(normal, z_axis);
    if (cosine > 1.0)
        cosine = 1.0;
    if (cosine < -1.0)
        cosine = -1.0;
    return ((1.0 + cosine) * GRIP_SHOT_COSINE_BINS) / 2;
}

/* The volume (0..31) a point at (x, y, z) in the frame, at `distance`, falls in: 4 x azimuth sector
 * + 2 x outer shell + upper hemisphere, with PCL's conventions on the sector borders. */
static int volume_index(double x, double y, double z, double distance, double radius1_2)
{
    int bit4 = (y > 0) || (y == 0.0 && x < 0);
    int bit3 = ((x > 0) || (x == 0.0 && y > 0)) ? !bit4 : bit4;
    int volume = ((bit4 << 3) + (bit3 << 2)) << 1;
    if ((x * y > 0) || (x == 0.0))
        volume += (fabs(x) >= fabs(y)) ? 0 : 4;
    else
        volume += (fabs(x) > fabs(y)) ? 4 : 0;
    volume += z > 0 ? 1 : 0;
    volume += distance > radius1_2 ? 2 : 0;
    return volume;
}

/* Splits the vote between the nearest cosine bin (`step`, whose weight is returned) and the next one, which
 * wraps around modulo 10. */
static double vote_cosine(float *hist, int volume, double bin_distance, int *step)
{
    *step = (int)floor(bin_distance + 0.5);
    double offset = bin_distance - *step;
    float *h = hist + volume * SHOT_STRIDE;
    if (offset > 0)
        h[(*step + 1) % GRIP_SHOT_COSINE_BINS] += (float)offset;
    else
        h[(*step - 1 + GRIP_SHOT_COSINE_BINS) % GRIP_SHOT_COSINE_BINS] += -(float)offset;
    return 1 - fabs(offset);
}

/* Between the inner and the outer shell, linear in distance between radius/4 and 3 radius/4. */
static double vote_radius(float *hist, const shot_job *job, int volume, int step, double distance)
{
    if (distance > job->radius1_2) {
        double shift = (distance - job->radius3_4) / job->radius1_2;
        if (distance > job->radius3_4)
            return 1 - shift;
        hist[(volume - 2) * SHOT_STRIDE + step] -= (float)shift;
        return 1 + shift;
    }
    double shift = (distance - job->radius1_4) / job->radius1_2;
    if (distance < job->radius1_4)
        return 1 + shift;
    hist[(volume + 2) * SHOT_STRIDE + step] += (float)shift;
    return 1 - shift;
}

/* Between the two hemispheres, linear in inclination between 45 and 135 degrees. */
static double vote_elevation(float *hist, int volume, int step, double z, double distance)
{
    double cosine = z / distance;
    if (cosine < -1.0)
        cosine = -1.0;
    if (cosine > 1.0)
        cosine = 1.0;
    double inclination = acos(cosine);
    if (inclination > SHOT_RAD_90 || (fabs(inclination - SHOT_RAD_90) < 1e-30 && z <= 0)) {
        double shift = (inclination - SHOT_RAD_135) / SHOT_RAD_90;
        if (inclination > SHOT_RAD_135)
            return 1 - shift;
        hist[(volume + 1) * SHOT_STRIDE + step] -= (float)shift;
        return 1 + shift;
    }
    double shift = (inclination - SHOT_RAD_45) / SHOT_RAD_90;
    if (inclination < SHOT_RAD_45)
        return 1 + shift;
    hist[(volume - 1) * SHOT_STRIDE + step] += (float)shift;
    return 1 - shift;
}

/* Between neighbouring azimuth sectors (wrapping around), linear within half a sector of the centre. A point on
 * the z axis has no azimuth and adds nothing. */
static double vote_azimuth(float *hist, int volume, int step, double x, double y)
{
    if (y == 0.0 && x == 0.0)
        return 0.0;
    double azimuth = atan2(y, x);
    int sector = volume >> 2;
    double shift = (azimuth - (-SHOT_RAD_PI_7_8 + SHOT_RAD_45 * sector)) / SHOT_RAD_45;
    shift = fmax(-0.5, fmin(shift, 0.5));
    if (shift > 0) {
        hist[((volume + 4) % GRIP_SHOT_VOLUMES) * SHOT_STRIDE + step] += (float)shift;
        return 1 - shift;
    }
    hist[((volume - 4 + GRIP_SHOT_VOLUMES) % GRIP_SHOT_VOLUMES) * SHOT_STRIDE + step] -= (float)shift;
    return 1 + shift;
}

/* Coordinates in the frame below this are taken as 0, as PCL does. */
static double snap_tiny(double v)
{
    return fabs(v) < 1e-30 ? 0.0 : v;
}

/* Adds one support point's quadrilinear vote. */
static void vote(float *hist, const shot_job *job, const float p[3], const float *rf, uint32_t point, float sqdist)
{
    double bin_distance = cosine_bin_distance(job->normals + 4 * (size_t)point, rf + 6);
    if (!isfinite(bin_distance))
        return;
    const float *q = job->surface + 3 * (size_t)point;
    float delta[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
    double distance = sqrt((double)sqdist);
    if (fabs(distance) < 1e-15) /* the keypoint itself */
        return;
    double x = snap_tiny((double)dot4f(delta, rf));
    double y = snap_tiny((double)dot4f(delta, rf + 3));
    double z = snap_tiny((double)dot4f(delta, rf + 6));
    int volume = volume_index(x, y, z, distance, job->radius1_2);
    int step;
    double weight = vote_cosine(hist, volume, bin_distance, &step);
    weight += vote_radius(hist, job, volume, step, distance);
    weight += vote_elevation(hist, volume, step, z, distance);
    weight += vote_azimuth(hist, volume, step, x, y);
    hist[volume * SHOT_STRIDE + step] += (float)weight;
}

/* L2 normalisation as PCL: float squares summed in double, divided in float (0/0 gives NaN, as in PCL). */
static void normalize(float *hist)
{
    double sum = 0;
    for (int j = 0; j < GRIP_SHOT_DIM; ++j)
        sum += hist[j] * hist[j];
    float norm = (float)sqrt(sum);
    for (int j = 0; j < GRIP_SHOT_DIM; ++j)
        hist[j] /= norm;
}

static void shot_one(size_t i, const float p[3], grip_neighbors *support, void *user)
{
    const shot_job *job = user;
    const float *rf = job->frames + 9 * i;
    float *hist = job->out + (size_t)GRIP_SHOT_DIM * i;
    if (!isfinite(rf[0]) || !isfinite(rf[3]) || !isfinite(rf[6]) || support->count < SHOT_MIN_SUPPORT) {
        for (int j = 0; j < GRIP_SHOT_DIM; ++j)
            hist[j] = NAN;
        return;
    }
    memset(hist, 0, GRIP_SHOT_DIM * sizeof *hist);
    for (size_t j = 0; j < support->count; ++j)
        vote(hist, job, p, rf, support->idx[j], support->sqdist[j]);
    normalize(hist);
}

grip_status grip_shot_describe(grip_ctx *ctx, const float *surface_xyz, const float *surface_normals, size_t n,
                               const grip_kdtree3d *tree, const float *keypoint_xyz, size_t k, const float *frames,
                               float radius, uint32_t max_neighbors, float *descriptors_out)
{
    if (k == 0)
        return GRIP_OK;
    if (!surface_xyz || !surface_normals || !tree || !keypoint_xyz || !frames || !descriptors_out)
        return grip_fail(ctx, GRIP_EINVAL,
                         "shot: surface, normals, tree, keypoints, frames and descriptors must not be NULL");
    if (grip_kdtree3d_size(tree) > n)
        return grip_fail(ctx, GRIP_EINVAL, "shot: the tree holds %zu points but the surface has only %zu",
                         grip_kdtree3d_size(tree), n);
    if (!(radius > 0.0f) || !isfinite(radius))
        return grip_fail(ctx, GRIP_EINVAL, "shot: radius must be finite and > 0 (got %g)", (double)radius);
    double r = radius;
    shot_job job = {surface_xyz, surface_normals, frames, r / 4, r / 2, (r * 3) / 4, descriptors_out};
    return grip_shot_for_each_keypoint(ctx, "shot", tree, keypoint_xyz, k, radius, max_neighbors, shot_one, &job);
}
