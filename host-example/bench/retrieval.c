/* retrieval.c -- posed noisy copies of a model and their measurements. See retrieval.h. */
#include "bench/retrieval.h"
#include "bench/grid.h"
#include "host_util.h"
#include "synth/place.h" /* the host's seeded random stream */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int retrieval_read_xf(const char *path, double T[16], char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    int n = 0;
    while (f && n < 16 && fscanf(f, "%lf", &T[n]) == 1)
        n++;
    if (f)
        fclose(f);
    if (n != 16 || fabs(T[12]) + fabs(T[13]) + fabs(T[14]) + fabs(T[15] - 1) > 1e-6) {
        snprintf(err, errlen, "%s: %s", path,
                 f ? "expected a 4 x 4 row-major pose (16 numbers, last row 0 0 0 1)" : "cannot open");
        return -1;
    }
    return 0;
}

void retrieval_random_pose(uint64_t *rng, double T[16])
{
    double q[4], len = 0;
    do {
        len = 0;
        for (int i = 0; i < 4; i++) {
            q[i] = synth_rng_uniform(rng, -1, 1);
            len += q[i] * q[i];
        }
    } while (len > 1 || len < 1e-6);
    for (int i = 0; i < 4; i++)
        q[i] /= sqrt(len);
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                   2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    memset(T, 0, 16 * sizeof *T);
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            T[4 * r + c] = R[3 * r + c];
        T[4 * r + 3] = synth_rng_uniform(rng, -0.1, 0.1);
    }
    T[15] = 1;
}

void retrieval_apply_pose(const double T[16], const float p[3], float out[3])
{
    for (int r = 0; r < 3; r++)
        out[r] = (float)(T[4 * r] * p[0] + T[4 * r + 1] * p[1] + T[4 * r + 2] * p[2] + T[4 * r + 3]);
}

/* A grid cell of about the mean spacing: the bounding box's area spread over the points. */
static double spacing_guess(const host_cloud *c)
{
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < c->n; i++)
        for (int a = 0; a < 3; a++)
            if (isfinite(c->xyz[3 * i]) && isfinite(c->xyz[3 * i + 1]) && isfinite(c->xyz[3 * i + 2])) {
                lo[a] = c->xyz[3 * i + a] < lo[a] ? c->xyz[3 * i + a] : lo[a];
                hi[a] = c->xyz[3 * i + a] > hi[a] ? c->xyz[3 * i + a] : hi[a];
            }
    double e[3] = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
    double area = 2 * (e[0] * e[1] + e[1] * e[2] + e[2] * e[0]);
    double guess = sqrt(area / (double)(c->n ? c->n : 1));
    return isfinite(guess) && guess > 0 ? guess : 1;
}

double retrieval_mesh_resolution(const host_cloud *c)
{
    bench_grid g;
    if (bench_grid_build(&g, c->xyz, c->n, spacing_guess(c)) != 0)
        return NAN;
    double *nn = malloc(g.count * sizeof *nn + 1);
    double mr = NAN;
    if (nn) {
        for (size_t i = 0; i < g.count; i++)
            nn[i] = bench_grid_nearest(&g, g.points[i]);
        mr = host_median(nn, g.count);
    }
    free(nn);
    bench_grid_free(&g);
    return mr;
}

int retrieval_noisy_copy(const host_cloud *model, const double T[16], double sigma, uint64_t *rng, const char *name,
                         host_cloud *scene)
{
    memset(scene, 0, sizeof *scene);
    scene->xyz = malloc(3 * model->n * sizeof *scene->xyz + 1);
    scene->path = host_strdup(name);
    if (!scene->xyz || !scene->path) {
        host_cloud_free(scene);
        return -1;
    }
    scene->n = model->n;
    scene->width = (uint32_t)model->n;
    scene->height = 1;
    for (size_t i = 0; i < model->n; i++) {
        retrieval_apply_pose(T, model->xyz + 3 * i, scene->xyz + 3 * i);
        for (int a = 0; a < 3; a++)
            scene->xyz[3 * i + a] += (float)(sigma * synth_rng_clipped_normal(rng));
    }
    return 0;
}

double retrieval_residual(const host_cloud *model, const host_cloud *scene, const double T[16])
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < model->n && i < scene->n; i++) {
        float p[3];
        retrieval_apply_pose(T, model->xyz + 3 * i, p);
        double e2 = 0;
        for (int a = 0; a < 3; a++)
            e2 += ((double)p[a] - scene->xyz[3 * i + a]) * ((double)p[a] - scene->xyz[3 * i + a]);
        if (isfinite(e2)) {
            sum += e2;
            n++;
        }
    }
    return n ? sqrt(sum / (double)n) : NAN;
}
