/* overlay.c -- see overlay.h. */
#include "overlay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/cloud_io.h"

const uint8_t overlay_truth_colour[3] = {40, 220, 60};

/* Saturated and told apart at a glance; no green, which is the truth's. */
static const uint8_t palette[][3] = {{230, 40, 40},  {40, 90, 240},  {250, 150, 20}, {200, 40, 220},
                                     {20, 200, 220}, {240, 230, 40}, {140, 70, 20},  {250, 120, 180}};

void overlay_instance_colour(size_t i, uint8_t rgb[3])
{
    memcpy(rgb, palette[i % (sizeof palette / sizeof palette[0])], 3);
}

static int finite3(const float *p)
{
    return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

/* Appends the finite points of m under pose, all in one colour, at out[*n...]. */
static void add_posed(host_cloud *out, size_t *n, const host_cloud *m, const double pose[16], const uint8_t rgb[3])
{
    for (size_t i = 0; i < m->n; i++) {
        const float *p = m->xyz + 3 * i;
        if (!finite3(p))
            continue;
        for (int r = 0; r < 3; r++)
            out->xyz[3 * *n + r] = (float)(pose[4 * r] * p[0] + pose[4 * r + 1] * p[1] + pose[4 * r + 2] * p[2] +
                                           pose[4 * r + 3]);
        memcpy(out->rgb + 3 * *n, rgb, 3);
        (*n)++;
    }
}

int overlay_write(const char *path, const recognition_task *t, const pipeline_result *r, char *err, size_t errlen)
{
    size_t total = host_cloud_count_finite(t->scene);
    for (size_t h = 0; h < r->n_hypotheses; h++)
        if (r->hypotheses[h].accepted)
            total += t->model_points[r->hypotheses[h].model]->n;
    for (size_t o = 0; o < t->n_truth; o++)
        total += t->truth[o].points->n;
    host_cloud out;
    memset(&out, 0, sizeof out);
    out.xyz = malloc((total + 1) * 3 * sizeof *out.xyz);
    out.rgb = malloc((total + 1) * 3);
    if (!out.xyz || !out.rgb) {
        host_cloud_free(&out);
        snprintf(err, errlen, "%s: out of memory for %zu points", path, total);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < t->scene->n; i++) {
        const float *p = t->scene->xyz + 3 * i;
        if (!finite3(p))
            continue;
        memcpy(out.xyz + 3 * n, p, 3 * sizeof *p);
        for (int k = 0; k < 3; k++) /* dimmed, so that the overlays stand out */
            out.rgb[3 * n + k] = t->scene->rgb ? (uint8_t)(t->scene->rgb[3 * i + k] / 2) : 110;
        n++;
    }
    for (size_t o = 0; o < t->n_truth; o++)
        add_posed(&out, &n, t->truth[o].points, t->truth[o].pose, overlay_truth_colour);
    size_t shown = 0;
    for (size_t h = 0; h < r->n_hypotheses; h++) {
        if (!r->hypotheses[h].accepted)
            continue;
        uint8_t rgb[3];
        overlay_instance_colour(shown++, rgb);
        add_posed(&out, &n, t->model_points[r->hypotheses[h].model], r->hypotheses[h].pose, rgb);
    }
    out.n = n;
    out.width = (uint32_t)n;
    out.height = 1;
    int rc = ply_write(path, &out, 1, err, errlen);
    host_cloud_free(&out);
    return rc;
}
