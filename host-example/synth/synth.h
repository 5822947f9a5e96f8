/* synth.h -- synthetic recognition scenes with exact ground truth, for grip-host's demo, tests and benchmarks.
 *
 * A few objects from a fixed catalogue (an L bracket, a mug, a lumpy blob, a stepped block; see synth_kind_about),
 * or from triangle meshes the caller gives (meshes / n_meshes: the Stanford models, synth/mesh.h), stand on a
 * table at random poses (any turn about the vertical plus a small tilt), not touching one another, each wholly
 * inside the image and at least min_visible_fraction unoccluded. A virtual range camera (pinhole, Kinect-like by
 * default) looks down at the table from camera_distance and ray-casts the exact surfaces (z-buffers meshes): the
 * scene is an ORGANIZED cloud in the CAMERA frame (x right, y down, z forward), NaN where a ray hits nothing or
 * lies beyond max_range, with Gaussian depth noise along each ray (truncated at 4 sigma, so no point strays more
 * than 4 sigma of depth from its surface). Everything is a deterministic function of the parameters; the noise
 * uses its own random stream, so the same seed with and without noise gives the same objects and poses.
 *
 * Every kind present has a complete model: its whole surface sampled on near-uniform lattices (model_spacing
 * apart) with outward unit normals, in the object's frame (metres, z up, base on z = 0), like a scanned model.
 * The models the pipeline gets are either those complete surfaces (model_views = 0) or, since a range camera
 * never sees an object's far side and descriptors of a complete surface mix it in, VIEW-BASED: model_views
 * partial views per kind, each what the scene's camera (same intrinsics, camera_distance, camera_elevation_deg,
 * max_range) sees of the object alone (no table, no other object) standing upright and turned by
 * 360 v / model_views degrees about its z axis (as a scene object's yaw turns it), the camera looking at the
 * point half the object's height above its origin. A view keeps the finite points, unorganized, in the OBJECT's
 * frame, without normals; view_origin says where the camera was, for flipping normals toward it. Ground truth:
 * poses[i] maps object i's frame -- shared by every model of its kind -- to the camera frame (row-major 4x4). */
#ifndef GRIP_HOST_SYNTH_H
#define GRIP_HOST_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "io/cloud_io.h"
#include "synth/mesh.h"

typedef struct synth_params {
    uint64_t seed;
    uint32_t n_objects;          /* 1..16; the first min(n_objects, synth_kind_count()) are of distinct kinds */
    uint32_t width, height;      /* image size, 8..8192 each */
    double fx, fy, cx, cy;       /* pinhole intrinsics in pixels; 0 = Kinect-like for the image size:
                                    fx = fy = 525 * width / 640, cx = (width - 1) / 2, cy = (height - 1) / 2 */
    double noise_sigma;          /* m, standard deviation of the depth noise (0 = exact) */
    double max_range;            /* m; hits deeper than this are NaN */
    double camera_distance;      /* m, from the camera to the table centre it looks at */
    double camera_elevation_deg; /* angle of the optical axis below the horizontal; must exceed half the
                                    vertical field of view so that every image row looks down */
    double max_tilt_deg;         /* largest tilt of an object's up axis from the table normal */
    double table_x, table_y;     /* m, size of the table top (the camera looks along +y of the table) */
    double model_spacing;        /* m, distance between neighbouring model samples */
    double placement_radius;     /* m, objects stand within this distance of the table point the camera looks at
                                    (smaller: more clutter and occlusion); 0 = 0.1 m * sqrt(n_objects) */
    double min_visible_fraction; /* of each object's pixels when seen alone, still visible in the scene */
    uint32_t model_views;        /* 0: the models are the complete surfaces; 1..360: that many partial views
                                    per kind (see above) */
    double model_view_noise;     /* m, depth noise of the views, as noise_sigma for the scene (0 = exact) */
    const synth_mesh *meshes;    /* n_meshes kinds (borrowed) used instead of the catalogue when n_meshes > 0:
                                    kind k is meshes[k], rasterized (z-buffer) rather than ray-cast, its
                                    vertices its complete model; model_spacing is then unused */
    uint32_t n_meshes;           /* 0..16 */
} synth_params;

