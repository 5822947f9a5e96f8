/* test_device.c (gpu) -- the CUDA plumbing every GPU stage builds on: the device is probed lazily, results are
 * placed in device memory on request and read back unchanged, and `device = cuda` resolves. Skips (77) without
 * a usable device. */
#include "test_support.h"
#include "core/cuda_bridge.h"
#include "stages/stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

START_TEST(device_is_probed_and_resolved)
{
    grip_ctx *ctx = grip_test_ctx();
    ck_assert_int_gt(grip_ctx_device_count(ctx), 0);
    int use_cuda = 0;
    ck_assert_int_eq(grip_device_resolve(ctx, "descriptor", GRIP_DEVICE_CUDA, 1, &use_cuda), GRIP_OK);
    ck_assert_int_eq(use_cuda, 1);
    ck_assert_int_eq(grip_device_resolve(ctx, "descriptor", GRIP_DEVICE_AUTO, 1, &use_cuda), GRIP_OK);
    ck_assert_int_eq(use_cuda, 1);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(result_arrays_round_trip_through_the_device)
{
    grip_ctx *ctx = grip_test_ctx();
    const size_t rows = 1000, cols = 352;
    grip_array a;
    ck_assert_int_eq(grip_array_alloc_host(ctx, &a, GRIP_F32, rows, cols), GRIP_OK);
    float *v = a.data;
    uint64_t seed = 7;
    for (size_t i = 0; i < rows * cols; i++)
        v[i] = grip_test_uniform(&seed, -1, 1);
    float *copy = malloc(rows * cols * sizeof *copy);
    memcpy(copy, v, rows * cols * sizeof *copy);
    ck_assert_int_eq(grip_result_array_place(ctx, &a, GRIP_MEM_CUDA), GRIP_OK);
    ck_assert_int_eq(a.memory, GRIP_MEM_CUDA);
    ck_assert_int_ge(a.device, 0);
    grip_array back;
    int owned = 0;
    ck_assert_int_eq(grip_array_to_host(ctx, &a, &back, &owned, "test"), GRIP_OK);
    ck_assert_int_eq(owned, 1);
    ck_assert_int_eq(memcmp(back.data, copy, rows * cols * sizeof *copy), 0);
    grip_array_free_host(&back);
    grip_result_array_free(&a);
    free(copy);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(out_of_memory_is_reported_and_the_context_survives)
{
    grip_ctx *ctx = grip_test_ctx();
    void *dev = NULL;
    int device = -1;
    static const char byte = 1;
    /* 1 PiB cannot be had: the upload must fail with ENOMEM, not crash, and the next upload must work */
    grip_status s = grip_cuda_upload(ctx, &byte, (size_t)1 << 50, &dev, &device);
    ck_assert_int_eq(s, GRIP_ENOMEM);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "cudaMalloc"));
    ck_assert_int_eq(grip_cuda_upload(ctx, &byte, 1, &dev, &device), GRIP_OK);
    grip_cuda_free(dev);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("device");
    TCase *tc = tcase_create("cuda");
    tcase_add_test(tc, device_is_probed_and_resolved);
    tcase_add_test(tc, result_arrays_round_trip_through_the_device);
    tcase_add_test(tc, out_of_memory_is_reported_and_the_context_survives);
    suite_add_tcase(s, tc);
    return grip_test_run_gpu(s);
}
