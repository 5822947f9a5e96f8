// knn_wgmma.cuh -- the Hopper screening kernel (cuda/sm90a/knn_wgmma.cu), used by cuda/knn_tensor.cu in place of
// its mma.sync kernel where the device and the build allow it. Same lists, same error model (Hopper's wgmma and
// mma.sync share the tensor cores' fp16 arithmetic), a different data layout: the reference rows are stored in
// wgmma tiles (knn_tensor.cu's fp16_index) and all scaled by one power of two.
#ifndef GRIP_CUDA_KNN_WGMMA_CUH
#define GRIP_CUDA_KNN_WGMMA_CUH

#include "cuda/knn_screen.cuh"

#include <cuda_runtime.h>

// Whether the current device runs the kernel: an sm_90 GPU (H100, H200), with the sm_90a code in this build.
// A failed probe leaves no error behind.
bool grip_knn_wgmma_usable(void);

// The k-steps (16 dimensions each) of the compiled kernel that serves `dim` dimensions (rows are zero-padded to
// k-steps x 16); 0 when none does.
int grip_knn_wgmma_ksteps(size_t dim);

// Each of the m_padded queries' kList smallest values x = |r|^2 - 2 q.r (the screened distance less |q|^2, which
// is the same for all its rows) with their rows, ascending, into cand_x and cand_id (kList per query). q: row-major,
// ksteps x 16 halves a row, per-row scales; r: n_padded rows in wgmma tiles, each scaled by 1 / ref_inv_scale.
// Asynchronous on the default stream; returns the launch's error.
cudaError_t grip_knn_wgmma_screen(const grip_screen::rows_prep &q, const grip_screen::rows_prep &r, size_t m_padded,
                                  size_t n_padded, int ksteps, float ref_inv_scale, uint32_t *cand_id,
                                  float *cand_x);

#endif
