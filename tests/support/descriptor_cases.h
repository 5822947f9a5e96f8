/* descriptor_cases.h -- the bad-input cases every descriptor stage (shot, fpfh, pfh, spin_image) must survive, run
 * through each stage's describe() on one device: clouds with NaN points, every point twice, a single point, all
 * points in one voxel, a huge radius, more keypoints than points (each given twice), each with the cloud as its
 * support and with a voxel-grid support (support_leaf), a radius of 0 (refused at create, naming the key), an empty and an all-NaN cloud (refused, naming the cloud). On "cuda" every result is
 * also compared with the CPU twin's: the same NaN rows and every value within 1e-4. The CPU suite (CI) and the
 * GPU suite call the same runner, so both backends meet the same cases. */
#ifndef GRIP_TEST_DESCRIPTOR_CASES_H
#define GRIP_TEST_DESCRIPTOR_CASES_H

#include "test_support.h"

/* Adds one Check test per descriptor stage to tc, each running every case with the stage's `device` key set to
 * `device` ("cpu" or "cuda"). */
void grip_test_add_descriptor_cases(TCase *tc, const char *device);

#endif
