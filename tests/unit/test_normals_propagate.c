/* test_normals_propagate.c -- the CPU twin of the orientation by propagation (descriptor/normals_propagate.h) on
 * complete closed shapes where pointing away from the centroid (model_normals = outward) is wrong on part of the
 * surface: a torus (its inner ring faces the centroid) and two disjoint spheres (their facing halves; two components,
 * each seeded on its own). Propagation gets at least 99 % right where outward gets a fifth or more wrong; it only
 * changes signs; its answer does not depend on the signs it is given (every decision reads |n_i . n_j| and the
 * seed rule), NaN rows stay NaN; bad arguments are refused. The stage-level step (stages/normals_orientation.h) is
 * the compute, turn-around and propagation in a row. */
#include "test_support.h"
#include "closed_shapes.h"
#include "descriptor/normals.h"
#include "descriptor/normals_propagate.h"
#include "descriptor/normals_propagate_math.h"
#include "stages/normals_orientation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float *copy_rows(const float *rows, size_t n)
{
    float *out = malloc(n * 4 * sizeof *out);
    ck_assert_ptr_nonnull(out);
    memcpy(out, rows, n * 4 * sizeof *out);
    return out;
}

/* propagated differs from given only by the sign of nx, ny, nz, row by row. */
static void assert_signs_only(const float *given, const float *propagated, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        const float *g = given + 4 * i, *p = propagated + 4 * i;
        const int same = p[0] == g[0] && p[1] == g[1] && p[2] == g[2];
        const int turned = p[0] == -g[0] && p[1] == -g[1] && p[2] == -g[2];
        ck_assert_msg(isnan(g[0]) ? isnan(p[0]) : (same || turned), "row %zu", i);
        ck_assert(isnan(g[3]) ? isnan(p[3]) : p[3] == g[3]);
    }
}

/* Orients the shape outward then by propagation; checks outward's share wrong exceeds outward_min and
 * propagation's is at most 1 %. */
static void check_shape(const char *name, const grip_closed_shape *s, double outward_min)
{
    grip_ctx *ctx = grip_test_ctx();
    float centroid[3];
    float *outward = grip_closed_outward_normals(ctx, s, centroid);
    float *propagated = copy_rows(outward, s->n);
    ck_assert_int_eq(grip_normals_propagate(ctx, s->xyz, s->n, NULL, 10, centroid, propagated), GRIP_OK);
    size_t defined = 0, defined_p = 0;
    const size_t wrong_outward = grip_closed_against(s, outward, &defined);
    const size_t wrong_propagated = grip_closed_against(s, propagated, &defined_p);
    printf("%s, %zu defined normals: %zu (%.1f %%) inward pointed away from the centroid, %zu (%.2f %%) after "
           "propagation\n",
           name, defined, wrong_outward, 100.0 * (double)wrong_outward / (double)defined, wrong_propagated,
           100.0 * (double)wrong_propagated / (double)defined);
    ck_assert_uint_eq(defined_p, defined);
    ck_assert_uint_gt(defined, s->n * 99 / 100);
    ck_assert_msg((double)wrong_outward > outward_min * (double)defined, "outward should fail on the %s", name);
    ck_assert_uint_le(wrong_propagated * 100, defined);
    assert_signs_only(outward, propagated, s->n);
    free(outward);
    free(propagated);
    grip_ctx_free(ctx);
}

START_TEST(torus_is_oriented_where_the_centroid_fails)
{
    uint64_t seed = 2501;
    const float centre[3] = {0.3f, -0.2f, 1.5f};
    grip_closed_shape s;
    ck_assert(grip_closed_torus(&seed, 6000, centre, 1.0f, 0.35f, &s));
    check_shape("torus", &s, 0.2);
    grip_closed_shape_free(&s);
}
END_TEST

START_TEST(two_spheres_each_seeded_on_its_own)
{
    uint64_t seed = 2502;
    grip_closed_shape s;
    ck_assert(grip_closed_two_spheres(&seed, 5000, 1.0f, 0.6f, &s));
    check_shape("two spheres", &s, 0.1);
    grip_closed_shape_free(&s);
}
END_TEST

/* Whatever signs it is given, the answer is the same bits; NaN rows (and a point without a position) stay as they
 * are and the rest is still oriented. */
