/* cmd_synth.c -- `grip-host synth --out DIR`: write a generated scene (scene.pcd, organized), one PCD per model
 * and the true poses (truth.txt: object, model file, 16 numbers row-major).
 *
 * The models are the complete surfaces (model_<name>.pcd, with their outward normals), or with --views N each
 * kind's N partial views as `grip-host demo` models them (model_<name>@<yaw>.pcd: the points the camera saw, in
 * the object's frame, VIEWPOINT the camera centre, no normals). A view's frame is its object's, so every view of a
 * kind has the object's true pose; truth.txt then names the kind's views as model_<name>@*.pcd. Those files are
 * what `grip-host models` takes to build the demo's model database. */
#include "commands/commands.h"
#include "synth/synth.h"

#include <stdio.h>

static int write_truth(const char *dir, const synth_scene *sc)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/truth.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "grip-host: synth: cannot write %s\n", path);
        return -1;
    }
    fprintf(f, "# object model_file pose(4x4 row-major, model -> scene/camera frame, metres)\n");
    for (uint32_t o = 0; o < sc->n_objects; o++) {
        if (sc->view_origin) /* views: the kind's name (a view's path is "<name>@<yaw>") */
            fprintf(f, "%u model_%s@*.pcd", o, sc->complete[sc->model_of_object[o] / sc->views_per_kind].path);
        else
            fprintf(f, "%u model_%s.pcd", o, sc->names[sc->model_of_object[o]]);
        for (int k = 0; k < 16; k++)
            fprintf(f, " %.9g", sc->poses[o][k]);
        fputc('\n', f);
    }
    return fclose(f) == 0 ? 0 : -1;
}

int cmd_synth(const host_options *o)
{
    if (!o->out_dir) {
        fprintf(stderr, "grip-host: synth needs --out DIR (an existing folder)\n");
        return 2;
    }
    synth_params sp;
    synth_params_default(&sp);
    sp.seed = o->seed;
    if (o->objects)
        sp.n_objects = (uint32_t)o->objects;
    sp.model_views = o->views > 0 ? (uint32_t)o->views : 0;
    synth_scene sc;
    char err[512], path[4096];
    if (synth_generate(&sp, &sc, err, sizeof err) != 0) {
        fprintf(stderr, "grip-host: synth: %s\n", err);
        return 1;
    }
    int rc = 0;
    snprintf(path, sizeof path, "%s/scene.pcd", o->out_dir);
    if (pcd_write(path, &sc.scene, 1, err, sizeof err) != 0)
        rc = 1;
    for (uint32_t m = 0; m < sc.n_models && rc == 0; m++) {
        snprintf(path, sizeof path, "%s/model_%s.pcd", o->out_dir, sc.names[m]);
        if (pcd_write(path, &sc.models[m], 1, err, sizeof err) != 0)
            rc = 1;
    }
    if (rc != 0)
        fprintf(stderr, "grip-host: synth: %s\n", err);
    else if (write_truth(o->out_dir, &sc) != 0)
        rc = 1;
    else
        printf("wrote %s/scene.pcd, %u model files and truth.txt (%u objects)\n", o->out_dir, sc.n_models,
               sc.n_objects);
    synth_scene_free(&sc);
    return rc;
}
