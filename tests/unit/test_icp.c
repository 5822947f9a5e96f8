/* test_icp.c -- ICP verification on a synthetic object: a 12 x 8 x 5 cm box with an off-centre bump on its top,
 * standing on a table plane. The scene samples the surface afresh (random points, Gaussian noise) under a known
 * pose; ICP starts from a perturbed pose (a few degrees, 2 cm) and must reach the truth (< 0.5 deg, < 1 mm),
 * with fitness ~1; a far hypothesis is rejected; a scene holding only the camera-facing faces gives a fitness
 * close to the visible fraction, and close to 1 when fitness counts the visible side only; the PCL stop rules;
 * voxel thinning; duplicate suppression of hypotheses. Point-to-plane (converges, in fewer iterations; a plane-only
 * scene leaves its free motions alone), the correspondence-distance schedule, and the stage's hypothesis cap. */
#include "test_support.h"
#include "icp_scene.h"
#include "spatial/kdtree3d.h"
#include "stages/registry.h"
#include "stages/stage.h"
#include "verify/icp.h"
#include "verify/pose_nms.h"
#include "verify/voxel_thin.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

#define BOX_A 0.06 /* half length, x */
#define BOX_B 0.04 /* half width, y */
#define BOX_C 0.05 /* height, z (the bottom face is z = 0) */
#define MODEL_SPACING 0.004

/* the six faces: outward normal, and which model axes span it */
static const double FACE_NORMAL[6][3] = {{0, 0, 1}, {0, 0, -1}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}};

static double bump(double x, double y)
{
    double dx = x - 0.025, dy = y + 0.01;
    return 0.015 * exp(-(dx * dx + dy * dy) / (0.015 * 0.015));
}

/* The surface point of face f at parameters (u, v) in [0, 1]^2. */
static void face_point(int f, double u, double v, double p[3])
{
    double x = (2 * u - 1) * BOX_A, y = (2 * v - 1) * BOX_B;
    switch (f) {
    case 0: p[0] = x; p[1] = y; p[2] = BOX_C + bump(x, y); break;
    case 1: p[0] = x; p[1] = y; p[2] = 0; break;
    case 2: case 3: p[0] = f == 2 ? BOX_A : -BOX_A; p[1] = y; p[2] = u * BOX_C; break;
    default: p[0] = x; p[1] = f == 4 ? BOX_B : -BOX_B; p[2] = v * BOX_C; break;
    }
}

static double face_area(int f)
{
    return f < 2 ? 4 * BOX_A * BOX_B : f < 4 ? 2 * BOX_B * BOX_C : 2 * BOX_A * BOX_C;
}

typedef struct cloud {
    float *xyz;
    int *face;
    size_t n, cap;
} cloud;

static void cloud_push(cloud *c, const double p[3], int face)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 1024;
        c->xyz = realloc(c->xyz, c->cap * 3 * sizeof *c->xyz);
        c->face = realloc(c->face, c->cap * sizeof *c->face);
        ck_assert_ptr_nonnull(c->xyz);
        ck_assert_ptr_nonnull(c->face);
    }
    for (int a = 0; a < 3; ++a)
        c->xyz[3 * c->n + a] = (float)p[a];
    c->face[c->n++] = face;
}

static void cloud_free(cloud *c)
{
    free(c->xyz);
    free(c->face);
}

/* the model: every face on a regular grid */
static cloud make_model(void)
{
    cloud c = {0};
    for (int f = 0; f < 6; ++f) {
        double su = f < 2 || f > 3 ? 2 * BOX_A : BOX_C, sv = f < 4 ? 2 * BOX_B : BOX_C;
        int nu = (int)(su / MODEL_SPACING), nv = (int)(sv / MODEL_SPACING);
        for (int i = 0; i <= nu; ++i)
            for (int j = 0; j <= nv; ++j) {
                double p[3];
                face_point(f, (double)i / nu, (double)j / nv, p);
                cloud_push(&c, p, f);
            }
    }
    return c;
}

static double gaussian(uint64_t *s)
{
    double u1 = grip_test_uniform(s, 1e-7f, 1.0f), u2 = grip_test_uniform(s, 0.0f, 1.0f);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * PI * u2);
}

static void pose_identity(double T[16])
{
    memset(T, 0, 16 * sizeof *T);
    T[0] = T[5] = T[10] = T[15] = 1.0;
}

/* rotation by `angle` about the unit axis, then translation t */
static void pose_from_axis_angle(const double axis[3], double angle, const double t[3], double T[16])
{
    double c = cos(angle), s = sin(angle), C = 1 - c, x = axis[0], y = axis[1], z = axis[2];
    const double R[9] = {c + x * x * C,     x * y * C - z * s, x * z * C + y * s,
                         y * x * C + z * s, c + y * y * C,     y * z * C - x * s,
                         z * x * C - y * s, z * y * C + x * s, c + z * z * C};
    pose_identity(T);
    for (int r = 0; r < 3; ++r) {
        for (int k = 0; k < 3; ++k)
            T[4 * r + k] = R[3 * r + k];
        T[4 * r + 3] = t[r];
    }
}

static void pose_mul(const double a[16], const double b[16], double out[16])
{
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) {
            out[4 * r + c] = 0;
            for (int i = 0; i < 4; ++i)
                out[4 * r + c] += a[4 * r + i] * b[4 * i + c];
        }
}

static void pose_apply(const double T[16], const double p[3], double out[3])
{
    for (int r = 0; r < 3; ++r)
        out[r] = T[4 * r] * p[0] + T[4 * r + 1] * p[1] + T[4 * r + 2] * p[2] + T[4 * r + 3];
}

static double rotation_error_deg(const double a[16], const double b[16])
{
    double tr = 0; /* trace(Ra^T Rb) */
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            tr += a[4 * r + c] * b[4 * r + c];
    double cs = 0.5 * (tr - 1);
    return acos(cs > 1 ? 1 : cs < -1 ? -1 : cs) * 180.0 / PI;
}

static double translation_error(const double a[16], const double b[16])
{
    double dx = a[3] - b[3], dy = a[7] - b[7], dz = a[11] - b[11];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The true pose: turned 35 deg about z, standing on the table at (0.1, -0.05). */
static void true_pose(double T[16])
{
    const double z[3] = {0, 0, 1}, t[3] = {0.1, -0.05, 0};
    pose_from_axis_angle(z, 35 * PI / 180, t, T);
}

static const double CAMERA[3] = {0.6, 0.4, 0.5};

/* Whether face f of the object at pose T faces the camera. */
static int face_visible(const double T[16], int f)
{
    double n[3], c[3], q[3];
    for (int r = 0; r < 3; ++r)
        n[r] = T[4 * r] * FACE_NORMAL[f][0] + T[4 * r + 1] * FACE_NORMAL[f][1] + T[4 * r + 2] * FACE_NORMAL[f][2];
    face_point(f, 0.5, 0.5, c);
    pose_apply(T, c, q);
    return n[0] * (CAMERA[0] - q[0]) + n[1] * (CAMERA[1] - q[1]) + n[2] * (CAMERA[2] - q[2]) > 0;
}

/* The scene: n_object random surface points (of the faces facing the camera only when visible_only, which
 * leaves out the bottom) under pose T with Gaussian noise sigma, and a 0.5 x 0.5 m table plane at z = 0 (5 mm
 * grid) outside the object's footprint. */
static cloud make_scene(uint64_t *s, const double T[16], size_t n_object, double sigma, int visible_only)
{
    cloud c = {0};
    double total = 0;
    for (int f = 0; f < 6; ++f)
        total += face_area(f);
    while (c.n < n_object) {
        double pick = grip_test_uniform(s, 0.0f, (float)total);
        int f = 0;
        while (f < 5 && pick > face_area(f))
            pick -= face_area(f++);
        if (visible_only && !face_visible(T, f))
            continue;
        double p[3], q[3];
        face_point(f, grip_test_uniform(s, 0.0f, 1.0f), grip_test_uniform(s, 0.0f, 1.0f), p);
        pose_apply(T, p, q);
        for (int a = 0; a < 3; ++a)
            q[a] += sigma * gaussian(s);
        cloud_push(&c, q, f);
    }
    double inv[16]; /* T is a rotation about z plus a translation in the plane: invert it for the footprint */
    pose_identity(inv);
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k)
            inv[4 * r + k] = T[4 * k + r];
    for (int r = 0; r < 3; ++r)
        inv[4 * r + 3] = -(inv[4 * r] * T[3] + inv[4 * r + 1] * T[7] + inv[4 * r + 2] * T[11]);
    for (double x = -0.25; x <= 0.25; x += 0.005)
        for (double y = -0.25; y <= 0.25; y += 0.005) {
            double p[3] = {x, y, 0}, m[3];
            pose_apply(inv, p, m);
            if (fabs(m[0]) <= BOX_A && fabs(m[1]) <= BOX_B)
                continue;
            cloud_push(&c, p, -1);
        }
    return c;
}

