/* index_common.c -- see index_common.h. */
#include "stages/index_common.h"
#include "core/cuda_bridge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Set in a live index, cleared when it is released. */
#define GRIP_INDEX_LIVE 0x78646e49u

static grip_status shared_search(grip_index *self, const grip_array *queries, uint32_t k, float max_sqdist,
                                 grip_array *ids, grip_array *sqdist)
{
    grip_index_head *head = grip_index_own(self);
    if (!head)
        return grip_fail(NULL, GRIP_EINVAL, "index.search: self is %s", self ? "not a live index of this plugin (released?)"
                                                                            : "NULL");
    if (!grip_ctx_is_live(head->ctx))
        return grip_fail(NULL, GRIP_EINVAL, "index.search: the context the index was built in was destroyed");
    grip_ctx_clear_error(head->ctx);
    if (isnan(max_sqdist))
        return grip_fail(head->ctx, GRIP_EINVAL, "index.search: max_sqdist is NaN");
    return head->search(head, queries, k, max_sqdist, ids, sqdist);
}

static void shared_release(grip_index *self)
{
    grip_index_head *head = grip_index_own(self);
    if (!head)
        return;
    grip_cookie_clear(&head->live);
    head->release(head);
}

void grip_index_head_init(grip_index_head *head, grip_ctx *ctx, grip_index_search_fn search,
                          void (*release)(grip_index_head *index))
{
    head->pub.struct_size = sizeof head->pub;
    head->pub.search = shared_search;
    head->pub.release = shared_release;
    head->live = GRIP_INDEX_LIVE;
    head->ctx = ctx;
    head->search = search;
    head->release = release;
}

grip_index_head *grip_index_own(const grip_index *index)
{
    /* the search pointer tells this plugin's indexes apart; the cookie after the public struct, the live ones */
    if (!index || index->search != shared_search)
        return NULL;
    grip_index_head *head = (grip_index_head *)index;
    return head->live == GRIP_INDEX_LIVE ? head : NULL;
}

grip_status grip_index_check(grip_ctx *ctx, const grip_index *index, const char *what)
{
    grip_status s = grip_struct_check(ctx, index, offsetof(grip_index, search) + sizeof index->search, what,
                                      "grip_index (through search)");
    if (s)
        return s;
    if (!index->search)
        return grip_fail(ctx, GRIP_EINVAL, "%s has no search function", what);
    if (index->search == shared_search && !grip_index_own(index))
        return grip_fail(ctx, GRIP_EINVAL, "%s was released (used after its release function)", what);
    return GRIP_OK;
}

static grip_status copy_model_ids(grip_ctx *ctx, grip_index *pub, const grip_array *model_ids, size_t n)
{
    grip_status s = grip_optional_array_check(ctx, model_ids, GRIP_U32, 1, "index: model_ids");
    if (!s)
        s = grip_array_alloc_host(ctx, &pub->model_ids, GRIP_U32, n, 1);
    if (s || !model_ids || model_ids->rows == 0) {
        pub->n_models = n ? 1 : 0;
        return s;
    }
    if (model_ids->rows != n)
        return grip_fail(ctx, GRIP_EINVAL, "index: model_ids has %llu rows, the reference set %zu",
                         (unsigned long long)model_ids->rows, n);
    grip_array host;
    int owned = 0;
    s = grip_array_to_host(ctx, model_ids, &host, &owned, "index: model_ids");
    if (s)
        return s;
    const uint32_t *id = host.data;
    uint32_t *dst = pub->model_ids.data;
    for (size_t i = 0; i < n && !s; i++) {
        if (i > 0 && id[i] < id[i - 1])
            s = grip_fail(ctx, GRIP_EINVAL, "index: model_ids must be non-decreasing (row %zu has model %u after %u)",
                          i, id[i], id[i - 1]);
        dst[i] = id[i];
    }
    if (!s && n && dst[n - 1] == UINT32_MAX)
        s = grip_fail(ctx, GRIP_EINVAL, "index: model id %u is reserved", UINT32_MAX);
    pub->n_models = n && !s ? dst[n - 1] + 1 : 0;
    if (owned)
        grip_array_free_host(&host);
    return s;
}

