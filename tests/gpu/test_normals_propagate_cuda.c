/* test_normals_propagate_cuda.c -- the GPU twin of the orientation by propagation
 * (descriptor/normals_propagate_cuda.h) against the CPU twin (normals_propagate.h):
 *  - given the same normals (the CPU's, uploaded), the GPU's orientation equals the CPU's bit for bit: on a torus and
 *    two disjoint spheres (several rounds), with NaN rows and points without a position, at two k, and on a torus
 *    of 60k points (hundreds of levels);
 *  - the full path (stages/normals_orientation.h under propagate: normals, centroid, turn-around and propagation all
 *    on the device) against the CPU's: the share of defined rows whose sign agrees (printed; at least 99 %), and
 *    both at least 99 % right against the torus's true normals;
 *  - bad arguments refused.
 * Skips (77) without a usable device. */
#include "test_support.h"
#include "closed_shapes.h"
#include "core/cuda_bridge.h"
#include "descriptor/normals.h"
#include "descriptor/normals_propagate.h"
#include "descriptor/normals_propagate_cuda.h"
#include "descriptor/normals_propagate_math.h"
#include "stages/normals_orientation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* given (host n x 4) propagated on the CPU and, uploaded, on the GPU with k neighbours: the same bits. */
static void check_same_bits(grip_ctx *ctx, const grip_closed_shape *s, const float *given, const float centroid[3],
                            uint32_t k)
{
    const size_t bytes = s->n * 4 * sizeof(float);
    float *cpu = malloc(bytes), *gpu = malloc(bytes);
    ck_assert(cpu && gpu);
    memcpy(cpu, given, bytes);
    ck_assert_int_eq(grip_normals_propagate(ctx, s->xyz, s->n, NULL, k, centroid, cpu), GRIP_OK);
    grip_surface_cuda *surface = NULL;
    ck_assert_msg(grip_surface_cuda_create(ctx, s->xyz, s->n, &surface) == GRIP_OK, "%s", ctx->last_error);
    ck_assert_int_eq(grip_surface_cuda_set_normals(ctx, surface, given, 4), GRIP_OK);
    ck_assert_msg(grip_normals_cuda_propagate(ctx, surface, k, centroid) == GRIP_OK, "%s", ctx->last_error);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, gpu, grip_surface_cuda_get_view(surface).normals, bytes), GRIP_OK);
    size_t turned = 0;
    for (size_t i = 0; i < 4 * s->n; ++i) {
        ck_assert_msg((isnan(cpu[i]) && isnan(gpu[i])) || memcmp(cpu + i, gpu + i, sizeof *cpu) == 0,
                      "value %zu: cpu %.9g gpu %.9g", i, (double)cpu[i], (double)gpu[i]);
        turned += i % 4 == 0 && cpu[i] == -given[i] && cpu[i] != 0.0f;
    }
    size_t defined = 0;
    const size_t wrong = grip_closed_against(s, cpu, &defined);
    printf("k = %u, %zu points: equal bits; %zu turned by the walk, %zu of %zu defined inward\n", k, s->n, turned,
           wrong, defined);
    ck_assert_uint_gt(turned, 0); /* the walk had something to decide */
    ck_assert_uint_le(wrong * 100, defined);
    grip_surface_cuda_free(surface);
    free(cpu);
    free(gpu);
}