static grip_icp_params default_params(void)
{
    grip_icp_params p;
    memset(&p, 0, sizeof p);
    p.max_iterations = 50;
    p.max_correspondence_distance = 0.05;
    p.transformation_epsilon = 1e-10;
    p.inlier_distance = 0.003;
    p.min_fitness = 0.5;
    p.max_rmse = 0.002;
    return p;
}

/* the truth, moved by `degrees` about a tilted axis and by `metres` along another direction */
static void perturbed(const double truth[16], double degrees, double metres, double out[16])
{
    const double axis[3] = {0.48, -0.6, 0.64}, dir[3] = {0.6, 0.64, -0.48};
    const double t[3] = {metres * dir[0], metres * dir[1], metres * dir[2]};
    double d[16];
    pose_from_axis_angle(axis, degrees * PI / 180, t, d);
    pose_mul(d, truth, out);
}

static void refine(const cloud *model, const cloud *scene, const grip_icp_params *p, const double init[16],
                   grip_icp_result *r)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, scene->xyz, scene->n, &tree), GRIP_OK);
    grip_status st = grip_icp_refine(ctx, p, model->xyz, model->n, tree, scene->xyz, init, r);
    ck_assert_msg(st == GRIP_OK, "%s", ctx->last_error);
    grip_kdtree3d_free(tree);
    grip_ctx_free(ctx);
}

START_TEST(converges_to_truth_low_noise)
{
    uint64_t s = 21;
    double truth[16], init[16];
    true_pose(truth);
    cloud model = make_model(), scene = make_scene(&s, truth, 20000, 0.0002, 0);
    const double starts[][2] = {{4, 0.02}, {6, 0.01}, {2, 0.03}};
    for (int i = 0; i < 3; ++i) {
        perturbed(truth, starts[i][0], starts[i][1], init);
        grip_icp_params p = default_params();
        grip_icp_result r;
        refine(&model, &scene, &p, init, &r);
        double rot = rotation_error_deg(r.pose, truth), tr = translation_error(r.pose, truth);
        ck_assert_msg(rot < 0.5 && tr < 0.001, "start %d: %.3f deg %.2f mm after %u iterations (stop %u)", i, rot,
                      tr * 1e3, r.iterations, r.stop);
        ck_assert_uint_eq(r.n_points, model.n);
        ck_assert_double_gt(r.fitness, 0.97);
        ck_assert_double_lt(r.rmse, 0.0015);      /* 0.2 mm noise, ~1.4 mm between random scene samples */
        ck_assert_uint_eq(r.accepted, 1);
        ck_assert_uint_ne(r.stop, GRIP_ICP_STOP_FEW_CORRESPONDENCES);
        ck_assert_uint_le(r.iterations, 50);
    }
    cloud_free(&model);
    cloud_free(&scene);
}
END_TEST

START_TEST(voxel_thinned_model_converges)
{
    uint64_t s = 22;
    double truth[16], init[16];
    true_pose(truth);
    cloud model = make_model(), scene = make_scene(&s, truth, 20000, 0.0005, 0);
    perturbed(truth, 4, 0.02, init);
    grip_icp_params p = default_params();
    p.voxel_leaf = 0.01;
    grip_icp_result r;
    refine(&model, &scene, &p, init, &r);
    ck_assert_uint_lt(r.n_points, model.n / 3);
    ck_assert_uint_gt(r.n_points, 100);
    ck_assert_double_lt(rotation_error_deg(r.pose, truth), 0.5);
    ck_assert_double_lt(translation_error(r.pose, truth), 0.001);
    ck_assert_uint_eq(r.accepted, 1);
    cloud_free(&model);
    cloud_free(&scene);
}
END_TEST

START_TEST(far_hypothesis_rejected)
{
    uint64_t s = 23;
    double truth[16], wrong[16];
    true_pose(truth);
    cloud model = make_model(), scene = make_scene(&s, truth, 20000, 0.0002, 0);
    /* on the table, 15 cm away and turned 90 deg: ICP can only slide the bottom face on the table */
    const double z[3] = {0, 0, 1}, t[3] = {-0.1, 0.1, 0};
    pose_from_axis_angle(z, PI / 2, t, wrong);
    grip_icp_params p = default_params();
    grip_icp_result r;
    refine(&model, &scene, &p, wrong, &r);
    ck_assert_uint_eq(r.accepted, 0);
    ck_assert_double_lt(r.fitness, 0.5);
    ck_assert_double_gt(translation_error(r.pose, truth), 0.05);
    /* in the air above everything: no pair within reach, the pose is kept and scores nothing */
    const double up[3] = {0, 0, 1.0};
    pose_from_axis_angle(z, 0, up, wrong);
    refine(&model, &scene, &p, wrong, &r);
    ck_assert_uint_eq(r.stop, GRIP_ICP_STOP_FEW_CORRESPONDENCES);
    ck_assert_uint_eq(r.iterations, 0);
    ck_assert_double_eq(r.fitness, 0.0);
    ck_assert(isinf(r.rmse));
    ck_assert_uint_eq(r.accepted, 0);
    ck_assert_mem_eq(r.pose, wrong, sizeof wrong);
    cloud_free(&model);
    cloud_free(&scene);
}
END_TEST

START_TEST(partial_overlap_fitness_is_visible_fraction)
{
    uint64_t s = 24;
    double truth[16], init[16];
    true_pose(truth);
    cloud model = make_model(), scene = make_scene(&s, truth, 12000, 0.0002, 1);
    size_t visible = 0;
    for (size_t i = 0; i < model.n; ++i)
        visible += face_visible(truth, model.face[i]);
    double fraction = (double)visible / (double)model.n;
    ck_assert_double_gt(fraction, 0.3);
    ck_assert_double_lt(fraction, 0.7);
    perturbed(truth, 3, 0.01, init);
    grip_icp_params p = default_params();
    p.max_correspondence_distance = 0.02;
    p.min_fitness = 0.3;
    grip_icp_result r;
    refine(&model, &scene, &p, init, &r);
    /* the hidden faces' rows along the visible edges, and the bottom's along the table, are inliers too */
    ck_assert_msg(r.fitness > fraction - 0.02 && r.fitness < fraction + 0.10, "fitness %.3f, visible %.3f", r.fitness,
                  fraction);
    ck_assert_double_lt(rotation_error_deg(r.pose, truth), 1.0);
    ck_assert_double_lt(translation_error(r.pose, truth), 0.002);
    ck_assert_uint_eq(r.accepted, 1);
    cloud_free(&model);
    cloud_free(&scene);
}
END_TEST

