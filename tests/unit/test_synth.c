/* test_synth.c -- synthetic scenes: the same seed gives the same bytes, every scene point lies on the surface it
 * is labelled with (exactly without noise, within 4 sigma along its ray with noise) with nothing in front of it,
 * objects stand apart on the table, wholly in view and visible enough, models lie on the objects' surfaces with
 * outward unit normals, view-based models lie on them too in plain view of the camera they were seen from, and
 * the pose error is a mean distance in metres. Surfaces are checked through the catalogue's signed fields and the
 * published poses, not through the ray caster. */
#define _POSIX_C_SOURCE 200809L
#include "test_support.h"
#include "host_util.h"
#include "synth/synth.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PI 3.14159265358979323846

static void generate_ok(const synth_params *p, synth_scene *s)
{
    char err[256] = "";
    int rc = synth_generate(p, s, err, sizeof err);
    ck_assert_msg(rc == 0, "synth_generate: %s", err);
}

static void small_params(synth_params *p, uint64_t seed)
{
    synth_params_default(p);
    p->seed = seed;
    p->width = 320;
    p->height = 240;
}

/* q = T^-1 p for a rigid row-major T. */
static void pose_unapply(const double T[16], const double p[3], double q[3])
{
    double d[3] = {p[0] - T[3], p[1] - T[7], p[2] - T[11]};
    for (int c = 0; c < 3; c++)
        q[c] = T[c] * d[0] + T[4 + c] * d[1] + T[8 + c] * d[2];
}

static void pose_apply(const double T[16], const double p[3], double q[3])
{
    for (int r = 0; r < 3; r++)
        q[r] = T[4 * r] * p[0] + T[4 * r + 1] * p[1] + T[4 * r + 2] * p[2] + T[4 * r + 3];
}

/* Signed field of object i at the camera-frame point p, through its published pose. */
static double object_field(const synth_scene *s, uint32_t i, const double p[3])
{
    double q[3];
    pose_unapply(s->poses[i], p, q);
    return synth_kind_field(s->kind_of_model[s->model_of_object[i]], q);
}

/* Distance from the camera-frame point p to the table-top rectangle. */
static double table_distance(const synth_scene *s, const double p[3])
{
    double q[3];
    pose_unapply(s->table_pose, p, q);
    double dx = fmax(fabs(q[0]) - 0.5 * s->table_size[0], 0), dy = fmax(fabs(q[1]) - 0.5 * s->table_size[1], 0);
    return sqrt(q[2] * q[2] + dx * dx + dy * dy);
}

/* |field| of the surface pixel i is labelled with. */
static double labelled_distance(const synth_scene *s, size_t i)
{
    double p[3] = {s->scene.xyz[3 * i], s->scene.xyz[3 * i + 1], s->scene.xyz[3 * i + 2]};
    int32_t label = s->labels[i];
    return label == 0 ? table_distance(s, p) : fabs(object_field(s, (uint32_t)label - 1, p));
}

/* How many points between the camera and pixel i's point lie inside an object (0 when the first hit is the one
 * recorded). */
static int objects_in_front(const synth_scene *s, size_t i)
{
    static const double along[] = {0.25, 0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999};
    int inside = 0;
    double len = sqrt(s->scene.xyz[3 * i] * s->scene.xyz[3 * i] + s->scene.xyz[3 * i + 1] * s->scene.xyz[3 * i + 1] +
                      s->scene.xyz[3 * i + 2] * s->scene.xyz[3 * i + 2]);
    for (size_t a = 0; a < sizeof along / sizeof along[0]; a++) {
        if ((1 - along[a]) * len < 1e-4) /* within 0.1 mm of the surface the field's own rounding dominates */
            continue;
        double p[3];
        for (int k = 0; k < 3; k++)
            p[k] = along[a] * s->scene.xyz[3 * i + k];
        for (uint32_t o = 0; o < s->n_objects; o++)
            inside += object_field(s, o, p) <= 0;
    }
    return inside;
}

