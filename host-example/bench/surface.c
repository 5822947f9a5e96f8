/* surface.c -- the benchmarks' generated surface: a torus whose tube radius undulates, sampled uniformly
 * by area. Smooth and closed (every point has a full neighbourhood and a well-defined normal), curved at every
 * scale the support radius may take, and without symmetries, so that descriptors differ from place to place.
 * See surface.h. */
#include "bench/surface.h"
#include "synth/place.h" /* the host's seeded random stream (splitmix64) */

#include <math.h>
#include <stdlib.h>

#define BENCH_PI 3.14159265358979323846
#define RING 3.0   /* ring radius of the unit shape; the tube's radius undulates about 1 */
#define GRID 512   /* (u, v) samples per axis for the area integral and the density bound */

/* Tube radius at (u, v) and its partial derivatives. Stays within [0.7, 1.3]: never self-intersecting. */
static void tube(double u, double v, double *r, double *ru, double *rv)
{
    *r = 1 + 0.2 * sin(3 * u + 0.3) * sin(2 * v) + 0.1 * cos(5 * u) * cos(3 * v + 1.1);
    *ru = 0.6 * cos(3 * u + 0.3) * sin(2 * v) - 0.5 * sin(5 * u) * cos(3 * v + 1.1);
    *rv = 0.4 * sin(3 * u + 0.3) * cos(2 * v) - 0.3 * cos(5 * u) * sin(3 * v + 1.1);
}

/* The point at (u, v) and the (unnormalised, outward) normal p_u x p_v, whose length is the area density. */
static void surface_at(double u, double v, double p[3], double n[3])
{
    double r, ru, rv;
    tube(u, v, &r, &ru, &rv);
    double cu = cos(u), su = sin(u), cv = cos(v), sv = sin(v), w = RING + r * cv;
    p[0] = w * cu;
    p[1] = w * su;
    p[2] = r * sv;
    double pu[3] = {ru * cv * cu - w * su, ru * cv * su + w * cu, ru * sv};
    double a = rv * cv - r * sv;
    double pv[3] = {a * cu, a * su, rv * sv + r * cv};
    n[0] = pu[1] * pv[2] - pu[2] * pv[1];
    n[1] = pu[2] * pv[0] - pu[0] * pv[2];
    n[2] = pu[0] * pv[1] - pu[1] * pv[0];
}

static double norm3(const double n[3])
{
    return sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
}

/* The unit shape's area (midpoint rule: exact to rounding for a smooth periodic integrand) and the largest area
 * density, with a margin for the peaks between grid samples. */
static void shape_measure(double *area, double *density_bound)
{
    double sum = 0, peak = 0, p[3], n[3], h = 2 * BENCH_PI / GRID;
    for (int i = 0; i < GRID; i++)
        for (int j = 0; j < GRID; j++) {
            surface_at((i + 0.5) * h, (j + 0.5) * h, p, n);
            double d = norm3(n);
            sum += d;
            peak = d > peak ? d : peak;
        }
    *area = sum * h * h;
    *density_bound = 1.05 * peak;
}

int bench_surface_sample(size_t n, double area, uint64_t seed, float **xyz, float **normals)
{
    *xyz = malloc(3 * n * sizeof **xyz + 1);
    *normals = malloc(3 * n * sizeof **normals + 1);
    if (!*xyz || !*normals) {
        free(*xyz);
        free(*normals);
        *xyz = *normals = NULL;
        return -1;
    }
    double unit_area, bound, p[3], nn[3];
    shape_measure(&unit_area, &bound);
    double scale = sqrt(area / unit_area);
    uint64_t rng = seed;
    for (size_t k = 0; k < n;) { /* rejection: accept (u, v) in proportion to its area density */
        double u = synth_rng_uniform(&rng, 0, 2 * BENCH_PI), v = synth_rng_uniform(&rng, 0, 2 * BENCH_PI);
        surface_at(u, v, p, nn);
        double d = norm3(nn);
        if (synth_rng_uniform(&rng, 0, bound) >= d)
            continue;
        for (int a = 0; a < 3; a++) {
            (*xyz)[3 * k + a] = (float)(scale * p[a]);
            (*normals)[3 * k + a] = (float)(nn[a] / d);
        }
        k++;
    }
    return 0;
}