/* The scene is the model itself under the truth: started at the truth, the first update is the identity and the
 * transformation test stops it; max_iterations = 0 only scores; 1 stops on the count. */
START_TEST(stop_rules)
{
    double truth[16], init[16];
    true_pose(truth);
    cloud model = make_model(), scene = {0};
    for (size_t i = 0; i < model.n; ++i) {
        double p[3] = {model.xyz[3 * i], model.xyz[3 * i + 1], model.xyz[3 * i + 2]}, q[3];
        pose_apply(truth, p, q);
        cloud_push(&scene, q, model.face[i]);
    }
    grip_icp_params p = default_params();
    grip_icp_result r;
    refine(&model, &scene, &p, truth, &r);
    ck_assert_uint_eq(r.stop, GRIP_ICP_STOP_TRANSFORM);
    ck_assert_uint_eq(r.iterations, 1);
    ck_assert_double_eq(r.fitness, 1.0);
    ck_assert_double_lt(r.rmse, 1e-6);
    p.max_iterations = 0;
    perturbed(truth, 2, 0.01, init);
    refine(&model, &scene, &p, init, &r);
    ck_assert_uint_eq(r.iterations, 0);
    ck_assert_mem_eq(r.pose, init, sizeof init);
    ck_assert_double_lt(r.fitness, 0.9);
    p.max_iterations = 1;
    refine(&model, &scene, &p, init, &r);
    ck_assert_uint_eq(r.iterations, 1);
    ck_assert_uint_eq(r.stop, GRIP_ICP_STOP_ITERATIONS);
    /* a loose relative-MSE rule stops before the transformation rule would */
    p.max_iterations = 50;
    p.euclidean_fitness_epsilon = 0.5;
    refine(&model, &scene, &p, init, &r);
    ck_assert_uint_eq(r.stop, GRIP_ICP_STOP_RELATIVE_MSE);
    ck_assert_uint_ge(r.iterations, 2);
    cloud_free(&model);
    cloud_free(&scene);
}
END_TEST

/* 27 points 5 cm apart; the scene is them moved by exactly 1 cm, so each point's nearest scene point is its own
 * copy, 1 cm away: a bound just under 1 cm leaves no pair, one just over finds the shift in one update. */
START_TEST(correspondence_distance_bound)
{
    uint64_t s = 25;
    cloud model = {0}, scene = {0};
    for (int i = 0; i < 27; ++i) {
        double p[3] = {0.05 * (i % 3), 0.05 * (i / 3 % 3), 0.05 * (i / 9)}, q[3];
        for (int a = 0; a < 3; ++a)
            p[a] += grip_test_uniform(&s, -0.005f, 0.005f);
        cloud_push(&model, p, 0);
        q[0] = p[0] + 0.006;
        q[1] = p[1] + 0.008;
        q[2] = p[2];
        cloud_push(&scene, q, 0);
    }
    double I[16];
    pose_identity(I);
    grip_icp_params p = default_params();
    p.max_correspondence_distance = 0.0099;
    grip_icp_result r;
    refine(&model, &scene, &p, I, &r);
    ck_assert_uint_eq(r.stop, GRIP_ICP_STOP_FEW_CORRESPONDENCES);
    ck_assert_uint_eq(r.iterations, 0);
    p.max_correspondence_distance = 0.0101;
    refine(&model, &scene, &p, I, &r);
    ck_assert_uint_eq(r.stop, GRIP_ICP_STOP_TRANSFORM);
    ck_assert_uint_eq(r.iterations, 2);
    ck_assert_double_eq_tol(r.pose[3], 0.006, 1e-6);
    ck_assert_double_eq_tol(r.pose[7], 0.008, 1e-6);
    ck_assert_double_eq_tol(r.pose[11], 0.0, 1e-6);
    ck_assert_double_eq(r.fitness, 1.0);
    /* scored where they start: every point 1 cm from the scene, an inlier only when the inlier distance allows */
    p.max_iterations = 0;
    p.inlier_distance = 0.0101;
    refine(&model, &scene, &p, I, &r);
    ck_assert_double_eq(r.fitness, 1.0);
    ck_assert_double_eq_tol(r.rmse, 0.01, 1e-7);
    ck_assert_uint_eq(r.accepted, 0); /* rmse above max_rmse */
    p.inlier_distance = 0.0099;
    refine(&model, &scene, &p, I, &r);
    ck_assert_uint_eq(r.n_inliers, 0);
    ck_assert_double_eq(r.fitness, 0.0);
    cloud_free(&model);
    cloud_free(&scene);
}
END_TEST

