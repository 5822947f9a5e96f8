/* run_scenes.c -- `grip-host run` over a stream of scenes (--scene repeated, --scene-list) or against a model
 * database (--models): the models are described (or loaded) once and indexed once, then every scene is run against
 * them and reported on its own (a JSON line with --json). A scene that cannot be read or run is reported in its
 * place and the others still run; the exit status is then 1.
 *
 * The pipeline is opened once, or for each scene when the config writes a length in mr (each scene's resolution
 * then resolves it). Described models are described again only when the descriptor settings change with it; a
 * database's models are refused for a scene whose settings differ from theirs (pipeline_check_models).
 * Each scene's lengths are checked against it and the models as a single run checks them (plausibility.h): the
 * warnings go to stderr under the scene's name and into its report. */
#include "commands/commands.h"
#include "host_util.h"
#include "model_db.h"
#include "plausibility.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The scenes to run: o's --scene paths, then each --scene-list's lines. */
typedef struct scene_paths {
    char **paths; /* n malloc'd paths */
    size_t n, capacity;
} scene_paths;

static int add_path(scene_paths *s, const char *path, size_t len)
{
    if (s->n == s->capacity) {
        size_t cap = s->capacity ? 2 * s->capacity : 16;
        char **grown = realloc(s->paths, cap * sizeof *grown);
        if (!grown)
            return -1;
        s->paths = grown;
        s->capacity = cap;
    }
    if (!(s->paths[s->n] = host_strndup(path, len)))
        return -1;
    s->n++;
    return 0;
}

static void scene_paths_free(scene_paths *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->paths[i]);
    free(s->paths);
    memset(s, 0, sizeof *s);
}

/* Appends the scenes a list file names: one path a line, blank lines and lines starting with '#' skipped,
 * surrounding blanks trimmed, a relative path taken from the list file's folder. 0, or -1 after a message. */
static int read_scene_list(const char *list, scene_paths *s)
{
    FILE *fp = fopen(list, "r");
    if (!fp) {
        fprintf(stderr, "grip-host: --scene-list %s: cannot open\n", list);
        return -1;
    }
    char dir[4096], line[8192], joined[12300];
    host_dirname(list, dir, sizeof dir);
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, fp)) {
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            fprintf(stderr, "grip-host: --scene-list %s: a line longer than %zu bytes\n", list, sizeof line - 2);
            rc = -1;
            break;
        }
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        len = strlen(p);
        while (len && (p[len - 1] == '\n' || p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
            p[--len] = '\0';
        if (len == 0 || p[0] == '#')
            continue;
        if (p[0] != '/' && strcmp(dir, ".") != 0) {
            snprintf(joined, sizeof joined, "%s/%s", dir, p);
            p = joined;
            len = strlen(p);
        }
        if (add_path(s, p, len) != 0) {
            fprintf(stderr, "grip-host: out of memory\n");
            rc = -1;
        }
    }
    if (rc == 0 && ferror(fp)) {
        fprintf(stderr, "grip-host: --scene-list %s: read error\n", list);
        rc = -1;
    }
    fclose(fp);
    return rc;
}

static int gather_scenes(const host_options *o, scene_paths *s)
{
    for (int i = 0; i < o->n_scene_files; i++)
        if (add_path(s, o->scene_files[i], strlen(o->scene_files[i])) != 0) {
            fprintf(stderr, "grip-host: out of memory\n");
            return -1;
        }
    for (int i = 0; i < o->n_scene_lists; i++)
        if (read_scene_list(o->scene_lists[i], s) != 0)
            return -1;
    if (s->n == 0) {
        fprintf(stderr, "grip-host: run: the scene list names no scene\n");
        return -1;
    }
    return 0;
}

/* What stays across scenes. */
typedef struct scene_runner {
    const host_options *o;
    char plugin[4096];
    grip_config cfg;
    int per_scene;            /* the config uses mr: the pipeline is opened for each scene */
    grip_pipeline p;
    int open;
    host_cloud *clouds;       /* --model clouds (NULL with a database) */
    model_set models;         /* described from clouds, or read from o->model_names */
    int have_models;
    grip_index *index;        /* over models, built by p */
    double prepare_ms[2];     /* describing (or reading) the models, building their index */
    int described;            /* times the models were described (again when a scene's mr lengths change them) */
} scene_runner;

static void close_pipeline(scene_runner *sr)
{
    if (sr->index)
        sr->index->release(sr->index);
    sr->index = NULL;
    if (sr->open)
        pipeline_close(&sr->p);
    sr->open = 0;
}

/* Makes the pipeline, the models and their index ready for scene (a pipeline opened for it when lengths are in
 * mr). Returns 0; 1 when this scene cannot run (the reason in diag); 2 when no scene can (config, plugin). */
