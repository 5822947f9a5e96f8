/* ransac_draws.c -- see ransac_draws.h. PCL computes the spread test in float (the gaps) against a double threshold,
 * and so does this file, in PCL's order of operations. */
#include "group/ransac_draws.h"
#include "core/line_alloc.h"
#include "group/mt19937.h"
#include "math/sym3_eigen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* PCL: SampleConsensusModel::max_sample_checks_, the draws one getSamples call makes before it gives up */
#define MAX_SAMPLE_CHECKS 1000

/* Clusters of up to APART_MAX members tabulate the spread test of every pair once their search has drawn APART_AFTER
 * samples: a long search on a small cluster (a leftover set of outliers, where a dozen draws fail the test for each
 * that passes) then tests a pair by one lookup. The table holds the very comparisons the draws would make (the gap
 * is the same either way round: its terms are squares of negated differences). */
#define APART_MAX 256
#define APART_AFTER 256

/* A draw takes three outputs of the twister, the i-th bounded by m - i, and a twist makes 624 outputs: 208 whole
 * draws. */
_Static_assert(GRIP_MT19937_N % GRIP_RANSAC_SAMPLE_SIZE == 0, "a twist makes whole draws");

/* Everything a stream writes sits in cache lines of its own (grip_line_alloc): one thread draws while the others fit
 * beside it, and a write here must never invalidate a line the fits read. */
struct grip_ransac_draws {
    const float (*src)[3]; /* the members' model keypoints (borrowed) */
    uint32_t m;
    uint32_t *order; /* PCL's shuffled_indices_, as member positions (grip_line_alloc) */
    grip_mt19937 mt;
    double spread;    /* every pair of a sample must be farther apart than this, squared */
    uint64_t drawn;   /* draws made, good or not (APART_AFTER) */
    uint32_t bad_run; /* draws in a row that failed since the last good one: MAX_SAMPLE_CHECKS ends the stream */
    uint64_t *apart;  /* the spread test of every pair as bits, rows of apart_words words; NULL: computed */
    size_t apart_words;
    uint64_t magic[GRIP_RANSAC_SAMPLE_SIZE]; /* of the bounds m - i of a draw's remainders (remainder_by) */
    uint32_t position[GRIP_MT19937_N];       /* the current twist's draws: the place each output swaps to */
    uint32_t next;                           /* of position, in outputs */
};

/* PCL's sample_dist_thresh_: the squared mean of the standard deviations along the principal axes of the members'
 * model keypoints. */
static double spread_threshold(const float (*src)[3], size_t m)
{
    double mean[3] = {0, 0, 0}, cov[9] = {0};
    for (size_t i = 0; i < m; ++i)
        for (int d = 0; d < 3; ++d)
            mean[d] += src[i][d];
    for (int d = 0; d < 3; ++d)
        mean[d] /= (double)m;
    for (size_t i = 0; i < m; ++i)
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                cov[r * 3 + c] += (src[i][r] - mean[r]) * (src[i][c] - mean[c]);
    for (int i = 0; i < 9; ++i)
        cov[i] /= (double)m;
    double values[3], vecs[9];
    grip_sym3_eigen(cov, values, vecs);
    double spread = 0.0;
    for (int i = 0; i < 3; ++i)
        spread += sqrt(values[i] > 0.0 ? values[i] : 0.0);
    spread /= 3.0;
    return spread * spread;
}

grip_ransac_draws *grip_ransac_draws_new(const float (*src)[3], size_t m, uint32_t seed)
{
    if (m < GRIP_RANSAC_SAMPLE_SIZE || m > UINT32_MAX)
        return NULL;
    grip_ransac_draws *d = grip_line_alloc(sizeof *d);
    if (!d)
        return NULL;
    memset(d, 0, sizeof *d);
    d->src = src;
    d->m = (uint32_t)m;
    d->order = grip_line_alloc(m * sizeof *d->order);
    if (!d->order) {
        grip_ransac_draws_free(d);
        return NULL;
    }
    for (uint32_t i = 0; i < d->m; ++i)
        d->order[i] = i;
    grip_mt19937_seed(&d->mt, seed);
    d->spread = spread_threshold(src, m);
    for (uint32_t i = 0; i < GRIP_RANSAC_SAMPLE_SIZE; ++i)
        d->magic[i] = UINT64_MAX / (d->m - i) + 1;
    d->next = GRIP_MT19937_N;
    return d;
}

