/* normals_propagate.c -- orientation by breadth-first propagation over the symmetric kNN graph (see
 * normals_propagate.h); the decisions are normals_propagate_math.h's, shared with the GPU twin. */
#include "descriptor/normals_propagate.h"
#include "descriptor/normals_propagate_math.h"

#include <stdlib.h>

/* The graph as two CSR lists over the points: out (each defined point's k + 1 nearest, itself and undefined ones
 * dropped) and its reverse, so that a point's neighbours are out[i] and in[i]. */
typedef struct graph {
    size_t *out_first, *in_first; /* n + 1 */
    uint32_t *out, *in;
} graph;

static void graph_free(graph *g)
{
    free(g->out_first);
    free(g->in_first);
    free(g->out);
    free(g->in);
}

static grip_status graph_build(grip_ctx *ctx, const float *xyz, size_t n, const grip_kdtree3d *tree, uint32_t k,
                               const float *normals, graph *g)
{
    const size_t m = (size_t)k + 1;
    uint32_t *nbr = malloc(m * sizeof *nbr);
    float *sqdist = malloc(m * sizeof *sqdist);
    g->out_first = calloc(n + 1, sizeof *g->out_first);
    g->in_first = calloc(n + 2, sizeof *g->in_first);
    g->out = malloc((n * k + 1) * sizeof *g->out);
    g->in = malloc((n * k + 1) * sizeof *g->in);
    if (!nbr || !sqdist || !g->out_first || !g->in_first || !g->out || !g->in) {
        free(nbr);
        free(sqdist);
        return grip_fail(ctx, GRIP_ENOMEM, "normals (propagate): out of memory for the graph of %zu points", n);
    }
    size_t edges = 0;
    for (size_t i = 0; i < n; ++i) {
        g->out_first[i] = edges;
        if (!grip_propagate_defined(xyz + 3 * i, normals + 4 * i))
            continue;
        const size_t found = grip_kdtree3d_knn(tree, xyz + 3 * i, m, nbr, sqdist);
        for (size_t e = 0; e < found && edges - g->out_first[i] < k; ++e)
            if (nbr[e] != i && grip_propagate_defined(xyz + 3 * (size_t)nbr[e], normals + 4 * (size_t)nbr[e]))
                g->out[edges++] = nbr[e];
    }
    g->out_first[n] = edges;
    /* the reverse: counts shifted by two, prefix sums, then each edge i -> j lands in j's list */
    for (size_t e = 0; e < edges; ++e)
        ++g->in_first[(size_t)g->out[e] + 2];
    for (size_t i = 2; i <= n + 1; ++i)
        g->in_first[i] += g->in_first[i - 1];
    for (size_t i = 0; i < n; ++i)
        for (size_t e = g->out_first[i]; e < g->out_first[i + 1]; ++e)
            g->in[g->in_first[(size_t)g->out[e] + 1]++] = (uint32_t)i;
    free(nbr);
    free(sqdist);
    return GRIP_OK;
}

