/* pfh_chunks.h -- radius lists of many queries on the GPU, a chunk of queries at a time, for the FPFH and PFH
 * kernels: the lists of all keypoints of a large cloud may not fit on the device at once. */
#ifndef GRIP_DESCRIPTOR_PFH_CHUNKS_H
#define GRIP_DESCRIPTOR_PFH_CHUNKS_H

#include "spatial/neighborhood_cuda.h"

/* Work on the queries [first, first + count): nb holds their radius lists (nb->m == count), queries their
 * coordinates (device, count x 3). */
typedef grip_status (*grip_pfh_chunk_fn)(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *queries,
                                         uint32_t first, uint32_t count, void *user);

/* Calls fn on the radius lists (grip_neighborhoods_cuda_radius, no cap) of the m queries (device, m x 3) over s,
 * all at once if they fit, else chunk by chunk: when the lists or fn fail with GRIP_ENOMEM, the chunk's lists are
 * freed, the chunk is halved and retried (fn must therefore only write the rows of its own queries). Fails with
 * GRIP_ENOMEM when the lists of a single query do not fit, and with any other error of the lists or of fn. The
 * lists are freed before return. */
grip_status grip_pfh_for_each_chunk(grip_ctx *ctx, const grip_surface_cuda *s, const float *queries, uint32_t m,
                                    float radius, grip_pfh_chunk_fn fn, void *user);

#endif
