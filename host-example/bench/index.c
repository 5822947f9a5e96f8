/* index.c -- `grip-host bench index`: one index stage of the plugin timed over a reference set, in one process or
 * sharded across the ranks of an MPI job (--mpi, under mpirun; comm.h, shard.h):
 *
 *  - rank r builds the stage's index over its contiguous rows of the reference set, on the CUDA device numbered
 *    by its place on its host (its local rank) or on the CPU; rank 0 makes or reads the queries and broadcasts
 *    them; each rank searches its shard; the ranks' k nearest are merged at rank 0 by an MPI reduction (sorted
 *    by squared distance, ties to the lower global row), so that an exact index gives one process's result;
 *  - the forest's bound sync (--sync-checks L, after Hu 2017 5.4.2): each rank first searches its forest with L
 *    leaves a query, the ranks agree on each query's bound (the least k-th distance any rank found: no row beyond
 *    it can enter the global k nearest), and the full search then runs with that bound, which prunes its queue.
 *    The ABI's search takes one bound a call, so the queries are searched in --sync-groups groups of alike
 *    bounds, each with its group's largest;
 *  - --recall: each rank also searches its shard by exact brute force, and rank 0 reports recall@1 (a query's
 *    first neighbour at the exact first distance);
 *  - --out FILE: rank 0 writes the merged result, m x k uint32 rows then m x k float32 squared distances, so that
 *    runs on different numbers of ranks can be compared byte for byte;
 *  - --bandwidth: times MPI's all-gather and all-reduce over growing messages (algorithm bandwidth).
 *
 * Every rank must be given the same command: the ranks compare a hash of it first. Every step ends with an
 * agreement (shard_comm_agree): a rank that fails makes all stop, and rank 0 names the rank and why. */
#include "bench/bench_common.h"
#include "bench/index_rows.h"
#include "bench/subcommands.h"
#include "commands/commands.h"
#include "host_util.h"
#include "loader.h"
#include "shard/comm.h"
#include "shard/shard.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_INDEX_SETS 32

/* the index stage's settings from --set index.key=value (impl apart) */
typedef struct index_setup {
    const char *impl;
    grip_kv kv[MAX_INDEX_SETS + 1];
    char *owned[MAX_INDEX_SETS + 1];
    uint32_t n_kv;
    const char *device; /* index.device as given, "auto" when not */
} index_setup;

/* One run's state on this rank. */
typedef struct index_bench {
    const bench_options *b;
    shard_comm comm;
    grip_loaded_plugin lp;
    const grip_plugin *t;
    grip_ctx *ctx;
    const grip_stage_impl *impl;
    index_setup setup;
    uint64_t n, m, first, count; /* reference rows, queries, this rank's shard */
    uint32_t dim, k;
    int on_cuda; /* the index stage was given this rank's CUDA device */
    float *ref, *queries;
    char why[1024]; /* this rank's failure, for the next agreement */
} index_bench;

static void setup_free(index_setup *s)
{
    for (uint32_t i = 0; i < s->n_kv; i++)
        free(s->owned[i]);
    s->n_kv = 0;
}

/* --set entries: only index.* keys; impl apart. 0, or -1 after saying why. */
static int setup_parse(const bench_options *b, index_setup *s)
{
    memset(s, 0, sizeof *s);
    s->impl = "bruteforce";
    s->device = "auto";
    for (int i = 0; i < b->n_sets; i++) {
        const char *e = b->sets[i], *eq = strchr(e, '=');
        if (strncmp(e, "index.", 6) != 0 || !eq || eq == e + 6) {
            fprintf(stderr, "grip-host: bench index: --set %s: only index.key=value settings apply here\n", e);
            return -1;
        }
        if (s->n_kv == MAX_INDEX_SETS) {
            fprintf(stderr, "grip-host: bench index: more than %d --set entries\n", MAX_INDEX_SETS);
            return -1;
        }
        char *key = host_strndup(e + 6, (size_t)(eq - e - 6));
        if (!key)
            return -1;
        if (strcmp(key, "impl") == 0) {
            s->impl = eq + 1;
            free(key);
            continue;
        }
        if (strcmp(key, "device") == 0)
            s->device = eq + 1;
        s->owned[s->n_kv] = key;
        s->kv[s->n_kv].key = key;
        s->kv[s->n_kv].value = eq + 1;
        s->n_kv++;
    }
    return 0;
}

