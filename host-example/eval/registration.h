/* registration.h -- `grip-host eval registration`: recognition of one Stanford model in each Bologna retrieval scene
 * (bologna.h: the model rigidly posed with noise 0.1, 0.3 or 0.5 mesh resolutions, the pose exact), the pose error
 * of the recognised instance -- rotation in degrees, translation in mm, mean model-point distance -- and the false
 * instances, per model and noise level, for the pipeline the options configure (issue 22 must-show 4). */
#ifndef GRIP_HOST_EVAL_REGISTRATION_H
#define GRIP_HOST_EVAL_REGISTRATION_H

#include "commands/commands.h"

/* The pipeline when no --config is given: SHOT, Hough 3D and ICP with lengths in mesh resolutions (see
 * registration.c for why). */
extern const char *const registration_pipeline[];

/* Runs the evaluation the options ask for (--data, --models, --noise, --seed, --config, --set, --out, --json).
 * Prints the table (or JSON) on stdout, progress on stderr. Returns the exit status: 0; 1 when the data is absent,
 * a scene cannot be made or the pipeline fails; 2 on a usage or config error. */
int eval_registration(const host_options *o);

#endif
