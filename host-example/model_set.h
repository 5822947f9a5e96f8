/* model_set.h -- the described models a run recognises, held by grip-host apart from any plugin: each model's
 * cloud and features copied into host memory, and every model's descriptor rows in one array tagged by model id
 * (what the index stage builds from). Made by describing model clouds (pipeline.h) or by reading a model database
 * (model_db.h); kept across scenes, so that a stream of scenes describes its models once. A run of one model that
 * keeps its features where the descriptor stage left them (on the device) holds them instead (model_set_hold). */
#ifndef GRIP_HOST_MODEL_SET_H
#define GRIP_HOST_MODEL_SET_H

#include <stddef.h>
#include <stdint.h>
#include "plugin.h"

/* One model as index, group and verify see it. Every pointer is owned by the model (freed by model_set_free), but
 * features.descriptors, which points into the set's reference rows. */
typedef struct stored_model {
    char *name;             /* the file it was described from (a label; may be "") */
    grip_cloud cloud;       /* host arrays over xyz, cloud_normals, rgb; name = the model's name */
    grip_features features; /* host arrays over the buffers below; features.release frees nothing */
    float *xyz;             /* points x 3 */
    float *cloud_normals;   /* points x 3 (normals the cloud came with), or NULL */
    uint8_t *rgb;           /* points x 3, or NULL */
    uint32_t *keypoints;    /* keypoints x 1: index of each keypoint among the points */
    float *keypoint_xyz;    /* keypoints x 3 */
    float *normals;         /* points x 4 (normal, curvature), or NULL when the descriptor stage gave none */
    float *frames;          /* keypoints x 9, or NULL when the descriptor stage gave none */
} stored_model;

typedef struct model_set {
    uint32_t n_models;
    uint32_t dim;          /* descriptor dimension D, the same for every model */
    stored_model *models;  /* n_models */
    grip_view *views;      /* n_models: {cloud, features} of each model, for group and verify */
    uint64_t rows;         /* every model's keypoints */
    float *reference;      /* rows x dim: the models' descriptors in model order (the index stage's input) */
    uint32_t *model_ids;   /* rows: the model of each reference row (ascending) */
    char *settings;        /* what described them (pipeline.h, pipeline_model_settings); malloc'd */
    uint32_t abi_major, abi_minor; /* the ABI of the plugin that described them */
    grip_features *held;   /* model_set_hold's features (then reference and model_ids are NULL), else NULL */
} model_set;

/* Sizes of one model, as a reader or a copier knows them before filling it. An optional array's rows are 0 when
 * it is absent, else equal to points (cloud_normals, rgb, normals) or to keypoints (frames). */
typedef struct stored_model_shape {
    uint64_t points, keypoints;
    uint32_t width, height;
    uint64_t cloud_normals_rows, rgb_rows, normals_rows, frames_rows;
} stored_model_shape;

/* Allocates a set of n models of descriptor dimension dim whose keypoint counts sum to rows: the models zeroed,
 * the reference rows and model ids allocated (ids not yet set). Returns 0, or -1 when out of memory (*s zeroed). */
int model_set_alloc(model_set *s, uint32_t n, uint32_t dim, uint64_t rows);

/* Allocates model m's buffers to `shape`, sets its name (copied), its cloud and features arrays over them, its
 * descriptors over reference rows [first_row, first_row + keypoints), their model ids, and views[m]. The caller
 * fills the buffers. Returns 0, or -1 when out of memory. */
int model_set_shape(model_set *s, uint32_t m, const char *name, const stored_model_shape *shape, uint64_t first_row);

/* A set holding copies of n described models (views[i]: a model cloud and its features in host memory, as the
 * descriptor stage returned them), named names[i] (NULL: ""). settings (copied) and the ABI describe what made
 * them. Returns 0, or -1 with the reason in err (out of memory; a model whose arrays are not host memory or not of
 * the shapes stored_model_shape allows; descriptor dimensions that differ). */
int model_set_copy(model_set *s, const grip_view *views, const char *const *names, uint32_t n, const char *settings,
                   uint32_t abi_major, uint32_t abi_minor, char *err, size_t errlen);

/* A set of the one model described from cloud, holding its features as the descriptor stage returned them, in
 * whatever memory they lie: the set takes `features` (released by model_set_free) and borrows cloud's arrays, which
 * must outlive it; models[0].cloud is a copy of *cloud and its own buffers stay NULL. The index builds from the
 * features' descriptors where they lie (model_set_reference). One model only: an index takes all its models' rows
 * in one array, and the host can join only rows in its own memory. name and settings are copied. Returns 0, or -1
 * when out of memory (*s zeroed, features not taken). */
int model_set_hold(model_set *s, const grip_cloud *cloud, grip_features *features, const char *name,
                   const char *settings, uint32_t abi_major, uint32_t abi_minor);

/* The rows the index builds from, as an array over the set's memory (host rows, or a held model's descriptors
 * where they lie), and their model ids. Returns 1 with *ids set, or 0 when every row is model 0's (the index's
 * build then takes NULL ids). */
int model_set_reference(const model_set *s, grip_array *rows, grip_array *ids);

/* Frees everything and zeroes *s; safe on a zeroed set and on NULL. */
void model_set_free(model_set *s);

#endif
