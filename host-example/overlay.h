/* overlay.h -- a picture of a run: one PLY point cloud holding the scene (its own colours, dimmed, or grey), each
 * accepted instance's model points placed in its found pose in a colour of its own, and each true object's
 * model points in its true pose in one truth colour (green), for any point-cloud viewer. */
#ifndef GRIP_HOST_OVERLAY_H
#define GRIP_HOST_OVERLAY_H

#include <stddef.h>
#include <stdint.h>

#include "judge/task.h"
#include "pipeline_result.h"

/* The colour of the i-th accepted instance (cycles through a palette without green) and of the truth. */
void overlay_instance_colour(size_t i, uint8_t rgb[3]);
extern const uint8_t overlay_truth_colour[3];

/* Writes the picture of r on t (binary little-endian PLY; the truth only when t has one). Returns 0, or -1 with
 * a one-line message in err (no file left behind). */
int overlay_write(const char *path, const recognition_task *t, const pipeline_result *r, char *err, size_t errlen);

#endif
