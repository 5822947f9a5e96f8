/* no_cuda.c -- what a build without nvcc compiles in place of cuda/: every CUDA entry point the C11 side declares
 * (the *_cuda.h headers and core/cuda_bridge.h) answers that this build has no GPU: GRIP_EUNSUPPORTED with a text
 * naming what was asked for, outputs cleared; the device count is 0, so `device = auto` picks the CPU twins and
 * `device = cuda` is refused at create(). Freeing accepts what such a build can hand out (NULL handles, zeroed
 * lists). CMakeLists.txt chooses this file or cuda/, never both (libuv's no-fsevents.c pattern). */
#include <string.h>

#include "core/cuda_bridge.h"
#include "core/ctx.h"
#include "spatial/neighborhood_cuda.h"
#include "spatial/kdtree3d_cuda.h"
#include "descriptor/normals_cuda.h"
#include "descriptor/normals_propagate_cuda.h"
#include "descriptor/uniform_sampling_cuda.h"
#include "descriptor/voxel_grid_cuda.h"
#include "descriptor/shot_cuda.h"
#include "descriptor/fpfh_cuda.h"
#include "descriptor/pfh_cuda.h"
#include "descriptor/spin_image_cuda.h"
#include "descriptor/surf_cuda.h"
#include "index/bruteforce_cuda.h"
#include "index/kdtree_hd_cuda.h"
#include "verify/ghv_cuda.h"
#include "group/board_lrf_cuda.h"
#include "group/hough3d_cuda.h"
#include "group/gc_cuda.h"
#include "verify/icp_cuda.h"
#include "verify/free_space_cuda.h"

static grip_status no_cuda(grip_ctx *ctx, const char *what)
{
    return grip_fail(ctx, GRIP_EUNSUPPORTED, "%s (cuda): asked for from a CPU-only build of grip", what);
}

/* ---- core/cuda_bridge.h ---- */

int grip_cuda_device_count(void) { return 0; }
void grip_cuda_ctx_release(grip_ctx *ctx) { (void)ctx; }
grip_status grip_cuda_pool_usage(grip_ctx *ctx, grip_cuda_pool_figures *out)
{
    (void)ctx;
    memset(out, 0, sizeof *out); /* no device, no pool: nothing reserved */
    return GRIP_OK;
}
grip_status grip_cuda_pool_trim(grip_ctx *ctx)
{
    (void)ctx;
    return GRIP_OK;
}
grip_status grip_cuda_ctx_prepare(grip_ctx *ctx)
{
    return no_cuda(ctx, "a device");
}
grip_status grip_cuda_copy_to_host(grip_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    (void)dst; (void)src; (void)bytes;
    return no_cuda(ctx, "device memory");
}
grip_status grip_cuda_upload(grip_ctx *ctx, const void *host, size_t bytes, void **dev, int *device)
{
    (void)host; (void)bytes;
    *dev = NULL;
    *device = -1;
    return no_cuda(ctx, "device memory");
}
void grip_cuda_free(void *dev) { (void)dev; }
grip_status grip_cuda_sync(grip_ctx *ctx)
{
    return no_cuda(ctx, "CUDA work");
}
grip_status grip_cuda_alloc(grip_ctx *ctx, size_t bytes, void **dev)
{
    (void)bytes;
    *dev = NULL;
    return no_cuda(ctx, "device memory");
}
grip_status grip_cuda_copy_to_device(grip_ctx *ctx, void *dev, const void *host, size_t bytes)
{
    (void)dev; (void)host; (void)bytes;
    return no_cuda(ctx, "device memory");
}
grip_status grip_cuda_copy_on_device(grip_ctx *ctx, void *dst, const void *src, size_t bytes)
{
    (void)dst; (void)src; (void)bytes;
    return no_cuda(ctx, "device memory");
}
grip_status grip_cuda_gather_rows4(grip_ctx *ctx, const float *rows, const uint32_t *idx, size_t count, float *out)
{
    (void)rows; (void)idx; (void)count; (void)out;
    return no_cuda(ctx, "device memory");
}
grip_status grip_cuda_gather_rows(grip_ctx *ctx, const float *rows, size_t dim, const uint32_t *row_ids, size_t count,
                                  float *out)
{
    (void)rows; (void)dim; (void)row_ids; (void)count; (void)out;
    return no_cuda(ctx, "device memory");
}

/* ---- spatial/neighborhood_cuda.h ---- */