START_TEST(bad_parameters_refused)
{
    grip_ctx *ctx = grip_test_ctx();
    const float pts[] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, pts, 3, &tree), GRIP_OK);
    double I[16];
    pose_identity(I);
    grip_icp_result r;
    r.iterations = 77;
    grip_icp_params p = default_params();
    p.max_correspondence_distance = 0;
    ck_assert_int_eq(grip_icp_refine(ctx, &p, pts, 3, tree, pts, I, &r), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "verify.max_correspondence_distance"));
    p = default_params();
    p.inlier_distance = NAN;
    ck_assert_int_eq(grip_icp_refine(ctx, &p, pts, 3, tree, pts, I, &r), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "verify.inlier_distance"));
    p = default_params();
    p.min_fitness = 1.5;
    ck_assert_int_eq(grip_icp_refine(ctx, &p, pts, 3, tree, pts, I, &r), GRIP_ECONFIG);
    p = default_params();
    I[3] = NAN;
    ck_assert_int_eq(grip_icp_refine(ctx, &p, pts, 3, tree, pts, I, &r), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "pose"));
    ck_assert_uint_eq(r.iterations, 77);
    grip_kdtree3d_free(tree);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(voxel_thin_keeps_the_point_nearest_each_centroid)
{
    grip_ctx *ctx = grip_test_ctx();
    /* leaf 1: voxel (0,0,0) holds points 0, 1, 5 (centroid (0.567, 0.5, 0.633), nearest: 1), (-1,0,0) point 2,
     * (0,0,1) point 4; the NaN point 3 is dropped */
    const float pts[] = {0.2f, 0.2f, 0.2f, 0.6f, 0.4f, 0.8f, -0.5f, 0.5f, 0.5f,
                         NAN,  0,    0,    0.5f, 0.5f, 1.5f, 0.9f, 0.9f, 0.9f};
    uint32_t *idx = NULL;
    size_t n = 0;
    ck_assert_int_eq(grip_voxel_thin(ctx, pts, 6, 1.0, &idx, &n), GRIP_OK);
    ck_assert_uint_eq(n, 3);
    const uint32_t want[] = {2, 1, 4}; /* z-major, then y, then x */
    ck_assert_mem_eq(idx, want, sizeof want);
    free(idx);
    /* points 0 and 1 alone are equally near their centroid: the lower index is kept */
    ck_assert_int_eq(grip_voxel_thin(ctx, pts, 2, 1.0, &idx, &n), GRIP_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(idx[0], 0);
    free(idx);
    ck_assert_int_eq(grip_voxel_thin(ctx, pts, 6, 0.0, &idx, &n), GRIP_EINVAL);
    ck_assert_int_eq(grip_voxel_thin(ctx, pts, 6, 1e-30, &idx, &n), GRIP_EINVAL); /* grid too large */
    ck_assert_int_eq(grip_voxel_thin(ctx, pts + 9, 1, 1.0, &idx, &n), GRIP_OK);   /* only a NaN point */
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(idx);
    grip_ctx_free(ctx);
}
END_TEST

/* The reference: finite points with their voxels, sorted by voxel (z, y, x) then index by qsort. */
typedef struct voxel_ref {
    int64_t v[3];
    uint32_t index;
} voxel_ref;

static int voxel_ref_order(const void *a, const void *b)
{
    const voxel_ref *x = a, *y = b;
    for (int k = 2; k >= 0; k--)
        if (x->v[k] != y->v[k])
            return x->v[k] < y->v[k] ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Against a brute-force reference on a cloud whose voxel keys span four bytes (a far cluster) with NaN rows and
 * duplicates: the same indices in the same order. */
START_TEST(voxel_thin_matches_a_sorted_reference)
{
    grip_ctx *ctx = grip_test_ctx();
    const size_t n = 20000;
    const double leaf = 0.16;
    uint64_t seed = 99;
    float *pts = grip_test_uniform_rows(&seed, n, 3, -1.0f, 1.0f);
    for (size_t i = 0; i < n; i += 97)
        pts[3 * i + 1] = NAN;
    for (size_t i = 5; i < n; i += 13) /* a far cluster: keys of four bytes */
        pts[3 * i] += 1500.0f, pts[3 * i + 2] -= 900.0f;
    for (size_t i = 200; i < n; i += 331) /* duplicates of earlier points */
        memcpy(pts + 3 * i, pts + 3 * (i - 150), 3 * sizeof *pts);
    voxel_ref *ref = malloc(n * sizeof *ref);
    uint32_t *want = malloc(n * sizeof *want);
    ck_assert(ref && want);
    size_t m = 0, w = 0;
    for (size_t i = 0; i < n; i++) {
        const float *p = pts + 3 * i;
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
            continue;
        for (int k = 0; k < 3; k++)
            ref[m].v[k] = (int64_t)floor((double)p[k] / leaf);
        ref[m++].index = (uint32_t)i;
    }
    qsort(ref, m, sizeof *ref, voxel_ref_order);
    for (size_t a = 0; a < m;) {
        size_t b = a;
        double c[3] = {0, 0, 0};
        while (b < m && !memcmp(ref[b].v, ref[a].v, sizeof ref[a].v)) {
            for (int k = 0; k < 3; k++)
                c[k] += pts[3 * (size_t)ref[b].index + k];
            b++;
        }
        double best = INFINITY;
        for (size_t e = a; e < b; e++) {
            const float *p = pts + 3 * (size_t)ref[e].index;
            double d = 0;
            for (int k = 0; k < 3; k++)
                d += (p[k] - c[k] / (double)(b - a)) * (p[k] - c[k] / (double)(b - a));
            if (d < best) {
                best = d;
                want[w] = ref[e].index;
            }
        }
        w++;
        a = b;
    }
    uint32_t *idx = NULL;
    size_t got = 0;
    ck_assert_int_eq(grip_voxel_thin(ctx, pts, n, leaf, &idx, &got), GRIP_OK);
    ck_assert_uint_gt(w, 1000);
    ck_assert_uint_eq(got, w);
    ck_assert_mem_eq(idx, want, w * sizeof *want);
    free(idx);
    free(want);
    free(ref);
    free(pts);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(rms_displacement_closed_form)
{
    cloud model = make_model();
    grip_model_spread spread;
    grip_model_spread_compute(model.xyz, model.n, &spread);
    ck_assert_uint_eq(spread.n, model.n);
    double a[16], b[16];
    true_pose(a);
    perturbed(a, 7, 0.013, b);
    double sum = 0;
    for (size_t i = 0; i < model.n; ++i) {
        double p[3] = {model.xyz[3 * i], model.xyz[3 * i + 1], model.xyz[3 * i + 2]}, pa[3], pb[3];
        pose_apply(a, p, pa);
        pose_apply(b, p, pb);
        sum += (pa[0] - pb[0]) * (pa[0] - pb[0]) + (pa[1] - pb[1]) * (pa[1] - pb[1]) +
               (pa[2] - pb[2]) * (pa[2] - pb[2]);
    }
    double want = sqrt(sum / (double)model.n);
    ck_assert_double_eq_tol(grip_pose_rms_displacement(&spread, a, b), want, 1e-12);
    ck_assert_double_eq_tol(grip_pose_rms_displacement(&spread, a, a), 0.0, 1e-12);
    cloud_free(&model);
}
END_TEST

/* Model 0: hypotheses 0 (score 0.9) and 1 (0.95) 1 mm apart, 2 (0.5) far away, 3 (0.99, rejected) beside 2;
 * model 1: hypothesis 4 at the pose of 0. Only 0 is a duplicate (of 1, the better one). */
START_TEST(duplicates_suppressed)
{
    cloud model = make_model();
    grip_model_spread spreads[2];
    grip_model_spread_compute(model.xyz, model.n, &spreads[0]);
    spreads[1] = spreads[0];
    double poses[5 * 16];
    true_pose(poses);
    perturbed(poses, 0, 0.001, poses + 16);
    perturbed(poses, 90, 0.2, poses + 32);
    perturbed(poses + 32, 0.5, 0.001, poses + 48);
    memcpy(poses + 64, poses, 16 * sizeof *poses);
    const uint32_t model_id[] = {0, 0, 0, 0, 1};
    const double scores[] = {0.9, 0.95, 0.5, 0.99, 0.9};
    uint32_t accepted[] = {1, 1, 1, 0, 1}, dup[5];
    grip_ctx *ctx = grip_test_ctx();
    ck_assert_int_eq(grip_suppress_duplicates(ctx, spreads, 2, model_id, poses, scores, 5, 0.005, 0.0, accepted, dup),
                     GRIP_OK);
    const uint32_t want_accepted[] = {0, 1, 1, 0, 1}, want_dup[] = {1, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
    ck_assert_mem_eq(accepted, want_accepted, sizeof accepted);
    ck_assert_mem_eq(dup, want_dup, sizeof dup);
    /* equal scores: the lower hypothesis is the better one */
    const double tied[] = {0.9, 0.9, 0.5, 0.99, 0.9};
    uint32_t acc2[] = {1, 1, 1, 0, 1};
    ck_assert_int_eq(grip_suppress_duplicates(ctx, spreads, 2, model_id, poses, tied, 5, 0.005, 0.0, acc2, NULL),
                     GRIP_OK);
    ck_assert_uint_eq(acc2[0], 1);
    ck_assert_uint_eq(acc2[1], 0);
    /* a pose of hypothesis 1 turned 60 degrees about an axis through the model's centre moves the points far
     * (no duplicate by duplicate_distance) but leaves the centre in place: a duplicate by center_distance */
    double turned[2 * 16], c60 = 0.5, s60 = sqrt(0.75), R[9];
    const double turn[9] = {c60, -s60, 0, s60, c60, 0, 0, 0, 1}, *m = spreads[0].mean, *p1 = poses + 16;
    memcpy(turned, p1, 16 * sizeof *turned);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            R[3 * r + c] = p1[4 * r] * turn[c] + p1[4 * r + 1] * turn[3 + c] + p1[4 * r + 2] * turn[6 + c];
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c)
            turned[4 * r + c] = R[3 * r + c];
        turned[4 * r + 3] = p1[4 * r + 3] + (p1[4 * r] - R[3 * r]) * m[0] + (p1[4 * r + 1] - R[3 * r + 1]) * m[1] +
                            (p1[4 * r + 2] - R[3 * r + 2]) * m[2];
    }
    memcpy(turned + 16, p1, 16 * sizeof *turned);
    ck_assert_double_gt(grip_pose_rms_displacement(&spreads[0], turned, turned + 16), 0.005);
    ck_assert_double_le(grip_pose_center_distance(&spreads[0], turned, turned + 16), 1e-12);
    const uint32_t same_model[] = {0, 0};
    const double turned_scores[] = {0.8, 0.95};
    for (int rule = 0; rule < 2; ++rule) {
        uint32_t acc3[] = {1, 1}, dup3[2];
        ck_assert_int_eq(grip_suppress_duplicates(ctx, spreads, 2, same_model, turned, turned_scores, 2, 0.005,
                                                  rule ? 0.005 : 0.0, acc3, dup3),
                         GRIP_OK);
        ck_assert_uint_eq(acc3[0], rule ? 0 : 1);
        ck_assert_uint_eq(dup3[0], rule ? 1 : UINT32_MAX);
        ck_assert_uint_eq(acc3[1], 1);
    }
    ck_assert_int_eq(
        grip_suppress_duplicates(ctx, spreads, 2, same_model, turned, turned_scores, 2, 0.005, -1.0, acc2, NULL),
        GRIP_EINVAL);
    /* a model id beyond the spreads is refused, nothing written */
    const uint32_t bad_id[] = {0, 0, 0, 0, 2};
    ck_assert_int_eq(grip_suppress_duplicates(ctx, spreads, 2, bad_id, poses, scores, 5, 0.005, 0.0, acc2, dup),
                     GRIP_EINVAL);
    ck_assert_uint_eq(acc2[0], 1);
    grip_ctx_free(ctx);
    cloud_free(&model);
}
END_TEST

/* The overlap test against a brute-force reference: visiting hypotheses by score, a hypothesis whose points lie
 * within d of a kept one's for more than max_overlap of them is rejected. */
static void overlaps_reference(const cloud *model, const double *poses, const double *scores, const uint32_t *in,
                               size_t h, double d, double max_overlap, uint32_t *accepted)
{
    size_t order[8], kept[8], n_kept = 0;
    for (size_t i = 0; i < h; ++i)
        order[i] = i;
    for (size_t a = 0; a < h; ++a) /* by score, ties to the lower index: insertion sort */
        for (size_t b = a; b > 0 && (scores[order[b]] > scores[order[b - 1]]); --b) {
            const size_t t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    for (size_t o = 0; o < h; ++o) {
        const size_t i = order[o];
        accepted[i] = in[i];
        if (!in[i])
            continue;
        size_t shared = 0;
        for (size_t p = 0; p < model->n; ++p) {
            double a[3], pa[3] = {model->xyz[3 * p], model->xyz[3 * p + 1], model->xyz[3 * p + 2]};
            pose_apply(poses + 16 * i, pa, a);
            int near = 0;
            for (size_t j = 0; j < n_kept && !near; ++j)
                for (size_t q = 0; q < model->n && !near; ++q) {
                    double b[3], pb[3] = {model->xyz[3 * q], model->xyz[3 * q + 1], model->xyz[3 * q + 2]};
                    pose_apply(poses + 16 * kept[j], pb, b);
                    near = (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                               (a[2] - b[2]) * (a[2] - b[2]) <=
                           d * d;
                }
            shared += near;
        }
        if ((double)shared > max_overlap * (double)model->n)
            accepted[i] = 0;
        else
            kept[n_kept++] = i;
    }
}

/* Six poses of the box (two models of the same points): the true one, it shifted 6 cm along its length, turned 90
 * degrees about its vertical axis, moved 1 m away, nudged 1 mm, and one rejected before. */
START_TEST(overlaps_suppressed)
{
    cloud model = make_model();
    const grip_model_points points[2] = {{model.xyz, model.n, NULL}, {model.xyz, model.n, NULL}};
    grip_kdtree3d *tree = NULL;
    grip_error_note note = {GRIP_OK};
    ck_assert_int_eq(grip_kdtree3d_build_noted(&note, model.xyz, model.n, &tree), GRIP_OK);
    const grip_model_points with_trees[2] = {{model.xyz, model.n, tree}, {model.xyz, model.n, tree}};
    double poses[6 * 16], shift[16], turn[16];
    const double z[3] = {0, 0, 1}, no_t[3] = {0, 0, 0}, along[3] = {0.06, 0, 0};
    true_pose(poses);
    pose_from_axis_angle(z, 0, along, shift);
    pose_mul(poses, shift, poses + 16);
    pose_from_axis_angle(z, PI / 2, no_t, turn);
    pose_mul(poses, turn, poses + 32);
    perturbed(poses, 0, 1.0, poses + 48);
    perturbed(poses, 0, 0.001, poses + 64);
    memcpy(poses + 80, poses, 16 * sizeof *poses);
    const uint32_t model_id[] = {0, 1, 0, 1, 1, 0}, in[] = {1, 1, 1, 1, 1, 0};
    const double scores[] = {0.9, 0.95, 0.8, 0.7, 0.85, 0.99};
    grip_ctx *ctx = grip_test_ctx(), *ctx4 = grip_test_ctx_threads(4);
    int rejected_somewhere = 0, kept_a_neighbour = 0;
    for (double max_overlap = 0.0; max_overlap <= 1.0; max_overlap += 0.25) {
        uint32_t accepted[6], want[6], of[6], accepted4[6], of4[6];
        memcpy(accepted, in, sizeof in);
        memcpy(accepted4, in, sizeof in);
        overlaps_reference(&model, poses, scores, in, 6, 0.005, max_overlap, want);
        ck_assert_int_eq(
            grip_suppress_overlaps(ctx, points, 2, model_id, poses, scores, 6, 0.005, max_overlap, accepted, of),
            GRIP_OK);
        ck_assert_mem_eq(accepted, want, sizeof want);
        /* the points are tested on the context's threads: the same answer on 4 */
        ck_assert_int_eq(
            grip_suppress_overlaps(ctx4, points, 2, model_id, poses, scores, 6, 0.005, max_overlap, accepted4, of4),
            GRIP_OK);
        ck_assert_mem_eq(accepted4, want, sizeof want);
        ck_assert_mem_eq(of4, of, sizeof of);
        /* with the caller's trees (a verify stage's cached ones) in place of the call's own: the same answer */
        uint32_t accepted_t[6], of_t[6];
        memcpy(accepted_t, in, sizeof in);
        ck_assert_int_eq(grip_suppress_overlaps(ctx4, with_trees, 2, model_id, poses, scores, 6, 0.005, max_overlap,
                                                accepted_t, of_t),
                         GRIP_OK);
        ck_assert_mem_eq(accepted_t, want, sizeof want);
        ck_assert_mem_eq(of_t, of, sizeof of);
        for (int i = 0; i < 6; i++) {
            ck_assert(of[i] == UINT32_MAX || (!accepted[i] && in[i] && accepted[of[i]]));
            rejected_somewhere += in[i] && !accepted[i];
        }
        kept_a_neighbour += accepted[0] && accepted[1];
        if (max_overlap >= 1.0)
            ck_assert_mem_eq(accepted, in, sizeof in);
    }
    ck_assert_int_gt(rejected_somewhere, 0); /* the cases decide something both ways */
    ck_assert_int_gt(kept_a_neighbour, 0);
    /* the 1 mm nudge shares nearly all its space: rejected at any bound below 1, as the duplicate of the shift's
     * better neighbour or of the true pose */
    uint32_t acc[6], of[6];
    memcpy(acc, in, sizeof in);
    ck_assert_int_eq(grip_suppress_overlaps(ctx, points, 2, model_id, poses, scores, 6, 0.005, 0.9, acc, of), GRIP_OK);
    ck_assert_uint_eq(acc[4], 0);
    ck_assert_uint_eq(acc[3], 1); /* a metre away */
    /* bad arguments: refused, nothing written */
    memcpy(acc, in, sizeof in);
    ck_assert_int_eq(grip_suppress_overlaps(ctx, points, 2, model_id, poses, scores, 6, 0.0, 0.5, acc, NULL),
                     GRIP_EINVAL);
    ck_assert_int_eq(grip_suppress_overlaps(ctx, points, 2, model_id, poses, scores, 6, 0.005, 1.5, acc, NULL),
                     GRIP_EINVAL);
    const uint32_t bad_id[] = {0, 1, 0, 2, 1, 0};
    ck_assert_int_eq(grip_suppress_overlaps(ctx, points, 2, bad_id, poses, scores, 6, 0.005, 0.5, acc, of),
                     GRIP_EINVAL);
    ck_assert_mem_eq(acc, in, sizeof in);
    grip_ctx_free(ctx);
    grip_ctx_free(ctx4);
    grip_kdtree3d_free(tree);
    cloud_free(&model);
}
END_TEST

/* Scene normals of make_scene's points: each face's outward normal under the pose, the table's +z. */
static float *scene_normals(const cloud *scene, const double T[16])
{
    float *n = malloc(scene->n * 3 * sizeof *n);
    ck_assert_ptr_nonnull(n);
    for (size_t i = 0; i < scene->n; ++i) {
        const int f = scene->face[i];
        for (int r = 0; r < 3; ++r)
            n[3 * i + r] = f < 0 ? (r == 2 ? 1.0f : 0.0f)
                                 : (float)(T[4 * r] * FACE_NORMAL[f][0] + T[4 * r + 1] * FACE_NORMAL[f][1] +
                                           T[4 * r + 2] * FACE_NORMAL[f][2]);
    }
    return n;
}

/* The model's normals: its faces' outward normals (model coordinates). */
static float *model_normals(const cloud *model)
{
    float *n = malloc(model->n * 3 * sizeof *n);
    ck_assert_ptr_nonnull(n);
    for (size_t i = 0; i < model->n; ++i)
        for (int r = 0; r < 3; ++r)
            n[3 * i + r] = (float)FACE_NORMAL[model->face[i]][r];
    return n;
}

static void refine_scene(const cloud *model, const float *mnormals, const cloud *scene, const float *snormals,
                         const double viewpoint[3], const grip_icp_params *p, const double init[16],
                         grip_icp_result *r)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, scene->xyz, scene->n, &tree), GRIP_OK);
    const grip_icp_model m = {model->xyz, model->n, mnormals, 3};
    const grip_icp_scene sc = {tree, scene->xyz, snormals, 3, {viewpoint[0], viewpoint[1], viewpoint[2]}};
    grip_status st = grip_icp_refine_scene(ctx, p, &m, &sc, init, r);
    ck_assert_msg(st == GRIP_OK, "%s", ctx->last_error);
    grip_kdtree3d_free(tree);
    grip_ctx_free(ctx);
}

START_TEST(point_to_plane_converges)
{
    uint64_t s = 31;
    double truth[16], init[16];
    true_pose(truth);
    cloud model = make_model(), scene = make_scene(&s, truth, 20000, 0.0002, 0);
    float *sn = scene_normals(&scene, truth);
    const double origin[3] = {0, 0, 0};
    const double starts[][2] = {{4, 0.02}, {6, 0.01}, {2, 0.03}};
    for (int i = 0; i < 3; ++i) {
        perturbed(truth, starts[i][0], starts[i][1], init);
        grip_icp_params p = default_params();
        grip_icp_result plane, point;
        refine_scene(&model, NULL, &scene, sn, origin, &p, init, &point);
        p.metric = GRIP_ICP_POINT_TO_PLANE;
        refine_scene(&model, NULL, &scene, sn, origin, &p, init, &plane);
        double rot = rotation_error_deg(plane.pose, truth), tr = translation_error(plane.pose, truth);
        ck_assert_msg(rot < 0.5 && tr < 0.001, "start %d: %.3f deg %.2f mm after %u iterations (stop %u)", i, rot,
                      tr * 1e3, plane.iterations, plane.stop);
        ck_assert_uint_eq(plane.accepted, 1);
        ck_assert_msg(plane.iterations < point.iterations, "start %d: point-to-plane %u iterations, point-to-point %u",
                      i, plane.iterations, point.iterations);
    }
    free(sn);
    cloud_free(&model);
    cloud_free(&scene);
}
END_TEST

/* A flat model on a flat scene: point-to-plane sees only the normal's direction and two tilts; the other three
 * motions are left at 0 (no NaN), and the model ends on the plane. */
START_TEST(point_to_plane_plane_only_scene)
{
    cloud model = {0}, scene = {0};
    for (int i = 0; i < 40; ++i)
        for (int j = 0; j < 40; ++j) {
            const double p[3] = {0.0025 * i, 0.0025 * j, 0.0}, q[3] = {0.002 * i - 0.02, 0.002 * j - 0.02, 0.0};
            cloud_push(&model, p, 0);
            cloud_push(&scene, q, -1);
        }
    double I[16], init[16];
    pose_identity(I);
    float *sn = scene_normals(&scene, I);
    const double axis[3] = {1, 0, 0}, t[3] = {0.001, 0.002, 0.004};
    pose_from_axis_angle(axis, 2 * PI / 180, t, init);
    grip_icp_params p = default_params();
    p.metric = GRIP_ICP_POINT_TO_PLANE;
    grip_icp_result r;
    const double origin[3] = {0, 0, 1};
    refine_scene(&model, NULL, &scene, sn, origin, &p, init, &r);
    for (int k = 0; k < 16; ++k)
        ck_assert(isfinite(r.pose[k]));
    ck_assert_double_lt(fabs(r.pose[11]), 1e-6);       /* on the plane */
    ck_assert_double_lt(fabs(r.pose[9]), 1e-6);        /* tilt removed */
    ck_assert_double_eq_tol(r.pose[3], init[3], 1e-9); /* the free motions (x, y, turn about z) untouched */
    ck_assert_double_lt(fabs(r.pose[1]), 1e-9);
    ck_assert_uint_ne(r.stop, GRIP_ICP_STOP_DEGENERATE);
    free(sn);
    cloud_free(&model);
    cloud_free(&scene);
}
END_TEST

START_TEST(point_to_plane_needs_scene_normals)
{
    grip_ctx *ctx = grip_test_ctx();
    const float pts[] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, pts, 3, &tree), GRIP_OK);
    double I[16];
    pose_identity(I);
    grip_icp_params p = default_params();
    p.metric = GRIP_ICP_POINT_TO_PLANE;
    grip_icp_result r;
    ck_assert_int_eq(grip_icp_refine(ctx, &p, pts, 3, tree, pts, I, &r), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "verify.metric"));
    p.metric = 7;
    ck_assert_int_eq(grip_icp_refine(ctx, &p, pts, 3, tree, pts, I, &r), GRIP_ECONFIG);
    p = default_params();
    p.final_correspondence_distance = 2 * p.max_correspondence_distance;
    ck_assert_int_eq(grip_icp_refine(ctx, &p, pts, 3, tree, pts, I, &r), GRIP_ECONFIG);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "verify.final_correspondence_distance"));
    grip_kdtree3d_free(tree);
    grip_ctx_free(ctx);
}
END_TEST

