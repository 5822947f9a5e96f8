/* cmd_bench.c -- `grip-host bench`: its command line, and the dispatch to the benchmark it names (subcommands.h). */
#include "bench/bench_common.h"
#include "bench/subcommands.h"
#include "bench/workloads.h"
#include "commands/commands.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- command line ------------------------------------------------------------------------------------------ */

static void bench_usage(FILE *f)
{
    fprintf(f,
            "usage: grip-host [--plugin PATH] bench descriptors [--points N] [--keypoints K] [--radius R]\n"
            "                 [--repeat N] [--seed N] [--set section.key=value]... [--json]\n"
            "       grip-host [--plugin PATH] bench recall [--model M --scene S --gt T.xf] [--leaf L] [--radius R]\n"
            "                 [--sweep] [--repeat N] [--points N] [--seed N] [--set section.key=value]... [--json]\n"
            "       [mpirun -np N] grip-host [--plugin PATH] bench index [--mpi] [--rows N] [--queries M] [--dim D]\n"
            "                 [--k K] [--reference F.f32 --query-file Q.f32] [--set index.key=value]... [--repeat N]\n"
            "                 [--sync-checks L] [--sync-groups G] [--recall] [--out FILE] [--mpi-timeout S]\n"
            "                 [--bandwidth] [--seed N]\n"
            "       grip-host [--plugin PATH] bench pipeline [--workloads LIST] [--config FILE] [--set ...]...\n"
            "                 [--data DIR] [--repeat N] [--warmup N] [--scale F] [--seed N] [--json] [--out FILE]\n"
            "                 [--svg FILE]\n"
            "descriptors: times every descriptor stage (or the one --set descriptor.impl=NAME names) on a generated\n"
            "  surface of N points (default 1000000) whose density puts ~%d points within the radius (default 0.02),\n"
            "  at K host-given keypoints (default 100000): a warm-up, then N timed describes (default 5), the median;\n"
            "  once with normals the stage computes and once with the surface's own normals.\n"
            "recall: scene keypoints by uniform sampling (leaf L, default 5 mesh resolutions), the same vertices as\n"
            "  model keypoints; the fraction of scene keypoints whose nearest model descriptor (index bruteforce,\n"
            "  match knn) is the true vertex, and the fraction within 2 mesh resolutions of it. Radius default: 15\n"
            "  mesh resolutions. Without --model/--scene/--gt: a generated model of N points (default 20000) and a\n"
            "  posed, noisy copy. --sweep: shot exact and max_neighbors at 25, 50, 100%% of the median support, then\n"
            "  every other descriptor stage.\n"
            "index: builds the index stage --set index.impl names (default bruteforce) over N reference rows (default\n"
            "  100000 SHOT-like rows of D = 352, or the raw float32 rows of --reference) and times the k nearest\n"
            "  (default 1) of M queries (default 1000, noisy copies of reference rows, or --query-file): median of\n"
            "  --repeat rounds (default 3). --mpi, under mpirun: rows split across the ranks by contiguous ranges,\n"
            "  one CUDA device a rank (its local rank), queries broadcast from rank 0, each query's k nearest merged\n"
            "  at rank 0 (exact indexes give one process's result). --sync-checks L: the forest's bound sync (Hu\n"
            "  2017 5.4.2): a probe of L leaves, the ranks' least k-th distance as each query's bound, then the\n"
            "  bounded search. --recall: recall@1 against exact brute force. --out: rank 0 writes m x k uint32\n"
            "  rows then m x k float32 squared distances. --bandwidth: MPI all-gather and all-reduce bandwidth.\n"
            "  --mpi-timeout: the longest wait for the other ranks, in s (default 600), then the job ends.\n"
            "pipeline: whole recognition runs (describe models, index, describe scene, match, group, verify) on named\n"
            "  workloads (default " WORKLOADS_DEFAULT "): tutorial is PCL's tutorial pair from\n"
            "  --data DIR or $GRIP_DATA (skipped when absent); synth-PxM a generated scene of about P = 1e5, 1e6 or 3e6\n"
            "  points against M = 1, 10 or 100 models (each a rendered view; with 1, one object's 8 views merged);\n"
            "  NAME:N runs that one N times. Config: --config, else configs/pcl_tutorial.conf (tutorial) or\n"
            "  configs/synth_hough3d_icp.conf (synth), built in; then --set. --warmup untimed runs (default 1), then\n"
            "  --repeat timed ones (default 5): the median of each stage and of the whole run, bytes host<->device,\n"
            "  instances found. --scale F (0 < F <= 1): generated images of F times the area, for quick runs.\n"
            "  --json: JSON lines instead of text; --out FILE: the JSON lines into FILE too; --svg FILE: stacked bars\n"
            "  of the stage medians, one per workload.\n",
            BENCH_TARGET_SUPPORT);
}

static const char *bench_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "grip-host: bench: %s needs a value\n", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