START_TEST(defaults_give_a_vga_kinect_like_scene)
{
    synth_params p;
    synth_params_default(&p);
    synth_scene s;
    double t0 = host_now_ms();
    generate_ok(&p, &s);
    double ms = host_now_ms() - t0;
    printf("synth: default 640x480 scene, %u objects, in %.1f ms\n", s.n_objects, ms);
    ck_assert_uint_eq(s.scene.width, 640);
    ck_assert_uint_eq(s.scene.height, 480);
    ck_assert_uint_eq(s.scene.n, 640 * 480);
    ck_assert_ptr_nonnull(s.scene.rgb);
    ck_assert_uint_eq(s.n_objects, 4);
    ck_assert_uint_eq(s.n_models, synth_kind_count());
    for (uint32_t m = 0; m < s.n_models; m++)
        for (uint32_t k = m + 1; k < s.n_models; k++)
            ck_assert_str_ne(s.names[m], s.names[k]);
    size_t finite = host_cloud_count_finite(&s.scene), table = 0, labelled = 0;
    for (size_t i = 0; i < s.scene.n; i++) {
        labelled += s.labels[i] >= 0;
        table += s.labels[i] == 0;
    }
    ck_assert_uint_eq(labelled, finite);
    printf("synth: %zu finite points (%zu table)\n", finite, table);
    ck_assert_uint_gt(finite, s.scene.n / 2);
    ck_assert_uint_lt(finite, s.scene.n);
    /* the camera is 0.8 m from the table centre, which projects to the principal point */
    size_t centre = 239 * 640 + 319;
    ck_assert(fabs(s.scene.xyz[3 * centre + 2] - 0.8) < 0.01 || s.labels[centre] > 0);
    synth_scene_free(&s);
    ck_assert_ptr_null(s.scene.xyz);
}
END_TEST

START_TEST(same_seed_same_bytes_other_seed_other_scene)
{
    synth_params p;
    small_params(&p, 7);
    synth_scene a, b, c;
    generate_ok(&p, &a);
    generate_ok(&p, &b);
    p.seed = 8;
    generate_ok(&p, &c);
    size_t n = a.scene.n;
    ck_assert_int_eq(memcmp(a.scene.xyz, b.scene.xyz, 3 * n * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(a.scene.rgb, b.scene.rgb, 3 * n), 0);
    ck_assert_int_eq(memcmp(a.labels, b.labels, n * sizeof *a.labels), 0);
    ck_assert_int_eq(memcmp(a.poses, b.poses, a.n_objects * sizeof *a.poses), 0);
    ck_assert_int_eq(memcmp(a.model_of_object, b.model_of_object, a.n_objects * sizeof *a.model_of_object), 0);
    for (uint32_t m = 0; m < a.n_models; m++) {
        ck_assert_uint_eq(a.models[m].n, b.models[m].n);
        ck_assert_int_eq(memcmp(a.models[m].xyz, b.models[m].xyz, 3 * a.models[m].n * sizeof(float)), 0);
        ck_assert_int_eq(memcmp(a.models[m].normals, b.models[m].normals, 3 * a.models[m].n * sizeof(float)), 0);
    }
    ck_assert_int_ne(memcmp(a.scene.xyz, c.scene.xyz, 3 * n * sizeof(float)), 0);
    ck_assert_int_ne(memcmp(a.poses, c.poses, a.n_objects * sizeof *a.poses), 0);
    synth_scene_free(&a);
    synth_scene_free(&b);
    synth_scene_free(&c);
}
END_TEST

/* Without noise every finite point lies on its labelled surface (float storage is the only error), nothing lies in
 * front of it, and NaN means nothing was hit. */
static void check_exact(const synth_params *p)
{
    synth_scene s;
    generate_ok(p, &s);
    double worst = 0;
    size_t worst_at = 0, nan_mismatch = 0, occluded = 0;
    for (size_t i = 0; i < s.scene.n; i++) {
        const float *x = &s.scene.xyz[3 * i];
        if (s.labels[i] < 0) {
            nan_mismatch += !(isnan(x[0]) && isnan(x[1]) && isnan(x[2]));
            continue;
        }
        nan_mismatch += !(isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2]));
        double d = labelled_distance(&s, i);
        if (!(d <= worst)) {
            worst = d;
            worst_at = i;
        }
        if (i % 7 == 0)
            occluded += objects_in_front(&s, i) > 0;
    }
    printf("synth: seed %llu %ux%u noise 0: worst distance to the labelled surface %.2e m\n",
           (unsigned long long)p->seed, p->width, p->height, worst);
    ck_assert_uint_eq(nan_mismatch, 0);
    ck_assert_msg(worst <= 1e-5, "seed %llu pixel %zu (label %d) is %g m off its surface",
                  (unsigned long long)p->seed, worst_at, s.labels[worst_at], worst);
    ck_assert_uint_eq(occluded, 0);
    synth_scene_free(&s);
}

