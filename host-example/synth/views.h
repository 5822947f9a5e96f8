/* views.h -- view-based models for synth.c: a catalogue object alone, upright, seen by the scene's camera
 * from evenly spaced turns about its vertical axis, each view kept as the points the camera saw, in the object's
 * own frame. Internal to synth/. */
#ifndef GRIP_HOST_SYNTH_VIEWS_H
#define GRIP_HOST_SYNTH_VIEWS_H

#include <stdint.h>

#include "synth/place.h"
#include "synth/synth.h"

/* Renders p->model_views views of `model` (catalogue index `kind`, which seeds the view noise) with the scene's
 * camera `cam` standing where T_cw puts it. View v turns the object by 360 v / model_views degrees about its z
 * axis, as a scene object's yaw does, and the camera looks at the point half the object's height above the
 * object's origin. Fills views[v] (unorganized, xyz only; path "<kind>@<yaw degrees>", malloc'd) and origin[v]
 * (the camera centre in the object frame). Returns 0; -1 when out of memory; -2 when a view holds no point
 * (everything beyond max_range). Partly filled clouds are left for the caller to free (host_cloud_free). */
int synth_views_make(const synth_params *p, const synth_camera *cam, const double T_cw[16],
                     const synth_model *model, uint32_t kind, host_cloud *views, double (*origin)[3]);

#endif