static int parse_count(const char *opt, const char *text, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (!*text || *end || text[0] == '-' || v < lo || v > hi) {
        fprintf(stderr, "grip-host: bench: %s: '%s' is not an integer in [%llu, %llu]\n", opt, text,
                (unsigned long long)lo, (unsigned long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_length(const char *opt, const char *text, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (!*text || *end || !isfinite(v) || v <= 0) {
        fprintf(stderr, "grip-host: bench: %s: '%s' is not a positive number\n", opt, text);
        return -1;
    }
    *out = v;
    return 0;
}

/* Parses one option with a value; 0 ok, -1 bad. */
static int parse_valued(const char *a, const char *v, bench_options *b)
{
    uint64_t n = 0;
    if (strcmp(a, "--set") == 0) b->sets[b->n_sets++] = v;
    else if (strcmp(a, "--plugin") == 0) b->plugin = v;
    else if (strcmp(a, "--model") == 0) b->model = v;
    else if (strcmp(a, "--scene") == 0) b->scene = v;
    else if (strcmp(a, "--gt") == 0) b->gt = v;
    else if (strcmp(a, "--points") == 0) return parse_count(a, v, 100, 4000000000ull, &b->points);
    else if (strcmp(a, "--keypoints") == 0) return parse_count(a, v, 1, 4000000000ull, &b->keypoints);
    else if (strcmp(a, "--seed") == 0) return parse_count(a, v, 0, UINT64_MAX, &b->seed);
    else if (strcmp(a, "--radius") == 0) return parse_length(a, v, &b->radius);
    else if (strcmp(a, "--leaf") == 0) return parse_length(a, v, &b->leaf);
    else if (strcmp(a, "--rows") == 0) return parse_count(a, v, 1, 4294967294ull, &b->rows);
    else if (strcmp(a, "--queries") == 0) return parse_count(a, v, 1, 4294967294ull, &b->queries);
    else if (strcmp(a, "--reference") == 0) b->reference = v;
    else if (strcmp(a, "--query-file") == 0) b->query_file = v;
    else if (strcmp(a, "--out") == 0) b->out = v;
    else if (strcmp(a, "--mpi-timeout") == 0) return parse_length(a, v, &b->mpi_timeout);
    else if (strcmp(a, "--config") == 0) b->config = v;
    else if (strcmp(a, "--data") == 0) b->data_dir = v;
    else if (strcmp(a, "--workloads") == 0) b->workloads = v;
    else if (strcmp(a, "--svg") == 0) b->svg = v;
    else if (strcmp(a, "--scale") == 0) return parse_length(a, v, &b->scale);
    else if (strcmp(a, "--warmup") == 0) {
        if (parse_count(a, v, 0, 100, &n) != 0)
            return -1;
        b->warmup = (int)n;
    }
    else if (strcmp(a, "--dim") == 0 || strcmp(a, "--k") == 0 || strcmp(a, "--sync-checks") == 0 ||
             strcmp(a, "--sync-groups") == 0) {
        if (parse_count(a, v, strcmp(a, "--sync-checks") == 0 ? 0 : 1, 1u << 20, &n) != 0)
            return -1;
        uint32_t *field = strcmp(a, "--dim") == 0 ? &b->dim : strcmp(a, "--k") == 0 ? &b->k
                        : strcmp(a, "--sync-checks") == 0 ? &b->sync_checks : &b->sync_groups;
        *field = (uint32_t)n;
    } else if (strcmp(a, "--repeat") == 0) {
        if (parse_count(a, v, 1, 1000, &n) != 0)
            return -1;
        b->repeat = (int)n;
    } else {
        fprintf(stderr, "grip-host: bench: unknown option '%s'\n", a);
        return -1;
    }
    return 0;
}

static int parse_bench_args(int argc, char **argv, bench_options *b)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "--json") == 0) b->json = 1;
        else if (strcmp(a, "--sweep") == 0) b->sweep = 1;
        else if (strcmp(a, "--mpi") == 0) b->mpi = 1;
        else if (strcmp(a, "--recall") == 0) b->recall = 1;
        else if (strcmp(a, "--bandwidth") == 0) b->bandwidth = 1;
        else if (a[0] != '-' && !b->what) b->what = a;
        else if (a[0] != '-') {
            fprintf(stderr, "grip-host: bench: unexpected argument '%s'\n", a);
            return -1;
        } else if (!(v = bench_value(argc, argv, &i)) || parse_valued(a, v, b) != 0)
            return -1;
    }
    return 0;
}

int cmd_bench(const host_options *o, int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            bench_usage(stdout);
            return 0;
        }
    bench_options b;
    memset(&b, 0, sizeof b);
    b.plugin = o->plugin;
    b.argv0 = o->argv0;
    b.json = o->json;
    b.repeat = o->repeat;
    b.seed = o->seed; /* main() defaults it to 1 */
    b.config = o->config;
    b.data_dir = o->data_dir;
    b.warmup = -1;
    b.sets = calloc((size_t)o->n_sets + (size_t)argc + 1, sizeof *b.sets);
    if (!b.sets) {
        fprintf(stderr, "grip-host: bench: out of memory\n");
        return 1;
    }
    for (int i = 0; i < o->n_sets; i++)
        b.sets[b.n_sets++] = o->sets[i];
    int rc = 2;
    if (parse_bench_args(argc, argv, &b) != 0)
        bench_usage(stderr);
    else if (b.what && strcmp(b.what, "descriptors") == 0)
        rc = bench_descriptors(&b);
    else if (b.what && strcmp(b.what, "recall") == 0)
        rc = bench_recall(&b);
    else if (b.what && strcmp(b.what, "index") == 0)
        rc = bench_index(&b, argc, argv);
    else if (b.what && strcmp(b.what, "pipeline") == 0)
        rc = bench_pipeline(&b);
    else {
        fprintf(stderr, "grip-host: bench: %s '%s'\n", b.what ? "unknown benchmark" : "which benchmark?",
                b.what ? b.what : "descriptors, recall, index or pipeline");
        bench_usage(stderr);
    }
    free(b.sets);
    return rc;
}