grip_status grip_surface_cuda_create(grip_ctx *ctx, const float *xyz, size_t n, grip_surface_cuda **out)
{
    (void)xyz; (void)n;
    *out = NULL;
    return no_cuda(ctx, "surface");
}

grip_status grip_surface_cuda_create_on_device(grip_ctx *ctx, const float *xyz_dev, size_t n,
                                               grip_surface_cuda **out)
{
    (void)xyz_dev; (void)n;
    *out = NULL;
    return no_cuda(ctx, "surface");
}

void grip_surface_cuda_free(grip_surface_cuda *s)
{
    (void)s; /* no surface can exist in this build */
}

grip_surface_cuda_view grip_surface_cuda_get_view(const grip_surface_cuda *s)
{
    (void)s;
    grip_surface_cuda_view v;
    memset(&v, 0, sizeof v);
    v.device = -1;
    return v;
}

grip_status grip_surface_cuda_set_normals(grip_ctx *ctx, grip_surface_cuda *s, const float *normals, size_t stride)
{
    (void)s; (void)normals; (void)stride;
    return no_cuda(ctx, "surface normals");
}
grip_status grip_surface_cuda_set_normals_on_device(grip_ctx *ctx, grip_surface_cuda *s, const float *normals_dev)
{
    (void)s; (void)normals_dev;
    return no_cuda(ctx, "surface normals");
}

void grip_surface_cuda_mark_normals(grip_surface_cuda *s)
{
    (void)s;
}

grip_status grip_surface_cuda_gather(grip_ctx *ctx, const grip_surface_cuda *s, const uint32_t *idx, size_t count,
                                     float *xyz_out)
{
    (void)s; (void)idx; (void)count; (void)xyz_out;
    return no_cuda(ctx, "surface gather");
}

grip_status grip_neighborhoods_cuda_radius(grip_ctx *ctx, const grip_surface_cuda *s, const float *queries,
                                           uint32_t m, float radius, uint32_t max_neighbors,
                                           grip_neighborhoods_cuda *out)
{
    (void)s; (void)queries; (void)m; (void)radius; (void)max_neighbors;
    if (out)
        memset(out, 0, sizeof *out);
    return no_cuda(ctx, "neighborhoods radius");
}

grip_status grip_neighborhoods_cuda_knn(grip_ctx *ctx, const grip_surface_cuda *s, const float *queries, uint32_t m,
                                        uint32_t k, grip_neighborhoods_cuda *out)
{
    (void)s; (void)queries; (void)m; (void)k;
    if (out)
        memset(out, 0, sizeof *out);
    return no_cuda(ctx, "neighborhoods knn");
}

void grip_neighborhoods_cuda_free(grip_neighborhoods_cuda *nb)
{
    if (nb)
        memset(nb, 0, sizeof *nb); /* nothing of it can be allocated in this build */
}

/* ---- spatial/kdtree3d_cuda.h ---- */

grip_status grip_kdtree3d_cuda_build(grip_ctx *ctx, const float *xyz, size_t n, grip_memory xyz_mem,
                                     uint32_t leaf_size, grip_kdtree3d_cuda **out)
{
    (void)xyz; (void)n; (void)xyz_mem; (void)leaf_size;
    if (out)
        *out = NULL;
    return no_cuda(ctx, "kdtree3d");
}

void grip_kdtree3d_cuda_free(grip_kdtree3d_cuda *tree) { (void)tree; }

size_t grip_kdtree3d_cuda_rows(const grip_kdtree3d_cuda *tree)
{
    (void)tree;
    return 0;
}

size_t grip_kdtree3d_cuda_size(const grip_kdtree3d_cuda *tree)
{
    (void)tree;
    return 0;
}

grip_status grip_kdtree3d_cuda_knn(grip_ctx *ctx, const grip_kdtree3d_cuda *tree, const float *queries, size_t m,
                                   grip_memory queries_mem, uint32_t k, uint32_t *ids, float *sqdist,
                                   grip_memory out_mem)
{
    (void)tree; (void)queries; (void)m; (void)queries_mem; (void)k; (void)ids; (void)sqdist; (void)out_mem;
    return no_cuda(ctx, "kdtree3d");
}

/* ---- descriptor/normals_cuda.h ---- */

grip_status grip_normals_cuda_surface(grip_ctx *ctx, grip_surface_cuda *s, uint32_t k, float radius,
                                      const float viewpoint[3])
{
    (void)s; (void)k; (void)radius; (void)viewpoint;
    return no_cuda(ctx, "normals");
}

