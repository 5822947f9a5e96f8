/* normals_choice.h -- the `normals` key of the stages that use a cloud's normals (every descriptor stage, through
 * stages/descriptor_front.h): whether the cloud's own normals (the ones its file carried) are used or normals are
 * computed, decided once for both backends.
 *
 *   auto    (default) the cloud's own when it has them, checked and brought to unit length
 *           (descriptor/normals_given.h); computed instead when more than a tenth of its finite points have no
 *           usable one (not finite, or of length 0), and computed when the cloud carries none;
 *   compute always computed, whatever the cloud carries;
 *   file    the cloud's own, brought to unit length; a cloud with none, or with no usable one, is an error. */
#ifndef GRIP_STAGES_NORMALS_CHOICE_H
#define GRIP_STAGES_NORMALS_CHOICE_H

#include "stages/cloud_input.h"
#include "stages/stage.h"

typedef enum grip_normals_choice {
    GRIP_NORMALS_CHOICE_AUTO = 0,
    GRIP_NORMALS_CHOICE_COMPUTE = 1,
    GRIP_NORMALS_CHOICE_FILE = 2
} grip_normals_choice;

#define GRIP_PARAM_NORMALS                                                                                     \
    { sizeof(grip_param_info), GRIP_PARAM_ENUM, "normals", "auto", 0, 0, "auto|compute|file",                  \
      "the cloud's own normals: auto = use them (rescaled to unit length) unless over a tenth are unusable, "  \
      "compute = always compute, file = use them (an error when the cloud has none)" }

/* Under the stage's `normals` key (read as grip_stage_choice(st, "normals")): writes the cloud's own normals at
 * unit length into out (caller's in->n x 4 floats) when the choice takes them, and sets *source to what was
 * decided (plugin.h's grip_normals_source): GRIP_NORMALS_CLOUD or GRIP_NORMALS_CLOUD_RESCALED when out holds them,
 * GRIP_NORMALS_COMPUTED or GRIP_NORMALS_RECOMPUTED when the caller is to compute them (out is then untouched or
 * overwritten by the caller). Errors: GRIP_ECONFIG for `file` on a cloud without normals or without a usable one;
 * the text names the stage's key (`key_name`, e.g. "descriptor.normals") and the cloud. */
grip_status grip_normals_choose(grip_stage *st, const grip_cloud_input *in, const char *key_name, float *out,
                                uint32_t *source);

#endif
