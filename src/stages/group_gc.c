/* group_gc.c -- the `gc` group stage: geometric consistency of keypoint distances (PCL's
 * GeometricConsistencyGrouping), RANSAC-filtered. With the CUDA backend the consensus runs on the GPU
 * (group/gc_cuda.h) and RANSAC on the host, as on the CPU. */
#include "stages/stage.h"
#include "stages/group_common.h"
#include "stages/registry.h"
#include "group/gc.h"
#include "group/gc_cuda.h"

#include <stdio.h>
#include <stdlib.h>

static const grip_param_info gc_params[] = {
    GRIP_PARAM_DEVICE,
    GRIP_PARAM_FALLBACK,
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "size", "0.01", 1e-9, 100, NULL,
     "largest disagreement between scene and model keypoint distances within a set (cloud units)",
     GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "threshold", "5", 0, 1000000, NULL,
     "a set is an instance when it has more correspondences than this"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "ransac_iterations", "10000", 1, 100000000, NULL,
     "RANSAC iterations filtering each instance (PCL: 10000)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "seed", "12345", 0, 4294967295.0, NULL,
     "RANSAC random seed (12345 draws PCL's samples)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "ransac_rounds", "1", 1, 16, NULL,
     "consensus sets drawn from each consistent set: RANSAC again on the correspondences earlier sets left, each "
     "further set with more than `threshold` of them a hypothesis of its own (PCL: 1)"},
};

static grip_status group_model(grip_stage *st, const grip_view *model, uint32_t m, const grip_group_corrs *corrs,
                               const grip_group_keypoints *scene_kp, const float *scene_rf, void *part,
                               grip_hypotheses *h)
{
    (void)scene_rf; /* consistency of distances needs no frames */
    (void)part;     /* no step before */
    grip_ctx *ctx = st->ctx;
    grip_gc_params p = grip_gc_params_default();
    p.size = grip_stage_number(st, "size");
    p.threshold = (int)grip_stage_integer(st, "threshold");
    p.ransac_iterations = (uint32_t)grip_stage_integer(st, "ransac_iterations");
    p.seed = (uint32_t)grip_stage_integer(st, "seed");
    p.ransac_rounds = (uint32_t)grip_stage_integer(st, "ransac_rounds");
    grip_group_keypoints kp;
    grip_cluster *clusters = NULL;
    size_t n_clusters = 0;
    char what[64];
    snprintf(what, sizeof what, "group: models[%u].features", m);
    grip_status s = grip_group_keypoints_open(ctx, model, what, &kp);
    if (!s)
        s = (st->use_cuda ? grip_gc_cluster_cuda : grip_gc_cluster)(ctx, &p, kp.xyz, kp.n, scene_kp->xyz, scene_kp->n,
                                                                     corrs->corr, corrs->n, &clusters, &n_clusters);
    if (!s)
        s = grip_hypotheses_append(ctx, h, m, clusters, n_clusters, corrs);
    grip_clusters_free(clusters, n_clusters);
    grip_group_keypoints_close(&kp);
    return s;
}

static grip_status gc_group(grip_stage *st, const grip_view *models, uint32_t n_models, const grip_view *scene,
                            const grip_matches *matches, grip_hypotheses **out)
{
    grip_status s = grip_stage_check_call(&grip_group_gc, st, out, GRIP_MEM_HOST);
    if (!s) {
        static const grip_group_steps steps = {NULL, NULL, NULL, group_model, 0};
        GRIP_STAGE_CALL(st, s, grip_group_run(st, models, n_models, scene, matches, &steps, out));
    }
    return s;
}

static grip_status gc_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_group_gc = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_GROUP,
    .name = "gc",
    .summary =
        "geometric consistency of keypoint distances, RANSAC-filtered instances (PCL GeometricConsistencyGrouping)",
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
    .n_params = sizeof gc_params / sizeof gc_params[0],
    .params = gc_params,
    .create = gc_create,
    .destroy = grip_stage_destroy,
    .group = gc_group,
};

static grip_status gc_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_group_gc, ctx, kv, n_kv, out);
}
