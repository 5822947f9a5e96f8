/* synth.c -- synthetic scenes: parameters, models, placement of the objects on the table, and the final cloud.
 * See synth.h. The world frame is the table's: z up, the camera on the -y side looking at the origin. */
#include "synth/synth.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_util.h"
#include "synth/place.h"
#include "synth/views.h"

#define SYNTH_PI 3.14159265358979323846
#define SYNTH_DEG (SYNTH_PI / 180)
#define ARRANGEMENTS 100 /* whole arrangements tried before giving up */
#define PREVIEW_STEP 4   /* pixel size of the visibility screen, in image pixels */
#define AUTO_SPREAD 0.1  /* m; the default placement radius is this times the root of the number of objects */
#define MAX_MODEL_VIEWS 360

void synth_params_default(synth_params *p)
{
    memset(p, 0, sizeof *p);
    p->seed = 1;
    p->n_objects = 4;
    p->width = 640;
    p->height = 480;
    p->noise_sigma = 0.001;
    p->max_range = 3.0;
    p->camera_distance = 0.8;
    p->camera_elevation_deg = 50;
    p->max_tilt_deg = 5;
    p->table_x = 1.2;
    p->table_y = 0.8;
    p->model_spacing = 0.0025;
    p->min_visible_fraction = 0.4;
}

/* ---- small helpers --------------------------------------------------------------------------------------- */

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- parameters and camera ------------------------------------------------------------------------------- */

static int in_range(double x, double lo, double hi)
{
    return x >= lo && x <= hi; /* false for NaN */
}

static int check_params(const synth_params *p, synth_camera *cam, char *err, size_t errlen)
{
    if (p->n_objects < 1 || p->n_objects > SYNTH_MAX_OBJECTS)
        return fail(err, errlen, "synth: n_objects %u is not in 1..%d", p->n_objects, SYNTH_MAX_OBJECTS);
    if (p->width < 8 || p->width > 8192 || p->height < 8 || p->height > 8192)
        return fail(err, errlen, "synth: image size %ux%u is not within 8..8192 on each side", p->width, p->height);
    const double *intrinsics[4] = {&p->fx, &p->fy, &p->cx, &p->cy};
    const char *names[4] = {"fx", "fy", "cx", "cy"};
    for (int i = 0; i < 4; i++)
        if (!in_range(*intrinsics[i], 0, 1e6))
            return fail(err, errlen, "synth: %s %g must be 0 (derive) or a positive pixel count", names[i],
                        *intrinsics[i]);
    cam->width = p->width;
    cam->height = p->height;
    cam->fx = p->fx > 0 ? p->fx : 525.0 * p->width / 640;
    cam->fy = p->fy > 0 ? p->fy : 525.0 * p->width / 640;
    cam->cx = p->cx > 0 ? p->cx : 0.5 * (p->width - 1);
    cam->cy = p->cy > 0 ? p->cy : 0.5 * (p->height - 1);
    if (!in_range(p->noise_sigma, 0, 0.05))
        return fail(err, errlen, "synth: noise_sigma %g m is not in 0..0.05", p->noise_sigma);
    if (!in_range(p->max_range, 0.1, 1e3))
        return fail(err, errlen, "synth: max_range %g m is not in 0.1..1000", p->max_range);
    if (!in_range(p->camera_distance, 0.2, 10))
        return fail(err, errlen, "synth: camera_distance %g m is not in 0.2..10", p->camera_distance);
    double half_fov = atan(fmax(cam->cy, p->height - 1 - cam->cy) / cam->fy) / SYNTH_DEG;
    if (!in_range(p->camera_elevation_deg, half_fov + 1, 90))
        return fail(err, errlen,
                    "synth: camera_elevation_deg %g must be in %.1f..90 (above half the vertical field of view, "
                    "so that every row looks down at the table)",
                    p->camera_elevation_deg, half_fov + 1);
    if (!in_range(p->max_tilt_deg, 0, 30))
        return fail(err, errlen, "synth: max_tilt_deg %g is not in 0..30", p->max_tilt_deg);
    if (!in_range(p->table_x, 0.3, 100) || !in_range(p->table_y, 0.3, 100))
        return fail(err, errlen, "synth: table size %g x %g m is not within 0.3..100 m on each side", p->table_x,
                    p->table_y);
    if (!in_range(p->model_spacing, 0.0005, 0.02))
        return fail(err, errlen, "synth: model_spacing %g m is not in 0.0005..0.02", p->model_spacing);
    if (!in_range(p->placement_radius, 0, 0.5 * fmax(p->table_x, p->table_y)))
        return fail(err, errlen, "synth: placement_radius %g m is not in 0..half the table's longer side",
                    p->placement_radius);
    if (!in_range(p->min_visible_fraction, 0, 1))
        return fail(err, errlen, "synth: min_visible_fraction %g is not in 0..1", p->min_visible_fraction);
    if (p->model_views > MAX_MODEL_VIEWS)
        return fail(err, errlen, "synth: model_views %u is not in 0..%d", p->model_views, MAX_MODEL_VIEWS);
    if (!in_range(p->model_view_noise, 0, 0.05))
        return fail(err, errlen, "synth: model_view_noise %g m is not in 0..0.05", p->model_view_noise);
    if (p->n_meshes > SYNTH_MAX_KINDS || (p->n_meshes > 0 && !p->meshes))
        return fail(err, errlen, "synth: n_meshes %u is not in 0..%d, with the meshes given", p->n_meshes,
                    SYNTH_MAX_KINDS);
    return 0;
}

