/* index_bruteforce.c -- the `bruteforce` index stage: exact k-NN over n x D reference rows (descriptors of every
 * model, tagged by model id), given in host or device memory. CPU twin: src/index/bruteforce.c. */
#include "stages/index_bruteforce.h"
#include "stages/stage.h"
#include "stages/index_common.h"
#include "stages/registry.h"
#include "index/bruteforce_cuda.h"
#include "index/bruteforce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BRUTEFORCE_STR(x) #x
#define BRUTEFORCE_XSTR(x) BRUTEFORCE_STR(x)

/* The GPU search's options (grip_bruteforce_cuda_options; the CPU search has none): each enum's choices in the order of its
 * values, which build() casts the choice's index to. */
static const grip_param_info bruteforce_params[] = {
    GRIP_PARAM_DEVICE,
    GRIP_PARAM_FALLBACK,
    {sizeof(grip_param_info), GRIP_PARAM_ENUM, "screen_precision", "int8", 0, 0, "int8|fp16",
     "GPU screening products (k <= 16, 32 <= D <= 368): int8 (fp16 off Hopper) or fp16; both give the same results"},
    {sizeof(grip_param_info), GRIP_PARAM_ENUM, "screen_kernel", "auto", 0, 0, "auto|mma_sync",
     "GPU screening kernel: auto = wgmma on Hopper when built for it, else mma.sync; mma_sync = the portable one"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "rescreen_capacity", BRUTEFORCE_XSTR(GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY), 1,
     GRIP_BRUTEFORCE_CUDA_RESCREEN_CAPACITY, NULL,
     "rows a query the Hopper screening cannot certify may list when screened again; with more, the exact kernel"},
};

/* The index object. On a CPU stage: a host copy of the reference rows, searched exactly. On a CUDA stage: a device
 * copy (made on the device when the rows come in device memory, never through the host), searched by
 * cuda/index/bruteforce.cu with bit-identical results for k up to GRIP_BRUTEFORCE_CUDA_MAX_K; the CPU twin answers larger
 * k from a host copy downloaded on the first such search. A reference set the device cannot hold is streamed: the
 * CUDA handle keeps the rows in host memory and searches them in batches, and the index's reference array is that
 * host copy. */
typedef struct bruteforce_index {
    grip_index_head head;           /* the public struct first; head.ctx is the stage's context */
    float *rows;                    /* own host copy; NULL on a CUDA stage until a search needs it */
    grip_bruteforce_cuda_ref *device_rows; /* NULL on a CPU stage */
    grip_bruteforce_cuda_options options;  /* the stage's, for the GPU search */
} bruteforce_index;

/* The rows in host memory: the index's own copy, else the reference array when it is in host memory (a streamed
 * handle's rows), else a copy downloaded from the device copy on the first search that needs it. */
static grip_status host_rows(bruteforce_index *ix, const float **rows)
{
    grip_status s = grip_index_host_copy(ix->head.ctx, &ix->head.pub, &ix->rows);
    if (s)
        return s;
    *rows = ix->rows ? ix->rows : ix->head.pub.reference.data;
    return GRIP_OK;
}

/* The GPU search: device queries and outputs are used in place, host ones staged through device buffers. */
static grip_status search_on_device(bruteforce_index *ix, const grip_array *queries, uint32_t k, float max_sqdist,
                                    grip_array *ids, grip_array *sqdist)
{
    grip_index_search_dev io;
    grip_status s = grip_index_search_device_begin(ix->head.ctx, &ix->head.pub, queries, k, ids, sqdist, &io);
    if (s)
        return s;
    s = grip_bruteforce_cuda_search_device(ix->head.ctx, ix->device_rows, io.queries, io.m, k, max_sqdist, io.ids, io.sqdist);
    return grip_index_search_device_end(ix->head.ctx, &io, s, ids, sqdist);
}

static grip_status bruteforce_search(grip_index_head *head, const grip_array *queries, uint32_t k, float max_sqdist,
                                     grip_array *ids, grip_array *sqdist)
{
    bruteforce_index *ix = (bruteforce_index *)head;
    grip_index *self = &head->pub;
    if (ix->device_rows && k <= GRIP_BRUTEFORCE_CUDA_MAX_K)
        return search_on_device(ix, queries, k, max_sqdist, ids, sqdist);
    grip_index_search_io io;
    grip_status s = grip_index_search_begin(ix->head.ctx, self, queries, k, ids, sqdist, &io);
    if (s)
        return s;
    const float *rows = NULL;
    s = host_rows(ix, &rows);
    if (!s)
        s = grip_bruteforce_search(ix->head.ctx, rows, (size_t)self->rows, io.queries, io.m, self->dim, k, max_sqdist, io.ids,
                           io.sqdist);
    return grip_index_search_end(ix->head.ctx, &io, s, ids, sqdist);
}