void grip_ransac_draws_free(grip_ransac_draws *d)
{
    if (!d)
        return;
    free(d->order);
    free(d->apart);
    free(d);
}

/* a % d for 32-bit a and d, given magic = 2^64 / d rounded up (UINT64_MAX / d + 1): Lemire, Kaser and Kurz's exact
 * remainder by multiplication, "Faster remainder by direct computation" (2019), without 128-bit integers: a draw's
 * three remainders are by bounds fixed for the search, and a multiplication costs less than a division. */
static uint32_t remainder_by(uint32_t a, uint64_t magic, uint32_t d)
{
    /* low: the fraction a / d in 64 bits; the remainder is the high word of low * d */
    const uint64_t low = magic * a;
    return (uint32_t)(((low >> 32) * d + (((low & 0xffffffffu) * d) >> 32)) >> 32);
}

/* Twists the generator and computes the positions of the twist's 208 draws: output i of a draw, uniform on
 * [0, INT32_MAX] as PCL takes it (next_int31), gives i + its remainder by m - i. The outputs are tempered in a loop
 * of their own, which the compiler vectorizes, then reduced; no step waits on another, so all of it runs ahead of
 * the swaps, which must run one after another. */
static void twist_positions(grip_ransac_draws *d)
{
    grip_mt19937_twist(&d->mt);
    uint32_t out[GRIP_MT19937_N];
    for (uint32_t k = 0; k < GRIP_MT19937_N; ++k)
        out[k] = grip_mt19937_temper(d->mt.state[k]) >> 1;
    for (uint32_t t = 0; t < GRIP_MT19937_N; t += GRIP_RANSAC_SAMPLE_SIZE)
        for (uint32_t i = 0; i < GRIP_RANSAC_SAMPLE_SIZE; ++i)
            d->position[t + i] = i + remainder_by(out[t + i], d->magic[i], d->m - i);
    d->mt.next = GRIP_MT19937_N; /* every output taken */
    d->next = 0;
}

/* SampleConsensusModel::drawIndexSample: a partial Fisher-Yates shuffle of order that persists across draws. The
 * bound is below 2^32 and the draw below 2^31, so the 32-bit remainder is PCL's. */
static inline void shuffle_draw(uint32_t *order, const uint32_t position[GRIP_RANSAC_SAMPLE_SIZE],
                                uint32_t sample[GRIP_RANSAC_SAMPLE_SIZE])
{
    for (uint32_t i = 0; i < GRIP_RANSAC_SAMPLE_SIZE; ++i) {
        const uint32_t j = position[i], t = order[i];
        order[i] = order[j];
        order[j] = t;
        sample[i] = order[i];
    }
}

static float squared_gap(const float a[3], const float b[3])
{
    float x = a[0] - b[0], y = a[1] - b[1], z = a[2] - b[2];
    return x * x + y * y + z * z;
}

static inline int members_apart(const grip_ransac_draws *d, uint32_t a, uint32_t b)
{
    if (d->apart)
        return (int)(d->apart[(size_t)a * d->apart_words + b / 64] >> (b % 64) & 1u);
    return (double)squared_gap(d->src[a], d->src[b]) > d->spread;
}

/* isSampleGood, in PCL's order of the pairs */
static inline int sample_good(const grip_ransac_draws *d, const uint32_t sample[GRIP_RANSAC_SAMPLE_SIZE])
{
    return members_apart(d, sample[1], sample[0]) && members_apart(d, sample[2], sample[0]) &&
           members_apart(d, sample[2], sample[1]);
}

/* Fills d->apart; without memory the draws go on computing each gap (the same answers). */
static void tabulate_apart(grip_ransac_draws *d)
{
    const size_t m = d->m, words = (m + 63) / 64;
    uint64_t *apart = grip_line_alloc(m * words * sizeof *apart);
    if (!apart)
        return;
    memset(apart, 0, m * words * sizeof *apart);
    for (size_t a = 0; a < m; ++a)
        for (size_t b = 0; b < a; ++b)
            if ((double)squared_gap(d->src[a], d->src[b]) > d->spread) {
                apart[a * words + b / 64] |= (uint64_t)1 << (b % 64);
                apart[b * words + a / 64] |= (uint64_t)1 << (a % 64);
            }
    d->apart_words = words;
    d->apart = apart;
}

