/* pfh_support.h -- what the FPFH and PFH CPU twins share around their histograms: the check of their arguments and
 * the NaN row of an invalid keypoint. */
#ifndef GRIP_DESCRIPTOR_PFH_SUPPORT_H
#define GRIP_DESCRIPTOR_PFH_SUPPORT_H

#include "spatial/kdtree3d.h"

/* Checks the arguments of grip_fpfh_describe / grip_pfh_describe (`what` names the caller in the error text):
 * non-NULL arrays when k > 0, a tree no larger than the surface, a finite radius > 0. GRIP_EINVAL otherwise. */
grip_status grip_pfh_check_args(grip_ctx *ctx, const char *what, const float *surface_xyz,
                                const float *surface_normals, size_t n, const grip_kdtree3d *tree,
                                const float *keypoint_xyz, size_t k, float radius, const float *out);

/* Sets the `dim` floats of row to NaN (PCL's mark of an invalid keypoint). */
void grip_pfh_nan_row(float *row, size_t dim);

#endif