grip_status grip_normals_cuda_turn_around(grip_ctx *ctx, grip_surface_cuda *s)
{
    (void)s;
    return no_cuda(ctx, "normals");
}

grip_status grip_normals_cuda(grip_ctx *ctx, const float *xyz, size_t n, uint32_t k, const float viewpoint[3],
                              float *out)
{
    (void)xyz; (void)n; (void)k; (void)viewpoint; (void)out;
    return no_cuda(ctx, "normals");
}

/* ---- descriptor/normals_propagate_cuda.h ---- */

grip_status grip_normals_cuda_propagate(grip_ctx *ctx, grip_surface_cuda *s, uint32_t k, const float centroid[3])
{
    (void)s; (void)k; (void)centroid;
    return no_cuda(ctx, "normals propagate");
}

/* ---- descriptor/uniform_sampling_cuda.h ---- */

grip_status grip_uniform_sampling_cuda(grip_ctx *ctx, const grip_surface_cuda *s, float leaf, uint32_t **idx_dev,
                                       size_t *count)
{
    (void)s; (void)leaf;
    if (idx_dev)
        *idx_dev = NULL;
    if (count)
        *count = 0;
    return no_cuda(ctx, "uniform_sampling");
}

/* ---- descriptor/voxel_grid_cuda.h ---- */

grip_status grip_voxel_grid_cuda_build(grip_ctx *ctx, const char *what, const float *xyz_dev, size_t n, float leaf,
                                       grip_voxel_grid *grid)
{
    (void)xyz_dev; (void)n; (void)leaf;
    memset(grid, 0, sizeof *grid);
    return no_cuda(ctx, what ? what : "voxel_grid");
}

grip_status grip_voxel_grid_cuda_centroids(grip_ctx *ctx, const grip_voxel_grid *grid, const float *xyz_dev,
                                           float *out_dev)
{
    (void)grid; (void)xyz_dev; (void)out_dev;
    return no_cuda(ctx, "voxel_grid centroids");
}

grip_status grip_voxel_grid_cuda_mean_normals(grip_ctx *ctx, const grip_voxel_grid *grid, const float *normals_dev,
                                              float *out_dev)
{
    (void)grid; (void)normals_dev; (void)out_dev;
    return no_cuda(ctx, "voxel_grid mean normals");
}

grip_status grip_voxel_grid_cuda_spread(grip_ctx *ctx, const grip_voxel_grid *grid, const float *rows_dev,
                                        float *out_dev)
{
    (void)grid; (void)rows_dev; (void)out_dev;
    return no_cuda(ctx, "voxel_grid spread");
}

void grip_voxel_grid_cuda_free(grip_voxel_grid *grid)
{
    memset(grid, 0, sizeof *grid); /* no device grid can exist in this build */
}

/* ---- descriptor/shot_cuda.h ---- */

grip_status grip_shot_lrf_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *support, const float *keypoint_xyz,
                               uint32_t k, float radius, float *frames)
{
    (void)support; (void)keypoint_xyz; (void)k; (void)radius; (void)frames;
    return no_cuda(ctx, "shot_lrf");
}

grip_status grip_shot_describe_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *support, const float *keypoint_xyz,
                                    const float *frames, uint32_t k, float radius, float *descriptors)
{
    (void)support; (void)keypoint_xyz; (void)frames; (void)k; (void)radius; (void)descriptors;
    return no_cuda(ctx, "shot");
}

/* ---- descriptor/fpfh_cuda.h ---- */

grip_status grip_fpfh_cuda(grip_ctx *ctx, const grip_surface_cuda *s, const float *keypoint_xyz, uint32_t k,
                           float radius, float *out)
{
    (void)s; (void)keypoint_xyz; (void)k; (void)radius; (void)out;
    return no_cuda(ctx, "fpfh");
}

/* ---- descriptor/pfh_cuda.h ---- */

grip_status grip_pfh_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *keypoint_xyz, uint32_t k,
                          float *out)
{
    (void)nb; (void)keypoint_xyz; (void)k; (void)out;
    return no_cuda(ctx, "pfh");
}

grip_status grip_pfh_cuda_surface(grip_ctx *ctx, const grip_surface_cuda *s, const float *keypoint_xyz, uint32_t k,
                                  float radius, float *out)
{
    (void)s; (void)keypoint_xyz; (void)k; (void)radius; (void)out;
    return no_cuda(ctx, "pfh");
}