/* The bound shrinks geometrically from max to final; off (0) it stays max. With a bound ending below the gap to
 * a misplaced copy, a schedule still converges where the wide start is needed. */
START_TEST(correspondence_schedule)
{
    grip_icp_params p = default_params();
    p.max_iterations = 5;
    p.max_correspondence_distance = 0.016;
    ck_assert_double_eq(grip_icp_correspondence_distance(&p, 0), 0.016);
    ck_assert_double_eq(grip_icp_correspondence_distance(&p, 4), 0.016);
    p.final_correspondence_distance = 0.001;
    ck_assert_double_eq(grip_icp_correspondence_distance(&p, 0), 0.016);
    ck_assert_double_eq_tol(grip_icp_correspondence_distance(&p, 1), 0.008, 1e-15);
    ck_assert_double_eq_tol(grip_icp_correspondence_distance(&p, 2), 0.004, 1e-15);
    ck_assert_double_eq(grip_icp_correspondence_distance(&p, 4), 0.001);
    ck_assert_double_eq(grip_icp_correspondence_distance(&p, 9), 0.001);
    p.max_iterations = 1;
    ck_assert_double_eq(grip_icp_correspondence_distance(&p, 0), 0.001);
    /* a start 2 cm off needs the wide bound; the schedule ends at 2 mm and still reaches the truth */
    uint64_t s = 32;
    double truth[16], init[16];
    true_pose(truth);
    cloud model = make_model(), scene = make_scene(&s, truth, 20000, 0.0002, 0);
    perturbed(truth, 4, 0.02, init);
    p = default_params();
    p.final_correspondence_distance = 0.002;
    grip_icp_result r;
    refine(&model, &scene, &p, init, &r);
    ck_assert_double_lt(rotation_error_deg(r.pose, truth), 0.5);
    ck_assert_double_lt(translation_error(r.pose, truth), 0.001);
    ck_assert_uint_eq(r.accepted, 1);
    p = default_params();
    p.max_correspondence_distance = 0.002; /* the final bound from the start: too tight to pull the model in */
    refine(&model, &scene, &p, init, &r);
    ck_assert_double_gt(translation_error(r.pose, truth), 0.002);
    cloud_free(&model);
    cloud_free(&scene);
}
END_TEST

