/* shapes.c -- exact geometry of the synthetic objects: ray/solid intersection, signed field and surface
 * sampling of unions of convex primitives minus convex primitives. See shapes.h. */
#include "synth/shapes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SYNTH_PI 3.14159265358979323846
/* Two surfaces closer than this (metres) count as the same surface when deciding which primitive owns a sample. */
#define SYNTH_SAME_SURFACE 1e-9

static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void sub3(const double a[3], const double b[3], double out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = a[k] - b[k];
}

static void axpy3(double s, const double x[3], const double y[3], double out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = s * x[k] + y[k];
}

static double norm3(const double a[3])
{
    return sqrt(dot3(a, a));
}

static void normalize3(double a[3])
{
    double len = norm3(a);
    for (int k = 0; k < 3; k++)
        a[k] /= len;
}

/* Unit axis from a to b and its length. */
static double axis_of(const synth_prim *p, double ax[3])
{
    sub3(p->b, p->a, ax);
    double len = norm3(ax);
    for (int k = 0; k < 3; k++)
        ax[k] /= len;
    return len;
}

/* Two unit vectors completing ax to a right-handed orthonormal basis (deterministic). */
static void basis_of(const double ax[3], double e1[3], double e2[3])
{
    int least = 0;
    for (int k = 1; k < 3; k++)
        if (fabs(ax[k]) < fabs(ax[least]))
            least = k;
    double helper[3] = {0, 0, 0};
    helper[least] = 1;
    e1[0] = helper[1] * ax[2] - helper[2] * ax[1];
    e1[1] = helper[2] * ax[0] - helper[0] * ax[2];
    e1[2] = helper[0] * ax[1] - helper[1] * ax[0];
    normalize3(e1);
    e2[0] = ax[1] * e1[2] - ax[2] * e1[1];
    e2[1] = ax[2] * e1[0] - ax[0] * e1[2];
    e2[2] = ax[0] * e1[1] - ax[1] * e1[0];
}

/* ---- distance fields ------------------------------------------------------------------------------------ */

static double box_field(const synth_prim *p, const double q[3])
{
    double outside = 0, inside = -INFINITY;
    for (int k = 0; k < 3; k++) {
        double half = 0.5 * (p->b[k] - p->a[k]);
        double dk = fabs(q[k] - 0.5 * (p->a[k] + p->b[k])) - half;
        outside += dk > 0 ? dk * dk : 0;
        inside = fmax(inside, dk);
    }
    return sqrt(outside) + fmin(inside, 0);
}

static double cylinder_field(const synth_prim *p, const double q[3])
{
    double ax[3], pa[3], radial[3];
    double len = axis_of(p, ax);
    sub3(q, p->a, pa);
    double s = dot3(pa, ax);
    axpy3(-s, ax, pa, radial);
    double dr = norm3(radial) - p->r;
    double ds = fabs(s - 0.5 * len) - 0.5 * len;
    if (dr <= 0 && ds <= 0)
        return fmax(dr, ds);
    return hypot(fmax(dr, 0), fmax(ds, 0));
}

static double capsule_field(const synth_prim *p, const double q[3])
{
    double ax[3], pa[3], off[3];
    double len = axis_of(p, ax);
    sub3(q, p->a, pa);
    double s = fmin(fmax(dot3(pa, ax), 0), len);
    axpy3(-s, ax, pa, off);
    return norm3(off) - p->r;
}

static double sphere_field(const synth_prim *p, const double q[3])
{
    double off[3];
    sub3(q, p->a, off);
    return norm3(off) - p->r;
}

static double prim_field(const synth_prim *p, const double q[3])
{
    switch (p->type) {
    case SYNTH_BOX:
        return box_field(p, q);
    case SYNTH_CYLINDER:
        return cylinder_field(p, q);
    case SYNTH_CAPSULE:
        return capsule_field(p, q);
    case SYNTH_SPHERE:
        return sphere_field(p, q);
    }
    return INFINITY;
}

