/* test_shard.c -- the arithmetic of grip-host's sharded index (host-example/shard/shard.h) and the rows of
 * `bench index` (bench/index_rows.h), without MPI: contiguous ranges cover the rows once; each shard's exact k
 * nearest (the CPU brute force), turned into global hits and merged in any order, equal the exact k nearest of the
 * whole set, ties included (duplicate rows across shard edges go to the lower global row); padding never wins;
 * a generated row is the same whichever range makes it. The MPI runs themselves: tests/cli/mpi.sh. */
#include "test_support.h"
#include "bench/index_rows.h"
#include "index/bruteforce.h"
#include "shard/shard.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

START_TEST(ranges_cover_every_row_once)
{
    for (uint64_t n = 1; n < 60; n++)
        for (int ranks = 1; ranks <= 9 && (uint64_t)ranks <= n; ranks++) {
            uint64_t next = 0, lo = n, hi = 0;
            for (int r = 0; r < ranks; r++) {
                uint64_t begin, count;
                shard_range(n, ranks, r, &begin, &count);
                ck_assert_uint_eq(begin, next);
                next = begin + count;
                lo = count < lo ? count : lo;
                hi = count > hi ? count : hi;
            }
            ck_assert_uint_eq(next, n);
            ck_assert_uint_le(hi - lo, 1);
        }
}
END_TEST

/* The exact k nearest of whole and of each shard merged: the same rows and distances, for 1 to 5 shards and in
 * both merge orders. Rows repeat (each third row a copy of an earlier one, often in another shard) so that ties
 * are many. */