/* World (table) -> camera: the camera stands on the -y side at camera_distance from the origin, looking at it
 * from camera_elevation_deg above the table, image x along world +x. */
static void camera_from_world(const synth_params *p, double T[16])
{
    double e = p->camera_elevation_deg * SYNTH_DEG, dist = p->camera_distance;
    double rows[3][3] = {{1, 0, 0}, {0, -sin(e), -cos(e)}, {0, cos(e), -sin(e)}};
    double eye[3] = {0, -dist * cos(e), dist * sin(e)};
    memset(T, 0, 16 * sizeof *T);
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            T[4 * r + c] = rows[r][c];
        T[4 * r + 3] = -(rows[r][0] * eye[0] + rows[r][1] * eye[1] + rows[r][2] * eye[2]);
    }
    T[15] = 1;
}

/* ---- models and placement ------------------------------------------------------------------------------- */

/* The float model cloud of a model's samples. */
static int model_cloud(const synth_model *m, host_cloud *out)
{
    memset(out, 0, sizeof *out);
    out->xyz = malloc(m->n * 3 * sizeof *out->xyz);
    out->normals = malloc(m->n * 3 * sizeof *out->normals);
    out->path = host_strdup(synth_model_name(m));
    if (!out->xyz || !out->normals || !out->path) {
        host_cloud_free(out);
        return -1;
    }
    for (size_t i = 0; i < 3 * m->n; i++) {
        out->xyz[i] = (float)m->xyz[i];
        out->normals[i] = (float)m->nrm[i];
    }
    out->width = (uint32_t)m->n;
    out->height = 1;
    out->n = m->n;
    return 0;
}

/* Renders the arrangement with camera `cam`; labels beyond max_range become "nothing". 1 when every object is
 * visible enough. */
static int render_visible(const synth_stage *st, const synth_camera *cam, const synth_model *models,
                          const synth_spot *spots, synth_image *img, uint32_t *visible)
{
    const synth_params *p = st->p;
    synth_placed targets[SYNTH_MAX_OBJECTS];
    for (uint32_t i = 0; i < p->n_objects; i++) {
        double pose[16];
        synth_pose_mul(st->T_cw, spots[i].T_wo, pose);
        targets[i] = synth_model_placed(&models[spots[i].model], pose);
    }
    double table_size[2] = {p->table_x, p->table_y};
    synth_render(cam, st->T_cw, table_size, targets, p->n_objects, img);
    memset(visible, 0, p->n_objects * sizeof *visible);
    size_t n = (size_t)cam->width * cam->height;
    for (size_t i = 0; i < n; i++) {
        if (img->depth[i] > p->max_range) {
            img->depth[i] = NAN;
            img->label[i] = -1;
        }
        if (img->label[i] > 0)
            visible[img->label[i] - 1]++;
    }
    for (uint32_t i = 0; i < p->n_objects; i++)
        if (img->alone[i] == 0 || visible[i] < p->min_visible_fraction * img->alone[i])
            return 0;
    return 1;
}

/* ---- the scene cloud ------------------------------------------------------------------------------------- */

static const uint8_t table_colour[3] = {185, 180, 170};
static const uint8_t kind_colours[][3] = {{70, 110, 205}, {205, 65, 55}, {90, 175, 80}, {225, 170, 50}};