/* The hash of what every rank must agree on: the settings and the bench's arguments as given. */
static uint64_t command_hash(const bench_options *b, int argc, char **argv)
{
    uint64_t h = SHARD_HASH_SEED;
    for (int i = 0; i < b->n_sets; i++)
        h = shard_hash(h, b->sets[i], strlen(b->sets[i]) + 1);
    for (int i = 0; i < argc; i++)
        h = shard_hash(h, argv[i], strlen(argv[i]) + 1);
    return h;
}

/* The agreement after a step: 0 when every rank succeeded; else rank 0 has said why, every rank returns 1. */
static int step_done(index_bench *x)
{
    int failed = shard_comm_agree(&x->comm, x->why);
    if (failed < 0)
        shard_comm_abort(&x->comm, 3);
    return failed > 0;
}

static void fail_status(index_bench *x, grip_status s, const char *what)
{
    snprintf(x->why, sizeof x->why, "%s: %s: %s", what, x->t->status_str(s), x->t->ctx_last_error(x->ctx));
}

/* Loads the plugin and makes this rank's context, on the device of its local rank when the stage may use CUDA. */
static void open_plugin(index_bench *x)
{
    char path[4096], err[512];
    host_options ho;
    memset(&ho, 0, sizeof ho);
    ho.argv0 = x->b->argv0;
    ho.plugin = x->b->plugin;
    if (host_plugin_path(&ho, path, sizeof path) != 0) {
        snprintf(x->why, sizeof x->why, "no plugin to load");
        return;
    }
    if (grip_loader_open(path, &x->lp, err, sizeof err) != 0) {
        snprintf(x->why, sizeof x->why, "%s", err);
        return;
    }
    x->t = &x->lp.table;
    x->impl = grip_loader_find_stage(&x->lp, GRIP_STAGE_INDEX, x->setup.impl);
    if (!x->impl) {
        snprintf(x->why, sizeof x->why, "%.900s has no index stage '%s'", path, x->setup.impl);
        return;
    }
    grip_ctx *probe = NULL;
    grip_status s = x->t->ctx_create(NULL, &probe);
    if (s) {
        snprintf(x->why, sizeof x->why, "ctx_create: %s", x->t->status_str(s));
        return;
    }
    int32_t devices = x->t->device_count ? x->t->device_count(probe) : 0;
    x->t->ctx_destroy(probe);
    int wants_cuda = strcmp(x->setup.device, "cpu") != 0 && (x->impl->backends & GRIP_BACKEND_CUDA);
    grip_ctx_options opt = {sizeof opt, -1, 0};
    if (wants_cuda && devices > 0) {
        if (x->comm.local_rank >= devices) {
            snprintf(x->why, sizeof x->why,
                     "local rank %d of %d ranks on this host, which has %d CUDA device%s: start at most one rank "
                     "a device (mpirun -np / --map-by), or set index.device=cpu",
                     x->comm.local_rank, x->comm.local_size, devices, devices == 1 ? "" : "s");
            return;
        }
        opt.device_ordinal = x->comm.local_rank;
        x->on_cuda = 1;
    }
    /* ranks that share a host's cores share them out (a CPU index's OpenMP threads) */
    if (x->comm.local_size > 1 && !(wants_cuda && devices > 0)) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        long each = cores / x->comm.local_size;
        opt.threads = (uint32_t)(each < 1 ? 1 : each);
    }
    s = x->t->ctx_create(&opt, &x->ctx);
    if (s)
        snprintf(x->why, sizeof x->why, "ctx_create: %s: %s", x->t->status_str(s), x->t->ctx_last_error(NULL));
}

