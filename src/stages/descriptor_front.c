/* descriptor_front.c -- see descriptor_front.h. */
#include "stages/descriptor_front.h"
#include "stages/normals_orientation.h"
#include "core/cuda_bridge.h"
#include "descriptor/normals_cuda.h" /* GRIP_NORMALS_CUDA_MAX_K */
#include "descriptor/uniform_sampling.h"
#include "descriptor/uniform_sampling_cuda.h"
#include "descriptor/voxel_grid.h"
#include "descriptor/voxel_grid_cuda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- parameters ------------------------------------------------------------------------------------------ */

/* How this cloud's computed normals are oriented: a model's follow model_normals ("viewpoint|outward|propagate"),
 * a scene's keep its viewpoint. */
static uint32_t front_orientation(const grip_descriptor_front *front)
{
    return front->role == GRIP_ROLE_MODEL ? (uint32_t)grip_stage_choice(front->stage, "model_normals")
                                          : GRIP_MODEL_NORMALS_VIEWPOINT;
}

/* The normals plan (stages/normals_orientation.h); GRIP_ECONFIG when neither k nor radius is usable (only asked
 * when normals are due). The centroid an outward plan flips toward is the whole cloud's, on both sides. */
static grip_status front_normals_plan(const grip_descriptor_front *front, grip_normals_plan *p)
{
    const uint32_t k = (uint32_t)grip_stage_integer(front->stage, "normals_k");
    const float radius = k ? 0.0f : (float)grip_stage_number(front->stage, "normals_radius");
    if (k == 0 && radius <= 0)
        return grip_fail(front->ctx, GRIP_ECONFIG, "descriptor.normals_k: 0 needs descriptor.normals_radius > 0");
    grip_normals_plan_init(p, &front->in, k, radius, front_orientation(front),
                           (uint32_t)grip_stage_integer(front->stage, "propagate_k"));
    return GRIP_OK;
}

/* The cloud input standing for the support points xyz (n x 3): the cloud's, with its points replaced. */
static grip_cloud_input support_input(const grip_descriptor_front *front, const float *xyz, size_t n)
{
    grip_cloud_input in = front->in;
    in.xyz = xyz;
    in.n = n;
    return in;
}

static float front_leaf(const grip_descriptor_front *front)
{
    return (float)grip_stage_number(front->stage, front->role == GRIP_ROLE_MODEL ? "model_leaf" : "scene_leaf");
}

/* The support cloud's voxel-grid leaf; 0: the support is the cloud itself. */
static float front_support_leaf(const grip_descriptor_front *front)
{
    return (float)grip_stage_number(front->stage, "support_leaf");
}

#define SUPPORT_LEAF_KEY "descriptor.support_leaf"

static int front_wants_all_points(const grip_descriptor_front *front)
{
    return grip_stage_choice(front->stage, "keypoints") == 1; /* "uniform|all" */
}

static int normals_from_cloud(uint32_t source)
{
    return source == GRIP_NORMALS_CLOUD || source == GRIP_NORMALS_CLOUD_RESCALED;
}

static int keypoints_given(const grip_array *given)
{
    return given && given->rows > 0;
}

/* ---- host side --------------------------------------------------------------------------------------------- */

/* Computed normals (front_normals_plan) of the points xyz (n x 3, the points `tree` was built over; NULL: a tree
 * of their own) into out (n x 4). */
static grip_status computed_normals(grip_descriptor_front *front, const float *xyz, size_t n,
                                    const grip_kdtree3d *tree, float *out)
{
    grip_normals_plan p;
    grip_status s = front_normals_plan(front, &p);
    if (!s) {
        const grip_cloud_input support = support_input(front, xyz, n);
        s = grip_normals_plan_host(front->ctx, &p, &support, tree, out);
    }
    return s;
}

/* The features' normals (n x 4, one row per cloud point) and the support cloud's, as the `normals` key chooses:
 *  - the cloud's own at unit length (as given: their orientation is the file's); the support's are each voxel's
 *    mean of them, renormalised (grip_voxel_grid_mean_normals);
 *  - computed as PCL does and oriented as front_normals_plan says (the cloud's sensor origin, outward or
 *    propagated: stages/normals_orientation.h) over the
 *    support cloud; each cloud point then takes its voxel's (grip_voxel_grid_spread).
 * Without a grid the support is the cloud and both are the same array. */
