/* match_mutual.h -- the mutual filter's reverse search, for the reference rows the search lists name: each one's
 * nearest query row. grip_match_select() reads nearest_query only at rows of the lists, so the search runs over
 * those rows alone (at most m x list_k of them, whatever the index holds), on the CPU (grip_bruteforce_search) or on
 * the GPU (the CUDA search of src/index/bruteforce_cuda.h), with the same results bit for bit. */
#ifndef GRIP_MATCH_MATCH_MUTUAL_H
#define GRIP_MATCH_MATCH_MUTUAL_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"
#include "index/bruteforce_cuda.h"

/* Writes nearest_query (n entries, caller-allocated, n = reference->rows): for each reference row that the lists
 * ids (m x list_k, host memory, m = queries->rows) name, the query row nearest to it, ties to the lower query row,
 * UINT32_MAX when the row is not finite or no query is; UINT32_MAX at every other row. List entries >= n (the
 * UINT32_MAX padding) are passed over. reference (n x dim) and queries (m x dim) are F32 arrays in host or device
 * memory (device arrays of another device than the context's go through host memory). use_cuda: search on the
 * context's GPU as cuda_options say (e.g. the index's: they change no result), else on the CPU (cuda_options are
 * not read and may be NULL). GRIP_EINVAL on a NULL ids or nearest_query with rows to cover, or a GPU search without
 * valid options; GRIP_ENOMEM when the gathered rows or the search's buffers cannot be allocated; the errors of the
 * search (GRIP_ENODEV, GRIP_ECUDA) otherwise. After a failure nearest_query holds nothing usable. */
grip_status grip_match_nearest_queries_listed(grip_ctx *ctx, int use_cuda,
                                              const grip_bruteforce_cuda_options *cuda_options,
                                              const grip_array *reference, const grip_array *queries,
                                              const uint32_t *ids, uint32_t list_k, uint32_t *nearest_query);

#endif