double synth_shape_field(const synth_shape *s, const double q[3])
{
    double added = INFINITY, carved = INFINITY;
    for (uint32_t i = 0; i < s->n_prims; i++) {
        double f = prim_field(&s->prims[i], q);
        if (s->prims[i].subtract)
            carved = fmin(carved, f);
        else
            added = fmin(added, f);
    }
    return isinf(carved) ? added : fmax(added, -carved);
}

double synth_shape_bound(const synth_shape *s)
{
    double bound = 0;
    for (uint32_t i = 0; i < s->n_prims; i++) {
        const synth_prim *p = &s->prims[i];
        if (p->subtract)
            continue;
        if (p->type == SYNTH_BOX) {
            double far[3];
            for (int k = 0; k < 3; k++)
                far[k] = fmax(fabs(p->a[k]), fabs(p->b[k]));
            bound = fmax(bound, norm3(far));
        } else if (p->type == SYNTH_SPHERE) {
            bound = fmax(bound, norm3(p->a) + p->r);
        } else {
            bound = fmax(bound, fmax(norm3(p->a), norm3(p->b)) + p->r);
        }
    }
    return bound;
}

/* ---- ray intervals --------------------------------------------------------------------------------------- */

/* Where a ray is inside one convex primitive: entry t0 and exit t1 with the primitive's outward normals. */
typedef struct span {
    double t0, t1;
    double n0[3], n1[3];
} span;

/* Roots of A t^2 + 2 B t + C = 0 (A > 0) in increasing order, computed without cancellation. */
static int quadratic_roots(double A, double B, double C, double *r0, double *r1)
{
    double disc = B * B - A * C;
    if (disc < 0)
        return 0;
    double q = -(B + copysign(sqrt(disc), B));
    if (q == 0) {
        *r0 = *r1 = 0;
        return 1;
    }
    double x = q / A, y = C / q;
    *r0 = fmin(x, y);
    *r1 = fmax(x, y);
    return 1;
}

static int box_span(const synth_prim *p, const double o[3], const double d[3], span *sp)
{
    double t0 = -INFINITY, t1 = INFINITY;
    int k0 = -1, k1 = -1;
    for (int k = 0; k < 3; k++) {
        if (d[k] == 0) {
            if (o[k] < p->a[k] || o[k] > p->b[k])
                return 0;
            continue;
        }
        double ta = (p->a[k] - o[k]) / d[k], tb = (p->b[k] - o[k]) / d[k];
        if (fmin(ta, tb) > t0) {
            t0 = fmin(ta, tb);
            k0 = k;
        }
        if (fmax(ta, tb) < t1) {
            t1 = fmax(ta, tb);
            k1 = k;
        }
    }
    if (k0 < 0 || k1 < 0 || t0 > t1)
        return 0;
    memset(sp, 0, sizeof *sp);
    sp->t0 = t0;
    sp->t1 = t1;
    sp->n0[k0] = d[k0] > 0 ? -1 : 1;
    sp->n1[k1] = d[k1] > 0 ? 1 : -1;
    return 1;
}

static int sphere_span(const double c[3], double r, const double o[3], const double d[3], span *sp)
{
    double oc[3];
    sub3(o, c, oc);
    if (!quadratic_roots(dot3(d, d), dot3(oc, d), dot3(oc, oc) - r * r, &sp->t0, &sp->t1))
        return 0;
    double pt[3];
    axpy3(sp->t0, d, o, pt);
    sub3(pt, c, sp->n0);
    normalize3(sp->n0);
    axpy3(sp->t1, d, o, pt);
    sub3(pt, c, sp->n1);
    normalize3(sp->n1);
    return 1;
}

/* Outward normal of a cylinder's side at the point o + t d. */
static void radial_normal(const synth_prim *p, const double ax[3], const double o[3], const double d[3], double t,
                          double n[3])
{
    double pt[3], pa[3];
    axpy3(t, d, o, pt);
    sub3(pt, p->a, pa);
    axpy3(-dot3(pa, ax), ax, pa, n);
    normalize3(n);
}

