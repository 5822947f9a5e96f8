/* views.c -- see views.h. Each view is the scene renderer run on one object and no table; the hits
 * are taken back to the object frame through the inverse of the view's pose. */
#include "synth/views.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_util.h"

#define SYNTH_PI 3.14159265358979323846
#define VIEW_NOISE_STREAM 0x7669657773ull /* "views": the views' noise never shares the scene's stream */

/* q = T^-1 p for a rigid row-major T. */
static void pose_unapply(const double T[16], const double p[3], double q[3])
{
    double d[3] = {p[0] - T[3], p[1] - T[7], p[2] - T[11]};
    for (int c = 0; c < 3; c++)
        q[c] = T[c] * d[0] + T[4 + c] * d[1] + T[8 + c] * d[2];
}

/* Object frame -> camera frame for a turn by `yaw` about the object's z axis, the point (0, 0, centre_z) of the
 * object on the world origin the camera looks at. */
static void view_pose(const double T_cw[16], double yaw, double centre_z, double T_co[16])
{
    double c = cos(yaw), s = sin(yaw);
    double T_wo[16] = {c, -s, 0, 0, s, c, 0, 0, 0, 0, 1, -centre_z, 0, 0, 0, 1};
    synth_pose_mul(T_cw, T_wo, T_co);
}

/* The hits of one rendered view within max_range, noisy along their rays, in the object frame. */
static int view_cloud(const synth_params *p, const synth_camera *cam, const synth_image *img,
                      const double T_co[16], uint64_t *rng, host_cloud *out)
{
    size_t n_px = (size_t)cam->width * cam->height, n = 0;
    for (size_t i = 0; i < n_px; i++)
        n += img->label[i] > 0 && img->depth[i] <= p->max_range;
    if (n == 0)
        return -2;
    out->xyz = malloc(3 * n * sizeof *out->xyz);
    if (!out->xyz)
        return -1;
    size_t k = 0;
    for (uint32_t v = 0; v < cam->height; v++)
        for (uint32_t u = 0; u < cam->width; u++) {
            size_t i = (size_t)v * cam->width + u;
            if (!(img->label[i] > 0 && img->depth[i] <= p->max_range))
                continue;
            double z = img->depth[i], c[3], q[3];
            if (p->model_view_noise > 0)
                z += p->model_view_noise * synth_rng_clipped_normal(rng);
            synth_pixel_point(cam, u, v, z, c);
            pose_unapply(T_co, c, q);
            for (int a = 0; a < 3; a++)
                out->xyz[3 * k + a] = (float)q[a];
            k++;
        }
    out->width = (uint32_t)n;
    out->height = 1;
    out->n = n;
    return 0;
}

int synth_views_make(const synth_params *p, const synth_camera *cam, const double T_cw[16],
                     const synth_model *model, uint32_t kind, host_cloud *views, double (*origin)[3])
{
    synth_image img;
    memset(&img, 0, sizeof img);
    if (synth_image_alloc(cam, 1, NULL, model->mesh ? model->mesh->n_vertices : 0, &img) != 0) {
        synth_image_free(&img);
        return -1;
    }
    uint64_t rng = p->seed ^ VIEW_NOISE_STREAM ^ ((uint64_t)kind << 48);
    const double camera_centre[3] = {0, 0, 0};
    int rc = 0;
    for (uint32_t v = 0; v < p->model_views && rc == 0; v++) {
        double yaw_deg = 360.0 * v / p->model_views;
        double pose[16];
        view_pose(T_cw, yaw_deg * SYNTH_PI / 180, 0.5 * model->top, pose);
        synth_placed object = synth_model_placed(model, pose);
        synth_render(cam, NULL, NULL, &object, 1, &img);
        pose_unapply(object.pose, camera_centre, origin[v]);
        char name[64];
        snprintf(name, sizeof name, "%s@%g", synth_model_name(model), yaw_deg);
        views[v].path = host_strdup(name);
        rc = views[v].path ? view_cloud(p, cam, &img, object.pose, &rng, &views[v]) : -1;
        for (int i = 0; i < 3 && rc == 0; i++) /* the sensor origin: normals of the view are flipped toward it */
            views[v].viewpoint[i] = (float)origin[v][i];
    }
    synth_image_free(&img);
    return rc;
}
