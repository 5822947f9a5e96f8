/* verify_model_cache.c -- see verify_model_cache.h. */
#include "stages/verify_model_cache.h"

#include <stdlib.h>
#include <string.h>

void grip_prepared_model_free(grip_prepared_model *m)
{
    free(m->xyz);
    free(m->normals);
    grip_kdtree3d_free(m->tree);
    memset(m, 0, sizeof *m);
}

static void entry_free(grip_model_cache_entry *e)
{
    free(e->key);
    grip_prepared_model_free(&e->model);
    memset(e, 0, sizeof *e);
}

static void cache_clear(grip_model_cache *c)
{
    for (uint32_t i = 0; i < c->n_slots; i++)
        entry_free(&c->entries[i]);
    free(c->entries);
    c->entries = NULL;
    c->n_slots = 0;
}

/* The stage's free_state. */
static void cache_free(void *state)
{
    grip_model_cache *c = state;
    if (!c)
        return;
    cache_clear(c);
    free(c);
}

grip_status grip_verify_model_cache(grip_stage *st, grip_model_cache **out)
{
    if (!st->state) {
        st->state = calloc(1, sizeof(grip_model_cache));
        if (!st->state)
            return grip_fail(st->ctx, GRIP_ENOMEM, "verify: out of memory for the model cache");
        st->free_state = cache_free;
    }
    *out = st->state;
    return GRIP_OK;
}

grip_status grip_model_cache_reserve(grip_ctx *ctx, grip_model_cache *c, uint32_t n_slots)
{
    if (n_slots == c->n_slots)
        return GRIP_OK;
    for (uint32_t i = n_slots; i < c->n_slots; i++)
        entry_free(&c->entries[i]);
    if (n_slots < c->n_slots) {
        c->n_slots = n_slots; /* the array keeps its size: shrinking needs no allocation */
        return GRIP_OK;
    }
    grip_model_cache_entry *grown = realloc(c->entries, (size_t)n_slots * sizeof *grown);
    if (!grown) {
        cache_clear(c);
        return grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory for the cache of %u models", n_slots);
    }
    memset(grown + c->n_slots, 0, (size_t)(n_slots - c->n_slots) * sizeof *grown);
    c->entries = grown;
    c->n_slots = n_slots;
    return GRIP_OK;
}

static size_t key_size_of(const grip_model_key_part *parts, size_t n_parts)
{
    size_t size = 0;
    for (size_t i = 0; i < n_parts; i++)
        size += parts[i].size;
    return size;
}

const grip_prepared_model *grip_model_cache_find(const grip_model_cache *c, uint32_t slot,
                                                 const grip_model_key_part *parts, size_t n_parts)
{
    if (slot >= c->n_slots)
        return NULL;
    const grip_model_cache_entry *e = &c->entries[slot];
    if (!e->key || e->key_size != key_size_of(parts, n_parts))
        return NULL;
    size_t at = 0;
    for (size_t i = 0; i < n_parts; i++) {
        if (parts[i].size && memcmp(e->key + at, parts[i].bytes, parts[i].size) != 0)
            return NULL;
        at += parts[i].size;
    }
    return &e->model;
}

grip_status grip_model_cache_store(grip_ctx *ctx, grip_model_cache *c, uint32_t slot, const grip_model_key_part *parts,
                                   size_t n_parts, grip_prepared_model *model, const grip_prepared_model **out)
{
    *out = NULL;
    grip_model_cache_entry *e = &c->entries[slot];
    entry_free(e); /* the old entry goes first: on failure the slot is empty, never a key over another model */
    const size_t size = key_size_of(parts, n_parts);
    unsigned char *key = malloc(size ? size : 1);
    if (!key) {
        grip_prepared_model_free(model);
        return grip_fail(ctx, GRIP_ENOMEM, "verify: out of memory for a model's cache key (%zu bytes)", size);
    }
    size_t at = 0;
    for (size_t i = 0; i < n_parts; i++) {
        if (parts[i].size)
            memcpy(key + at, parts[i].bytes, parts[i].size);
        at += parts[i].size;
    }
    e->key = key;
    e->key_size = size;
    e->model = *model;
    memset(model, 0, sizeof *model);
    *out = &e->model;
    return GRIP_OK;
}
