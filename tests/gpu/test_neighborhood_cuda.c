/* test_neighborhood_cuda.c (gpu) -- the device surface and its neighbourhoods (spatial/neighborhood_cuda.h) against
 * the CPU twin grip_kdtree3d_radius / grip_kdtree3d_knn: per query the same support, the same index list in the same
 * order, squared distances equal bit for bit, and the gathered coordinates and normals those of the listed points
 * bit for bit; offsets, entries, max_count and truncated as the lists say. Cases: random clouds with NaN/inf points,
 * exact duplicates and negative coordinates (every point as a query, and device queries with NaN ones and ones far
 * outside the cloud), radius 0, a huge radius, a single point, all points in one cell, lists a block sorts and lists
 * longer than the shared-memory sort takes, each beside ones a warp sorts, caps with truncation, k
 * nearest for k = 1, 10, 64 and k beyond the finite points, the tutorial scene at radius 0.02 on its 3,747
 * uniform-sampling keypoints (leaf 0.03) gathered on the device, bad arguments, and lists too large for the device
 * (GRIP_ENOMEM, the context usable after). Skips (77) without a usable device; the scene case passes without
 * checking anything when the data is absent (it says so). */
#include "test_support.h"
#include "core/cuda_bridge.h"
#include "descriptor/uniform_sampling.h"
#include "spatial/kdtree3d.h"
#include "spatial/neighborhood_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The lists copied back to the host. */
typedef struct host_lists {
    uint32_t m;
    size_t entries;
    uint64_t *offsets;
    uint32_t *support, *idx;
    float *sqdist, *x, *y, *z, *nx, *ny, *nz;
} host_lists;

static void *download(grip_ctx *ctx, const void *dev, size_t bytes)
{
    void *h = malloc(bytes ? bytes : 1);
    ck_assert_ptr_nonnull(h);
    if (bytes > 0)
        ck_assert_int_eq(grip_cuda_copy_to_host(ctx, h, dev, bytes), GRIP_OK);
    return h;
}

static host_lists lists_download(grip_ctx *ctx, const grip_neighborhoods_cuda *nb)
{
    host_lists h;
    memset(&h, 0, sizeof h);
    h.m = nb->m;
    h.entries = nb->entries;
    h.offsets = download(ctx, nb->offsets, ((size_t)nb->m + 1) * sizeof(uint64_t));
    h.support = download(ctx, nb->support, (size_t)nb->m * sizeof(uint32_t));
    const size_t e = nb->entries * sizeof(float);
    h.idx = download(ctx, nb->idx, e);
    h.sqdist = download(ctx, nb->sqdist, e);
    h.x = download(ctx, nb->x, e);
    h.y = download(ctx, nb->y, e);
    h.z = download(ctx, nb->z, e);
    if (nb->nx) {
        h.nx = download(ctx, nb->nx, e);
        h.ny = download(ctx, nb->ny, e);
        h.nz = download(ctx, nb->nz, e);
    }
    return h;
}

static void lists_free(host_lists *h)
{
    void *arrays[] = {h->offsets, h->support, h->idx, h->sqdist, h->x, h->y, h->z, h->nx, h->ny, h->nz};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i)
        free(arrays[i]);
}

/* What a case hands to the comparison: the cloud, optional normals (n x 3), the queries (host, m x 3; NULL for
 * every point), and the search. k > 0: k nearest, else radius with the cap. */
typedef struct search_case {
    const char *name;
    const float *xyz;
    size_t n;
    const float *normals;
    const float *queries;
    uint32_t m;
    float radius;
    uint32_t cap, k;
} search_case;

typedef struct search_stats {
    size_t entries, empty, truncated;
    uint32_t max_count;
} search_stats;

