/* group_hough3d.c -- the `hough3d` group stage: 3D Hough voting in local reference frames (PCL's
 * Hough3DGrouping), with BOARD frames computed here (as PCL's tutorial does) or the descriptor's own frames.
 * With the CUDA backend the voting runs on the GPU (group/hough3d_cuda.h), and so do BOARD frames when their ties
 * are decided nearest-first (PCL's tie order needs FLANN's tree, which only the CPU twin has); then every model's
 * vote runs at once, each on a worker context and stream of its own (stages/group_common.h, the prepare step).
 * RANSAC runs on the host on both backends, the models in turn. */
#include "stages/stage.h"
#include "stages/cloud_input.h"
#include "stages/group_common.h"
#include "stages/registry.h"
#include "stages/results.h"
#include "group/board_lrf.h"
#include "group/board_lrf_cuda.h"
#include "group/hough3d.h"
#include "group/hough3d_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const grip_param_info hough3d_params[] = {
    GRIP_PARAM_DEVICE,
    GRIP_PARAM_FALLBACK,
    {sizeof(grip_param_info), GRIP_PARAM_ENUM, "frames", "board", 0, 0, "board|descriptor",
     "local reference frames to vote in: BOARD frames computed here, or the descriptor stage's frames"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "frame_radius", "0.015", 1e-6, 100, NULL,
     "BOARD frame support radius (cloud units)", GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_BOOL, "find_holes", "true", 0, 0, NULL,
     "BOARD's search for holes in the support"},
    {sizeof(grip_param_info), GRIP_PARAM_ENUM, "frame_ties", "pcl", 0, 0, "pcl|nearest",
     "which of equal BOARD candidates x is built on: PCL's (FLANN's order; computed on the CPU) or the nearest "
     "(computed on the GPU with device cuda, same frames on both backends)"},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "bin_size", "0.01", 1e-6, 100, NULL, "Hough bin edge (cloud units)",
     GRIP_PARAM_FLAG_LENGTH},
    {sizeof(grip_param_info), GRIP_PARAM_FLOAT, "threshold", "5", -1e9, 1e9, NULL,
     "minimum votes of an instance; in [-1, 0): a fraction of the largest bin"},
    {sizeof(grip_param_info), GRIP_PARAM_BOOL, "interpolation", "true", 0, 0, NULL, "spread each vote over 8 bins"},
    {sizeof(grip_param_info), GRIP_PARAM_BOOL, "distance_weight", "false", 0, 0, NULL,
     "weight votes by descriptor distance"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "ransac_iterations", "10000", 1, 100000000, NULL,
     "RANSAC iterations filtering each instance (PCL: 10000)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "seed", "12345", 0, 4294967295.0, NULL,
     "RANSAC random seed (12345 draws PCL's samples)"},
    {sizeof(grip_param_info), GRIP_PARAM_INT, "ransac_rounds", "1", 1, 16, NULL,
     "consensus sets drawn from each bin: RANSAC again on the correspondences earlier sets left, each further set "
     "with at least `threshold` of them a hypothesis of its own (for objects whose votes agree on where but not "
     "on how turned, as a mug's body; PCL: 1)"},
};