static void bruteforce_release(grip_index_head *head)
{
    bruteforce_index *ix = (bruteforce_index *)head;
    grip_array_free_host(&ix->head.pub.model_ids);
    grip_bruteforce_cuda_ref_free(ix->device_rows);
    free(ix->rows);
    free(ix);
}

/* The CUDA handle of the reference rows (host or device memory), and the index's reference array over its rows:
 * on the device, or in host memory when the handle streams them. */
static grip_status device_rows_make(bruteforce_index *ix, const grip_array *reference)
{
    size_t n = (size_t)ix->head.pub.rows, dim = ix->head.pub.dim;
    grip_status s = reference->memory == GRIP_MEM_CUDA
                        ? grip_bruteforce_cuda_ref_copy_device(ix->head.ctx, reference->data, n, dim, &ix->options,
                                                        &ix->device_rows)
                        : grip_bruteforce_cuda_ref_upload(ix->head.ctx, reference->data, n, dim, &ix->options, &ix->device_rows);
    if (s)
        return s;
    if (grip_bruteforce_cuda_ref_is_streamed(ix->device_rows)) {
        ix->head.pub.reference =
            grip_array_host_view(GRIP_F32, n, dim, (void *)grip_bruteforce_cuda_ref_host_rows(ix->device_rows));
        return GRIP_OK;
    }
    grip_index_reference_on_device(ix->head.ctx, &ix->head.pub, grip_bruteforce_cuda_ref_rows(ix->device_rows));
    return GRIP_OK;
}

/* One build() where st->use_cuda says, once the call is checked. */
static grip_status build_once(grip_stage *st, const grip_array *reference, const grip_array *model_ids,
                              grip_index **out)
{
    grip_status s;
    bruteforce_index *ix = calloc(1, sizeof *ix);
    if (!ix)
        return grip_fail(st->ctx, GRIP_ENOMEM, "index: out of memory");
    grip_index_head_init(&ix->head, st->ctx, bruteforce_search, bruteforce_release);
    ix->options = (grip_bruteforce_cuda_options){
        .precision = (grip_bruteforce_cuda_precision)grip_stage_choice(st, "screen_precision"),
        .kernel = (grip_bruteforce_cuda_kernel)grip_stage_choice(st, "screen_kernel"),
        .rescreen_capacity = (uint32_t)grip_stage_integer(st, "rescreen_capacity"),
    };
    s = grip_index_init(st->ctx, &ix->head.pub, reference, model_ids, st->use_cuda ? NULL : &ix->rows);
    if (!s && st->use_cuda)
        s = device_rows_make(ix, reference);
    else if (!s)
        ix->head.pub.reference = grip_array_host_view(GRIP_F32, ix->head.pub.rows, ix->head.pub.dim, ix->rows);
    if (s) {
        bruteforce_release(&ix->head);
        return s;
    }
    ix->head.pub.exact = 1;
    *out = &ix->head.pub;
    return GRIP_OK;
}

static grip_status bruteforce_build(grip_stage *st, const grip_array *reference, const grip_array *model_ids,
                                    grip_index **out)
{
    grip_status s = grip_stage_check_call(&grip_index_bruteforce, st, out, GRIP_MEM_HOST);
    if (!s)
        GRIP_STAGE_CALL(st, s, build_once(st, reference, model_ids, out));
    return s;
}

const grip_bruteforce_cuda_options *grip_index_bruteforce_options(const grip_index *index)
{
    const grip_index_head *head = grip_index_own(index);
    return head && head->search == bruteforce_search ? &((const bruteforce_index *)head)->options : NULL;
}

static grip_status bruteforce_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_index_bruteforce = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_INDEX,
    .name = "bruteforce",
    .summary = "exact k-NN by brute force over every reference row (NaN rows never returned)",
#ifdef GRIP_HAVE_CUDA
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
#else
    .backends = GRIP_BACKEND_CPU,
#endif
    .n_params = sizeof bruteforce_params / sizeof bruteforce_params[0],
    .params = bruteforce_params,
    .create = bruteforce_create,
    .destroy = grip_stage_destroy,
    .build = bruteforce_build,
};

static grip_status bruteforce_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_index_bruteforce, ctx, kv, n_kv, out);
}