/* The CPU twin's list of query q: all within the radius, or the k nearest; sorted by (distance, index). */
static void cpu_list(const grip_kdtree3d *tree, const search_case *c, const float *q, grip_neighbors *out)
{
    if (c->k == 0) {
        ck_assert_int_eq(grip_kdtree3d_radius(tree, q, c->radius, out), GRIP_OK);
        return;
    }
    if (out->capacity < c->k) {
        free(out->idx);
        free(out->sqdist);
        out->idx = malloc(c->k * sizeof *out->idx);
        out->sqdist = malloc(c->k * sizeof *out->sqdist);
        ck_assert_ptr_nonnull(out->idx);
        ck_assert_ptr_nonnull(out->sqdist);
        out->capacity = c->k;
    }
    out->count = grip_kdtree3d_knn(tree, q, c->k, out->idx, out->sqdist);
}

/* 1 when the GPU's entry e differs from the CPU's j-th neighbour: its index, its distance's bits, or the bits of
 * the coordinates and normal gathered for it. */
static int entry_differs(const search_case *c, const host_lists *h, uint64_t e, const grip_neighbors *cpu, size_t j)
{
    const size_t i = h->idx[e];
    if (i != cpu->idx[j] || grip_test_float_bits(h->sqdist[e]) != grip_test_float_bits(cpu->sqdist[j]))
        return 1;
    const float got[6] = {h->x[e], h->y[e], h->z[e], c->normals ? h->nx[e] : 0.0f, c->normals ? h->ny[e] : 0.0f,
                          c->normals ? h->nz[e] : 0.0f};
    const float want[6] = {c->xyz[3 * i], c->xyz[3 * i + 1], c->xyz[3 * i + 2], c->normals ? c->normals[3 * i] : 0.0f,
                           c->normals ? c->normals[3 * i + 1] : 0.0f, c->normals ? c->normals[3 * i + 2] : 0.0f};
    for (int a = 0; a < 6; ++a)
        if (grip_test_float_bits(got[a]) != grip_test_float_bits(want[a]))
            return 1;
    return 0;
}

/* One query's GPU list against the CPU's: support, kept length, indices, distance bits, gathered values. Checks
 * with plain comparisons and fails with ck_abort_msg: a Check assertion per entry costs a system call. */
static void compare_query(const search_case *c, const host_lists *h, uint32_t q, const grip_neighbors *cpu,
                          search_stats *st)
{
    const size_t kept = c->cap > 0 && cpu->count > c->cap ? c->cap : cpu->count;
    const uint64_t at = h->offsets[q];
    if (h->support[q] != cpu->count || h->offsets[q + 1] - at != kept)
        ck_abort_msg("%s: query %u support %u keeping %llu, CPU %zu keeping %zu", c->name, q, h->support[q],
                     (unsigned long long)(h->offsets[q + 1] - at), cpu->count, kept);
    for (size_t j = 0; j < kept; ++j)
        if (entry_differs(c, h, at + j, cpu, j))
            ck_abort_msg("%s: query %u entry %zu: point %u at %.9g, CPU point %u at %.9g (or its gathered values "
                         "differ)", c->name, q, j, h->idx[at + j], (double)h->sqdist[at + j], cpu->idx[j],
                         (double)cpu->sqdist[j]);
    st->empty += kept == 0;
    st->truncated += kept < cpu->count;
    if (kept > st->max_count)
        st->max_count = (uint32_t)kept;
}

static grip_status run_search(grip_ctx *ctx, const search_case *c, const grip_surface_cuda *s, const float *dev_q,
                              grip_neighborhoods_cuda *nb)
{
    return c->k > 0 ? grip_neighborhoods_cuda_knn(ctx, s, dev_q, c->m, c->k, nb)
                    : grip_neighborhoods_cuda_radius(ctx, s, dev_q, c->m, c->radius, c->cap, nb);
}