/* ---- descriptor/spin_image_cuda.h ---- */

grip_status grip_spin_image_cuda(grip_ctx *ctx, const grip_neighborhoods_cuda *nb, const float *keypoint_xyz,
                                 const float *keypoint_normals, uint32_t k, const grip_spin_image_params *p,
                                 float *out)
{
    (void)nb; (void)keypoint_xyz; (void)keypoint_normals; (void)k; (void)p; (void)out;
    return no_cuda(ctx, "spin_image");
}

/* ---- descriptor/surf_cuda.h ---- */

grip_status grip_surf_cuda(grip_ctx *ctx, const uint8_t *grey, const float *xyz, uint32_t width, uint32_t height,
                           const grip_surf_params *p, grip_surf_cuda_result *out)
{
    (void)grey; (void)xyz; (void)width; (void)height; (void)p;
    if (out)
        memset(out, 0, sizeof *out);
    return no_cuda(ctx, "surf");
}
void grip_surf_cuda_result_free(grip_surf_cuda_result *r)
{
    if (r)
        memset(r, 0, sizeof *r); /* this build hands out no device memory */
}

/* ---- index/bruteforce_cuda.h ---- */

grip_status grip_bruteforce_cuda_ref_upload(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                     const grip_bruteforce_cuda_options *options, grip_bruteforce_cuda_ref **out)
{
    (void)ref; (void)n; (void)dim; (void)options;
    if (out)
        *out = NULL;
    return no_cuda(ctx, "bruteforce");
}

grip_status grip_bruteforce_cuda_ref_copy_device(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                          const grip_bruteforce_cuda_options *options, grip_bruteforce_cuda_ref **out)
{
    return grip_bruteforce_cuda_ref_upload(ctx, ref, n, dim, options, out);
}

const float *grip_bruteforce_cuda_ref_rows(const grip_bruteforce_cuda_ref *ref)
{
    (void)ref;
    return NULL;
}

const float *grip_bruteforce_cuda_ref_host_rows(const grip_bruteforce_cuda_ref *ref)
{
    (void)ref;
    return NULL;
}

int grip_bruteforce_cuda_ref_is_streamed(const grip_bruteforce_cuda_ref *ref)
{
    (void)ref;
    return 0;
}

size_t grip_bruteforce_cuda_ref_device_bytes(const grip_bruteforce_cuda_ref *ref)
{
    (void)ref;
    return 0;
}

void grip_bruteforce_cuda_ref_free(grip_bruteforce_cuda_ref *ref) { (void)ref; }

grip_status grip_bruteforce_cuda_search(grip_ctx *ctx, const grip_bruteforce_cuda_ref *ref, const float *queries,
                                        size_t m, uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist)
{
    (void)ref; (void)queries; (void)m; (void)k; (void)max_sqdist; (void)ids; (void)sqdist;
    return no_cuda(ctx, "bruteforce");
}

grip_status grip_bruteforce_cuda_search_device(grip_ctx *ctx, const grip_bruteforce_cuda_ref *ref, const float *queries,
                                        size_t m, uint32_t k, float max_sqdist, uint32_t *ids, float *sqdist)
{
    (void)ref; (void)queries; (void)m; (void)k; (void)max_sqdist; (void)ids; (void)sqdist;
    return no_cuda(ctx, "bruteforce");
}

grip_status grip_bruteforce_cuda_ref_upload_batched(grip_ctx *ctx, const float *ref, size_t n, size_t dim,
                                                    size_t batch_rows, const grip_bruteforce_cuda_options *options,
                                                    grip_bruteforce_cuda_ref **out)
{
    (void)batch_rows;
    return grip_bruteforce_cuda_ref_upload(ctx, ref, n, dim, options, out);
}

void grip_bruteforce_cuda_ref_limit_queries(grip_bruteforce_cuda_ref *ref, size_t queries)
{
    (void)ref; (void)queries;
}

/* ---- index/kdtree_hd_cuda.h ---- */

grip_status grip_kdtree_hd_cuda_build(grip_ctx *ctx, const float *rows, int on_device, size_t n, uint32_t dim,
                                      const grip_kdtree_hd_params *params, grip_kdtree_hd_cuda **out)
{
    (void)rows; (void)on_device; (void)n; (void)dim; (void)params;
    if (out)
        *out = NULL;
    return no_cuda(ctx, "kdtree_hd");
}

