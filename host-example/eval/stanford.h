/* stanford.h -- the six Stanford models of the Bologna data (bologna.h) as synth mesh kinds, for `eval recognition
 * --data`: rendered scenes of several of them on a table, with noise in mesh resolutions. */
#ifndef GRIP_HOST_EVAL_STANFORD_H
#define GRIP_HOST_EVAL_STANFORD_H

#include <stdint.h>

#include "eval/bologna.h"
#include "synth/mesh.h"

/* Reads the models s selects as meshes (y up, as the Stanford repository stores them) into meshes[0..*n) (each
 * freed with synth_mesh_free by the caller, also on failure) and sets *noise_unit to the mean of their Bologna
 * mesh resolutions in metres (BOLOGNA_NOISE_UNIT_MR x each model's median nearest-neighbour spacing): the unit of
 * the scenes' noise levels. 0, or 1 after saying why on stderr. */
int stanford_meshes_load(const bologna_selection *s, synth_mesh meshes[BOLOGNA_MODELS], uint32_t *n,
                         double *noise_unit);

#endif
