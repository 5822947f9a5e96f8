/* hough3d.c -- see hough3d.h. Where votes land and what they weigh is hough3d_math.h's, shared with the CUDA
 * kernels: in float and double as PCL does (Hough3DGrouping::train/houghVoting, HoughSpace3D::vote/voteInt/
 * findMaxima), so that votes land in the same bins. PCL's grid is dense; this one keeps only the bins that received votes (a sorted list), which
 * gives the same sums, in the same order, and the same maxima. */
#include "group/hough3d.h"
#include "group/hough3d_math.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

grip_hough3d_params grip_hough3d_params_default(void)
{
    grip_hough3d_params p = {1.0, -1.0, 1, 0, GRIP_RANSAC_PCL_ITERATIONS, GRIP_RANSAC_PCL_SEED, 1};
    return p;
}

uint32_t grip_hough3d_min_extra(const grip_hough3d_params *params)
{
    return params->threshold >= 0.0 && params->threshold < 4e9 ? (uint32_t)ceil(params->threshold) : 0;
}

grip_ransac_params grip_hough3d_ransac_params(const grip_hough3d_params *params)
{
    const grip_ransac_params rp = {params->bin_size, params->ransac_iterations, params->seed, params->ransac_rounds,
                                   grip_hough3d_min_extra(params)};
    return rp;
}

/* One share of one vote in one bin. */
typedef struct hough_share {
    int64_t bin;
    size_t seq; /* creation order: sums run in voting order, as in PCL */
    double weight;
    uint32_t voter;
} hough_share;

typedef struct hough_shares {
    hough_share *items;
    size_t count;
} hough_shares;

/* A bin that received shares: its value and its voters items[first .. first + n). */
typedef struct hough_bin {
    int64_t bin;
    double value;
    size_t first, n;
} hough_bin;

/* Hough3DGrouping::train: each model keypoint's vector to the keypoint centroid, in its own frame. */
static void model_votes(const float *xyz, const float *rf, size_t n, float (*votes)[3])
{
    float c[3] = {0.0f, 0.0f, 0.0f};
    for (size_t i = 0; i < n; ++i)
        for (int d = 0; d < 3; ++d)
            c[d] += xyz[i * 3 + d];
    for (int d = 0; d < 3; ++d)
        c[d] /= (float)n;
    for (size_t i = 0; i < n; ++i) {
        grip_hough3d_model_vote(xyz + i * 3, rf + i * 9, c, votes[i]);
    }
}

/* Where correspondence c places the model's reference point in the scene; 0 when it casts no vote. */
static int scene_vote(const grip_corr *c, const float (*mvotes)[3], const float *model_rf, const float *scene_kp_xyz,
                      const float *scene_rf, double vote[3])
{
    return grip_hough3d_scene_vote(scene_kp_xyz + (size_t)c->scene * 3, scene_rf + (size_t)c->scene * 9,
                                   model_rf + (size_t)c->model * 9, mvotes[c->model], vote);
}

grip_status grip_hough3d_grid_make(grip_ctx *ctx, const double lo[3], const double hi[3], double bin,
                                   grip_hough3d_grid *g)
{
    g->bin = bin;
    double total = 1.0;
    for (int d = 0; d < 3; ++d) {
        g->min[d] = lo[d];
        double count = ceil((hi[d] - lo[d]) / bin);
        if (count > (double)INT32_MAX)
            return grip_fail(ctx, GRIP_EINVAL, "group.hough3d.bin_size: %g is too small for votes spanning %g m",
                             bin, hi[d] - lo[d]);
        g->count[d] = (int64_t)count;
        total *= count;
    }
    if (total > (double)INT64_MAX / 2)
        return grip_fail(ctx, GRIP_EINVAL, "group.hough3d.bin_size: %g makes %g bins, too many", bin, total);
    g->stride[0] = 1;
    g->stride[1] = g->count[0];
    g->stride[2] = g->count[0] * g->count[1];
    return GRIP_OK;
}

