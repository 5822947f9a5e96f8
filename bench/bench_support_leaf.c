/* bench_support_leaf.c -- what the descriptor front's support_leaf (a voxel-grid support, stages/descriptor_front.h)
 * buys on the CPU twins (or on the GPU: --device cuda) and what it costs in descriptors: a large cloud described by
 * the fpfh and shot stages (device = cpu by default, normals computed from the 10 nearest, the cloud as a scene: keypoints by uniform sampling with
 * scene_leaf) with support_leaf 0 (the cloud itself) and with each given leaf. The keypoints are the same for every
 * leaf (they are chosen on the cloud). Per stage and leaf: the support points, the median wall time of describe()
 * (normals, keypoints and descriptors) over R runs, the speed-up, and how far the descriptors moved from those over
 * the whole cloud: recall@1 (the share of described keypoints whose nearest descriptor, L2 among all the keypoints'
 * descriptors without the support leaf, is their own), the share whose nearest belongs to a keypoint within
 * scene_leaf of their own (a neighbouring keypoint: on dense keypoints of a smooth surface, neighbours' descriptors
 * are nearly alike), and the median of |d_leaf - d_0| / |d_0|.
 *
 * Usage: bench_support_leaf [--repeat R] [--radius r] [--scene-leaf l] [--device cpu|cuda] CLOUD.pcd|ply LEAF...
 * e.g. `grip-host synth --out /tmp/s` (a 640 x 480 scene, 307,200 points), then
 * `bench_support_leaf --repeat 3 /tmp/s/scene.pcd 0.0025 0.005 0.01`. Not a test. */
#include "core/ctx.h"
#include "host_util.h"
#include "io/cloud_io.h"
#include "stages/registry.h"
#include "stages/stage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_args {
    int repeat;
    const char *radius, *scene_leaf, *device;
} bench_args;

/* One describe() of cloud by impl with support_leaf = leaf; *ms its wall time. */
static grip_features *describe(grip_ctx *ctx, const grip_stage_impl *impl, const bench_args *a, const char *leaf,
                               const grip_cloud *cloud, double *ms)
{
    grip_kv kv[] = {{"device", a->device},
                    {"radius", a->radius},
                    {"scene_leaf", a->scene_leaf},
                    {"support_leaf", leaf},
                    {"normals_k", "10"}};
    grip_stage *st = NULL;
    if (grip_stage_create(impl, ctx, kv, 5, &st) != GRIP_OK) {
        fprintf(stderr, "bench_support_leaf: %s: %s\n", impl->name, ctx->last_error);
        exit(1);
    }
    grip_features *f = NULL;
    double t0 = host_now_ms();
    grip_status s = impl->describe(st, cloud, GRIP_ROLE_SCENE, NULL, GRIP_MEM_HOST, &f);
    *ms = host_now_ms() - t0;
    grip_stage_destroy(st);
    if (s != GRIP_OK) {
        fprintf(stderr, "bench_support_leaf: %s, support_leaf %s: %s\n", impl->name, leaf, ctx->last_error);
        exit(1);
    }
    return f;
}

static int row_is_nan(const float *row)
{
    return isnan(row[0]);
}

static double distance2(const float *a, const float *b, size_t dim)
{
    double d = 0.0;
    for (size_t j = 0; j < dim; ++j)
        d += ((double)a[j] - b[j]) * ((double)a[j] - b[j]);
    return d;
}

static double point_distance2(const float *p, const float *q)
{
    double d = 0.0;
    for (int a = 0; a < 3; ++a)
        d += ((double)p[a] - q[a]) * ((double)p[a] - q[a]);
    return d;
}

/* recall@1 of leaf's rows among base's, the share whose nearest is a keypoint within `near` of their own, and the
 * median relative distance to their own row; *described: rows valid on both sides. */
static void drift(const grip_features *base, const grip_features *leaf, double near, double *recall,
                  double *recall_near, double *relative, size_t *described)
{
    size_t k = base->descriptors.rows, dim = base->descriptors.cols, hits = 0, hits_near = 0, valid = 0;
    const float *b = base->descriptors.data, *l = leaf->descriptors.data, *xyz = base->keypoint_xyz.data;
    double *rel = malloc((k ? k : 1) * sizeof *rel);
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : hits, hits_near, valid)
    for (size_t i = 0; i < k; ++i) {
        rel[i] = NAN;
        if (row_is_nan(b + dim * i) || row_is_nan(l + dim * i))
            continue;
        ++valid;
        size_t best = i;
        double best_d = distance2(l + dim * i, b + dim * i, dim);
        for (size_t j = 0; j < k; ++j) {
            if (j == i || row_is_nan(b + dim * j))
                continue;
            double d = distance2(l + dim * i, b + dim * j, dim);
            if (d < best_d || (d == best_d && j < best)) {
                best_d = d;
                best = j;
            }
        }
        hits += best == i;
        hits_near += point_distance2(xyz + 3 * i, xyz + 3 * best) <= near * near;
        double len = 0.0;
        for (size_t j = 0; j < dim; ++j)
            len += (double)b[dim * i + j] * b[dim * i + j];
        rel[i] = len > 0 ? sqrt(distance2(l + dim * i, b + dim * i, dim) / len) : NAN;
    }
    size_t m = 0;
    for (size_t i = 0; i < k; ++i)
        if (!isnan(rel[i]))
            rel[m++] = rel[i];
    *relative = host_median(rel, m);
    free(rel);
    *recall = valid ? (double)hits / (double)valid : NAN;
    *recall_near = valid ? (double)hits_near / (double)valid : NAN;
    *described = valid;
}

