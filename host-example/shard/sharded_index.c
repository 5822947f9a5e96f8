/* sharded_index.c -- see sharded_index.h. */
#include "shard/sharded_index.h"
#include "shard/shard.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sharded_index {
    grip_index pub; /* first: the match stage sees this */
    shard_comm *comm;
    grip_index *local; /* the stage's index over rows [first, first + count) */
    uint64_t first;
} sharded_index;

static void sharded_release(grip_index *self)
{
    sharded_index *s = (sharded_index *)self;
    if (s->local)
        s->local->release(s->local);
    free(s);
}

static int host_array_of(const grip_array *a, uint32_t dtype)
{
    return a && a->memory == GRIP_MEM_HOST && a->dtype == dtype && (a->rows == 0 || a->data);
}

/* Every rank searches its shard and the k-lists are merged across ranks. A rank whose search failed still joins
 * the merge (with empty lists), so that no rank waits; then the ranks agree, and any failure fails every rank. */
static grip_status sharded_search(grip_index *self, const grip_array *queries, uint32_t k, float max_sqdist,
                                  grip_array *ids, grip_array *sqdist)
{
    sharded_index *s = (sharded_index *)self;
    if (!host_array_of(queries, GRIP_F32) || !host_array_of(ids, GRIP_U32) || !host_array_of(sqdist, GRIP_F32) ||
        queries->cols != self->dim || ids->rows != queries->rows || sqdist->rows != queries->rows || ids->cols != k ||
        sqdist->cols != k || k == 0)
        return GRIP_EINVAL; /* the same on every rank: the pipeline is */
    size_t m = (size_t)queries->rows, n = m * k;
    shard_hit *hits = malloc(n * sizeof *hits + 1);
    grip_status st = hits ? GRIP_OK : GRIP_ENOMEM;
    if (!st)
        st = s->local->search(s->local, queries, k, max_sqdist, ids, sqdist);
    char why[512] = "";
    if (st)
        snprintf(why, sizeof why, "index search on this rank's shard: status %d", (int)st);
    if (hits) {
        if (st)
            for (size_t i = 0; i < n; i++)
                hits[i] = (shard_hit){INFINITY, UINT32_MAX};
        else
            shard_hits_of(ids->data, sqdist->data, m, k, s->first, hits);
        if (shard_comm_allreduce_hits(s->comm, hits, m, k, "index search") != 0)
            shard_comm_abort(s->comm, 3);
    }
    int failed = shard_comm_agree(s->comm, hits ? why : "out of memory for the k-lists");
    if (failed < 0 || (!hits && failed == 0))
        shard_comm_abort(s->comm, 3);
    if (failed == 0) {
        uint32_t *id = ids->data;
        float *d = sqdist->data;
        for (size_t i = 0; i < n; i++) {
            id[i] = hits[i].row;
            d[i] = hits[i].sqdist;
        }
    }
    free(hits);
    return failed ? (st ? st : GRIP_EINTERNAL) : GRIP_OK;
}

int sharded_index_build(shard_comm *c, const grip_plugin *plugin, grip_ctx *ctx, const grip_stage_impl *impl,
                        grip_stage *stage, const grip_array *reference, const grip_array *model_ids, grip_index **out,
                        char *why, size_t whylen)
{
    *out = NULL;
    why[0] = 0;
    uint64_t n = reference->rows, first = 0, count = 0;
    sharded_index *s = calloc(1, sizeof *s);
    if (!s)
        snprintf(why, whylen, "out of memory");
    else if (n < (uint64_t)c->size || n >= UINT32_MAX)
        snprintf(why, whylen, "%llu reference rows for %d ranks: at least one a rank, below 2^32",
                 (unsigned long long)n, c->size);
    if (!why[0]) {
        shard_range(n, c->size, c->rank, &first, &count);
        grip_array part = *reference;
        part.rows = count;
        part.data = (float *)reference->data + first * reference->cols;
        grip_array part_ids = *model_ids;
        part_ids.rows = count;
        part_ids.data = (uint32_t *)model_ids->data + first;
        grip_status st = impl->build(stage, &part, &part_ids, &s->local);
        if (st)
            snprintf(why, whylen, "index '%s' on rows %llu to %llu: %s: %s", impl->name, (unsigned long long)first,
                     (unsigned long long)(first + count), plugin->status_str(st), plugin->ctx_last_error(ctx));
    }
    int failed = shard_comm_agree(c, why);
    if (failed != 0) {
        if (s)
            sharded_release(&s->pub);
        if (failed < 0)
            shard_comm_abort(c, 3);
        if (!why[0])
            snprintf(why, whylen, "another rank failed (rank 0 says which)");
        return -1;
    }
    uint32_t n_models = 0;
    const uint32_t *ids = model_ids->data;
    for (uint64_t r = 0; r < n; r++)
        n_models = ids[r] + 1 > n_models ? ids[r] + 1 : n_models;
    s->comm = c;
    s->first = first;
    s->pub.struct_size = sizeof s->pub;
    s->pub.rows = n;
    s->pub.dim = (uint32_t)reference->cols;
    s->pub.n_models = n_models;
    s->pub.model_ids = *model_ids;
    s->pub.search = sharded_search;
    /* a plugin's index is read only within its struct_size */
    s->pub.exact = s->local->struct_size >= offsetof(grip_index, exact) + sizeof s->local->exact ? s->local->exact : 0;
    s->pub.reference = *reference;
    s->pub.release = sharded_release;
    *out = &s->pub;
    return 0;
}