static void add_share(hough_shares *s, int64_t bin, double weight, uint32_t voter)
{
    hough_share *h = &s->items[s->count];
    h->bin = bin;
    h->seq = s->count++;
    h->weight = weight;
    h->voter = voter;
}

static void add_shares(hough_shares *s, const grip_hough3d_grid *g, const double v[3], double weight, int interpolate,
                       uint32_t voter)
{
    int64_t bins[GRIP_HOUGH3D_MAX_SHARES];
    double weights[GRIP_HOUGH3D_MAX_SHARES];
    int n = grip_hough3d_shares(g, v, weight, interpolate, bins, weights);
    for (int k = 0; k < n; ++k)
        add_share(s, bins[k], weights[k], voter);
}

static int by_bin_then_seq(const void *a, const void *b)
{
    const hough_share *x = a, *y = b;
    if (x->bin != y->bin)
        return x->bin < y->bin ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Sorts the shares by bin and sums each bin in voting order. *bins is malloc'd. */
static grip_status accumulate(grip_ctx *ctx, hough_shares *s, hough_bin **bins, size_t *n_bins)
{
    qsort(s->items, s->count, sizeof *s->items, by_bin_then_seq);
    *bins = malloc((s->count ? s->count : 1) * sizeof **bins);
    if (!*bins)
        return grip_fail(ctx, GRIP_ENOMEM, "group.hough3d: out of memory for %zu bins", s->count);
    size_t n = 0;
    for (size_t i = 0; i < s->count; ++i) {
        if (n == 0 || (*bins)[n - 1].bin != s->items[i].bin) {
            (*bins)[n].bin = s->items[i].bin;
            (*bins)[n].value = 0.0;
            (*bins)[n].first = i;
            (*bins)[n].n = 0;
            ++n;
        }
        (*bins)[n - 1].value += s->items[i].weight;
        (*bins)[n - 1].n++;
    }
    *n_bins = n;
    return GRIP_OK;
}

/* The value of a bin (0 when nobody voted into it). */
static double bin_value(const hough_bin *bins, size_t n, int64_t bin)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (bins[mid].bin < bin)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && bins[lo].bin == bin ? bins[lo].value : 0.0;
}

/* HoughSpace3D::findMaxima: not lower than any of the 6 face neighbours inside the grid. */
static int is_local_maximum(const grip_hough3d_grid *g, const hough_bin *bins, size_t n, const hough_bin *b)
{
    int64_t rest = b->bin;
    int64_t coord[3];
    coord[2] = rest / g->stride[2];
    rest %= g->stride[2];
    coord[1] = rest / g->stride[1];
    coord[0] = rest % g->stride[1];
    for (int d = 2; d >= 0; --d) {
        if (coord[d] > 0 && b->value < bin_value(bins, n, b->bin - g->stride[d]))
            return 0;
        if (coord[d] < g->count[d] - 1 && b->value < bin_value(bins, n, b->bin + g->stride[d]))
            return 0;
    }
    return 1;
}

static double effective_threshold(double threshold, const hough_bin *bins, size_t n)
{
    double maximum = DBL_MIN; /* PCL starts from std::numeric_limits<double>::min() */
    for (size_t i = 0; i < n; ++i)
        if (bins[i].value > maximum)
            maximum = bins[i].value;
    return grip_hough3d_threshold(threshold, maximum);
}