/* Sizes, then this rank's rows; rank 0's queries go to every rank. */
static void load_rows(index_bench *x)
{
    const bench_options *b = x->b;
    x->dim = b->dim ? b->dim : 352;
    x->k = b->k ? b->k : 1;
    if (b->reference) {
        if (index_rows_count_file(b->reference, x->dim, &x->n, x->why, sizeof x->why) != 0)
            return;
    } else {
        x->n = b->rows ? b->rows : 100000;
    }
    if (x->n >= UINT32_MAX || x->n < (uint64_t)x->comm.size) {
        snprintf(x->why, sizeof x->why, "%llu reference rows for %d ranks: at least one a rank, below 2^32",
                 (unsigned long long)x->n, x->comm.size);
        return;
    }
    shard_range(x->n, x->comm.size, x->comm.rank, &x->first, &x->count);
    x->ref = malloc((size_t)x->count * x->dim * sizeof(float));
    if (!x->ref) {
        snprintf(x->why, sizeof x->why, "out of memory for %llu reference rows", (unsigned long long)x->count);
        return;
    }
    if (b->reference) {
        if (index_rows_read_file(b->reference, x->dim, x->first, x->count, x->ref, x->why, sizeof x->why) != 0)
            return;
    } else {
        index_rows_reference(b->seed, x->dim, x->first, x->count, x->ref);
    }
    if (x->comm.rank != 0)
        return;
    if (b->query_file) {
        if (index_rows_count_file(b->query_file, x->dim, &x->m, x->why, sizeof x->why) != 0)
            return;
    } else {
        x->m = b->queries ? b->queries : 1000;
    }
    x->queries = malloc((size_t)x->m * x->dim * sizeof(float));
    if (!x->queries) {
        snprintf(x->why, sizeof x->why, "out of memory for %llu queries", (unsigned long long)x->m);
        return;
    }
    if (b->query_file)
        index_rows_read_file(b->query_file, x->dim, 0, x->m, x->queries, x->why, sizeof x->why);
    else
        index_rows_queries(b->seed, x->dim, x->n, x->m, x->queries);
}

/* The number of queries, then room for them, on every rank (rank 0 has both). */
static int share_query_count(index_bench *x)
{
    uint64_t m = x->m;
    if (shard_comm_bcast(&x->comm, &m, sizeof m, "query count") != 0)
        return -1;
    x->m = m;
    if (!x->queries && !(x->queries = malloc((size_t)m * x->dim * sizeof(float)))) {
        snprintf(x->why, sizeof x->why, "out of memory for %llu queries", (unsigned long long)m);
        return 0;
    }
    return 0;
}

/* Builds `impl` over this rank's shard with settings kv (n of them); *stage_out gets the stage, to destroy after
 * the index is released. NULL after noting why. */
static grip_index *build_shard(index_bench *x, const grip_stage_impl *impl, const grip_kv *kv, uint32_t n,
                               grip_stage **stage_out)
{
    grip_stage *st = NULL;
    grip_index *ix = NULL;
    grip_status s = impl->create(x->ctx, kv, n, &st);
    if (s) {
        fail_status(x, s, "index stage");
        return NULL;
    }
    grip_array ref = host_array(GRIP_F32, x->count, x->dim, x->ref);
    s = impl->build(st, &ref, NULL, &ix);
    if (s) {
        fail_status(x, s, "build");
        impl->destroy(st);
        return NULL;
    }
    *stage_out = st;
    return ix;
}

/* The setup's settings with `key` left out, plus key=value when value is not NULL (into kv; returns how many). */
static uint32_t settings_with(const index_setup *s, const char *key, const char *value, grip_kv *kv)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n_kv; i++)
        if (strcmp(s->kv[i].key, key) != 0)
            kv[n++] = s->kv[i];
    if (value)
        kv[n++] = (grip_kv){key, value};
    return n;
}