grip_status grip_kdtree_hd_cuda_download(grip_ctx *ctx, const grip_kdtree_hd_cuda *tree, grip_kdtree_hd **out)
{
    (void)tree;
    if (out)
        *out = NULL;
    return no_cuda(ctx, "kdtree_hd");
}

const float *grip_kdtree_hd_cuda_rows(const grip_kdtree_hd_cuda *tree)
{
    (void)tree;
    return NULL;
}

void grip_kdtree_hd_cuda_free(grip_kdtree_hd_cuda *tree) { (void)tree; }

grip_status grip_kdtree_hd_cuda_search(grip_ctx *ctx, const grip_kdtree_hd_cuda *tree, const float *queries,
                                       size_t m, uint32_t k, uint32_t checks, uint32_t finish_below,
                                       float max_sqdist, uint32_t *ids, float *sqdist)
{
    (void)tree; (void)queries; (void)m; (void)k; (void)checks; (void)finish_below; (void)max_sqdist; (void)ids;
    (void)sqdist;
    return no_cuda(ctx, "kdtree_hd");
}

/* ---- verify/ghv_cuda.h ---- */

grip_status grip_ghv_scene_cuda_create(grip_ctx *ctx, const float *xyz, const float *xyz_dev,
                                       const grip_surface_cuda *kept, size_t n, uint32_t width, uint32_t height,
                                       const grip_ghv_params *p, grip_ghv_scene_cuda **out)
{
    (void)xyz; (void)xyz_dev; (void)kept; (void)n; (void)width; (void)height; (void)p;
    *out = NULL;
    return no_cuda(ctx, "GHV scene");
}

grip_ghv_scene *grip_ghv_scene_cuda_host(grip_ghv_scene_cuda *s)
{
    (void)s; /* no GPU scene can exist in this build */
    return NULL;
}

void grip_ghv_scene_cuda_free(grip_ghv_scene_cuda *s)
{
    (void)s;
}

grip_status grip_ghv_terms_cuda(grip_ctx *ctx, grip_ghv_scene_cuda *s, const grip_ghv_model *models, uint32_t n_models,
                                const grip_ghv_hypothesis *hyps, size_t h, grip_ghv_terms *out)
{
    (void)s; (void)models; (void)n_models; (void)hyps; (void)h;
    memset(out, 0, sizeof *out);
    return no_cuda(ctx, "GHV terms");
}

/* ---- group/board_lrf_cuda.h, group/hough3d_cuda.h, group/gc_cuda.h ---- */

grip_status grip_board_lrf_cuda(grip_ctx *ctx, const grip_surface_cuda *surface, const float *keypoint_xyz, uint32_t k,
                                float radius, int find_holes, float *frames_out)
{
    (void)surface; (void)keypoint_xyz; (void)k; (void)radius; (void)find_holes; (void)frames_out;
    return no_cuda(ctx, "BOARD frames");
}
grip_status grip_board_lrf_cuda_on_surface(grip_ctx *ctx, const grip_surface_cuda *surface, const float *keypoint_xyz,
                                           size_t k, float radius, int find_holes, float *frames_out)
{
    (void)surface; (void)keypoint_xyz; (void)k; (void)radius; (void)find_holes; (void)frames_out;
    return no_cuda(ctx, "BOARD frames");
}
grip_status grip_board_lrf_cuda_host(grip_ctx *ctx, const float *surface_xyz, grip_memory xyz_mem,
                                     const float *surface_normals, grip_memory normals_mem, size_t n,
                                     const float *keypoint_xyz, size_t k, float radius, int find_holes,
                                     float *frames_out)
{
    (void)surface_xyz; (void)xyz_mem; (void)surface_normals; (void)normals_mem; (void)n; (void)keypoint_xyz; (void)k; (void)radius;
    (void)find_holes; (void)frames_out;
    return no_cuda(ctx, "BOARD frames");
}
static grip_status no_cuda_group(grip_ctx *ctx, const char *what, grip_cluster **out, size_t *n_out)
{
    if (out)
        *out = NULL;
    if (n_out)
        *n_out = 0;
    return no_cuda(ctx, what);
}
grip_status grip_hough3d_vote_cuda(grip_ctx *ctx, const grip_hough3d_params *params, const float *model_kp_xyz,
                                   const float *model_rf, size_t n_model_kp, const float *scene_kp_xyz,
                                   const float *scene_rf, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                                   grip_cluster **out, size_t *n_out)
{
    (void)params; (void)model_kp_xyz; (void)model_rf; (void)n_model_kp; (void)scene_kp_xyz; (void)scene_rf;
    (void)n_scene_kp; (void)corr; (void)n_corr;
    return no_cuda_group(ctx, "group.hough3d", out, n_out);
}
grip_status grip_hough3d_cluster_cuda(grip_ctx *ctx, const grip_hough3d_params *params, const float *model_kp_xyz,
                                      const float *model_rf, size_t n_model_kp, const float *scene_kp_xyz,
                                      const float *scene_rf, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                                      grip_cluster **out, size_t *n_out)
{
    (void)params; (void)model_kp_xyz; (void)model_rf; (void)n_model_kp; (void)scene_kp_xyz; (void)scene_rf;
    (void)n_scene_kp; (void)corr; (void)n_corr;
    return no_cuda_group(ctx, "group.hough3d", out, n_out);
}
grip_status grip_gc_consensus_cuda(grip_ctx *ctx, const grip_gc_params *params, const float *model_kp_xyz,
                                   size_t n_model_kp, const float *scene_kp_xyz, size_t n_scene_kp,
                                   const grip_corr *corr, size_t n_corr, grip_cluster **out, size_t *n_out)
{
    (void)params; (void)model_kp_xyz; (void)n_model_kp; (void)scene_kp_xyz; (void)n_scene_kp; (void)corr;
    (void)n_corr;
    return no_cuda_group(ctx, "group.gc", out, n_out);
}
grip_status grip_gc_cluster_cuda(grip_ctx *ctx, const grip_gc_params *params, const float *model_kp_xyz,
                                 size_t n_model_kp, const float *scene_kp_xyz, size_t n_scene_kp,
                                 const grip_corr *corr, size_t n_corr, grip_cluster **out, size_t *n_out)
{
    (void)params; (void)model_kp_xyz; (void)n_model_kp; (void)scene_kp_xyz; (void)n_scene_kp; (void)corr;
    (void)n_corr;
    return no_cuda_group(ctx, "group.gc", out, n_out);
}