static void draw_one(grip_ransac_draws *d, uint32_t sample[GRIP_RANSAC_SAMPLE_SIZE])
{
    if (d->next == GRIP_MT19937_N)
        twist_positions(d);
    shuffle_draw(d->order, d->position + d->next, sample);
    d->next += GRIP_RANSAC_SAMPLE_SIZE;
    if (++d->drawn == APART_AFTER && d->m <= APART_MAX)
        tabulate_apart(d);
}

/* SampleConsensusModel::getSamples: draws until the three model keypoints are spread enough, giving up after
 * MAX_SAMPLE_CHECKS draws in a row; once given up, the stream has ended. */
static int draw_good(grip_ransac_draws *d, uint32_t sample[GRIP_RANSAC_SAMPLE_SIZE])
{
    while (d->bad_run < MAX_SAMPLE_CHECKS) {
        draw_one(d, sample);
        if (sample_good(d, sample)) {
            d->bad_run = 0;
            return 1;
        }
        d->bad_run++;
    }
    return 0;
}

/* The draws once the spread test is tabulated, where a long search spends its time: draw_good's stream, made faster
 * three ways, each giving the same samples.
 * - The order's first three entries, which every draw swaps, stay in locals (registers): a swap with a later entry is
 *   one load and one store, and one among the three a swap of locals. In memory, each draw's swaps would wait on
 *   the previous draw's stores to the same three entries.
 * - The stream's counters stay in locals too: order holds uint32_t, so the compiler must assume that a store to it
 *   may change any uint32_t field of the stream and reload them after it.
 * - The three lookups of the spread test are made at once, without a branch between them: the test is pure, so
 *   PCL's short-circuit order gives the same answer. */
static size_t take_tabulated(grip_ransac_draws *d, uint32_t (*sample)[GRIP_RANSAC_SAMPLE_SIZE], size_t n)
{
    _Static_assert(GRIP_RANSAC_SAMPLE_SIZE == 3, "the head of the order is three locals");
    uint32_t *const order = d->order;
    const uint64_t *const apart = d->apart;
    const size_t words = d->apart_words;
    uint32_t next = d->next, bad_run = d->bad_run;
    uint64_t drawn = d->drawn;
    uint32_t h0 = order[0], h1 = order[1], h2 = order[2], t;
    size_t got = 0;
    while (got < n && bad_run < MAX_SAMPLE_CHECKS) {
        if (next == GRIP_MT19937_N) {
            twist_positions(d);
            next = 0;
        }
        /* shuffle_draw: swap i with j in [i, m) */
        const uint32_t j0 = d->position[next], j1 = d->position[next + 1], j2 = d->position[next + 2];
        if (j0 >= 3) {
            t = order[j0], order[j0] = h0, h0 = t;
        } else if (j0 == 1) {
            t = h1, h1 = h0, h0 = t;
        } else if (j0 == 2) {
            t = h2, h2 = h0, h0 = t;
        }
        if (j1 >= 3) {
            t = order[j1], order[j1] = h1, h1 = t;
        } else if (j1 == 2) {
            t = h2, h2 = h1, h1 = t;
        }
        if (j2 >= 3)
            t = order[j2], order[j2] = h2, h2 = t;
        next += GRIP_RANSAC_SAMPLE_SIZE;
        ++drawn;
        /* sample_good, pairs (1, 0), (2, 0), (2, 1) */
        const uint64_t *const row1 = apart + (size_t)h1 * words, *const row2 = apart + (size_t)h2 * words;
        const uint32_t good = (uint32_t)((row1[h0 / 64] >> (h0 % 64)) & (row2[h0 / 64] >> (h0 % 64)) &
                                         (row2[h1 / 64] >> (h1 % 64))) &
                              1u;
        sample[got][0] = h0, sample[got][1] = h1, sample[got][2] = h2;
        got += good;
        bad_run = good ? 0 : bad_run + 1;
    }
    order[0] = h0, order[1] = h1, order[2] = h2;
    d->next = next;
    d->bad_run = bad_run;
    d->drawn = drawn;
    return got;
}

size_t grip_ransac_draws_take(grip_ransac_draws *d, uint32_t (*sample)[GRIP_RANSAC_SAMPLE_SIZE], size_t n)
{
    size_t got = 0;
    while (got < n && !d->apart && draw_good(d, sample[got]))
        ++got;
    if (got < n && d->apart)
        got += take_tabulated(d, sample + got, n - got);
    return got;
}
