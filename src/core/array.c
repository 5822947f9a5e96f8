/* array.c -- see array.h. */
#include "core/array.h"
#include "core/cuda_bridge.h"

#include <stdlib.h>
#include <string.h>

size_t grip_dtype_size(uint32_t dtype)
{
    switch (dtype) {
    case GRIP_F32: case GRIP_U32: case GRIP_I32: return 4;
    case GRIP_U8: return 1;
    }
    return 0;
}

grip_array grip_array_host_view(uint32_t dtype, uint64_t rows, uint64_t cols, void *data)
{
    grip_array a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.dtype = dtype;
    a.memory = GRIP_MEM_HOST;
    a.device = -1;
    a.rows = rows;
    a.cols = cols;
    a.data = data;
    return a;
}

grip_status grip_array_alloc_host(grip_ctx *ctx, grip_array *a, uint32_t dtype, uint64_t rows, uint64_t cols)
{
    *a = grip_array_host_view(dtype, rows, cols, NULL);
    size_t es = grip_dtype_size(dtype);
    if (es == 0)
        return grip_fail(ctx, GRIP_EINVAL, "array of unknown dtype %u", dtype);
    if (rows && cols && (rows > SIZE_MAX / cols || rows * cols > SIZE_MAX / es))
        return grip_fail(ctx, GRIP_ENOMEM, "array of %llu x %llu elements is too large",
                         (unsigned long long)rows, (unsigned long long)cols);
    size_t bytes = (size_t)(rows * cols) * es;
    a->data = calloc(bytes ? bytes : 1, 1);
    if (!a->data)
        return grip_fail(ctx, GRIP_ENOMEM, "out of host memory allocating %zu bytes", bytes);
    return GRIP_OK;
}

void grip_array_free_host(grip_array *a)
{
    if (!a)
        return;
    free(a->data);
    a->data = NULL;
    a->rows = a->cols = 0;
}

grip_status grip_struct_check(grip_ctx *ctx, const void *s, size_t min_size, const char *what, const char *type)
{
    if (!s)
        return grip_fail(ctx, GRIP_EINVAL, "%s is NULL", what);
    uint32_t size = *(const uint32_t *)s;
    if (size < min_size)
        return grip_fail(ctx, GRIP_EINVAL, "%s: struct_size %u is below the %zu bytes of a %s", what, size, min_size,
                         type);
    return GRIP_OK;
}

grip_status grip_array_check(grip_ctx *ctx, const grip_array *a, uint32_t dtype, uint64_t want_cols, const char *what)
{
    grip_status s = grip_struct_check(ctx, a, sizeof *a, what, "grip_array");
    if (s || a->rows == 0)
        return s;
    if (a->dtype != dtype)
        return grip_fail(ctx, GRIP_EINVAL, "%s: dtype %u, expected %u", what, a->dtype, dtype);
    if (want_cols && a->cols != want_cols)
        return grip_fail(ctx, GRIP_EINVAL, "%s: %llu columns, expected %llu", what, (unsigned long long)a->cols,
                         (unsigned long long)want_cols);
    if (a->cols > SIZE_MAX / grip_dtype_size(dtype) / a->rows)
        return grip_fail(ctx, GRIP_EINVAL, "%s: %llu x %llu elements exceed the address space", what,
                         (unsigned long long)a->rows, (unsigned long long)a->cols);
    if (!a->data)
        return grip_fail(ctx, GRIP_EINVAL, "%s: %llu rows but data is NULL", what, (unsigned long long)a->rows);
    if (a->memory != GRIP_MEM_HOST && a->memory != GRIP_MEM_CUDA)
        return grip_fail(ctx, GRIP_EINVAL, "%s: unknown memory space %u", what, a->memory);
    return GRIP_OK;
}

grip_status grip_optional_array_check(grip_ctx *ctx, const grip_array *a, uint32_t dtype, uint64_t want_cols,
                                      const char *what)
{
    return !a || a->rows == 0 ? GRIP_OK : grip_array_check(ctx, a, dtype, want_cols, what);
}

grip_status grip_array_to_host(grip_ctx *ctx, const grip_array *a, grip_array *host, int *owned, const char *what)
{
    *owned = 0;
    if (a->memory == GRIP_MEM_HOST || a->rows == 0) {
        *host = *a;
        return GRIP_OK;
    }
    grip_status st = grip_array_alloc_host(ctx, host, a->dtype, a->rows, a->cols);
    if (st)
        return st;
    st = grip_cuda_copy_to_host(ctx, host->data, a->data, (size_t)(a->rows * a->cols) * grip_dtype_size(a->dtype));
    if (st) {
        grip_array_free_host(host);
        char cause[GRIP_ERROR_TEXT_MAX];
        memcpy(cause, grip_ctx_error_text(ctx), sizeof cause); /* grip_fail writes into that text: format from a copy */
        return grip_fail(ctx, st, "%s: copying from the device failed: %s", what, cause);
    }
    *owned = 1;
    return GRIP_OK;
}
