/* group_tutorial.h -- PCL's correspondence-grouping tutorial data (../shared/data/pcl_reference/tutorial) as the
 * grouping tests use it: keypoint coordinates, correspondences, reference frames and PCL's instances. Helpers
 * for test_gc.c, test_hough3d.c and test_board.c, on test_support.h's readers; they abort the running Check test
 * on any problem. */
#ifndef GRIP_TEST_GROUP_TUTORIAL_H
#define GRIP_TEST_GROUP_TUTORIAL_H

#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TUTORIAL "pcl_reference/tutorial/"
#define MODEL_CLOUD "pcl/data_repo/correspondence_grouping/milk.pcd"
#define SCENE_CLOUD "pcl/milk_cartoon_all_small_clorox.pcd"

/* The keypoints' coordinates: PCL's keypoint indices looked up in the cloud. malloc'd. */
static inline float *keypoints_xyz(const char *cloud_rel, const char *indices_rel, size_t *n)
{
    host_cloud cloud = grip_test_read_cloud(cloud_rel);
    uint32_t *idx = grip_test_read_rows(indices_rel, sizeof *idx, n);
    float *xyz = grip_test_gather_xyz(&cloud, idx, *n);
    free(idx);
    host_cloud_free(&cloud);
    return xyz;
}

/* A gzip'd float32 array of the tutorial that must have rows x cols values. malloc'd. */
static inline float *read_f32(const char *rel, size_t rows, size_t cols)
{
    size_t got = 0;
    float *v = grip_test_read_rows(rel, cols * sizeof *v, &got);
    ck_assert_uint_eq(got, rows);
    return v;
}

/* One instance of instances.txt ("<method> instances N", then per instance its pose and its (scene, model)
 * member pairs). Returns the number of instances of that method. */
typedef struct pcl_instance {
    double pose[16];
    size_t n;
    uint32_t pairs[64][2];
} pcl_instance;

static inline size_t read_instances(const char *method, pcl_instance *inst, size_t max)
{
    char path[4096], word[64];
    ck_assert(grip_test_data_path(path, sizeof path, TUTORIAL "instances.txt"));
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t count = 0;
    while (fscanf(f, "%63s", word) == 1) {
        if (strcmp(word, method) != 0)
            continue;
        ck_assert_int_eq(fscanf(f, " instances %zu", &count), 1);
        ck_assert_uint_le(count, max);
        for (size_t i = 0; i < count; ++i) {
            size_t index;
            ck_assert_int_eq(fscanf(f, " instance %zu correspondences %zu pose", &index, &inst[i].n), 2);
            ck_assert_uint_le(inst[i].n, 64);
            for (int k = 0; k < 16; ++k)
                ck_assert_int_eq(fscanf(f, "%lf", &inst[i].pose[k]), 1);
            ck_assert_int_eq(fscanf(f, " members (scene_kp model_kp)"), 0);
            for (size_t k = 0; k < inst[i].n; ++k)
                ck_assert_int_eq(fscanf(f, "%u %u", &inst[i].pairs[k][0], &inst[i].pairs[k][1]), 2);
        }
        break;
    }
    fclose(f);
    return count;
}

typedef struct tutorial {
    float *model_kp, *scene_kp;
    size_t n_model_kp, n_scene_kp, n_corr;
    grip_corr *corr;
} tutorial;

static inline tutorial tutorial_load(void)
{
    tutorial t;
    t.model_kp = keypoints_xyz(MODEL_CLOUD, TUTORIAL "model_keypoints.u32.gz", &t.n_model_kp);
    t.scene_kp = keypoints_xyz(SCENE_CLOUD, TUTORIAL "scene_keypoints.u32.gz", &t.n_scene_kp);
    t.corr = grip_test_read_correspondences(TUTORIAL "correspondences.tsv", &t.n_corr);
    ck_assert_uint_eq(t.n_model_kp, 686);
    ck_assert_uint_eq(t.n_scene_kp, 3747);
    ck_assert_uint_eq(t.n_corr, 1797);
    return t;
}

static inline void tutorial_free(tutorial *t)
{
    free(t->model_kp);
    free(t->scene_kp);
    free(t->corr);
}

/* Whether the cluster has the correspondence (scene, model) among its members. */
static inline int has_pair(const grip_cluster *c, const grip_corr *corr, uint32_t scene, uint32_t model)
{
    for (uint32_t i = 0; i < c->n_members; ++i)
        if (corr[c->members[i]].scene == scene && corr[c->members[i]].model == model)
            return 1;
    return 0;
}

/* The cluster holds every member of PCL's instance; `what` and i name the cluster in the failure message. */
static inline void assert_has_pcl_members(const char *what, size_t i, const grip_cluster *c, const grip_corr *corr,
                                          const pcl_instance *pcl)
{
    for (size_t k = 0; k < pcl->n; ++k)
        ck_assert_msg(has_pair(c, corr, pcl->pairs[k][0], pcl->pairs[k][1]), "%s %zu lacks PCL's member (%u, %u)",
                      what, i, pcl->pairs[k][0], pcl->pairs[k][1]);
}

static inline double pose_max_difference(const double a[16], const double b[16])
{
    double m = 0.0;
    for (int k = 0; k < 16; ++k)
        m = fmax(m, fabs(a[k] - b[k]));
    return m;
}

/* Mean displacement of the model keypoints between two poses. */
static inline double mean_displacement(const double a[16], const double b[16], const float *xyz, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) {
        double d2 = 0.0;
        for (int r = 0; r < 3; ++r) {
            double pa = a[r * 4 + 3], pb = b[r * 4 + 3];
            for (int c = 0; c < 3; ++c) {
                pa += a[r * 4 + c] * xyz[i * 3 + c];
                pb += b[r * 4 + c] * xyz[i * 3 + c];
            }
            d2 += (pa - pb) * (pa - pb);
        }
        sum += sqrt(d2);
    }
    return sum / (double)n;
}

/* The cluster after RANSAC is PCL's instance: the same members, and a pose equal to float precision (entries and
 * the model keypoints it moves, within 1e-5). Prints the differences, `what` and i naming the cluster. */
static inline void assert_is_pcl_instance(const char *what, size_t i, const grip_cluster *c, const pcl_instance *pcl,
                                          const tutorial *t)
{
    double worst = pose_max_difference(c->pose, pcl->pose);
    double moved = mean_displacement(c->pose, pcl->pose, t->model_kp, t->n_model_kp);
    fprintf(stderr, "%s %zu: %u members (PCL %zu), pose max |diff| %.3g, mean keypoint shift %.3g m\n", what, i,
            c->n_members, pcl->n, worst, moved);
    ck_assert_uint_eq(c->n_members, pcl->n);
    assert_has_pcl_members(what, i, c, t->corr, pcl);
    ck_assert_double_le(worst, 1e-5);
    ck_assert_double_le(moved, 1e-5);
}

#endif
