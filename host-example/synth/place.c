/* place.c -- see place.h. Footprints are convex polygons circumscribing the models' samples seen
 * from above; two objects whose footprints are apart cannot touch, and a separating-axis test on the polygons'
 * edge directions decides that cheaply for every candidate spot. */
#include "synth/place.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SYNTH_PI 3.14159265358979323846
#define SYNTH_DEG (SYNTH_PI / 180)
#define SIDES SYNTH_FOOTPRINT_SIDES
#define POSITION_TRIES 100 /* spots tried for one object before the arrangement starts over */
#define TABLE_MARGIN 0.01  /* m, between a footprint and the table edge */
#define OBJECT_GAP 0.005   /* m, between two footprints; above the sample spacing, so the solids cannot meet */

uint64_t synth_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double synth_rng_uniform(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * (double)(synth_rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

double synth_rng_clipped_normal(uint64_t *state)
{
    for (;;) {
        double u = synth_rng_uniform(state, 0, 1), v = synth_rng_uniform(state, 0, 1);
        double g = sqrt(-2 * log(1 - u)) * cos(2 * SYNTH_PI * v);
        if (fabs(g) <= SYNTH_NOISE_CLIP)
            return g;
    }
}

void synth_pose_mul(const double a[16], const double b[16], double out[16])
{
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            double s = 0;
            for (int k = 0; k < 4; k++)
                s += a[4 * r + k] * b[4 * k + c];
            out[4 * r + c] = s;
        }
}

void synth_pose_apply(const double T[16], const double p[3], double out[3])
{
    for (int r = 0; r < 3; r++)
        out[r] = T[4 * r] * p[0] + T[4 * r + 1] * p[1] + T[4 * r + 2] * p[2] + T[4 * r + 3];
}

/* ---- models ---------------------------------------------------------------------------------------------- */

/* Support lines of the samples' (x, y) in SIDES directions; consecutive lines meet at the polygon's vertices. */
static void footprint_of(synth_model *m)
{
    for (int k = 0; k < SIDES; k++) {
        m->dir[k][0] = cos(2 * SYNTH_PI * k / SIDES);
        m->dir[k][1] = sin(2 * SYNTH_PI * k / SIDES);
        m->support[k] = -INFINITY;
        for (size_t i = 0; i < m->n; i++)
            m->support[k] = fmax(m->support[k], m->dir[k][0] * m->xyz[3 * i] + m->dir[k][1] * m->xyz[3 * i + 1]);
    }
    double det = sin(2 * SYNTH_PI / SIDES);
    for (int k = 0; k < SIDES; k++) {
        const double *a = m->dir[k], *b = m->dir[(k + 1) % SIDES];
        double ha = m->support[k], hb = m->support[(k + 1) % SIDES];
        m->footprint[k][0] = (ha * b[1] - hb * a[1]) / det;
        m->footprint[k][1] = (hb * a[0] - ha * b[0]) / det;
        m->footprint_reach = fmax(m->footprint_reach, hypot(m->footprint[k][0], m->footprint[k][1]));
    }
}

/* Reach, top and footprint of the samples. */
static void measure(synth_model *m)
{
    for (size_t i = 0; i < m->n; i++) {
        m->reach = fmax(m->reach, hypot(m->xyz[3 * i], m->xyz[3 * i + 1]));
        m->top = fmax(m->top, m->xyz[3 * i + 2]);
    }
    footprint_of(m);
}

int synth_model_make(const synth_shape *shape, double spacing, synth_model *m)
{
    memset(m, 0, sizeof *m);
    m->shape = shape;
    if (synth_shape_sample(shape, spacing, &m->xyz, &m->nrm, &m->n) != 0)
        return -1;
    measure(m);
    return 0;
}

int synth_model_of_mesh(const synth_mesh *mesh, synth_model *m)
{
    memset(m, 0, sizeof *m);
    m->mesh = mesh;
    size_t bytes = mesh->n_vertices * 3 * sizeof *m->xyz;
    m->xyz = malloc(bytes);
    m->nrm = malloc(bytes);
    if (!m->xyz || !m->nrm) {
        synth_model_free(m);
        return -1;
    }
    memcpy(m->xyz, mesh->xyz, bytes);
    memcpy(m->nrm, mesh->nrm, bytes);
    m->n = mesh->n_vertices;
    measure(m);
    return 0;
}

const char *synth_model_name(const synth_model *m)
{
    return m->mesh ? m->mesh->name : m->shape->name;
}

synth_placed synth_model_placed(const synth_model *m, const double pose[16])
{
    synth_placed o;
    o.shape = m->shape;
    o.mesh = m->mesh;
    memcpy(o.pose, pose, sizeof o.pose);
    return o;
}

void synth_model_free(synth_model *m)
{
    free(m->xyz);
    free(m->nrm);
    memset(m, 0, sizeof *m);
}

/* ---- spots ----------------------------------------------------------------------------------------------- */

/* Rotation by `angle` about the horizontal unit axis at `azimuth`, after turning by `yaw` about z. */
static void tilt_and_turn(double yaw, double azimuth, double angle, double R[9])
{
    double ux = cos(azimuth), uy = sin(azimuth), c = cos(angle), s = sin(angle);
    double tilt[9] = {c + ux * ux * (1 - c), ux * uy * (1 - c), uy * s, ux * uy * (1 - c), c + uy * uy * (1 - c),
                      -ux * s,               -uy * s,           ux * s, c};
    double turn[9] = {cos(yaw), -sin(yaw), 0, sin(yaw), cos(yaw), 0, 0, 0, 1};
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
            R[3 * r + k] = tilt[3 * r] * turn[k] + tilt[3 * r + 1] * turn[3 + k] + tilt[3 * r + 2] * turn[6 + k];
}

/* A random pose at a random point within placement_radius of the table centre, not yet resting on the table.
 * A tilt by t moves a sample at distance rho from the axis and height z at most rho (1 - cos t) + z sin t
 * sideways: that is the footprint's slack. */
static void random_spot(const synth_stage *st, const synth_model *m, uint64_t *rng, synth_spot *s)
{
    double R[9];
    s->yaw = synth_rng_uniform(rng, 0, 2 * SYNTH_PI);
    double azimuth = synth_rng_uniform(rng, 0, 2 * SYNTH_PI);
    double tilt = synth_rng_uniform(rng, 0, st->p->max_tilt_deg * SYNTH_DEG);
    double r = st->placement_radius * sqrt(synth_rng_uniform(rng, 0, 1));
    double a = synth_rng_uniform(rng, 0, 2 * SYNTH_PI);
    tilt_and_turn(s->yaw, azimuth, tilt, R);
    double T[16] = {R[0], R[1], R[2], r * cos(a), R[3], R[4], R[5], r * sin(a), R[6], R[7], R[8], 0, 0, 0, 0, 1};
    memcpy(s->T_wo, T, sizeof T);
    s->slack = m->reach * (1 - cos(tilt)) + m->top * sin(tilt);
}

/* 1 if one of a's edge directions separates b's footprint from a's by at least `gap`. Along its own edge
 * directions a's footprint spans [-support[k + SIDES/2], support[k]]; b's vertices are projected. */
static int apart_along_edges_of(const synth_model *ma, const synth_spot *a, const synth_model *mb,
                                const synth_spot *b, double gap)
{
    /* b's footprint in a's frame (turned by -a->yaw about a's centre) */
    double turn = b->yaw - a->yaw, c = cos(turn), s = sin(turn);
    double dx = b->T_wo[3] - a->T_wo[3], dy = b->T_wo[7] - a->T_wo[7];
    double ox = cos(a->yaw) * dx + sin(a->yaw) * dy, oy = -sin(a->yaw) * dx + cos(a->yaw) * dy;
    double vb[SIDES][2];
    for (int v = 0; v < SIDES; v++) {
        vb[v][0] = c * mb->footprint[v][0] - s * mb->footprint[v][1] + ox;
        vb[v][1] = s * mb->footprint[v][0] + c * mb->footprint[v][1] + oy;
    }
    for (int k = 0; k < SIDES; k++) {
        double amax = ma->support[k], amin = -ma->support[(k + SIDES / 2) % SIDES];
        double bmin = INFINITY, bmax = -INFINITY;
        for (int v = 0; v < SIDES; v++) {
            double proj = ma->dir[k][0] * vb[v][0] + ma->dir[k][1] * vb[v][1];
            bmin = proj < bmin ? proj : bmin;
            bmax = proj > bmax ? proj : bmax;
        }
        if (bmin - amax >= gap || amin - bmax >= gap)
            return 1;
    }
    return 0;
}

/* Footprints at least `gap` apart: far enough for their circumscribed circles, or split by an edge direction. */
static int footprints_apart(const synth_model *ma, const synth_spot *a, const synth_model *mb, const synth_spot *b,
                            double gap)
{
    double centres = hypot(b->T_wo[3] - a->T_wo[3], b->T_wo[7] - a->T_wo[7]);
    return centres >= ma->footprint_reach + mb->footprint_reach + gap || apart_along_edges_of(ma, a, mb, b, gap) ||
           apart_along_edges_of(mb, b, ma, a, gap);
}

/* The footprint stays on the table and apart from the footprints of the objects placed before it. */
static int footprint_fits(const synth_stage *st, const synth_model *models, const synth_spot *s,
                          const synth_spot *before, uint32_t n_before)
{
    const synth_model *m = &models[s->model];
    double c = cos(s->yaw), sn = sin(s->yaw);
    for (int k = 0; k < SIDES; k++) {
        double x = c * m->footprint[k][0] - sn * m->footprint[k][1] + s->T_wo[3];
        double y = sn * m->footprint[k][0] + c * m->footprint[k][1] + s->T_wo[7];
        if (fabs(x) > 0.5 * st->p->table_x - TABLE_MARGIN - s->slack ||
            fabs(y) > 0.5 * st->p->table_y - TABLE_MARGIN - s->slack)
            return 0;
    }
    for (uint32_t j = 0; j < n_before; j++)
        if (!footprints_apart(m, s, &models[before[j].model], &before[j], OBJECT_GAP + s->slack + before[j].slack))
            return 0;
    return 1;
}

/* Lifts the object so that its lowest sample touches the table. */
static void rest_on_table(const synth_model *m, synth_spot *s)
{
    double lowest = INFINITY;
    for (size_t i = 0; i < m->n; i++) {
        const double *q = &m->xyz[3 * i];
        lowest = fmin(lowest, s->T_wo[8] * q[0] + s->T_wo[9] * q[1] + s->T_wo[10] * q[2]);
    }
    s->T_wo[11] = -lowest;
}

/* Every sample projects inside the image. */
static int wholly_in_view(const synth_stage *st, const synth_model *m, const synth_spot *s)
{
    double T_co[16];
    synth_pose_mul(st->T_cw, s->T_wo, T_co);
    for (size_t i = 0; i < m->n; i++) {
        double c[3];
        synth_pose_apply(T_co, &m->xyz[3 * i], c);
        double u = st->cam.fx * c[0] / c[2] + st->cam.cx, v = st->cam.fy * c[1] / c[2] + st->cam.cy;
        if (!(c[2] > 0 && u >= 0 && u <= st->cam.width - 1 && v >= 0 && v <= st->cam.height - 1))
            return 0;
    }
    return 1;
}

int synth_arrange(const synth_stage *st, const synth_model *models, const uint32_t *model_of, uint64_t *rng,
                  synth_spot *spots)
{
    for (uint32_t i = 0; i < st->p->n_objects; i++) {
        const synth_model *m = &models[model_of[i]];
        int ok = 0;
        spots[i].model = model_of[i];
        for (int t = 0; t < POSITION_TRIES && !ok; t++) {
            random_spot(st, m, rng, &spots[i]);
            if (!footprint_fits(st, models, &spots[i], spots, i))
                continue;
            rest_on_table(m, &spots[i]);
            ok = wholly_in_view(st, m, &spots[i]);
        }
        if (!ok)
            return 0;
    }
    return 1;
}
