/* bench_group_cuda.c -- times the group stage's GPU work on PCL's correspondence-grouping tutorial (PCL's normals,
 * keypoints, correspondences and BOARD frames, from $GRIP_DATA_DIR/pcl_reference/tutorial) against the CPU twins:
 *  - BOARD frames (radius 0.015, holes on) of the model's 686 and the scene's 3747 keypoints: host in/out
 *    (grip_board_lrf_cuda_host: upload of the cloud and normals, grid, supports, frames, download), and the device
 *    part alone (grip_board_lrf_cuda: supports and frames, the cloud already on the device);
 *  - Hough voting (bin 0.01, threshold 5) and GC consensus (size 0.01, threshold 5) of the 1797 correspondences, then
 *    each with its RANSAC (the CPU twin's, on the host, on both backends).
 * GPU steps: CUDA events around the call, 2 warm-ups, median of 20. CPU twins: wall clock, all OpenMP threads, median
 * of 5. One line per measurement:  bench <name> median_ms=<ms> runs=<n>
 * PCL 1.13 on the 16-core host of the H100 machine: BOARD frames 131-181 ms, Hough 21-69 ms.
 * Usage: GRIP_DATA_DIR=<data> bench_group_cuda. Not a test: prints a line and exits 1 on a failure. */
#define _POSIX_C_SOURCE 200809L
#include "io/cloud_io.h"
#include "core/ctx.h"
#include "core/cuda_bridge.h"
#include "group/board_lrf.h"
#include "group/board_lrf_cuda.h"
#include "group/gc_cuda.h"
#include "group/hough3d_cuda.h"
#include "spatial/neighborhood_cuda.h"
#include "host_util.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define GPU_REPS 20
#define CPU_REPS 5

typedef struct view {
    host_cloud cloud;
    float *normals, *kp, *rf; /* n x 4, k x 3, k x 9 (PCL's BOARD frames) */
    size_t k;
    grip_surface_cuda *surface; /* the cloud and its normals on the device */
    float *kp_dev, *frames_dev;
} view;

typedef struct bench {
    grip_ctx *ctx;
    view model, scene;
    grip_corr *corr;
    size_t n_corr;
    float *frames; /* host, for the host-in/out steps */
} bench;

static const char *data_dir(void)
{
    const char *d = getenv("GRIP_DATA_DIR");
    return d ? d : ".data";
}

