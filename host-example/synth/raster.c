/* raster.c -- see raster.h. Pixel (u, v) is inside a triangle when its three edge functions (twice the signed
 * areas it makes with each edge, in pixel units) have the triangle's orientation or are zero, so a pixel on a
 * shared edge is covered by both triangles (the same depth) and no pixel between two triangles is lost. Faces are
 * not culled by orientation: the Stanford meshes have holes through which inner sides show, as a scanner sees. */
#include "synth/raster.h"

#include <math.h>

#define NEAREST_DEPTH 0.001 /* m: a vertex nearer the camera than this leaves its triangle out */

size_t synth_raster_mesh(const synth_camera *cam, const synth_mesh *mesh, const double pose[16], double *xyz_cam,
                         double *depth, float *facing)
{
    for (size_t i = 0; i < mesh->n_vertices; i++) {
        const double *q = &mesh->xyz[3 * i];
        for (int r = 0; r < 3; r++)
            xyz_cam[3 * i + r] = pose[4 * r] * q[0] + pose[4 * r + 1] * q[1] + pose[4 * r + 2] * q[2] + pose[4 * r + 3];
    }
    size_t set = 0;
    for (size_t t = 0; t < mesh->n_triangles; t++) {
        const double *p[3];
        double u[3], v[3], inv_z[3];
        int skip = 0;
        for (int k = 0; k < 3; k++) {
            p[k] = &xyz_cam[3 * mesh->tri[3 * t + k]];
            skip |= !(p[k][2] >= NEAREST_DEPTH);
            inv_z[k] = 1 / p[k][2];
            u[k] = cam->fx * p[k][0] * inv_z[k] + cam->cx;
            v[k] = cam->fy * p[k][1] * inv_z[k] + cam->cy;
        }
        /* twice the signed area in pixels; a triangle seen edge-on covers no pixel centre */
        double area = (u[1] - u[0]) * (v[2] - v[0]) - (u[2] - u[0]) * (v[1] - v[0]);
        if (skip || !(fabs(area) > 0))
            continue;
        double umin = fmin(u[0], fmin(u[1], u[2])), umax = fmax(u[0], fmax(u[1], u[2]));
        double vmin = fmin(v[0], fmin(v[1], v[2])), vmax = fmax(v[0], fmax(v[1], v[2]));
        if (umax < 0 || vmax < 0 || umin > cam->width - 1 || vmin > cam->height - 1)
            continue;
        long u0 = (long)ceil(fmax(umin, 0)), u1 = (long)floor(fmin(umax, cam->width - 1));
        long v0 = (long)ceil(fmax(vmin, 0)), v1 = (long)floor(fmin(vmax, cam->height - 1));
        /* |cos| between the face normal and a pixel's ray d = (x/z, y/z, 1): |n . d| / |d|, n unit */
        double e1[3] = {p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]};
        double e2[3] = {p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]};
        double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        double nl = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (long pv = v0; pv <= v1; pv++)
            for (long pu = u0; pu <= u1; pu++) {
                double w[3];
                for (int k = 0; k < 3; k++) { /* the edge opposite vertex k */
                    int a = (k + 1) % 3, b = (k + 2) % 3;
                    w[k] = ((u[b] - u[a]) * (pv - v[a]) - (pu - u[a]) * (v[b] - v[a])) / area;
                }
                if (w[0] < 0 || w[1] < 0 || w[2] < 0)
                    continue;
                double z = 1 / (w[0] * inv_z[0] + w[1] * inv_z[1] + w[2] * inv_z[2]);
                size_t px = (size_t)pv * cam->width + (size_t)pu;
                if (!(z < depth[px]))
                    continue;
                set += depth[px] == INFINITY;
                depth[px] = z;
                double d[3] = {(pu - cam->cx) / cam->fx, (pv - cam->cy) / cam->fy, 1};
                double dd = sqrt(d[0] * d[0] + d[1] * d[1] + 1);
                facing[px] = nl > 0 ? (float)(fabs(n[0] * d[0] + n[1] * d[1] + n[2] * d[2]) / (nl * dd)) : 0;
            }
    }
    return set;
}
