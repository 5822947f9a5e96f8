/* render.h -- the virtual range camera of synth.c: one exact ray per pixel against a table top and posed
 * catalogue objects, and triangle meshes rasterized into the same depth buffer (raster.h), with occlusion.
 * Internal to synth/. */
#ifndef GRIP_HOST_SYNTH_RENDER_H
#define GRIP_HOST_SYNTH_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "synth/mesh.h"
#include "synth/shapes.h"

/* Most objects one image holds. */
#define SYNTH_MAX_OBJECTS 16

/* Pinhole camera at the origin of the camera frame looking along +z (x right, y down). */
typedef struct synth_camera {
    uint32_t width, height;
    double fx, fy, cx, cy;
} synth_camera;

/* An object placed in the camera frame: a catalogue shape, or a mesh when mesh is not NULL. */
typedef struct synth_placed {
    const synth_shape *shape;
    const synth_mesh *mesh;
    double pose[16]; /* object frame -> camera frame, row-major */
} synth_placed;

/* One rendered image: per pixel the depth of the first hit (NaN for none), what was hit (-1 nothing, 0 table,
 * 1 + i object i) and |cos| of the angle between the ray and the surface normal there (for shading). */
typedef struct synth_image {
    double *depth;
    int32_t *label;
    float *facing;
    uint32_t *alone; /* per object: pixels it would cover were it the only object */
    /* scratch of the meshes' rasterization: one mesh's depth and facing per pixel, its vertices in the camera
     * frame (max_mesh_vertices x 3); NULL when the image is for catalogue objects only */
    double *mesh_depth;
    float *mesh_facing;
    double *mesh_xyz;
} synth_image;

/* Allocates img's arrays for the camera (width * height entries, alone n_objects), the labels too unless `label`
 * is given (then img->label = label, owned by the caller), and the meshes' scratch when max_mesh_vertices > 0 (the
 * most vertices of a mesh it will render). Returns 0, or -1 when out of memory: free with synth_image_free()
 * either way. */
int synth_image_alloc(const synth_camera *cam, uint32_t n_objects, int32_t *label, size_t max_mesh_vertices,
                      synth_image *img);
/* Frees every array (set img->label = NULL first when the labels belong to someone else) and zeroes img. */
void synth_image_free(synth_image *img);

/* Casts every pixel's ray, then rasterizes the meshes (img must have their scratch). The table is the rectangle
 * |x| <= size[0]/2, |y| <= size[1]/2 in the plane z = 0 of table_pose's frame, seen from above only; table_pose
 * NULL: no table (the objects alone). img comes from synth_image_alloc(cam, >= n_objects, ...); n_objects <=
 * SYNTH_MAX_OBJECTS. */
void synth_render(const synth_camera *cam, const double table_pose[16], const double table_size[2],
                  const synth_placed *objects, uint32_t n_objects, synth_image *img);

/* The camera-frame point at depth z on pixel (u, v)'s ray. */
void synth_pixel_point(const synth_camera *cam, uint32_t u, uint32_t v, double z, double out[3]);

#endif