START_TEST(answer_does_not_depend_on_the_given_signs)
{
    uint64_t seed = 2503;
    const float centre[3] = {0.0f, 0.0f, 0.0f};
    grip_closed_shape s;
    ck_assert(grip_closed_torus(&seed, 4000, centre, 1.0f, 0.3f, &s));
    for (size_t i = 0; i < s.n; i += 97) /* a few points without a position */
        s.xyz[3 * i + 1] = NAN;
    grip_ctx *ctx = grip_test_ctx();
    float centroid[3];
    float *a = grip_closed_outward_normals(ctx, &s, centroid);
    for (size_t i = 5; i < s.n; i += 53) /* and a few whose normal is undefined */
        a[4 * i] = a[4 * i + 1] = a[4 * i + 2] = a[4 * i + 3] = NAN;
    float *b = copy_rows(a, s.n);
    for (size_t i = 0; i < s.n; ++i)
        if (grip_test_uniform(&seed, 0.0f, 1.0f) < 0.5f)
            for (int c = 0; c < 3; ++c)
                b[4 * i + c] = -b[4 * i + c];
    ck_assert_int_eq(grip_normals_propagate(ctx, s.xyz, s.n, NULL, 8, centroid, a), GRIP_OK);
    grip_kdtree3d *tree = grip_test_kdtree(ctx, s.xyz, s.n);
    ck_assert_int_eq(grip_normals_propagate(ctx, s.xyz, s.n, tree, 8, centroid, b), GRIP_OK);
    grip_kdtree3d_free(tree);
    for (size_t i = 0; i < s.n; ++i) {
        ck_assert_msg(memcmp(a + 4 * i, b + 4 * i, 3 * sizeof *a) == 0 || (isnan(a[4 * i]) && isnan(b[4 * i])),
                      "row %zu", i);
        ck_assert(isnan(s.xyz[3 * i + 1]) == isnan(a[4 * i]) || i % 53 == 5);
    }
    size_t defined = 0;
    ck_assert_uint_le(grip_closed_against(&s, a, &defined) * 100, defined);
    free(a);
    free(b);
    grip_closed_shape_free(&s);
    grip_ctx_free(ctx);
}
END_TEST

/* The stage-level step under propagate: the normals from the centroid, turned around, then propagated with
 * propagate_k, bit for bit; viewpoint and outward as before. */
START_TEST(orientation_plan_is_the_steps_in_a_row)
{
    uint64_t seed = 2504;
    const float centre[3] = {0.5f, 0.5f, 2.0f};
    grip_closed_shape s;
    ck_assert(grip_closed_torus(&seed, 3000, centre, 1.0f, 0.4f, &s));
    grip_ctx *ctx = grip_test_ctx();
    grip_cloud_input in;
    memset(&in, 0, sizeof in);
    in.n = s.n;
    in.xyz = s.xyz;
    in.viewpoint[2] = -1.0f;
    grip_normals_plan plan;
    grip_normals_plan_init(&plan, &in, 10, 0.0f, GRIP_MODEL_NORMALS_PROPAGATE, 6);
    float *got = malloc(s.n * 4 * sizeof *got);
    ck_assert_int_eq(grip_normals_plan_host(ctx, &plan, &in, NULL, got), GRIP_OK);
    float centroid[3];
    float *expect = grip_closed_outward_normals(ctx, &s, centroid);
    ck_assert(memcmp(plan.viewpoint, centroid, sizeof centroid) == 0);
    ck_assert_int_eq(grip_normals_propagate(ctx, s.xyz, s.n, NULL, 6, centroid, expect), GRIP_OK);
    ck_assert(memcmp(got, expect, s.n * 4 * sizeof *got) == 0);
    grip_normals_plan_init(&plan, &in, 10, 0.0f, GRIP_MODEL_NORMALS_VIEWPOINT, 6);
    ck_assert(plan.viewpoint[2] == -1.0f);
    ck_assert_int_eq(grip_normals_plan_host(ctx, &plan, &in, NULL, got), GRIP_OK);
    ck_assert_int_eq(grip_normals_compute(ctx, s.xyz, s.n, NULL, 10, 0.0f, in.viewpoint, expect), GRIP_OK);
    ck_assert(memcmp(got, expect, s.n * 4 * sizeof *got) == 0);
    free(got);
    free(expect);
    grip_closed_shape_free(&s);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    float xyz[6] = {0, 0, 0, 1, 0, 0}, normals[8] = {0, 0, 1, 0, 0, 0, 1, 0}, c[3] = {0, 0, 0};
    ck_assert_int_eq(grip_normals_propagate(ctx, xyz, 2, NULL, 0, c, normals), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "k = 0"));
    ck_assert_int_eq(grip_normals_propagate(ctx, xyz, 2, NULL, GRIP_NORMALS_PROPAGATE_MAX_K + 1, c, normals),
                     GRIP_EINVAL);
    ck_assert_int_eq(grip_normals_propagate(ctx, NULL, 2, NULL, 4, c, normals), GRIP_EINVAL);
    ck_assert_int_eq(grip_normals_propagate(ctx, NULL, 0, NULL, 4, c, NULL), GRIP_OK);
    /* two points, each the other's only neighbour: the farther seeds and points away from c, the other follows */
    xyz[0] = 0.5f;
    normals[2] = -1.0f;
    c[2] = 1.0f;
    ck_assert_int_eq(grip_normals_propagate(ctx, xyz, 2, NULL, 4, c, normals), GRIP_OK);
    /* the second point, farther from c, faced it and turned; the first, facing the other way, follows it */
    ck_assert(normals[6] == -1.0f && normals[2] == -1.0f);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("normals_propagate");
    TCase *tc = tcase_create("cpu");
    tcase_add_test(tc, torus_is_oriented_where_the_centroid_fails);
    tcase_add_test(tc, two_spheres_each_seeded_on_its_own);
    tcase_add_test(tc, answer_does_not_depend_on_the_given_signs);
    tcase_add_test(tc, orientation_plan_is_the_steps_in_a_row);
    tcase_add_test(tc, bad_arguments);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