/* Runs the case on the device and compares every list with the CPU twin's. */
static search_stats compare_case(const search_case *c)
{
    grip_ctx *ctx = grip_test_ctx();
    grip_surface_cuda *s = NULL;
    ck_assert_msg(grip_surface_cuda_create(ctx, c->xyz, c->n, &s) == GRIP_OK, "%s: %s", c->name, ctx->last_error);
    if (c->normals)
        ck_assert_int_eq(grip_surface_cuda_set_normals(ctx, s, c->normals, 3), GRIP_OK);
    void *dev_q = NULL;
    int device = -1;
    if (c->queries)
        ck_assert_int_eq(grip_cuda_upload(ctx, c->queries, (size_t)c->m * 3 * sizeof(float), &dev_q, &device),
                         GRIP_OK);
    grip_neighborhoods_cuda nb;
    ck_assert_msg(run_search(ctx, c, s, dev_q, &nb) == GRIP_OK, "%s: %s", c->name, ctx->last_error);
    ck_assert_uint_eq(nb.m, c->m);
    ck_assert_int_eq(nb.nx != NULL, c->normals != NULL);
    host_lists h = lists_download(ctx, &nb);
    ck_assert_uint_eq(h.offsets[0], 0);
    ck_assert_uint_eq(h.offsets[c->m], nb.entries);

    grip_kdtree3d *tree = NULL;
    ck_assert_int_eq(grip_kdtree3d_build(ctx, c->xyz, c->n, &tree), GRIP_OK);
    grip_neighbors cpu = {0};
    search_stats st = {nb.entries, 0, 0, 0};
    for (uint32_t q = 0; q < c->m; ++q) {
        cpu_list(tree, c, (c->queries ? c->queries : c->xyz) + 3 * (size_t)q, &cpu);
        compare_query(c, &h, q, &cpu, &st);
    }
    ck_assert_uint_eq(nb.max_count, st.max_count);
    ck_assert_uint_eq(nb.truncated, st.truncated);
    printf("%s: n=%zu m=%u %s %g cap %u: %zu entries, longest %u, empty %zu, truncated %zu\n", c->name, c->n, c->m,
           c->k ? "k" : "radius", c->k ? (double)c->k : (double)c->radius, c->cap, st.entries, st.max_count, st.empty,
           st.truncated);
    grip_neighbors_free(&cpu);
    grip_kdtree3d_free(tree);
    lists_free(&h);
    grip_neighborhoods_cuda_free(&nb);
    ck_assert_ptr_null(nb.offsets);
    grip_cuda_free(dev_q);
    grip_surface_cuda_free(s);
    grip_ctx_free(ctx);
    return st;
}

/* n points uniform in [-1, 1]^3; every 37th a NaN point (an inf every third time), every 11th a copy of an
 * earlier point. */
static float *random_cloud(uint64_t *s, size_t n)
{
    float *xyz = grip_test_uniform_rows(s, n, 3, -1.0f, 1.0f);
    for (size_t i = 1; i < n; ++i)
        if (i % 11 == 0) {
            size_t from = (size_t)grip_test_uniform(s, 0.0f, (float)i) % i;
            memcpy(xyz + 3 * i, xyz + 3 * from, 3 * sizeof *xyz);
        }
    for (size_t i = 5, t = 0; i < n; i += 37, ++t)
        xyz[3 * i + t % 3] = t % 3 == 2 ? INFINITY : NAN;
    return xyz;
}

/* m queries in [-1.5, 1.5]^3 (some outside the cloud), every 13th with a NaN, the first ones copies of points. */
static float *random_queries(uint64_t *s, const float *xyz, uint32_t m)
{
    float *q = grip_test_uniform_rows(s, m, 3, -1.5f, 1.5f);
    for (uint32_t i = 0; i < m && i < 20; ++i)
        memcpy(q + 3 * i, xyz + 3 * (size_t)(i * 7), 3 * sizeof *q);
    for (uint32_t i = 6; i < m; i += 13)
        q[3 * i + 1] = NAN;
    return q;
}