START_TEST(exact_points_lie_on_their_surfaces)
{
    synth_params p;
    synth_params_default(&p);
    p.noise_sigma = 0;
    check_exact(&p);
    for (uint64_t seed = 2; seed <= 4; seed++) {
        small_params(&p, seed);
        p.noise_sigma = 0;
        p.n_objects = 5;
        p.camera_distance = 0.9;
        check_exact(&p);
    }
}
END_TEST

START_TEST(noise_moves_points_along_their_rays_within_4_sigma)
{
    const double sigma = 0.001;
    synth_params p;
    small_params(&p, 11);
    p.noise_sigma = 0;
    synth_scene clean, noisy;
    generate_ok(&p, &clean);
    p.noise_sigma = sigma;
    generate_ok(&p, &noisy);
    ck_assert_int_eq(memcmp(clean.poses, noisy.poses, clean.n_objects * sizeof *clean.poses), 0);
    ck_assert_int_eq(memcmp(clean.labels, noisy.labels, clean.scene.n * sizeof *clean.labels), 0);
    double sum = 0, sum2 = 0, off_ray = 0, widest = 0, beyond = -INFINITY;
    size_t n = 0, finite_mismatch = 0;
    for (size_t i = 0; i < clean.scene.n; i++) {
        const float *c = &clean.scene.xyz[3 * i], *q = &noisy.scene.xyz[3 * i];
        finite_mismatch += (isfinite(c[2]) != 0) != (isfinite(q[2]) != 0);
        if (!isfinite(c[2]))
            continue;
        /* same ray: the same x/z and y/z */
        off_ray = fmax(off_ray, fabs((double)q[0] / q[2] - (double)c[0] / c[2]));
        off_ray = fmax(off_ray, fabs((double)q[1] / q[2] - (double)c[1] / c[2]));
        double dz = (double)q[2] - c[2];
        widest = fmax(widest, fabs(dz));
        /* 4 sigma of depth is 4 sigma * |p| / z along the ray, and the field is 1-Lipschitz */
        double len = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2]);
        beyond = fmax(beyond, labelled_distance(&noisy, i) - 4 * sigma * len / q[2]);
        sum += dz;
        sum2 += dz * dz;
        n++;
    }
    ck_assert_uint_eq(finite_mismatch, 0);
    ck_assert_double_le(off_ray, 1e-6);
    ck_assert_double_le(widest, 4 * sigma + 1e-6);
    ck_assert_double_le(beyond, 1e-5);
    double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
    /* a standard normal truncated at +-4 has variance 1 - 8 phi(4) / erf(4 / sqrt 2) */
    double expected_sd = sigma * sqrt(1 - 8 * exp(-8.0) / sqrt(2 * PI) / erf(4 / sqrt(2.0)));
    printf("synth: depth noise over %zu points: mean %.2e m, sd %.5e m (expected %.5e)\n", n, mean, sd, expected_sd);
    ck_assert_double_le(fabs(mean), 5 * sigma / sqrt((double)n));
    ck_assert_double_le(fabs(sd / expected_sd - 1), 0.01);
    synth_scene_free(&clean);
    synth_scene_free(&noisy);
}
END_TEST

/* Object o rests on the table inside its rectangle, upright within max_tilt_deg, wholly in the image, and clear
 * of every other object. */