static int cylinder_span(const synth_prim *p, const double o[3], const double d[3], span *sp)
{
    double ax[3], oc[3], dp[3], op[3];
    double len = axis_of(p, ax);
    sub3(o, p->a, oc);
    double dd = dot3(d, ax), od = dot3(oc, ax);
    axpy3(-dd, ax, d, dp);
    axpy3(-od, ax, oc, op);
    double r0 = -INFINITY, r1 = INFINITY, s0 = -INFINITY, s1 = INFINITY;
    double A = dot3(dp, dp), C = dot3(op, op) - p->r * p->r;
    if (A > 0) {
        if (!quadratic_roots(A, dot3(op, dp), C, &r0, &r1))
            return 0;
    } else if (C > 0) {
        return 0;
    }
    if (dd != 0) {
        s0 = fmin(-od / dd, (len - od) / dd);
        s1 = fmax(-od / dd, (len - od) / dd);
    } else if (od < 0 || od > len) {
        return 0;
    }
    sp->t0 = fmax(r0, s0);
    sp->t1 = fmin(r1, s1);
    if (sp->t0 > sp->t1)
        return 0;
    if (r0 >= s0)
        radial_normal(p, ax, o, d, sp->t0, sp->n0);
    else
        for (int k = 0; k < 3; k++)
            sp->n0[k] = dd > 0 ? -ax[k] : ax[k];
    if (r1 <= s1)
        radial_normal(p, ax, o, d, sp->t1, sp->n1);
    else
        for (int k = 0; k < 3; k++)
            sp->n1[k] = dd > 0 ? ax[k] : -ax[k];
    return 1;
}

/* A capsule is convex and the union of its two end spheres and its capped cylinder, so its interval is the hull
 * of theirs. */
static int capsule_span(const synth_prim *p, const double o[3], const double d[3], span *sp)
{
    span parts[3];
    int hits[3] = {sphere_span(p->a, p->r, o, d, &parts[0]), sphere_span(p->b, p->r, o, d, &parts[1]),
                   cylinder_span(p, o, d, &parts[2])};
    int any = 0;
    for (int i = 0; i < 3; i++) {
        if (!hits[i])
            continue;
        if (!any || parts[i].t0 < sp->t0) {
            sp->t0 = parts[i].t0;
            memcpy(sp->n0, parts[i].n0, sizeof sp->n0);
        }
        if (!any || parts[i].t1 > sp->t1) {
            sp->t1 = parts[i].t1;
            memcpy(sp->n1, parts[i].n1, sizeof sp->n1);
        }
        any = 1;
    }
    return any;
}

static int prim_span(const synth_prim *p, const double o[3], const double d[3], span *sp)
{
    switch (p->type) {
    case SYNTH_BOX:
        return box_span(p, o, d, sp);
    case SYNTH_CYLINDER:
        return cylinder_span(p, o, d, sp);
    case SYNTH_CAPSULE:
        return capsule_span(p, o, d, sp);
    case SYNTH_SPHERE:
        return sphere_span(p->a, p->r, o, d, sp);
    }
    return 0;
}

/* 1 if t lies strictly inside the interval of some primitive other than `skip` whose subtract flag is `carved`. */
static int strictly_inside(const synth_shape *s, const span *sp, const int *hit, uint32_t skip, int carved, double t)
{
    for (uint32_t k = 0; k < s->n_prims; k++)
        if (k != skip && hit[k] && s->prims[k].subtract == carved && sp[k].t0 < t && t < sp[k].t1)
            return 1;
    return 0;
}

/* The solid starts along the ray where it enters an added primitive outside every other primitive, or where it
 * leaves a carved primitive while inside an added one and outside every other carved one. */
