/* bench_registration.c -- pairwise registration of real range scans: the Stanford bunny scans (a folder holding
 * bun.conf and the bunXXX.ply it names; see its README for the pose convention: T_X = [R(q_X)^T | t_X], and the
 * relative pose of a pair T_AB = T_A^-1 T_B maps scan B into scan A).
 *
 * For every pair of scans whose overlap (the fraction of B's ICP points within 1 mm of A under T_AB) is at least
 * 30 %, B (the model, thinned to one point per 2 mm voxel) is registered against A (the scene, every point; its
 * normals from its 10 nearest) from `n` starts: T_AB perturbed by a rotation of exactly 10 deg about a random axis
 * through B's centroid and a translation of exactly 2 cm in a random direction (seeded). A start succeeds when
 * the refined pose is within 0.5 deg of T_AB and moves B's centroid less than 0.5 mm from where T_AB puts it.
 * Point-to-point against point-to-plane, the same starts, the same loop: 50 iterations at most, the
 * correspondence bound shrinking from 4 cm to 2 mm (icp.h's schedule), PCL's stop rules.
 * Backends: the CPU twin (one refinement per start) or the GPU (every start of a pair in one batch); `both` also
 * reports whether they agree. Prints one line per pair and metric (key=value words), then the totals.
 * Usage: bench_registration <scan folder> [n = 100] [cpu|cuda|both = both]. Not a test. */
#define _POSIX_C_SOURCE 200809L
#include "core/ctx.h"
#include "descriptor/normals.h"
#include "icp_scene.h"
#include "io/cloud_io.h"
#include "spatial/kdtree3d.h"
#include "verify/icp.h"
#include "verify/icp_cuda.h"
#include "host_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SCANS 16
#define OVERLAP_MIN 0.3
#define OVERLAP_DISTANCE 0.001
#define LEAF 0.002

typedef struct scan {
    char name[64];
    double pose[16]; /* scan -> world */
    host_cloud cloud;
    float *normals; /* n x 3 */
    float *icp_xyz; /* the thinned points ICP uses (grip_icp_model_points) */
    size_t icp_n;
    double centroid[3];
} scan;

/* T = [R(q)^T | t] (README's convention). */
static void conf_pose(double tx, double ty, double tz, double qx, double qy, double qz, double qw, double T[16])
{
    const double R[9] = {1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw),     2 * (qx * qz + qy * qw),
                         2 * (qx * qy + qz * qw),     1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw),
                         2 * (qx * qz - qy * qw),     2 * (qy * qz + qx * qw),     1 - 2 * (qx * qx + qy * qy)};
    memset(T, 0, 16 * sizeof *T);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            T[4 * r + c] = R[3 * c + r];
    T[3] = tx;
    T[7] = ty;
    T[11] = tz;
    T[15] = 1;
}

/* inverse(A) * B for rigid A. */
static void relative(const double A[16], const double B[16], double out[16])
{
    double inv[16] = {0};
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c)
            inv[4 * r + c] = A[4 * c + r];
        inv[4 * r + 3] = -(A[r] * A[3] + A[4 + r] * A[7] + A[8 + r] * A[11]);
    }
    inv[15] = 1;
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) {
            double s = 0;
            for (int i = 0; i < 4; ++i)
                s += inv[4 * r + i] * B[4 * i + c];
            out[4 * r + c] = s;
        }
}

static void apply(const double T[16], const double p[3], double out[3])
{
    for (int r = 0; r < 3; ++r)
        out[r] = T[4 * r] * p[0] + T[4 * r + 1] * p[1] + T[4 * r + 2] * p[2] + T[4 * r + 3];
}

