/* host.c -- a host built outside grip's tree against an installed grip, the way a user's host is: the header from
 * the package (<grip/plugin.h>), the plugin's path from the package (GRIP_TEST_PLUGIN_PATH, given by CMake's
 * GRIP_PLUGIN_PATH or pkg-config's `plugin` variable). It loads the plugin, negotiates the ABI, lists the stages,
 * describes a generated sphere and checks that a bad parameter fails with the plugin's error text.
 * Prints one line per step; exits 0 when every step did what it should. */
#include <grip/plugin.h>

#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GRIP_TEST_PLUGIN_PATH
#error "GRIP_TEST_PLUGIN_PATH (the installed plugin's path, from the package) is not defined"
#endif

/* the offset just past `field`: a plugin's struct_size at least this large has the field */
#define FIELD_END(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

static int fail(const char *what)
{
    fprintf(stderr, "FAIL: %s\n", what);
    return 1;
}

/* n points spread evenly over a sphere of radius r (a Fibonacci lattice): a cheap cloud with curvature */
static float *sphere(uint32_t n, float r)
{
    float *xyz = malloc((size_t)n * 3 * sizeof *xyz);
    const double golden = 2.399963229728653; /* pi * (3 - sqrt(5)) */
    for (uint32_t i = 0; xyz && i < n; i++) {
        double z = 1.0 - 2.0 * (i + 0.5) / n, rho = sqrt(1.0 - z * z), a = golden * i;
        xyz[3 * i] = (float)(r * rho * cos(a));
        xyz[3 * i + 1] = (float)(r * rho * sin(a));
        xyz[3 * i + 2] = (float)(r * z);
    }
    return xyz;
}

static const grip_stage_impl *find_stage(const grip_plugin *g, uint32_t kind, const char *name)
{
    for (uint32_t i = 0; i < g->n_stages; i++) {
        const grip_stage_impl *s = g->stages[i];
        if (s->struct_size >= FIELD_END(grip_stage_impl, describe) && s->kind == kind && strcmp(s->name, name) == 0)
            return s;
    }
    return NULL;
}

int main(void)
{
    const char *path = GRIP_TEST_PLUGIN_PATH;
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        return fail("the installed plugin does not load");
    }
    void *sym = dlsym(so, GRIP_PLUGIN_ENTRY);
    if (!sym)
        return fail("no " GRIP_PLUGIN_ENTRY " in the plugin");
    grip_plugin_get_fn get;
    memcpy(&get, &sym, sizeof get); /* POSIX: dlsym's data pointer converts to a function pointer */
    const grip_plugin *g = get(GRIP_ABI_MAJOR, GRIP_ABI_MINOR);
    if (!g || g->struct_size < FIELD_END(grip_plugin, stages) || g->abi_major != GRIP_ABI_MAJOR)
        return fail("ABI negotiation");
    if (get(GRIP_ABI_MAJOR + 1, 0) != NULL)
        return fail("the plugin accepted an ABI major it does not speak");
    printf("loaded %s %s (ABI %u.%u) from %s\n", g->name, g->version, g->abi_major, g->abi_minor, path);

    static const char *const kinds[] = {"descriptor", "index", "match", "group", "verify"};
    unsigned seen = 0;
    for (uint32_t i = 0; i < g->n_stages; i++) {
        const grip_stage_impl *s = g->stages[i];
        if (s->kind < GRIP_STAGE_KIND_COUNT) {
            printf("stage %s %s (%u parameters)\n", kinds[s->kind], s->name, s->n_params);
            seen |= 1u << s->kind;
        }
    }
    if (seen != (1u << GRIP_STAGE_KIND_COUNT) - 1)
        return fail("a stage kind is missing");

    const grip_stage_impl *shot = find_stage(g, GRIP_STAGE_DESCRIPTOR, "shot");
    if (!shot)
        return fail("no descriptor stage 'shot'");
    grip_ctx_options opts = {sizeof opts, -1, 2};
    grip_ctx *ctx = NULL;
    if (g->ctx_create(&opts, &ctx) != GRIP_OK)
        return fail("ctx_create");

    grip_kv bad[] = {{"radiuss", "0.05"}};
    grip_stage *st = NULL;
    grip_status s = shot->create(ctx, bad, 1, &st);
    if (s != GRIP_ECONFIG || st || !strstr(g->ctx_last_error(ctx), "radiuss"))
        return fail("a bad key must fail with GRIP_ECONFIG and name the key");
    printf("bad key refused: %s\n", g->ctx_last_error(ctx));

    grip_kv kv[] = {{"device", "cpu"}, {"radius", "0.05"}, {"model_leaf", "0.03"}};
    if ((s = shot->create(ctx, kv, 3, &st)) != GRIP_OK) {
        fprintf(stderr, "%s: %s\n", g->status_str(s), g->ctx_last_error(ctx));
        return fail("create shot");
    }
    const uint32_t n = 2000;
    float *xyz = sphere(n, 0.1f);
    if (!xyz)
        return fail("out of memory");
    grip_cloud cloud;
    memset(&cloud, 0, sizeof cloud);
    cloud.struct_size = sizeof cloud;
    cloud.width = n;
    cloud.height = 1;
    cloud.xyz = (grip_array){sizeof(grip_array), GRIP_F32, GRIP_MEM_HOST, -1, n, 3, xyz};
    cloud.name = "sphere";
    grip_features *f = NULL;
    s = shot->describe(st, &cloud, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, &f);
    if (s != GRIP_OK) {
        fprintf(stderr, "%s: %s\n", g->status_str(s), g->ctx_last_error(ctx));
        return fail("describe");
    }
    if (f->struct_size < FIELD_END(grip_features, release) || f->descriptor_dim != 352 || f->keypoints.rows == 0 ||
        f->descriptors.rows != f->keypoints.rows || f->descriptors.cols != 352)
        return fail("describe's features");
    printf("described %u points: %llu keypoints, SHOT-%u\n", n, (unsigned long long)f->keypoints.rows,
           f->descriptor_dim);
    f->release(f);
    shot->destroy(st);
    g->ctx_destroy(ctx);
    free(xyz);
    printf("ok\n");
    return 0;
}