START_TEST(merged_shards_equal_the_whole)
{
    const size_t n = 600, m = 40, dim = 24;
    const uint32_t k = 7;
    uint64_t rng = 11;
    float *ref = grip_test_uniform_rows(&rng, n, dim, 0.0f, 1.0f);
    float *q = grip_test_uniform_rows(&rng, m, dim, 0.0f, 1.0f);
    ck_assert_ptr_nonnull(ref);
    ck_assert_ptr_nonnull(q);
    for (size_t i = 3; i < n; i += 3)
        memcpy(ref + i * dim, ref + ((i / 3 + 17) % i) * dim, dim * sizeof(float));
    ref[5 * dim] = NAN;                                      /* never returned */
    memcpy(q + 2 * dim, ref + 9 * dim, dim * sizeof(float)); /* a query on a duplicated row: distance-0 ties */
    grip_ctx *ctx = grip_test_ctx();
    uint32_t *ids = malloc(m * k * sizeof *ids), *sids = malloc(m * k * sizeof *sids);
    float *d = malloc(m * k * sizeof *d), *sd = malloc(m * k * sizeof *sd);
    shard_hit *whole = malloc(m * k * sizeof *whole), *fwd = malloc(m * k * sizeof *fwd),
              *bwd = malloc(m * k * sizeof *bwd), *part = malloc(m * k * sizeof *part);
    ck_assert_int_eq(grip_bruteforce_search(ctx, ref, n, q, m, dim, k, INFINITY, ids, d), GRIP_OK);
    shard_hits_of(ids, d, m, k, 0, whole);
    for (int ranks = 1; ranks <= 5; ranks++) {
        for (size_t i = 0; i < m * k; i++)
            fwd[i] = bwd[i] = (shard_hit){INFINITY, UINT32_MAX};
        for (int r = 0; r < ranks; r++) {
            uint64_t begin, count;
            shard_range(n, ranks, r, &begin, &count);
            ck_assert_int_eq(grip_bruteforce_search(ctx, ref + begin * dim, count, q, m, dim, k, INFINITY, sids, sd),
                             GRIP_OK);
            shard_hits_of(sids, sd, m, k, begin, part);
            for (size_t j = 0; j < m; j++)
                shard_merge(part + j * k, fwd + j * k, k);
        }
        for (int r = ranks - 1; r >= 0; r--) { /* the other order, merging the accumulated list into the shard's */
            uint64_t begin, count;
            shard_range(n, ranks, r, &begin, &count);
            ck_assert_int_eq(grip_bruteforce_search(ctx, ref + begin * dim, count, q, m, dim, k, INFINITY, sids, sd),
                             GRIP_OK);
            shard_hits_of(sids, sd, m, k, begin, part);
            for (size_t j = 0; j < m; j++) {
                shard_merge(bwd + j * k, part + j * k, k);
                memcpy(bwd + j * k, part + j * k, k * sizeof *part);
            }
        }
        for (size_t i = 0; i < m * k; i++) {
            ck_assert_uint_eq(fwd[i].row, whole[i].row);
            ck_assert_uint_eq(bwd[i].row, whole[i].row);
            ck_assert(fwd[i].sqdist == whole[i].sqdist && bwd[i].sqdist == whole[i].sqdist);
        }
    }
    /* the query on row 9: its copies at distance 0 come first, lowest row first */
    ck_assert(whole[2 * k].sqdist == 0.0f && whole[2 * k + 1].sqdist == 0.0f);
    ck_assert_uint_lt(whole[2 * k].row, whole[2 * k + 1].row);
    free(ref), free(q), free(ids), free(sids), free(d), free(sd), free(whole), free(fwd), free(bwd), free(part);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(padding_never_wins)
{
    shard_hit a[3] = {{0.5f, 10}, {INFINITY, UINT32_MAX}, {INFINITY, UINT32_MAX}};
    shard_hit b[3] = {{0.25f, 40}, {0.5f, 3}, {INFINITY, UINT32_MAX}};
    shard_merge(a, b, 3);
    ck_assert(b[0].sqdist == 0.25f && b[0].row == 40);
    ck_assert(b[1].sqdist == 0.5f && b[1].row == 3);
    ck_assert(b[2].sqdist == 0.5f && b[2].row == 10);
    uint32_t ids[2] = {UINT32_MAX, 4};
    float d[2] = {INFINITY, 1.0f};
    shard_hit h[2];
    shard_hits_of(ids, d, 1, 2, 100, h);
    ck_assert_uint_eq(h[0].row, UINT32_MAX);
    ck_assert_uint_eq(h[1].row, 104);
}
END_TEST

START_TEST(hash_tells_commands_apart)
{
    const char *a = "--rows", *b = "--rowz";
    ck_assert(shard_hash(SHARD_HASH_SEED, a, 7) == shard_hash(SHARD_HASH_SEED, a, 7));
    ck_assert(shard_hash(SHARD_HASH_SEED, a, 7) != shard_hash(SHARD_HASH_SEED, b, 7));
}
END_TEST

START_TEST(generated_rows_do_not_depend_on_the_split)
{
    const uint32_t dim = 352;
    const uint64_t n = 97;
    float *whole = malloc(n * dim * sizeof(float)), *part = malloc(n * dim * sizeof(float));
    index_rows_reference(5, dim, 0, n, whole);
    for (int ranks = 2; ranks <= 4; ranks++)
        for (int r = 0; r < ranks; r++) {
            uint64_t begin, count;
            shard_range(n, ranks, r, &begin, &count);
            index_rows_reference(5, dim, begin, count, part);
            ck_assert_int_eq(memcmp(part, whole + begin * dim, count * dim * sizeof(float)), 0);
        }
    float *q = malloc(8 * dim * sizeof(float)), *q2 = malloc(8 * dim * sizeof(float));
    index_rows_queries(5, dim, n, 8, q);
    index_rows_queries(5, dim, n, 8, q2);
    ck_assert_int_eq(memcmp(q, q2, 8 * dim * sizeof(float)), 0);
    for (int i = 0; i < 8; i++) { /* SHOT-like: non-negative, unit length */
        double s = 0;
        for (uint32_t j = 0; j < dim; j++) {
            ck_assert(q[i * dim + j] >= 0.0f);
            s += (double)q[i * dim + j] * q[i * dim + j];
        }
        ck_assert_double_eq_tol(s, 1.0, 1e-5);
    }
    free(whole), free(part), free(q), free(q2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("shard");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, ranges_cover_every_row_once);
    tcase_add_test(tc, merged_shards_equal_the_whole);
    tcase_add_test(tc, padding_never_wins);
    tcase_add_test(tc, hash_tells_commands_apart);
    tcase_add_test(tc, generated_rows_do_not_depend_on_the_split);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return grip_test_run(suite());
}