static grip_status host_normals(grip_descriptor_front *front, const grip_voxel_grid *grid)
{
    const grip_cloud_input *in = &front->in;
    float *cloud = front->features->normals.data;
    uint32_t *source = &front->features->normals_source;
    grip_status s = grip_normals_choose(front->stage, &front->in, "descriptor.normals", cloud, source);
    if (s)
        return s;
    if (!grid) {
        front->support_normals = cloud;
        return normals_from_cloud(*source) ? GRIP_OK : computed_normals(front, in->xyz, in->n, front->tree, cloud);
    }
    float *support = malloc(front->n_support * 4 * sizeof *support);
    if (!support)
        return grip_fail(front->ctx, GRIP_ENOMEM, "descriptor: out of memory for %zu support normals",
                         front->n_support);
    front->owned_support_normals = support;
    front->support_normals = support;
    if (normals_from_cloud(*source)) {
        grip_voxel_grid_mean_normals(grid, cloud, support);
        return GRIP_OK;
    }
    s = computed_normals(front, front->support_xyz, front->n_support, front->tree, support);
    if (!s)
        grip_voxel_grid_spread(grid, support, cloud);
    return s;
}

/* The support cloud on the host under support_leaf: the voxel grid of the cloud (*grid, built here) and its
 * centroids (front->support_xyz, owned). A cloud without a finite point has no voxel: its support stays the cloud
 * (every neighbourhood is empty either way) and *grid is left empty. */
static grip_status host_support_cloud(grip_descriptor_front *front, float leaf, grip_voxel_grid *grid)
{
    grip_status s = grip_voxel_grid_build(front->ctx, SUPPORT_LEAF_KEY, front->in.xyz, front->in.n, leaf, grid);
    if (s || grid->voxels == 0)
        return s;
    float *xyz = malloc(grid->voxels * 3 * sizeof *xyz);
    if (!xyz)
        return grip_fail(front->ctx, GRIP_ENOMEM, "descriptor: out of memory for %zu support points", grid->voxels);
    grip_voxel_grid_centroids(grid, front->in.xyz, xyz);
    front->owned_support_xyz = xyz;
    front->support_xyz = xyz;
    front->n_support = grid->voxels;
    return GRIP_OK;
}

/* The keypoint indices on the host: the host's, every finite point, or uniform sampling (malloc'd). */
static grip_status host_keypoint_indices(grip_descriptor_front *front, const grip_array *given, uint32_t **idx,
                                         size_t *count)
{
    if (keypoints_given(given))
        return grip_cloud_input_keypoints(front->ctx, &front->in, given, idx, count);
    if (front_wants_all_points(front))
        return grip_cloud_input_finite_indices(front->ctx, &front->in, idx, count);
    return grip_uniform_sampling(front->ctx, front->in.xyz, front->in.n, front_leaf(front), idx, count);
}

static grip_status open_host_side(grip_descriptor_front *front, const grip_array *given)
{
    grip_ctx *ctx = front->ctx;
    grip_features *f = front->features;
    uint32_t *idx = NULL;
    size_t count = 0;
    grip_voxel_grid grid = {0};
    float leaf = front_support_leaf(front);
    front->support_xyz = front->in.xyz;
    front->n_support = front->in.n;
    grip_status s = leaf > 0 ? host_support_cloud(front, leaf, &grid) : GRIP_OK;
    if (!s)
        s = grip_kdtree3d_build(ctx, front->support_xyz, front->n_support, &front->tree);
    if (!s)
        s = grip_array_alloc_host(ctx, &f->normals, GRIP_F32, front->in.n, 4);
    if (!s)
        s = host_normals(front, grid.voxels ? &grid : NULL);
    grip_voxel_grid_free(&grid);
    if (!s)
        s = host_keypoint_indices(front, given, &idx, &count);
    if (!s)
        s = grip_features_set_keypoints(ctx, f, &front->in, idx, count);
    free(idx);
    if (s)
        return s;
    front->n_keypoints = count;
    front->normals = f->normals.data;
    front->keypoints = f->keypoints.data;
    front->keypoint_xyz = f->keypoint_xyz.data;
    return GRIP_OK;
}

/* ---- device side ------------------------------------------------------------------------------------------- */

/* The surface of the whole cloud: the support surface itself without support_leaf. */
static grip_surface_cuda *device_cloud(const grip_descriptor_front *front)
{
    return front->cloud_surface ? front->cloud_surface : front->surface;
}

