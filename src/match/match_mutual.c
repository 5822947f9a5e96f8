/* match_mutual.c -- see match_mutual.h. */
#include "match/match_mutual.h"
#include "match/match_select.h"
#include "core/array.h"
#include "core/cuda_bridge.h"
#include "index/bruteforce_cuda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Marks the rows below n that the lists name (nearest_query[r] = 0, else UINT32_MAX) and returns them, ascending,
 * in *rows (malloc'd, caller frees; NULL when none). */
static grip_status listed_rows(grip_ctx *ctx, const uint32_t *ids, size_t cells, size_t n, uint32_t *nearest_query,
                               uint32_t **rows, size_t *count)
{
    *rows = NULL;
    *count = 0;
    for (size_t r = 0; r < n; r++)
        nearest_query[r] = UINT32_MAX;
    size_t c = 0;
    for (size_t i = 0; i < cells; i++)
        if (ids[i] < n && nearest_query[ids[i]] != 0) {
            nearest_query[ids[i]] = 0;
            c++;
        }
    if (c == 0)
        return GRIP_OK;
    *rows = malloc(c * sizeof **rows);
    if (!*rows)
        return grip_fail(ctx, GRIP_ENOMEM, "match.mutual: cannot allocate %zu row ids", c);
    size_t j = 0;
    for (size_t r = 0; r < n; r++)
        if (nearest_query[r] == 0)
            (*rows)[j++] = (uint32_t)r;
    *count = c;
    return GRIP_OK;
}

/* Rows `rows` of the host matrix ref (each dim floats) into a new host matrix (malloc'd; NULL when out of memory). */
static float *gather_host(const float *ref, size_t dim, const uint32_t *rows, size_t count)
{
    float *out = malloc(count * dim * sizeof *out);
    if (out)
        for (size_t i = 0; i < count; i++)
            memcpy(out + i * dim, ref + (size_t)rows[i] * dim, dim * sizeof *out);
    return out;
}

/* An array in device memory of the context's device, where its kernels may read it (an array on another device
 * goes through host memory instead). */
static int on_ctx_device(const grip_ctx *ctx, const grip_array *a)
{
    return a->memory == GRIP_MEM_CUDA && ctx->device >= 0 && a->device == ctx->device;
}

/* Rows `rows` of the reference (host or device memory) into a new matrix on the device (to_device; free with
 * grip_cuda_free) or in host memory (free()); *out is NULL after a failure. Rows on the context's device are
 * gathered there: only the gathered rows cross the bus, never the whole set. */
static grip_status gather(grip_ctx *ctx, const grip_array *reference, const uint32_t *rows, size_t count,
                          int to_device, void **out)
{
    *out = NULL;
    const size_t dim = (size_t)reference->cols, bytes = count * dim * sizeof(float);
    grip_status s = GRIP_OK;
    if (on_ctx_device(ctx, reference)) {
        void *dev = NULL;
        s = grip_cuda_alloc(ctx, bytes, &dev);
        if (!s)
            s = grip_cuda_gather_rows(ctx, reference->data, dim, rows, count, dev);
        if (!s && !to_device) {
            *out = malloc(bytes);
            s = *out ? grip_cuda_copy_to_host(ctx, *out, dev, bytes)
                     : grip_fail(ctx, GRIP_ENOMEM, "match.mutual: cannot allocate %zu gathered rows", count);
            if (s) {
                free(*out);
                *out = NULL;
            }
        }
        if (to_device && !s)
            *out = dev;
        else
            grip_cuda_free(dev);
        return s;
    }
    grip_array ref;
    int own_ref = 0; /* rows on another device: the whole set through host memory */
    s = grip_array_to_host(ctx, reference, &ref, &own_ref, "match.mutual: reference rows");
    if (s)
        return s;
    float *host = gather_host(ref.data, dim, rows, count);
    if (own_ref)
        grip_array_free_host(&ref);
    if (!host)
        return grip_fail(ctx, GRIP_ENOMEM, "match.mutual: cannot allocate %zu gathered rows", count);
    if (!to_device) {
        *out = host;
        return GRIP_OK;
    }
    int device = -1;
    s = grip_cuda_upload(ctx, host, bytes, out, &device);
    free(host);
    return s;
}

/* nearest[i]: the query nearest to gathered row i, by grip_bruteforce_search with the roles swapped. */
static grip_status search_cpu(grip_ctx *ctx, const grip_array *reference, const grip_array *queries,
                              const uint32_t *rows, size_t count, uint32_t *nearest)
{
    void *gathered = NULL;
    grip_array q;
    int own_q = 0;
    grip_status s = grip_array_to_host(ctx, queries, &q, &own_q, "match.mutual: queries");
    if (!s)
        s = gather(ctx, reference, rows, count, 0, &gathered);
    if (!s)
        s = grip_match_nearest_queries(ctx, gathered, count, q.data, (size_t)q.rows, (size_t)q.cols, nearest);
    free(gathered);
    if (own_q)
        grip_array_free_host(&q);
    return s;
}

/* The same on the GPU: the queries become the searched rows of a CUDA handle with the given options, the gathered
 * rows its queries. */
static grip_status search_cuda(grip_ctx *ctx, const grip_bruteforce_cuda_options *options, const grip_array *reference,
                               const grip_array *queries, const uint32_t *rows, size_t count, uint32_t *nearest)
{
    const size_t m = (size_t)queries->rows, dim = (size_t)queries->cols;
    grip_bruteforce_cuda_ref *by_query = NULL;
    void *gathered = NULL, *ids = NULL, *sqdist = NULL;
    grip_array q;
    int own_q = 0;
    grip_status s = GRIP_OK;
    if (on_ctx_device(ctx, queries)) {
        s = grip_bruteforce_cuda_ref_copy_device(ctx, queries->data, m, dim, options, &by_query);
    } else {
        s = grip_array_to_host(ctx, queries, &q, &own_q, "match.mutual: queries");
        if (!s)
            s = grip_bruteforce_cuda_ref_upload(ctx, q.data, m, dim, options, &by_query);
        if (own_q)
            grip_array_free_host(&q);
    }
    if (!s)
        s = gather(ctx, reference, rows, count, 1, &gathered);
    if (!s)
        s = grip_cuda_alloc(ctx, count * sizeof(uint32_t), &ids);
    if (!s)
        s = grip_cuda_alloc(ctx, count * sizeof(float), &sqdist);
    if (!s)
        s = grip_bruteforce_cuda_search_device(ctx, by_query, gathered, count, 1, INFINITY, ids, sqdist);
    if (!s)
        s = grip_cuda_copy_to_host(ctx, nearest, ids, count * sizeof(uint32_t));
    grip_cuda_free(sqdist);
    grip_cuda_free(ids);
    grip_cuda_free(gathered);
    grip_bruteforce_cuda_ref_free(by_query);
    return s;
}

grip_status grip_match_nearest_queries_listed(grip_ctx *ctx, int use_cuda,
                                              const grip_bruteforce_cuda_options *cuda_options,
                                              const grip_array *reference, const grip_array *queries,
                                              const uint32_t *ids, uint32_t list_k, uint32_t *nearest_query)
{
    const size_t n = (size_t)reference->rows, m = (size_t)queries->rows;
    if ((n && !nearest_query) || (m && list_k && !ids))
        return grip_fail(ctx, GRIP_EINVAL, "match.mutual: %s is NULL", ids ? "nearest_query" : "ids");
    uint32_t *rows = NULL;
    size_t count = 0;
    grip_status s = listed_rows(ctx, ids, m * list_k, n, nearest_query, &rows, &count);
    if (s || count == 0)
        return s;
    uint32_t *nearest = malloc(count * sizeof *nearest);
    if (!nearest)
        s = grip_fail(ctx, GRIP_ENOMEM, "match.mutual: cannot allocate %zu row ids", count);
    else if (use_cuda)
        s = search_cuda(ctx, cuda_options, reference, queries, rows, count, nearest);
    else
        s = search_cpu(ctx, reference, queries, rows, count, nearest);
    for (size_t i = 0; !s && i < count; i++)
        nearest_query[rows[i]] = nearest[i];
    free(nearest);
    free(rows);
    return s;
}