int synth_shape_ray(const synth_shape *s, const double o[3], const double d[3], double t_min, double *t,
                    double n[3])
{
    span sp[SYNTH_MAX_PRIMS];
    int hit[SYNTH_MAX_PRIMS];
    for (uint32_t i = 0; i < s->n_prims; i++)
        hit[i] = prim_span(&s->prims[i], o, d, &sp[i]);
    double best = INFINITY;
    for (uint32_t i = 0; i < s->n_prims; i++) {
        if (!hit[i])
            continue;
        int carved = s->prims[i].subtract;
        double cand = carved ? sp[i].t1 : sp[i].t0;
        if (!(cand > t_min && cand < best))
            continue;
        if (strictly_inside(s, sp, hit, i, carved, cand))
            continue;
        if (carved != strictly_inside(s, sp, hit, i, !carved, cand))
            continue;
        best = cand;
        for (int k = 0; k < 3; k++)
            n[k] = carved ? -sp[i].n1[k] : sp[i].n0[k];
    }
    if (isinf(best))
        return 0;
    *t = best;
    return 1;
}

/* ---- surface sampling ------------------------------------------------------------------------------------ */

typedef struct sample_buf {
    const synth_shape *shape;
    uint32_t prim; /* the primitive whose surface is being sampled */
    double spacing;
    double *xyz, *nrm;
    size_t n, cap;
    int oom;
} sample_buf;

/* Whether the point q on primitive i's surface is on the solid's surface, each surface patch being owned by one
 * primitive only: coincident faces go to the lower index, so overlapping parts are not sampled twice. */
static int surface_owned(const synth_shape *s, uint32_t i, const double q[3])
{
    int carved = s->prims[i].subtract, in_material = 0;
    for (uint32_t k = 0; k < s->n_prims; k++) {
        if (k == i)
            continue;
        double f = prim_field(&s->prims[k], q);
        if (s->prims[k].subtract == carved) {
            if (f < -SYNTH_SAME_SURFACE || (f <= SYNTH_SAME_SURFACE && k < i))
                return 0;
        } else if (!carved) {
            if (f < SYNTH_SAME_SURFACE)
                return 0;
        } else if (f < -SYNTH_SAME_SURFACE) {
            in_material = 1;
        }
    }
    return carved ? in_material : 1;
}

/* Keeps q (on the current primitive, with that primitive's outward normal) when the solid's surface is there. */
static void emit(sample_buf *b, const double q[3], const double nrm[3])
{
    if (b->oom || !surface_owned(b->shape, b->prim, q))
        return;
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 4096;
        double *xyz = realloc(b->xyz, cap * 3 * sizeof *xyz);
        if (xyz)
            b->xyz = xyz;
        double *n = xyz ? realloc(b->nrm, cap * 3 * sizeof *n) : NULL;
        if (!n) {
            b->oom = 1;
            return;
        }
        b->nrm = n;
        b->cap = cap;
    }
    double sign = b->shape->prims[b->prim].subtract ? -1 : 1;
    for (int k = 0; k < 3; k++) {
        b->xyz[3 * b->n + k] = q[k];
        b->nrm[3 * b->n + k] = sign * nrm[k];
    }
    b->n++;
}

/* Lattice cells along a length so that cells are at most `spacing` long. */
static long cells(double length, double spacing)
{
    long c = (long)ceil(length / spacing - 1e-9);
    return c < 1 ? 1 : c;
}

/* Golden-ratio phase shift per ring, so lattice columns do not line up. */
static double ring_phase(long ring, long count)
{
    double f = ring * 0.6180339887498949;
    return (f - floor(f)) * 2 * SYNTH_PI / count;
}

static void sample_box(sample_buf *b, const synth_prim *p)
{
    for (int k = 0; k < 3; k++) {
        int i = (k + 1) % 3, j = (k + 2) % 3;
        double li = p->b[i] - p->a[i], lj = p->b[j] - p->a[j];
        long ni = cells(li, b->spacing), nj = cells(lj, b->spacing);
        for (int side = 0; side < 2; side++) {
            double q[3], n[3] = {0, 0, 0};
            q[k] = side ? p->b[k] : p->a[k];
            n[k] = side ? 1 : -1;
            for (long u = 0; u < ni; u++)
                for (long v = 0; v < nj; v++) {
                    q[i] = p->a[i] + (u + 0.5) * li / ni;
                    q[j] = p->a[j] + (v + 0.5) * lj / nj;
                    emit(b, q, n);
                }
        }
    }
}

