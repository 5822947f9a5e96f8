/* bench_surf_registration.c -- RGB-D registration through the whole pipeline with SURF: the organized colour
 * cloud argv[1] (e.g. milk_cartoon_all_small_clorox.pcd) is re-rendered from a second viewpoint through its depth
 * (every finite point moved by a known rigid motion and projected by the pinhole fitted to the cloud, nearest
 * point per pixel), giving a second organized frame whose pose relative to the first is known. Then the plugin's
 * stages, on the CPU twins: `surf` on both frames (with its sign column: SURF's Laplacian filter), `bruteforce` index over the second frame's descriptors, `knn`
 * match (k 2, ratio 0.65 on distances), `gc` grouping of the 3D keypoints (size 1 cm, threshold 5), and `icp`
 * verification; the best verified hypothesis (else the group's best) is compared with the known motion: rotation
 * error (degrees) and translation error (mm). Also, per trial, the 3D repeatability of the keypoints (scene keypoints
 * paired one to one with a model keypoint within 1 cm of their true place, over the fewer keypoints of the two
 * frames) and the
 * precision of the matches (best match per scene keypoint within 1 cm of its true place).
 * Motions, seeded: rotation about a random axis through the cloud's centroid by 5 .. max degrees (argv[3], default
 * 20), and a translation of up to 5 cm; argv[2] trials (default 10).
 * argv[4]: surf's threshold (default 0.0004).
 * Usage: bench_surf_registration cloud.pcd [trials] [max_degrees] [threshold]. Prints a row per trial, the medians. */
#define _POSIX_C_SOURCE 200809L
#include "core/ctx.h"
#include "io/cloud_io.h"
#include "surf_scene.h"
#include "stages/registry.h"
#include "stages/stage.h"
#include "verify/free_space.h"
#include "host_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static grip_surf_rng rng; /* the trial's stream (surf_scene.h) */

static double uniform(double lo, double hi)
{
    return grip_surf_rng_uniform(&rng, lo, hi);
}

/* R (row-major 3 x 3) of angle about the unit axis. */
static void rotation(const double axis[3], double angle, double R[9])
{
    const double c = cos(angle), s = sin(angle), t = 1 - c, x = axis[0], y = axis[1], z = axis[2];
    const double m[9] = {t * x * x + c,     t * x * y - s * z, t * x * z + s * y, t * x * y + s * z, t * y * y + c,
                         t * y * z - s * x, t * x * z - s * y, t * y * z + s * x, t * z * z + c};
    memcpy(R, m, sizeof m);
}

/* Where the motion takes scene point p: R (p - centre) + centre + t. */
static void move(const double R[9], const double centre[3], const double t[3], const float *p, double q[3])
{
    const double d[3] = {p[0] - centre[0], p[1] - centre[1], p[2] - centre[2]};
    for (int k = 0; k < 3; ++k)
        q[k] = R[3 * k] * d[0] + R[3 * k + 1] * d[1] + R[3 * k + 2] * d[2] + centre[k] + t[k];
}

static double dist(const double q[3], const float *p)
{
    return sqrt((q[0] - p[0]) * (q[0] - p[0]) + (q[1] - p[1]) * (q[1] - p[1]) + (q[2] - p[2]) * (q[2] - p[2]));
}

/* The cloud seen after moving every point by q = R (p - centre) + centre + t: a new organized frame (nearest point
 * per pixel; NaN elsewhere). xyz and rgb are malloc'd. */
