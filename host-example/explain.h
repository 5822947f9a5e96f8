/* explain.h -- a run that explains itself: why verification rejected a hypothesis, named by the setting a user
 * would change, and why a run found no correspondence or no hypothesis (units, radius, keypoints). */
#ifndef GRIP_HOST_EXPLAIN_H
#define GRIP_HOST_EXPLAIN_H

#include "io/cloud_io.h"
#include "plugin.h"

#include <stddef.h>

#define EXPLAIN_REASONS (GRIP_VERDICT_SUPPORT + 1)
#define EXPLAIN_VALUE_SIZE 32

/* The settings a rejection names, as the verify stage was created with them: value[reason] is the key's value
 * (from the config, else the stage's default), "" when the stage has no such key. */
typedef struct explain_settings {
    char value[EXPLAIN_REASONS][EXPLAIN_VALUE_SIZE];
    char descriptor_radius[EXPLAIN_VALUE_SIZE]; /* the descriptor stage's `radius`, "" when it has none */
} explain_settings;

/* The reason a host reads from verdict v: its `reason` when v's struct_size covers the field (ABI 1.1), else
 * GRIP_VERDICT_UNSPECIFIED for a rejected hypothesis; a rejection that claims GRIP_VERDICT_ACCEPTED, or names a
 * reason this host does not know, reads as GRIP_VERDICT_UNSPECIFIED too. */
uint32_t explain_verdict_reason(const grip_verdict *v);

/* The verify key a reason names ("min_fitness", "max_drift", ...; "ghv" for GRIP_VERDICT_GHV, "unspecified"); ""
 * for GRIP_VERDICT_ACCEPTED. Static strings. */
const char *explain_reason_key(uint32_t reason);

/* Writes into buf (n bytes, always terminated) one phrase saying why a hypothesis with this fitness, RMSE and
 * free-space violation was rejected, with the threshold it failed, e.g. "fitness 0.330 < min_fitness 0.5". */
void explain_rejection(char *buf, size_t n, uint32_t reason, float fitness, float rmse, float violation,
                       const explain_settings *s);

/* The mean distance of a sample of a cloud's finite points to their nearest neighbour (brute force over the
 * cloud: meant for the rare run that explains a failure); 0 when the cloud has fewer than two finite points. */
double explain_cloud_resolution(const host_cloud *c);

/* When a run made no correspondence (correspondences == 0) or no hypothesis (hypotheses == 0), writes into buf
 * (n bytes, always terminated) what happened and the likely cause, comparing the descriptor radius with the
 * clouds' resolutions; returns 0 and leaves buf "" otherwise. models: n_models clouds. */
int explain_empty_run(char *buf, size_t n, size_t scene_keypoints, size_t correspondences, size_t hypotheses,
                      const host_cloud *models, size_t n_models, const host_cloud *scene, const explain_settings *s);

#endif