static int prepare(scene_runner *sr, const host_cloud *scene, grip_diag *diag)
{
    const host_options *o = sr->o;
    if (!sr->open || sr->per_scene) {
        close_pipeline(sr);
        if (pipeline_open_for(&sr->p, sr->plugin, &sr->cfg, scene, diag) != 0)
            return sr->per_scene ? 1 : 2;
        sr->open = 1;
    }
    if (o->model_names) { /* a database: its models suit this pipeline or this scene is refused */
        if (pipeline_check_models(&sr->p, &sr->models, o->model_names, diag) != 0)
            return sr->per_scene ? 1 : 2;
    } else if (!sr->have_models || strcmp(sr->models.settings, sr->p.model_settings) != 0) {
        model_set_free(&sr->models);
        sr->have_models = 0;
        if (sr->index)
            sr->index->release(sr->index);
        sr->index = NULL;
        double t0 = host_now_ms();
        if (pipeline_describe_models(&sr->p, sr->clouds, (uint32_t)o->n_models, NULL, 0, o->models, &sr->models,
                                     diag) != 0)
            return 2;
        sr->have_models = 1;
        sr->described++;
        sr->prepare_ms[0] += host_now_ms() - t0;
    }
    if (!sr->index) {
        double t0 = host_now_ms();
        if (pipeline_build_index(&sr->p, &sr->models, &sr->index, diag) != 0)
            return 2;
        sr->prepare_ms[1] += host_now_ms() - t0;
    }
    return 0;
}

/* The scene's part, o->repeat times (at least once): the last result, with each stage's median time. */
static int run_scene_repeated(scene_runner *sr, const host_cloud *scene, pipeline_result *r, grip_diag *diag)
{
    int repeat = sr->o->repeat > 1 ? sr->o->repeat : 1;
    double times[PIPELINE_STAGES][1000]; /* --repeat is at most 1000 */
    for (int run = 0; run < repeat; run++) {
        pipeline_result_free(r);
        if (pipeline_run_scene(&sr->p, &sr->models, sr->index, scene, r, diag) != 0)
            return -1;
        for (int s = 0; s < PIPELINE_STAGES; s++)
            times[s][run] = r->timings_ms[s];
    }
    for (int s = 0; s < PIPELINE_STAGES; s++)
        r->timings_ms[s] = host_median(times[s], (size_t)repeat);
    return 0;
}

/* Model m's points as a host cloud borrowing them (nothing to free), named by the model's label. */
static host_cloud model_points(const scene_runner *sr, uint32_t m)
{
    const stored_model *sm = &sr->models.models[m];
    return (host_cloud){.n = (size_t)sm->cloud.xyz.rows, .xyz = sm->xyz, .path = sm->name};
}

/* What run reports besides the instances: the scene's resolution and the lengths in mr, each model's resolution
 * (measured only when lengths are in mr, as a single run does). */
static int add_units(scene_runner *sr, pipeline_result *r)
{
    if (pipeline_result_set_units(r, &sr->cfg) != 0 ||
        !(r->cloud_resolutions = calloc((size_t)sr->models.n_models + 1, sizeof(double))))
        return -1;
    for (uint32_t m = 0; m < sr->models.n_models; m++) {
        host_cloud c = model_points(sr, m);
        r->cloud_resolutions[r->n_clouds++] = sr->cfg.resolution > 0 ? pipeline_cloud_resolution(&sr->p, &c) : 0;
    }
    return 0;
}

/* The lengths implausible for this scene or the models (plausibility.h), into warnings and onto stderr, each line
 * naming the scene it was run for. */
static void check_plausibility(scene_runner *sr, const host_cloud *scene, const char *path, grip_diag *warnings)
{
    uint32_t n = sr->models.n_models;
    host_cloud *models = calloc((size_t)n + 1, sizeof *models);
    if (!models)
        return; /* a warning is advice: without memory for it the run goes on */
    for (uint32_t m = 0; m < n; m++)
        models[m] = model_points(sr, m);
    plausibility_check(&sr->p, &sr->cfg, scene, models, (int)n, NULL, warnings);
    free(models);
    for (size_t i = 0; i < warnings->count; i++)
        fprintf(stderr, "grip-host: warning: scene %s: %s\n", path, warnings->messages[i]);
}