/* Frames of a view's keypoints (k x 9, malloc'd into *frames; the caller frees). */
static grip_status view_frames(grip_stage *st, const grip_view *view, const grip_group_keypoints *kp, float **frames)
{
    grip_ctx *ctx = st->ctx;
    const grip_features *f = view->features;
    *frames = malloc(kp->n * 9 * sizeof **frames + 1);
    if (!*frames)
        return grip_fail(ctx, GRIP_ENOMEM, "group: out of memory");
    if (grip_stage_choice(st, "frames") == 1) { /* the descriptor's frames */
        grip_array host;
        int own = 0;
        grip_status s = grip_array_check(ctx, &f->frames, GRIP_F32, 9, "group: features.frames");
        if (!s && f->frames.rows != kp->n)
            s = grip_fail(ctx, GRIP_EINVAL, "group.frames: 'descriptor' asked for, but the features carry no frames");
        if (!s)
            s = grip_array_to_host(ctx, &f->frames, &host, &own, "group: features.frames");
        if (!s)
            memcpy(*frames, host.data, kp->n * 9 * sizeof **frames);
        if (own)
            grip_array_free_host(&host);
        return s;
    }
    grip_cloud_input cloud;
    grip_array normals;
    int own_normals = 0;
    grip_status s = grip_cloud_input_open(ctx, view->cloud, "group: view.cloud", &cloud);
    if (!s)
        s = grip_array_check(ctx, &f->normals, GRIP_F32, 4, "group: features.normals");
    if (!s && f->normals.rows != cloud.n)
        s = grip_fail(ctx, GRIP_EINVAL,
                      "group: BOARD frames need the cloud's normals (%zu rows), the features have %llu", cloud.n,
                      (unsigned long long)f->normals.rows);
    float radius = (float)grip_stage_number(st, "frame_radius");
    int holes = grip_stage_bool(st, "find_holes");
    grip_board_ties ties = grip_stage_choice(st, "frame_ties") == 1 ? GRIP_BOARD_TIES_NEAREST : GRIP_BOARD_TIES_PCL;
    const int on_device = st->use_cuda && ties == GRIP_BOARD_TIES_NEAREST;
    /* normals a descriptor left on this context's device stay there for the GPU frames */
    const int normals_on_device = on_device && grip_array_on_ctx_device(ctx, &f->normals);
    const float *xyz_dev = !s && on_device ? grip_view_device_xyz(ctx, view, cloud.n) : NULL;
    /* the descriptor's own surface of this cloud, grid and normals, when it left one with the features */
    const grip_surface_cuda *kept = !s && on_device ? grip_features_kept_surface(ctx, f, cloud.n) : NULL;
    if (!s && normals_on_device)
        normals = f->normals;
    else if (!s)
        s = grip_array_to_host(ctx, &f->normals, &normals, &own_normals, "group: features.normals");
    if (!s && kept)
        s = grip_board_lrf_cuda_on_surface(ctx, kept, kp->xyz, kp->n, radius, holes, *frames);
    else if (!s && on_device)
        s = grip_board_lrf_cuda_host(ctx, xyz_dev ? xyz_dev : cloud.xyz, xyz_dev ? GRIP_MEM_CUDA : GRIP_MEM_HOST,
                                     normals.data, normals_on_device ? GRIP_MEM_CUDA : GRIP_MEM_HOST, cloud.n, kp->xyz,
                                     kp->n, radius, holes, *frames);
    else if (!s) /* a NULL tree: BOARD builds its own over the cloud */
        s = grip_board_lrf_ties(ctx, cloud.xyz, normals.data, cloud.n, NULL, kp->xyz, kp->n, radius, holes, ties,
                                *frames);
    if (own_normals)
        grip_array_free_host(&normals);
    grip_cloud_input_close(&cloud);
    return s;
}

static grip_hough3d_params hough_params_of(const grip_stage *st)
{
    grip_hough3d_params p = grip_hough3d_params_default();
    p.bin_size = grip_stage_number(st, "bin_size");
    p.threshold = grip_stage_number(st, "threshold");
    p.use_interpolation = grip_stage_bool(st, "interpolation");
    p.use_distance_weight = grip_stage_bool(st, "distance_weight");
    p.ransac_iterations = (uint32_t)grip_stage_integer(st, "ransac_iterations");
    p.seed = (uint32_t)grip_stage_integer(st, "seed");
    p.ransac_rounds = (uint32_t)grip_stage_integer(st, "ransac_rounds");
    return p;
}

/* A model's Hough vote, before its RANSAC: its keypoints, their frames and the clusters of the vote. */
typedef struct model_votes {
    grip_group_keypoints kp;
    float *model_rf;
    grip_cluster *clusters;
    size_t n_clusters;
} model_votes;

