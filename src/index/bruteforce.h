/* bruteforce.h -- exact k nearest neighbours of D-dimensional float rows on the CPU, by brute force: the CPU twin
 * of the `bruteforce` index and the reference the approximate indexes are measured against.
 *
 * Squared distances are accumulated in float, one dimension after the other (diff = q - r; acc += diff * diff),
 * exactly as FLANN's L2_Simple<float> does inside PCL's KdTreeFLANN, so the distances written are bit-identical
 * to PCL's for SHOT352 matching. (This relies on ISO C's default of no FMA contraction, -ffp-contract=off, which
 * -std=c11 implies.) */
#ifndef GRIP_INDEX_KNN_EXACT_H
#define GRIP_INDEX_KNN_EXACT_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

/* The k nearest reference rows (ref: n x dim, row-major) of each query row (queries: m x dim).
 *
 * ids (m x k) and sqdist (m x k) are allocated by the caller. Row i lists the neighbours of query i by ascending
 * squared distance, ties to the lower reference row; only neighbours with sqdist <= max_sqdist are listed (pass
 * INFINITY for no bound); the rest of the row is padded with UINT32_MAX and +inf.
 * A reference row with a non-finite value (NaN or inf, as PCL's point representation checks) is never returned;
 * a query row with a non-finite value gets no neighbours. A distance that overflows float to +inf is never
 * returned. k may exceed n. Runs on ctx's CPU thread count (OpenMP over query tiles).
 * Fails with GRIP_EINVAL on NULL arrays with non-zero sizes, dim == 0, n >= UINT32_MAX or a NaN max_sqdist, and
 * with GRIP_ENOMEM when the packed copy of ref cannot be allocated (outputs are then untouched). */
grip_status grip_bruteforce_search(grip_ctx *ctx, const float *ref, size_t n, const float *queries, size_t m,
                                   size_t dim, uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist);

/* Inserts (id, d) into the sorted list ids/dist of k entries (caller's arrays) whose last entry is worse than d,
 * after the entries of equal distance: the tie rule above, when entries are offered in row order. */
void grip_knn_list_insert(uint32_t *ids, float *dist, uint32_t k, uint32_t id, float d);

#endif
