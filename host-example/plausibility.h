/* plausibility.h -- warnings for length settings that cannot make sense on the clouds of a run: a support radius
 * below a cloud's resolution holds no neighbour, a radius, leaf, bin or ICP distance above a cloud's bounding-box
 * diagonal covers the whole cloud. The host's own check (issue 25): the library takes any number in range. */
#ifndef GRIP_HOST_PLAUSIBILITY_H
#define GRIP_HOST_PLAUSIBILITY_H

#include "diag.h"
#include "pipeline.h"

/* One line into warnings per implausible length of an open pipeline p (its stages' lengths as cfg set them or as
 * their tables default them) on the scene (may be NULL) and the n_models model clouds, naming the key, its value,

 * the cloud and why (the caller adds "grip-host: warning: " where it prints them), e.g. "descriptor.radius = 20 (cloud unit) is larger than the whole scene (diagonal 1.9):
 * every keypoint's support is the whole cloud". A cloud's resolution is measured (pipeline_cloud_resolution, a
 * k-NN over the cloud) only when some radius is small enough to fall below it, and at most once: the scene's is
 * cfg->resolution when the mr path measured it, model i's is known_model_res[i] when > 0 (may be NULL). */
void plausibility_check(const grip_pipeline *p, const grip_config *cfg, const host_cloud *scene,
                        const host_cloud *models, int n_models, const double *known_model_res, grip_diag *warnings);

#endif