static grip_status maxima_to_clusters(grip_ctx *ctx, const grip_hough3d_grid *g, const hough_bin *bins, size_t n_bins,
                                      const hough_shares *s, double threshold, grip_cluster **out, size_t *n_out)
{
    double min_value = effective_threshold(threshold, bins, n_bins);
    size_t n = 0;
    for (size_t i = 0; i < n_bins; ++i)
        n += bins[i].value >= min_value && is_local_maximum(g, bins, n_bins, &bins[i]);
    if (n == 0)
        return GRIP_OK;
    *out = calloc(n, sizeof **out);
    if (!*out)
        return grip_fail(ctx, GRIP_ENOMEM, "group.hough3d: out of memory for %zu clusters", n);
    for (size_t i = 0; i < n_bins; ++i) {
        if (!(bins[i].value >= min_value && is_local_maximum(g, bins, n_bins, &bins[i])))
            continue;
        grip_cluster *c = &(*out)[*n_out];
        c->members = malloc(bins[i].n * sizeof *c->members);
        if (!c->members)
            return grip_fail(ctx, GRIP_ENOMEM, "group.hough3d: out of memory for a %zu-member cluster", bins[i].n);
        for (size_t j = 0; j < bins[i].n; ++j)
            c->members[j] = s->items[bins[i].first + j].voter;
        c->n_members = (uint32_t)bins[i].n;
        c->votes = bins[i].value;
        grip_pose_identity(c->pose);
        ++*n_out;
    }
    return GRIP_OK;
}

grip_status grip_hough3d_check_inputs(grip_ctx *ctx, const grip_hough3d_params *params, const float *model_kp_xyz,
                                const float *model_rf, size_t n_model_kp, const float *scene_kp_xyz,
                                const float *scene_rf, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                                grip_cluster **out, size_t *n_out)
{
    if (!out || !n_out)
        return grip_fail(ctx, GRIP_EINVAL, "group.hough3d: out and n_out must not be NULL");
    if (!params)
        return grip_fail(ctx, GRIP_EINVAL, "group.hough3d: parameters must not be NULL");
    if (!(params->bin_size > 0.0) || !isfinite(params->bin_size))
        return grip_fail(ctx, GRIP_EINVAL, "group.hough3d.bin_size: %g must be finite and > 0", params->bin_size);
    if (!isfinite(params->threshold))
        return grip_fail(ctx, GRIP_EINVAL, "group.hough3d.threshold: must be finite");
    if (n_corr > 0 && (!model_rf || !scene_rf))
        return grip_fail(ctx, GRIP_EINVAL, "group.hough3d: model and scene frames must not be NULL");
    return grip_corr_check(ctx, "group.hough3d", corr, n_corr, model_kp_xyz, n_model_kp, scene_kp_xyz, n_scene_kp);
}

/* Casts every vote; lo and hi get the votes' bounding box. Returns how many votes are finite. */
static size_t cast_votes(const grip_hough3d_params *params, const float (*mvotes)[3], const float *model_rf,
                         const float *scene_kp_xyz, const float *scene_rf, const grip_corr *corr, size_t n_corr,
                         double (*votes)[3], unsigned char *valid, double lo[3], double hi[3], float *max_sqdist)
{
    size_t n_valid = 0;
    *max_sqdist = -FLT_MAX;
    for (int d = 0; d < 3; ++d) {
        lo[d] = DBL_MAX;
        hi[d] = -DBL_MAX;
    }
    for (size_t i = 0; i < n_corr; ++i) {
        valid[i] = (unsigned char)scene_vote(&corr[i], mvotes, model_rf, scene_kp_xyz, scene_rf, votes[i]);
        if (valid[i]) {
            ++n_valid;
            for (int d = 0; d < 3; ++d) {
                lo[d] = fmin(lo[d], votes[i][d]);
                hi[d] = fmax(hi[d], votes[i][d]);
            }
        }
        if (params->use_interpolation && *max_sqdist < corr[i].sqdist)
            *max_sqdist = corr[i].sqdist;
    }
    return n_valid;
}

