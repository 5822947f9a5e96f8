/* render.c -- see render.h. Rays are cast in each catalogue object's own frame, where its primitives are
 * defined; a bounding sphere per object skips most rays. Each mesh is rasterized alone into the scratch buffers
 * (which count the pixels it covers alone), then merged into the image where it is nearer. */
#include "synth/render.h"
#include "synth/raster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What a ray needs of one posed object, precomputed once per image. */
typedef struct ray_target {
    const synth_shape *shape;
    double rot[9];     /* object -> camera rotation, row-major */
    double origin[3];  /* the camera centre in the object frame */
    double centre[3];  /* the object origin in the camera frame */
    double bound2;     /* squared radius of its bounding sphere */
} ray_target;

static void target_of(const synth_placed *obj, ray_target *t)
{
    t->shape = obj->shape;
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            t->rot[3 * r + c] = obj->pose[4 * r + c];
        t->centre[r] = obj->pose[4 * r + 3];
    }
    for (int c = 0; c < 3; c++)
        t->origin[c] = -(t->rot[c] * t->centre[0] + t->rot[3 + c] * t->centre[1] + t->rot[6 + c] * t->centre[2]);
    double bound = synth_shape_bound(obj->shape);
    t->bound2 = bound * bound;
}

/* 1 if the ray from the camera centre along d passes within the object's bounding sphere. */
static int may_hit(const ray_target *t, const double d[3], double dd)
{
    double along = (t->centre[0] * d[0] + t->centre[1] * d[1] + t->centre[2] * d[2]) / dd, miss2 = 0;
    for (int k = 0; k < 3; k++) {
        double off = t->centre[k] - along * d[k];
        miss2 += off * off;
    }
    return miss2 <= t->bound2;
}

/* First hit of the ray (camera centre, direction d) on the object: t and the camera-frame normal. */
static int object_hit(const ray_target *t, const double d[3], double *hit_t, double n[3])
{
    double dl[3], nl[3];
    for (int c = 0; c < 3; c++)
        dl[c] = t->rot[c] * d[0] + t->rot[3 + c] * d[1] + t->rot[6 + c] * d[2];
    if (!synth_shape_ray(t->shape, t->origin, dl, 0, hit_t, nl))
        return 0;
    for (int r = 0; r < 3; r++)
        n[r] = t->rot[3 * r] * nl[0] + t->rot[3 * r + 1] * nl[1] + t->rot[3 * r + 2] * nl[2];
    return 1;
}

/* First hit of the ray on the table top, from above. */
static int table_hit(const double pose[16], const double size[2], const double d[3], double *hit_t)
{
    double n[3] = {pose[2], pose[6], pose[10]}, c[3] = {pose[3], pose[7], pose[11]};
    double facing = n[0] * d[0] + n[1] * d[1] + n[2] * d[2];
    if (!(facing < 0))
        return 0;
    double t = (n[0] * c[0] + n[1] * c[1] + n[2] * c[2]) / facing;
    if (!(t > 0))
        return 0;
    double x = 0, y = 0;
    for (int k = 0; k < 3; k++) {
        x += (t * d[k] - c[k]) * pose[4 * k];
        y += (t * d[k] - c[k]) * pose[4 * k + 1];
    }
    if (fabs(x) > 0.5 * size[0] || fabs(y) > 0.5 * size[1])
        return 0;
    *hit_t = t;
    return 1;
}

int synth_image_alloc(const synth_camera *cam, uint32_t n_objects, int32_t *label, size_t max_mesh_vertices,
                      synth_image *img)
{
    size_t n = (size_t)cam->width * cam->height;
    img->depth = malloc(n * sizeof *img->depth);
    img->label = label ? label : malloc(n * sizeof *img->label);
    img->facing = malloc(n * sizeof *img->facing);
    img->alone = malloc((n_objects ? n_objects : 1) * sizeof *img->alone);
    if (max_mesh_vertices > 0) {
        img->mesh_depth = malloc(n * sizeof *img->mesh_depth);
        img->mesh_facing = malloc(n * sizeof *img->mesh_facing);
        img->mesh_xyz = malloc(max_mesh_vertices * 3 * sizeof *img->mesh_xyz);
        if (!img->mesh_depth || !img->mesh_facing || !img->mesh_xyz)
            return -1;
    }
    return img->depth && img->label && img->facing && img->alone ? 0 : -1;
}