/* Small sizes (compute-sanitizer, grip_test_size): a fifth of the points and of the queries, the radii grown by the
 * cube root of 5, so that a point has as many neighbours and a radius spans as many surface cells as at full size
 * (the surface's cells hold a few points each): the same kernels on the same paths. */
static size_t random_points(void)
{
    return grip_test_size(20000, 4000);
}
static uint32_t random_queries_count(void)
{
    return (uint32_t)grip_test_size(3000, 600);
}
static float radius_of(float full_size_radius)
{
    return full_size_radius * cbrtf(20000.0f / (float)random_points());
}

START_TEST(random_clouds_radius)
{
    uint64_t s = 401;
    const size_t n = random_points(), nc = n * 3 / 5; /* clustered: 12000 at full size */
    const uint32_t m = random_queries_count();
    float *xyz = random_cloud(&s, n), *normals = grip_test_uniform_rows(&s, n, 3, -1.0f, 1.0f);
    float *q = random_queries(&s, xyz, m);
    search_case c = {"every point", xyz, n, normals, NULL, (uint32_t)n, radius_of(0.15f), 0, 0};
    search_stats st = compare_case(&c);
    ck_assert_uint_gt(st.entries, 20 * n);  /* ~59 neighbours a point */
    ck_assert_uint_ge(st.empty, n / 37);    /* the NaN points */
    c = (search_case){"device queries", xyz, n, NULL, q, m, radius_of(0.3f), 0, 0};
    st = compare_case(&c);
    ck_assert_uint_ge(st.empty, m / 13); /* the NaN queries, and some outside */
    c = (search_case){"capped at 16", xyz, n, normals, NULL, (uint32_t)n, radius_of(0.15f), 16, 0};
    st = compare_case(&c);
    ck_assert_uint_gt(st.truncated, n / 2);
    ck_assert_uint_eq(st.max_count, 16);
    c = (search_case){"cap above every list", xyz, n, NULL, q, m, radius_of(0.1f), 100000, 0};
    st = compare_case(&c);
    ck_assert_uint_eq(st.truncated, 0);
    /* a radius of many surface cells: the search builds a grid of its own */
    c = (search_case){"huge radius", xyz, n, normals, q, 40, 100.0f, 0, 0};
    st = compare_case(&c);
    ck_assert_uint_eq(st.max_count, n - (n + 36 - 5) / 37);
    c = (search_case){"radius 0", xyz, n, normals, NULL, (uint32_t)n, 0.0f, 0, 0};
    st = compare_case(&c);
    ck_assert_uint_eq(st.entries, 0);
    /* clustered: dense blobs, many points a cell */
    float *blobs = grip_test_clustered_rows(&s, nc, 3, 7);
    c = (search_case){"clustered", blobs, nc, NULL, NULL, (uint32_t)nc, radius_of(0.004f), 0, 0};
    compare_case(&c);
    free(blobs);
    free(q);
    free(normals);
    free(xyz);
}
END_TEST