/* Only the camera-facing faces are in the scene: over the whole model the fitness is about the visible fraction,
 * over the side facing the camera it is close to 1, and the points scored are that side. */
START_TEST(visible_fitness)
{
    uint64_t s = 33;
    double truth[16], init[16];
    true_pose(truth);
    cloud model = make_model(), scene = make_scene(&s, truth, 12000, 0.0002, 1);
    float *mn = model_normals(&model);
    size_t visible = 0;
    for (size_t i = 0; i < model.n; ++i)
        visible += face_visible(truth, model.face[i]);
    perturbed(truth, 3, 0.01, init);
    grip_icp_params p = default_params();
    p.max_correspondence_distance = 0.02;
    p.min_fitness = 0.9;
    grip_icp_result whole, side;
    refine_scene(&model, NULL, &scene, NULL, CAMERA, &p, init, &whole);
    refine_scene(&model, mn, &scene, NULL, CAMERA, &p, init, &side);
    ck_assert_uint_eq(whole.n_points, model.n);
    ck_assert_uint_eq(whole.accepted, 0);
    ck_assert_uint_eq(side.n_points, visible); /* the faces facing the camera, exactly */
    ck_assert_msg(side.fitness > 0.97, "visible fitness %.3f", side.fitness);
    ck_assert_uint_eq(side.accepted, 1);
    ck_assert_mem_eq(side.pose, whole.pose, sizeof side.pose); /* scoring does not change the refinement */
    free(mn);
    cloud_free(&model);
    cloud_free(&scene);
}
END_TEST