static void check_placement(const synth_params *p, const synth_scene *s, uint32_t o)
{
    const host_cloud *m = &s->models[s->model_of_object[o]];
    double fx = 525.0 * p->width / 640, cx = 0.5 * (p->width - 1), cy = 0.5 * (p->height - 1), lowest = INFINITY;
    size_t off_table = 0, off_image = 0, inside_other = 0;
    for (size_t i = 0; i < m->n; i++) {
        double q[3] = {m->xyz[3 * i], m->xyz[3 * i + 1], m->xyz[3 * i + 2]}, c[3], t[3];
        pose_apply(s->poses[o], q, c);
        pose_unapply(s->table_pose, c, t);
        lowest = fmin(lowest, t[2]);
        off_table += fabs(t[0]) > 0.5 * s->table_size[0] || fabs(t[1]) > 0.5 * s->table_size[1];
        double u = fx * c[0] / c[2] + cx, v = fx * c[1] / c[2] + cy;
        off_image += !(c[2] > 0 && u >= 0 && u <= p->width - 1 && v >= 0 && v <= p->height - 1);
        for (uint32_t other = 0; other < s->n_objects; other++)
            inside_other += other != o && object_field(s, other, c) <= 0;
    }
    ck_assert_uint_eq(off_table, 0);
    ck_assert_uint_eq(off_image, 0);
    ck_assert_msg(inside_other == 0, "seed %llu: %zu points of object %u inside others", (unsigned long long)p->seed,
                  inside_other, o);
    ck_assert_double_le(fabs(lowest), 1e-6);
    /* a proper rotation: orthonormal with determinant +1 (a mirrored pose could never be recovered) */
    const double *T = s->poses[o];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double d = T[a] * T[b] + T[4 + a] * T[4 + b] + T[8 + a] * T[8 + b];
            ck_assert_double_le(fabs(d - (a == b)), 1e-12);
        }
    double det = T[0] * (T[5] * T[10] - T[6] * T[9]) - T[1] * (T[4] * T[10] - T[6] * T[8]) +
                 T[2] * (T[4] * T[9] - T[5] * T[8]);
    ck_assert_double_le(fabs(det - 1), 1e-12);
    /* the model's up axis against the table normal, both in the camera frame */
    double up = s->poses[o][2] * s->table_pose[2] + s->poses[o][6] * s->table_pose[6] +
                s->poses[o][10] * s->table_pose[10];
    ck_assert_double_ge(up, cos(p->max_tilt_deg * PI / 180) - 1e-12);
}

START_TEST(objects_stand_apart_on_the_table_in_view_and_visible)
{
    synth_params p;
    double least = 1;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        small_params(&p, seed);
        p.n_objects = seed % 2 ? 4 : 6;
        p.camera_distance = seed % 2 ? 0.8 : 1.0;
        synth_scene s;
        generate_ok(&p, &s);
        for (uint32_t o = 0; o < s.n_objects; o++) {
            size_t labelled = 0;
            for (size_t i = 0; i < s.scene.n; i++)
                labelled += s.labels[i] == (int32_t)o + 1;
            ck_assert_uint_eq(labelled, s.visible_pixels[o]);
            ck_assert_uint_gt(labelled, 0);
            ck_assert_double_ge(s.visible_fraction[o], p.min_visible_fraction);
            ck_assert_double_le(s.visible_fraction[o], 1);
            least = fmin(least, s.visible_fraction[o]);
            check_placement(&p, &s, o);
        }
        synth_scene_free(&s);
    }
    printf("synth: least visible fraction over 10 scenes %.3f\n", least);
    ck_assert_double_lt(least, 1); /* occlusion happened, so the visibility rule was exercised */
}
END_TEST

/* Largest distance from a model point to its nearest neighbour (brute force; models are ~10^4 points). */
static double widest_gap(const host_cloud *m)
{
    double widest = 0;
    for (size_t i = 0; i < m->n; i++) {
        double best = INFINITY;
        for (size_t j = 0; j < m->n; j++) {
            if (j == i)
                continue;
            double dx = m->xyz[3 * i] - m->xyz[3 * j], dy = m->xyz[3 * i + 1] - m->xyz[3 * j + 1],
                   dz = m->xyz[3 * i + 2] - m->xyz[3 * j + 2];
            best = fmin(best, dx * dx + dy * dy + dz * dz);
        }
        widest = fmax(widest, sqrt(best));
    }
    return widest;
}

