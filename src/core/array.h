/* array.h -- making grip_arrays inside the plugin, and checking the structs and arrays a host hands in. */
#ifndef GRIP_CORE_ARRAY_H
#define GRIP_CORE_ARRAY_H

#include "core/ctx.h"

/* Size in bytes of one element of dtype (0 for an unknown dtype). */
size_t grip_dtype_size(uint32_t dtype);

/* A host array of rows x cols zero-initialised elements. The caller frees it with grip_array_free_host(). */
grip_status grip_array_alloc_host(grip_ctx *ctx, grip_array *a, uint32_t dtype, uint64_t rows, uint64_t cols);
void grip_array_free_host(grip_array *a);

/* An array descriptor over existing host memory (not owned). */
grip_array grip_array_host_view(uint32_t dtype, uint64_t rows, uint64_t cols, void *data);

/* Checks a struct of the ABI that a host hands in (every one starts with uint32_t struct_size): non-NULL, and a
 * struct_size of at least min_size, the struct as the ABI first published it (a field appended later takes its
 * documented default when the host's struct ends before it). `what` names the argument in the error text, e.g.
 * "verify: scene", and `type` its C type, e.g. "grip_view". GRIP_EINVAL otherwise. */
grip_status grip_struct_check(grip_ctx *ctx, const void *s, size_t min_size, const char *what, const char *type);

/* Checks an input array: a whole grip_array (grip_struct_check), and when rows > 0: the expected dtype,
 * cols == want_cols when want_cols != 0, rows x cols elements addressable in a size_t, non-NULL data and a known
 * memory space. `what` names it in the error text, e.g. "descriptor: cloud.xyz". */
grip_status grip_array_check(grip_ctx *ctx, const grip_array *a, uint32_t dtype, uint64_t want_cols, const char *what);

/* Checks an optional input array: absent (GRIP_OK) when it is NULL or has 0 rows, whatever its struct_size (hosts
 * leave an array they do not give zero-initialised), else as grip_array_check. */
grip_status grip_optional_array_check(grip_ctx *ctx, const grip_array *a, uint32_t dtype, uint64_t want_cols,
                                      const char *what);

/* Gives a host-memory view of `a`: `a` itself when it already lives on the host, else a host copy that
 * the caller frees with grip_array_free_host() (`*owned` tells which). */
grip_status grip_array_to_host(grip_ctx *ctx, const grip_array *a, grip_array *host, int *owned, const char *what);

#endif
