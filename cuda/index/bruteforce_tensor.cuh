// bruteforce_tensor.cuh -- the tensor-core screened k-NN: the results of the exact brute force
// (grip_bruteforce_cuda_launch, itself bit for bit grip_bruteforce_search), found faster. Tensor-core products screen
// every pair (int8 wgmma on a Hopper GPU, fp16 elsewhere), each query keeps 32 candidates (its 32 best screened rows,
// or on the wgmma kernel the best
// 8 of each quarter of the rows: cuda/index/sm90a/bruteforce_thread_lists.cuh), those are re-ranked with the exact
// float arithmetic, and a query whose answer the screening's rigorous error bound cannot certify is screened again with
// the bound its exact candidates give (cuda/index/bruteforce_rescreen.cuh) or searched again by the exact kernel.
#ifndef GRIP_CUDA_KNN_TENSOR_CUH
#define GRIP_CUDA_KNN_TENSOR_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include "core/ctx.h"
#include "index/bruteforce_cuda.h"
}

// The screened path serves 1 <= k <= GRIP_BRUTEFORCE_SCREEN_MAX_K (the 32 kept candidates leave a margin for the
// certificate, thinner on the wgmma kernel's lists: at k = 16 nearly every query is screened again there, and on the
// mma.sync kernel a query it cannot certify goes to the exact kernel) and GRIP_BRUTEFORCE_SCREEN_MIN_DIM <= dim <=
// GRIP_BRUTEFORCE_SCREEN_MAX_DIM
// (below, the exact kernel's direct form is as fast; above, the block's 128 queries no longer fit in shared memory
// beside the chunk ring and the candidate lists).
#define GRIP_BRUTEFORCE_SCREEN_MAX_K 16
#define GRIP_BRUTEFORCE_SCREEN_MIN_DIM 32
#define GRIP_BRUTEFORCE_SCREEN_MAX_DIM 368

// Which kernel screens is chosen per reference set at build, as the options say (src/index/bruteforce_cuda.h): the
// wgmma kernel (cuda/index/sm90a/bruteforce_wgmma.cu) on a Hopper GPU, in int8 or fp16, the portable mma.sync kernel
// (fp16) elsewhere or where the options ask for it (all give the same answers).

// The screening data of one reference set (int8 or fp16 rows, norms, error terms); opaque.
typedef struct grip_bruteforce_screen grip_bruteforce_screen;

// Prepares the screening of ref (n x dim, device memory of the current device) as the options say (checked by the
// caller); the screening keeps them for its searches. *out is allocated here, freed with grip_bruteforce_screen_free();
// it is left NULL (with GRIP_OK) when the set cannot be screened: dim outside the range above, a device whose shared
// memory a block cannot hold the screening kernel's (the mma.sync kernel's on sm_86 and sm_89 GPUs, and above 160
// dimensions on the A100), or a finite row whose magnitude is outside [2^-40, 2^40] (the exact kernel then serves
// every search).
grip_status grip_bruteforce_screen_build(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                         const grip_bruteforce_cuda_options &options, grip_bruteforce_screen **out);
void grip_bruteforce_screen_free(grip_bruteforce_screen *screen);

// Device bytes grip_bruteforce_screen_build allocates for n rows of dim dimensions on the current device (0 where it
// builds nothing), and the most one grip_bruteforce_screen_search of m queries allocates (every query failing its
// certificate included; 0 where the screened path is not taken), with the same options: for planning what fits on
// the device.
size_t grip_bruteforce_screen_bytes(size_t n, size_t dim, const grip_bruteforce_cuda_options &options);
size_t grip_bruteforce_screen_search_bytes(size_t m, size_t dim, uint32_t k,
                                           const grip_bruteforce_cuda_options &options);

// The search of grip_bruteforce_cuda_launch (same arguments, k <= GRIP_BRUTEFORCE_SCREEN_MAX_K, ref the rows screen was
// built
// from), with the options screen was built with; synchronous on the default stream.
grip_status grip_bruteforce_screen_search(grip_ctx *ctx, const grip_bruteforce_screen *screen, const float *ref,
                                          const float *queries, size_t m, uint32_t k, float max_sqdist, uint32_t *ids,
                                          float *sqdist);

#endif
