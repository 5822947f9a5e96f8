/* rigid_fit.h -- least-squares rigid transform between paired 3D points (Kabsch / Umeyama without scale),
 * SVD through LAPACKE, with the reflection fix. Used by grouping (hypothesis poses) and ICP. */
#ifndef GRIP_MATH_RIGID_FIT_H
#define GRIP_MATH_RIGID_FIT_H

#include <stddef.h>
#include "core/ctx.h"
#include "core/error_note.h"

/* Finds R, t minimising sum |R*src_i + t - dst_i|^2 over n >= 3 pairs (n x 3, double). Writes a row-major 4x4
 * pose. GRIP_EINVAL for n < 3, GRIP_ELAPACK if the SVD fails. Degenerate (collinear) input still returns a
 * proper rotation. */
grip_status grip_rigid_fit(grip_ctx *ctx, const double *src, const double *dst, size_t n, double pose[16]);

/* grip_rigid_fit for a caller on a worker thread, which must not write the context: the same fit and statuses,
 * the error text going to err (core/error_note.h) for the caller to report later. */
grip_status grip_rigid_fit_noted(grip_error_note *err, const double *src, const double *dst, size_t n, double pose[16]);

/* The SVD h = U diag(s) Vt of a row-major 3x3 matrix, all three row-major, exactly as LAPACKE_dgesvd(LAPACK_ROW_MAJOR,
 * 'A', 'A', 3, 3, ...) gives it, bit for bit, without the copies, allocations and workspace query that call makes
 * each time. Returns LAPACK's info (0: converged). */
int grip_svd3(const double h[9], double s[3], double u[9], double vt[9]);

/* Applies a row-major 4x4 pose to a point. */
void grip_pose_apply(const double pose[16], const double p[3], double out[3]);

#endif
