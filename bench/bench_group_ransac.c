/* bench_group_ransac.c -- times the group stage's RANSAC over clusters (grip_clusters_ransac, which both grouping
 * twins and both CUDA group stages run on the host) on input like the demo scenes' (tests/support/ransac_clusters.h:
 * objects' clusters, a third with several motions, outliers), with the OpenMP threads asked for. Prints
 *   bench group_ransac clusters=<n> members=<lo>-<hi> rounds=<r> threads=<t> median_ms=<ms> runs=<runs> out=<n>
 * (out: the clusters it returns, the same for any thread count; test_gc checks them bit for bit).
 * Usage: bench_group_ransac [threads (default 1)] [rounds (3)] [clusters (20)] [runs (11)] [members (0)]; members > 0
 * makes every cluster that size: `bench_group_ransac T 3 1 11 600` is the demo scenes' shape, one dominant cluster
 * (its first set stops after a few dozen iterations, the leftover sets of rounds 2 and 3 run to the 10,000 cap).
 * Not a test: prints a line and exits 1 on a failure. */
#include "core/ctx.h"
#include "host_util.h"
#include "ransac_clusters.h"

#include <stdio.h>
#include <stdlib.h>

#define MIN_MEMBERS 10
#define MAX_MEMBERS 200

static unsigned long arg(int argc, char **argv, int i, unsigned long fallback)
{
    return argc > i ? strtoul(argv[i], NULL, 10) : fallback;
}

int main(int argc, char **argv)
{
    const uint32_t threads = (uint32_t)arg(argc, argv, 1, 1), rounds = (uint32_t)arg(argc, argv, 2, 3);
    const size_t n_clusters = arg(argc, argv, 3, 20), runs = arg(argc, argv, 4, 11);
    const uint32_t members = (uint32_t)arg(argc, argv, 5, 0);
    const uint32_t lo = members ? members : MIN_MEMBERS, hi = members ? members : MAX_MEMBERS;
    const grip_ctx_options o = {sizeof o, -1, threads};
    grip_ctx *ctx = NULL;
    grip_ransac_scene sc;
    double *ms = calloc(runs + 1, sizeof *ms);
    if (!ms || runs == 0 || grip_ctx_new(&o, &ctx) != GRIP_OK || !grip_ransac_scene_make(1, n_clusters, lo, hi, &sc)) {
        printf("bench group_ransac: setup failed\n");
        return 1;
    }
    /* the group stages' defaults: bin size 0.01 as inlier threshold, PCL's iterations and seed */
    const grip_ransac_params rp = {0.01, GRIP_RANSAC_PCL_ITERATIONS, GRIP_RANSAC_PCL_SEED, rounds, 5};
    size_t n_out = 0;
    for (size_t r = 0; r < runs; ++r) {
        grip_cluster *c = grip_ransac_scene_clusters(&sc);
        size_t n = sc.n_clusters;
        double t0 = host_now_ms();
        grip_status st = c ? grip_clusters_ransac(ctx, &rp, sc.model_kp, sc.scene_kp, sc.corr, &c, &n) : GRIP_ENOMEM;
        ms[r] = host_now_ms() - t0;
        if (st != GRIP_OK) {
            printf("bench group_ransac: failed: %s\n", grip_ctx_error_text(ctx));
            return 1;
        }
        n_out = n;
        grip_clusters_free(c, n);
    }
    printf("bench group_ransac clusters=%zu members=%u-%u rounds=%u threads=%u median_ms=%.3f runs=%zu out=%zu\n",
           n_clusters, lo, hi, rounds, threads, host_median(ms, runs), runs, n_out);
    grip_ransac_scene_free(&sc);
    grip_ctx_free(ctx);
    free(ms);
    return 0;
}