/* The icp stage (CPU) created from kv, run on n hypotheses of one model at poses[i] with votes[i], the clouds
 * carrying the normals mnormals and snormals (n x 3; NULL: none); returns verify's status, its verdicts in *out
 * (the caller releases them) and the last error in err (GRIP_ERROR_TEXT_MAX bytes). */
static grip_status stage_verify(const grip_kv *kv, uint32_t n_kv, const cloud *model, const float *mnormals,
                                const cloud *scene, const float *snormals, const double (*poses)[16],
                                const float *votes, uint32_t n, grip_verdicts **out, char *err)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_stage *st = NULL;
    ck_assert_int_eq(grip_stage_create(&grip_verify_icp, ctx, kv, n_kv, &st), GRIP_OK);
    grip_cloud mc, sc;
    memset(&mc, 0, sizeof mc);
    memset(&sc, 0, sizeof sc);
    mc.struct_size = sc.struct_size = sizeof mc;
    mc.width = (uint32_t)model->n;
    sc.width = (uint32_t)scene->n;
    mc.height = sc.height = 1;
    const grip_array ma = {sizeof(grip_array), GRIP_F32, GRIP_MEM_HOST, -1, model->n, 3, model->xyz};
    const grip_array sa = {sizeof(grip_array), GRIP_F32, GRIP_MEM_HOST, -1, scene->n, 3, scene->xyz};
    mc.xyz = ma;
    sc.xyz = sa;
    if (mnormals)
        mc.normals = (grip_array){sizeof(grip_array), GRIP_F32, GRIP_MEM_HOST, -1, model->n, 3, (void *)mnormals};
    if (snormals)
        sc.normals = (grip_array){sizeof(grip_array), GRIP_F32, GRIP_MEM_HOST, -1, scene->n, 3, (void *)snormals};
    const grip_view mv = {sizeof(grip_view), &mc, NULL}, sv = {sizeof(grip_view), &sc, NULL};
    grip_hypothesis *items = calloc(n, sizeof *items);
    ck_assert_ptr_nonnull(items);
    for (uint32_t i = 0; i < n; ++i) {
        items[i].struct_size = sizeof items[i];
        items[i].votes = votes[i];
        for (int k = 0; k < 16; ++k)
            items[i].pose[k] = (float)poses[i][k];
    }
    grip_hypotheses h = {sizeof h, n, sizeof(grip_hypothesis), items, NULL};
    grip_verdicts *v = NULL;
    grip_status status = grip_verify_icp.verify(st, &mv, 1, &sv, &h, &v);
    snprintf(err, GRIP_ERROR_TEXT_MAX, "%s", ctx->last_error);
    for (uint32_t i = 0; v && i < n; ++i) {
        ck_assert_uint_eq(v->items[i].hypothesis, i);
        ck_assert_uint_eq(v->items[i].struct_size, sizeof(grip_verdict));
        /* accepted and reason agree: a reason is given exactly for a rejection */
        ck_assert_uint_eq(v->items[i].accepted, v->items[i].reason == GRIP_VERDICT_ACCEPTED);
    }
    free(items);
    grip_stage_destroy(st);
    grip_ctx_free(ctx);
    *out = v;
    return status;
}

/* stage_verify on clouds without normals, which must succeed with n verdicts. */
static grip_verdicts *run_stage(const grip_kv *kv, uint32_t n_kv, const cloud *model, const cloud *scene,
                                const double (*poses)[16], const float *votes, uint32_t n)
{
    grip_verdicts *v = NULL;
    char err[GRIP_ERROR_TEXT_MAX];
    grip_status s = stage_verify(kv, n_kv, model, NULL, scene, NULL, poses, votes, n, &v, err);
    ck_assert_msg(s == GRIP_OK, "%s", err);
    ck_assert_uint_eq(v->count, n);
    return v;
}

/* The stage refines the max_hypotheses with the most votes and rejects the rest untouched, saying so; of the two
 * it keeps, both on the one object, one is rejected as a duplicate. */
