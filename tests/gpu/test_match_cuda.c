/* test_match_cuda.c (gpu) -- the `knn` match stage with the mutual filter on CUDA, whose reverse search (each listed
 * reference row's nearest query, src/match/match_mutual.c) runs on the GPU, gives the CPU stage's correspondences
 * bit for bit: over a CPU and a CUDA bruteforce index, with queries in host and device memory, on clustered rows
 * with exact duplicates (ties among queries and among rows), negative coordinates and non-finite rows, at the
 * dimensions of the exact kernel (7) and of the screened paths (33, 352), with k = 1 and 3 and the ratio test; and
 * on PCL's tutorial SHOT pair when the shared data is there. Skips (77) without a device. */
#include "test_support.h"
#include "core/array.h"
#include "core/cuda_bridge.h"
#include "index/bruteforce.h"
#include "match/match_mutual.h"
#include "match/match_select.h"
#include "stages/registry.h"
#include "stages/stage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static grip_stage *stage_new(grip_ctx *ctx, const grip_stage_impl *impl, const grip_kv *kv, uint32_t n_kv)
{
    grip_stage *st = NULL;
    ck_assert_msg(grip_stage_create(impl, ctx, kv, n_kv, &st) == GRIP_OK, "%s", ctx->last_error);
    return st;
}

static grip_stage *match_stage(grip_ctx *ctx, const char *device, const char *k, const char *ratio)
{
    const grip_kv kv[] = {{"device", device}, {"k", k}, {"ratio", ratio}, {"mutual", "true"}};
    return stage_new(ctx, &grip_match_knn, kv, 4);
}

/* Both sets of correspondences alike, bit for bit; returns their number. */
static size_t expect_same_matches(const grip_matches *want, const grip_matches *got)
{
    ck_assert_uint_eq(got->count, want->count);
    const grip_array *a[] = {&want->query, &want->reference, &want->model_id, &want->sqdist};
    const grip_array *b[] = {&got->query, &got->reference, &got->model_id, &got->sqdist};
    for (size_t i = 0; i < 4; ++i) {
        ck_assert_int_eq(b[i]->memory, GRIP_MEM_HOST);
        if (want->count)
            ck_assert_int_eq(memcmp(a[i]->data, b[i]->data, (size_t)want->count * 4), 0);
    }
    return (size_t)want->count;
}

/* Matches the queries (host, and device when q_dev is not NULL) against the CPU and the CUDA index with a CPU and
 * a CUDA match stage of the given k and ratio: every combination equals the CPU one. Returns the count. */
static size_t match_everywhere(grip_ctx *ctx, grip_index *cpu_index, grip_index *gpu_index, const grip_array *q_host,
                               const grip_array *q_dev, const char *k, const char *ratio)
{
    grip_stage *cpu = match_stage(ctx, "cpu", k, ratio), *gpu = match_stage(ctx, "cuda", k, ratio);
    grip_matches *want = NULL;
    ck_assert_msg(grip_match_knn.match(cpu, cpu_index, q_host, GRIP_MEM_HOST, &want) == GRIP_OK, "%s",
                  ctx->last_error);
    grip_index *indexes[] = {cpu_index, gpu_index};
    const grip_array *queries[] = {q_host, q_dev};
    grip_stage *stages[] = {cpu, gpu};
    for (size_t i = 0; i < 2; ++i)
        for (size_t qi = 0; qi < 2; ++qi)
            for (size_t si = 0; si < 2; ++si) {
                if (!queries[qi])
                    continue;
                grip_matches *got = NULL;
                ck_assert_msg(grip_match_knn.match(stages[si], indexes[i], queries[qi], GRIP_MEM_HOST, &got) ==
                                  GRIP_OK,
                              "%s", ctx->last_error);
                expect_same_matches(want, got);
                got->release(got);
            }
    size_t count = (size_t)want->count;
    want->release(want);
    grip_stage_destroy(cpu);
    grip_stage_destroy(gpu);
    return count;
}

/* The reverse search itself on the GPU, host arrays in: over the listed rows only (fewer than n), each with the
 * nearest query of the CPU's full reverse search, UINT32_MAX elsewhere. */