/* The support points on the host (n_support x 3, malloc'd into *xyz): the cloud's own, or a copy of the support
 * surface's points. Only the CPU normals below need them. */
static grip_status device_support_on_host(grip_descriptor_front *front, float **xyz)
{
    *xyz = NULL;
    if (!front->cloud_surface) {
        *xyz = (float *)front->in.xyz;
        return GRIP_OK;
    }
    grip_surface_cuda_view v = grip_surface_cuda_get_view(front->surface);
    float *copy = malloc(((size_t)v.n ? v.n : 1) * 3 * sizeof *copy);
    if (!copy)
        return grip_fail(front->ctx, GRIP_ENOMEM, "descriptor: out of memory for %u support points", v.n);
    *xyz = copy;
    return grip_cuda_copy_to_host(front->ctx, copy, v.xyz, (size_t)v.n * 3 * sizeof *copy);
}

/* Computed normals on the support surface, oriented as front_normals_plan says (grip_normals_plan_surface: on the
 * device, or -- for a k the GPU does not keep -- by the CPU twin into scratch, n x 4 with n >= the support's points,
 * from the support points on the host, and uploaded). */
static grip_status device_computed_normals(grip_descriptor_front *front, float *scratch)
{
    grip_normals_plan p;
    grip_status s = front_normals_plan(front, &p);
    if (s)
        return s;
    float *xyz = NULL; /* the support points on the host: only the CPU twin reads them */
    size_t n = grip_surface_cuda_get_view(front->surface).n;
    if (p.k > GRIP_NORMALS_CUDA_MAX_K)
        s = device_support_on_host(front, &xyz);
    if (!s) {
        const grip_cloud_input support = support_input(front, xyz, n);
        s = grip_normals_plan_surface(front->ctx, &p, &support, front->surface, scratch);
    }
    if (xyz != front->in.xyz)
        free(xyz);
    return s;
}

/* The normals of both surfaces as the `normals` key chooses, as host_normals says: the cloud's own at unit length
 * (made on the host, as for the CPU twin, and uploaded; oriented as given), the support's their voxel means; or
 * computed on the support, the cloud's points taking their voxel's. grid: NULL without support_leaf. */
static grip_status device_surface_normals(grip_descriptor_front *front, const grip_voxel_grid *grid)
{
    float *host = malloc(front->in.n * 4 * sizeof *host);
    if (!host)
        return grip_fail(front->ctx, GRIP_ENOMEM, "descriptor: out of memory for %zu normals", front->in.n);
    grip_surface_cuda *cloud = device_cloud(front);
    uint32_t *source = &front->features->normals_source;
    grip_status s = grip_normals_choose(front->stage, &front->in, "descriptor.normals", host, source);
    int from_cloud = !s && normals_from_cloud(*source);
    if (!s)
        s = from_cloud ? grip_surface_cuda_set_normals(front->ctx, cloud, host, 4)
                       : device_computed_normals(front, host);
    free(host);
    if (s || !grid)
        return s;
    grip_surface_cuda_view support = grip_surface_cuda_get_view(front->surface);
    grip_surface_cuda_view all = grip_surface_cuda_get_view(cloud);
    if (from_cloud) {
        s = grip_voxel_grid_cuda_mean_normals(front->ctx, grid, all.normals, support.normals);
        if (!s)
            grip_surface_cuda_mark_normals(front->surface);
    } else {
        s = grip_voxel_grid_cuda_spread(front->ctx, grid, support.normals, all.normals);
        if (!s)
            grip_surface_cuda_mark_normals(cloud);
    }
    return s;
}

/* The support surface under support_leaf: the voxel grid of the cloud surface (*grid, built here on the device),
 * its centroids as a new surface (front->surface; the cloud's becomes front->cloud_surface). A cloud without a
 * finite point keeps the cloud as its support, as on the host side. */
static grip_status device_support_cloud(grip_descriptor_front *front, float leaf, grip_voxel_grid *grid)
{
    grip_ctx *ctx = front->ctx;
    grip_surface_cuda_view v = grip_surface_cuda_get_view(front->surface);
    grip_status s = grip_voxel_grid_cuda_build(ctx, SUPPORT_LEAF_KEY, v.xyz, v.n, leaf, grid);
    if (s || grid->voxels == 0)
        return s;
    void *centroids = NULL;
    grip_surface_cuda *support = NULL;
    s = grip_cuda_alloc(ctx, grid->voxels * 3 * sizeof(float), &centroids);
    if (!s)
        s = grip_voxel_grid_cuda_centroids(ctx, grid, v.xyz, centroids);
    if (!s)
        s = grip_surface_cuda_create_on_device(ctx, centroids, grid->voxels, &support);
    grip_cuda_free(centroids);
    if (!s) {
        front->cloud_surface = front->surface;
        front->surface = support;
    }
    return s;
}