START_TEST(models_lie_on_their_surfaces_with_outward_unit_normals)
{
    synth_params p;
    small_params(&p, 3);
    p.n_objects = synth_kind_count();
    synth_scene s;
    generate_ok(&p, &s);
    ck_assert_uint_eq(s.n_models, synth_kind_count());
    for (uint32_t m = 0; m < s.n_models; m++) {
        const host_cloud *c = &s.models[m];
        uint32_t kind = s.kind_of_model[m];
        ck_assert_str_eq(s.names[m], synth_kind_name(kind));
        ck_assert_ptr_nonnull(c->normals);
        ck_assert_uint_eq(c->height, 1);
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        double worst_unit = 0, worst_field = 0;
        size_t inward = 0;
        for (size_t i = 0; i < c->n; i++) {
            double q[3], n[3], out[3], in[3];
            for (int k = 0; k < 3; k++) {
                q[k] = c->xyz[3 * i + k];
                n[k] = c->normals[3 * i + k];
                lo[k] = fmin(lo[k], q[k]);
                hi[k] = fmax(hi[k], q[k]);
            }
            worst_unit = fmax(worst_unit, fabs(sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) - 1));
            worst_field = fmax(worst_field, fabs(synth_kind_field(kind, q)));
            for (int k = 0; k < 3; k++) {
                out[k] = q[k] + 1e-5 * n[k];
                in[k] = q[k] - 1e-5 * n[k];
            }
            inward += !(synth_kind_field(kind, out) > 0 && synth_kind_field(kind, in) < 0);
        }
        ck_assert_double_le(worst_unit, 1e-6);
        ck_assert_double_le(worst_field, 1e-7);
        ck_assert_msg(inward == 0, "%s: %zu normals not outward", s.names[m], inward);
        double size = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2])), gap = widest_gap(c);
        printf("synth: model %-8s %6zu points, %.3f x %.3f x %.3f m, widest gap %.2f mm\n", s.names[m], c->n,
               hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 1e3 * gap);
        ck_assert_double_ge(size, 0.10);
        ck_assert_double_le(size, 0.20);
        ck_assert_double_le(fabs(lo[2]), 1e-7); /* the base is on z = 0 */
        ck_assert_double_le(gap, 1.5 * p.model_spacing);
    }
    synth_scene_free(&s);
}
END_TEST

/* Farthest any visible point of object o lies from its model's nearest sample (brute force). */
static double farthest_from_model(const synth_scene *s, uint32_t o)
{
    const host_cloud *m = &s->models[s->model_of_object[o]];
    double farthest = 0;
    for (size_t i = 0; i < s->scene.n; i++) {
        if (s->labels[i] != (int32_t)o + 1)
            continue;
        double p[3] = {s->scene.xyz[3 * i], s->scene.xyz[3 * i + 1], s->scene.xyz[3 * i + 2]}, q[3], best = INFINITY;
        pose_unapply(s->poses[o], p, q);
        for (size_t j = 0; j < m->n; j++) {
            double dx = q[0] - m->xyz[3 * j], dy = q[1] - m->xyz[3 * j + 1], dz = q[2] - m->xyz[3 * j + 2];
            best = fmin(best, dx * dx + dy * dy + dz * dz);
        }
        farthest = fmax(farthest, sqrt(best));
    }
    return farthest;
}

START_TEST(models_cover_every_visible_surface)
{
    synth_params p;
    small_params(&p, 9);
    p.noise_sigma = 0;
    synth_scene s;
    generate_ok(&p, &s);
    for (uint32_t o = 0; o < s.n_objects; o++) {
        double farthest = farthest_from_model(&s, o);
        printf("synth: object %u (%s): farthest visible point from a model sample %.2f mm\n", o,
               s.names[s.model_of_object[o]], 1e3 * farthest);
        /* inside a face no farther than a lattice cell's half diagonal (0.71 spacing), a little more where the
         * lattices of two parts stop short of the crease between them; never a spacing */
        ck_assert_double_le(farthest, p.model_spacing);
    }
    synth_scene_free(&s);
}
END_TEST

START_TEST(pose_error_is_the_mean_point_distance)
{
    synth_params p;
    small_params(&p, 5);
    synth_scene s;
    generate_ok(&p, &s);
    const double *truth = s.poses[0];
    const host_cloud *m = &s.models[s.model_of_object[0]];
    ck_assert_double_eq(synth_pose_error(m, truth, truth), 0);
    double shifted[16];
    memcpy(shifted, truth, sizeof shifted);
    shifted[3] += 0.006;
    shifted[11] -= 0.008;
    ck_assert_double_eq_tol(synth_pose_error(m, truth, shifted), 0.01, 1e-12);
    /* half a turn about the model's own z axis moves each point twice its distance from that axis */
    double turned[16], expected = 0;
    memcpy(turned, truth, sizeof turned);
    for (int r = 0; r < 3; r++) {
        turned[4 * r] = -truth[4 * r];
        turned[4 * r + 1] = -truth[4 * r + 1];
    }
    for (size_t i = 0; i < m->n; i++)
        expected += 2 * hypot(m->xyz[3 * i], m->xyz[3 * i + 1]);
    ck_assert_double_eq_tol(synth_pose_error(m, truth, turned), expected / m->n, 1e-12);
    ck_assert_double_eq_tol(synth_pose_error(m, turned, truth), expected / m->n, 1e-12);
    synth_scene_free(&s);
}
END_TEST

