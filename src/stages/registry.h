/* registry.h -- every stage implementation this plugin offers, in the order `grip-host list` shows them.
 * The first of each kind is that kind's default. */
#ifndef GRIP_STAGES_REGISTRY_H
#define GRIP_STAGES_REGISTRY_H

#include "plugin.h"

extern const grip_stage_impl grip_descriptor_shot;
extern const grip_stage_impl grip_descriptor_fpfh;
extern const grip_stage_impl grip_descriptor_pfh;
extern const grip_stage_impl grip_descriptor_spin_image;
extern const grip_stage_impl grip_index_bruteforce;
extern const grip_stage_impl grip_index_kdtree;
extern const grip_stage_impl grip_index_kdforest;
extern const grip_stage_impl grip_match_knn;
extern const grip_stage_impl grip_group_hough3d;
extern const grip_stage_impl grip_group_gc;
extern const grip_stage_impl grip_verify_icp;

#endif