static int by_key_descending(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The walk's working arrays. */
typedef struct walk {
    uint32_t *state; /* level that oriented the point, or GRIP_PROPAGATE_UNSET */
    uint64_t *best;  /* this level's best edge key per candidate, 0 when none */
    uint32_t *round; /* the points this round oriented, level after level: the last level's are the frontier */
} walk;

static void turn(float *row)
{
    row[0] = -row[0];
    row[1] = -row[1];
    row[2] = -row[2];
}

/* One candidate i met from the oriented j: keeps the best edge the stage accepts, lists i the first time. */
static void offer(walk *w, const float *xyz, const float *normals, uint32_t i, uint32_t j, float accept,
                  uint32_t *candidates, size_t *n_candidates)
{
    if (w->state[i] != GRIP_PROPAGATE_UNSET)
        return;
    const float *ni = normals + 4 * (size_t)i, *nj = normals + 4 * (size_t)j;
    const uint64_t key = grip_propagate_edge_key(ni, nj, j);
    if (!grip_propagate_accepts(key, accept, grip_propagate_tangent(xyz + 3 * (size_t)i, xyz + 3 * (size_t)j, ni, nj)))
        return;
    if (w->best[i] == 0)
        candidates[(*n_candidates)++] = i;
    if (key > w->best[i])
        w->best[i] = key;
}

/* One round from seed: for each stage's acceptance, level after level until none reaches a new point; a stage
 * starts from every point the round has oriented. *level: the next free level number. */
static void walk_round(walk *w, const graph *g, const float *xyz, float *normals, uint32_t seed, uint32_t *level,
                       size_t *round_size)
{
    size_t n_round = 1;
    w->round[0] = seed;
    w->state[seed] = (*level)++;
    for (int stage = 0; stage < GRIP_PROPAGATE_STAGES; ++stage) {
        const float accept = grip_propagate_stage_accept(stage);
        const uint32_t *frontier = w->round;
        size_t n_frontier = n_round;
        while (n_frontier > 0) {
            uint32_t *candidates = w->round + n_round;
            size_t n_candidates = 0;
            for (size_t f = 0; f < n_frontier; ++f) {
                const uint32_t j = frontier[f];
                for (size_t e = g->out_first[j]; e < g->out_first[j + 1]; ++e)
                    offer(w, xyz, normals, g->out[e], j, accept, candidates, &n_candidates);
                for (size_t e = g->in_first[j]; e < g->in_first[j + 1]; ++e)
                    offer(w, xyz, normals, g->in[e], j, accept, candidates, &n_candidates);
            }
            for (size_t c = 0; c < n_candidates; ++c) {
                const uint32_t i = candidates[c];
                const uint32_t j = grip_propagate_edge_source(w->best[i]);
                if (grip_propagate_turns(normals + 4 * (size_t)i, normals + 4 * (size_t)j))
                    turn(normals + 4 * (size_t)i);
                w->state[i] = *level;
                w->best[i] = 0;
            }
            ++*level;
            frontier = candidates;
            n_frontier = n_candidates;
            n_round += n_candidates;
        }
    }
    *round_size = n_round;
}

/* The round's vote: when more of its points face the centroid than point away from it, the whole round turns. */
static void round_vote(const walk *w, size_t n_round, const float *xyz, const float c[3], float *normals)
{
    size_t toward = 0;
    for (size_t r = 0; r < n_round; ++r)
        toward += (size_t)grip_propagate_seed_turns(xyz + 3 * (size_t)w->round[r], c,
                                                    normals + 4 * (size_t)w->round[r]);
    if (2 * toward > n_round)
        for (size_t r = 0; r < n_round; ++r)
            turn(normals + 4 * (size_t)w->round[r]);
}

grip_status grip_normals_propagate(grip_ctx *ctx, const float *xyz, size_t n, const grip_kdtree3d *tree, uint32_t k,
                                   const float centroid[3], float *normals)
{
    if ((!xyz || !normals || !centroid) && n > 0)
        return grip_fail(ctx, GRIP_EINVAL, "normals (propagate): NULL %s with %zu points",
                         !xyz       ? "xyz"
                         : !normals ? "normals"
                                    : "centroid",
                         n);
    if (k < 1 || k > GRIP_NORMALS_PROPAGATE_MAX_K)
        return grip_fail(ctx, GRIP_EINVAL, "normals (propagate): k = %u is not in 1..%d", k,
                         GRIP_NORMALS_PROPAGATE_MAX_K);
    if (n >= UINT32_MAX)
        return grip_fail(ctx, GRIP_EINVAL, "normals (propagate): %zu points, more than it indexes", n);
    if (n == 0)
        return GRIP_OK;
    grip_kdtree3d *own = NULL;
    if (!tree) {
        grip_status s = grip_kdtree3d_build(ctx, xyz, n, &own);
        if (s)
            return s;
        tree = own;
    }
    graph g = {0};
    walk w = {0};
    uint64_t *seeds = malloc(n * sizeof *seeds);
    grip_status s = graph_build(ctx, xyz, n, tree, k, normals, &g);
    grip_kdtree3d_free(own);
    w.state = malloc(n * sizeof *w.state);
    w.best = calloc(n, sizeof *w.best);
    w.round = malloc(n * sizeof *w.round);
    if (!s && (!seeds || !w.state || !w.best || !w.round))
        s = grip_fail(ctx, GRIP_ENOMEM, "normals (propagate): out of memory for %zu points", n);
    if (!s) {
        /* seeds in the order the rounds take them: the farthest from the centroid first, ties to the lower index */
        size_t n_seeds = 0;
        for (size_t i = 0; i < n; ++i) {
            w.state[i] = GRIP_PROPAGATE_UNSET;
            if (grip_propagate_defined(xyz + 3 * i, normals + 4 * i))
                seeds[n_seeds++] = grip_propagate_seed_key(xyz + 3 * i, centroid, (uint32_t)i);
        }
        qsort(seeds, n_seeds, sizeof *seeds, by_key_descending);
        uint32_t level = 0;
        for (size_t r = 0; r < n_seeds; ++r) {
            const uint32_t seed = grip_propagate_edge_source(seeds[r]); /* ~p in the low word, as an edge's ~j */
            if (w.state[seed] != GRIP_PROPAGATE_UNSET)
                continue;
            if (grip_propagate_seed_turns(xyz + 3 * (size_t)seed, centroid, normals + 4 * (size_t)seed))
                turn(normals + 4 * (size_t)seed);
            size_t n_round = 0;
            walk_round(&w, &g, xyz, normals, seed, &level, &n_round);
            round_vote(&w, n_round, xyz, centroid, normals);
        }
    }
    free(seeds);
    free(w.state);
    free(w.best);
    free(w.round);
    graph_free(&g);
    return s;
}