START_TEST(degenerate_clouds_radius)
{
    float one[3] = {-0.5f, 2.0f, -3.0f}, q1[9] = {-0.5f, 2.0f, -3.0f, -0.5f, 2.5f, -3.0f, 9.0f, 9.0f, 9.0f};
    search_case c = {"single point", one, 1, NULL, q1, 3, 0.75f, 0, 0};
    search_stats st = compare_case(&c);
    ck_assert_uint_eq(st.entries, 2);
    /* all points in one cell, many of them copies (ties broken by index) */
    uint64_t s = 402;
    float *tight = grip_test_uniform_rows(&s, 600, 3, -1e-4f, 1e-4f);
    for (size_t i = 300; i < 600; ++i)
        memcpy(tight + 3 * i, tight + 3 * (i % 7), 3 * sizeof *tight);
    c = (search_case){"one cell", tight, 600, tight, NULL, 600, 1e-3f, 0, 0};
    st = compare_case(&c);
    ck_assert_uint_eq(st.entries, 600 * 600);
    c = (search_case){"one cell, capped", tight, 600, NULL, NULL, 600, 1e-3f, 50, 0};
    st = compare_case(&c);
    ck_assert_uint_eq(st.truncated, 600);
    float nan3[9] = {NAN, 0, 0, 0, NAN, 0, 0, 0, INFINITY};
    c = (search_case){"no finite point", nan3, 3, NULL, NULL, 3, 1.0f, 0, 0};
    st = compare_case(&c);
    ck_assert_uint_eq(st.empty, 3);
    c = (search_case){"no point", nan3, 0, NULL, q1, 3, 1.0f, 0, 0};
    st = compare_case(&c);
    ck_assert_uint_eq(st.entries, 0);
    c = (search_case){"no query", tight, 600, NULL, q1, 0, 1.0f, 0, 0};
    compare_case(&c);
    free(tight);
    /* lists beyond what shared memory sorts (4,096 points) beside short ones: a blob of 6000 points within
     * 1e-3 among 3000 points spread over [-1, 1]^3, queried at 30 blob points and 30 spread ones */
    float *mixed = grip_test_uniform_rows(&s, 9000, 3, -1.0f, 1.0f), qm[180];
    for (size_t i = 0; i < 6000; ++i)
        for (int a = 0; a < 3; ++a)
            mixed[3 * i + a] = 0.25f + 1e-3f * mixed[3 * i + a];
    for (size_t i = 0; i < 60; ++i)
        memcpy(qm + 3 * i, mixed + 3 * (i < 30 ? i * 200 : 6000 + i * 90), 3 * sizeof *qm);
    c = (search_case){"long and short lists", mixed, 9000, mixed, qm, 60, 0.01f, 0, 0};
    st = compare_case(&c);
    ck_assert_uint_ge(st.max_count, 6000);
    c = (search_case){"long lists capped", mixed, 9000, NULL, qm, 60, 0.01f, 5000, 0};
    st = compare_case(&c);
    ck_assert_uint_eq(st.truncated, 30);
    free(mixed);
    /* lists a block sorts (1,025-4,096 points) beside lists a warp sorts: blobs of 1,500 and 3,000 points within
     * 1e-3 among 3,000 spread over [-1, 1]^3, queried at 20 points of each blob and 20 spread ones */
    float *mid = grip_test_uniform_rows(&s, 7500, 3, -1.0f, 1.0f), qb[180];
    for (size_t i = 0; i < 4500; ++i)
        for (int a = 0; a < 3; ++a)
            mid[3 * i + a] = (i < 1500 ? 0.25f : -0.25f) + 1e-3f * mid[3 * i + a];
    for (size_t i = 0; i < 60; ++i)
        memcpy(qb + 3 * i, mid + 3 * (i < 20 ? i * 70 : i < 40 ? 1500 + (i - 20) * 140 : 4500 + (i - 40) * 140),
               3 * sizeof *qb);
    c = (search_case){"block-sorted lists", mid, 7500, mid, qb, 60, 0.01f, 0, 0};
    st = compare_case(&c);
    ck_assert_uint_ge(st.max_count, 3000);
    ck_assert_uint_le(st.max_count, 4096);
    c = (search_case){"block-sorted lists capped", mid, 7500, NULL, qb, 60, 0.01f, 2000, 0};
    st = compare_case(&c);
    ck_assert_uint_eq(st.truncated, 20);
    ck_assert_uint_eq(st.max_count, 2000);
    free(mid);
}
END_TEST

