/* spin_image_cuda_absent.c -- the GPU spin images of a CPU-only build: the entry point reports that this build has
 * no GPU (see spin_image_cuda.h), so callers use the CPU twin grip_spin_image_describe. */
#include "descriptor/spin_image_cuda.h"

#ifndef GRIP_HAVE_CUDA
grip_status grip_spin_image_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *keypoint_xyz,
                                 const float *keypoint_normals, uint32_t k, const grip_spin_image_params *p,
                                 float *out)
{
    (void)nb; (void)keypoint_xyz; (void)keypoint_normals; (void)k; (void)p; (void)out;
    return grip_fail(ctx, GRIP_EUNSUPPORTED,
                     "spin_image (cuda): the GPU spin images asked for from a CPU-only build of grip");
}
#else
/* the CUDA build gets this from cuda/spin_image.cu; keep this translation unit non-empty */
typedef int grip_spin_image_cuda_absent_unused;
#endif
