/* test_screen_kernel_cuda.c (gpu) -- the `bruteforce` index stage's screen_kernel parameter proves the portable
 * path on a Hopper GPU: screen_kernel = mma_sync (the mma.sync kernel, the one sm_80, sm_86 and sm_89 GPUs run)
 * answers exactly as screen_kernel = auto (the sm_90a wgmma kernel on Hopper) and as the CPU stage: ids and squared
 * distances identical bit for bit (memcmp), on clustered rows of 33 (FPFH), 128 and 352 (SHOT) dimensions, k = 1, 5
 * and 16 (the screened path's largest), queries on the host. On a Hopper GPU the two indexes screen differently (the
 * wgmma kernel in int8 rows of dim bytes, the mma.sync kernel in fp16 rows of twice that), which the handles' device
 * bytes show; elsewhere both run the mma.sync kernel (or, where a block's shared memory cannot hold it, the exact
 * kernel) and the comparison still holds. Prints which device ran it. Skips (77) without a device. */
#include "test_support.h"
#include "index/bruteforce_cuda.h"
#include "stages/index_bruteforce.h"
#include "stages/registry.h"
#include "stages/stage.h"

#ifdef GRIP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_REF 20000
#define N_QUERY 2000
#define MAX_K 16

static grip_index *build(grip_ctx *ctx, const char *device, const char *kernel, const grip_array *ref,
                         const grip_array *model_ids, grip_stage **st)
{
    const grip_kv kv[] = {{"device", device}, {"screen_kernel", kernel}};
    ck_assert_msg(grip_stage_create(&grip_index_bruteforce, ctx, kv, 2, st) == GRIP_OK, "%s", ctx->last_error);
    grip_index *ix = NULL;
    ck_assert_msg(grip_index_bruteforce.build(*st, ref, model_ids, &ix) == GRIP_OK, "%s", ctx->last_error);
    return ix;
}

static void search(grip_ctx *ctx, grip_index *ix, const float *q, size_t dim, uint32_t k, uint32_t *ids, float *d)
{
    memset(ids, 0xa5, N_QUERY * k * sizeof *ids);
    grip_array queries = grip_array_host_view(GRIP_F32, N_QUERY, dim, (void *)q);
    grip_array out_ids = grip_array_host_view(GRIP_U32, N_QUERY, k, ids);
    grip_array out_d = grip_array_host_view(GRIP_F32, N_QUERY, k, d);
    ck_assert_msg(ix->search(ix, &queries, k, INFINITY, &out_ids, &out_d) == GRIP_OK, "%s", ctx->last_error);
}

/* Device bytes of a handle over ref with the GPU options the index's stage resolved from its parameters. */
static size_t handle_bytes(grip_ctx *ctx, const grip_index *ix, const float *ref, size_t dim)
{
    const grip_bruteforce_cuda_options *o = grip_index_bruteforce_options(ix);
    ck_assert_ptr_nonnull(o);
    grip_bruteforce_cuda_ref *h = NULL;
    ck_assert_int_eq(grip_bruteforce_cuda_ref_upload(ctx, ref, N_REF, dim, o, &h), GRIP_OK);
    size_t bytes = grip_bruteforce_cuda_ref_device_bytes(h);
    grip_bruteforce_cuda_ref_free(h);
    return bytes;
}

static int device_is_hopper(grip_ctx *ctx)
{
    int major = 0;
#ifdef GRIP_HAVE_CUDA
    struct cudaDeviceProp prop;
    int device = ctx->device; /* -1 until the context's first device call, which takes the first device */
    if (device < 0)
        device = ctx->opts.device_ordinal >= 0 ? ctx->opts.device_ordinal : 0;
    ck_assert_int_eq(cudaGetDeviceProperties(&prop, device), cudaSuccess);
    major = prop.major;
    printf("device %d: %s, sm_%d%d, %zu bytes of shared memory a block (opt-in)\n", device, prop.name, prop.major,
           prop.minor, prop.sharedMemPerBlockOptin);
#endif
    return major == 9;
}

/* The three indexes on rows of dimension dim. One Check case per dimension, so that compute-sanitizer's slow
 * tools run them in parallel; each dimension draws its rows from its own seed. */