START_TEST(k_nearest)
{
    uint64_t s = 403;
    const size_t n = random_points(), nc = n * 3 / 5; /* small sizes: see random_points */
    const uint32_t m = random_queries_count();
    float *xyz = random_cloud(&s, n), *normals = grip_test_uniform_rows(&s, n, 3, -1.0f, 1.0f);
    float *q = random_queries(&s, xyz, m);
    static const uint32_t ks[] = {1, 10, 64};
    for (size_t i = 0; i < 3; ++i) {
        search_case c = {"knn, every point", xyz, n, normals, NULL, (uint32_t)n, 0.0f, 0, ks[i]};
        search_stats st = compare_case(&c);
        ck_assert_uint_eq(st.max_count, ks[i]);
        c = (search_case){"knn, device queries", xyz, n, NULL, q, m, 0.0f, 0, ks[i]};
        compare_case(&c);
    }
    float five[15] = {0, 0, 0, 1, 0, 0, 0, 1, 0, NAN, 0, 0, 1, 0, 0};
    search_case c = {"knn beyond the finite points", five, 5, five, q, 50, 0.0f, 0, 10};
    search_stats st = compare_case(&c);
    ck_assert_uint_eq(st.max_count, 4);
    float *blobs = grip_test_clustered_rows(&s, nc, 3, 7);
    c = (search_case){"knn, clustered", blobs, nc, NULL, NULL, (uint32_t)nc, 0.0f, 0, 32};
    compare_case(&c);
    free(blobs);
    free(q);
    free(normals);
    free(xyz);
}
END_TEST

START_TEST(tutorial_scene)
{
    char path[4096];
    if (!grip_test_data_path(path, sizeof path, "pcl/milk_cartoon_all_small_clorox.pcd")) {
        printf("tutorial scene: data absent, not checked\n");
        return;
    }
    host_cloud cloud = grip_test_read_cloud("pcl/milk_cartoon_all_small_clorox.pcd");
    const int cropped = grip_test_sanitizer_crop(&cloud, 48); /* small sizes: 48 of the 480 rows */
    grip_ctx *ctx = grip_test_ctx();
    uint32_t *keys = NULL;
    size_t m = 0;
    ck_assert_int_eq(grip_uniform_sampling(ctx, cloud.xyz, cloud.n, 0.03f, &keys, &m), GRIP_OK);
    if (!cropped)
        ck_assert_uint_eq(m, 3747); /* PCL's count, on the whole scene */
    ck_assert_uint_gt(m, 0);
    /* the keypoints' coordinates gathered on the device from the surface */
    grip_surface_cuda *s = NULL;
    ck_assert_int_eq(grip_surface_cuda_create(ctx, cloud.xyz, cloud.n, &s), GRIP_OK);
    void *dev_keys = NULL, *dev_q = NULL;
    int device = -1;
    ck_assert_int_eq(grip_cuda_upload(ctx, keys, m * sizeof *keys, &dev_keys, &device), GRIP_OK);
    ck_assert_int_eq(grip_cuda_alloc(ctx, m * 3 * sizeof(float), &dev_q), GRIP_OK);
    ck_assert_int_eq(grip_surface_cuda_gather(ctx, s, dev_keys, m, dev_q), GRIP_OK);
    float *q = download(ctx, dev_q, m * 3 * sizeof(float)), *want = grip_test_gather_xyz(&cloud, keys, m);
    ck_assert_int_eq(memcmp(q, want, m * 3 * sizeof(float)), 0);
    /* normals: any values tell whether each entry got its own point's; these are the scaled coordinates */
    float *normals = malloc(cloud.n * 3 * sizeof *normals);
    ck_assert_ptr_nonnull(normals);
    for (size_t i = 0; i < 3 * cloud.n; ++i)
        normals[i] = 0.5f * cloud.xyz[i] + (float)(i % 3);
    search_case c = {"tutorial scene keypoints", cloud.xyz, cloud.n, normals, q, (uint32_t)m, 0.02f, 0, 0};
    search_stats st = compare_case(&c);
    ck_assert_uint_eq(st.empty, 0);
    c = (search_case){"tutorial scene, every point", cloud.xyz, cloud.n, NULL, NULL, (uint32_t)cloud.n, 0.01f, 0, 0};
    compare_case(&c);
    c = (search_case){"tutorial scene, knn 10", cloud.xyz, cloud.n, NULL, NULL, (uint32_t)cloud.n, 0.0f, 0, 10};
    compare_case(&c);
    free(normals);
    free(q);
    free(want);
    grip_cuda_free(dev_q);
    grip_cuda_free(dev_keys);
    grip_surface_cuda_free(s);
    free(keys);
    grip_ctx_free(ctx);
    host_cloud_free(&cloud);
}
END_TEST

