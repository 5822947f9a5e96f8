/* front_stage.h -- the descriptor front (stages/descriptor_front.h) as a stage of its own, with only the keys every
 * descriptor stage shares and both backends: what the GPU tests of the front open to compare its device side with
 * its host side. */
#ifndef GRIP_TESTS_FRONT_STAGE_H
#define GRIP_TESTS_FRONT_STAGE_H

#include "stages/stage.h"

extern const grip_stage_impl grip_test_front_stage;

#endif