/* Noisy depth along each pixel's ray, then the camera-frame point and a shaded colour. */
static void fill_scene(const synth_params *p, const synth_camera *cam, const synth_image *img,
                       const uint32_t *kind_of_object, host_cloud *scene)
{
    uint64_t rng = p->seed ^ 0x6E6F697365ull; /* its own stream: noise never moves the objects */
    const uint32_t n_colours = sizeof kind_colours / sizeof kind_colours[0];
    for (uint32_t v = 0; v < cam->height; v++)
        for (uint32_t u = 0; u < cam->width; u++) {
            size_t i = (size_t)v * cam->width + u;
            double z = img->depth[i];
            if (img->label[i] >= 0 && p->noise_sigma > 0)
                z += p->noise_sigma * synth_rng_clipped_normal(&rng);
            double c[3];
            synth_pixel_point(cam, u, v, z, c);
            for (int k = 0; k < 3; k++)
                scene->xyz[3 * i + k] = (float)c[k];
            const uint8_t *base = img->label[i] < 0    ? NULL
                                  : img->label[i] == 0 ? table_colour
                                                       : kind_colours[kind_of_object[img->label[i] - 1] % n_colours];
            double shade = 0.3 + 0.7 * img->facing[i];
            for (int k = 0; k < 3; k++)
                scene->rgb[3 * i + k] = base ? (uint8_t)lround(base[k] * shade) : 0;
        }
}

/* ---- generation ------------------------------------------------------------------------------------------ */

/* Kinds of the objects: a seeded shuffle of the catalogue (or of the meshes), repeated when there are more objects
 * than kinds; the kinds present are numbered in order of first use (object i shows kind number i % n_kinds). */
static void choose_kinds(const synth_params *p, uint64_t *rng, uint32_t *kind_of_object, uint32_t *n_kinds)
{
    uint32_t nk = p->n_meshes > 0 ? p->n_meshes : synth_shape_count(), order[SYNTH_MAX_KINDS];
    for (uint32_t k = 0; k < nk; k++)
        order[k] = k;
    for (uint32_t k = nk - 1; k > 0; k--) {
        uint32_t j = (uint32_t)(synth_rng_next(rng) % (k + 1)), t = order[k];
        order[k] = order[j];
        order[j] = t;
    }
    for (uint32_t i = 0; i < p->n_objects; i++)
        kind_of_object[i] = order[i % nk];
    *n_kinds = p->n_objects < nk ? p->n_objects : nk;
}

static int alloc_scene(const synth_params *p, uint32_t n_kinds, synth_scene *s)
{
    size_t n = (size_t)p->width * p->height;
    s->n_objects = p->n_objects;
    s->n_kinds = n_kinds;
    s->views_per_kind = p->model_views > 0 ? p->model_views : 1;
    uint32_t n_models = n_kinds * s->views_per_kind;
    s->n_models = n_models;
    s->complete = calloc(n_kinds, sizeof *s->complete);
    if (p->model_views > 0 && !(s->view_origin = calloc(n_models, sizeof *s->view_origin)))
        return -1;
    s->scene.width = p->width;
    s->scene.height = p->height;
    s->scene.n = n;
    s->scene.xyz = malloc(n * 3 * sizeof *s->scene.xyz);
    s->scene.rgb = malloc(n * 3);
    s->scene.path = malloc(64);
    s->models = calloc(n_models, sizeof *s->models);
    s->names = calloc(n_models, sizeof *s->names);
    s->kind_of_model = calloc(n_models, sizeof *s->kind_of_model);
    s->model_of_object = calloc(p->n_objects, sizeof *s->model_of_object);
    s->poses = calloc(p->n_objects, sizeof *s->poses);
    s->labels = malloc(n * sizeof *s->labels);
    s->visible_pixels = calloc(p->n_objects, sizeof *s->visible_pixels);
    s->visible_fraction = calloc(p->n_objects, sizeof *s->visible_fraction);
    if (!s->scene.xyz || !s->scene.rgb || !s->scene.path || !s->complete || !s->models || !s->names ||
        !s->kind_of_model || !s->model_of_object || !s->poses || !s->labels || !s->visible_pixels ||
        !s->visible_fraction)
        return -1;
    snprintf(s->scene.path, 64, "synth:seed=%llu", (unsigned long long)p->seed);
    return 0;
}