static void portable_kernel_equals_wgmma_kernel_at(size_t dim)
{
    grip_ctx *ctx = grip_test_ctx();
    static const uint32_t ks[] = {1, 5, MAX_K};
    uint32_t *model_ids = malloc(N_REF * sizeof *model_ids);
    uint32_t *ids[3];
    float *d[3];
    for (int v = 0; v < 3; ++v) {
        ids[v] = malloc(N_QUERY * MAX_K * sizeof *ids[v]);
        d[v] = malloc(N_QUERY * MAX_K * sizeof *d[v]);
        ck_assert(ids[v] && d[v]);
    }
    ck_assert_ptr_nonnull(model_ids);
    for (size_t i = 0; i < N_REF; ++i)
        model_ids[i] = (uint32_t)(i * 4 / N_REF);
    const int hopper = device_is_hopper(ctx);
    uint64_t s = 9100 + dim;
    float *ref = grip_test_clustered_rows(&s, N_REF, dim, 40), *q = grip_test_clustered_rows(&s, N_QUERY, dim, 40);
    grip_array ref_arr = grip_array_host_view(GRIP_F32, N_REF, dim, ref);
    grip_array ids_arr = grip_array_host_view(GRIP_U32, N_REF, 1, model_ids);
    grip_stage *st[3];
    grip_index *ix[3] = {build(ctx, "cpu", "auto", &ref_arr, &ids_arr, &st[0]),
                         build(ctx, "cuda", "auto", &ref_arr, &ids_arr, &st[1]),
                         build(ctx, "cuda", "mma_sync", &ref_arr, &ids_arr, &st[2])};
    for (size_t ki = 0; ki < 3; ++ki) {
        const uint32_t k = ks[ki];
        for (int v = 0; v < 3; ++v)
            search(ctx, ix[v], q, dim, k, ids[v], d[v]);
        for (int v = 1; v < 3; ++v) {
            ck_assert_msg(memcmp(ids[v], ids[0], N_QUERY * k * sizeof *ids[0]) == 0,
                          "dim %zu k %u: %s ids differ from the CPU's", dim, k, v == 1 ? "auto" : "mma_sync");
            ck_assert_msg(memcmp(d[v], d[0], N_QUERY * k * sizeof *d[0]) == 0,
                          "dim %zu k %u: %s distances differ from the CPU's", dim, k, v == 1 ? "auto" : "mma_sync");
        }
        ck_assert_uint_lt(ids[0][0], N_REF);
    }
    const size_t wgmma_bytes = handle_bytes(ctx, ix[1], ref, dim), portable_bytes = handle_bytes(ctx, ix[2], ref, dim);
    printf("dim %zu: auto handle %zu device bytes, mma_sync handle %zu; identical results for k = 1, 5, 16\n", dim,
           wgmma_bytes, portable_bytes);
    if (hopper) /* int8 rows of the wgmma kernel against fp16 rows of the mma.sync kernel */
        ck_assert_uint_lt(wgmma_bytes, portable_bytes);
    for (int v = 0; v < 3; ++v) {
        ix[v]->release(ix[v]);
        grip_stage_destroy(st[v]);
    }
    free(ref);
    free(q);
    for (int v = 0; v < 3; ++v) {
        free(ids[v]);
        free(d[v]);
    }
    free(model_ids);
    grip_ctx_free(ctx);
}

START_TEST(portable_kernel_equals_wgmma_kernel_d33)
{
    portable_kernel_equals_wgmma_kernel_at(33);
}
END_TEST

START_TEST(portable_kernel_equals_wgmma_kernel_d128)
{
    portable_kernel_equals_wgmma_kernel_at(128);
}
END_TEST

START_TEST(portable_kernel_equals_wgmma_kernel_d352)
{
    portable_kernel_equals_wgmma_kernel_at(352);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("screen_kernel_cuda");
    grip_test_add_case(s, "d33", portable_kernel_equals_wgmma_kernel_d33);
    grip_test_add_case(s, "d128", portable_kernel_equals_wgmma_kernel_d128);
    grip_test_add_case(s, "d352", portable_kernel_equals_wgmma_kernel_d352);
    return grip_test_run_gpu(s);
}