/* The k nearest in this rank's shard of queries [0, m) of q, as hits on global rows. */
static int search_shard(index_bench *x, grip_index *ix, const float *q, size_t m, float bound, uint32_t *ids,
                        float *sqdist, shard_hit *hits)
{
    grip_array qa = host_array(GRIP_F32, m, x->dim, (void *)q);
    grip_array ia = host_array(GRIP_U32, m, x->k, ids), da = host_array(GRIP_F32, m, x->k, sqdist);
    grip_status s = ix->search(ix, &qa, x->k, bound, &ia, &da);
    if (s) {
        fail_status(x, s, "search");
        return -1;
    }
    shard_hits_of(ids, sqdist, m, x->k, x->first, hits);
    return 0;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* One query round's times on this rank, in ms. */
typedef struct round_ms {
    double bcast;  /* queries from rank 0 */
    double probe;  /* bound sync: the probe search of L leaves */
    double sync;   /* bound sync: the all-reduce of the bounds */
    double search; /* the shard's search (with the sync: the grouped bounded searches) */
    double wait;   /* the agreement after the search: waiting for the slowest rank */
    double reduce; /* the top-k reduction to rank 0 */
    double total;  /* the whole round */
} round_ms;
#define ROUND_FIELDS 7

/* Scratch of a round: m x k ids, distances and hits, m bounds, a grouped copy of the queries. */
typedef struct round_buf {
    uint32_t *ids;
    float *sqdist, *bounds, *sorted, *group_q;
    shard_hit *hits, *group_hits;
    uint32_t *group_of;
} round_buf;

static void round_buf_free(round_buf *r)
{
    free(r->ids);
    free(r->sqdist);
    free(r->bounds);
    free(r->sorted);
    free(r->group_q);
    free(r->hits);
    free(r->group_hits);
    free(r->group_of);
    memset(r, 0, sizeof *r);
}

static int round_buf_alloc(round_buf *r, size_t m, uint32_t k, uint32_t dim, int sync)
{
    memset(r, 0, sizeof *r);
    r->ids = malloc(m * k * sizeof *r->ids);
    r->sqdist = malloc(m * k * sizeof *r->sqdist);
    r->hits = malloc(m * k * sizeof *r->hits);
    if (sync) {
        r->bounds = malloc(m * sizeof *r->bounds);
        r->sorted = malloc(m * sizeof *r->sorted);
        r->group_of = malloc(m * sizeof *r->group_of);
        r->group_q = malloc(m * dim * sizeof *r->group_q);
        r->group_hits = malloc(m * k * sizeof *r->group_hits);
    }
    return r->ids && r->sqdist && r->hits &&
           (!sync || (r->bounds && r->sorted && r->group_of && r->group_q && r->group_hits));
}

/* The bounded search of the sync: queries in `groups` groups of alike bounds (quantiles), each group searched
 * with its largest bound (the ABI takes one bound a call), the hits put back in query order. */
static int search_grouped(index_bench *x, grip_index *ix, round_buf *r, uint32_t groups)
{
    size_t m = (size_t)x->m, k = x->k;
    if (groups > m) /* each group's edge is one of the m sorted bounds */
        groups = (uint32_t)m;
    memcpy(r->sorted, r->bounds, m * sizeof *r->sorted);
    qsort(r->sorted, m, sizeof *r->sorted, cmp_float);
    for (size_t q = 0; q < m; q++) { /* the group of a query: how many group edges lie below its bound */
        uint32_t g = 0;
        while (g + 1 < groups && r->bounds[q] > r->sorted[(m * (g + 1)) / groups - 1])
            g++;
        r->group_of[q] = g;
    }
    for (uint32_t g = 0; g < groups; g++) {
        size_t n = 0;
        float bound = 0;
        for (size_t q = 0; q < m; q++)
            if (r->group_of[q] == g) {
                memcpy(r->group_q + n * x->dim, x->queries + q * x->dim, x->dim * sizeof(float));
                bound = r->bounds[q] > bound ? r->bounds[q] : bound;
                n++;
            }
        if (n == 0)
            continue;
        if (search_shard(x, ix, r->group_q, n, bound, r->ids, r->sqdist, r->group_hits) != 0)
            return -1;
        size_t j = 0;
        for (size_t q = 0; q < m; q++)
            if (r->group_of[q] == g)
                memcpy(r->hits + q * k, r->group_hits + (j++) * k, k * sizeof(shard_hit));
    }
    return 0;
}

/* One round: queries broadcast, the shard searched (probe, bound sync, bounded search when probe is set), the
 * ranks' hits reduced to rank 0 (into r->hits there). 0, 1 when a rank's search failed (said), -1 on an MPI
 * error. */
static int query_round(index_bench *x, grip_index *ix, grip_index *probe, uint32_t groups, round_buf *r, round_ms *t)
{
    size_t m = (size_t)x->m, k = x->k;
    memset(t, 0, sizeof *t);
    double t0 = host_now_ms(), t1;
    if (shard_comm_bcast(&x->comm, x->queries, m * x->dim * sizeof(float), "queries") != 0)
        return -1;
    t1 = host_now_ms();
    t->bcast = t1 - t0;
    x->why[0] = 0;
    if (probe) {
        /* a rank whose probe failed still joins the all-reduce (with no bound), then says so */
        int probed = search_shard(x, probe, x->queries, m, INFINITY, r->ids, r->sqdist, r->hits) == 0;
        double t2 = host_now_ms();
        t->probe = t2 - t1;
        for (size_t q = 0; q < m; q++)
            r->bounds[q] = probed ? r->hits[q * k + k - 1].sqdist : INFINITY;
        if (shard_comm_allreduce_f32(&x->comm, r->bounds, m, 0, "bounds") != 0)
            return -1;
        t1 = host_now_ms();
        t->sync = t1 - t2;
        if (probed)
            search_grouped(x, ix, r, groups);
    } else {
        search_shard(x, ix, x->queries, m, INFINITY, r->ids, r->sqdist, r->hits);
    }
    double t3 = host_now_ms();
    t->search = t3 - t1;
    if (step_done(x))
        return 1;
    double t4 = host_now_ms();
    t->wait = t4 - t3;
    if (shard_comm_reduce_hits(&x->comm, r->hits, m, x->k, "top-k reduction") != 0)
        return -1;
    double t5 = host_now_ms();
    t->reduce = t5 - t4;
    t->total = t5 - t0;
    return 0;
}

/* `repeat` rounds; *med gets each field's median over the rounds of its maximum over the ranks. On rank 0, hits
 * holds the last round's merged result. */
static int time_rounds(index_bench *x, grip_index *ix, grip_index *probe, round_buf *r, round_ms *med)
{
    int repeat = x->b->repeat > 0 ? x->b->repeat : 3;
    uint32_t groups = x->b->sync_groups ? x->b->sync_groups : 16;
    double *all = malloc((size_t)repeat * ROUND_FIELDS * sizeof *all);
    if (!all)
        return -1;
    int rc = 0;
    for (int i = 0; i < repeat && rc == 0; i++) {
        round_ms t;
        rc = query_round(x, ix, probe, groups, r, &t);
        if (rc == 0)
            rc = shard_comm_allreduce_f64(&x->comm, (double *)&t, ROUND_FIELDS, 1, "times") ? -1 : 0;
        for (int f = 0; f < ROUND_FIELDS && rc == 0; f++)
            all[(size_t)f * repeat + i] = ((double *)&t)[f];
    }
    for (int f = 0; f < ROUND_FIELDS && rc == 0; f++) {
        qsort(all + (size_t)f * repeat, (size_t)repeat, sizeof *all, host_compare_doubles);
        ((double *)med)[f] = all[(size_t)f * repeat + repeat / 2];
    }
    free(all);
    return rc;
}

/* --bandwidth: MPI's all-gather (each rank adds bytes / ranks) and all-reduce (min over floats) of growing
 * messages; rank 0 prints the median of 5 of each as algorithm bandwidth (message bytes / time). */
static int measure_bandwidth(index_bench *x, FILE *out)
{
    const size_t largest = (size_t)256 << 20;
    char *buf = malloc(largest), *all = malloc(largest);
    int rc = buf && all ? 0 : -1;
    if (buf)
        memset(buf, 0, largest);
    for (size_t bytes = (size_t)1 << 20; bytes <= largest && rc == 0; bytes *= 4) {
        double t[2][5];
        for (int i = 0; i < 5 && rc == 0; i++) {
            double t0 = host_now_ms();
            rc = shard_comm_allgather_bytes(&x->comm, buf, bytes / (size_t)x->comm.size, all, "bandwidth");
            double t1 = host_now_ms();
            rc = rc ? rc : shard_comm_allreduce_f32(&x->comm, (float *)buf, bytes / sizeof(float), 0, "bandwidth");
            t[0][i] = t1 - t0;
            t[1][i] = host_now_ms() - t1;
        }
        for (int op = 0; op < 2 && rc == 0 && x->comm.rank == 0; op++) {
            qsort(t[op], 5, sizeof(double), host_compare_doubles);
            fprintf(out, "bandwidth op=%s ranks=%d bytes=%zu ms=%.3f GBps=%.2f\n", op ? "allreduce" : "allgather",
                    x->comm.size, bytes, t[op][2], (double)bytes / (t[op][2] * 1e6));
        }
    }
    free(buf);
    free(all);
    return rc;
}

static void print_round(FILE *out, const char *what, const round_ms *t)
{
    double comm = t->bcast + t->sync + t->reduce;
    fprintf(out,
            "%s total_ms=%.3f bcast_ms=%.3f probe_ms=%.3f sync_ms=%.3f search_ms=%.3f wait_ms=%.3f reduce_ms=%.3f "
            "comm_share=%.4f\n",
            what, t->total, t->bcast, t->probe, t->sync, t->search, t->wait, t->reduce,
            t->total > 0 ? comm / t->total : 0.0);
}

/* Rank 0: the merged result to --out (ids, then squared distances). */
static void write_result(index_bench *x, const shard_hit *hits)
{
    FILE *f = fopen(x->b->out, "wb");
    size_t n = (size_t)x->m * x->k;
    int ok = f != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = fwrite(&hits[i].row, sizeof(uint32_t), 1, f) == 1;
    for (size_t i = 0; ok && i < n; i++)
        ok = fwrite(&hits[i].sqdist, sizeof(float), 1, f) == 1;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok)
        snprintf(x->why, sizeof x->why, "cannot write %s", x->b->out);
}