/* ---- verify/icp_cuda.h ---- */

grip_status grip_icp_cuda_scene_build(grip_ctx *ctx, const float *xyz, const float *xyz_dev,
                                      const grip_surface_cuda *kept, size_t n, const float *normals,
                                      size_t normal_stride, const double viewpoint[3], grip_icp_cuda_scene **out)
{
    (void)xyz; (void)xyz_dev; (void)kept; (void)n; (void)normals; (void)normal_stride; (void)viewpoint;
    if (out)
        *out = NULL;
    return no_cuda(ctx, "verify icp");
}

void grip_icp_cuda_scene_free(grip_icp_cuda_scene *scene) { (void)scene; }

const float *grip_icp_cuda_scene_points(const grip_icp_cuda_scene *scene, size_t *stride)
{
    (void)scene;
    *stride = 0;
    return NULL;
}

grip_status grip_icp_cuda_refine(grip_ctx *ctx, const grip_icp_params *params, const grip_icp_cuda_scene *scene,
                                 const grip_icp_batch *batch, grip_icp_result *out)
{
    (void)params; (void)scene; (void)batch; (void)out;
    return no_cuda(ctx, "verify icp");
}

grip_status grip_icp_cuda_refine_start(grip_ctx *ctx, const grip_icp_params *params, const grip_icp_cuda_scene *scene,
                                       const grip_icp_batch *batch, uint32_t queued, grip_icp_cuda_run **out)
{
    (void)params; (void)scene; (void)batch; (void)queued;
    if (out)
        *out = NULL;
    return no_cuda(ctx, "verify icp");
}

grip_status grip_icp_cuda_refine_finish(grip_ctx *ctx, grip_icp_cuda_run *run, grip_icp_result *out)
{
    (void)run; (void)out;
    return no_cuda(ctx, "verify icp");
}

void grip_icp_cuda_run_free(grip_icp_cuda_run *run)
{
    (void)run;
}

/* ---- verify/free_space_cuda.h ---- */

grip_status grip_free_space_violations_cuda(grip_ctx *ctx, const grip_pinhole *cam, const float *scene_dev,
                                            size_t stride, uint32_t width, uint32_t height,
                                            const grip_free_space_job *jobs, size_t n, double tolerance,
                                            float *violation)
{
    (void)cam; (void)scene_dev; (void)stride; (void)width; (void)height; (void)jobs; (void)n; (void)tolerance;
    (void)violation;
    return no_cuda(ctx, "verify free-space check");
}