grip_status grip_index_init(grip_ctx *ctx, grip_index *pub, const grip_array *reference, const grip_array *model_ids,
                            float **rows_copy)
{
    if (rows_copy)
        *rows_copy = NULL;
    pub->model_ids = grip_array_host_view(GRIP_U32, 0, 0, NULL);
    grip_status s = grip_array_check(ctx, reference, GRIP_F32, 0, "index: reference");
    if (s)
        return s;
    if (reference->rows == 0 || reference->cols == 0)
        return grip_fail(ctx, GRIP_EINVAL, "index: the reference set is empty (%llu x %llu)",
                         (unsigned long long)reference->rows, (unsigned long long)reference->cols);
    if (reference->rows > UINT32_MAX - 1 || reference->cols > UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "index: %llu reference rows exceed 32-bit ids",
                         (unsigned long long)reference->rows);
    pub->rows = reference->rows;
    pub->dim = (uint32_t)reference->cols;
    s = copy_model_ids(ctx, pub, model_ids, (size_t)pub->rows);
    if (s || !rows_copy)
        return s;
    grip_array host;
    int owned = 0;
    s = grip_array_to_host(ctx, reference, &host, &owned, "index: reference");
    if (s)
        return s;
    if (owned) {
        *rows_copy = host.data; /* already a private copy */
        return GRIP_OK;
    }
    size_t bytes = (size_t)(pub->rows * pub->dim) * sizeof(float);
    *rows_copy = malloc(bytes);
    if (!*rows_copy)
        return grip_fail(ctx, GRIP_ENOMEM, "index: out of memory copying %zu bytes of reference rows", bytes);
    memcpy(*rows_copy, host.data, bytes);
    return GRIP_OK;
}

static grip_status check_output(grip_ctx *ctx, const grip_array *a, uint32_t dtype, size_t m, uint32_t k,
                                const char *what)
{
    grip_status s = grip_array_check(ctx, a, dtype, k, what);
    if (!s && (a->rows != m || a->cols != k))
        s = grip_fail(ctx, GRIP_EINVAL, "%s: must be %zu x %u, is %llu x %llu", what, m, k,
                      (unsigned long long)a->rows, (unsigned long long)a->cols);
    return s;
}

grip_status grip_index_search_check(grip_ctx *ctx, const grip_index *ix, const grip_array *queries, uint32_t k,
                                    const grip_array *ids, const grip_array *sqdist)
{
    if (k == 0)
        return grip_fail(ctx, GRIP_EINVAL, "index.search: k is 0");
    grip_status s = grip_array_check(ctx, queries, GRIP_F32, 0, "index.search: queries");
    if (s)
        return s;
    if (queries->rows && queries->cols != ix->dim)
        return grip_fail(ctx, GRIP_EINVAL, "index.search: queries have %llu dimensions, the index %u",
                         (unsigned long long)queries->cols, ix->dim);
    size_t m = (size_t)queries->rows;
    s = check_output(ctx, ids, GRIP_U32, m, k, "index.search: ids");
    if (!s)
        s = check_output(ctx, sqdist, GRIP_F32, m, k, "index.search: sqdist");
    if (!s && ids->memory != sqdist->memory)
        s = grip_fail(ctx, GRIP_EINVAL, "index.search: ids and sqdist must live in the same memory space");
    return s;
}

grip_status grip_index_search_begin(grip_ctx *ctx, const grip_index *ix, const grip_array *queries, uint32_t k,
                                    grip_array *ids, grip_array *sqdist, grip_index_search_io *io)
{
    memset(io, 0, sizeof *io);
    grip_status s = grip_index_search_check(ctx, ix, queries, k, ids, sqdist);
    if (s)
        return s;
    io->m = (size_t)queries->rows;
    s = grip_array_to_host(ctx, queries, &io->queries_host, &io->own_queries, "index.search: queries");
    if (s)
        return s;
    io->queries = io->queries_host.data;
    if (ids->memory == GRIP_MEM_HOST) {
        io->ids = ids->data;
        io->sqdist = sqdist->data;
        return GRIP_OK;
    }
    io->own_outputs = 1;
    s = grip_array_alloc_host(ctx, &io->ids_host, GRIP_U32, io->m, k);
    if (!s)
        s = grip_array_alloc_host(ctx, &io->sqdist_host, GRIP_F32, io->m, k);
    io->ids = io->ids_host.data;
    io->sqdist = io->sqdist_host.data;
    return s ? grip_index_search_end(ctx, io, s, ids, sqdist) : GRIP_OK; /* on failure nothing stays allocated */
}

