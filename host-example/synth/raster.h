/* raster.h -- z-buffer rasterization of a posed triangle mesh for synth's range camera (render.h). Each pixel
 * centre (u, v) inside a triangle's projection gets that triangle's exact depth along the pixel's ray: depth is
 * the reciprocal of 1/z interpolated linearly in the image (1/z of a plane is affine in the image coordinates),
 * so a planar face is rendered without error but rounding. Internal to synth/. */
#ifndef GRIP_HOST_SYNTH_RASTER_H
#define GRIP_HOST_SYNTH_RASTER_H

#include <stddef.h>
#include <stdint.h>

#include "synth/mesh.h"
#include "synth/render.h"

/* Rasterizes `mesh` posed by pose (object -> camera, row-major) into depth[] / facing[] (width x height each,
 * camera `cam`), which the caller fills with INFINITY / 0 beforehand: a pixel keeps the nearest depth and the
 * |cos| of the angle between its ray and that triangle's normal. Triangles with a vertex less than 1 mm in front
 * of the camera are skipped. Returns the pixels it set (each counted once). xyz_cam is scratch of
 * mesh->n_vertices x 3 doubles the caller owns. */
size_t synth_raster_mesh(const synth_camera *cam, const synth_mesh *mesh, const double pose[16], double *xyz_cam,
                         double *depth, float *facing);

#endif
