/* normals_given.h -- a cloud's own normals (the ones its file carried) checked and brought to unit length.
 *
 * Scanning tools export normals that are not always unit length (meshes whose normals have a length of about 2 pi
 * have been met): every descriptor and frame here assumes unit normals, so such normals are rescaled. A normal
 * whose length is within GRIP_NORMALS_UNIT_TOLERANCE of 1 is kept bit for bit (normals written by PCL or by a
 * tool that normalised them in float are; a rescale would move their last bits and the descriptors built on them),
 * any other is divided by its length. A finite point whose normal is not finite or has length 0 has no usable
 * normal: its normal becomes NaN, as a computed normal is where it is undefined (the curvature stays as given). A
 * point that is not finite gets a NaN row. */
#ifndef GRIP_DESCRIPTOR_NORMALS_GIVEN_H
#define GRIP_DESCRIPTOR_NORMALS_GIVEN_H

#include <stddef.h>

#define GRIP_NORMALS_UNIT_TOLERANCE 1e-4f

/* What grip_normals_given_unit found. */
typedef struct grip_normals_given_report {
    size_t finite_points; /* points with three finite coordinates */
    size_t unusable;      /* of those, the ones whose normal is not finite or has length 0 */
    size_t rescaled;      /* of those, the ones whose normal was rescaled to unit length */
} grip_normals_given_report;

/* Writes the n normals of the cloud xyz (n x 3) given as rows of `stride` floats (3: nx, ny, nz; 4: curvature
 * last) into out (caller's n x 4 floats: unit normal and curvature, NaN curvature for 3 columns), as the header
 * says, and fills *report. Never fails. */
void grip_normals_given_unit(const float *xyz, const float *normals, size_t stride, size_t n, float *out,
                             grip_normals_given_report *report);

#endif
