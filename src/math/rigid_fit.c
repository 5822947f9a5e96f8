/* rigid_fit.c -- least-squares rigid transform (Kabsch): centroids and the 3x3 cross-covariance in double,
 * its SVD by LAPACK's dgesvd, and the reflection fix: when det(V U^T) < 0 the last singular vector is flipped,
 * so the result is always a proper rotation (det +1), also for coplanar and collinear points. */
#include "math/rigid_fit.h"
#include "core/fault.h"

#include <lapacke.h>
#include <math.h>

static double det3(const double m[9])
{
    return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
           m[2] * (m[3] * m[7] - m[4] * m[6]);
}

/* Workspace for dgesvd on a 3x3 matrix: past its minimum (15) the size changes no step, since every blocked
 * routine dgesvd calls falls back to its unblocked form below its block size (32 and up); this is above the size
 * LAPACKE's own query asks for (201 with the reference LAPACK). */
#define SVD3_LWORK 512

int grip_svd3(const double h[9], double s[3], double u[9], double vt[9])
{
    /* the column-major call LAPACKE's row-major wrapper makes, on transposes of our own, after its NaN check */
    double a[9], uc[9], vtc[9], work[SVD3_LWORK];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            if (isnan(h[r * 3 + c]))
                return -6;
            a[c * 3 + r] = h[r * 3 + c];
        }
    lapack_int info = GRIP_LAPACKE(
        LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'A', 'A', 3, 3, a, 3, s, uc, 3, vtc, 3, work, SVD3_LWORK));
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            u[r * 3 + c] = uc[c * 3 + r];
            vt[r * 3 + c] = vtc[c * 3 + r];
        }
    return (int)info;
}

static void centroid(const double *p, size_t n, double c[3])
{
    c[0] = c[1] = c[2] = 0.0;
    for (size_t i = 0; i < n; ++i)
        for (int d = 0; d < 3; ++d)
            c[d] += p[i * 3 + d];
    for (int d = 0; d < 3; ++d)
        c[d] /= (double)n;
}

static int all_finite(const double *p, size_t n)
{
    for (size_t i = 0; i < n * 3; ++i)
        if (!isfinite(p[i]))
            return 0;
    return 1;
}

grip_status grip_rigid_fit_noted(grip_error_note *err, const double *src, const double *dst, size_t n, double pose[16])
{
    if (!src || !dst || !pose)
        return grip_note_fail(err, GRIP_EINVAL, "rigid_fit: src, dst and pose must not be NULL");
    if (n < 3)
        return grip_note_fail(err, GRIP_EINVAL, "rigid_fit: needs at least 3 point pairs, got %zu", n);
    if (!all_finite(src, n) || !all_finite(dst, n))
        return grip_note_fail(err, GRIP_EINVAL, "rigid_fit: a point coordinate is not finite");

    double cs[3], cd[3];
    centroid(src, n, cs);
    centroid(dst, n, cd);
    /* H = sum (src_i - cs)(dst_i - cd)^T; the rotation maximising tr(R H) is V U^T for H = U S V^T */
    double h[9] = {0};
    for (size_t i = 0; i < n; ++i) {
        double a[3], b[3];
        for (int d = 0; d < 3; ++d) {
            a[d] = src[i * 3 + d] - cs[d];
            b[d] = dst[i * 3 + d] - cd[d];
        }
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                h[r * 3 + c] += a[r] * b[c];
    }
    double s[3], u[9], vt[9];
    int info = grip_svd3(h, s, u, vt);
    if (info != 0)
        return grip_note_fail(err, GRIP_ELAPACK, "rigid_fit: LAPACKE_dgesvd failed (info %d)", (int)info);

    /* R = V D U^T with D = diag(1, 1, sign det(V U^T)); det(V) = det(V^T) */
    double flip = det3(vt) * det3(u) < 0.0 ? -1.0 : 1.0;
    double r[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            r[i * 3 + j] = vt[0 * 3 + i] * u[j * 3 + 0] + vt[1 * 3 + i] * u[j * 3 + 1] +
                           flip * vt[2 * 3 + i] * u[j * 3 + 2];
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j)
            pose[i * 4 + j] = r[i * 3 + j];
        pose[i * 4 + 3] = cd[i] - (r[i * 3 + 0] * cs[0] + r[i * 3 + 1] * cs[1] + r[i * 3 + 2] * cs[2]);
    }
    pose[12] = pose[13] = pose[14] = 0.0;
    pose[15] = 1.0;
    return GRIP_OK;
}

grip_status grip_rigid_fit(grip_ctx *ctx, const double *src, const double *dst, size_t n, double pose[16])
{
    grip_error_note err = {GRIP_OK};
    grip_rigid_fit_noted(&err, src, dst, n, pose);
    return grip_note_report(ctx, &err);
}

void grip_pose_apply(const double pose[16], const double p[3], double out[3])
{
    double x = p[0], y = p[1], z = p[2];
    for (int i = 0; i < 3; ++i)
        out[i] = pose[i * 4 + 0] * x + pose[i * 4 + 1] * y + pose[i * 4 + 2] * z + pose[i * 4 + 3];
}