/* --recall: exact brute force over each shard, the same way; recall@1 on rank 0 (of queries with a neighbour). */
static int measure_recall(index_bench *x, const shard_hit *approx, double *recall)
{
    const grip_stage_impl *bf = grip_loader_find_stage(&x->lp, GRIP_STAGE_INDEX, "bruteforce");
    grip_kv kv[2];
    uint32_t n = 0;
    for (uint32_t i = 0; i < x->setup.n_kv; i++)
        if (strcmp(x->setup.kv[i].key, "device") == 0)
            kv[n++] = x->setup.kv[i];
    grip_stage *st = NULL;
    grip_index *ix = bf ? build_shard(x, bf, kv, n, &st) : NULL;
    if (!bf)
        snprintf(x->why, sizeof x->why, "the plugin has no bruteforce index for --recall");
    if (step_done(x))
        return 1;
    round_buf r;
    round_ms t;
    int rc = round_buf_alloc(&r, (size_t)x->m, x->k, x->dim, 0) ? query_round(x, ix, NULL, 1, &r, &t) : -1;
    if (rc == 0 && x->comm.rank == 0) {
        size_t found = 0, valid = 0;
        for (size_t q = 0; q < (size_t)x->m; q++) {
            const shard_hit e = r.hits[q * x->k], a = approx[q * x->k];
            valid += e.row != UINT32_MAX;
            found += e.row != UINT32_MAX && a.sqdist == e.sqdist;
        }
        *recall = valid ? (double)found / (double)valid : NAN;
    }
    round_buf_free(&r);
    ix->release(ix);
    bf->destroy(st);
    return rc;
}