static void render(const host_cloud *c, const grip_pinhole *h, const double R[9], const double centre[3], const double t[3],
                   float *xyz, uint8_t *rgb)
{
    for (size_t i = 0; i < c->n; ++i) {
        xyz[3 * i] = xyz[3 * i + 1] = xyz[3 * i + 2] = NAN;
        rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = 0;
    }
    for (size_t i = 0; i < c->n; ++i) {
        const float *p = c->xyz + 3 * i;
        if (!(isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2])))
            continue;
        double q[3];
        move(R, centre, t, p, q);
        if (q[2] <= 0.05)
            continue;
        const long u = lround(h->fx * q[0] / q[2] + h->cx), v = lround(h->fy * q[1] / q[2] + h->cy);
        if (u < 0 || v < 0 || u >= (long)c->width || v >= (long)c->height)
            continue;
        const size_t at = (size_t)v * c->width + (size_t)u;
        if (isfinite(xyz[3 * at + 2]) && xyz[3 * at + 2] <= q[2])
            continue;
        for (int k = 0; k < 3; ++k) {
            xyz[3 * at + k] = (float)q[k];
            rgb[3 * at + k] = c->rgb[3 * i + k];
        }
    }
}

static grip_cloud cloud_view(uint32_t w, uint32_t h, float *xyz, uint8_t *rgb, const char *name)
{
    grip_cloud c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.width = w;
    c.height = h;
    c.xyz = grip_array_host_view(GRIP_F32, (uint64_t)w * h, 3, xyz);
    c.rgb = grip_array_host_view(GRIP_U8, (uint64_t)w * h, 3, rgb);
    c.name = name;
    return c;
}

static grip_stage *make(grip_ctx *ctx, const grip_stage_impl *impl, const grip_kv *kv, uint32_t n)
{
    grip_stage *st = NULL;
    if (grip_stage_create(impl, ctx, kv, n, &st)) {
        fprintf(stderr, "%s: %s\n", impl->name, grip_ctx_error_text(ctx));
        exit(1);
    }
    return st;
}