/* Scratch of one generation, freed in one place. */
typedef struct work {
    synth_model models[SYNTH_MAX_KINDS]; /* per kind present */
    uint32_t n_models;
    uint32_t model_of_object[SYNTH_MAX_OBJECTS]; /* into models */
    synth_spot spots[SYNTH_MAX_OBJECTS];
    synth_camera preview_cam; /* a coarser camera that screens arrangements for visibility cheaply */
    synth_image img, preview;
    uint32_t preview_visible[SYNTH_MAX_OBJECTS];
} work;

static void work_free(work *w)
{
    for (uint32_t m = 0; m < w->n_models; m++)
        synth_model_free(&w->models[m]);
    w->img.label = NULL; /* owned by the scene */
    synth_image_free(&w->img);
    synth_image_free(&w->preview);
}

/* The camera with pixels PREVIEW_STEP times larger (the same field of view), or the camera itself when small. */
static void preview_camera(const synth_camera *cam, synth_camera *out)
{
    *out = *cam;
    if (cam->width < 16 * PREVIEW_STEP || cam->height < 16 * PREVIEW_STEP)
        return;
    out->width = cam->width / PREVIEW_STEP;
    out->height = cam->height / PREVIEW_STEP;
    out->fx = cam->fx / PREVIEW_STEP;
    out->fy = cam->fy / PREVIEW_STEP;
    out->cx = (cam->cx + 0.5) / PREVIEW_STEP - 0.5;
    out->cy = (cam->cy + 0.5) / PREVIEW_STEP - 0.5;
}

/* One arrangement that passes the coarse visibility screen (when the image is large enough to have one) and then
 * the exact one. */
static int arrange_visible(const synth_stage *st, work *w, synth_scene *s, uint64_t *rng)
{
    int screened = w->preview_cam.width == st->cam.width;
    return synth_arrange(st, w->models, w->model_of_object, rng, w->spots) &&
           (screened || render_visible(st, &w->preview_cam, w->models, w->spots, &w->preview, w->preview_visible)) &&
           render_visible(st, &st->cam, w->models, w->spots, &w->img, s->visible_pixels);
}

/* Samples the kinds' complete surfaces, the models too when they are complete surfaces, and fills in what the
 * scene says of the models but their views. */
static int make_models(const synth_params *p, const uint32_t *kind_of_object, work *w, synth_scene *s)
{
    uint32_t per_kind = s->views_per_kind;
    for (uint32_t k = 0; k < s->n_kinds; k++) {
        uint32_t kind = kind_of_object[k]; /* the first n_kinds objects have distinct kinds */
        if ((p->n_meshes > 0 ? synth_model_of_mesh(&p->meshes[kind], &w->models[k])
                             : synth_model_make(synth_shape_get(kind), p->model_spacing, &w->models[k])) != 0)
            return -1;
        w->n_models = k + 1;
        if (model_cloud(&w->models[k], &s->complete[k]) != 0 ||
            (p->model_views == 0 && model_cloud(&w->models[k], &s->models[k]) != 0))
            return -1;
        for (uint32_t v = 0; v < per_kind; v++)
            s->kind_of_model[k * per_kind + v] = kind;
    }
    for (uint32_t i = 0; i < p->n_objects; i++) {
        w->model_of_object[i] = i % s->n_kinds;
        s->model_of_object[i] = w->model_of_object[i] * per_kind;
    }
    return 0;
}

/* Renders every kind's views (when asked for) and names the models. */
static int make_views(const synth_stage *st, const work *w, synth_scene *s, char *err, size_t errlen)
{
    const synth_params *p = st->p;
    for (uint32_t k = 0; k < s->n_kinds && p->model_views > 0; k++) {
        uint32_t first = k * p->model_views;
        int rc = synth_views_make(p, &st->cam, st->T_cw, &w->models[k], s->kind_of_model[first],
                                  &s->models[first], &s->view_origin[first]);
        if (rc == -1)
            return fail(err, errlen, "synth: out of memory");
        if (rc != 0)
            return fail(err, errlen, "synth: a view of model %s holds no point within max_range %g m",
                        synth_model_name(&w->models[k]), p->max_range);
    }
    for (uint32_t m = 0; m < s->n_models; m++)
        s->names[m] = s->models[m].path;
    return 0;
}

