/* test_verify_icp_normals.c -- the normals the `icp` verify stage computes for a model that carries none (and whose
 * features carry none) follow verify.model_normals, by the same orientation step as the descriptor front
 * (stages/normals_orientation.h). Observed through visible fitness: a complete torus model placed exactly on a
 * scene that holds only its camera-facing side. Its fitness counts the model points whose normal faces the camera:
 * with normals that truly point out of the torus, those are the scene's points (fitness near 1); pointed away from
 * the centroid, the inner ring's are turned, and back-facing points count as unexplained; toward the model's
 * viewpoint (its own origin, the torus's centre), most are. A bad value is refused naming the key. The device
 * side computes them by the same step's device half (grip_normals_plan_cuda), which
 * tests/gpu/test_normals_propagate_cuda.c checks against this one. */
#include "test_support.h"
#include "closed_shapes.h"
#include "core/array.h"
#include "stages/registry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_POINTS 6000

static grip_cloud cloud_of(float *xyz, size_t n)
{
    grip_cloud c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.xyz = grip_array_host_view(GRIP_F32, n, 3, xyz);
    c.width = (uint32_t)n;
    c.height = 1;
    return c;
}

/* The verdict's fitness for the model placed 1 m in front of the camera (its axis along the line of sight), with
 * verify.model_normals = orientation, on the CPU. */
static float fitness_with(const char *orientation)
{
    uint64_t seed = 2521;
    const float origin[3] = {0.0f, 0.0f, 0.0f};
    grip_closed_shape torus;
    ck_assert(grip_closed_torus(&seed, MODEL_POINTS, origin, 0.1f, 0.035f, &torus));
    /* the scene: the model's points moved 1 m along z whose true normal faces the camera at the origin */
    float *scene_xyz = malloc(torus.n * 3 * sizeof *scene_xyz);
    ck_assert_ptr_nonnull(scene_xyz);
    size_t m = 0;
    for (size_t i = 0; i < torus.n; ++i) {
        const float p[3] = {torus.xyz[3 * i], torus.xyz[3 * i + 1], torus.xyz[3 * i + 2] + 1.0f};
        const float *t = torus.truth + 3 * i;
        if (-(p[0] * t[0] + p[1] * t[1] + p[2] * t[2]) > 0.0f) {
            memcpy(scene_xyz + 3 * m, p, sizeof p);
            ++m;
        }
    }
    grip_cloud model = cloud_of(torus.xyz, torus.n), scene = cloud_of(scene_xyz, m);
    grip_view model_view = {sizeof model_view, &model, NULL}, scene_view = {sizeof scene_view, &scene, NULL};
    grip_ctx *ctx = grip_test_ctx();
    grip_kv kv[] = {{"device", "cpu"},
                    {"model_normals", orientation},
                    {"model_leaf", "0"},
                    {"max_iterations", "5"},
                    {"inlier_distance", "0.002"}};
    grip_stage *st = NULL;
    ck_assert_msg(grip_verify_icp.create(ctx, kv, 5, &st) == GRIP_OK, "%s", grip_ctx_error_text(ctx));
    grip_hypothesis hy;
    memset(&hy, 0, sizeof hy);
    hy.struct_size = sizeof hy;
    for (int k = 0; k < 4; k++)
        hy.pose[5 * k] = 1.0f;
    hy.pose[11] = 1.0f;
    hy.votes = 10.0f;
    grip_hypotheses hs = {sizeof hs, 1, sizeof hy, &hy, NULL};
    grip_verdicts *v = NULL;
    ck_assert_msg(grip_verify_icp.verify(st, &model_view, 1, &scene_view, &hs, &v) == GRIP_OK, "%s",
                  grip_ctx_error_text(ctx));
    ck_assert_uint_eq(v->count, 1);
    const float fitness = v->items[0].fitness;
    printf("model_normals = %s: visible fitness %.3f (%zu model points, %zu in the scene)\n", orientation,
           (double)fitness, torus.n, m);
    v->release(v);
    grip_verify_icp.destroy(st);
    grip_ctx_free(ctx);
    free(scene_xyz);
    grip_closed_shape_free(&torus);
    return fitness;
}

START_TEST(model_normals_orient_icp_normals)
{
    const float viewpoint = fitness_with("viewpoint"), outward = fitness_with("outward");
    const float propagate = fitness_with("propagate");
    ck_assert_float_gt(propagate, 0.97f);
    ck_assert_float_lt(outward, 0.9f);
    ck_assert_float_lt(viewpoint, 0.9f);
    grip_ctx *ctx = grip_test_ctx();
    grip_kv bad[] = {{"model_normals", "inward"}};
    grip_stage *st = NULL;
    ck_assert_int_eq(grip_verify_icp.create(ctx, bad, 1, &st), GRIP_ECONFIG);
    ck_assert_ptr_null(st);
    ck_assert_msg(strstr(grip_ctx_error_text(ctx), "model_normals") != NULL, "%s", grip_ctx_error_text(ctx));
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("verify_icp_normals");
    TCase *tc = tcase_create("icp");
    tcase_add_test(tc, model_normals_orient_icp_normals);
    suite_add_tcase(s, tc);
    return grip_test_run(s);
}
