/* main.c -- grip-host: loads a grip plugin and runs the recognition pipeline on point-cloud files.
 *
 *   grip-host [--plugin PATH] list
 *   grip-host [--plugin PATH] run --config FILE [--set section.key=value]... (--model FILE... | --models DB)
 *             (--scene FILE | --scene-list FILE)... [--json]
 *   grip-host [--plugin PATH] models --config FILE [--set ...] [--merge-views] --out DB MODEL...
 *   grip-host [--plugin PATH] demo [--config FILE] [--set ...] [--seed N] [--objects N] [--json]
 *   grip-host synth --out DIR [--seed N] [--objects N] [--views N]
 *   grip-host [--plugin PATH] regress [--data DIR] [--set ...] [--json] CASE...
 *   grip-host [--plugin PATH] eval recognition [--scenes N] [--objects N] [--seed N] [--views N] [--out DIR]
 *             [--config FILE] [--set ...] [--json] [--data DIR [--models LIST] [--noise LIST]]
 *   grip-host [--plugin PATH] eval registration [--data DIR] [--models LIST] [--noise LIST] [--seed N] [--out DIR]
 *             [--config FILE] [--set ...] [--json]
 *   grip-host [--plugin PATH] eval descriptors [--data DIR] [--keypoints N] [--noise LIST] [--models LIST] [--seed N]
 *             [--out DIR] [--set ...] [--json]
 *   grip-host [--plugin PATH] bench descriptors|recall|index|pipeline [options] (its own options: grip-host bench
 *             --help)
 */
#include "commands/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: grip-host [--plugin PATH] COMMAND [options]\n"
            "commands:\n"
            "  list                          the plugin's stages and their parameter tables\n"
            "  run --config FILE --model FILE [--model FILE]... --scene FILE [--set section.key=value]... [--json]\n"
            "      [--repeat N] [--overlay OUT.ply] [--mpi]\n"
            "                                recognise the models in the scene (PCD or PLY files); with --repeat,\n"
            "                                run N times and report each stage's median time; --mpi (under\n"
            "                                mpirun): the index sharded across the ranks by rows, one GPU a rank\n"
            "      --models DB               the models from a model database instead of --model\n"
            "      --scene FILE... | --scene-list FILE\n"
            "                                several scenes (a list: one path a line, # comments): the models are\n"
            "                                described once, a report (a JSON line with --json) per scene; with\n"
            "                                --repeat, each scene's part is repeated\n"
            "  models --config FILE [--set ...] [--merge-views] --out DB MODEL...\n"
            "                                describe the models once into a model database for run --models\n"
            "  demo [--config FILE] [--seed N] [--objects N] [--set ...] [--json] [--overlay OUT.ply]\n"
            "                                generate a scene with known poses, recognise it, compare with the truth\n"
            "  synth --out DIR [--seed N] [--objects N] [--views N]\n"
            "                                write a generated scene, its models and their true poses\n"
            "  regress [--data DIR] [--set ...] [--json] CASE...\n"
            "                                run regression cases (tests/regress/*.case: models, scene, config,\n"
            "                                expected instances); a pass/fail table; exit 1 when one fails\n"
            "  eval recognition [--scenes N] [--objects N] [--seed N] [--views N] [--out DIR] [--config FILE] [--set ...]\n"
            "      [--data DIR [--models LIST] [--noise LIST]]\n"
            "                                recognition rate, false positives and pose error on N generated\n"
            "                                scenes, binned by occlusion (JSON, Markdown, SVG in DIR); with --data,\n"
            "                                scenes of the Stanford meshes, per noise level in mesh resolutions\n"
            "  eval registration [--data DIR] [--models LIST] [--noise LIST] [--config FILE] [--set ...] [--out DIR]\n"
            "                                pose error of the model found in each Bologna retrieval scene\n"
            "  eval descriptors [--data DIR] [--keypoints N] [--noise LIST] [--models LIST] [--out DIR]\n"
            "                                recall vs 1-precision of descriptor matching on the Bologna models\n"
            "  bench descriptors [--points N] [--keypoints K] [--radius R] [--repeat N] [--set ...] [--json]\n"
            "                                time every descriptor stage on a generated surface\n"
            "  bench recall [--model M --scene S --gt T.xf] [--leaf L] [--radius R] [--sweep] [--set ...] [--json]\n"
            "                                how often a scene keypoint's nearest model descriptor is its true match\n"
            "  bench pipeline [--workloads LIST] [--config FILE] [--set ...] [--repeat N] [--json] [--svg FILE]\n"
            "                                whole recognition runs on named workloads: time per stage, bytes moved\n"
            "                                (grip-host bench --help says more)\n"
            "The plugin defaults to $GRIP_PLUGIN, else the libgrip.so beside grip-host (or in ../lib/grip).\n");
}

