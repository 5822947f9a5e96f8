/* test_fpfh.c -- FPFH-33 reproduces PCL 1.13: the SPFH values of PCL's own unit test (test_pfh_estimation.cpp, on
 * bun0.pcd with its normals) and its FPFH to the tolerance PCL gives it, the TEASER++ reference (PCL's
 * FPFHEstimationOMP on the 397-point bunny, normals radius 0.03, FPFH radius 0.05) on every point, with the normals
 * of the PCL 1.9 that made it rebuilt, and PCL's rules on small clouds: duplicates vote with features 0, the keypoint's
 * own SPFH is left out, NaN rows without neighbours, NaN normals in bin 0, NaN points ignored, bad arguments refused.
 * */
#include "pfh_test_support.h"
#include "stages/registry.h"
#include "descriptor/fpfh.h"
#include <float.h>

#include <stdio.h>

#define BUNNY "pcl_reference/bun0_397.pcd"
#define TEASER_CSV "pcl_reference/bun0_fpfh_pcl_r0.03_r0.05.csv"

static float *read_csv_values(const char *rel, size_t want)
{
    char path[4096];
    ck_assert(grip_test_data_path(path, sizeof path, rel));
    size_t bytes = 0;
    char *text = grip_test_read_file(path, &bytes);
    ck_assert_ptr_nonnull(text);
    float *v = malloc(want * sizeof *v);
    ck_assert_ptr_nonnull(v);
    char *p = text, *end = NULL;
    for (size_t i = 0; i < want; ++i, p = end) {
        v[i] = strtof(p, &end);
        ck_assert_ptr_ne(end, p);
    }
    while (*p == '\n' || *p == '\r' || *p == ' ')
        ++p;
    ck_assert_int_eq(*p, '\0');
    free(text);
    return v;
}

/* Normals as the PCL that made the CSV computed them. TEASER++ (teaser/src/fpfh.cc) runs NormalEstimationOMP
 * with a pcl::search::KdTree, sorted by distance, and its install guide builds PCL 1.9.1 from source, whose CMake
 * adds -march=native (cmake/pcl_find_sse.cmake): on an FMA machine gcc then fused a * b + c into one rounding.
 * That PCL accumulated the covariance from the raw coordinates (1.13 first shifts them by the first neighbour),
 * and the normal comes from pcl::eigen33, flipped toward the origin. The fmaf calls below sit exactly where gcc
 * fused (read from its code for these functions, and checked bit for bit against pcl::eigen33 built with
 * -march=haswell on a million covariances); every other operation rounds on its own. Without the fusing the
 * normals move by ~1e-6 and, through the pair features' bins, 65 of the 397 FPFH rows by up to 1.5. */
static void fma_quadratic_roots(float b, float c, float roots[3])
{
    roots[0] = 0.0f;
    float d = (float)(b * b - 4.0 * c);
    if (d < 0.0f)
        d = 0.0f;
    float sd = sqrtf(d);
    roots[2] = 0.5f * (b + sd);
    roots[1] = 0.5f * (b - sd);
}

static void fma_swap(float *a, float *b)
{
    float t = *a;
    *a = *b;
    *b = t;
}

