/* registry.h -- every stage implementation this plugin offers, written once: GRIP_STAGE_LIST calls X(name) for each
 * grip_stage_impl `grip_<name>`, in the order `grip-host list` shows them. The first of each kind is that kind's
 * default. A new stage is one line here; plugin.c builds its table from this list. */
#ifndef GRIP_STAGES_REGISTRY_H
#define GRIP_STAGES_REGISTRY_H

#include "plugin.h"

#define GRIP_STAGE_LIST(X)                                                                                            \
    X(descriptor_shot)                                                                                                \
    X(descriptor_fpfh)                                                                                                \
    X(descriptor_pfh)                                                                                                 \
    X(descriptor_spin_image)                                                                                          \
    X(descriptor_surf)                                                                                                \
    X(index_bruteforce)                                                                                               \
    X(index_kdtree)                                                                                                   \
    X(index_kdforest)                                                                                                 \
    X(match_knn)                                                                                                      \
    X(group_hough3d)                                                                                                  \
    X(group_gc)                                                                                                       \
    X(verify_icp)                                                                                                     \
    X(verify_ghv)

#define GRIP_STAGE_DECLARE(name) extern const grip_stage_impl grip_##name;
GRIP_STAGE_LIST(GRIP_STAGE_DECLARE)
#undef GRIP_STAGE_DECLARE

#endif