/* ---- view-based models ----------------------------------------------------------------------------------- */

#define VIEWS 8

static void view_params(synth_params *p)
{
    small_params(p, 3);
    p->n_objects = synth_kind_count(); /* every kind */
    p->noise_sigma = 0;
    p->model_views = VIEWS;
}

static double dist3(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* Points on the segment from the camera to view point q that lie inside the object (0 when q is in plain view). */
static int inside_before(uint32_t kind, const double origin[3], const double q[3])
{
    static const double along[] = {0.25, 0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999};
    int inside = 0;
    double len = dist3(origin, q);
    for (size_t a = 0; a < sizeof along / sizeof along[0]; a++) {
        if ((1 - along[a]) * len < 1e-4) /* within 0.1 mm of the surface the field's own rounding dominates */
            continue;
        double x[3];
        for (int k = 0; k < 3; k++)
            x[k] = origin[k] + along[a] * (q[k] - origin[k]);
        inside += synth_kind_field(kind, x) <= 0;
    }
    return inside;
}

/* Highest z of a cloud: the object's height, its base being on z = 0. */
static double top_of(const host_cloud *c)
{
    double top = -INFINITY;
    for (size_t i = 0; i < c->n; i++)
        top = fmax(top, c->xyz[3 * i + 2]);
    return top;
}

/* Fraction of model m's points (every 10th) that a camera at `origin` cannot see. */
static double hidden_fraction(const synth_scene *s, uint32_t m, const double origin[3])
{
    const host_cloud *c = &s->models[m];
    size_t hidden = 0, tried = 0;
    for (size_t i = 0; i < c->n; i += 10, tried++) {
        double q[3] = {c->xyz[3 * i], c->xyz[3 * i + 1], c->xyz[3 * i + 2]};
        hidden += inside_before(s->kind_of_model[m], origin, q) > 0;
    }
    return (double)hidden / tried;
}

/* View m: named "<kind>@<yaw>", on its kind's surface, every point in plain view of view_origin, which is where
 * the scene's camera stands relative to the turned object. */
static void check_view(const synth_params *p, const synth_scene *s, uint32_t m)
{
    const host_cloud *c = &s->models[m];
    uint32_t kind = s->kind_of_model[m], v = m % VIEWS;
    double yaw = 2 * PI * v / VIEWS, e = p->camera_elevation_deg * PI / 180;
    char name[64];
    snprintf(name, sizeof name, "%s@%g", synth_kind_name(kind), 360.0 * v / VIEWS);
    ck_assert_str_eq(s->names[m], name);
    ck_assert_uint_eq(kind, s->kind_of_model[m - v]);
    ck_assert_uint_gt(c->n, 100);
    ck_assert_uint_eq(c->width, c->n);
    ck_assert_uint_eq(c->height, 1);
    ck_assert_ptr_null(c->normals);
    /* the camera: camera_distance from the object's mid-height point and camera_elevation_deg above it, on the
     * world's -y side, (0, -distance cos e), turned by -yaw into the frame of the object turned by yaw */
    const double *o = s->view_origin[m];
    double level = -p->camera_distance * cos(e);
    double expected[3] = {sin(yaw) * level, cos(yaw) * level,
                          0.5 * top_of(&s->complete[m / VIEWS]) + p->camera_distance * sin(e)};
    ck_assert_msg(dist3(o, expected) <= 1e-6, "%s: view_origin (%g %g %g), expected (%g %g %g)", name, o[0], o[1],
                  o[2], expected[0], expected[1], expected[2]);
    double worst = 0;
    for (size_t i = 0; i < c->n; i++) {
        double q[3] = {c->xyz[3 * i], c->xyz[3 * i + 1], c->xyz[3 * i + 2]};
        worst = fmax(worst, fabs(synth_kind_field(kind, q)));
    }
    printf("synth: view %-12s %5zu points, worst distance to the surface %.2e m\n", name, c->n, worst);
    ck_assert_double_le(worst, 1e-5);
    ck_assert_double_eq(hidden_fraction(s, m, o), 0);
}

START_TEST(views_lie_on_their_surfaces_in_view_of_their_origins)
{
    synth_params p;
    view_params(&p);
    synth_scene s, whole;
    generate_ok(&p, &s);
    p.model_views = 0;
    generate_ok(&p, &whole);
    ck_assert_uint_eq(s.n_kinds, synth_kind_count());
    ck_assert_uint_eq(s.views_per_kind, VIEWS);
    ck_assert_uint_eq(s.n_models, s.n_kinds * VIEWS);
    ck_assert_ptr_nonnull(s.view_origin);
    ck_assert_ptr_null(whole.view_origin);
    ck_assert_uint_eq(whole.views_per_kind, 1);
    /* the views change nothing else: the scene, the poses and the complete surfaces are those made without */
    ck_assert_int_eq(memcmp(s.scene.xyz, whole.scene.xyz, 3 * s.scene.n * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(s.poses, whole.poses, s.n_objects * sizeof *s.poses), 0);
    for (uint32_t k = 0; k < s.n_kinds; k++) {
        ck_assert_uint_eq(s.complete[k].n, whole.models[k].n);
        ck_assert_int_eq(memcmp(s.complete[k].xyz, whole.models[k].xyz, 3 * s.complete[k].n * sizeof(float)), 0);
        ck_assert_int_eq(memcmp(s.complete[k].normals, whole.models[k].normals, 3 * s.complete[k].n * sizeof(float)),
                         0);
        ck_assert_uint_eq(s.kind_of_model[k * VIEWS], whole.kind_of_model[k]);
        ck_assert_uint_eq(whole.complete[k].n, whole.models[k].n);
    }
    for (uint32_t o = 0; o < s.n_objects; o++) {
        ck_assert_uint_eq(s.model_of_object[o], whole.model_of_object[o] * VIEWS);
        ck_assert_str_eq(s.complete[s.model_of_object[o] / VIEWS].path, whole.names[whole.model_of_object[o]]);
    }
    for (uint32_t m = 0; m < s.n_models; m++)
        check_view(&p, &s, m);
    /* each view shows another side: of any two views of a kind, one holds points the other's camera cannot see
     * (not always both: a box's face seen square on is seen obliquely from 45 degrees too) */
    double least = 1;
    for (uint32_t m = 0; m < s.n_models; m++)
        for (uint32_t n = m + 1; n < s.n_models && n / VIEWS == m / VIEWS; n++)
            least = fmin(least,
                         fmax(hidden_fraction(&s, m, s.view_origin[n]), hidden_fraction(&s, n, s.view_origin[m])));
    printf("synth: least fraction of a view hidden from another view's camera %.3f\n", least);
    ck_assert_double_ge(least, 0.05);
    synth_scene_free(&s);
    synth_scene_free(&whole);
}
END_TEST

START_TEST(views_are_deterministic_and_their_noise_runs_along_the_rays)
{
    const double sigma = 0.001;
    synth_params p;
    view_params(&p);
    p.n_objects = 2;
    synth_scene a, b, noisy;
    generate_ok(&p, &a);
    generate_ok(&p, &b);
    p.model_view_noise = sigma;
    generate_ok(&p, &noisy);
    ck_assert_uint_eq(a.n_models, 2 * VIEWS);
    ck_assert_int_eq(memcmp(a.view_origin, b.view_origin, a.n_models * sizeof *a.view_origin), 0);
    ck_assert_int_eq(memcmp(a.view_origin, noisy.view_origin, a.n_models * sizeof *a.view_origin), 0);
    double widest = 0, off_ray = 0;
    for (uint32_t m = 0; m < a.n_models; m++) {
        const host_cloud *ca = &a.models[m], *cn = &noisy.models[m];
        ck_assert_uint_eq(ca->n, b.models[m].n);
        ck_assert_int_eq(memcmp(ca->xyz, b.models[m].xyz, 3 * ca->n * sizeof(float)), 0);
        ck_assert_uint_eq(ca->n, cn->n);
        ck_assert_int_ne(memcmp(ca->xyz, cn->xyz, 3 * ca->n * sizeof(float)), 0);
        const double *o = a.view_origin[m];
        for (size_t i = 0; i < ca->n; i++) {
            double r[3], d[3];
            for (int k = 0; k < 3; k++) {
                r[k] = ca->xyz[3 * i + k] - o[k];
                d[k] = cn->xyz[3 * i + k] - ca->xyz[3 * i + k];
            }
            double cross[3] = {r[1] * d[2] - r[2] * d[1], r[2] * d[0] - r[0] * d[2], r[0] * d[1] - r[1] * d[0]};
            double len = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
            widest = fmax(widest, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
            off_ray = fmax(off_ray, sqrt(cross[0] * cross[0] + cross[1] * cross[1] + cross[2] * cross[2]) / len);
        }
    }
    printf("synth: view noise %.1f mm: widest move %.2f mm, %.2e m off the ray\n", 1e3 * sigma, 1e3 * widest, off_ray);
    /* 4 sigma of depth, times at most 1 / cos of the corner ray's angle from the optical axis (< 1.3 here) */
    ck_assert_double_le(widest, 4 * sigma * 1.3);
    ck_assert_double_ge(widest, 2 * sigma);
    ck_assert_double_le(off_ray, 1e-6);
    synth_scene_free(&a);
    synth_scene_free(&b);
    synth_scene_free(&noisy);
}
END_TEST

static void assert_refused(const synth_params *p, const char *needle)
{
    synth_scene s;
    char err[256] = "";
    ck_assert_int_eq(synth_generate(p, &s, err, sizeof err), -1);
    ck_assert_msg(strstr(err, needle) != NULL, "error '%s' does not name '%s'", err, needle);
    ck_assert_ptr_null(s.scene.xyz);
    ck_assert_ptr_null(s.models);
}

START_TEST(bad_parameters_are_refused_by_name)
{
    synth_params p;
    small_params(&p, 1);
    p.n_objects = 0;
    assert_refused(&p, "n_objects");
    small_params(&p, 1);
    p.width = 4;
    assert_refused(&p, "image size");
    small_params(&p, 1);
    p.noise_sigma = NAN;
    assert_refused(&p, "noise_sigma");
    small_params(&p, 1);
    p.camera_elevation_deg = 20; /* the top rows would look above the horizon */
    assert_refused(&p, "camera_elevation_deg");
    small_params(&p, 1);
    p.model_views = 361;
    assert_refused(&p, "model_views");
    small_params(&p, 1);
    p.model_views = 4;
    p.model_view_noise = NAN;
    assert_refused(&p, "model_view_noise");
    small_params(&p, 1);
    p.model_views = 4;
    p.n_objects = 1;
    p.placement_radius = 0.35;
    p.max_range = 0.68; /* the scene's object can stand near enough; the views' stand 0.8 m from the camera */
    assert_refused(&p, "holds no point");
    small_params(&p, 1);
    p.n_objects = 16; /* sixteen 10-17 cm objects do not fit in view of a camera 0.5 m away */
    p.camera_distance = 0.5;
    assert_refused(&p, "could not place 16 objects");
}
END_TEST

static Suite *synth_suite(void)
{
    Suite *s = suite_create("synth");
    TCase *basics = tcase_create("basics"), *geometry = tcase_create("geometry"), *views = tcase_create("views");
    tcase_set_timeout(basics, 120);
    tcase_set_timeout(geometry, 120);
    tcase_set_timeout(views, 600); /* valgrind runs this case alone */
    tcase_add_test(basics, same_seed_same_bytes_other_seed_other_scene);
    tcase_add_test(basics, pose_error_is_the_mean_point_distance);
    tcase_add_test(basics, bad_parameters_are_refused_by_name);
    tcase_add_test(geometry, defaults_give_a_vga_kinect_like_scene);
    tcase_add_test(geometry, exact_points_lie_on_their_surfaces);
    tcase_add_test(geometry, noise_moves_points_along_their_rays_within_4_sigma);
    tcase_add_test(geometry, objects_stand_apart_on_the_table_in_view_and_visible);
    tcase_add_test(geometry, models_lie_on_their_surfaces_with_outward_unit_normals);
    tcase_add_test(geometry, models_cover_every_visible_surface);
    tcase_add_test(views, views_lie_on_their_surfaces_in_view_of_their_origins);
    tcase_add_test(views, views_are_deterministic_and_their_noise_runs_along_the_rays);
    suite_add_tcase(s, basics);
    suite_add_tcase(s, geometry);
    suite_add_tcase(s, views);
    return s;
}

int main(void)
{
    return grip_test_run(synth_suite());
}
