/* workloads.h -- the named workloads of `grip-host bench pipeline` (pipeline.c): what each recognises, and its clouds
 * made ready in host memory. Internal to bench/.
 *
 *   tutorial        PCL's correspondence-grouping pair from the shared data folder: the milk model
 *                   (pcl/data_repo/correspondence_grouping/milk.pcd) in the 640 x 480 scene
 *                   (pcl/milk_cartoon_all_small_clorox.pcd); default config configs/pcl_tutorial.conf.
 *   synth-PxM       a scene rendered by the project's generator (synth/synth.h) of about P finite points
 *                   (P = 1e5, 1e6 or 3e6) against M models (M = 1, 10 or 100); default config
 *                   configs/synth_hough3d_icp.conf.
 *
 * How a generated workload reaches its sizes: the points by the image size alone (the generator's camera keeps its
 * field of view, fx = 525 * width / 640, so a larger image samples the same table and objects more densely; the
 * table and objects fill ~81 % of the image, the rest is NaN): 400 x 300 (1e5), 1280 x 960 (1e6), 2224 x 1668 (3e6).
 * The models by the objects and the views of each: every model is one partial view of one kind (the generator
 * renders model_views views of each kind present, as the scene's camera sees the object alone), and the run
 * gets each view as a model of its own (a view-based model set, as PCL's tutorial's one-view milk model):
 * 2 objects of 2 kinds x 5 views (10 models), 16 objects of the catalogue's 4 kinds x 25 views (100). With one
 * model, 1 object whose kind's 8 views are merged into its one model, as `grip-host demo` models a kind (a single
 * view finds the object only when it happens to show the side the view saw). The views are rendered at the
 * scene's image size, so larger workloads have denser models too.
 * `scale` (0 < scale <= 1, for quick runs) multiplies the image's area, each side by sqrt(scale) (at least 8
 * pixels): the points scale with it, the models' count does not. */
#ifndef GRIP_HOST_BENCH_WORKLOADS_H
#define GRIP_HOST_BENCH_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>

#include "io/cloud_io.h"
#include "synth/synth.h"

/* The workloads `bench pipeline` runs when none is named, smallest first. */
#define WORKLOADS_DEFAULT "tutorial,synth-1e5x1,synth-1e6x10,synth-3e6x100"

typedef struct workload {
    char name[32];              /* "tutorial", "synth-1e6x10" */
    int tutorial;               /* 1: the tutorial pair; 0: generated */
    int repeat;                 /* NAME:N in the list: this workload's timed runs; 0: the command's */
    const char *config;         /* its default config, a shipped one (shipped_configs.h): "configs/....conf" */
    synth_params synth;         /* generated: the generator's parameters (seed set by workload_load) */
    int merged_views;           /* generated: each kind's views make one model (else each view is one) */
} workload;

/* Parses one entry of --workloads ("synth-1e6x10", "tutorial", each optionally ":REPEAT", REPEAT 1..1000) with the
 * image scaled by scale. Returns 0, or -1 with the reason (naming the known workloads) in err. */
int workload_parse(const char *entry, size_t len, double scale, workload *w, char *err, size_t errlen);

/* A workload's clouds, in host memory. Owns what it points to: free with workload_clouds_free(). */
typedef struct workload_clouds {
    const host_cloud *clouds; /* n_clouds model clouds (views), as pipeline_run takes them */
    uint32_t n_clouds;
    uint32_t *model_of_cloud; /* n_clouds model ids when views are merged into models, else NULL */
    uint32_t n_models;        /* models: kinds when merged, else n_clouds */
    const host_cloud *scene;
    uint32_t objects;         /* objects in the scene */
    synth_scene synth;        /* a generated workload's scene and model views */
    host_cloud files[2];      /* the tutorial's model and scene, read */
} workload_clouds;

/* Makes w's clouds: renders a generated workload with seed; reads the tutorial pair from data_dir (NULL: no
 * folder). Returns 0; 1 when the workload cannot run here (the tutorial pair is absent: err says where it was
 * looked for); -1 when it failed (err says why). */
int workload_load(const workload *w, const char *data_dir, uint64_t seed, workload_clouds *c, char *err,
                  size_t errlen);
void workload_clouds_free(workload_clouds *c);

/* Points in c's model clouds (views), all together. */
size_t workload_model_points(const workload_clouds *c);

#endif
