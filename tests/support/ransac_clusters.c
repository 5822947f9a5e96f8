/* ransac_clusters.c -- see ransac_clusters.h. */
#include "ransac_clusters.h"
#include "icp_scene.h"

#include <stdlib.h>
#include <string.h>

/* Shares of a cluster's members under its first, second and third pose; the rest are outliers. */
static const double pose_share[3] = {0.45, 0.25, 0.15};

static void apply(const double T[16], const float p[3], float out[3])
{
    for (int r = 0; r < 3; ++r)
        out[r] = (float)(T[4 * r] * p[0] + T[4 * r + 1] * p[1] + T[4 * r + 2] * p[2] + T[4 * r + 3]);
}

/* Cluster c's correspondences, from first on: model keypoints in a 16 cm box, scene keypoints by pose. */
static void make_cluster(uint64_t *seed, size_t c, grip_ransac_scene *s)
{
    static const double identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    const double origin[3] = {0, 0, 0};
    double poses[3][16];
    grip_icp_perturb(seed, identity, origin, 180.0 * grip_icp_uniform(seed), 1.0, poses[0]);
    const double centre[3] = {poses[0][3], poses[0][7], poses[0][11]}; /* the object's centre in the scene */
    const int n_poses = 1 + (int)(c % 3);
    for (int k = 1; k < n_poses; ++k) /* the object turned about its centre: another way it could lie */
        grip_icp_perturb(seed, poses[0], centre, 60.0 * k, 0.0, poses[k]);
    for (uint32_t j = 0; j < s->size[c]; ++j) {
        const size_t i = s->first[c] + j;
        float *m = s->model_kp + 3 * i, *q = s->scene_kp + 3 * i;
        const int shares_model_kp = j > 0 && j % 8 == 0; /* a second scene match of the previous model keypoint */
        for (int d = 0; d < 3; ++d)
            m[d] = shares_model_kp ? s->model_kp[3 * (i - 1) + d] : (float)(0.16 * grip_icp_uniform(seed) - 0.08);
        s->corr[i] = (grip_corr){(uint32_t)i, (uint32_t)(shares_model_kp ? i - 1 : i), (float)grip_icp_uniform(seed)};
        double u = grip_icp_uniform(seed);
        int k = 0;
        while (k < n_poses && u >= pose_share[k])
            u -= pose_share[k++];
        if (k < n_poses) {
            apply(poses[k], m, q);
            for (int d = 0; d < 3; ++d)
                q[d] += (float)(0.002 * grip_icp_uniform(seed) - 0.001);
        } else { /* an outlier near the object */
            for (int d = 0; d < 3; ++d)
                q[d] = (float)(centre[d] + 0.2 * grip_icp_uniform(seed) - 0.1);
        }
    }
}

int grip_ransac_scene_make(uint64_t seed, size_t n_clusters, uint32_t min_size, uint32_t max_size,
                           grip_ransac_scene *out)
{
    memset(out, 0, sizeof *out);
    out->first = malloc((n_clusters + 1) * sizeof *out->first);
    out->size = malloc((n_clusters + 1) * sizeof *out->size);
    if (!out->first || !out->size) {
        grip_ransac_scene_free(out);
        return 0;
    }
    out->n_clusters = n_clusters;
    size_t n = 0;
    for (size_t c = 0; c < n_clusters; ++c) {
        out->first[c] = (uint32_t)n;
        out->size[c] = min_size + (uint32_t)((max_size - min_size + 1) * grip_icp_uniform(&seed));
        n += out->size[c];
    }
    out->n_corr = n;
    out->model_kp = malloc((n + 1) * 3 * sizeof(float));
    out->scene_kp = malloc((n + 1) * 3 * sizeof(float));
    out->corr = malloc((n + 1) * sizeof *out->corr);
    if (!out->model_kp || !out->scene_kp || !out->corr) {
        grip_ransac_scene_free(out);
        return 0;
    }
    for (size_t c = 0; c < n_clusters; ++c)
        make_cluster(&seed, c, out);
    return 1;
}

void grip_ransac_scene_free(grip_ransac_scene *s)
{
    free(s->model_kp);
    free(s->scene_kp);
    free(s->corr);
    free(s->first);
    free(s->size);
    memset(s, 0, sizeof *s);
}

grip_cluster *grip_ransac_scene_clusters(const grip_ransac_scene *s)
{
    grip_cluster *c = calloc(s->n_clusters + 1, sizeof *c);
    if (!c)
        return NULL;
    for (size_t k = 0; k < s->n_clusters; ++k) {
        c[k].members = malloc(((size_t)s->size[k] + 1) * sizeof(uint32_t));
        if (!c[k].members) {
            grip_clusters_free(c, k);
            return NULL;
        }
        for (uint32_t j = 0; j < s->size[k]; ++j)
            c[k].members[j] = s->first[k] + j;
        c[k].n_members = s->size[k];
        c[k].votes = s->size[k];
    }
    return c;
}