START_TEST(surface_normals_and_gather)
{
    grip_ctx *ctx = grip_test_ctx();
    float xyz[6] = {1, 2, 3, -4, -5, -6}, n4[8] = {0.5f, 0.25f, 1, 7, -1, 0, 0, 8};
    grip_surface_cuda *s = NULL;
    ck_assert_int_eq(grip_surface_cuda_create(ctx, xyz, 2, &s), GRIP_OK);
    grip_surface_cuda_view v = grip_surface_cuda_get_view(s);
    ck_assert_uint_eq(v.n, 2);
    ck_assert_int_eq(v.has_normals, 0);
    ck_assert_int_ge(v.device, 0);
    float back[8];
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, back, v.xyz, sizeof xyz), GRIP_OK);
    ck_assert_int_eq(memcmp(back, xyz, sizeof xyz), 0);
    ck_assert_int_eq(grip_surface_cuda_set_normals(ctx, s, n4, 4), GRIP_OK);
    ck_assert_int_eq(grip_surface_cuda_get_view(s).has_normals, 1);
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, back, v.normals, sizeof back), GRIP_OK);
    ck_assert_int_eq(memcmp(back, n4, sizeof n4), 0);
    ck_assert_int_eq(grip_surface_cuda_set_normals(ctx, s, xyz, 3), GRIP_OK); /* curvature becomes NaN */
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, back, v.normals, sizeof back), GRIP_OK);
    for (int i = 0; i < 2; ++i) {
        ck_assert_int_eq(memcmp(back + 4 * i, xyz + 3 * i, 3 * sizeof(float)), 0);
        ck_assert(isnan(back[4 * i + 3]));
    }
    ck_assert_int_eq(grip_surface_cuda_set_normals(ctx, s, xyz, 5), GRIP_EINVAL);
    uint32_t idx[3] = {1, 0, 1}, bad[1] = {2};
    void *dev_idx = NULL, *dev_out = NULL;
    int device = -1;
    ck_assert_int_eq(grip_cuda_upload(ctx, idx, sizeof idx, &dev_idx, &device), GRIP_OK);
    ck_assert_int_eq(grip_cuda_alloc(ctx, 9 * sizeof(float), &dev_out), GRIP_OK);
    ck_assert_int_eq(grip_surface_cuda_gather(ctx, s, dev_idx, 3, dev_out), GRIP_OK);
    float got[9], want[9] = {-4, -5, -6, 1, 2, 3, -4, -5, -6};
    ck_assert_int_eq(grip_cuda_copy_to_host(ctx, got, dev_out, sizeof got), GRIP_OK);
    ck_assert_int_eq(memcmp(got, want, sizeof want), 0);
    ck_assert_int_eq(grip_cuda_copy_to_device(ctx, dev_idx, bad, sizeof bad), GRIP_OK);
    ck_assert_int_eq(grip_surface_cuda_gather(ctx, s, dev_idx, 1, dev_out), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "indices"));
    grip_cuda_free(dev_idx);
    grip_cuda_free(dev_out);
    grip_surface_cuda_free(s);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(bad_arguments)
{
    grip_ctx *ctx = grip_test_ctx();
    float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    grip_surface_cuda *s = (grip_surface_cuda *)xyz;
    ck_assert_int_eq(grip_surface_cuda_create(ctx, NULL, 3, &s), GRIP_EINVAL);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(grip_surface_cuda_create(ctx, xyz, 3, &s), GRIP_OK);
    grip_neighborhoods_cuda nb;
    memset(&nb, 0x5a, sizeof nb);
    ck_assert_int_eq(grip_neighborhoods_cuda_radius(ctx, s, NULL, 3, -1.0f, 0, &nb), GRIP_EINVAL);
    ck_assert_ptr_null(nb.offsets); /* zeroed on failure */
    ck_assert_int_eq(grip_neighborhoods_cuda_radius(ctx, s, NULL, 3, NAN, 0, &nb), GRIP_EINVAL);
    ck_assert_int_eq(grip_neighborhoods_cuda_radius(ctx, s, NULL, 2, 1.0f, 0, &nb), GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "m = 2"));
    ck_assert_int_eq(grip_neighborhoods_cuda_radius(ctx, NULL, NULL, 3, 1.0f, 0, &nb), GRIP_EINVAL);
    ck_assert_int_eq(grip_neighborhoods_cuda_knn(ctx, s, NULL, 3, 0, &nb), GRIP_EINVAL);
    ck_assert_int_eq(grip_neighborhoods_cuda_knn(ctx, s, NULL, 3, GRIP_NEIGHBORHOODS_CUDA_MAX_K + 1, &nb),
                     GRIP_EINVAL);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "k = 65"));
    ck_assert_int_eq(grip_neighborhoods_cuda_radius(ctx, s, NULL, 3, 1.5f, 0, &nb), GRIP_OK);
    ck_assert_uint_eq(nb.entries, 9);
    grip_neighborhoods_cuda_free(&nb);
    grip_neighborhoods_cuda_free(&nb); /* a zeroed struct is allowed */
    grip_surface_cuda_free(s);
    grip_surface_cuda_free(NULL);
    grip_ctx_free(ctx);
}
END_TEST