START_TEST(same_normals_same_bits)
{
    grip_ctx *ctx = grip_test_ctx();
    uint64_t seed = 2511;
    const float centre[3] = {0.3f, -0.2f, 1.5f};
    grip_closed_shape torus, spheres;
    ck_assert(grip_closed_torus(&seed, grip_test_size(8000, 1500), centre, 1.0f, 0.35f, &torus));
    ck_assert(grip_closed_two_spheres(&seed, grip_test_size(6000, 1500), 1.0f, 0.6f, &spheres));
    for (size_t i = 3; i < torus.n; i += 101) /* a few points without a position */
        torus.xyz[3 * i + 2] = NAN;
    float c_torus[3], c_spheres[3];
    float *n_torus = grip_closed_outward_normals(ctx, &torus, c_torus);
    float *n_spheres = grip_closed_outward_normals(ctx, &spheres, c_spheres);
    for (size_t i = 7; i < torus.n; i += 89) /* and a few whose normal is undefined */
        n_torus[4 * i] = n_torus[4 * i + 1] = n_torus[4 * i + 2] = NAN;
    check_same_bits(ctx, &torus, n_torus, c_torus, 10);
    check_same_bits(ctx, &torus, n_torus, c_torus, 4);
    check_same_bits(ctx, &spheres, n_spheres, c_spheres, 10);
    free(n_torus);
    free(n_spheres);
    grip_closed_shape_free(&torus);
    grip_closed_shape_free(&spheres);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(large_torus_same_bits)
{
    grip_ctx *ctx = grip_test_ctx();
    uint64_t seed = 2512;
    const float centre[3] = {0.0f, 0.0f, 0.0f};
    grip_closed_shape torus;
    ck_assert(grip_closed_torus(&seed, grip_test_size(60000, 3000), centre, 1.0f, 0.25f, &torus));
    float c[3];
    float *given = grip_closed_outward_normals(ctx, &torus, c);
    check_same_bits(ctx, &torus, given, c, 10);
    free(given);
    grip_closed_shape_free(&torus);
    grip_ctx_free(ctx);
}
END_TEST

/* Normals, centroid, turn-around and walk on the device against the same steps on the CPU. */
START_TEST(full_path_agrees)
{
    grip_ctx *ctx = grip_test_ctx();
    uint64_t seed = 2513;
    const float centre[3] = {0.5f, 0.5f, 2.0f};
    grip_closed_shape torus;
    ck_assert(grip_closed_torus(&seed, grip_test_size(20000, 2000), centre, 1.0f, 0.4f, &torus));
    grip_cloud_input in;
    memset(&in, 0, sizeof in);
    in.n = torus.n;
    in.xyz = torus.xyz;
    grip_normals_plan plan;
    grip_normals_plan_init(&plan, &in, 10, 0.0f, GRIP_MODEL_NORMALS_PROPAGATE, 10);
    const size_t bytes = torus.n * 4 * sizeof(float);
    float *cpu = malloc(bytes), *gpu = malloc(bytes);
    ck_assert(cpu && gpu);
    ck_assert_int_eq(grip_normals_plan_host(ctx, &plan, &in, NULL, cpu), GRIP_OK);
    ck_assert_msg(grip_normals_plan_cuda(ctx, &plan, &in, gpu) == GRIP_OK, "%s", ctx->last_error);
    size_t both = 0, agree = 0, defined_cpu = 0, defined_gpu = 0;
    for (size_t i = 0; i < torus.n; ++i) {
        const float *a = cpu + 4 * i, *b = gpu + 4 * i;
        if (isnan(a[0]) || isnan(b[0]))
            continue;
        ++both;
        agree += (double)a[0] * b[0] + (double)a[1] * b[1] + (double)a[2] * b[2] > 0.0;
    }
    const size_t wrong_cpu = grip_closed_against(&torus, cpu, &defined_cpu);
    const size_t wrong_gpu = grip_closed_against(&torus, gpu, &defined_gpu);
    printf("full path, %zu points: signs agree on %zu of %zu (%.3f %%); inward: cpu %zu, gpu %zu\n", torus.n, agree,
           both, 100.0 * (double)agree / (double)both, wrong_cpu, wrong_gpu);
    ck_assert_uint_gt(both, torus.n * 99 / 100);
    ck_assert_uint_ge(agree * 100, both * 99);
    ck_assert_uint_le(wrong_cpu * 100, defined_cpu);
    ck_assert_uint_le(wrong_gpu * 100, defined_gpu);
    free(cpu);
    free(gpu);
    grip_closed_shape_free(&torus);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    const float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0}, c[3] = {0, 0, 0};
    grip_surface_cuda *s = NULL;
    ck_assert_int_eq(grip_normals_cuda_propagate(ctx, NULL, 10, c), GRIP_EINVAL);
    ck_assert_int_eq(grip_surface_cuda_create(ctx, xyz, 3, &s), GRIP_OK);
    ck_assert_int_eq(grip_normals_cuda_propagate(ctx, s, 10, c), GRIP_EINVAL); /* no normals yet */
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "no normals"));
    const float normals[12] = {0, 0, 1, 0, 0, 0, -1, 0, 0, 0, 1, 0};
    ck_assert_int_eq(grip_surface_cuda_set_normals(ctx, s, normals, 4), GRIP_OK);
    ck_assert_int_eq(grip_normals_cuda_propagate(ctx, s, 0, c), GRIP_EINVAL);
    ck_assert_int_eq(grip_normals_cuda_propagate(ctx, s, GRIP_NORMALS_PROPAGATE_MAX_K + 1, c), GRIP_EINVAL);
    ck_assert_int_eq(grip_normals_cuda_propagate(ctx, s, 2, NULL), GRIP_EINVAL);
    ck_assert_int_eq(grip_normals_cuda_propagate(ctx, s, 2, c), GRIP_OK);
    grip_surface_cuda_free(s);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("normals_propagate_cuda");
    grip_test_add_case(s, "same_bits", same_normals_same_bits);
    grip_test_add_case(s, "large", large_torus_same_bits);
    grip_test_add_case(s, "full_path", full_path_agrees);
    grip_test_add_case(s, "arguments", bad_arguments);
    return grip_test_run_gpu(s);
}
