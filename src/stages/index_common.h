/* index_common.h -- what every index implementation shares: checking and copying the reference set, and the
 * argument checks and memory-space plumbing around search(). */
#ifndef GRIP_STAGES_INDEX_COMMON_H
#define GRIP_STAGES_INDEX_COMMON_H

#include "core/array.h"

/* The private object behind every index of this plugin: the public struct first (all that a host or another stage
 * sees), then what the shared entry points need. The public search and release pointers are the shared entry
 * points, which refuse a NULL self, an index of another implementation and (best effort: while its memory has not
 * been reused) one already released, and then call the implementation's own. */
typedef struct grip_index_head grip_index_head;
typedef grip_status (*grip_index_search_fn)(grip_index_head *index, const grip_array *queries, uint32_t k,
                                            float max_sqdist, grip_array *ids, grip_array *sqdist);
struct grip_index_head {
    grip_index pub;
    uint32_t live;                /* set by grip_index_head_init, cleared by the shared release */
    grip_ctx *ctx;                /* the building stage's context: searches report there */
    grip_index_search_fn search;  /* the implementation's search */
    void (*release)(grip_index_head *index); /* frees the whole object; also for a half-built one */
};

/* Makes head a live index of ctx whose public entry points call search and release. */
void grip_index_head_init(grip_index_head *head, grip_ctx *ctx, grip_index_search_fn search,
                          void (*release)(grip_index_head *index));

/* The live index of this plugin behind index, else NULL (a NULL pointer, another plugin's index, or one released). */
grip_index_head *grip_index_own(const grip_index *index);

/* Checks an index handed to a stage (GRIP_EINVAL, `what` naming it): non-NULL, its struct at least through `search`
 * (later fields take their documented defaults), a search function, and not an index of this plugin already
 * released. */
grip_status grip_index_check(grip_ctx *ctx, const grip_index *index, const char *what);

/* Fills the public part of an index from the reference rows (F32 n x D, host or device) and the model ids
 * (U32 n x 1, or NULL for all 0; contiguous per model, non-decreasing). pub->model_ids gets a host array the index
 * frees with grip_array_free_host. When rows_copy is not NULL, *rows_copy gets a malloc'd host copy of the rows,
 * which the index owns (an index that keeps its rows on a device passes NULL: no host copy is made). */
grip_status grip_index_init(grip_ctx *ctx, grip_index *pub, const grip_array *reference, const grip_array *model_ids,
                            float **rows_copy);

/* Points pub->reference at its pub->rows x pub->dim rows in the context's device memory, which the index keeps and
 * frees its own way (the array is a view). */
void grip_index_reference_on_device(grip_ctx *ctx, grip_index *pub, const float *rows);

/* For an index whose reference rows are on the device: a host copy of them into *rows (malloc'd; the index owns
 * and frees it), made once, for the CPU twin. Nothing when *rows is already set or the rows are in host memory. */
grip_status grip_index_host_copy(grip_ctx *ctx, const grip_index *pub, float **rows);

/* Host views of a search call's queries and outputs: the caller's own arrays when they live on the host, else
 * host buffers copied back to the caller's device arrays by grip_index_search_end. */
typedef struct grip_index_search_io {
    const float *queries;
    size_t m;
    uint32_t *ids;
    float *sqdist;
    grip_array queries_host, ids_host, sqdist_host;
    int own_queries, own_outputs;
} grip_index_search_io;

/* Checks a search call's arguments against the index: k > 0, queries F32 m x D, ids (U32) and sqdist (F32) m x k
 * in one memory space. */
grip_status grip_index_search_check(grip_ctx *ctx, const grip_index *ix, const grip_array *queries, uint32_t k,
                                    const grip_array *ids, const grip_array *sqdist);

/* Checks the arguments (grip_index_search_check), then makes the host views. On failure nothing is left to free
 * (do not call grip_index_search_end then). */
grip_status grip_index_search_begin(grip_ctx *ctx, const grip_index *ix, const grip_array *queries, uint32_t k,
                                    grip_array *ids, grip_array *sqdist, grip_index_search_io *io);
/* Finishes a search: copies outputs to the device when needed and frees the buffers. Returns `status` unless the
 * copy itself fails. */
grip_status grip_index_search_end(grip_ctx *ctx, grip_index_search_io *io, grip_status status, grip_array *ids,
                                  grip_array *sqdist);

/* Device views of a search call's queries and outputs, for an index searched on the GPU: the caller's own arrays
 * when they live on the device, else device buffers (host queries uploaded; outputs copied back to the caller's
 * host arrays by grip_index_search_device_end). */
typedef struct grip_index_search_dev {
    const float *queries;
    size_t m;
    uint32_t *ids;
    float *sqdist;
    void *queries_staged, *ids_staged, *sqdist_staged; /* device buffers this search made, NULL when none */
} grip_index_search_dev;

/* Checks the arguments (grip_index_search_check), then makes the device views on the context's device. On
 * failure nothing is left to free (do not call grip_index_search_device_end then). */
grip_status grip_index_search_device_begin(grip_ctx *ctx, const grip_index *ix, const grip_array *queries,
                                           uint32_t k, grip_array *ids, grip_array *sqdist,
                                           grip_index_search_dev *io);
/* Finishes a device search: copies staged outputs back to the caller's host arrays and frees the buffers.
 * Returns `status` unless the copy itself fails. */
grip_status grip_index_search_device_end(grip_ctx *ctx, grip_index_search_dev *io, grip_status status,
                                         grip_array *ids, grip_array *sqdist);

#endif
