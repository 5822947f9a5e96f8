/* index_kdtree_hd.c -- see index_kdtree_hd.h. */
#include "stages/index_kdtree_hd.h"
#include "index/kdtree_hd_cuda.h"
#include "stages/index_common.h"

#include <stdlib.h>

typedef struct kdtree_hd_index {
    grip_index_head head;         /* the public struct first; head.ctx is the stage's context */
    grip_kdtree_hd_search_params search;
    float *rows;                  /* host copy; NULL on a CUDA stage until a CPU search needs it */
    grip_kdtree_hd *tree;         /* host forest; likewise */
    grip_kdtree_hd_cuda *device;  /* NULL on a CPU stage */
} kdtree_hd_index;

static void kdtree_hd_index_release(grip_index_head *head)
{
    kdtree_hd_index *ix = (kdtree_hd_index *)head;
    grip_array_free_host(&ix->head.pub.model_ids);
    grip_kdtree_hd_cuda_free(ix->device);
    grip_kdtree_hd_free(ix->tree);
    free(ix->rows);
    free(ix);
}

/* Host copies of the device's rows and forest, for the CPU twin. */
static grip_status host_copies(kdtree_hd_index *ix)
{
    grip_status s = grip_index_host_copy(ix->head.ctx, &ix->head.pub, &ix->rows);
    if (s)
        return s;
    return ix->tree ? GRIP_OK : grip_kdtree_hd_cuda_download(ix->head.ctx, ix->device, &ix->tree);
}

static grip_status search_on_device(kdtree_hd_index *ix, const grip_array *queries, uint32_t k, float max_sqdist,
                                    grip_array *ids, grip_array *sqdist)
{
    grip_index_search_dev io;
    grip_status s = grip_index_search_device_begin(ix->head.ctx, &ix->head.pub, queries, k, ids, sqdist, &io);
    if (s)
        return s;
    s = grip_kdtree_hd_cuda_search(ix->head.ctx, ix->device, io.queries, io.m, k, ix->search.checks,
                                   ix->search.finish_below, max_sqdist, io.ids, io.sqdist);
    return grip_index_search_device_end(ix->head.ctx, &io, s, ids, sqdist);
}

static grip_status kdtree_hd_index_search(grip_index_head *head, const grip_array *queries, uint32_t k,
                                          float max_sqdist, grip_array *ids, grip_array *sqdist)
{
    kdtree_hd_index *ix = (kdtree_hd_index *)head;
    grip_index *self = &head->pub;
    if (ix->device && k <= GRIP_KDTREE_HD_CUDA_MAX_K)
        return search_on_device(ix, queries, k, max_sqdist, ids, sqdist);
    grip_index_search_io io;
    grip_status s = grip_index_search_begin(ix->head.ctx, self, queries, k, ids, sqdist, &io);
    if (s)
        return s;
    s = host_copies(ix);
    if (!s)
        s = grip_kdtree_hd_search(ix->head.ctx, ix->tree, ix->rows, io.queries, io.m, k, ix->search.checks,
                                  ix->search.finish_below, max_sqdist, io.ids, io.sqdist);
    return grip_index_search_end(ix->head.ctx, &io, s, ids, sqdist);
}

/* The device forest over the reference rows (host or device memory), and the index's reference array over its
 * rows. */
static grip_status device_build(kdtree_hd_index *ix, const grip_array *reference, const grip_kdtree_hd_params *p)
{
    size_t n = (size_t)ix->head.pub.rows;
    grip_status s = grip_kdtree_hd_cuda_build(ix->head.ctx, reference->data, reference->memory == GRIP_MEM_CUDA, n,
                                              ix->head.pub.dim, p, &ix->device);
    if (s)
        return s;
    grip_index_reference_on_device(ix->head.ctx, &ix->head.pub, grip_kdtree_hd_cuda_rows(ix->device));
    return GRIP_OK;
}

/* One build() where st->use_cuda says. */
static grip_status build_once(grip_stage *st, const grip_array *reference, const grip_array *model_ids,
                              const grip_kdtree_hd_params *tree, const grip_kdtree_hd_search_params *search,
                              grip_index **out)
{
    grip_status s = grip_stage_check_run(st, out, GRIP_MEM_HOST);
    if (s)
        return s;
    kdtree_hd_index *ix = calloc(1, sizeof *ix);
    if (!ix)
        return grip_fail(st->ctx, GRIP_ENOMEM, "index: out of memory");
    grip_index_head_init(&ix->head, st->ctx, kdtree_hd_index_search, kdtree_hd_index_release);
    ix->search = *search;
    s = grip_index_init(st->ctx, &ix->head.pub, reference, model_ids, st->use_cuda ? NULL : &ix->rows);
    if (!s && st->use_cuda) {
        s = device_build(ix, reference, tree);
    } else if (!s) {
        ix->head.pub.reference = grip_array_host_view(GRIP_F32, ix->head.pub.rows, ix->head.pub.dim, ix->rows);
        s = grip_kdtree_hd_build(st->ctx, ix->rows, (size_t)ix->head.pub.rows, ix->head.pub.dim, tree, &ix->tree);
    }
    if (s) {
        kdtree_hd_index_release(&ix->head);
        return s;
    }
    ix->head.pub.exact = search->checks == 0;
    *out = &ix->head.pub;
    return GRIP_OK;
}

grip_status grip_kdtree_hd_index_build(grip_stage *st, const grip_array *reference, const grip_array *model_ids,
                                       const grip_kdtree_hd_params *tree, const grip_kdtree_hd_search_params *search,
                                       grip_index **out)
{
    grip_status s;
    GRIP_STAGE_CALL(st, s, build_once(st, reference, model_ids, tree, search, out));
    return s;
}