grip_status grip_index_search_end(grip_ctx *ctx, grip_index_search_io *io, grip_status status, grip_array *ids,
                                  grip_array *sqdist)
{
    if (io->own_outputs) {
        if (status == GRIP_OK)
            status = grip_cuda_copy_to_device(ctx, ids->data, io->ids, (size_t)(ids->rows * ids->cols) * 4);
        if (status == GRIP_OK)
            status = grip_cuda_copy_to_device(ctx, sqdist->data, io->sqdist, (size_t)(sqdist->rows * sqdist->cols) * 4);
        grip_array_free_host(&io->ids_host);
        grip_array_free_host(&io->sqdist_host);
    }
    if (io->own_queries)
        grip_array_free_host(&io->queries_host);
    return status;
}

grip_status grip_index_search_device_begin(grip_ctx *ctx, const grip_index *ix, const grip_array *queries,
                                           uint32_t k, grip_array *ids, grip_array *sqdist,
                                           grip_index_search_dev *io)
{
    memset(io, 0, sizeof *io);
    grip_status s = grip_index_search_check(ctx, ix, queries, k, ids, sqdist);
    if (s)
        return s;
    io->m = (size_t)queries->rows;
    size_t out_bytes = io->m * k * sizeof(float);
    int device = -1;
    if (queries->memory == GRIP_MEM_CUDA)
        io->queries = queries->data;
    else
        s = grip_cuda_upload(ctx, queries->data, io->m * ix->dim * sizeof(float), &io->queries_staged, &device);
    if (io->queries_staged)
        io->queries = io->queries_staged;
    if (!s && ids->memory == GRIP_MEM_CUDA) {
        io->ids = ids->data;
        io->sqdist = sqdist->data;
    } else if (!s) {
        s = grip_cuda_alloc(ctx, out_bytes, &io->ids_staged);
        if (!s)
            s = grip_cuda_alloc(ctx, out_bytes, &io->sqdist_staged);
        io->ids = io->ids_staged;
        io->sqdist = io->sqdist_staged;
    }
    return s ? grip_index_search_device_end(ctx, io, s, ids, sqdist) : GRIP_OK; /* on failure nothing stays */
}

grip_status grip_index_search_device_end(grip_ctx *ctx, grip_index_search_dev *io, grip_status status,
                                         grip_array *ids, grip_array *sqdist)
{
    if (io->ids_staged && io->sqdist_staged && status == GRIP_OK) {
        size_t bytes = (size_t)(ids->rows * ids->cols) * sizeof(float);
        status = grip_cuda_copy_to_host(ctx, ids->data, io->ids_staged, bytes);
        if (status == GRIP_OK)
            status = grip_cuda_copy_to_host(ctx, sqdist->data, io->sqdist_staged, bytes);
    }
    grip_cuda_free(io->queries_staged);
    grip_cuda_free(io->ids_staged);
    grip_cuda_free(io->sqdist_staged);
    memset(io, 0, sizeof *io);
    return status;
}

void grip_index_reference_on_device(grip_ctx *ctx, grip_index *pub, const float *rows)
{
    pub->reference = grip_array_host_view(GRIP_F32, pub->rows, pub->dim, (void *)rows);
    pub->reference.memory = GRIP_MEM_CUDA;
    pub->reference.device = ctx->device;
}

grip_status grip_index_host_copy(grip_ctx *ctx, const grip_index *pub, float **rows)
{
    if (*rows || pub->reference.memory != GRIP_MEM_CUDA)
        return GRIP_OK;
    grip_array host;
    int owned = 0;
    grip_status s = grip_array_to_host(ctx, &pub->reference, &host, &owned, "index: reference");
    if (s)
        return s;
    *rows = host.data; /* from device memory: always a private copy (owned) */
    return GRIP_OK;
}
