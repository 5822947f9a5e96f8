/* icp_scene.c -- see icp_scene.h. */
#include "icp_scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

double grip_icp_uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static double gaussian(uint64_t *s)
{
    const double u1 = grip_icp_uniform(s) + 1e-300, u2 = grip_icp_uniform(s);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * PI * u2);
}

/* The height at (x, y) of the terrain of size h, and its two slopes. */
static double terrain(double x, double y, double h, double *fx, double *fy)
{
    const double a = 0.1 * h, k1 = 2.1 * PI / h, k2 = 1.3 * PI / h, k3 = 3.7 / h;
    *fx = a * (k1 * cos(k1 * x) * cos(k2 * y) + 0.5 * k3 * cos(k3 * (x + 0.6 * y)));
    *fy = a * (-k2 * sin(k1 * x) * sin(k2 * y) + 0.3 * k3 * cos(k3 * (x + 0.6 * y)));
    return a * (sin(k1 * x) * cos(k2 * y) + 0.5 * sin(k3 * (x + 0.6 * y)));
}

int grip_icp_terrain(uint64_t *seed, size_t n, double scale, double extent, double sigma, grip_icp_cloud *out)
{
    memset(out, 0, sizeof *out);
    out->xyz = malloc((n ? n : 1) * 3 * sizeof *out->xyz);
    out->normals = malloc((n ? n : 1) * 3 * sizeof *out->normals);
    if (!out->xyz || !out->normals) {
        grip_icp_cloud_free(out);
        return 0;
    }
    for (size_t i = 0; i < n; ++i) {
        const double x = (2.0 * grip_icp_uniform(seed) - 1.0) * extent;
        const double y = (2.0 * grip_icp_uniform(seed) - 1.0) * extent;
        double fx, fy;
        const double z = terrain(x, y, scale, &fx, &fy);
        const double len = sqrt(fx * fx + fy * fy + 1.0), nrm[3] = {-fx / len, -fy / len, 1.0 / len};
        const double e = sigma > 0.0 ? sigma * gaussian(seed) : 0.0, p[3] = {x, y, z};
        for (int a = 0; a < 3; ++a) {
            out->xyz[3 * i + a] = (float)(p[a] + e * nrm[a]);
            out->normals[3 * i + a] = (float)nrm[a];
        }
    }
    out->n = n;
    return 1;
}

void grip_icp_cloud_free(grip_icp_cloud *c)
{
    free(c->xyz);
    free(c->normals);
    memset(c, 0, sizeof *c);
}

void grip_icp_cloud_transform(grip_icp_cloud *c, const double T[16])
{
    for (size_t i = 0; i < c->n; ++i) {
        const double p[3] = {c->xyz[3 * i], c->xyz[3 * i + 1], c->xyz[3 * i + 2]};
        const double v[3] = {c->normals[3 * i], c->normals[3 * i + 1], c->normals[3 * i + 2]};
        for (int r = 0; r < 3; ++r) {
            c->xyz[3 * i + r] = (float)(T[4 * r] * p[0] + T[4 * r + 1] * p[1] + T[4 * r + 2] * p[2] + T[4 * r + 3]);
            c->normals[3 * i + r] = (float)(T[4 * r] * v[0] + T[4 * r + 1] * v[1] + T[4 * r + 2] * v[2]);
        }
    }
}

static void random_unit(uint64_t *s, double u[3])
{
    const double z = 2.0 * grip_icp_uniform(s) - 1.0, phi = 2.0 * PI * grip_icp_uniform(s), r = sqrt(1.0 - z * z);
    u[0] = r * cos(phi);
    u[1] = r * sin(phi);
    u[2] = z;
}

void grip_icp_perturb(uint64_t *seed, const double pose[16], const double center[3], double degrees, double metres,
                      double out[16])
{
    double axis[3], dir[3];
    random_unit(seed, axis);
    random_unit(seed, dir);
    const double ang = degrees * PI / 180.0, c = cos(ang), s = sin(ang), C = 1.0 - c;
    const double x = axis[0], y = axis[1], z = axis[2];
    const double R[9] = {c + x * x * C,     x * y * C - z * s, x * z * C + y * s, y * x * C + z * s, c + y * y * C,
                         y * z * C - x * s, z * x * C - y * s, z * y * C + x * s, c + z * z * C};
    double D[16] = {0};
    for (int r = 0; r < 3; ++r) {
        for (int k = 0; k < 3; ++k)
            D[4 * r + k] = R[3 * r + k];
        /* rotate about center: p -> R (p - c) + c + t */
        D[4 * r + 3] = center[r] - (R[3 * r] * center[0] + R[3 * r + 1] * center[1] + R[3 * r + 2] * center[2]) +
                       metres * dir[r];
    }
    D[15] = 1.0;
    for (int r = 0; r < 4; ++r)
        for (int k = 0; k < 4; ++k) {
            double sum = 0.0;
            for (int i = 0; i < 4; ++i)
                sum += D[4 * r + i] * pose[4 * i + k];
            out[4 * r + k] = sum;
        }
}

double grip_icp_rotation_error_deg(const double a[16], const double b[16])
{
    double tr = 0.0;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            tr += a[4 * r + c] * b[4 * r + c];
    const double cs = 0.5 * (tr - 1.0);
    return acos(cs > 1.0 ? 1.0 : cs < -1.0 ? -1.0 : cs) * 180.0 / PI;
}

double grip_icp_translation_error(const double a[16], const double b[16])
{
    const double dx = a[3] - b[3], dy = a[7] - b[7], dz = a[11] - b[11];
    return sqrt(dx * dx + dy * dy + dz * dz);
}