int bench_index(const bench_options *b, int argc, char **argv)
{
    index_bench x;
    memset(&x, 0, sizeof x);
    x.b = b;
    char err[512];
    if (setup_parse(b, &x.setup) != 0) {
        setup_free(&x.setup);
        return 2;
    }
    if (shard_comm_open(b->mpi, b->mpi_timeout > 0 ? b->mpi_timeout : 600, &x.comm, err, sizeof err) != 0) {
        fprintf(stderr, "grip-host: bench index --mpi: %s\n", err);
        setup_free(&x.setup);
        return 2;
    }
    FILE *out = stdout;
    int rc = 1;
    grip_stage *st = NULL, *probe_st = NULL;
    grip_index *ix = NULL, *probe = NULL;
    round_buf r;
    memset(&r, 0, sizeof r);

    /* every rank runs the same command */
    uint64_t *hashes = calloc((size_t)x.comm.size, sizeof *hashes);
    if (!hashes || shard_comm_allgather_u64(&x.comm, command_hash(b, argc, argv), hashes, "command check") != 0)
        shard_comm_abort(&x.comm, 3);
    for (int i = 1; i < x.comm.size && !x.why[0]; i++)
        if (hashes[i] != hashes[0] && (x.comm.rank == i || x.comm.rank == 0))
            snprintf(x.why, sizeof x.why,
                     "the ranks were given different commands (rank %d's hash %016llx, rank 0's %016llx): every "
                     "rank must run the same grip-host bench index arguments",
                     i, (unsigned long long)hashes[i], (unsigned long long)hashes[0]);
    free(hashes);
    if (step_done(&x))
        goto done;
    if (b->bandwidth) {
        rc = measure_bandwidth(&x, out) == 0 ? 0 : 1;
        goto done;
    }
    open_plugin(&x);
    if (step_done(&x))
        goto done;
    double t0 = host_now_ms();
    load_rows(&x);
    double data_ms = host_now_ms() - t0;
    if (step_done(&x))
        goto done;
    if (share_query_count(&x) != 0)
        shard_comm_abort(&x.comm, 3);
    if (step_done(&x))
        goto done;

    grip_kv kv[MAX_INDEX_SETS + 1];
    double times[2] = {0, 0}; /* build ms, probe build ms: maxima over the ranks */
    t0 = host_now_ms();
    ix = build_shard(&x, x.impl, x.setup.kv, x.setup.n_kv, &st);
    times[0] = host_now_ms() - t0;
    if (step_done(&x))
        goto done;
    char checks[32];
    if (b->sync_checks) {
        snprintf(checks, sizeof checks, "%u", b->sync_checks);
        t0 = host_now_ms();
        probe = build_shard(&x, x.impl, kv, settings_with(&x.setup, "checks", checks, kv), &probe_st);
        times[1] = host_now_ms() - t0;
        if (step_done(&x))
            goto done;
    }
    if (shard_comm_allreduce_f64(&x.comm, times, 2, 1, "times") != 0)
        shard_comm_abort(&x.comm, 3);
    if (!round_buf_alloc(&r, (size_t)x.m, x.k, x.dim, probe != NULL))
        snprintf(x.why, sizeof x.why, "out of memory for the results of %llu queries", (unsigned long long)x.m);
    if (step_done(&x))
        goto done;
    round_ms med;
    int got = time_rounds(&x, ix, probe, &r, &med);
    if (got < 0)
        shard_comm_abort(&x.comm, 3);
    if (got > 0)
        goto done;
    if (x.comm.rank == 0) {
        fprintf(out,
                "bench index: ranks=%d rows=%llu queries=%llu dim=%u k=%u impl=%s device=%s exact=%u "
                "sync_checks=%u sync_groups=%u data_ms=%.1f build_ms=%.3f probe_build_ms=%.3f\n",
                x.comm.size, (unsigned long long)x.n, (unsigned long long)x.m, x.dim, x.k, x.impl->name,
                x.on_cuda ? "cuda" : "cpu", ix->exact, b->sync_checks,
                b->sync_checks ? (b->sync_groups ? b->sync_groups : 16) : 0, data_ms, times[0], times[1]);
        print_round(out, "round:", &med);
        if (b->out)
            write_result(&x, r.hits);
    }
    if (step_done(&x))
        goto done;
    if (b->recall) {
        double recall = NAN;
        int got_recall = measure_recall(&x, r.hits, &recall);
        if (got_recall < 0)
            shard_comm_abort(&x.comm, 3);
        if (got_recall > 0)
            goto done;
        if (x.comm.rank == 0)
            fprintf(out, "recall@1=%.4f\n", recall);
    }
    rc = 0;
done:
    round_buf_free(&r);
    if (probe)
        probe->release(probe);
    if (ix)
        ix->release(ix);
    if (probe_st)
        x.impl->destroy(probe_st);
    if (st)
        x.impl->destroy(st);
    if (x.ctx)
        x.t->ctx_destroy(x.ctx);
    grip_loader_close(&x.lp);
    free(x.ref);
    free(x.queries);
    setup_free(&x.setup);
    shard_comm_close(&x.comm);
    return rc;
}