static int generate(const synth_stage *st, work *w, synth_scene *s, char *err, size_t errlen)
{
    const synth_params *p = st->p;
    uint64_t rng = p->seed;
    uint32_t kind_of_object[SYNTH_MAX_OBJECTS], n_kinds;
    choose_kinds(p, &rng, kind_of_object, &n_kinds);
    preview_camera(&st->cam, &w->preview_cam);
    size_t mesh_vertices = 0; /* the scratch of the largest mesh's rasterization */
    for (uint32_t k = 0; k < p->n_meshes; k++)
        mesh_vertices = p->meshes[k].n_vertices > mesh_vertices ? p->meshes[k].n_vertices : mesh_vertices;
    if (alloc_scene(p, n_kinds, s) != 0 ||
        synth_image_alloc(&st->cam, p->n_objects, s->labels, mesh_vertices, &w->img) != 0 ||
        synth_image_alloc(&w->preview_cam, p->n_objects, NULL, mesh_vertices, &w->preview) != 0 ||
        make_models(p, kind_of_object, w, s) != 0)
        return fail(err, errlen, "synth: out of memory");
    int done = 0;
    for (int a = 0; a < ARRANGEMENTS && !done; a++)
        done = arrange_visible(st, w, s, &rng);
    if (!done)
        return fail(err, errlen,
                    "synth: could not place %u objects each wholly in view, apart and at least %.0f%% visible "
                    "in %d tries (use fewer objects, a larger placement_radius or camera_distance)",
                    p->n_objects, 100 * p->min_visible_fraction, ARRANGEMENTS);
    for (uint32_t i = 0; i < p->n_objects; i++) {
        synth_pose_mul(st->T_cw, w->spots[i].T_wo, s->poses[i]);
        s->visible_fraction[i] = (double)s->visible_pixels[i] / w->img.alone[i];
    }
    memcpy(s->table_pose, st->T_cw, sizeof s->table_pose);
    s->table_size[0] = p->table_x;
    s->table_size[1] = p->table_y;
    fill_scene(p, &st->cam, &w->img, kind_of_object, &s->scene);
    return make_views(st, w, s, err, errlen);
}

int synth_generate(const synth_params *p, synth_scene *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    synth_stage st;
    st.p = p;
    if (check_params(p, &st.cam, err, errlen) != 0)
        return -1;
    camera_from_world(p, st.T_cw);
    st.placement_radius = p->placement_radius > 0 ? p->placement_radius : AUTO_SPREAD * sqrt((double)p->n_objects);
    work w;
    memset(&w, 0, sizeof w);
    int rc = generate(&st, &w, out, err, errlen);
    work_free(&w);
    if (rc != 0)
        synth_scene_free(out);
    return rc;
}
void synth_scene_free(synth_scene *s)
{
    if (!s)
        return;
    host_cloud_free(&s->scene);
    for (uint32_t m = 0; s->models && m < s->n_models; m++)
        host_cloud_free(&s->models[m]);
    for (uint32_t k = 0; s->complete && k < s->n_kinds; k++)
        host_cloud_free(&s->complete[k]);
    free(s->models);
    free(s->complete);
    free(s->view_origin);
    free(s->names);
    free(s->kind_of_model);
    free(s->model_of_object);
    free(s->poses);
    free(s->labels);
    free(s->visible_pixels);
    free(s->visible_fraction);
    memset(s, 0, sizeof *s);
}

double synth_pose_error(const host_cloud *model, const double truth[16], const double estimate[16])
{
    if (model->n == 0)
        return 0;
    double sum = 0;
    for (size_t i = 0; i < model->n; i++) {
        double q[3] = {model->xyz[3 * i], model->xyz[3 * i + 1], model->xyz[3 * i + 2]}, a[3], b[3];
        synth_pose_apply(truth, q, a);
        synth_pose_apply(estimate, q, b);
        sum += sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
    }
    return sum / model->n;
}

uint32_t synth_kind_count(void)
{
    return synth_shape_count();
}

const char *synth_kind_name(uint32_t kind)
{
    const synth_shape *s = synth_shape_get(kind);
    return s ? s->name : NULL;
}

const char *synth_kind_about(uint32_t kind)
{
    const synth_shape *s = synth_shape_get(kind);
    return s ? s->about : NULL;
}

double synth_kind_field(uint32_t kind, const double q[3])
{
    const synth_shape *s = synth_shape_get(kind);
    return s ? synth_shape_field(s, q) : NAN;
}
