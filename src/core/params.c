/* params.c -- see params.h. */
#include "core/params.h"

#include <string.h>

int grip_params_index(const grip_param_info *table, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(grip_param_at(table, i)->key, key) == 0)
            return (int)i;
    return -1;
}

grip_status grip_params_resolve(grip_ctx *ctx, const char *stage, const grip_param_info *table, size_t n,
                                const grip_kv *kv, size_t n_kv, grip_param_value *values)
{
    char reason[256];
    int bad = 0;
    grip_ctx_clear_error(ctx);
    for (size_t i = 0; i < n; i++) {
        const grip_param_info *p = grip_param_at(table, i);
        if (grip_param_parse(p, p->default_value, &values[i], reason, sizeof reason) != 0 &&
            p->type != GRIP_PARAM_STRING) {
            grip_fail_append(ctx, "%s.%s: bad default: %s", stage, p->key, reason);
            bad++;
        }
    }
    for (size_t j = 0; j < n_kv; j++) {
        if (!kv[j].key) {
            grip_fail_append(ctx, "%s: a key is NULL", stage);
            bad++;
            continue;
        }
        int i = grip_params_index(table, n, kv[j].key);
        if (i < 0) {
            grip_fail_append(ctx, "%s.%s: unknown key", stage, kv[j].key);
            bad++;
            continue;
        }
        if (grip_param_parse(grip_param_at(table, (size_t)i), kv[j].value, &values[i], reason, sizeof reason)) {
            grip_fail_append(ctx, "%s.%s: %s", stage, kv[j].key, reason);
            bad++;
        }
    }
    return bad ? GRIP_ECONFIG : GRIP_OK;
}

grip_status grip_device_resolve(grip_ctx *ctx, const char *stage, int choice, int has_cuda, int *use_cuda)
{
    *use_cuda = 0;
    if (choice == GRIP_DEVICE_CPU)
        return GRIP_OK;
    int devices = grip_ctx_device_count(ctx);
    if (choice == GRIP_DEVICE_CUDA) {
        if (devices <= 0)
            return grip_fail(ctx, GRIP_ECONFIG, "%s.device: 'cuda' asked for, but no usable CUDA device %s", stage,
#ifdef GRIP_HAVE_CUDA
                             "was found (no GPU, or no driver)"
#else
                             "exists in this CPU-only build"
#endif
            );
        if (!has_cuda)
            return grip_fail(ctx, GRIP_EUNSUPPORTED, "%s.device: this implementation has no CUDA backend yet", stage);
        *use_cuda = 1;
        return GRIP_OK;
    }
    *use_cuda = devices > 0 && has_cuda;
    return GRIP_OK;
}