static void bench_stage(grip_ctx *ctx, const grip_stage_impl *impl, const bench_args *a, const grip_cloud *cloud,
                        char **leaves, int n_leaves)
{
    double *ms = malloc((size_t)a->repeat * sizeof *ms), base_ms = 0.0;
    grip_features *base = NULL;
    for (int l = -1; l < n_leaves; ++l) {
        const char *leaf = l < 0 ? "0" : leaves[l];
        grip_features *f = NULL;
        for (int r = 0; r < a->repeat; ++r) {
            if (f)
                f->release(f);
            f = describe(ctx, impl, a, leaf, cloud, &ms[r]);
        }
        double t = host_median(ms, (size_t)a->repeat);
        if (l < 0) {
            base = f;
            base_ms = t;
            printf("| %s | 0 (off) | %llu | %.0f | 1.0 | 1.000 | 1.000 | 0 |\n", impl->name,
                   (unsigned long long)f->keypoints.rows, t);
            fflush(stdout);
            continue;
        }
        if (f->keypoints.rows != base->keypoints.rows ||
            memcmp(f->keypoints.data, base->keypoints.data, f->keypoints.rows * sizeof(uint32_t)) != 0) {
            fprintf(stderr, "bench_support_leaf: %s: the keypoints changed with support_leaf %s\n", impl->name, leaf);
            exit(1);
        }
        double recall = 0.0, recall_near = 0.0, relative = 0.0;
        size_t described = 0;
        drift(base, f, atof(a->scene_leaf), &recall, &recall_near, &relative, &described);
        printf("| %s | %s | %llu | %.0f | %.1f | %.3f | %.3f | %.3f |\n", impl->name, leaf,
               (unsigned long long)described, t, base_ms / t, recall, recall_near, relative);
        fflush(stdout);
        f->release(f);
    }
    base->release(base);
    free(ms);
}

int main(int argc, char **argv)
{
    bench_args a = {3, "0.05", "0.03", "cpu"};
    int i = 1;
    for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (strcmp(argv[i], "--repeat") == 0)
            a.repeat = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--radius") == 0)
            a.radius = argv[i + 1];
        else if (strcmp(argv[i], "--scene-leaf") == 0)
            a.scene_leaf = argv[i + 1];
        else if (strcmp(argv[i], "--device") == 0)
            a.device = argv[i + 1];
        else
            break;
    }
    if (i >= argc || a.repeat < 1) {
        fprintf(stderr,
                "usage: bench_support_leaf [--repeat R] [--radius r] [--scene-leaf l] [--device cpu|cuda] CLOUD "
                "LEAF...\n");
        return 2;
    }
    host_cloud c = {0};
    char err[512];
    if (cloud_read(argv[i], &c, err, sizeof err) != 0) {
        fprintf(stderr, "bench_support_leaf: %s\n", err);
        return 1;
    }
    grip_cloud cloud;
    memset(&cloud, 0, sizeof cloud);
    cloud.struct_size = sizeof cloud;
    cloud.width = c.width;
    cloud.height = c.height;
    cloud.xyz = grip_array_host_view(GRIP_F32, c.n, 3, c.xyz);
    memcpy(cloud.viewpoint, c.viewpoint, sizeof cloud.viewpoint);
    grip_ctx *ctx = NULL;
    if (grip_ctx_new(NULL, &ctx) != GRIP_OK)
        return 1;
    printf("%s: %zu points (%zu finite), radius %s, scene_leaf %s, device %s, median of %d runs\n", argv[i], c.n,
           host_cloud_count_finite(&c), a.radius, a.scene_leaf, a.device, a.repeat);
    printf("| stage | support_leaf | keypoints (described) | describe ms | speed-up | recall@1 | nearest within "
           "scene_leaf | median rel. distance |\n|---|---|---|---|---|---|---|---|\n");
    bench_stage(ctx, &grip_descriptor_fpfh, &a, &cloud, argv + i + 1, argc - i - 1);
    bench_stage(ctx, &grip_descriptor_shot, &a, &cloud, argv + i + 1, argc - i - 1);
    grip_ctx_free(ctx);
    host_cloud_free(&c);
    return 0;
}