/* A device copy in the features (into out) of the cloud surface's rows of `cols` floats, one a point: the surfaces
 * go at close, the features stay. */
static grip_status device_feature_rows(grip_descriptor_front *front, grip_array *out, const float *rows, uint64_t cols)
{
    grip_status s = grip_result_array_alloc(front->ctx, out, GRIP_MEM_CUDA, GRIP_F32, front->in.n, cols);
    if (!s)
        s = grip_cuda_copy_on_device(front->ctx, out->data, rows, front->in.n * cols * sizeof(float));
    return s;
}

/* The features' normals. */
static grip_status device_feature_normals(grip_descriptor_front *front)
{
    grip_surface_cuda_view v = grip_surface_cuda_get_view(device_cloud(front));
    return device_feature_rows(front, &front->features->normals, v.normals, 4);
}

/* The keypoint indices as the features' device array: the host's or every finite point (checked on the host,
 * uploaded), or uniform sampling of the cloud on the device. */
static grip_status device_keypoint_indices(grip_descriptor_front *front, const grip_array *given)
{
    grip_ctx *ctx = front->ctx;
    grip_array *kp = &front->features->keypoints;
    void *dev = NULL;
    size_t count = 0;
    grip_status s;
    if (keypoints_given(given) || front_wants_all_points(front)) {
        uint32_t *idx = NULL;
        int device = -1;
        s = host_keypoint_indices(front, given, &idx, &count);
        if (!s)
            s = grip_cuda_upload(ctx, idx, count * sizeof *idx, &dev, &device);
        free(idx);
    } else {
        uint32_t *sampled = NULL;
        s = grip_uniform_sampling_cuda(ctx, device_cloud(front), front_leaf(front), &sampled, &count);
        dev = sampled;
    }
    if (s)
        return s;
    kp->data = dev;
    kp->memory = GRIP_MEM_CUDA;
    kp->device = ctx->device;
    kp->rows = count;
    kp->cols = 1;
    front->n_keypoints = count;
    return GRIP_OK;
}

/* keypoint_xyz (features, k x 3) and the keypoints' normals (k x 4: their rows of the cloud's normals), gathered
 * on the device. */
static grip_status device_keypoint_rows(grip_descriptor_front *front)
{
    grip_ctx *ctx = front->ctx;
    grip_features *f = front->features;
    size_t k = front->n_keypoints;
    grip_surface_cuda *cloud = device_cloud(front);
    grip_surface_cuda_view v = grip_surface_cuda_get_view(cloud);
    void *nrm = NULL;
    grip_status s = grip_result_array_alloc(ctx, &f->keypoint_xyz, GRIP_MEM_CUDA, GRIP_F32, k, 3);
    if (!s)
        s = grip_surface_cuda_gather(ctx, cloud, f->keypoints.data, k, f->keypoint_xyz.data);
    if (!s)
        s = grip_cuda_alloc(ctx, k * 4 * sizeof(float), &nrm);
    front->keypoint_normals_dev = nrm; /* owned by the front from here on, freed at close */
    if (!s)
        s = grip_cuda_gather_rows4(ctx, v.normals, f->keypoints.data, k, nrm);
    return s;
}

static grip_status open_device_side(grip_descriptor_front *front, const grip_array *given)
{
    grip_voxel_grid grid = {0};
    float leaf = front_support_leaf(front);
    grip_status s = grip_surface_cuda_create(front->ctx, front->in.xyz, front->in.n, &front->surface);
    if (!s && leaf > 0)
        s = device_support_cloud(front, leaf, &grid);
    if (!s)
        s = device_surface_normals(front, grid.voxels ? &grid : NULL);
    grip_voxel_grid_cuda_free(&grid);
    if (!s)
        s = device_feature_normals(front);
    if (!s)
        s = device_keypoint_indices(front, given);
    if (!s)
        s = device_keypoint_rows(front);
    if (s)
        return s;
    front->keypoints_dev = front->features->keypoints.data;
    front->keypoint_xyz_dev = front->features->keypoint_xyz.data;
    return GRIP_OK;
}