/* Side of the cylinder of radius r around the axis from a (unit ax, length len), caps excluded. */
static void sample_side(sample_buf *b, const double a[3], const double ax[3], double len, double r)
{
    double e1[3], e2[3];
    basis_of(ax, e1, e2);
    long nz = cells(len, b->spacing), nt = cells(2 * SYNTH_PI * r, b->spacing);
    for (long k = 0; k < nz; k++) {
        double h = (k + 0.5) * len / nz, phase = ring_phase(k, nt);
        for (long m = 0; m < nt; m++) {
            double th = phase + 2 * SYNTH_PI * m / nt, n[3], q[3];
            for (int c = 0; c < 3; c++) {
                n[c] = cos(th) * e1[c] + sin(th) * e2[c];
                q[c] = a[c] + h * ax[c] + r * n[c];
            }
            emit(b, q, n);
        }
    }
}

/* Disc of radius r about centre c facing along the unit normal nrm, in concentric rings of equal spacing. */
static void sample_disc(sample_buf *b, const double c[3], const double nrm[3], double r)
{
    double e1[3], e2[3];
    basis_of(nrm, e1, e2);
    long nr = cells(r, b->spacing);
    for (long m = 0; m < nr; m++) {
        double rho = (m + 0.5) * r / nr;
        long count = cells(2 * SYNTH_PI * rho, b->spacing);
        double phase = ring_phase(m, count);
        for (long j = 0; j < count; j++) {
            double th = phase + 2 * SYNTH_PI * j / count, q[3];
            for (int k = 0; k < 3; k++)
                q[k] = c[k] + rho * (cos(th) * e1[k] + sin(th) * e2[k]);
            emit(b, q, nrm);
        }
    }
}

/* Fibonacci lattice on the sphere (equal area per point); with `half` non-NULL only the hemisphere it points to. */
static void sample_sphere(sample_buf *b, const double c[3], double r, const double *half)
{
    long n = lround(4 * SYNTH_PI * r * r / (b->spacing * b->spacing));
    if (n < 1)
        n = 1;
    double golden = SYNTH_PI * (3 - sqrt(5.0));
    for (long i = 0; i < n; i++) {
        double z = 1 - (2.0 * i + 1) / n, rho = sqrt(1 - z * z), phi = golden * i;
        double dir[3] = {rho * cos(phi), rho * sin(phi), z}, q[3];
        if (half && dot3(dir, half) <= 0)
            continue;
        axpy3(r, dir, c, q);
        emit(b, q, dir);
    }
}

static void sample_prim(sample_buf *b, const synth_prim *p)
{
    double ax[3], minus_ax[3], len;
    switch (p->type) {
    case SYNTH_BOX:
        sample_box(b, p);
        return;
    case SYNTH_SPHERE:
        sample_sphere(b, p->a, p->r, NULL);
        return;
    case SYNTH_CYLINDER:
        len = axis_of(p, ax);
        for (int k = 0; k < 3; k++)
            minus_ax[k] = -ax[k];
        sample_side(b, p->a, ax, len, p->r);
        sample_disc(b, p->a, minus_ax, p->r);
        sample_disc(b, p->b, ax, p->r);
        return;
    case SYNTH_CAPSULE:
        len = axis_of(p, ax);
        for (int k = 0; k < 3; k++)
            minus_ax[k] = -ax[k];
        sample_side(b, p->a, ax, len, p->r);
        sample_sphere(b, p->a, p->r, minus_ax);
        sample_sphere(b, p->b, p->r, ax);
        return;
    }
}

int synth_shape_sample(const synth_shape *s, double spacing, double **xyz, double **normals, size_t *n)
{
    sample_buf b = {s, 0, spacing, NULL, NULL, 0, 0, 0};
    for (b.prim = 0; b.prim < s->n_prims && !b.oom; b.prim++)
        sample_prim(&b, &s->prims[b.prim]);
    if (b.oom || b.n == 0) {
        free(b.xyz);
        free(b.nrm);
        return -1;
    }
    *xyz = b.xyz;
    *normals = b.nrm;
    *n = b.n;
    return 0;
}