START_TEST(stage_caps_hypotheses)
{
    uint64_t s = 34;
    double truth[16];
    true_pose(truth);
    cloud model = make_model(), scene = make_scene(&s, truth, 20000, 0.0002, 0);
    const grip_kv kv[] = {{"device", "cpu"},
                          {"max_hypotheses", "2"},
                          {"max_iterations", "30"},
                          {"max_correspondence_distance", "0.05"},
                          {"inlier_distance", "0.003"}};
    double poses[4][16];
    const float votes[4] = {3, 9, NAN, 7};
    for (int i = 0; i < 4; ++i)
        perturbed(truth, 2 + i, 0.005, poses[i]);
    grip_verdicts *v = run_stage(kv, 5, &model, &scene, (const double(*)[16])poses, votes, 4);
    for (uint32_t i = 0; i < 4; ++i) {
        const grip_verdict *vd = &v->items[i];
        const int kept = i == 1 || i == 3; /* the two most votes; NaN ranks last */
        ck_assert_msg(kept ? vd->iterations > 0 : vd->iterations == 0, "hypothesis %u: %u iterations", i,
                      vd->iterations);
        if (!kept) {
            ck_assert_uint_eq(vd->accepted, 0);
            ck_assert_uint_eq(vd->reason, GRIP_VERDICT_CAP);
            for (int k = 0; k < 16; ++k)
                ck_assert_float_eq(vd->pose[k], (float)poses[i][k]);
        }
    }
    ck_assert_uint_eq(v->items[1].accepted + v->items[3].accepted, 1); /* the same object twice: one duplicate */
    const grip_verdict *dup = v->items[1].accepted ? &v->items[3] : &v->items[1];
    ck_assert_uint_eq(dup->reason, GRIP_VERDICT_DUPLICATE);
    v->release(v);
    cloud_free(&model);
    cloud_free(&scene);
}
END_TEST

/* Each of ICP's own tests names itself: a pose in the air (no pair: fitness 0), a pose ICP must move farther than
 * max_drift, and a true pose whose noise is above max_rmse. */
START_TEST(stage_reports_reasons)
{
    uint64_t s = 35;
    double truth[16], poses[2][16];
    true_pose(truth);
    cloud model = make_model(), scene = make_scene(&s, truth, 20000, 0.0002, 0);
    const double z[3] = {0, 0, 1}, up[3] = {0, 0, 1.0};
    pose_from_axis_angle(z, 0, up, poses[0]); /* in the air above everything */
    perturbed(truth, 3, 0.005, poses[1]);     /* near the truth: accepted by default */
    const float votes[2] = {5, 4};
    const grip_kv base[] = {{"device", "cpu"}, {"max_correspondence_distance", "0.05"}, {"inlier_distance", "0.003"}};
    grip_verdicts *v = run_stage(base, 3, &model, &scene, (const double(*)[16])poses, votes, 2);
    ck_assert_uint_eq(v->items[0].reason, GRIP_VERDICT_FITNESS);
    ck_assert_uint_eq(v->items[1].reason, GRIP_VERDICT_ACCEPTED);
    v->release(v);
    const grip_kv drift[] = {{"device", "cpu"},
                             {"max_correspondence_distance", "0.05"},
                             {"inlier_distance", "0.003"},
                             {"max_drift", "1e-6"}};
    v = run_stage(drift, 4, &model, &scene, (const double(*)[16])poses + 1, votes, 1);
    ck_assert_uint_eq(v->items[0].reason, GRIP_VERDICT_DRIFT);
    v->release(v);
    const grip_kv rmse[] = {
        {"device", "cpu"}, {"max_correspondence_distance", "0.05"}, {"inlier_distance", "0.003"}, {"max_rmse", "1e-6"}};
    v = run_stage(rmse, 4, &model, &scene, (const double(*)[16])poses + 1, votes, 1);
    ck_assert_msg(v->items[0].rmse > 1e-6f, "rmse %g", v->items[0].rmse);
    ck_assert_uint_eq(v->items[0].reason, GRIP_VERDICT_RMSE);
    v->release(v);
    cloud_free(&model);
    cloud_free(&scene);
}
END_TEST

/* The stage's `normals` key on the clouds' own normals, point to plane: normals of uneven lengths (0.5 to 3.5)
 * are rescaled to unit length (auto, file), so the refined pose is the one unit normals give, within float
 * rounding; `file` on clouds without normals is a config error naming verify.normals. */
START_TEST(stage_normals_choice)
{
    uint64_t s = 36;
    double truth[16], init[16];
    true_pose(truth);
    cloud model = make_model(), scene = make_scene(&s, truth, 20000, 0.0002, 0);
    perturbed(truth, 4, 0.004, init);
    float *sn = scene_normals(&scene, truth), *mn = model_normals(&model);
    float *uneven = malloc(scene.n * 3 * sizeof *uneven);
    ck_assert_ptr_nonnull(uneven);
    for (size_t i = 0; i < scene.n; ++i) {
        const float len = 0.5f + 3.0f * (float)(i % 7) / 6.0f;
        for (int c = 0; c < 3; ++c)
            uneven[3 * i + c] = len * sn[3 * i + c];
    }
    const float votes[1] = {5};
    const char *choices[] = {"auto", "file"};
    grip_verdicts *unit = NULL, *v = NULL;
    char err[GRIP_ERROR_TEXT_MAX];
    for (int c = 0; c < 2; ++c) {
        const grip_kv kv[] = {{"device", "cpu"},
                              {"metric", "point_to_plane"},
                              {"max_correspondence_distance", "0.05"},
                              {"inlier_distance", "0.003"},
                              {"normals", choices[c]}};
        const double(*poses)[16] = (const double(*)[16])init;
        if (!unit)
            ck_assert_msg(stage_verify(kv, 5, &model, mn, &scene, sn, poses, votes, 1, &unit, err) == GRIP_OK, "%s",
                          err);
        ck_assert_msg(stage_verify(kv, 5, &model, mn, &scene, uneven, poses, votes, 1, &v, err) == GRIP_OK, "%s",
                      err);
        ck_assert_uint_eq(unit->items[0].accepted, 1);
        ck_assert_uint_eq(v->items[0].accepted, 1);
        for (int k = 0; k < 16; ++k)
            ck_assert_float_eq_tol(v->items[0].pose[k], unit->items[0].pose[k], 1e-5f);
        v->release(v);
    }
    const grip_kv file[] = {{"device", "cpu"}, {"metric", "point_to_plane"}, {"normals", "file"}};
    ck_assert_int_eq(
        stage_verify(file, 3, &model, NULL, &scene, NULL, (const double(*)[16])init, votes, 1, &v, err), GRIP_ECONFIG);
    ck_assert_ptr_null(v);
    ck_assert_msg(strstr(err, "verify.normals = file") != NULL, "%s", err);
    unit->release(unit);
    free(uneven);
    free(sn);
    free(mn);
    cloud_free(&model);
    cloud_free(&scene);
}
END_TEST

static Suite *icp_suite(void)
{
    Suite *s = suite_create("icp");
    TCase *tc = tcase_create("verify");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, converges_to_truth_low_noise);
    tcase_add_test(tc, overlaps_suppressed);
    tcase_add_test(tc, voxel_thinned_model_converges);
    tcase_add_test(tc, far_hypothesis_rejected);
    tcase_add_test(tc, partial_overlap_fitness_is_visible_fraction);
    tcase_add_test(tc, stop_rules);
    tcase_add_test(tc, correspondence_distance_bound);
    tcase_add_test(tc, bad_parameters_refused);
    tcase_add_test(tc, voxel_thin_keeps_the_point_nearest_each_centroid);
    tcase_add_test(tc, voxel_thin_matches_a_sorted_reference);
    tcase_add_test(tc, rms_displacement_closed_form);
    tcase_add_test(tc, duplicates_suppressed);
    tcase_add_test(tc, point_to_plane_converges);
    tcase_add_test(tc, stage_normals_choice);
    tcase_add_test(tc, point_to_plane_plane_only_scene);
    tcase_add_test(tc, point_to_plane_needs_scene_normals);
    tcase_add_test(tc, correspondence_schedule);
    tcase_add_test(tc, visible_fitness);
    tcase_add_test(tc, stage_caps_hypotheses);
    tcase_add_test(tc, stage_reports_reasons);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return grip_test_run(icp_suite());
}
