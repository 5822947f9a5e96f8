/* describe_many_cases.h -- grip_stage_impl.describe_many (ABI 1.4) on one device, for the CPU suite (CI) and the
 * GPU suite alike:
 *  - five clouds of both roles (one with the host's keypoints) described in one call give each cloud's describe()
 *    features bit for bit, in host memory and (on "cuda") in device memory, with clouds_in_flight 1, 3 and 8 in a
 *    context of 8 threads, and (on "cuda") with the clouds' points in device memory; the context's counters move as
 *    the five describe() calls move them, and a call after two others grows no pool;
 *  - a call whose third cloud has no finite point (and whose fifth has a bad role) fails with GRIP_EINVAL, names
 *    clouds[2], says so in *failed and hands out nothing (the clouds described before it are released), and the
 *    context then describes again;
 *  - NULL clouds, roles or out, a bad out_memory (every out entry cleared), a stage of another kind and a
 *    clouds_in_flight of 0 are refused; no cloud is a success with nothing described. */
#ifndef GRIP_TEST_DESCRIBE_MANY_CASES_H
#define GRIP_TEST_DESCRIBE_MANY_CASES_H

#include "test_support.h"

/* Adds the cases above to tc, the stages' `device` key set to `device` ("cpu" or "cuda"). */
void grip_test_add_describe_many_cases(TCase *tc, const char *device);

#endif