/* ---- the front --------------------------------------------------------------------------------------------- */

grip_status grip_descriptor_front_open(grip_stage *st, const grip_cloud *cloud, uint32_t role,
                                       const grip_array *keypoints, uint32_t descriptor_dim,
                                       grip_descriptor_front *front)
{
    memset(front, 0, sizeof *front);
    if (!st)
        return GRIP_EINVAL;
    front->stage = st;
    front->ctx = st->ctx;
    front->role = role;
    front->on_device = st->use_cuda;
    if (role != GRIP_ROLE_MODEL && role != GRIP_ROLE_SCENE)
        return grip_fail(st->ctx, GRIP_EINVAL, "descriptor: role %u is neither model nor scene", role);
    grip_status s = grip_optional_array_check(st->ctx, keypoints, GRIP_U32, 1, "descriptor: keypoints");
    if (!s)
        s = grip_cloud_input_open(st->ctx, cloud, "descriptor: cloud", &front->in);
    if (!s)
        s = grip_features_new(st->ctx, descriptor_dim, &front->features);
    if (!s)
        s = front->on_device ? open_device_side(front, keypoints) : open_host_side(front, keypoints);
    return s;
}

/* The features' copy of the cloud's points, for device output (plugin.h, grip_features.xyz): the group and verify
 * stages then take the scene from here instead of uploading it again. */
static grip_status device_feature_xyz(grip_descriptor_front *front)
{
    grip_surface_cuda_view v = grip_surface_cuda_get_view(device_cloud(front));
    return device_feature_rows(front, &front->features->xyz, v.xyz, 3);
}

/* Device features keep the cloud's surface (stages/results.h): the group and verify stages search it as it is. */
static void keep_cloud_surface(grip_descriptor_front *front)
{
    grip_surface_cuda **cloud = front->cloud_surface ? &front->cloud_surface : &front->surface;
    grip_features_keep_surface(front->features, *cloud);
    *cloud = NULL;
}

grip_status grip_descriptor_front_finish(grip_descriptor_front *front, uint32_t out_memory, grip_features **out)
{
    *out = NULL;
    grip_status s = front->on_device && out_memory == GRIP_MEM_CUDA ? device_feature_xyz(front) : GRIP_OK;
    if (!s)
        s = grip_features_place(front->ctx, front->features, out_memory);
    if (s)
        return s;
    if (front->on_device && out_memory == GRIP_MEM_CUDA)
        keep_cloud_surface(front);
    *out = front->features;
    front->features = NULL;
    return GRIP_OK;
}

void grip_descriptor_front_close(grip_descriptor_front *front)
{
    if (front->features)
        front->features->release(front->features);
    grip_kdtree3d_free(front->tree);
    free(front->owned_support_xyz);
    free(front->owned_support_normals);
    if (front->surface)
        grip_surface_cuda_free(front->surface);
    if (front->cloud_surface)
        grip_surface_cuda_free(front->cloud_surface);
    grip_cuda_free((void *)front->keypoint_normals_dev);
    grip_cloud_input_close(&front->in);
    memset(front, 0, sizeof *front);
}

/* One describe() on the side st->use_cuda says. */
static grip_status describe_once(grip_stage *st, const grip_cloud *cloud, uint32_t role, const grip_array *keypoints,
                                 uint32_t out_memory, uint32_t descriptor_dim, grip_descriptor_body body,
                                 grip_features **out)
{
    grip_status s = grip_stage_check_run(st, out, out_memory);
    if (s)
        return s;
    grip_descriptor_front front;
    s = grip_descriptor_front_open(st, cloud, role, keypoints, descriptor_dim, &front);
    if (!s)
        s = body(st, &front);
    if (!s)
        s = grip_descriptor_front_finish(&front, out_memory, out);
    grip_descriptor_front_close(&front);
    return s;
}

grip_status grip_descriptor_front_describe(grip_stage *st, const grip_cloud *cloud, uint32_t role,
                                           const grip_array *keypoints, uint32_t out_memory, uint32_t descriptor_dim,
                                           grip_descriptor_body body, grip_features **out)
{
    grip_status s;
    GRIP_STAGE_CALL(st, s, describe_once(st, cloud, role, keypoints, out_memory, descriptor_dim, body, out));
    return s;
}
