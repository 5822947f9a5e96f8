/* judge.h -- recognition judged against ground truth: which accepted instance found which true object, how far
 * its pose is from the truth (mean model-point distance, rotation angle, translation), and which instances are
 * false. `grip-host regress`, `grip-host eval recognition` and `grip-host demo` share it.
 *
 * Matching: every pair (accepted instance, true object) of the same model whose pose is within the object's
 * tolerances (distance AND angle) is a candidate; candidates are taken in order of increasing distance, each
 * instance and each object at most once. An accepted instance left without an object is false: a duplicate when
 * an object it would have matched was already taken by a closer instance, wrong otherwise. */
#ifndef GRIP_HOST_JUDGE_H
#define GRIP_HOST_JUDGE_H

#include <stddef.h>
#include <stdint.h>

#include "io/cloud_io.h"
#include "pipeline_result.h"

/* One true object of a scene. */
typedef struct judge_truth {
    uint32_t model;           /* the pipeline's model index (pipeline_instance.model) */
    double pose[16];          /* model -> scene, row-major */
    const host_cloud *points; /* the model's points the distance is measured on (borrowed) */
    double max_distance;      /* tolerance on the mean model-point distance, in the cloud's unit */
    double max_angle_deg;     /* tolerance on the angle of the rotation between the two poses */
} judge_truth;

/* How one pose compares with another. */
typedef struct judge_error {
    double distance;    /* mean distance of the model's finite points under the two poses */
    double angle_deg;   /* angle of R_a^T R_b, 0..180 */
    double translation; /* distance between the two translations (where the model origin lands) */
} judge_error;

typedef enum judge_verdict { JUDGE_CORRECT, JUDGE_DUPLICATE, JUDGE_WRONG } judge_verdict;

/* The judgement of one scene. Arrays are malloc'd, owned by the struct: free with judge_result_free(). */
typedef struct judge_result {
    size_t n_truth;
    int *instance_of_truth;      /* n_truth: index into the pipeline result's hypotheses, or -1 (missed) */
    judge_error *truth_error;    /* n_truth: error of the instance that found it; else of the nearest accepted
                                 instance of its model (all fields infinite when there is none) */
    size_t n_hypotheses;         /* the pipeline result's */
    int *truth_of_instance;      /* n_hypotheses: the object an accepted instance found, -1 for a false or a
                                 rejected one */
    judge_verdict *verdict;      /* n_hypotheses: meaningful for accepted ones */
    judge_error *instance_error; /* n_hypotheses: error against its object, or the nearest object of its model */
    int *rejected_of_truth;      /* n_truth: the closest hypothesis verification rejected that lies within the
                                    object's tolerances, or -1: tells a miss of verify from one of the stages
                                    before it */
    uint32_t found;              /* objects found */
    uint32_t false_instances;    /* accepted instances that found no object (duplicates included) */
    uint32_t duplicates;         /* of which duplicates */
} judge_result;

/* Compares two poses of `points`. */
void judge_compare(const host_cloud *points, const double a[16], const double b[16], judge_error *out);

/* Judges the accepted instances of r against the truth. Returns 0, or -1 when out of memory (*out zeroed). */
int judge_recognition(const pipeline_result *r, const judge_truth *truth, size_t n_truth, judge_result *out);

/* Frees every array and zeroes *j; safe on a zeroed struct. */
void judge_result_free(judge_result *j);

#endif