/* Defaults: seed 1, 4 objects, 640 x 480 Kinect intrinsics, noise 1 mm, range 3 m, camera 0.8 m away 50 degrees
 * down, tilt up to 5 degrees, table 1.2 x 0.8 m, model spacing 2.5 mm, placement radius 0 (automatic),
 * 40 % visible, complete models (model_views 0), exact views (model_view_noise 0). */
void synth_params_default(synth_params *p);

/* A generated scene. Every pointer is malloc'd and owned by the struct: free with synth_scene_free(). */
typedef struct synth_scene {
    host_cloud scene;          /* width x height, camera frame, xyz and rgb (a colour per kind, shaded); no normals */
    uint32_t n_objects;
    uint32_t n_kinds;          /* kinds present, numbered 0..n_kinds-1 in order of first use */
    uint32_t views_per_kind;   /* model_views, or 1 when the models are complete surfaces */
    uint32_t n_models;         /* n_kinds * views_per_kind; model m shows kind number m / views_per_kind */
    host_cloud *models;        /* n_models unorganized clouds in their kind's object frame, kind-major (the views
                                  of kind number k are models k * views_per_kind + v, v = 0..views_per_kind-1):
                                  complete surfaces with normals, or views (xyz only) */
    const char **names;        /* n_models: models[m].path, owned by that cloud: the catalogue (or mesh) name, or
                                  "<name>@<yaw degrees>" for a view ("mug@45") */
    uint32_t *kind_of_model;   /* n_models catalogue indices (mesh indices with meshes) */
    double (*view_origin)[3];  /* n_models camera centres in the object frame, where each view was seen from
                                  (the viewpoint to flip its normals toward); NULL when model_views = 0 */
    host_cloud *complete;      /* n_kinds complete surfaces with normals, object frame, always made: model m's is
                                  complete[m / views_per_kind]; use these for synth_pose_error */
    uint32_t *model_of_object; /* n_objects: the first model of the object's kind (its first view); every model
                                  of that kind shares the frame poses[i] places */
    double (*poses)[16];       /* n_objects, object (model) frame -> camera frame, row-major */
    int32_t *labels;           /* scene.n: -1 nothing (NaN), 0 table, 1 + i object i */
    uint32_t *visible_pixels;  /* n_objects: pixels labelled 1 + i */
    double *visible_fraction;  /* n_objects: visible_pixels / pixels the object covers when alone */
    double table_pose[16];     /* table frame -> camera frame: the table top is z = 0 of that frame, normal +z,
                                  |x| <= table_x / 2, |y| <= table_y / 2 */
    double table_size[2];      /* table_x, table_y */
} synth_scene;

/* Renders a scene. Returns 0, or -1 with a one-line message in err ("synth: <field> ..." for a bad parameter,
 * "synth: could not place ..." when no placement met the constraints, "synth: out of memory"); *out is then
 * zeroed and nothing leaks. */
int synth_generate(const synth_params *p, synth_scene *out, char *err, size_t errlen);

/* Frees every member and zeroes the struct; safe on a zeroed struct and on NULL. */
void synth_scene_free(synth_scene *s);

/* Error of an estimated pose against the truth: the mean distance between the model's points under the two
 * poses (metres). 0 for an empty model. Pass the complete surface (complete[m / views_per_kind]): a view would
 * weigh only the side it shows. */
double synth_pose_error(const host_cloud *model, const double truth[16], const double estimate[16]);

/* The catalogue. */
uint32_t synth_kind_count(void);
const char *synth_kind_name(uint32_t kind);  /* NULL past the end */
const char *synth_kind_about(uint32_t kind); /* one-line description, NULL past the end */

/* Signed field of a catalogue object at q (its own frame): 0 exactly on its surface, negative inside, positive
 * outside, never more than the distance to the surface in magnitude. An independent check of the ray casting
 * and the sampling. NaN for an unknown kind. */
double synth_kind_field(uint32_t kind, const double q[3]);

#endif
