/* gc.c -- see gc.h. The pairwise test is gc_math.h's, shared with the CUDA kernels. */
#include "group/gc.h"
#include "group/gc_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

grip_gc_params grip_gc_params_default(void)
{
    grip_gc_params p = {1.0, 3, GRIP_RANSAC_PCL_ITERATIONS, GRIP_RANSAC_PCL_SEED, 1};
    return p;
}

/* A correspondence in the visiting order: by descriptor distance, ties by index. */
typedef struct ranked_corr {
    float sqdist;
    uint32_t index;
} ranked_corr;

static int by_distance_then_index(const void *a, const void *b)
{
    const ranked_corr *x = a, *y = b;
    if (x->sqdist != y->sqdist)
        return x->sqdist < y->sqdist ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Whether correspondence j agrees with every member of the set (positions in the visiting order). */
static int consistent_with_set(const grip_corr *corr, const ranked_corr *order, const size_t *set, size_t n_set,
                               uint32_t j, const float *model_kp_xyz, const float *scene_kp_xyz, double size)
{
    const float *sj = scene_kp_xyz + (size_t)corr[j].scene * 3, *mj = model_kp_xyz + (size_t)corr[j].model * 3;
    for (size_t a = 0; a < n_set; ++a) {
        const grip_corr *k = &corr[order[set[a]].index];
        if (!grip_gc_consistent(scene_kp_xyz + (size_t)k->scene * 3, model_kp_xyz + (size_t)k->model * 3, sj, mj,
                                size))
            return 0;
    }
    return 1;
}

grip_status grip_gc_check_params(grip_ctx *ctx, const grip_gc_params *params)
{
    if (!params)
        return grip_fail(ctx, GRIP_EINVAL, "group.gc: parameters must not be NULL");
    if (!(params->size > 0.0) || !isfinite(params->size))
        return grip_fail(ctx, GRIP_EINVAL, "group.gc.size: %g must be finite and > 0", params->size);
    return GRIP_OK;
}

/* Appends the set (positions in the visiting order) as a cluster of correspondence indices; *clusters grows
 * by doubling. */
static grip_status push_cluster(grip_ctx *ctx, grip_cluster **clusters, size_t *n, size_t *cap,
                                const ranked_corr *order, const size_t *set, size_t n_set)
{
    if (*n == *cap) {
        size_t bigger = *cap ? *cap * 2 : 4;
        grip_cluster *grown = realloc(*clusters, bigger * sizeof *grown);
        if (!grown)
            return grip_fail(ctx, GRIP_ENOMEM, "group.gc: out of memory for %zu clusters", bigger);
        *clusters = grown;
        *cap = bigger;
    }
    grip_cluster *c = &(*clusters)[*n];
    c->members = malloc(n_set * sizeof *c->members);
    if (!c->members)
        return grip_fail(ctx, GRIP_ENOMEM, "group.gc: out of memory for a %zu-member cluster", n_set);
    for (size_t a = 0; a < n_set; ++a)
        c->members[a] = order[set[a]].index;
    c->n_members = (uint32_t)n_set;
    c->votes = (double)n_set;
    grip_pose_identity(c->pose);
    ++*n;
    return GRIP_OK;
}

static grip_status grow_sets(grip_ctx *ctx, const grip_gc_params *params, const float *model_kp_xyz,
                             const float *scene_kp_xyz, const grip_corr *corr, size_t n_corr, const ranked_corr *order,
                             size_t *set, unsigned char *taken, grip_cluster **clusters, size_t *n_clusters)
{
    size_t cap = 0;
    for (size_t i = 0; i < n_corr; ++i) {
        if (taken[i])
            continue;
        size_t n_set = 0;
        set[n_set++] = i;
        for (size_t j = 0; j < n_corr; ++j)
            if (j != i && !taken[j] &&
                consistent_with_set(corr, order, set, n_set, order[j].index, model_kp_xyz, scene_kp_xyz, params->size))
                set[n_set++] = j;
        if ((long long)n_set <= (long long)params->threshold)
            continue;
        grip_status st = push_cluster(ctx, clusters, n_clusters, &cap, order, set, n_set);
        if (st != GRIP_OK)
            return st;
        for (size_t a = 0; a < n_set; ++a)
            taken[set[a]] = 1;
    }
    return GRIP_OK;
}

grip_status grip_gc_consensus(grip_ctx *ctx, const grip_gc_params *params, const float *model_kp_xyz, size_t n_model_kp,
                              const float *scene_kp_xyz, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                              grip_cluster **out, size_t *n_out)
{
    if (!out || !n_out)
        return grip_fail(ctx, GRIP_EINVAL, "group.gc: out and n_out must not be NULL");
    *out = NULL;
    *n_out = 0;
    grip_status st = grip_gc_check_params(ctx, params);
    if (st == GRIP_OK)
        st = grip_corr_check(ctx, "group.gc", corr, n_corr, model_kp_xyz, n_model_kp, scene_kp_xyz, n_scene_kp);
    if (st != GRIP_OK || n_corr == 0)
        return st;

    ranked_corr *order = malloc(n_corr * sizeof *order);
    size_t *set = malloc(n_corr * sizeof *set);
    unsigned char *taken = calloc(n_corr, 1);
    if (!order || !set || !taken) {
        st = grip_fail(ctx, GRIP_ENOMEM, "group.gc: out of memory for %zu correspondences", n_corr);
    } else {
        for (size_t i = 0; i < n_corr; ++i) {
            order[i].sqdist = corr[i].sqdist;
            order[i].index = (uint32_t)i;
        }
        qsort(order, n_corr, sizeof *order, by_distance_then_index);
        st = grow_sets(ctx, params, model_kp_xyz, scene_kp_xyz, corr, n_corr, order, set, taken, out, n_out);
    }
    free(order);
    free(set);
    free(taken);
    if (st != GRIP_OK) {
        grip_clusters_free(*out, *n_out);
        *out = NULL;
        *n_out = 0;
    }
    return st;
}

grip_status grip_gc_cluster(grip_ctx *ctx, const grip_gc_params *params, const float *model_kp_xyz, size_t n_model_kp,
                            const float *scene_kp_xyz, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                            grip_cluster **out, size_t *n_out)
{
    grip_status st = grip_gc_consensus(ctx, params, model_kp_xyz, n_model_kp, scene_kp_xyz, n_scene_kp, corr, n_corr,
                                       out, n_out);
    if (st != GRIP_OK)
        return st;
    const grip_ransac_params rp = {params->size, params->ransac_iterations, params->seed, params->ransac_rounds,
                                   params->threshold >= 0 ? (uint32_t)params->threshold + 1 : 0};
    return grip_clusters_ransac(ctx, &rp, model_kp_xyz, scene_kp_xyz, corr, out, n_out);
}