static grip_status vote_and_find_maxima(grip_ctx *ctx, const grip_hough3d_params *params, const grip_corr *corr,
                                        size_t n_corr, const double (*votes)[3], const unsigned char *valid,
                                        const double lo[3], const double hi[3], float max_sqdist, grip_cluster **out,
                                        size_t *n_out)
{
    grip_hough3d_grid g;
    grip_status st = grip_hough3d_grid_make(ctx, lo, hi, params->bin_size, &g);
    if (st != GRIP_OK)
        return st;
    hough_shares s = {malloc(n_corr * 8 * sizeof *s.items), 0};
    if (!s.items)
        return grip_fail(ctx, GRIP_ENOMEM, "group.hough3d: out of memory for %zu votes", n_corr);
    for (size_t i = 0; i < n_corr; ++i) {
        if (!valid[i])
            continue;
        double weight = grip_hough3d_weight(params->use_distance_weight, corr[i].sqdist, max_sqdist);
        add_shares(&s, &g, votes[i], weight, params->use_interpolation, (uint32_t)i);
    }
    hough_bin *bins = NULL;
    size_t n_bins = 0;
    st = accumulate(ctx, &s, &bins, &n_bins);
    if (st == GRIP_OK)
        st = maxima_to_clusters(ctx, &g, bins, n_bins, &s, params->threshold, out, n_out);
    free(bins);
    free(s.items);
    return st;
}

grip_status grip_hough3d_vote(grip_ctx *ctx, const grip_hough3d_params *params, const float *model_kp_xyz,
                              const float *model_rf, size_t n_model_kp, const float *scene_kp_xyz,
                              const float *scene_rf, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                              grip_cluster **out, size_t *n_out)
{
    if (out)
        *out = NULL;
    if (n_out)
        *n_out = 0;
    grip_status st = grip_hough3d_check_inputs(ctx, params, model_kp_xyz, model_rf, n_model_kp, scene_kp_xyz, scene_rf, n_scene_kp,
                                  corr, n_corr, out, n_out);
    if (st != GRIP_OK || n_corr == 0)
        return st;

    float(*mvotes)[3] = malloc(n_model_kp * sizeof *mvotes);
    double(*votes)[3] = malloc(n_corr * sizeof *votes);
    unsigned char *valid = malloc(n_corr);
    if (!mvotes || !votes || !valid) {
        st = grip_fail(ctx, GRIP_ENOMEM, "group.hough3d: out of memory for %zu votes", n_corr);
    } else {
        double lo[3], hi[3];
        float max_sqdist;
        model_votes(model_kp_xyz, model_rf, n_model_kp, mvotes);
        size_t n_valid = cast_votes(params, (const float(*)[3])mvotes, model_rf, scene_kp_xyz, scene_rf, corr, n_corr,
                                    votes, valid, lo, hi, &max_sqdist);
        if (n_valid > 0)
            st = vote_and_find_maxima(ctx, params, corr, n_corr, (const double(*)[3])votes, valid, lo, hi, max_sqdist,
                                      out, n_out);
    }
    free(mvotes);
    free(votes);
    free(valid);
    if (st != GRIP_OK) {
        grip_clusters_free(*out, *n_out);
        *out = NULL;
        *n_out = 0;
    }
    return st;
}

grip_status grip_hough3d_cluster(grip_ctx *ctx, const grip_hough3d_params *params, const float *model_kp_xyz,
                                 const float *model_rf, size_t n_model_kp, const float *scene_kp_xyz,
                                 const float *scene_rf, size_t n_scene_kp, const grip_corr *corr, size_t n_corr,
                                 grip_cluster **out, size_t *n_out)
{
    grip_status st = grip_hough3d_vote(ctx, params, model_kp_xyz, model_rf, n_model_kp, scene_kp_xyz, scene_rf,
                                       n_scene_kp, corr, n_corr, out, n_out);
    if (st != GRIP_OK)
        return st;
    const grip_ransac_params rp = grip_hough3d_ransac_params(params);
    return grip_clusters_ransac(ctx, &rp, model_kp_xyz, scene_kp_xyz, corr, out, n_out);
}