/* 1e5 points, each a query, with a radius that holds them all: 1e10 neighbours, more than any device holds. */
START_TEST(lists_beyond_the_device)
{
    uint64_t s = 404;
    const size_t n = 100000;
    float *xyz = grip_test_uniform_rows(&s, n, 3, -1.0f, 1.0f);
    grip_ctx *ctx = grip_test_ctx();
    grip_surface_cuda *surf = NULL;
    ck_assert_int_eq(grip_surface_cuda_create(ctx, xyz, n, &surf), GRIP_OK);
    grip_neighborhoods_cuda nb;
    ck_assert_int_eq(grip_neighborhoods_cuda_radius(ctx, surf, NULL, (uint32_t)n, 10.0f, 0, &nb), GRIP_ENOMEM);
    ck_assert_ptr_nonnull(strstr(ctx->last_error, "fewer queries"));
    ck_assert_ptr_null(nb.offsets);
    ck_assert_uint_eq(nb.entries, 0);
    /* the context and the surface still work */
    ck_assert_int_eq(grip_neighborhoods_cuda_radius(ctx, surf, NULL, (uint32_t)n, 0.05f, 0, &nb), GRIP_OK);
    ck_assert_uint_gt(nb.entries, n);
    grip_neighborhoods_cuda_free(&nb);
    grip_surface_cuda_free(surf);
    grip_ctx_free(ctx);
    free(xyz);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("neighborhood_cuda");
    grip_test_add_case(s, "random", random_clouds_radius);
    grip_test_add_case(s, "degenerate", degenerate_clouds_radius);
    grip_test_add_case(s, "knn", k_nearest);
    grip_test_add_case(s, "scene", tutorial_scene);
    grip_test_add_case(s, "surface", surface_normals_and_gather);
    grip_test_add_case(s, "arguments", bad_arguments);
    grip_test_add_case(s, "enomem", lists_beyond_the_device);
    return grip_test_run_gpu(s);
}