/* The whole gzip'd file rel under the data folder: malloc'd, *bytes set; NULL on failure. */
static void *read_gz(const char *rel, size_t *bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/pcl_reference/tutorial/%s", data_dir(), rel);
    gzFile f = gzopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        return NULL;
    }
    size_t cap = 1 << 20, n = 0;
    unsigned char *buf = malloc(cap);
    int got = 0;
    while (buf && (got = gzread(f, buf + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)got;
        if (n == cap) {
            unsigned char *bigger = realloc(buf, cap *= 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
        }
    }
    gzclose(f);
    if (got < 0) {
        free(buf);
        return NULL;
    }
    *bytes = n;
    return buf;
}

static int load_view(view *v, const char *cloud_rel, const char *name)
{
    char path[4096], err[512], rel[128];
    snprintf(path, sizeof path, "%s/%s", data_dir(), cloud_rel);
    if (cloud_read(path, &v->cloud, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    size_t bytes = 0;
    snprintf(rel, sizeof rel, "%s_normals.f32.gz", name);
    v->normals = read_gz(rel, &bytes);
    if (!v->normals || bytes != v->cloud.n * 4 * sizeof(float))
        return 1;
    snprintf(rel, sizeof rel, "%s_keypoints.u32.gz", name);
    uint32_t *idx = read_gz(rel, &bytes);
    if (!idx)
        return 1;
    v->k = bytes / sizeof *idx;
    v->kp = malloc(v->k * 3 * sizeof *v->kp);
    for (size_t i = 0; v->kp && i < v->k; ++i)
        memcpy(v->kp + i * 3, v->cloud.xyz + (size_t)idx[i] * 3, 3 * sizeof(float));
    free(idx);
    snprintf(rel, sizeof rel, "%s_board_rf.f32.gz", name);
    v->rf = read_gz(rel, &bytes);
    return !v->kp || !v->rf || bytes != v->k * 9 * sizeof(float);
}

static int load_corr(bench *b)
{
    char path[4096], header[256];
    snprintf(path, sizeof path, "%s/pcl_reference/tutorial/correspondences.tsv", data_dir());
    FILE *f = fopen(path, "r");
    if (!f || !fgets(header, sizeof header, f))
        return 1;
    size_t cap = 4096;
    b->corr = malloc(cap * sizeof *b->corr);
    unsigned s, m;
    float d;
    while (b->corr && fscanf(f, "%u %u %f", &s, &m, &d) == 3) {
        if (b->n_corr == cap)
            b->corr = realloc(b->corr, (cap *= 2) * sizeof *b->corr);
        if (b->corr)
            b->corr[b->n_corr++] = (grip_corr){s, m, d};
    }
    fclose(f);
    return b->corr == NULL;
}

static grip_status view_to_device(grip_ctx *ctx, view *v)
{
    int device = -1;
    void *kp = NULL, *frames = NULL;
    grip_status st = grip_surface_cuda_create(ctx, v->cloud.xyz, v->cloud.n, &v->surface);
    if (!st)
        st = grip_surface_cuda_set_normals(ctx, v->surface, v->normals, 4);
    if (!st)
        st = grip_cuda_upload(ctx, v->kp, v->k * 3 * sizeof(float), &kp, &device);
    v->kp_dev = kp;
    if (!st)
        st = grip_cuda_alloc(ctx, v->k * 9 * sizeof(float), &frames);
    v->frames_dev = frames;
    return st;
}

static void view_free(view *v)
{
    grip_surface_cuda_free(v->surface);
    grip_cuda_free(v->kp_dev);
    grip_cuda_free(v->frames_dev);
    host_cloud_free(&v->cloud);
    free(v->normals);
    free(v->kp);
    free(v->rf);
}

/* ---- the steps ---- */

typedef grip_status (*step_fn)(bench *b, const view *v);

static grip_status board_host(bench *b, const view *v)
{
    return grip_board_lrf_cuda_host(b->ctx, v->cloud.xyz, GRIP_MEM_HOST, v->normals, GRIP_MEM_HOST, v->cloud.n, v->kp, v->k, 0.015f, 1,
                                    b->frames);
}
static grip_status board_device(bench *b, const view *v)
{
    return grip_board_lrf_cuda(b->ctx, v->surface, v->kp_dev, (uint32_t)v->k, 0.015f, 1, v->frames_dev);
}
static grip_status board_cpu_nearest(bench *b, const view *v)
{
    return grip_board_lrf_ties(b->ctx, v->cloud.xyz, v->normals, v->cloud.n, NULL, v->kp, v->k, 0.015f, 1,
                               GRIP_BOARD_TIES_NEAREST, b->frames);
}
static grip_status board_cpu_pcl(bench *b, const view *v)
{
    return grip_board_lrf(b->ctx, v->cloud.xyz, v->normals, v->cloud.n, NULL, v->kp, v->k, 0.015f, 1, b->frames);
}

static grip_hough3d_params hough_params(void)
{
    grip_hough3d_params p = grip_hough3d_params_default();
    p.bin_size = (double)0.01f;
    p.threshold = (double)5.0f;
    return p;
}

static grip_gc_params gc_params(void)
{
    grip_gc_params p = grip_gc_params_default();
    p.size = (double)0.01f;
    p.threshold = 5;
    return p;
}

typedef grip_status (*hough_fn)(grip_ctx *, const grip_hough3d_params *, const float *, const float *, size_t,
                                const float *, const float *, size_t, const grip_corr *, size_t, grip_cluster **,
                                size_t *);
typedef grip_status (*gc_fn)(grip_ctx *, const grip_gc_params *, const float *, size_t, const float *, size_t,
                             const grip_corr *, size_t, grip_cluster **, size_t *);

static grip_status run_hough(bench *b, hough_fn f)
{
    grip_hough3d_params p = hough_params();
    grip_cluster *c = NULL;
    size_t n = 0;
    grip_status st = f(b->ctx, &p, b->model.kp, b->model.rf, b->model.k, b->scene.kp, b->scene.rf, b->scene.k, b->corr,
                       b->n_corr, &c, &n);
    grip_clusters_free(c, n);
    return st;
}
static grip_status run_gc(bench *b, gc_fn f)
{
    grip_gc_params p = gc_params();
    grip_cluster *c = NULL;
    size_t n = 0;
    grip_status st = f(b->ctx, &p, b->model.kp, b->model.k, b->scene.kp, b->scene.k, b->corr, b->n_corr, &c, &n);
    grip_clusters_free(c, n);
    return st;
}
static grip_status hough_vote_gpu(bench *b, const view *v)
{
    (void)v;
    return run_hough(b, grip_hough3d_vote_cuda);
}
static grip_status hough_vote_cpu(bench *b, const view *v)
{
    (void)v;
    return run_hough(b, grip_hough3d_vote);
}
static grip_status hough_all_gpu(bench *b, const view *v)
{
    (void)v;
    return run_hough(b, grip_hough3d_cluster_cuda);
}
static grip_status hough_all_cpu(bench *b, const view *v)
{
    (void)v;
    return run_hough(b, grip_hough3d_cluster);
}
static grip_status gc_sets_gpu(bench *b, const view *v)
{
    (void)v;
    return run_gc(b, grip_gc_consensus_cuda);
}
static grip_status gc_sets_cpu(bench *b, const view *v)
{
    (void)v;
    return run_gc(b, grip_gc_consensus);
}
static grip_status gc_all_gpu(bench *b, const view *v)
{
    (void)v;
    return run_gc(b, grip_gc_cluster_cuda);
}
static grip_status gc_all_cpu(bench *b, const view *v)
{
    (void)v;
    return run_gc(b, grip_gc_cluster);
}

/* ---- timing ---- */

/* GPU steps: CUDA events (2 warm-ups); CPU steps: wall clock (1 warm-up). Prints the median; 1 on a failure. */
static int time_step(bench *b, const char *name, step_fn step, const view *v, int on_gpu)
{
    const int reps = on_gpu ? GPU_REPS : CPU_REPS;
    double ms[GPU_REPS];
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    int rc = 0;
    for (int r = on_gpu ? -2 : -1; r < reps && rc == 0; ++r) {
        double t0 = host_now_ms();
        cudaEventRecord(start, 0);
        grip_status st = step(b, v);
        cudaEventRecord(stop, 0);
        cudaEventSynchronize(stop);
        double wall = host_now_ms() - t0;
        float t = 0.0f;
        cudaEventElapsedTime(&t, start, stop);
        if (st != GRIP_OK) {
            fprintf(stderr, "%s failed: %s\n", name, grip_ctx_error_text(b->ctx));
            rc = 1;
        }
        if (r >= 0)
            ms[r] = on_gpu ? (double)t : wall;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (rc == 0) {
        qsort(ms, (size_t)reps, sizeof ms[0], host_compare_doubles);
        printf("bench %s median_ms=%.4f runs=%d\n", name, ms[reps / 2], reps);
    }
    return rc;
}

int main(void)
{
    bench b;
    memset(&b, 0, sizeof b);
    if (load_view(&b.model, "pcl/data_repo/correspondence_grouping/milk.pcd", "model") ||
        load_view(&b.scene, "pcl/milk_cartoon_all_small_clorox.pcd", "scene") || load_corr(&b)) {
        fprintf(stderr, "the tutorial data under %s could not be read\n", data_dir());
        return 1;
    }
    printf("tutorial: model %zu points %zu keypoints, scene %zu points %zu keypoints, %zu correspondences\n",
           b.model.cloud.n, b.model.k, b.scene.cloud.n, b.scene.k, b.n_corr);
    b.frames = malloc(b.scene.k * 9 * sizeof *b.frames);
    int rc = !b.frames || grip_ctx_new(NULL, &b.ctx) != GRIP_OK;
    rc = rc || view_to_device(b.ctx, &b.model) || view_to_device(b.ctx, &b.scene);
    const view *views[2] = {&b.model, &b.scene};
    const char *names[2] = {"model", "scene"};
    for (int i = 0; i < 2 && !rc; ++i) {
        char name[96];
        snprintf(name, sizeof name, "board_%s_gpu_host_in_out", names[i]);
        rc = rc || time_step(&b, name, board_host, views[i], 1);
        snprintf(name, sizeof name, "board_%s_gpu_supports_and_frames", names[i]);
        rc = rc || time_step(&b, name, board_device, views[i], 1);
        snprintf(name, sizeof name, "board_%s_cpu_twin_nearest_ties", names[i]);
        rc = rc || time_step(&b, name, board_cpu_nearest, views[i], 0);
        snprintf(name, sizeof name, "board_%s_cpu_twin_pcl_ties", names[i]);
        rc = rc || time_step(&b, name, board_cpu_pcl, views[i], 0);
    }
    rc = rc || time_step(&b, "hough_vote_gpu", hough_vote_gpu, NULL, 1);
    rc = rc || time_step(&b, "hough_vote_cpu_twin", hough_vote_cpu, NULL, 0);
    rc = rc || time_step(&b, "hough_vote_and_ransac_gpu", hough_all_gpu, NULL, 1);
    rc = rc || time_step(&b, "hough_vote_and_ransac_cpu_twin", hough_all_cpu, NULL, 0);
    rc = rc || time_step(&b, "gc_consensus_gpu", gc_sets_gpu, NULL, 1);
    rc = rc || time_step(&b, "gc_consensus_cpu_twin", gc_sets_cpu, NULL, 0);
    rc = rc || time_step(&b, "gc_consensus_and_ransac_gpu", gc_all_gpu, NULL, 1);
    rc = rc || time_step(&b, "gc_consensus_and_ransac_cpu_twin", gc_all_cpu, NULL, 0);
    if (rc && b.ctx)
        fprintf(stderr, "last error: %s\n", grip_ctx_error_text(b.ctx));
    view_free(&b.model);
    view_free(&b.scene);
    free(b.corr);
    free(b.frames);
    grip_ctx_free(b.ctx);
    return rc;
}