/* One scene: read, prepared for, run, reported. Returns 0, 1 (this scene failed) or 2 (no scene can run). */
static int run_one(scene_runner *sr, const char *path, const char *const *names)
{
    char err[1024];
    host_cloud scene = {0};
    pipeline_result r = {0};
    grip_diag diag = {0}, warnings = {0};
    int rc = 0;
    if (cloud_read(path, &scene, err, sizeof err) != 0) {
        grip_diag_add(&diag, "%s", err);
        rc = 1;
    }
    if (rc == 0)
        rc = prepare(sr, &scene, &diag);
    if (rc == 0)
        check_plausibility(sr, &scene, path, &warnings);
    if (rc == 0 && run_scene_repeated(sr, &scene, &r, &diag) != 0)
        rc = 1;
    if (rc == 0 && add_units(sr, &r) != 0) {
        grip_diag_add(&diag, "out of memory");
        rc = 1;
    }
    if (rc == 0) {
        r.scene = path;
        r.warnings = warnings; /* the result owns them now */
        memset(&warnings, 0, sizeof warnings);
        if (sr->o->json) {
            pipeline_result_print_json(stdout, &r, names);
        } else {
            printf("== scene %s\n", path);
            pipeline_result_print_text(stdout, &r, names);
        }
        if (r.hint[0])
            fprintf(stderr, "grip-host: %s: %s\n", path, r.hint);
    } else {
        fprintf(stderr, "grip-host: scene %s not run:\n", path);
        grip_diag_print(&diag, stderr);
        if (sr->o->json)
            pipeline_result_print_json_error(stdout, path, diag.count ? diag.messages[0] : "failed", &warnings);
    }
    fflush(stdout);
    pipeline_result_free(&r);
    grip_diag_free(&diag);
    grip_diag_free(&warnings);
    host_cloud_free(&scene);
    return rc;
}

/* The models: --model clouds read (described at the first scene), or the database read. 0, or -1 after a message. */
static int load_models(scene_runner *sr)
{
    const host_options *o = sr->o;
    char err[1024];
    if (o->model_names) {
        double t0 = host_now_ms();
        if (model_db_read(o->model_names, &sr->models, err, sizeof err) != 0) {
            fprintf(stderr, "grip-host: --models %s\n", err);
            return -1;
        }
        sr->have_models = 1;
        sr->prepare_ms[0] = host_now_ms() - t0;
        return 0;
    }
    sr->clouds = calloc((size_t)o->n_models, sizeof *sr->clouds);
    if (!sr->clouds) {
        fprintf(stderr, "grip-host: out of memory\n");
        return -1;
    }
    int bad = 0;
    for (int i = 0; i < o->n_models; i++)
        if (cloud_read(o->models[i], &sr->clouds[i], err, sizeof err) != 0) {
            fprintf(stderr, "grip-host: %s\n", err);
            bad = 1;
        }
    return bad ? -1 : 0;
}

int cmd_run_scenes(const host_options *o)
{
    if (o->overlay) {
        fprintf(stderr, "grip-host: --overlay draws one scene against --model files: give one --scene and --model\n");
        return 2;
    }
    scene_runner sr;
    memset(&sr, 0, sizeof sr);
    sr.o = o;
    scene_paths scenes = {0};
    grip_diag diag = {0};
    int rc = 0;
    if (host_plugin_path(o, sr.plugin, sizeof sr.plugin) != 0 || host_build_config(o, NULL, &sr.cfg, &diag) != 0)
        rc = 2;
    else if (gather_scenes(o, &scenes) != 0 || load_models(&sr) != 0)
        rc = 1;
    grip_diag_print(&diag, stderr);
    sr.per_scene = pipeline_config_uses_mr(&sr.cfg);
    /* the labels reports give models: the database's names, or the --model paths */
    const char **names = rc == 0 ? calloc((size_t)sr.models.n_models + (size_t)o->n_models + 1, sizeof *names) : NULL;
    if (rc == 0 && !names) {
        fprintf(stderr, "grip-host: out of memory\n");
        rc = 1;
    }
    for (uint32_t m = 0; names && o->model_names && m < sr.models.n_models; m++)
        names[m] = sr.models.models[m].name;
    for (int m = 0; names && m < o->n_models; m++)
        names[m] = o->models[m];
    size_t failed = 0;
    for (size_t i = 0; rc == 0 && i < scenes.n; i++) {
        int one = run_one(&sr, scenes.paths[i], names);
        failed += one != 0;
        if (one == 2)
            rc = 2; /* the config or the models: every other scene would fail alike */
    }
    if (rc == 0 && failed)
        fprintf(stderr, "grip-host: %zu of %zu scenes not run\n", failed, scenes.n);
    if (rc == 0 && sr.have_models && o->model_names)
        fprintf(stderr, "grip-host: %u models read in %.1f ms, indexed in %.1f ms, for %zu scenes\n",
                sr.models.n_models, sr.prepare_ms[0], sr.prepare_ms[1], scenes.n);
    else if (rc == 0 && sr.have_models)
        fprintf(stderr, "grip-host: %u models described %d time%s in %.1f ms, indexed in %.1f ms, for %zu scenes\n",
                sr.models.n_models, sr.described, sr.described == 1 ? "" : "s", sr.prepare_ms[0], sr.prepare_ms[1],
                scenes.n);
    if (rc == 0 && failed)
        rc = 1;
    close_pipeline(&sr);
    model_set_free(&sr.models);
    for (int i = 0; sr.clouds && i < o->n_models; i++)
        host_cloud_free(&sr.clouds[i]);
    free(sr.clouds);
    free(names);
    scene_paths_free(&scenes);
    grip_config_free(&sr.cfg);
    grip_diag_free(&diag);
    return rc;
}