/* pcl::computeRoots on the scaled matrix m (row-major, symmetric): its eigenvalues, ascending. */
static void fma_eigenvalues(const float m[9], float roots[3])
{
    float m00 = m[0], m01 = m[1], m02 = m[2], m11 = m[4], m12 = m[5], m22 = m[8];
    float m00m11 = m00 * m11;
    float c0 = fmaf(m00m11, m22, 2.0f * m01 * m02 * m12);
    c0 = fmaf(-(m00 * m12), m12, c0);
    c0 = fmaf(-(m11 * m02), m02, c0);
    c0 = fmaf(-(m22 * m01), m01, c0);
    float c1 = fmaf(m11, m22, fmaf(-m02, m02, fmaf(m00, m22, fmaf(-m01, m01, m00m11))));
    c1 = fmaf(-m12, m12, c1);
    float c2 = m00 + m11 + m22;
    if (fabsf(c0) < FLT_EPSILON) {
        fma_quadratic_roots(c2, c1, roots);
        return;
    }
    const float inv3 = (float)(1.0 / 3.0), sqrt3 = sqrtf(3.0f);
    float c2_over_3 = c2 * inv3;
    float a_over_3 = fmaf(-c2, c2_over_3, c1) * inv3;
    if (a_over_3 > 0.0f)
        a_over_3 = 0.0f;
    float half_b = 0.5f * fmaf(c2_over_3, fmaf(2.0f * c2_over_3, c2_over_3, -c1), c0);
    float q = fmaf(a_over_3 * a_over_3, a_over_3, half_b * half_b);
    if (q > 0.0f)
        q = 0.0f;
    float rho = sqrtf(-a_over_3);
    float theta = atan2f(sqrtf(-q), half_b) * inv3;
    float cos_theta = cosf(theta), sin_theta = sinf(theta);
    roots[0] = fmaf(2.0f * rho, cos_theta, c2_over_3);
    roots[1] = fmaf(-fmaf(sin_theta, sqrt3, cos_theta), rho, c2_over_3);
    roots[2] = fmaf(-rho, fmaf(-sin_theta, sqrt3, cos_theta), c2_over_3);
    if (roots[0] >= roots[1])
        fma_swap(&roots[0], &roots[1]);
    if (roots[1] >= roots[2]) {
        fma_swap(&roots[1], &roots[2]);
        if (roots[0] >= roots[1])
            fma_swap(&roots[0], &roots[1]);
    }
    if (roots[0] <= 0.0f)
        fma_quadratic_roots(c2, c1, roots);
}

/* pcl::eigen33(cov, value, vector): the eigenvector of the smallest eigenvalue, as the longest cross product of
 * two rows of (A - l0 I), A = cov scaled by its largest |entry| (the first of equal lengths wins). */
