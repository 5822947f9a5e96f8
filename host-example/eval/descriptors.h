/* descriptors.h -- `grip-host eval descriptors`: descriptor matching with point-to-point ground truth on the
 * Bologna "Retrieval" models (issue 24 a), recall against 1-precision curves and their areas per descriptor and
 * noise level. See descriptors.c for the method. */
#ifndef GRIP_HOST_EVAL_DESCRIPTORS_H
#define GRIP_HOST_EVAL_DESCRIPTORS_H

#include "commands/commands.h"

/* Runs the evaluation the options ask for (data folder, --keypoints, --noise, --models, --seed, --set, --out,
 * --json). Prints the table (or JSON) on stdout, progress on stderr. Returns the exit status: 0, 1 when the data
 * is absent or a stage fails, 2 on a usage error. */
int eval_descriptors(const host_options *o);

#endif