static void model_votes_free(void *part)
{
    model_votes *v = part;
    if (!v)
        return;
    grip_clusters_free(v->clusters, v->n_clusters);
    free(v->model_rf);
    grip_group_keypoints_close(&v->kp);
    free(v);
}

/* Model m's vote (the prepare step: on a CUDA device every model's at once, each on a worker). */
static grip_status vote_model(grip_stage *st, const grip_view *model, uint32_t m, const grip_group_corrs *corrs,
                              const grip_group_keypoints *scene_kp, const float *scene_rf, void **part)
{
    grip_ctx *ctx = st->ctx;
    *part = NULL;
    model_votes *v = calloc(1, sizeof *v);
    if (!v)
        return grip_fail(ctx, GRIP_ENOMEM, "group: out of memory");
    grip_hough3d_params p = hough_params_of(st);
    char what[64];
    snprintf(what, sizeof what, "group: models[%u].features", m);
    grip_status s = grip_group_keypoints_open(ctx, model, what, &v->kp);
    if (!s)
        s = view_frames(st, model, &v->kp, &v->model_rf);
    if (!s)
        s = (st->use_cuda ? grip_hough3d_vote_cuda
                          : grip_hough3d_vote)(ctx, &p, v->kp.xyz, v->model_rf, v->kp.n, scene_kp->xyz, scene_rf,
                                               scene_kp->n, corrs->corr, corrs->n, &v->clusters, &v->n_clusters);
    if (s) {
        model_votes_free(v);
        return s;
    }
    *part = v;
    return GRIP_OK;
}

/* Model m's RANSAC over its vote's clusters, whose instances go into h (the models in turn: a long search uses
 * every thread of the context). */
static grip_status group_model(grip_stage *st, const grip_view *model, uint32_t m, const grip_group_corrs *corrs,
                               const grip_group_keypoints *scene_kp, const float *scene_rf, void *part,
                               grip_hypotheses *h)
{
    (void)model;
    (void)scene_rf;
    grip_ctx *ctx = st->ctx;
    model_votes *v = part;
    const grip_hough3d_params p = hough_params_of(st);
    const grip_ransac_params rp = grip_hough3d_ransac_params(&p);
    grip_status s = grip_clusters_ransac(ctx, &rp, v->kp.xyz, scene_kp->xyz, corrs->corr, &v->clusters, &v->n_clusters);
    if (!s)
        s = grip_hypotheses_append(ctx, h, m, v->clusters, v->n_clusters, corrs);
    return s;
}

static grip_status hough3d_group(grip_stage *st, const grip_view *models, uint32_t n_models, const grip_view *scene,
                                 const grip_matches *matches, grip_hypotheses **out)
{
    grip_status s = grip_stage_check_call(&grip_group_hough3d, st, out, GRIP_MEM_HOST);
    if (s)
        return s;
    /* the descriptor's frames are copied, BOARD frames with nearest ties computed on the device: a model's vote is
     * then the device's work, and the models vote at once; BOARD frames with PCL's ties are the CPU's */
    const int cpu_frames = grip_stage_choice(st, "frames") == 0 && grip_stage_choice(st, "frame_ties") == 0;
    const grip_group_steps steps = {view_frames, vote_model, model_votes_free, group_model, !cpu_frames};
    GRIP_STAGE_CALL(st, s, grip_group_run(st, models, n_models, scene, matches, &steps, out));
    return s;
}

static grip_status hough3d_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out);

const grip_stage_impl grip_group_hough3d = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_GROUP,
    .name = "hough3d",
    .summary = "3D Hough voting in BOARD (or descriptor) frames, RANSAC-filtered instances (PCL Hough3DGrouping)",
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
    .n_params = sizeof hough3d_params / sizeof hough3d_params[0],
    .params = hough3d_params,
    .create = hough3d_create,
    .destroy = grip_stage_destroy,
    .group = hough3d_group,
};

static grip_status hough3d_create(grip_ctx *ctx, const grip_kv *kv, uint32_t n_kv, grip_stage **out)
{
    return grip_stage_create(&grip_group_hough3d, ctx, kv, n_kv, out);
}