/* Takes the value of an option that needs one; NULL (after a message) when it is missing. */
static const char *value_of(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "grip-host: %s needs a value\n", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

static int parse_number(const char *opt, const char *text, unsigned long long *out)
{
    char *end = NULL;
    *out = strtoull(text, &end, 10);
    if (!*text || *end || text[0] == '-') {
        fprintf(stderr, "grip-host: %s: '%s' is not a non-negative integer\n", opt, text);
        return -1;
    }
    return 0;
}

/* Parses one option at argv[*i] into o. 0 ok, -1 bad. */
static int parse_option(int argc, char **argv, int *i, host_options *o)
{
    const char *a = argv[*i], *v = NULL;
    if (strcmp(a, "--json") == 0) {
        o->json = 1;
        return 0;
    }
    if (strcmp(a, "--merge-views") == 0) {
        o->merge_views = 1;
        return 0;
    }
    if (strcmp(a, "--mpi") == 0) {
        o->mpi = 1;
        return 0;
    }
    static const char *with_value[] = {"--plugin", "--config", "--set", "--model", "--scene", "--scene-list",
                                       "--out", "--seed", "--objects", "--repeat", "--overlay", "--data", "--scenes",
                                       "--keypoints", "--noise", "--models", "--views"};
    int known = 0;
    for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
        known |= strcmp(a, with_value[k]) == 0;
    if (!known) {
        fprintf(stderr, "grip-host: unknown option '%s'\n", a);
        return -1;
    }
    if (!(v = value_of(argc, argv, i)))
        return -1;
    unsigned long long n = 0;
    if (strcmp(a, "--plugin") == 0) o->plugin = v;
    else if (strcmp(a, "--config") == 0) o->config = v;
    else if (strcmp(a, "--set") == 0) o->sets[o->n_sets++] = v;
    else if (strcmp(a, "--model") == 0) o->models[o->n_models++] = v;
    else if (strcmp(a, "--scene") == 0) o->scene_files[o->n_scene_files++] = v;
    else if (strcmp(a, "--scene-list") == 0) o->scene_lists[o->n_scene_lists++] = v;
    else if (strcmp(a, "--out") == 0) o->out_dir = v;
    else if (strcmp(a, "--overlay") == 0) o->overlay = v;
    else if (strcmp(a, "--data") == 0) o->data_dir = v;
    else if (strcmp(a, "--noise") == 0) o->noise = v;
    else if (strcmp(a, "--models") == 0) o->model_names = v;
    else if (strcmp(a, "--keypoints") == 0) {
        if (parse_number(a, v, &o->keypoints) || o->keypoints < 1 || o->keypoints > 1000000) {
            fprintf(stderr, "grip-host: --keypoints must be 1..1000000\n");
            return -1;
        }
    }
    else if (strcmp(a, "--views") == 0) {
        if (parse_number(a, v, &n) || n > 360) {
            fprintf(stderr, "grip-host: --views must be 0..360 (0: the complete models)\n");
            return -1;
        }
        o->views = (int)n;
    }
    else if (strcmp(a, "--scenes") == 0) {
        if (parse_number(a, v, &n) || n < 1 || n > 100000) {
            fprintf(stderr, "grip-host: --scenes must be 1..100000\n");
            return -1;
        }
        o->scenes = (int)n;
    }
    else if (strcmp(a, "--seed") == 0) {
        if (parse_number(a, v, &o->seed)) return -1;
    } else if (strcmp(a, "--repeat") == 0) {
        if (parse_number(a, v, &n) || n < 1 || n > 1000) {
            fprintf(stderr, "grip-host: --repeat must be 1..1000\n");
            return -1;
        }
        o->repeat = (int)n;
    } else {
        if (parse_number(a, v, &n) || n > 16) {
            fprintf(stderr, "grip-host: --objects must be 1..16 (0: the default)\n");
            return -1;
        }
        o->objects = (int)n;
    }
    return 0;
}

int main(int argc, char **argv)
{
    host_options o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.views = -1;
    o.argv0 = argv[0];
    o.sets = calloc((size_t)argc + 1, sizeof *o.sets);
    o.models = calloc((size_t)argc + 1, sizeof *o.models);
    o.args = calloc((size_t)argc + 1, sizeof *o.args);
    o.scene_files = calloc((size_t)argc + 1, sizeof *o.scene_files);
    o.scene_lists = calloc((size_t)argc + 1, sizeof *o.scene_lists);
    const char *command = NULL;
    int rc = 2, bench_at = 0;
    if (!o.sets || !o.models || !o.args || !o.scene_files || !o.scene_lists) {
        fprintf(stderr, "grip-host: out of memory\n");
        goto done;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            rc = 0;
            goto done;
        }
        if (argv[i][0] == '-') {
            if (parse_option(argc, argv, &i, &o) != 0)
                goto done;
        } else if (!command) {
            command = argv[i];
            if (strcmp(command, "bench") == 0) { /* the rest is bench's own command line */
                bench_at = i + 1;
                break;
            }
        } else if (strcmp(command, "regress") == 0 || strcmp(command, "eval") == 0 ||
                   strcmp(command, "models") == 0) {
            o.args[o.n_args++] = argv[i];
        } else {
            fprintf(stderr, "grip-host: unexpected argument '%s'\n", argv[i]);
            goto done;
        }
    }
    if (!command) usage(stderr);
    else if (strcmp(command, "list") == 0) rc = cmd_list(&o);
    else if (strcmp(command, "run") == 0) rc = cmd_run(&o);
    else if (strcmp(command, "models") == 0) rc = cmd_models(&o);
    else if (strcmp(command, "demo") == 0) rc = cmd_demo(&o);
    else if (strcmp(command, "synth") == 0) rc = cmd_synth(&o);
    else if (strcmp(command, "regress") == 0) rc = cmd_regress(&o);
    else if (strcmp(command, "eval") == 0) rc = cmd_eval(&o);
    else if (strcmp(command, "bench") == 0) rc = cmd_bench(&o, argc - bench_at, argv + bench_at);
    else {
        fprintf(stderr, "grip-host: unknown command '%s'\n", command);
        usage(stderr);
    }
done:
    free(o.sets);
    free(o.models);
    free(o.args);
    free(o.scene_files);
    free(o.scene_lists);
    return rc;
}
