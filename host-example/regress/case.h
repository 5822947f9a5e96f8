/* case.h -- a `grip-host regress` case file: what to recognise in which scene with which pipeline, and what must
 * come out. The syntax is the pipeline config's (config.h: `[section]`, `key = value`, `#` comments); every
 * problem is reported as "file:line: section.key: message". Relative paths are relative to the case file's
 * folder; a path "data:REL" is REL inside the shared data folder (`--data DIR`, else $GRIP_DATA), and a case
 * whose data is absent is skipped, not failed.
 *
 *   [case]
 *   name = tutorial milk          # for the report (default: the file's name without .case)
 *   config = ../../configs/pcl_tutorial.conf
 *                                 # the pipeline; optional for a synth scene (then: the demo's pipeline)
 *   [set]                         # overrides, as --set would give them (the command line's --set come later)
 *   group.threshold = 5
 *   [models]                      # file scenes: label = model file, in model order
 *   milk = data:pcl/data_repo/correspondence_grouping/milk.pcd
 *   [scene]
 *   file = data:pcl/milk_cartoon_all_small_clorox.pcd
 *     or a generated scene (synth.h), its models and truth from the generator, every object expected:
 *   seed = 7                      # and any of objects, noise_sigma, min_visible_fraction, placement_radius,
 *                                 # max_tilt_deg, camera_distance, camera_elevation_deg, width, height,
 *                                 # model_views (default 8); the rest as synth_params_default()
 *   [expect]
 *   max_distance = 0.01           # default tolerances of every instance: mean model-point distance (cloud unit)
 *   max_angle_deg = 10            # and rotation angle
 *   max_false = 0                 # accepted instances that match no expected one (duplicates included)
 *   [instance milk]               # file scenes: one section per expected instance (NAME is free text)
 *   model = milk                  # a label of [models] (default: NAME)
 *   pose = 16 numbers             # model -> scene, row-major
 *   max_distance = 0.01           # optional, overrides [expect] for this instance
 */
#ifndef GRIP_HOST_REGRESS_CASE_H
#define GRIP_HOST_REGRESS_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "synth/synth.h"

typedef struct regress_instance {
    char *name;     /* the section's NAME */
    uint32_t model; /* index into the case's models */
    double pose[16];
    double max_distance, max_angle_deg;
} regress_instance;

/* A parsed case. Every pointer is malloc'd and owned: free with regress_case_free(). */
typedef struct regress_case {
    char *path; /* the case file */
    char *name;
    char *config; /* resolved path, or NULL: the demo's pipeline (synth scenes only) */
    char **sets;  /* n_sets "section.key=value" */
    int n_sets;
    char **model_labels; /* n_models (file scenes) */
    char **model_paths;  /* n_models, resolved */
    uint32_t n_models;
    char *scene_path; /* resolved, or NULL for a synth scene */
    int synth;        /* 1: a generated scene with parameters synth_params */
    synth_params synth_params;
    regress_instance *instances; /* n_instances (file scenes) */
    uint32_t n_instances;
    double max_distance, max_angle_deg;
    uint32_t max_false;
    char *missing_data; /* the first data: path that does not exist (the case is skipped), or NULL */
} regress_case;

/* Reads and checks a case file. data_dir: the shared data folder for "data:" paths (NULL: none; such a case is
 * then skipped). Returns 0, or -1 with every problem in diag ("file:line: section.key: message"); *c is then
 * freed. */
int regress_case_load(const char *path, const char *data_dir, regress_case *c, grip_diag *diag);

void regress_case_free(regress_case *c);

#endif
