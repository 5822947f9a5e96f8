// bruteforce_wgmma.cuh -- the Hopper screening kernel (cuda/index/sm90a/bruteforce_wgmma.cu), used by
// cuda/index/bruteforce_tensor.cu in place of its mma.sync kernel where the device and the build allow it. Its own
// candidate lists (a thread's best 8, or 6, of its quarter of the rows, cuda/index/sm90a/bruteforce_thread_lists.cuh),
// a different data layout: the reference rows are stored in wgmma tiles (bruteforce_tensor.cu's operand_index) and all
// scaled alike. Two operand kinds: fp16
// (the error model of mma.sync: Hopper's wgmma and mma.sync share the tensor cores' fp16 arithmetic), and int8
// (rows quantized with one step, exact integer products, at twice the rate; bruteforce_tensor.cu bounds its error).
#ifndef GRIP_CUDA_KNN_WGMMA_CUH
#define GRIP_CUDA_KNN_WGMMA_CUH

#include "cuda/index/bruteforce_screen.cuh"

#include <cuda_runtime.h>

// Whether the current device runs the kernel: an sm_90 GPU (H100, H200), with the sm_90a code in this build.
// A failed probe leaves no error behind.
bool grip_bruteforce_wgmma_usable(void);

// The k-steps (32 bytes of a row each: 16 fp16 or 32 int8 dimensions) of the compiled kernel that serves `dim`
// dimensions (rows are zero-padded to the k-steps); 0 when none does.
int grip_bruteforce_wgmma_ksteps(size_t dim, bool s8);

// The operands of a screening: fp16, int8, or int8 with the reference rows' norm folded into the products
// (bruteforce_tensor.cu's fold_row_column). The fold takes about dim / 2 padding columns, so only rows of 2 k-steps
// (up to 64 dimensions) have them, for up to about 42 dimensions: FPFH's 33 among them, where the products are
// short and the epilogue's arithmetic weighs most.
enum grip_wgmma_operands { GRIP_WGMMA_FP16, GRIP_WGMMA_S8, GRIP_WGMMA_S8_FOLDED };
#define GRIP_WGMMA_FOLD_MAX_STEPS 2

// Each of the m_padded queries' kList candidates (values x and rows, ascending by x) into cand_x and cand_id (kList per
// query), and into cand_bound[i] a value that every row outside query i's candidates is screened at or above (+inf when
// none is outside). The candidates are the union of 4 threads' best 8 (6 folded) over a quarter of the rows each
// (cuda/index/sm90a/bruteforce_thread_lists.cuh), not always the best, and the bound the least of their last values. q:
// row-major, ksteps x 32 bytes a row; r: n_padded rows in wgmma tiles. fp16: per-row query scales, the reference rows
// scaled by 1 / ref_inv_scale, x = |r|^2 - 2 q.r (the screened distance less |q|^2, which is the same for all its
// rows). int8: queries and rows quantized with one step, x = |r~|^2 - 2 q~.r~ in integer units (times the step squared,
// the screened distance less |q~|^2); folded, x less 1 where |r~|^2 is odd (a lower value never hides a row from the
// certificate, bruteforce_tensor.cu). Asynchronous on the default stream; returns the launch's error.
cudaError_t grip_bruteforce_wgmma_screen(const grip_screen::rows_prep &q, const grip_screen::rows_prep &r,
                                         size_t m_padded, size_t n_padded, int ksteps, grip_wgmma_operands operands,
                                         float ref_inv_scale, uint32_t *cand_id, float *cand_x, float *cand_bound);

// The re-screen of queries whose lists could not certify their answer (cuda/index/bruteforce_rescreen.cu): every row
// whose value x (as above: the same products and arithmetic) is below its query's limit[i] (a float in the lists'
// units; -inf for padding queries) is found. Query i's rows go to found[i * capacity ..], in no order, and count[i]
// (zeroed by the caller) counts them all, also past capacity. q: m_padded rows, only h (and inv_scale, for fp16) read.
// The rows are walked in `ranges` ranges of whole tiles, a block each per 128 queries, so that a few queries still
// fill the GPU. Asynchronous on the default stream; returns the launch's error.
cudaError_t grip_bruteforce_wgmma_rescreen(const grip_screen::rows_prep &q, const grip_screen::rows_prep &r,
                                           size_t m_padded, size_t n_padded, int ksteps, grip_wgmma_operands operands,
                                           float ref_inv_scale, const float *limit, int ranges, uint32_t capacity,
                                           uint32_t *count, uint32_t *found);

// The blocks an SM of the kernels for `ksteps` and the operands (two for the folded int8 kernel, else one), into
// *blocks: a wave of the re-screen is that many blocks an SM. cudaErrorInvalidValue where no kernel is compiled.
cudaError_t grip_bruteforce_wgmma_blocks_per_sm(int ksteps, grip_wgmma_operands operands, int *blocks);

#endif
