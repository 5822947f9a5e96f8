/* spin_image_cuda.h -- the GPU twin of grip_spin_image_describe (spin_image.h): PCL 1.13 SpinImageEstimation
 * semantics, over neighbourhoods already on the device (spatial/neighborhood_cuda.h).
 *
 * One warp per keypoint: the warp's lanes read the keypoint's neighbour list in a row (coalesced x, y, z and
 * normals) and add their bilinear votes, computed by the same code as the CPU's (spin_image_math.h), into the
 * warp's image in shared memory (double atomics); the warp then normalises it as PCL does and writes the row.
 * The votes are those of the CPU twin bit for bit; only the order in which a bin's votes are summed differs (in
 * double), so rows agree with the CPU's to about 1e-15 relative, and NaN rows are the same.
 *
 * The support of keypoint q is its list in nb as given, entries [offsets[q], offsets[q+1]): with radius lists
 * of the parameters' radius and no cap, exactly the CPU twin's support. Its length decides min_neighbors and
 * PCL's "normalise only a support of two or more points" rule. Only offsets, x, y, z (and nx, ny, nz when the
 * support angle or the angular domain needs normals) of nb are read. */
#ifndef GRIP_DESCRIPTOR_SPIN_IMAGE_CUDA_H
#define GRIP_DESCRIPTOR_SPIN_IMAGE_CUDA_H

#include "descriptor/spin_image.h"
#include "spatial/neighborhood_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Spin images of the k keypoints. nb: their neighbourhoods (nb->m == k) on the context's device.
 * keypoint_xyz (k x 3), keypoint_normals (k x 4, the rotation axes) and out (k x grip_spin_image_dim(width),
 * allocated by the caller) are device memory. Synchronous: out is ready on return. Nothing is done when k is 0.
 * Errors: GRIP_EINVAL (NULL arrays, nb->m != k, bad parameters, normals needed but absent from nb), GRIP_ENODEV
 * (the context has no device), GRIP_ECUDA, GRIP_EUNSUPPORTED on a CPU-only build. */
grip_status grip_spin_image_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *keypoint_xyz,
                                 const float *keypoint_normals, uint32_t k, const grip_spin_image_params *p,
                                 float *out);

#ifdef __cplusplus
}
#endif
#endif