static void expect_listed_search_on_the_gpu(grip_ctx *ctx, const float *ref, size_t n, const float *q, size_t m,
                                            size_t dim)
{
    const uint32_t k = 2;
    uint32_t *ids = malloc(m * k * sizeof *ids), *full = malloc(n * sizeof *full), *got = malloc(n * sizeof *got);
    float *d = malloc(m * k * sizeof *d);
    ck_assert(ids && full && got && d);
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, n, q, m, dim, k, INFINITY, ids, d), GRIP_OK);
    ck_assert_int_eq(grip_match_nearest_queries(ctx, ref, n, q, m, dim, full), GRIP_OK);
    grip_array ref_a = grip_array_host_view(GRIP_F32, n, dim, (void *)ref);
    grip_array q_a = grip_array_host_view(GRIP_F32, m, dim, (void *)q);
    const grip_bruteforce_cuda_options options = GRIP_BRUTEFORCE_CUDA_OPTIONS_DEFAULT;
    ck_assert_msg(grip_match_nearest_queries_listed(ctx, 1, &options, &ref_a, &q_a, ids, k, got) == GRIP_OK, "%s",
                  ctx->last_error);
    size_t listed = 0;
    for (size_t r = 0; r < n; ++r)
        if (got[r] != UINT32_MAX || full[r] == UINT32_MAX) {
            ck_assert_uint_eq(got[r], full[r]);
            listed += got[r] != UINT32_MAX;
        }
    for (size_t i = 0; i < m * k; ++i)
        ck_assert(ids[i] == UINT32_MAX || got[ids[i]] == full[ids[i]]); /* every listed row answered */
    ck_assert_uint_gt(listed, 100);
    ck_assert_uint_lt(listed, n);
    free(ids);
    free(full);
    free(got);
    free(d);
}

/* A CPU and a CUDA bruteforce index over ref (n x dim, host), of three models. */
static void indexes_make(grip_ctx *ctx, const float *ref, size_t n, size_t dim, uint32_t *model_ids,
                         grip_index **cpu_index, grip_index **gpu_index)
{
    for (size_t i = 0; i < n; ++i)
        model_ids[i] = (uint32_t)(i * 3 / n);
    grip_array ids = grip_array_host_view(GRIP_U32, n, 1, model_ids);
    grip_array rows = grip_array_host_view(GRIP_F32, n, dim, (void *)ref);
    const grip_kv on_cpu = {"device", "cpu"}, on_gpu = {"device", "cuda"};
    grip_stage *cpu = stage_new(ctx, &grip_index_bruteforce, &on_cpu, 1);
    grip_stage *gpu = stage_new(ctx, &grip_index_bruteforce, &on_gpu, 1);
    ck_assert_int_eq(grip_index_bruteforce.build(cpu, &rows, &ids, cpu_index), GRIP_OK);
    ck_assert_int_eq(grip_index_bruteforce.build(gpu, &rows, &ids, gpu_index), GRIP_OK);
    ck_assert_int_eq((*gpu_index)->reference.memory, GRIP_MEM_CUDA); /* the reverse search gathers on the device */
    grip_stage_destroy(cpu);
    grip_stage_destroy(gpu);
}