static int load_scans(grip_ctx *ctx, const char *dir, scan *scans, int *n_scans)
{
    char path[4096], line[512];
    snprintf(path, sizeof path, "%s/bun.conf", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 0;
    }
    *n_scans = 0;
    while (fgets(line, sizeof line, f) && *n_scans < MAX_SCANS) {
        char name[64];
        double v[7];
        if (sscanf(line, "bmesh %63s %lf %lf %lf %lf %lf %lf %lf", name, v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6) !=
            8)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *probe = fopen(path, "r");
        if (!probe)
            continue; /* the copy holds a subset of the scans */
        fclose(probe);
        scan *s = &scans[(*n_scans)++];
        memset(s, 0, sizeof *s);
        snprintf(s->name, sizeof s->name, "%s", name);
        conf_pose(v[0], v[1], v[2], v[3], v[4], v[5], v[6], s->pose);
        char err[256];
        if (cloud_read(path, &s->cloud, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            fclose(f);
            return 0;
        }
        float *n4 = malloc(s->cloud.n * 4 * sizeof *n4);
        s->normals = malloc(s->cloud.n * 3 * sizeof *s->normals);
        if (!n4 || !s->normals ||
            grip_normals_compute(ctx, s->cloud.xyz, s->cloud.n, NULL, 10, 0.0f, NULL, n4) != GRIP_OK) {
            fprintf(stderr, "%s: normals: %s\n", name, ctx->last_error);
            fclose(f);
            return 0;
        }
        for (size_t i = 0; i < s->cloud.n; ++i)
            memcpy(s->normals + 3 * i, n4 + 4 * i, 3 * sizeof(float));
        free(n4);
        const grip_icp_model m = {s->cloud.xyz, s->cloud.n, NULL, 0};
        float *unused = NULL;
        if (grip_icp_model_points(ctx, LEAF, &m, &s->icp_xyz, &unused, &s->icp_n) != GRIP_OK) {
            fprintf(stderr, "%s: thinning: %s\n", name, ctx->last_error);
            fclose(f);
            return 0;
        }
        for (size_t i = 0; i < s->icp_n; ++i)
            for (int a = 0; a < 3; ++a)
                s->centroid[a] += s->icp_xyz[3 * i + a] / (double)s->icp_n;
    }
    fclose(f);
    return *n_scans >= 2;
}

static double overlap(const scan *a, const grip_kdtree3d *tree_a, const scan *b, const double T[16])
{
    size_t near = 0;
    for (size_t i = 0; i < b->icp_n; ++i) {
        const double p[3] = {b->icp_xyz[3 * i], b->icp_xyz[3 * i + 1], b->icp_xyz[3 * i + 2]};
        double q[3];
        apply(T, p, q);
        const float qf[3] = {(float)q[0], (float)q[1], (float)q[2]};
        uint32_t id;
        float d;
        if (grip_kdtree3d_knn(tree_a, qf, 1, &id, &d) == 1 && d <= OVERLAP_DISTANCE * OVERLAP_DISTANCE)
            ++near;
    }
    (void)a;
    return b->icp_n ? (double)near / (double)b->icp_n : 0.0;
}

static int success(const double pose[16], const double truth[16], const double centroid[3], double *rot_deg,
                   double *shift)
{
    double p[3], q[3];
    apply(pose, centroid, p);
    apply(truth, centroid, q);
    *rot_deg = grip_icp_rotation_error_deg(pose, truth);
    *shift = sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
    return *rot_deg < 0.5 && *shift < 0.0005;
}

typedef struct totals {
    unsigned ok[2][2], runs[2][2]; /* [backend][metric] */
} totals;

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <scan folder> [n] [cpu|cuda|both]\n", argv[0]);
        return 2;
    }
    const uint32_t n = argc > 2 ? (uint32_t)atoi(argv[2]) : 100;
    const char *which = argc > 3 ? argv[3] : "both";
    const int use_cpu = strcmp(which, "cuda") != 0, use_gpu = strcmp(which, "cpu") != 0;
    grip_ctx *ctx = NULL;
    static scan scans[MAX_SCANS];
    int n_scans = 0;
    if (grip_ctx_new(NULL, &ctx) != GRIP_OK || !load_scans(ctx, argv[1], scans, &n_scans))
        return 1;
    if (use_gpu && grip_ctx_device_count(ctx) <= 0) {
        fprintf(stderr, "no usable CUDA device (run with `cpu`)\n");
        return 1;
    }
    totals tot;
    memset(&tot, 0, sizeof tot);
    double *poses = malloc((size_t)n * 16 * sizeof *poses);
    uint32_t *ids = calloc(n + 1, sizeof *ids);
    grip_icp_result *res = calloc(n + 1, sizeof *res), *cpu_res = calloc(n + 1, sizeof *cpu_res);
    for (int ia = 0; ia < n_scans; ++ia)
        for (int ib = ia + 1; ib < n_scans; ++ib) {
            scan *a = &scans[ia], *b = &scans[ib];
            double truth[16];
            relative(a->pose, b->pose, truth);
            grip_kdtree3d *tree = NULL;
            if (grip_kdtree3d_build(ctx, a->cloud.xyz, a->cloud.n, &tree) != GRIP_OK)
                return 1;
            const double ov = overlap(a, tree, b, truth);
            if (ov < OVERLAP_MIN) {
                printf("pair=%s,%s overlap=%.2f skipped=below_%.2f\n", a->name, b->name, ov, OVERLAP_MIN);
                grip_kdtree3d_free(tree);
                continue;
            }
            double center[3];
            apply(truth, b->centroid, center);
            uint64_t seed = 1000u * (uint64_t)ia + (uint64_t)ib;
            for (uint32_t k = 0; k < n; ++k)
                grip_icp_perturb(&seed, truth, center, 10.0, 0.02, poses + 16 * (size_t)k);
            grip_icp_cuda_scene *dev = NULL;
            if (use_gpu && grip_icp_cuda_scene_build(ctx, a->cloud.xyz, NULL, NULL, a->cloud.n, a->normals, 3, NULL,
                                                     &dev) != GRIP_OK) {
                fprintf(stderr, "gpu scene: %s\n", ctx->last_error);
                return 1;
            }
            for (uint32_t metric = 0; metric < 2; ++metric) {
                grip_icp_params p;
                memset(&p, 0, sizeof p);
                p.max_iterations = 50;
                p.max_correspondence_distance = 0.04;
                p.final_correspondence_distance = 0.002;
                p.transformation_epsilon = 1e-12;
                p.inlier_distance = 0.001;
                p.max_rmse = 1.0;
                p.metric = metric;
                const char *mname = metric ? "point_to_plane" : "point_to_point";
                for (int backend = 0; backend < 2; ++backend) {
                    if ((backend == 0 && !use_cpu) || (backend == 1 && !use_gpu))
                        continue;
                    const double t0 = host_now_ms();
                    grip_icp_result *out = backend ? res : cpu_res;
                    if (backend == 0) {
                        const grip_icp_scene sc = {tree, a->cloud.xyz, a->normals, 3, {0, 0, 0}};
                        const grip_icp_model md = {b->icp_xyz, b->icp_n, NULL, 0};
                        for (uint32_t k = 0; k < n; ++k)
                            if (grip_icp_refine_scene(ctx, &p, &md, &sc, poses + 16 * (size_t)k, &out[k]) != GRIP_OK)
                                return fprintf(stderr, "cpu: %s\n", ctx->last_error), 1;
                    } else {
                        const size_t first[2] = {0, b->icp_n};
                        const grip_icp_batch bt = {b->icp_xyz, NULL, first, 1, n, ids, poses};
                        if (grip_icp_cuda_refine(ctx, &p, dev, &bt, out) != GRIP_OK)
                            return fprintf(stderr, "gpu: %s\n", ctx->last_error), 1;
                    }
                    const double ms = host_now_ms() - t0;
                    unsigned ok = 0;
                    double worst_rot = 0, worst_shift = 0, iters = 0;
                    for (uint32_t k = 0; k < n; ++k) {
                        double rot, shift;
                        ok += (unsigned)success(out[k].pose, truth, b->centroid, &rot, &shift);
                        worst_rot = fmax(worst_rot, rot);
                        worst_shift = fmax(worst_shift, shift);
                        iters += out[k].iterations;
                    }
                    tot.ok[backend][metric] += ok;
                    tot.runs[backend][metric] += n;
                    printf("pair=%s,%s overlap=%.2f model_points=%zu scene_points=%zu metric=%s backend=%s "
                           "success=%u/%u worst_rot_deg=%.3f worst_shift_mm=%.3f mean_iterations=%.1f ms=%.1f",
                           a->name, b->name, ov, b->icp_n, a->cloud.n, mname, backend ? "cuda" : "cpu", ok, n,
                           worst_rot, worst_shift * 1e3, iters / n, ms);
                    if (backend == 1 && use_cpu) {
                        double diff = 0;
                        unsigned same = 0;
                        for (uint32_t k = 0; k < n; ++k) {
                            for (int e = 0; e < 16; ++e)
                                diff = fmax(diff, fabs(res[k].pose[e] - cpu_res[k].pose[e]));
                            same += res[k].iterations == cpu_res[k].iterations;
                        }
                        printf(" max_pose_diff_vs_cpu=%.2e same_iterations=%u/%u", diff, same, n);
                    }
                    printf("\n");
                    fflush(stdout);
                }
            }
            grip_icp_cuda_scene_free(dev);
            grip_kdtree3d_free(tree);
        }
    for (int backend = 0; backend < 2; ++backend)
        for (int metric = 0; metric < 2; ++metric)
            if (tot.runs[backend][metric])
                printf("total backend=%s metric=%s success=%u/%u rate=%.3f\n", backend ? "cuda" : "cpu",
                       metric ? "point_to_plane" : "point_to_point", tot.ok[backend][metric], tot.runs[backend][metric],
                       (double)tot.ok[backend][metric] / tot.runs[backend][metric]);
    free(poses);
    free(ids);
    free(res);
    free(cpu_res);
    for (int i = 0; i < n_scans; ++i) {
        host_cloud_free(&scans[i].cloud);
        free(scans[i].normals);
        free(scans[i].icp_xyz);
    }
    grip_ctx_free(ctx);
    return 0;
}
