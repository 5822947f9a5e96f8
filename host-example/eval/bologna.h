/* bologna.h -- the Bologna "Retrieval" data (DATA/bologna_retrieval, README there) as `eval descriptors`,
 * `eval recognition --data` and `eval registration` use it: the six Stanford models, which of them and which noise
 * levels the options ask for, and the scenes -- each one model, rigidly posed, with Gaussian noise per axis in
 * Bologna mesh resolutions: the published scene at noise 0.1 where this copy of the data has it, else a copy made
 * here (posed by the published pose where there is one, else by a seeded random one). */
#ifndef GRIP_HOST_EVAL_BOLOGNA_H
#define GRIP_HOST_EVAL_BOLOGNA_H

#include <stdint.h>

#include "commands/commands.h"
#include "io/cloud_io.h"

typedef struct bologna_model {
    const char *name, *file;
    int scene; /* the Bologna scene of this model whose pose and noise-0.1 copy may be in DATA */
} bologna_model;

#define BOLOGNA_MODELS 6
extern const bologna_model bologna_models[BOLOGNA_MODELS];

/* The Bologna scenes' noise unit in the host's mesh resolution (the median nearest-neighbour spacing): their
 * "noise 0.1" scenes lie 0.248 (bunny) and 0.258 (Armadillo) host mesh resolutions rms from T model (bench recall
 * measures it), i.e. 0.143 and 0.149 per axis: their unit is about 1.46 spacings (close to the mean edge length). */
#define BOLOGNA_NOISE_UNIT_MR 1.46
#define BOLOGNA_MAX_NOISE 8

/* What the options chose. */
typedef struct bologna_selection {
    char root[4096]; /* DATA/bologna_retrieval */
    double noise[BOLOGNA_MAX_NOISE];
    int n_noise;
    int use_model[BOLOGNA_MODELS];
} bologna_selection;

/* Reads --data (or $GRIP_DATA), --noise (default_noise when absent, e.g. "0.1,0.3,0.5") and --models (all six when
 * absent) for the command named `command` in messages, and checks that the data is there. Returns 0; 1 when the
 * data is absent; 2 on a usage error (each after saying why on stderr). */
int bologna_select(const host_options *o, const char *command, const char *default_noise, bologna_selection *s);

/* Reads model `mi` (*model zeroed first; free with host_cloud_free) and measures its host mesh resolution *mr.
 * 0, or 1 after saying why on stderr. */
int bologna_load_model(const bologna_selection *s, int mi, host_cloud *model, double *mr);

/* The random stream of model `mi` under `seed`: one per model, so that a model's keypoints and scenes do not
 * depend on which others run. */
uint64_t bologna_model_rng(uint64_t seed, int mi);

/* How a scene was made. */
typedef struct bologna_scene_info {
    double noise, residual_mr; /* noise in Bologna mesh resolutions; rms |scene_k - T model_k| in host ones */
    const char *source;        /* "published" or "generated" */
    const char *pose;          /* "published" or "random" */
} bologna_scene_info;

/* The scene of model `mi` (read by bologna_load_model, host mesh resolution mr) at `noise`: *scene (zeroed first;
 * free with host_cloud_free) and its pose T (model -> scene), drawing from rng where it must. 0, or 1 after saying
 * why on stderr. */
int bologna_make_scene(const bologna_selection *s, int mi, const host_cloud *model, double mr, double noise,
                       uint64_t *rng, host_cloud *scene, double T[16], bologna_scene_info *info);

#endif