START_TEST(mutual_on_the_gpu_equals_the_cpu)
{
    grip_ctx *ctx = grip_test_ctx();
    static const size_t dims[] = {7, 33, 352};
    for (size_t di = 0; di < 3; ++di) {
        const size_t dim = dims[di], n = 3000, m = 1200;
        uint64_t s = 77 + dim;
        float *ref = grip_test_clustered_rows(&s, n, dim, 40), *q = malloc(m * dim * sizeof *q);
        ck_assert_ptr_nonnull(q);
        for (size_t i = 0; i + 1 < n; i += 11) /* twin rows: a query lists the lower first */
            memcpy(ref + (i + 1) * dim, ref + i * dim, dim * sizeof *ref);
        for (size_t i = 0; i < m * dim; ++i) /* queries near rows, so that many pairs are mutual */
            q[i] = ref[(i / dim * 7 % n) * dim + i % dim] + grip_test_uniform(&s, -0.004f, 0.004f);
        for (size_t i = 0; i + 1 < m; i += 5) /* twin queries: a row's nearest is the lower one */
            memcpy(q + (i + 1) * dim, q + i * dim, dim * sizeof *q);
        ref[40 * dim + dim / 2] = NAN;
        q[9 * dim] = NAN;
        uint32_t *model_ids = malloc(n * sizeof *model_ids);
        ck_assert_ptr_nonnull(model_ids);
        grip_index *cpu_index = NULL, *gpu_index = NULL;
        indexes_make(ctx, ref, n, dim, model_ids, &cpu_index, &gpu_index);
        grip_array q_host = grip_array_host_view(GRIP_F32, m, dim, q), q_dev = q_host;
        void *dev = NULL;
        ck_assert_int_eq(grip_cuda_upload(ctx, q, m * dim * sizeof *q, &dev, &q_dev.device), GRIP_OK);
        q_dev.data = dev;
        q_dev.memory = GRIP_MEM_CUDA;
        expect_listed_search_on_the_gpu(ctx, ref, n, q, m, dim);
        size_t one = match_everywhere(ctx, cpu_index, gpu_index, &q_host, &q_dev, "1", "0");
        size_t three = match_everywhere(ctx, cpu_index, gpu_index, &q_host, &q_dev, "3", "0");
        size_t ratio = match_everywhere(ctx, cpu_index, gpu_index, &q_host, &q_dev, "1", "0.9");
        fprintf(stderr, "dim %zu: %zu mutual pairs at k = 1, %zu at k = 3, %zu with the ratio test\n", dim, one,
                three, ratio);
        ck_assert_uint_gt(one, 100); /* the filter keeps some pairs ... */
        ck_assert_uint_lt(one, m);   /* ... and drops others */
        ck_assert_uint_ge(three, one);
        grip_cuda_free(dev);
        cpu_index->release(cpu_index);
        gpu_index->release(gpu_index);
        free(model_ids);
        free(ref);
        free(q);
    }
    grip_ctx_free(ctx);
}
END_TEST

/* PCL's tutorial SHOT pair: scene keypoints matched to model keypoints, mutual, on the GPU as on the CPU. */
START_TEST(tutorial_mutual_on_the_gpu_equals_the_cpu)
{
    char path[1024];
    if (!grip_test_data_path(path, sizeof path, "pcl_reference/tutorial/model_shot.f32.gz")) {
        fprintf(stderr, "tutorial SHOT absent: skipped\n");
        return;
    }
    size_t n, m;
    float *model = grip_test_read_rows("pcl_reference/tutorial/model_shot.f32.gz", 352 * sizeof(float), &n);
    float *scene = grip_test_read_rows("pcl_reference/tutorial/scene_shot.f32.gz", 352 * sizeof(float), &m);
    grip_ctx *ctx = grip_test_ctx();
    uint32_t *model_ids = malloc(n * sizeof *model_ids);
    ck_assert_ptr_nonnull(model_ids);
    grip_index *cpu_index = NULL, *gpu_index = NULL;
    indexes_make(ctx, model, n, 352, model_ids, &cpu_index, &gpu_index);
    grip_array q_host = grip_array_host_view(GRIP_F32, m, 352, scene);
    size_t pairs = match_everywhere(ctx, cpu_index, gpu_index, &q_host, NULL, "1", "0");
    fprintf(stderr, "tutorial: %zu mutual pairs of %zu scene and %zu model keypoints\n", pairs, m, n);
    ck_assert_uint_gt(pairs, 100);
    cpu_index->release(cpu_index);
    gpu_index->release(gpu_index);
    free(model_ids);
    free(model);
    free(scene);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("match_cuda");
    grip_test_add_case(s, "mutual_on_the_gpu_equals_the_cpu", mutual_on_the_gpu_equals_the_cpu);
    grip_test_add_case(s, "tutorial_mutual_on_the_gpu_equals_the_cpu", tutorial_mutual_on_the_gpu_equals_the_cpu);
    return grip_test_run_gpu(s);
}