static void fma_smallest_eigenvector(const float cov[9], float vec[3])
{
    float m[9], scale = 0.0f;
    for (int i = 0; i < 9; ++i)
        scale = fabsf(cov[i]) > scale ? fabsf(cov[i]) : scale;
    if (scale <= FLT_MIN)
        scale = 1.0f;
    for (int i = 0; i < 9; ++i)
        m[i] = cov[i] / scale;
    float roots[3];
    fma_eigenvalues(m, roots);
    for (int i = 0; i < 3; ++i)
        m[4 * i] -= roots[0];
    static const int rows[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    float cross[3][3], best_len = 0.0f;
    int best = 0;
    for (int r = 0; r < 3; ++r) {
        const float *a = m + 3 * rows[r][0], *b = m + 3 * rows[r][1];
        float *c = cross[r];
        c[0] = fmaf(a[1], b[2], -(a[2] * b[1]));
        c[1] = fmaf(a[2], b[0], -(a[0] * b[2]));
        c[2] = fmaf(a[0], b[1], -(a[1] * b[0]));
        float len = sqrtf(fmaf(c[0], c[0], fmaf(c[2], c[2], c[1] * c[1])));
        if (r == 0 || len > best_len) {
            best = r;
            best_len = len;
        }
    }
    for (int i = 0; i < 3; ++i)
        vec[i] = cross[best][i] / best_len;
}

static void normals_pcl_1_9_march_native(const float *xyz, size_t n, const grip_kdtree3d *tree, float radius,
                                         float *out)
{
    grip_neighbors nb = {0};
    for (size_t i = 0; i < n; ++i) {
        ck_assert_int_eq(grip_kdtree3d_radius(tree, xyz + 3 * i, radius, &nb), GRIP_OK);
        ck_assert_uint_ge(nb.count, 3);
        float accu[9] = {0};
        for (size_t j = 0; j < nb.count; ++j) {
            const float *p = xyz + 3 * (size_t)nb.idx[j];
            accu[0] = fmaf(p[0], p[0], accu[0]);
            accu[1] = fmaf(p[0], p[1], accu[1]);
            accu[2] = fmaf(p[0], p[2], accu[2]);
            accu[3] = fmaf(p[1], p[1], accu[3]);
            accu[4] = fmaf(p[1], p[2], accu[4]);
            accu[5] = fmaf(p[2], p[2], accu[5]);
            accu[6] += p[0];
            accu[7] += p[1];
            accu[8] += p[2];
        }
        for (int a = 0; a < 9; ++a)
            accu[a] /= (float)nb.count;
        float cov[9];
        cov[0] = fmaf(-accu[6], accu[6], accu[0]);
        cov[1] = cov[3] = fmaf(-accu[6], accu[7], accu[1]);
        cov[2] = cov[6] = fmaf(-accu[6], accu[8], accu[2]);
        cov[4] = fmaf(-accu[7], accu[7], accu[3]);
        cov[5] = cov[7] = fmaf(-accu[7], accu[8], accu[4]);
        cov[8] = fmaf(-accu[8], accu[8], accu[5]);
        float *row = out + 4 * i;
        fma_smallest_eigenvector(cov, row);
        row[3] = 0.0f;
        const float *p = xyz + 3 * i;
        if (fmaf(-p[2], row[2], fmaf(-p[0], row[0], -p[1] * row[1])) < 0.0f)
            for (int a = 0; a < 3; ++a)
                row[a] = -row[a];
    }
    grip_neighbors_free(&nb);
}

/* The TEASER++ reference: PCL's FPFH of the bunny, normals radius 0.03, FPFH radius 0.05, made by a PCL 1.9 built
 * with FMA (above). With those normals rebuilt, our FPFH twin (PCL 1.13's FPFH, unchanged) gives every one of the
 * 397 points within TEASER's tolerance 1e-4 in all 33 values (the CSV keeps 6 significant digits); with 1.13's
 * normals only 90 would, so the normals, not the FPFH, are what changed between the two PCLs. Every sub-histogram
 * sums to 100. */
START_TEST(fpfh_matches_pcl_reference_csv)
{
    grip_ctx *ctx = grip_test_ctx();
    host_cloud bunny = grip_test_read_cloud(BUNNY);
    size_t n = bunny.n;
    ck_assert_uint_eq(n, PFH_TEST_BUNNY_POINTS);
    float *expected = read_csv_values(TEASER_CSV, n * GRIP_FPFH_DIM);
    float *normals = malloc(n * 4 * sizeof *normals), *desc = malloc(n * GRIP_FPFH_DIM * sizeof *desc);
    ck_assert(normals && desc);
    grip_kdtree3d *tree = grip_test_kdtree(ctx, bunny.xyz, n);
    normals_pcl_1_9_march_native(bunny.xyz, n, tree, 0.03f, normals);
    ck_assert_int_eq(grip_fpfh_describe(ctx, bunny.xyz, normals, n, tree, bunny.xyz, n, 0.05f, desc), GRIP_OK);
    size_t agree = 0;
    double worst_agreeing = 0.0;
    for (size_t i = 0; i < n; ++i) {
        double worst = 0.0;
        for (size_t d = 0; d < GRIP_FPFH_DIM; ++d) {
            double diff = fabs((double)desc[i * GRIP_FPFH_DIM + d] - expected[i * GRIP_FPFH_DIM + d]);
            worst = diff > worst ? diff : worst;
        }
        if (worst <= 1e-4) {
            ++agree;
            worst_agreeing = worst > worst_agreeing ? worst : worst_agreeing;
        }
        for (int s = 0; s < 3; ++s) {
            double sum = 0.0;
            for (int b = 0; b < GRIP_FPFH_BINS; ++b)
                sum += desc[i * GRIP_FPFH_DIM + (size_t)(s * GRIP_FPFH_BINS + b)];
            ck_assert_double_eq_tol(sum, 100.0, 1e-3);
        }
    }
    printf("fpfh vs PCL (TEASER csv, PCL 1.9 FMA normals): %zu of %zu points within 1e-4 (max |diff| %.3g)\n", agree, n,
           worst_agreeing);
    ck_assert_uint_eq(agree, n);
    grip_kdtree3d_free(tree);
    free(desc);
    free(normals);
    free(expected);
    host_cloud_free(&bunny);
    grip_ctx_free(ctx);
}
END_TEST

/* PCL's test_pfh_estimation.cpp (FPFHTest.Estimation) on bun0.pcd with its normals: the SPFH of point 0 over the
 * whole bunny, to PCL's tolerance 1e-4, and the FPFH of point 0 with every point its neighbour (k = 397 there, a
 * radius beyond the cloud here), to PCL's tolerance 1e-2 (its expected values are no closer than that to what
 * PCL 1.13 computes: FPFHEstimation checks them to 1e-2 only). */
START_TEST(fpfh_matches_pcl_unit_test)
{
    static const float spfh0[GRIP_FPFH_DIM] = {0.757576f, 0.757576f, 4.54545f, 19.697f,  40.6566f,  21.4647f, 7.575759f,
                                               0.0f,      0.0f,      0.50505f, 4.0404f,  0.757576f, 1.51515f, 6.31313f,
                                               9.59596f,  20.7071f,  18.9394f, 15.9091f, 12.8788f,  6.56566f, 4.29293f,
                                               2.52525f,  0.0f,      5.05051f, 4.54545f, 5.05051f,  1.76768f, 3.0303f,
                                               9.09091f,  31.8182f,  22.2222f, 11.8687f, 5.55556f};
    static const float fpfh0[GRIP_FPFH_DIM] = {
        1.58591f, 1.68365f, 6.71f,    23.0717f, 33.3844f, 20.4002f, 7.31067f, 1.02635f, 0.48591f, 1.47069f, 2.87061f,
        1.78321f, 4.30795f, 7.05514f, 9.37615f, 17.963f,  18.2801f, 14.2766f, 10.8542f, 6.07925f, 5.28565f, 4.73887f,
        0.56984f, 3.29826f, 5.28156f, 5.26939f, 3.13191f, 1.74453f, 9.41971f, 21.5894f, 24.6302f, 17.7764f, 7.28878f};
    grip_ctx *ctx = grip_test_ctx();
    size_t n = 0;
    float *normals = NULL;
    float *xyz = pfh_test_read_with_normals(PFH_TEST_BUNNY_NORMALS, &n, &normals);
    ck_assert_uint_eq(n, PFH_TEST_BUNNY_POINTS);

    uint64_t counts[GRIP_FPFH_DIM] = {0};
    for (size_t q = 1; q < n; ++q) {
        int bins[3];
        grip_spfh_pair_bins(xyz, normals, xyz + 3 * q, normals + 4 * q, bins);
        for (int f = 0; f < 3; ++f)
            ++counts[bins[f]];
    }
    float incr = grip_spfh_increment(n);
    double worst = 0.0;
    for (int d = 0; d < GRIP_FPFH_DIM; ++d) {
        double diff = fabs((double)grip_repeat_add(incr, counts[d]) - spfh0[d]);
        worst = diff > worst ? diff : worst;
        ck_assert_msg(diff <= 1e-4, "SPFH bin %d: off by %g", d, diff);
    }
    printf("spfh vs PCL unit test, point 0 over all points: max |diff| %.3g\n", worst);

    grip_kdtree3d *tree = grip_test_kdtree(ctx, xyz, n);
    float desc[GRIP_FPFH_DIM];
    ck_assert_int_eq(grip_fpfh_describe(ctx, xyz, normals, n, tree, xyz, 1, 10.0f, desc), GRIP_OK);
    worst = 0.0;
    for (int d = 0; d < GRIP_FPFH_DIM; ++d) {
        double diff = fabs((double)desc[d] - fpfh0[d]);
        worst = diff > worst ? diff : worst;
        ck_assert_msg(diff <= 1e-2, "bin %d: %.7g, PCL %.7g", d, (double)desc[d], (double)fpfh0[d]);
    }
    printf("fpfh vs PCL unit test, point 0 over all points: max |diff| %.3g\n", worst);
    grip_kdtree3d_free(tree);
    free(normals);
    free(xyz);
    grip_ctx_free(ctx);
}
END_TEST

/* The triplet p, p' (duplicate), q: q's neighbours p and p' weigh equally; each SPFH has the duplicate pair in the
 * middle bins (features 0) and the pair with q in bins theta 5, alpha 0, phi 5: 100 | 50 + 50 | 100. The keypoint
 * p sees only q at a distance; p with itself only (radius below the spacing) gets zeros, a far keypoint NaN. */
START_TEST(duplicates_and_small_neighbourhoods)
{
    grip_ctx *ctx = grip_test_ctx();
    float desc[6 * GRIP_FPFH_DIM];
    pfh_test_triplet_describe(ctx, grip_fpfh_describe, GRIP_FPFH_DIM, desc);
    for (int d = 0; d < GRIP_FPFH_DIM; ++d) {
        float want = (d == 5 || d == 2 * GRIP_FPFH_BINS + 5) ? 100.0f
                     : (d == GRIP_FPFH_BINS || d == GRIP_FPFH_BINS + 5) ? 50.0f : 0.0f;
        ck_assert_msg(desc[d] == want, "bin %d: %g, want %g", d, (double)desc[d], (double)want);
    }
    double sum = 0.0;
    for (int d = 0; d < GRIP_FPFH_DIM; ++d)
        sum += desc[GRIP_FPFH_DIM + d];
    ck_assert_double_eq_tol(sum, 300.0, 1e-3);

    /* radius 5 mm: p and p' only see each other (distance 0), q sees nothing else */
    for (int d = 0; d < 2 * GRIP_FPFH_DIM; ++d)
        ck_assert_float_eq(desc[4 * GRIP_FPFH_DIM + d], 0.0f);

    /* a one-point cloud: p */
    float xyz[3 * PFH_TEST_TRIPLET], normals[4 * PFH_TEST_TRIPLET];
    pfh_test_triplet(xyz, normals);
    grip_kdtree3d *single = grip_test_kdtree(ctx, xyz, 1);
    ck_assert_int_eq(grip_fpfh_describe(ctx, xyz, normals, 1, single, xyz, 1, 0.02f, desc), GRIP_OK);
    for (int d = 0; d < GRIP_FPFH_DIM; ++d)
        ck_assert_float_eq(desc[d], 0.0f);
    grip_kdtree3d_free(single);
    grip_ctx_free(ctx);
}
END_TEST

/* NaN normals give NaN features, binned at 0 in every sub-histogram; a NaN point is in no neighbourhood, so
 * inserting one changes nothing. */
START_TEST(nan_normals_and_nan_points)
{
    grip_ctx *ctx = grip_test_ctx();
    float xyz[3 * (PFH_TEST_PATCH + 1)], normals[4 * (PFH_TEST_PATCH + 1)], *ref = NULL, *out = NULL;
    const size_t n = PFH_TEST_PATCH;
    const float radius = 0.025f;
    grip_kdtree3d *tree = pfh_test_nan_point_changes_nothing(ctx, grip_fpfh_describe, GRIP_FPFH_DIM, 3, radius, xyz,
                                                             normals, &ref, &out);
    for (size_t i = 0; i < n; ++i)
        ck_assert(!isnan(ref[i * GRIP_FPFH_DIM]));

    for (size_t i = 0; i < n; ++i)
        normals[4 * i + 1] = NAN;
    ck_assert_int_eq(grip_fpfh_describe(ctx, xyz, normals, n + 1, tree, xyz, n, radius, out), GRIP_OK);
    for (size_t i = 0; i < n; ++i)
        for (int d = 0; d < GRIP_FPFH_DIM; ++d)
            ck_assert_float_eq_tol(out[i * GRIP_FPFH_DIM + (size_t)d], d % GRIP_FPFH_BINS == 0 ? 100.0f : 0.0f,
                                   1e-4f);
    grip_kdtree3d_free(tree);
    free(out);
    free(ref);
    grip_ctx_free(ctx);
}
END_TEST

START_TEST(stage_matches_the_twin)
{
    pfh_test_stage_matches_twin(&grip_descriptor_fpfh, GRIP_FPFH_DIM, grip_fpfh_describe, "0.04");
}
END_TEST

START_TEST(bad_arguments_are_refused)
{
    pfh_test_bad_arguments_refused(grip_fpfh_describe, GRIP_FPFH_DIM, "fpfh");
}
END_TEST

static Suite *fpfh_suite(void)
{
    Suite *s = suite_create("fpfh");
    TCase *tc = tcase_create("fpfh");
    tcase_add_test(tc, fpfh_matches_pcl_reference_csv);
    tcase_add_test(tc, fpfh_matches_pcl_unit_test);
    tcase_add_test(tc, duplicates_and_small_neighbourhoods);
    tcase_add_test(tc, nan_normals_and_nan_points);
    tcase_add_test(tc, stage_matches_the_twin);
    tcase_add_test(tc, bad_arguments_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return grip_test_run_with_data(fpfh_suite(), TEASER_CSV);
}
