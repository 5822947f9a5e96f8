/* index_bruteforce.c -- the `bruteforce` index stage: exact k-NN over n x D reference rows (descriptors of every
 * model, tagged by model id). CPU twin: src/index/knn_exact.c. */
#include "stages/stage.h"
#include "stages/index_common.h"
#include "index/knn_cuda.h"
#include "index/knn_exact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const grip_param_info bruteforce_params[] = {
    GRIP_PARAM_DEVICE,
};

/* The index object: a host copy of the reference rows, searched exactly; on a CUDA stage also a device copy,
 * searched by cuda/knn_bruteforce.cu with bit-identical results (k up to GRIP_KNN_CUDA_MAX_K; the CPU twin
 * answers larger k). */
typedef struct bruteforce_index {
    grip_index pub;
    grip_ctx *ctx;
    float *rows;
    grip_knn_cuda_ref *device_rows; /* NULL on a CPU stage */
} bruteforce_index;

static grip_status bruteforce_search(grip_index *self, const grip_array *queries, uint32_t k, float max_sqdist,
                                     grip_array *ids, grip_array *sqdist)
{
    bruteforce_index *ix = (bruteforce_index *)self;
    grip_index_search_io io;
    grip_status s = grip_index_search_begin(ix->ctx, self, queries, k, ids, sqdist, &io);
    if (s)
        return s;
    if (ix->device_rows && k <= GRIP_KNN_CUDA_MAX_K)
        s = grip_knn_cuda_search(ix->ctx, ix->device_rows, io.queries, io.m, k, max_sqdist, io.ids, io.sqdist);
    else
        s = grip_knn_exact(ix->ctx, ix->rows, (size_t)self->rows, io.queries, io.m, self->dim, k, max_sqdist, io.ids,
                           io.sqdist);
    return grip_index_search_end(ix->ctx, &io, s, ids, sqdist);
}

static void bruteforce_release(grip_index *self)
{
    bruteforce_index *ix = (bruteforce_index *)self;
    if (!ix)
        return;
    grip_array_free_host(&ix->pub.model_ids);
    grip_knn_cuda_ref_free(ix->device_rows);
    free(ix->rows);
    free(ix);
}

static grip_status bruteforce_build(grip_stage *st, const grip_array *reference, const grip_array *model_ids,
                                    grip_index **out)
{
    grip_status s = grip_stage_check_run(st, out, GRIP_MEM_HOST);
    if (s)
        return s;
    bruteforce_index *ix = calloc(1, sizeof *ix);
    if (!ix)
        return grip_fail(st->ctx, GRIP_ENOMEM, "index: out of memory");
    ix->ctx = st->ctx;
    s = grip_index_init(st->ctx, &ix->pub, reference, model_ids, &ix->rows);
    if (!s && st->use_cuda)
        s = grip_knn_cuda_ref_upload(st->ctx, ix->rows, (size_t)ix->pub.rows, ix->pub.dim, &ix->device_rows);
    if (s) {
        bruteforce_release(&ix->pub);
        return s;
    }
    ix->pub.search = bruteforce_search;
    ix->pub.release = bruteforce_release;
    ix->pub.exact = 1;
    ix->pub.reference = grip_array_host_view(GRIP_F32, ix->pub.rows, ix->pub.dim, ix->rows);
    *out = &ix->pub;
    return GRIP_OK;
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
