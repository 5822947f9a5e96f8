/* verify_model_cache.h -- what a verify stage prepares from each model view (thinned or sampled points, their
 * normals) kept by the stage instance and reused by its later verify() calls while the model is unchanged: a host
 * that recognises the same models in a stream of scenes then prepares them once, not once per scene.
 *
 * Reuse rule: the entry of a model slot (its index in verify()'s models) is reused only when every byte the
 * preparation read -- the key, given as parts: a header of the settings that shape the preparation, the cloud's
 * points as read, the normals it used -- equals the private copy the entry keeps of them (memcmp, part by part).
 * Never pointer identity or a hash: a host may refill the same buffer with another model. Comparing the key costs a
 * read of the model; preparing it again costs a voxel sort, normals, kNN. A header has no padding (explicit fields,
 * its size checked by a _Static_assert), is memset to 0 before its fields are set, and holds the sizes of the parts
 * after it (so that two keys of different layouts never compare equal). A model on the device is compared as
 * downloaded (grip_cloud_input_open), so where the host keeps it does not matter.
 *
 * Memory: each entry holds its key (a model's points and given normals again: 28 bytes a point for icp with n x 4
 * normals) and the prepared points (for icp with their kd-tree), until the stage is destroyed or the slot holds
 * another model.
 *
 * Ownership: the cache belongs to the stage (grip_verify_model_cache makes it on first use; grip_stage_destroy
 * frees it). A grip_prepared_model the cache returns is borrowed: valid until the next grip_model_cache_reserve or
 * store into the same slot. Not thread-safe: a stage is used by one thread at a time (plugin.h). */
#ifndef GRIP_STAGES_VERIFY_MODEL_CACHE_H
#define GRIP_STAGES_VERIFY_MODEL_CACHE_H

#include "stages/stage.h"
#include "verify/pose_nms.h"

#include <stddef.h>
#include <stdint.h>

/* One model's prepared points: xyz count x 3, normals count x 3 or NULL (malloc'd; owned by whoever holds it);
 * spread: the spread of the model's own points, where the stage uses it (icp; zero otherwise); tree: a tree over
 * xyz for the overlap test (icp with max_overlap < 1 when the entry was made; NULL otherwise). */
typedef struct grip_prepared_model {
    float *xyz;
    float *normals;
    size_t count;
    grip_model_spread spread;
    grip_kdtree3d *tree;
} grip_prepared_model;

/* One piece of a key: size bytes at bytes (borrowed; bytes may be NULL when size is 0). */
typedef struct grip_model_key_part {
    const void *bytes;
    size_t size;
} grip_model_key_part;

typedef struct grip_model_cache_entry {
    unsigned char *key; /* the parts concatenated (malloc'd), NULL when the slot is empty */
    size_t key_size;
    grip_prepared_model model;
} grip_model_cache_entry;

typedef struct grip_model_cache {
    grip_model_cache_entry *entries; /* one per model slot (malloc'd) */
    uint32_t n_slots;
} grip_model_cache;

/* The stage's cache, made empty on the stage's first call (st->state, freed by grip_stage_destroy). A stage keeps
 * one kind of cached preparation only. GRIP_ENOMEM. */
grip_status grip_verify_model_cache(grip_stage *st, grip_model_cache **out);

/* Gives the cache exactly n_slots slots: slots below both counts keep their entries, slots past n_slots are
 * freed, new slots are empty. On failure (GRIP_ENOMEM) every entry is dropped and the cache is left empty. */
grip_status grip_model_cache_reserve(grip_ctx *ctx, grip_model_cache *c, uint32_t n_slots);

/* The prepared model of slot `slot` when its key equals the n_parts parts byte for byte, else NULL. */
const grip_prepared_model *grip_model_cache_find(const grip_model_cache *c, uint32_t slot,
                                                 const grip_model_key_part *parts, size_t n_parts);

/* Replaces slot `slot`'s entry with *model under a copy of the key parts. The arrays of *model move into the cache
 * (*model is zeroed) and *out points at them. On failure (GRIP_ENOMEM) the arrays are freed, *model zeroed, the
 * slot left empty and *out NULL. slot < c->n_slots. */
grip_status grip_model_cache_store(grip_ctx *ctx, grip_model_cache *c, uint32_t slot, const grip_model_key_part *parts,
                                   size_t n_parts, grip_prepared_model *model, const grip_prepared_model **out);

/* Frees the arrays of a prepared model and zeroes it. */
void grip_prepared_model_free(grip_prepared_model *m);

#endif
