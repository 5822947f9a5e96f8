// bruteforce_prep.cuh -- the rows' preparation for the tensor-core screening (cuda/index/bruteforce_prep.cu; step 1 of
// cuda/index/bruteforce_tensor.cu): centring, fp16 scaling or int8 quantization (with the folded norm), the wgmma tile
// layout, and the norms and residual bounds the certificate reads. Internal to the screening.
#ifndef GRIP_CUDA_KNN_PREP_CUH
#define GRIP_CUDA_KNN_PREP_CUH

#include "cuda/index/bruteforce_screen.cuh"

#include <stddef.h>

namespace grip_screen {

constexpr int kScaleExponentLimit = 40; // rows with a magnitude outside [2^-40, 2^40] are not screened

// Maxima over the reference rows, for the bound B.
struct ref_stats {
    float max_norm_up, max_resid_up;
    int out_of_range;
    int max_abs_bits; // the largest centred finite magnitude (float bits), for the wgmma layout's common scale
};

// How rows are scaled and stored: a per-row power of two (fixed_e unused), or 2^(14 - fixed_e) for all rows;
// row-major or in wgmma tiles (operand_index).
struct prep_layout {
    bool fixed;
    int fixed_e;
    bool tiled;
};

constexpr prep_layout kPerRowScale = {false, 0, false};

// The int8 quantization: t = rint(xc / step), clamped to [-limit, limit]. The reference rows' limit keeps the
// wgmma kernel's integer x = |r~|^2 - 2 q~.r~ below 2^24 in magnitude with queries clamped to 127 (s8_limit), so
// that the float the lists hold is exact.
struct s8_quant {
    float step, inv_step;
    int limit;
    int fold; // the folded norm's columns (s8_fold_columns), 0 when not folded
};

constexpr int kQueryS8Limit = 127; // the queries' int8 limit

// Carves the per-row arrays of `rows` rows out of one allocation; returns its size when base is NULL.
size_t rows_prep_carve(rows_prep *p, unsigned char *base, size_t rows, size_t row_bytes);

// Sums the finite values of each column of ref (n x dim) into sum (dim floats, zeroed by the caller).
void launch_column_sum(const float *ref, size_t n, size_t dim, float *sum);
// The largest magnitude of ref's centred finite values (the centre is sum * inv_count), as float bits, into
// *max_bits (zeroed by the caller).
void launch_centred_max(const float *ref, size_t n, size_t dim, const float *sum, float inv_count, int *max_bits);

// Prepares rows 0 .. padded_rows - 1 of src (the first `rows` real, dim floats each) into p, kdim elements a row:
// fp16 (launch_prep, laid out as `layout` says) or int8 (launch_prep_s8: reference rows in wgmma tiles, queries
// row-major). stats: for reference rows, the maxima; NULL for queries. Asynchronous on the default stream.
void launch_prep(const float *src, size_t rows, size_t padded_rows, size_t dim, size_t kdim, const float *sum,
                 float inv_count, prep_layout layout, const rows_prep &p, ref_stats *stats);
void launch_prep_s8(const float *src, size_t rows, size_t padded_rows, size_t dim, size_t kdim, const float *sum,
                    float inv_count, s8_quant quant, bool reference, const rows_prep &p, ref_stats *stats);

// The reference rows' int8 limit L: the largest <= 127 with dim (L^2 + 2 * 127 L) < 2^24, so that
// |r~|^2 - 2 q~.r~ (|r~_d| <= L, |q~_d| <= 127) is exact in a float.
int s8_limit(size_t dim);

// The columns the folded norm takes (fold_row_column): J of up to 128 x 127 each and one of up to 127, for
// h = floor(|r~|^2 / 2) <= floor(dim L^2 / 2).
int s8_fold_columns(size_t dim, int limit);

} // namespace grip_screen

#endif