/* 3D repeatability of the keypoints and precision of the best match per query, within 1 cm of the truth. */
static void keypoint_agreement(const grip_features *fs, const grip_features *fm, const grip_matches *m,
                               const double R[9], const double centre[3], const double t[3], double *repeat,
                               double *precision, size_t *queries)
{
    const float *ps = fs->keypoint_xyz.data, *pm = fm->keypoint_xyz.data;
    const size_t ns = fs->keypoint_xyz.rows, nm = fm->keypoint_xyz.rows;
    size_t repeated = 0, correct = 0;
    char *used = calloc(nm + 1, 1);
    for (size_t i = 0; used && i < ns; ++i) { /* one to one: the nearest unused model keypoint */
        double q[3], best = 0.01;
        long at = -1;
        move(R, centre, t, ps + 3 * i, q);
        for (size_t j = 0; j < nm; ++j)
            if (!used[j] && dist(q, pm + 3 * j) < best) {
                best = dist(q, pm + 3 * j);
                at = (long)j;
            }
        if (at >= 0) {
            used[at] = 1;
            ++repeated;
        }
    }
    free(used);
    const size_t fewer = ns < nm ? ns : nm;
    *repeat = fewer ? (double)repeated / (double)fewer : NAN;
    const uint32_t *qi = m->query.data, *ri = m->reference.data;
    *queries = 0;
    for (uint64_t k = 0; k < m->count; ++k) {
        if (k > 0 && qi[k] == qi[k - 1])
            continue; /* the best match of each query only */
        ++*queries;
        double q[3];
        move(R, centre, t, ps + 3 * (size_t)qi[k], q);
        correct += dist(q, pm + 3 * (size_t)ri[k]) < 0.01;
    }
    *precision = *queries ? (double)correct / (double)*queries : NAN;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: bench_surf_registration cloud.pcd [trials] [max_degrees] [threshold]\n");
        return 1;
    }
    const int trials = argc > 2 ? atoi(argv[2]) : 10;
    const double max_deg = argc > 3 ? atof(argv[3]) : 20.0, pi = 3.14159265358979323846;
    host_cloud c;
    char err[512];
    if (cloud_read(argv[1], &c, err, sizeof err) || !c.rgb || c.height < 2) {
        printf("surf: %s: %s\n", argv[1], c.rgb ? err : "no organized rgb");
        return 1;
    }
    grip_ctx *ctx = NULL;
    grip_ctx_options o = {sizeof o, -1, 0};
    float *xyz = malloc(3 * c.n * sizeof *xyz);
    uint8_t *rgb = malloc(3 * c.n);
    if (!xyz || !rgb || grip_ctx_new(&o, &ctx))
        return 1;
    grip_pinhole ph;
    grip_pinhole_estimate(c.xyz, c.width, c.height, grip_ctx_threads(ctx), &ph);
    if (ph.fx == 0 || ph.fy == 0) { /* fewer than 16 finite points: no fit (a poor fit is still used) */
        printf("surf: %s: too few finite points to fit its camera\n", argv[1]);
        return 1;
    }
    double centre[3] = {0, 0, 0}, count = 0;
    for (size_t i = 0; i < c.n; ++i)
        if (isfinite(c.xyz[3 * i + 2])) {
            for (int k = 0; k < 3; ++k)
                centre[k] += c.xyz[3 * i + k];
            ++count;
        }
    for (int k = 0; k < 3; ++k)
        centre[k] /= count;
    const grip_kv cpu[] = {{"device", "cpu"}};
    const grip_kv surf_kv[] = {
        {"device", "cpu"}, {"threshold", argc > 4 ? argv[4] : "0.0004"}, {"sign_column", "true"}};
    const grip_kv match_kv[] = {{"device", "cpu"}, {"k", "2"}, {"ratio", "0.65"}};
    const grip_kv gc_kv[] = {{"device", "cpu"}, {"size", "0.01"}, {"threshold", "5"}};
    const grip_kv icp_kv[] = {{"device", "cpu"}, {"model_leaf", "0.005"}, {"max_correspondence_distance", "0.02"}};
    grip_stage *desc = make(ctx, &grip_descriptor_surf, surf_kv, 3), *index = make(ctx, &grip_index_bruteforce, cpu, 1),
               *match = make(ctx, &grip_match_knn, match_kv, 3), *group = make(ctx, &grip_group_gc, gc_kv, 3),
               *verify = make(ctx, &grip_verify_icp, icp_kv, 3);
    grip_cloud scene = cloud_view(c.width, c.height, c.xyz, c.rgb, "original");
    grip_features *fs = NULL;
    if (grip_descriptor_surf.describe(desc, &scene, GRIP_ROLE_SCENE, NULL, GRIP_MEM_HOST, &fs)) {
        printf("surf: %s\n", grip_ctx_error_text(ctx));
        return 1;
    }
    printf("# %s: pinhole fx %.1f fy %.1f cx %.1f cy %.1f; threshold %s, %llu scene keypoints; rotations 5..%.0f "
           "deg, translations up to 5 cm\n",
           argv[1], ph.fx, ph.fy, ph.cx, ph.cy, surf_kv[1].value, (unsigned long long)fs->keypoints.rows, max_deg);
    printf("trial\tangle_deg\tmodel_keypoints\trepeatability_3d\tmatches\tmatch_precision\thypotheses\taccepted"
           "\trot_err_deg\ttrans_err_mm\n");
    double *rot = malloc((size_t)trials * sizeof *rot), *tra = malloc((size_t)trials * sizeof *tra);
    int solved = 0;
    for (int trial = 1; trial <= trials; ++trial) {
        rng = grip_surf_rng_seed((uint64_t)trial);
        double axis[3] = {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)}, t[3], R[9];
        const double an = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        for (int k = 0; k < 3; ++k) {
            axis[k] /= an;
            t[k] = uniform(-0.05, 0.05) / sqrt(3.0);
        }
        const double angle = uniform(5, max_deg) * pi / 180;
        rotation(axis, angle, R);
        render(&c, &ph, R, centre, t, xyz, rgb);
        grip_cloud model = cloud_view(c.width, c.height, xyz, rgb, "re-rendered");
        grip_features *fm = NULL;
        grip_index *ix = NULL;
        grip_matches *m = NULL;
        grip_hypotheses *hy = NULL;
        grip_verdicts *vd = NULL;
        grip_status s = grip_descriptor_surf.describe(desc, &model, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, &fm);
        if (!s)
            s = grip_index_bruteforce.build(index, &fm->descriptors, NULL, &ix);
        if (!s)
            s = grip_match_knn.match(match, ix, &fs->descriptors, GRIP_MEM_HOST, &m);
        grip_view mv = {sizeof mv, &model, fm}, sv = {sizeof sv, &scene, fs};
        if (!s)
            s = grip_group_gc.group(group, &mv, 1, &sv, m, &hy);
        if (!s && hy->count)
            s = grip_verify_icp.verify(verify, &mv, 1, &sv, hy, &vd);
        if (s) {
            printf("%d\tfailed: %s\n", trial, grip_ctx_error_text(ctx));
            return 1;
        }
        /* the best hypothesis: the accepted one with the best fitness, else the group's first (most votes) */
        const float *pose = NULL;
        uint32_t accepted = 0;
        float best_fit = -1;
        for (uint32_t i = 0; vd && i < vd->count; ++i)
            if (vd->items[i].accepted) {
                ++accepted;
                if (vd->items[i].fitness > best_fit) {
                    best_fit = vd->items[i].fitness;
                    pose = vd->items[i].pose;
                }
            }
        if (!pose && hy->count)
            pose = hy->items[0].pose;
        /* truth, model -> scene: p = R^T (q - centre - t) + centre */
        double rerr = NAN, terr = NAN;
        if (pose) {
            double tr = 0, e[3];
            for (int i = 0; i < 3; ++i)
                for (int k = 0; k < 3; ++k)
                    tr += pose[4 * i + k] * R[3 * k + i]; /* trace(P R): P estimates R^T */
            rerr = acos(fmax(-1.0, fmin(1.0, (tr - 1) / 2))) * 180 / pi;
            /* where the pose sends the model's image of the centroid, against the centroid itself */
            double q[3];
            for (int k = 0; k < 3; ++k)
                q[k] = centre[k] + t[k];
            for (int i = 0; i < 3; ++i)
                e[i] = pose[4 * i] * q[0] + pose[4 * i + 1] * q[1] + pose[4 * i + 2] * q[2] + pose[4 * i + 3] -
                       centre[i];
            terr = 1000 * sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
        }
        double repeat = NAN, precision = NAN;
        size_t queries = 0;
        keypoint_agreement(fs, fm, m, R, centre, t, &repeat, &precision, &queries);
        printf("%d\t%.1f\t%llu\t%.3f\t%zu\t%.3f\t%u\t%u\t%.2f\t%.1f\n", trial, angle * 180 / pi,
               (unsigned long long)fm->keypoints.rows, repeat, queries, precision, hy->count, accepted, rerr, terr);
        rot[trial - 1] = rerr;
        tra[trial - 1] = terr;
        solved += rerr < 2 && terr < 20;
        if (vd)
            vd->release(vd);
        hy->release(hy);
        m->release(m);
        ix->release(ix);
        fm->release(fm);
    }
    /* medians over the trials that gave a pose */
    int posed = 0;
    for (int i = 0; i < trials; ++i)
        if (!isnan(rot[i])) {
            rot[posed] = rot[i];
            tra[posed++] = tra[i];
        }
    qsort(rot, (size_t)posed, sizeof *rot, host_compare_doubles);
    qsort(tra, (size_t)posed, sizeof *tra, host_compare_doubles);
    printf("%d of %d trials gave a pose, %d within 2 deg and 2 cm; over those posed: median rotation error %.2f deg, "
           "median translation error %.1f mm (at the centroid)\n",
           posed, trials, solved, posed ? rot[posed / 2] : NAN, posed ? tra[posed / 2] : NAN);
    fs->release(fs);
    grip_stage_destroy(desc);
    grip_stage_destroy(index);
    grip_stage_destroy(match);
    grip_stage_destroy(group);
    grip_stage_destroy(verify);
    free(rot);
    free(tra);
    free(xyz);
    free(rgb);
    host_cloud_free(&c);
    grip_ctx_free(ctx);
    return 0;
}
