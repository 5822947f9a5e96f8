/* front_stage.c -- see front_stage.h. */
#include "front_stage.h"
#include "stages/descriptor_front.h"

static const grip_param_info front_params[] = {GRIP_DESCRIPTOR_FRONT_PARAMS};

const grip_stage_impl grip_test_front_stage = {
    .struct_size = sizeof(grip_stage_impl),
    .kind = GRIP_STAGE_DESCRIPTOR,
    .name = "front_test",
    .summary = "the descriptor front alone",
    .backends = GRIP_BACKEND_CPU | GRIP_BACKEND_CUDA,
    .n_params = sizeof front_params / sizeof front_params[0],
    .params = front_params,
};