void synth_image_free(synth_image *img)
{
    free(img->depth);
    free(img->label);
    free(img->facing);
    free(img->alone);
    free(img->mesh_depth);
    free(img->mesh_facing);
    free(img->mesh_xyz);
    memset(img, 0, sizeof *img);
}

void synth_pixel_point(const synth_camera *cam, uint32_t u, uint32_t v, double z, double out[3])
{
    out[0] = z * (u - cam->cx) / cam->fx;
    out[1] = z * (v - cam->cy) / cam->fy;
    out[2] = z;
}

/* Rasterizes one mesh alone into the scratch, counts its pixels, and keeps it where it is nearer than what the
 * image holds (NaN: nothing). */
static void merge_mesh(const synth_camera *cam, const synth_placed *obj, int32_t label, synth_image *img)
{
    size_t n = (size_t)cam->width * cam->height;
    for (size_t px = 0; px < n; px++) {
        img->mesh_depth[px] = INFINITY;
        img->mesh_facing[px] = 0;
    }
    img->alone[label - 1] =
        (uint32_t)synth_raster_mesh(cam, obj->mesh, obj->pose, img->mesh_xyz, img->mesh_depth, img->mesh_facing);
    for (size_t px = 0; px < n; px++) {
        double z = img->mesh_depth[px];
        if (z < INFINITY && !(img->depth[px] <= z)) {
            img->depth[px] = z;
            img->label[px] = label;
            img->facing[px] = img->mesh_facing[px];
        }
    }
}

void synth_render(const synth_camera *cam, const double table_pose[16], const double table_size[2],
                  const synth_placed *objects, uint32_t n_objects, synth_image *img)
{
    ray_target targets[SYNTH_MAX_OBJECTS];
    for (uint32_t i = 0; i < n_objects; i++)
        if (!objects[i].mesh)
            target_of(&objects[i], &targets[i]);
    memset(img->alone, 0, n_objects * sizeof *img->alone);
    for (uint32_t v = 0; v < cam->height; v++) {
        for (uint32_t u = 0; u < cam->width; u++) {
            size_t px = (size_t)v * cam->width + u;
            /* z = 1, so the ray parameter of a hit is its depth */
            double d[3] = {(u - cam->cx) / cam->fx, (v - cam->cy) / cam->fy, 1}, dd = d[0] * d[0] + d[1] * d[1] + 1;
            double best = INFINITY, n[3] = {0, 0, 0}, t, n_obj[3];
            int32_t label = -1;
            if (table_pose && table_hit(table_pose, table_size, d, &t)) {
                best = t;
                label = 0;
                n[0] = table_pose[2], n[1] = table_pose[6], n[2] = table_pose[10];
            }
            for (uint32_t i = 0; i < n_objects; i++) {
                if (objects[i].mesh || !may_hit(&targets[i], d, dd) || !object_hit(&targets[i], d, &t, n_obj))
                    continue;
                img->alone[i]++;
                if (t < best) {
                    best = t;
                    label = (int32_t)i + 1;
                    memcpy(n, n_obj, sizeof n);
                }
            }
            img->depth[px] = label < 0 ? NAN : best;
            img->label[px] = label;
            img->facing[px] = (float)(fabs(n[0] * d[0] + n[1] * d[1] + n[2] * d[2]) / sqrt(dd));
        }
    }
    for (uint32_t i = 0; i < n_objects; i++)
        if (objects[i].mesh)
            merge_mesh(cam, &objects[i], (int32_t)i + 1, img);
}
