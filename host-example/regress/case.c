/* case.c -- see case.h. */
#include "regress/case.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "host_util.h"

#define INSTANCE_PREFIX "instance"
#define DEFAULT_MODEL_VIEWS 8 /* as the demo: each synth model is this many rendered partial views */

static const char *const case_section_names[] = {"case", "set", "models", "scene", "expect", NULL};
static const char *const case_section_prefixes[] = {INSTANCE_PREFIX, NULL};
static const grip_ini_sections case_sections = {case_section_names, case_section_prefixes};

/* What reading the entries needs. */
typedef struct case_reader {
    regress_case *c;
    const char *data_dir;
    char dir[4096]; /* the case file's folder */
    grip_diag *diag;
    int bad;
    const grip_config_entry *scene_file, *first_synth_key;
} case_reader;

static void problem(case_reader *r, const grip_config_entry *e, const char *fmt, const char *detail)
{
    grip_config_report(r->diag, e, fmt, detail);
    r->bad = 1;
}

static int parse_double(case_reader *r, const grip_config_entry *e, double lo, double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(e->value, &end);
    if (!*e->value || *end || errno == ERANGE || !(v >= lo && v <= hi)) {
        char range[96];
        snprintf(range, sizeof range, "'%s' is not a number in %g..%g", e->value, lo, hi);
        problem(r, e, "%s", range);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_unsigned(case_reader *r, const grip_config_entry *e, unsigned long long lo, unsigned long long hi,
                          unsigned long long *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(e->value, &end, 10);
    if (!*e->value || *end || e->value[0] == '-' || errno == ERANGE || v < lo || v > hi) {
        char range[96];
        snprintf(range, sizeof range, "'%s' is not an integer in %llu..%llu", e->value, lo, hi);
        problem(r, e, "%s", range);
        return -1;
    }
    *out = v;
    return 0;
}

/* A path of the case file, resolved: "data:REL" in the data folder, a relative one against the case's folder.
 * A data path that is absent marks the case skipped; any other unreadable path is a problem. */
static char *resolve_path(case_reader *r, const grip_config_entry *e)
{
    char buf[8192];
    int data = strncmp(e->value, "data:", 5) == 0;
    if (!*e->value) {
        problem(r, e, "%s", "empty path");
        return NULL;
    }
    if (data)
        snprintf(buf, sizeof buf, "%s/%s", r->data_dir ? r->data_dir : "<no data folder>", e->value + 5);
    else if (e->value[0] == '/')
        snprintf(buf, sizeof buf, "%s", e->value);
    else
        snprintf(buf, sizeof buf, "%s/%s", r->dir, e->value);
    if (!host_file_readable(buf)) {
        if (!data) {
            problem(r, e, "cannot read '%s'", buf);
            return NULL;
        }
        if (!r->c->missing_data)
            r->c->missing_data = host_strdup(buf);
    }
    char *copy = host_strdup(buf);
    if (!copy)
        problem(r, e, "%s", "out of memory");
    return copy;
}

/* One more slot in an array of count items: the array, grown (the old one is kept, unchanged, on failure). */
#define GROW(array, count) grow_array((void *)(array), (count), sizeof *(array))
static void *grow_array(void *array, size_t count, size_t item)
{
    return realloc(array, (count + 1) * item);
}

static void read_case_key(case_reader *r, const grip_config_entry *e)
{
    regress_case *c = r->c;
    if (strcmp(e->key, "name") == 0) {
        free(c->name);
        c->name = host_strdup(e->value);
    } else if (strcmp(e->key, "config") == 0) {
        free(c->config);
        c->config = resolve_path(r, e);
    } else {
        problem(r, e, "%s", "unknown key (known: name, config)");
    }
}

static void read_set_key(case_reader *r, const grip_config_entry *e)
{
    regress_case *c = r->c;
    if (!strchr(e->key, '.')) {
        problem(r, e, "%s", "expected section.key = value (a pipeline config's section and key)");
        return;
    }
    size_t n = strlen(e->key) + strlen(e->value) + 2;
    char *s = malloc(n), **sets = GROW(c->sets, (size_t)c->n_sets);
    if (sets)
        c->sets = sets;
    if (!s || !sets) {
        free(s);
        problem(r, e, "%s", "out of memory");
        return;
    }
    snprintf(s, n, "%s=%s", e->key, e->value);
    c->sets[c->n_sets++] = s;
}

static void read_model_key(case_reader *r, const grip_config_entry *e)
{
    regress_case *c = r->c;
    char **labels = GROW(c->model_labels, c->n_models);
    if (labels)
        c->model_labels = labels;
    char **paths = labels ? GROW(c->model_paths, c->n_models) : NULL;
    if (paths)
        c->model_paths = paths;
    if (!labels || !paths) {
        problem(r, e, "%s", "out of memory");
        return;
    }
    char *path = resolve_path(r, e), *label = host_strdup(e->key);
    if (!path || !label) {
        free(path);
        free(label);
        return;
    }
    c->model_labels[c->n_models] = label;
    c->model_paths[c->n_models++] = path;
}

static void read_scene_key(case_reader *r, const grip_config_entry *e)
{
    synth_params *p = &r->c->synth_params;
    unsigned long long u = 0;
    if (strcmp(e->key, "file") == 0) {
        r->scene_file = e;
        free(r->c->scene_path);
        r->c->scene_path = resolve_path(r, e);
        return;
    }
    if (!r->first_synth_key)
        r->first_synth_key = e;
    if (strcmp(e->key, "seed") == 0) {
        if (parse_unsigned(r, e, 0, UINT64_MAX, &u) == 0)
            p->seed = u;
    } else if (strcmp(e->key, "objects") == 0) {
        if (parse_unsigned(r, e, 1, 16, &u) == 0)
            p->n_objects = (uint32_t)u;
    } else if (strcmp(e->key, "width") == 0 || strcmp(e->key, "height") == 0) {
        if (parse_unsigned(r, e, 8, 8192, &u) == 0)
            *(e->key[0] == 'w' ? &p->width : &p->height) = (uint32_t)u;
    } else if (strcmp(e->key, "model_views") == 0) {
        if (parse_unsigned(r, e, 0, 360, &u) == 0)
            p->model_views = (uint32_t)u;
    } else if (strcmp(e->key, "noise_sigma") == 0) {
        parse_double(r, e, 0, 0.05, &p->noise_sigma);
    } else if (strcmp(e->key, "min_visible_fraction") == 0) {
        parse_double(r, e, 0, 1, &p->min_visible_fraction);
    } else if (strcmp(e->key, "placement_radius") == 0) {
        parse_double(r, e, 0, 50, &p->placement_radius);
    } else if (strcmp(e->key, "max_tilt_deg") == 0) {
        parse_double(r, e, 0, 30, &p->max_tilt_deg);
    } else if (strcmp(e->key, "camera_distance") == 0) {
        parse_double(r, e, 0.2, 10, &p->camera_distance);
    } else if (strcmp(e->key, "camera_elevation_deg") == 0) {
        parse_double(r, e, 0, 90, &p->camera_elevation_deg);
    } else {
        problem(r, e, "%s",
                "unknown key (known: file, or a generated scene's seed, objects, noise_sigma, min_visible_fraction, "
                "placement_radius, max_tilt_deg, camera_distance, camera_elevation_deg, width, height, model_views)");
    }
}

static void read_tolerance(case_reader *r, const grip_config_entry *e, double *max_distance, double *max_angle_deg)
{
    if (strcmp(e->key, "max_distance") == 0)
        parse_double(r, e, 0, INFINITY, max_distance);
    else
        parse_double(r, e, 0, 180, max_angle_deg);
}

static void read_expect_key(case_reader *r, const grip_config_entry *e)
{
    unsigned long long u = 0;
    if (strcmp(e->key, "max_distance") == 0 || strcmp(e->key, "max_angle_deg") == 0)
        read_tolerance(r, e, &r->c->max_distance, &r->c->max_angle_deg);
    else if (strcmp(e->key, "max_false") == 0) {
        if (parse_unsigned(r, e, 0, UINT32_MAX, &u) == 0)
            r->c->max_false = (uint32_t)u;
    } else
        problem(r, e, "%s", "unknown key (known: max_distance, max_angle_deg, max_false)");
}

/* The instance named by the section, added on its first key. */
static regress_instance *instance_of(case_reader *r, const grip_config_entry *e)
{
    regress_case *c = r->c;
    const char *name = e->section + strlen(INSTANCE_PREFIX) + 1;
    for (uint32_t i = 0; i < c->n_instances; i++)
        if (strcmp(c->instances[i].name, name) == 0)
            return &c->instances[i];
    regress_instance *grown = GROW(c->instances, c->n_instances);
    if (!grown)
        return NULL;
    c->instances = grown;
    regress_instance *in = &c->instances[c->n_instances];
    memset(in, 0, sizeof *in);
    in->pose[0] = NAN; /* no pose given yet */
    in->max_distance = in->max_angle_deg = NAN;
    in->model = UINT32_MAX;
    if (!(in->name = host_strdup(name)))
        return NULL;
    c->n_instances++;
    return in;
}

static void read_pose(case_reader *r, const grip_config_entry *e, double pose[16])
{
    const char *s = e->value;
    int n = 0;
    char *end = NULL;
    while (n < 17) {
        double v = strtod(s, &end);
        if (end == s)
            break;
        if (n < 16)
            pose[n] = v;
        n++;
        s = end;
    }
    while (*s == ' ' || *s == '\t')
        s++;
    int finite = 1;
    for (int k = 0; k < 16 && k < n; k++)
        finite &= isfinite(pose[k]) != 0;
    if (n != 16 || *s || !finite) {
        pose[0] = NAN;
        problem(r, e, "%s", "expected 16 finite numbers (a row-major 4x4 pose, model -> scene)");
    }
}

static void read_instance_key(case_reader *r, const grip_config_entry *e)
{
    regress_instance *in = instance_of(r, e);
    if (!in) {
        problem(r, e, "%s", "out of memory");
        return;
    }
    if (strcmp(e->key, "model") == 0) {
        for (uint32_t m = 0; m < r->c->n_models; m++)
            if (strcmp(r->c->model_labels[m], e->value) == 0)
                in->model = m;
        if (in->model == UINT32_MAX)
            problem(r, e, "'%s' is not a label of [models] (give [models] first)", e->value);
    } else if (strcmp(e->key, "pose") == 0) {
        read_pose(r, e, in->pose);
    } else if (strcmp(e->key, "max_distance") == 0 || strcmp(e->key, "max_angle_deg") == 0) {
        read_tolerance(r, e, &in->max_distance, &in->max_angle_deg);
    } else {
        problem(r, e, "%s", "unknown key (known: model, pose, max_distance, max_angle_deg)");
    }
}

/* Defaults an instance takes from its name and from [expect]; what is still missing is reported. */
static void finish_instances(case_reader *r)
{
    regress_case *c = r->c;
    for (uint32_t i = 0; i < c->n_instances; i++) {
        regress_instance *in = &c->instances[i];
        for (uint32_t m = 0; m < c->n_models && in->model == UINT32_MAX; m++)
            if (strcmp(c->model_labels[m], in->name) == 0)
                in->model = m;
        if (in->model == UINT32_MAX || isnan(in->pose[0])) {
            grip_diag_add(r->diag, "%s: " INSTANCE_PREFIX " %s: %s", c->path, in->name,
                          in->model == UINT32_MAX ? "no model (give model = LABEL of [models])"
                                                  : "no valid pose (give pose = 16 numbers)");
            r->bad = 1;
        }
        if (isnan(in->max_distance))
            in->max_distance = c->max_distance;
        if (isnan(in->max_angle_deg))
            in->max_angle_deg = c->max_angle_deg;
    }
}

/* What the case as a whole must have. */
static void check_whole(case_reader *r)
{
    regress_case *c = r->c;
    c->synth = r->first_synth_key != NULL;
    if (r->scene_file && r->first_synth_key) {
        grip_config_report(r->diag, r->first_synth_key,
                           "a scene is either a file (file = ..., line %d) or generated (seed, objects, ...), not both",
                           r->scene_file->line);
        r->bad = 1;
    } else if (!r->scene_file && !r->first_synth_key) {
        grip_diag_add(r->diag, "%s: scene: missing (give [scene] file = PATH, or seed = N for a generated scene)",
                      c->path);
        r->bad = 1;
    } else if (c->synth && (c->n_models || c->n_instances)) {
        grip_diag_add(r->diag,
                      "%s: a generated scene brings its own models and truth: remove [models] and "
                      "[instance ...]",
                      c->path);
        r->bad = 1;
    } else if (!c->synth && (!c->n_models || !c->config)) {
        grip_diag_add(r->diag, "%s: a file scene needs %s", c->path,
                      !c->n_models ? "[models] (label = model file)" : "[case] config = PIPELINE.conf");
        r->bad = 1;
    }
    finish_instances(r);
}

int regress_case_load(const char *path, const char *data_dir, regress_case *c, grip_diag *diag)
{
    memset(c, 0, sizeof *c);
    synth_params_default(&c->synth_params);
    c->synth_params.model_views = DEFAULT_MODEL_VIEWS;
    c->max_distance = 0.01;
    c->max_angle_deg = 10;
    case_reader r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.data_dir = data_dir;
    r.diag = diag;
    host_dirname(path, r.dir, sizeof r.dir);
    c->path = host_strdup(path);
    grip_config entries = {0};
    if (!c->path || grip_ini_load(path, &case_sections, &entries, diag) != 0)
        r.bad = 1;
    for (size_t i = 0; i < entries.count; i++) {
        const grip_config_entry *e = &entries.entries[i];
        if (strcmp(e->section, "case") == 0)
            read_case_key(&r, e);
        else if (strcmp(e->section, "set") == 0)
            read_set_key(&r, e);
        else if (strcmp(e->section, "models") == 0)
            read_model_key(&r, e);
        else if (strcmp(e->section, "scene") == 0)
            read_scene_key(&r, e);
        else if (strcmp(e->section, "expect") == 0)
            read_expect_key(&r, e);
        else
            read_instance_key(&r, e);
    }
    if (!r.bad)
        check_whole(&r);
    if (!r.bad && !c->name) {
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        const char *dot = strrchr(base, '.');
        c->name = host_strndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
    }
    grip_config_free(&entries);
    if (r.bad || !c->name) {
        if (!c->name && !r.bad)
            grip_diag_add(diag, "%s: out of memory", path);
        regress_case_free(c);
        return -1;
    }
    return 0;
}

void regress_case_free(regress_case *c)
{
    if (!c)
        return;
    free(c->path);
    free(c->name);
    free(c->config);
    for (int i = 0; i < c->n_sets; i++)
        free(c->sets[i]);
    free(c->sets);
    for (uint32_t m = 0; m < c->n_models; m++) {
        free(c->model_labels[m]);
        free(c->model_paths[m]);
    }
    free(c->model_labels);
    free(c->model_paths);
    free(c->scene_path);
    for (uint32_t i = 0; i < c->n_instances; i++)
        free(c->instances[i].name);
    free(c->instances);
    free(c->missing_data);
    memset(c, 0, sizeof *c);
}
