/* test_hostile_host.c -- libgrip.so in the hands of a careless or hostile host, through its ABI alone. For every
 * stage in the plugin's table (a new stage is covered as soon as it is listed), the calls a host can get wrong:
 * NULL stage, context, inputs and out pointers, struct_size 0 or below the struct as the ABI first published it,
 * arrays of the wrong dtype, shape or memory space, item strides below one element, 0 rows, clouds with no finite
 * point, keypoint and correspondence indices out of range, non-finite poses, an index of "another plugin" that
 * misbehaves, a stage of another implementation, and the plugin's objects used or released again after their
 * release. Each must fail with the
 * documented status, leave *out NULL, say in its text which stage and which argument, and leave the context usable:
 * a normal call of the stage succeeds right after. The context entry points get the same treatment (threads
 * beyond the maximum included).
 *
 * Calls on objects already released read freed memory: undefined behaviour that the plugin refuses only on a best
 * effort basis, and that AddressSanitizer rightly reports. They run in builds without it. */
#define _POSIX_C_SOURCE 200809L
#include "plugin_abi_support.h"
#include "surf_scene.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static abi_plugin plugin; /* loaded by main(): the loop tests run over its table */

static const char *kind_name(uint32_t kind)
{
    static const char *names[GRIP_STAGE_KIND_COUNT] = {"descriptor", "index", "match", "group", "verify"};
    return kind < GRIP_STAGE_KIND_COUNT ? names[kind] : "?";
}

/* ---- the kit: a context, the stage under test, and valid inputs of every kind ---------------------------------- */

#define REF_ROWS 40
#define REF_DIM 8
#define QUERY_ROWS 10

typedef struct kit {
    const grip_plugin *api;
    grip_ctx *ctx;
    const grip_stage_impl *impl; /* the stage under test */
    grip_stage *st;
    int calls;                   /* hostile calls made */
    int sentinel;                /* *out is set to its address before each call: it must come back NULL */

    abi_cloud cloud; /* the model, and the scene (same points: group's correspondences are exact) */
    /* the cloud a descriptor stage under test describes: `cloud`, or, for a stage that answers GRIP_EUNSUPPORTED on
     * it (an image descriptor such as surf), an organized frame with colour; own_keypoints: such a stage also
     * answers GRIP_EUNSUPPORTED to host-given keypoints, whatever they are */
    grip_surf_scene image;
    grip_cloud image_cloud;
    const grip_cloud *own;
    int own_keypoints;
    /* index and match */
    float reference_rows[REF_ROWS * REF_DIM], query_rows[QUERY_ROWS * REF_DIM];
    uint32_t model_id_rows[REF_ROWS];
    grip_array reference, model_ids, queries;
    grip_index *index; /* built by the default index stage (match's input) */
    /* group and verify */
    grip_stage *describer; /* the default descriptor stage */
    grip_features *features;
    grip_view view;
    uint32_t *corr_query, *corr_reference, *corr_model;
    float *corr_sqdist;
    grip_matches matches; /* host-made: keypoint i of the scene to keypoint i of the model */
    grip_hypothesis hypothesis;
    grip_hypotheses hypotheses; /* host-made: the model where it is */
} kit;

static const grip_ctx_options one_thread = {sizeof(grip_ctx_options), -1, 1};

static grip_stage *kit_stage(kit *t, const grip_stage_impl *impl, const grip_kv *kv, uint32_t n_kv)
{
    grip_stage *st = NULL;
    ck_assert_msg(impl->create(t->ctx, kv, n_kv, &st) == GRIP_OK, "%s: %s", impl->name, t->api->ctx_last_error(t->ctx));
    return st;
}

static void kit_open(kit *t, const grip_stage_impl *impl)
{
    memset(t, 0, sizeof *t);
    t->api = plugin.api;
    t->impl = impl;
    ck_assert_int_eq(t->api->ctx_create(&one_thread, &t->ctx), GRIP_OK);
    t->st = kit_stage(t, impl, NULL, 0);
    abi_cloud_make(&t->cloud, 0.06f, 0.005f, NULL);
    t->own = &t->cloud.cloud;
    if (impl->kind == GRIP_STAGE_DESCRIPTOR) {
        grip_features *f = NULL;
        grip_status s = impl->describe(t->st, t->own, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, &f);
        if (s == GRIP_EUNSUPPORTED) {
            t->image = grip_surf_scene_make(256, 240, 16, 1);
            ck_assert_ptr_nonnull(t->image.rgb);
            t->image_cloud = t->cloud.cloud;
            t->image_cloud.width = t->image.width;
            t->image_cloud.height = t->image.height;
            t->image_cloud.xyz = abi_array(GRIP_F32, (uint64_t)t->image.width * t->image.height, 3, t->image.xyz);
            t->image_cloud.rgb = abi_array(GRIP_U8, (uint64_t)t->image.width * t->image.height, 3, t->image.rgb);
            t->own = &t->image_cloud;
            s = impl->describe(t->st, t->own, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, &f);
            uint32_t first[1] = {0};
            grip_array kp = abi_array(GRIP_U32, 1, 1, first);
            grip_features *g = NULL;
            t->own_keypoints = impl->describe(t->st, t->own, GRIP_ROLE_MODEL, &kp, GRIP_MEM_HOST, &g) ==
                               GRIP_EUNSUPPORTED;
            ck_assert_ptr_null(g);
        }
        ck_assert_msg(s == GRIP_OK, "%s: %s", impl->name, t->api->ctx_last_error(t->ctx));
        f->release(f);
    }

    uint64_t seed = 7;
    for (size_t i = 0; i < REF_ROWS * REF_DIM; i++)
        t->reference_rows[i] = grip_test_uniform(&seed, 0.0f, 1.0f);
    for (size_t i = 0; i < QUERY_ROWS * REF_DIM; i++)
        t->query_rows[i] = grip_test_uniform(&seed, 0.0f, 1.0f);
    for (size_t i = 0; i < REF_ROWS; i++)
        t->model_id_rows[i] = i < REF_ROWS / 2 ? 0 : 1;
    t->reference = abi_array(GRIP_F32, REF_ROWS, REF_DIM, t->reference_rows);
    t->model_ids = abi_array(GRIP_U32, REF_ROWS, 1, t->model_id_rows);
    t->queries = abi_array(GRIP_F32, QUERY_ROWS, REF_DIM, t->query_rows);
    const grip_stage_impl *ix = abi_default_stage(t->api, GRIP_STAGE_INDEX);
    grip_stage *builder = kit_stage(t, ix, NULL, 0);
    ck_assert_int_eq(ix->build(builder, &t->reference, &t->model_ids, &t->index), GRIP_OK);
    ix->destroy(builder);

    const grip_stage_impl *d = abi_default_stage(t->api, GRIP_STAGE_DESCRIPTOR);
    t->describer = kit_stage(t, d, NULL, 0);
    ck_assert_msg(d->describe(t->describer, &t->cloud.cloud, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, &t->features) ==
                      GRIP_OK, "%s", t->api->ctx_last_error(t->ctx));
    t->view = (grip_view){sizeof t->view, &t->cloud.cloud, t->features};
    size_t k = (size_t)t->features->keypoints.rows;
    ck_assert_uint_gt(k, 0);
    t->corr_query = malloc(k * sizeof *t->corr_query);
    t->corr_reference = malloc(k * sizeof *t->corr_reference);
    t->corr_model = calloc(k, sizeof *t->corr_model);
    t->corr_sqdist = calloc(k, sizeof *t->corr_sqdist);
    ck_assert(t->corr_query && t->corr_reference && t->corr_model && t->corr_sqdist);
    for (size_t i = 0; i < k; i++)
        t->corr_query[i] = t->corr_reference[i] = (uint32_t)i;
    t->matches.struct_size = sizeof t->matches;
    t->matches.count = k;
    t->matches.query = abi_array(GRIP_U32, k, 1, t->corr_query);
    t->matches.reference = abi_array(GRIP_U32, k, 1, t->corr_reference);
    t->matches.model_id = abi_array(GRIP_U32, k, 1, t->corr_model);
    t->matches.sqdist = abi_array(GRIP_F32, k, 1, t->corr_sqdist);

    t->hypothesis.struct_size = sizeof t->hypothesis;
    for (int i = 0; i < 4; i++)
        t->hypothesis.pose[5 * i] = 1.0f;
    t->hypothesis.votes = 1.0f;
    t->hypotheses.struct_size = sizeof t->hypotheses;
    t->hypotheses.count = 1;
    t->hypotheses.item_size = sizeof t->hypothesis;
    t->hypotheses.items = &t->hypothesis;
}

static void kit_close(kit *t)
{
    printf("%s %s: %d hostile calls\n", kind_name(t->impl->kind), t->impl->name, t->calls);
    free(t->corr_query);
    free(t->corr_reference);
    free(t->corr_model);
    free(t->corr_sqdist);
    t->features->release(t->features);
    t->index->release(t->index);
    abi_default_stage(t->api, GRIP_STAGE_DESCRIPTOR)->destroy(t->describer);
    t->impl->destroy(t->st);
    abi_cloud_free(&t->cloud);
    grip_surf_scene_free(&t->image);
    t->api->ctx_destroy(t->ctx);
}

/* ---- calls with the *out contract checked ------------------------------------------------------------------- */

/* After a call: *out is NULL on failure, an object on success (released here unless the caller keeps it). */
static void check_out(kit *t, grip_status s, void *out)
{
    if (s != GRIP_OK)
        ck_assert_msg(out == NULL, "%s: a failed call left *out set", t->impl->name);
    else
        ck_assert_msg(out != NULL && out != (void *)&t->sentinel, "%s: a successful call left no object", t->impl->name);
}

static grip_status describe(kit *t, grip_stage *st, const grip_cloud *cloud, uint32_t role, const grip_array *kp,
                            uint32_t memory, grip_features **keep)
{
    grip_features *out = (grip_features *)(void *)&t->sentinel;
    grip_status s = t->impl->describe(st, cloud, role, kp, memory, &out);
    check_out(t, s, out);
    if (s == GRIP_OK && keep)
        *keep = out;
    else if (s == GRIP_OK)
        out->release(out);
    return s;
}

static grip_status build(kit *t, grip_stage *st, const grip_array *reference, const grip_array *model_ids,
                         grip_index **keep)
{
    grip_index *out = (grip_index *)(void *)&t->sentinel;
    grip_status s = t->impl->build(st, reference, model_ids, &out);
    check_out(t, s, out);
    if (s == GRIP_OK && keep)
        *keep = out;
    else if (s == GRIP_OK)
        out->release(out);
    return s;
}

static grip_status match(kit *t, grip_stage *st, grip_index *index, const grip_array *queries, uint32_t memory,
                         uint64_t *count)
{
    grip_matches *out = (grip_matches *)(void *)&t->sentinel;
    grip_status s = t->impl->match(st, index, queries, memory, &out);
    check_out(t, s, out);
    if (s == GRIP_OK) {
        if (count)
            *count = out->count;
        out->release(out);
    }
    return s;
}

static grip_status group(kit *t, grip_stage *st, const grip_view *models, uint32_t n_models, const grip_view *scene,
                         const grip_matches *matches, uint32_t *count)
{
    grip_hypotheses *out = (grip_hypotheses *)(void *)&t->sentinel;
    grip_status s = t->impl->group(st, models, n_models, scene, matches, &out);
    check_out(t, s, out);
    if (s == GRIP_OK) {
        if (count)
            *count = out->count;
        out->release(out);
    }
    return s;
}

static grip_status verify(kit *t, grip_stage *st, const grip_view *models, uint32_t n_models, const grip_view *scene,
                          const grip_hypotheses *h, uint32_t *count)
{
    grip_verdicts *out = (grip_verdicts *)(void *)&t->sentinel;
    grip_status s = t->impl->verify(st, models, n_models, scene, h, &out);
    check_out(t, s, out);
    if (s == GRIP_OK) {
        if (count)
            *count = out->count;
        out->release(out);
    }
    return s;
}

/* The stage's run function with the kit's valid inputs, outputs in `memory` (where the kind has a choice). */
static grip_status run(kit *t, grip_stage *st, uint32_t memory)
{
    switch (t->impl->kind) {
    case GRIP_STAGE_DESCRIPTOR: return describe(t, st, t->own, GRIP_ROLE_MODEL, NULL, memory, NULL);
    case GRIP_STAGE_INDEX: return build(t, st, &t->reference, &t->model_ids, NULL);
    case GRIP_STAGE_MATCH: return match(t, st, t->index, &t->queries, memory, NULL);
    case GRIP_STAGE_GROUP: return group(t, st, &t->view, 1, &t->view, &t->matches, NULL);
    case GRIP_STAGE_VERIFY: return verify(t, st, &t->view, 1, &t->view, &t->hypotheses, NULL);
    }
    ck_abort_msg("%s: unknown kind %u", t->impl->name, t->impl->kind);
    return GRIP_EINTERNAL;
}

/* The same with out == NULL. */
static grip_status run_without_out(kit *t)
{
    switch (t->impl->kind) {
    case GRIP_STAGE_DESCRIPTOR: return t->impl->describe(t->st, t->own, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, NULL);
    case GRIP_STAGE_INDEX: return t->impl->build(t->st, &t->reference, &t->model_ids, NULL);
    case GRIP_STAGE_MATCH: return t->impl->match(t->st, t->index, &t->queries, GRIP_MEM_HOST, NULL);
    case GRIP_STAGE_GROUP: return t->impl->group(t->st, &t->view, 1, &t->view, &t->matches, NULL);
    case GRIP_STAGE_VERIFY: return t->impl->verify(t->st, &t->view, 1, &t->view, &t->hypotheses, NULL);
    }
    return GRIP_EINTERNAL;
}

/* A hostile call returned `got`: it must be `want`, and the text it left (where's, or the calling thread's
 * context-less one when where is NULL) must name the stage's kind and hold `needle`. Then a normal call of the stage
 * under test must succeed in the kit's context. */
static void hostile_check(kit *t, grip_status got, grip_status want, const grip_ctx *where, const char *needle,
                          const char *call, int line)
{
    const char *text = t->api->ctx_last_error(where);
    ck_assert_msg(got == want, "%s, line %d: %s returned %d (%s), expected %d; text: %s", t->impl->name, line, call, got,
                  t->api->status_str(got), want, text);
    ck_assert_msg(strstr(text, kind_name(t->impl->kind)) && strstr(text, needle),
                  "%s, line %d: %s: the text '%s' lacks '%s' or the stage's kind", t->impl->name, line, call, text, needle);
    t->calls++;
    grip_status s = run(t, t->st, GRIP_MEM_HOST);
    ck_assert_msg(s == GRIP_OK, "%s, line %d: after %s, a normal call failed: %s", t->impl->name, line, call,
                  t->api->ctx_last_error(t->ctx));
}
#define HOSTILE(t, call, want, where, needle) hostile_check(t, (call), want, where, needle, #call, __LINE__)

/* A call a hostile host may make that is nonetheless valid: it must succeed. */
#define VALID(t, call)                                                                                                 \
    do {                                                                                                               \
        grip_status valid_s_ = (call);                                                                                 \
        ck_assert_msg(valid_s_ == GRIP_OK, "%s, line %d: %s failed: %s", (t)->impl->name, __LINE__, #call,            \
                      (t)->api->ctx_last_error((t)->ctx));                                                             \
        (t)->calls++;                                                                                                  \
    } while (0)

#if !UNDER_ASAN
/* The stage's result released twice: the second release is refused (best effort), not a double free. The host
 * keeps the release pointer it read before the first release: reading it again from the released object would be
 * the host's own use after free, which no plugin can survive (malloc may have written over it). */
static void release_twice(kit *t)
{
    grip_stage *st = t->st;
    switch (t->impl->kind) {
    case GRIP_STAGE_DESCRIPTOR: {
        grip_features *f = NULL;
        ck_assert_int_eq(t->impl->describe(st, t->own, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, &f), GRIP_OK);
        void (*release)(grip_features *) = f->release;
        release(f);
        release(f);
        break;
    }
    case GRIP_STAGE_INDEX: {
        grip_index *ix = NULL;
        ck_assert_int_eq(t->impl->build(st, &t->reference, &t->model_ids, &ix), GRIP_OK);
        void (*release)(grip_index *) = ix->release;
        release(ix);
        release(ix);
        break;
    }
    case GRIP_STAGE_MATCH: {
        grip_matches *m = NULL;
        ck_assert_int_eq(t->impl->match(st, t->index, &t->queries, GRIP_MEM_HOST, &m), GRIP_OK);
        void (*release)(grip_matches *) = m->release;
        release(m);
        release(m);
        break;
    }
    case GRIP_STAGE_GROUP: {
        grip_hypotheses *h = NULL;
        ck_assert_int_eq(t->impl->group(st, &t->view, 1, &t->view, &t->matches, &h), GRIP_OK);
        void (*release)(grip_hypotheses *) = h->release;
        release(h);
        release(h);
        break;
    }
    case GRIP_STAGE_VERIFY: {
        grip_verdicts *v = NULL;
        ck_assert_int_eq(t->impl->verify(st, &t->view, 1, &t->view, &t->hypotheses, &v), GRIP_OK);
        void (*release)(grip_verdicts *) = v->release;
        release(v);
        release(v);
        break;
    }
    }
    t->calls++;
}
#endif

/* ---- every stage: creation, the stage argument, the out pointer ---------------------------------------------- */

static int has_out_memory(uint32_t kind)
{
    return kind == GRIP_STAGE_DESCRIPTOR || kind == GRIP_STAGE_MATCH;
}

START_TEST(every_stage_refuses_bad_stages_and_outs)
{
    kit t;
    kit_open(&t, plugin.api->stages[_i]);
    const grip_stage_impl *impl = t.impl;
    grip_stage *st = (grip_stage *)(void *)&t.sentinel;
    static const grip_kv null_key[] = {{NULL, "1"}}, null_value[] = {{"device", NULL}},
                         unknown[] = {{"no_such_key", "1"}}, bad_device[] = {{"device", "tpu"}};

    HOSTILE(&t, impl->create(NULL, NULL, 0, &st), GRIP_EINVAL, NULL, "create: ctx is NULL");
    ck_assert_ptr_null(st);
    HOSTILE(&t, impl->create(t.ctx, NULL, 0, NULL), GRIP_EINVAL, t.ctx, "create: out is NULL");
    st = (grip_stage *)(void *)&t.sentinel;
    HOSTILE(&t, impl->create(t.ctx, NULL, 2, &st), GRIP_EINVAL, t.ctx, "kv is NULL");
    ck_assert_ptr_null(st);
    HOSTILE(&t, impl->create(t.ctx, null_key, 1, &st), GRIP_ECONFIG, t.ctx, "a key is NULL");
    HOSTILE(&t, impl->create(t.ctx, unknown, 1, &st), GRIP_ECONFIG, t.ctx, "no_such_key");
    if (abi_has_param(impl, "device")) { /* the key every stage of this plugin has */
        HOSTILE(&t, impl->create(t.ctx, null_value, 1, &st), GRIP_ECONFIG, t.ctx, "device");
        HOSTILE(&t, impl->create(t.ctx, bad_device, 1, &st), GRIP_ECONFIG, t.ctx, "tpu");
    }
    ck_assert_ptr_null(st);
    impl->destroy(NULL);

    HOSTILE(&t, run(&t, NULL, GRIP_MEM_HOST), GRIP_EINVAL, NULL, "stage is NULL");
    ck_assert_ptr_nonnull(strstr(t.api->ctx_last_error(NULL), impl->name));
    HOSTILE(&t, run_without_out(&t), GRIP_EINVAL, t.ctx, "out is NULL");
    /* a stage of every other implementation, handed to this one's run function */
    for (uint32_t j = 0; j < t.api->n_stages; j++) {
        const grip_stage_impl *other = t.api->stages[j];
        if (other == impl)
            continue;
        grip_stage *wrong = kit_stage(&t, other, NULL, 0);
        HOSTILE(&t, run(&t, wrong, GRIP_MEM_HOST), GRIP_EINVAL, t.ctx, other->name);
        other->destroy(wrong);
    }
    if (has_out_memory(impl->kind)) {
        HOSTILE(&t, run(&t, t.st, 9), GRIP_EINVAL, t.ctx, "out_memory 9");
        if (t.api->device_count(t.ctx) == 0)
            HOSTILE(&t, run(&t, t.st, GRIP_MEM_CUDA), GRIP_ENODEV, t.ctx, "CUDA");
    }
#if !UNDER_ASAN
    /* a destroyed stage, run and destroyed again */
    grip_stage *gone = kit_stage(&t, impl, NULL, 0);
    impl->destroy(gone);
    HOSTILE(&t, run(&t, gone, GRIP_MEM_HOST), GRIP_EINVAL, NULL, "not a live grip stage");
    impl->destroy(gone);
    /* a stage whose context was destroyed first; and creation in a destroyed context */
    grip_ctx *doomed = NULL;
    ck_assert_int_eq(t.api->ctx_create(&one_thread, &doomed), GRIP_OK);
    grip_stage *orphan = NULL;
    ck_assert_int_eq(impl->create(doomed, NULL, 0, &orphan), GRIP_OK);
    t.api->ctx_destroy(doomed);
    HOSTILE(&t, run(&t, orphan, GRIP_MEM_HOST), GRIP_EINVAL, NULL, "context was destroyed");
    impl->destroy(orphan);
    HOSTILE(&t, impl->create(doomed, NULL, 0, &st), GRIP_EINVAL, NULL, "not a live grip context");
    release_twice(&t);
#endif
    kit_close(&t);
}
END_TEST

/* ---- descriptor -------------------------------------------------------------------------------------------- */

static void descriptor_calls(kit *t)
{
    const grip_cloud base = *t->own;
    const size_t n = (size_t)base.xyz.rows;
    grip_cloud c;
#define DESCRIBE(cloud, kp, want, needle)                                                                              \
    HOSTILE(t, describe(t, t->st, cloud, GRIP_ROLE_MODEL, kp, GRIP_MEM_HOST, NULL), want, t->ctx, needle)

    DESCRIBE(NULL, NULL, GRIP_EINVAL, "descriptor: cloud is NULL");
    c = base, c.struct_size = 0;
    DESCRIBE(&c, NULL, GRIP_EINVAL, "cloud: struct_size 0");
    c = base, c.struct_size = (uint32_t)offsetof(grip_cloud, rgb);
    DESCRIBE(&c, NULL, GRIP_EINVAL, "grip_cloud");
    c = base, c.xyz.struct_size = 0;
    DESCRIBE(&c, NULL, GRIP_EINVAL, "cloud: xyz: struct_size 0");
    c = base, c.xyz.struct_size = 8;
    DESCRIBE(&c, NULL, GRIP_EINVAL, "cloud: xyz: struct_size 8");
    c = base, c.xyz.dtype = GRIP_U32;
    DESCRIBE(&c, NULL, GRIP_EINVAL, "cloud: xyz: dtype");
    c = base, c.xyz.cols = 4;
    DESCRIBE(&c, NULL, GRIP_EINVAL, "cloud: xyz: 4 columns");
    c = base, c.xyz.rows = 0, c.width = 0;
    DESCRIBE(&c, NULL, GRIP_EINVAL, "empty");
    c = base, c.xyz.data = NULL;
    DESCRIBE(&c, NULL, GRIP_EINVAL, "data is NULL");
    c = base, c.xyz.memory = 7;
    DESCRIBE(&c, NULL, GRIP_EINVAL, "memory space 7");
    c = base, c.xyz.rows = 1ull << 62, c.width = 0;
    DESCRIBE(&c, NULL, GRIP_EINVAL, "address space");
    c = base, c.width = 7, c.height = 3;
    DESCRIBE(&c, NULL, GRIP_EINVAL, "width 7 x height 3");
    float nan_xyz[3 * 8], inf_xyz[3 * 8];
    for (size_t i = 0; i < 3 * 8; i++)
        nan_xyz[i] = NAN, inf_xyz[i] = i % 3 == 2 ? INFINITY : 0.0f;
    c = base, c.xyz = abi_array(GRIP_F32, 8, 3, nan_xyz), c.width = 8, c.height = 1, c.name = "nan.pcd";
    DESCRIBE(&c, NULL, GRIP_EINVAL, "'nan.pcd' has no finite point");
    c = base, c.xyz = abi_array(GRIP_F32, 8, 3, inf_xyz), c.width = 8, c.height = 1;
    DESCRIBE(&c, NULL, GRIP_EINVAL, "no finite point");
    float *xyz = base.xyz.data;
    c = base, c.normals = abi_array(GRIP_F32, 5, 3, xyz);
    DESCRIBE(&c, NULL, GRIP_EINVAL, "normals must be");
    c = base, c.normals = abi_array(GRIP_F32, n, 2, xyz);
    DESCRIBE(&c, NULL, GRIP_EINVAL, "normals must be");
    c = base, c.normals = abi_array(GRIP_F32, n, 3, xyz), c.normals.struct_size = 0;
    DESCRIBE(&c, NULL, GRIP_EINVAL, "normals: struct_size 0");
    c = base, c.normals = abi_array(GRIP_U8, n, 3, xyz);
    DESCRIBE(&c, NULL, GRIP_EINVAL, "normals: dtype");

    /* well-formed host keypoints: refused one by one, or all at once by a stage that finds its own */
#define DESCRIBE_KP(cloud, kp, want, needle)                                                                           \
    DESCRIBE(cloud, kp, t->own_keypoints ? GRIP_EUNSUPPORTED : (want), t->own_keypoints ? "own keypoints" : (needle))
    uint32_t beyond[2] = {0, (uint32_t)n}, last[1] = {UINT32_MAX}, some[3] = {0, 1, 2};
    grip_array kp = abi_array(GRIP_U32, 2, 1, beyond);
    DESCRIBE_KP(&base, &kp, GRIP_EINVAL, "the cloud has");
    kp = abi_array(GRIP_U32, 1, 1, last);
    DESCRIBE_KP(&base, &kp, GRIP_EINVAL, "the cloud has");
    kp = abi_array(GRIP_U32, 3, 1, some), kp.struct_size = 0;
    DESCRIBE(&base, &kp, GRIP_EINVAL, "keypoints: struct_size 0");
    kp = abi_array(GRIP_F32, 3, 1, some);
    DESCRIBE(&base, &kp, GRIP_EINVAL, "keypoints: dtype");
    kp = abi_array(GRIP_U32, 1, 2, some);
    DESCRIBE(&base, &kp, GRIP_EINVAL, "keypoints: 2 columns");
    kp = abi_array(GRIP_U32, 3, 1, NULL);
    DESCRIBE(&base, &kp, GRIP_EINVAL, "keypoints: 3 rows but data is NULL");
    float *holed = malloc(n * 3 * sizeof *holed);
    ck_assert_ptr_nonnull(holed);
    memcpy(holed, xyz, n * 3 * sizeof *holed);
    holed[3 * 2 + 1] = NAN;
    c = base, c.xyz.data = holed;
    kp = abi_array(GRIP_U32, 3, 1, some);
    DESCRIBE_KP(&c, &kp, GRIP_EINVAL, "which is NaN");
    HOSTILE(t, describe(t, t->st, &base, 7, NULL, GRIP_MEM_HOST, NULL), GRIP_EINVAL, t->ctx, "role 7");

    /* valid, if unusual */
    if (!t->own_keypoints) {
        grip_features *f = NULL;
        VALID(t, describe(t, t->st, &base, GRIP_ROLE_SCENE, &kp, GRIP_MEM_HOST, &f));
        ck_assert_uint_eq(f->keypoints.rows, 3);
        f->release(f);
    }
    grip_array zeroed;
    memset(&zeroed, 0, sizeof zeroed); /* a host's "no keypoints": the stage picks its own */
    VALID(t, describe(t, t->st, &base, GRIP_ROLE_MODEL, &zeroed, GRIP_MEM_HOST, NULL));
    c = base, c.xyz.data = holed; /* a NaN point, and the stage's own keypoints */
    VALID(t, describe(t, t->st, &c, GRIP_ROLE_SCENE, NULL, GRIP_MEM_HOST, NULL));
    c = base, c.struct_size = (uint32_t)offsetof(grip_cloud, viewpoint); /* a host from before `viewpoint` */
    VALID(t, describe(t, t->st, &c, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, NULL));
    float *up = calloc(n * 3, sizeof *up);
    ck_assert_ptr_nonnull(up);
    for (size_t i = 0; i < n; i++)
        up[3 * i + 2] = 1.0f;
    c = base, c.normals = abi_array(GRIP_F32, n, 3, up);
    VALID(t, describe(t, t->st, &c, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, NULL));
    free(up);
    free(holed);
#undef DESCRIBE_KP
#undef DESCRIBE
}

/* ---- index (build and search) ------------------------------------------------------------------------------- */

static grip_status search(grip_index *ix, const grip_array *queries, uint32_t k, float bound, grip_array *ids,
                          grip_array *sqdist)
{
    return ix->search(ix, queries, k, bound, ids, sqdist);
}

static void index_calls(kit *t)
{
    grip_array r, ids;
#define BUILD(ref, model_ids, needle) HOSTILE(t, build(t, t->st, ref, model_ids, NULL), GRIP_EINVAL, t->ctx, needle)
    BUILD(NULL, &t->model_ids, "index: reference is NULL");
    r = t->reference, r.struct_size = 0;
    BUILD(&r, NULL, "reference: struct_size 0");
    r = t->reference, r.dtype = GRIP_U8;
    BUILD(&r, NULL, "reference: dtype");
    r = t->reference, r.rows = 0;
    BUILD(&r, NULL, "empty");
    r = t->reference, r.cols = 0;
    BUILD(&r, NULL, "empty");
    r = t->reference, r.data = NULL;
    BUILD(&r, NULL, "data is NULL");
    r = t->reference, r.rows = 1ull << 62;
    BUILD(&r, NULL, "address space");
    ids = t->model_ids, ids.rows = REF_ROWS - 1;
    BUILD(&t->reference, &ids, "model_ids has 39 rows");
    ids = t->model_ids, ids.dtype = GRIP_F32;
    BUILD(&t->reference, &ids, "model_ids: dtype");
    ids = t->model_ids, ids.struct_size = 0;
    BUILD(&t->reference, &ids, "model_ids: struct_size 0");
    uint32_t bad_ids[REF_ROWS];
    memcpy(bad_ids, t->model_id_rows, sizeof bad_ids);
    bad_ids[3] = 1; /* ... 0, 1, 0 ...: not contiguous per model */
    ids = abi_array(GRIP_U32, REF_ROWS, 1, bad_ids);
    BUILD(&t->reference, &ids, "non-decreasing");
    memcpy(bad_ids, t->model_id_rows, sizeof bad_ids);
    bad_ids[REF_ROWS - 1] = UINT32_MAX;
    BUILD(&t->reference, &ids, "reserved");
#undef BUILD

    /* search, on an index this stage built */
    grip_index *ix = NULL;
    VALID(t, build(t, t->st, &t->reference, &t->model_ids, &ix));
    enum { K = 3 };
    uint32_t out_ids[QUERY_ROWS * K];
    float out_sq[QUERY_ROWS * K];
    grip_array oi = abi_array(GRIP_U32, QUERY_ROWS, K, out_ids), os = abi_array(GRIP_F32, QUERY_ROWS, K, out_sq);
    grip_array q, a, b;
#define SEARCH(self, queries, k, ids_, sq_, where, needle)                                                             \
    HOSTILE(t, search(self, queries, k, INFINITY, ids_, sq_), GRIP_EINVAL, where, needle)
    HOSTILE(t, ix->search(NULL, &t->queries, K, INFINITY, &oi, &os), GRIP_EINVAL, NULL, "index.search: self is NULL");
    SEARCH(ix, NULL, K, &oi, &os, t->ctx, "index.search: queries is NULL");
    q = t->queries, q.struct_size = 0;
    SEARCH(ix, &q, K, &oi, &os, t->ctx, "queries: struct_size 0");
    q = t->queries, q.cols = REF_DIM - 1;
    SEARCH(ix, &q, K, &oi, &os, t->ctx, "dimensions");
    q = t->queries, q.dtype = GRIP_U32;
    SEARCH(ix, &q, K, &oi, &os, t->ctx, "queries: dtype");
    SEARCH(ix, &t->queries, 0, &oi, &os, t->ctx, "k is 0");
    SEARCH(ix, &t->queries, K, NULL, &os, t->ctx, "ids is NULL");
    a = oi, a.struct_size = 0;
    SEARCH(ix, &t->queries, K, &a, &os, t->ctx, "ids: struct_size 0");
    a = abi_array(GRIP_U32, QUERY_ROWS, K - 1, out_ids);
    SEARCH(ix, &t->queries, K, &a, &os, t->ctx, "ids");
    a = abi_array(GRIP_U32, QUERY_ROWS - 1, K, out_ids);
    SEARCH(ix, &t->queries, K, &a, &os, t->ctx, "ids: must be");
    b = os, b.dtype = GRIP_U32;
    SEARCH(ix, &t->queries, K, &oi, &b, t->ctx, "sqdist: dtype");
    b = os, b.memory = GRIP_MEM_CUDA;
    SEARCH(ix, &t->queries, K, &oi, &b, t->ctx, "same memory space");
#undef SEARCH
    /* valid: no queries, NaN queries */
    grip_array none = abi_array(GRIP_U32, 0, K, NULL), none_sq = abi_array(GRIP_F32, 0, K, NULL);
    q = abi_array(GRIP_F32, 0, REF_DIM, NULL);
    VALID(t, search(ix, &q, K, INFINITY, &none, &none_sq));
    float nan_rows[QUERY_ROWS * REF_DIM];
    for (size_t i = 0; i < QUERY_ROWS * REF_DIM; i++)
        nan_rows[i] = NAN;
    q = abi_array(GRIP_F32, QUERY_ROWS, REF_DIM, nan_rows);
    VALID(t, search(ix, &q, K, INFINITY, &oi, &os));
    for (size_t i = 0; i < QUERY_ROWS * K; i++)
        ck_assert_uint_eq(out_ids[i], UINT32_MAX);
    HOSTILE(t, search(ix, &t->queries, K, NAN, &oi, &os), GRIP_EINVAL, t->ctx, "index.search: max_sqdist is NaN");
    ix->release(NULL);
#if !UNDER_ASAN
    /* used after its release, through the entry points read before it (see release_twice) */
    grip_status (*search_fn)(grip_index *, const grip_array *, uint32_t, float, grip_array *, grip_array *) =
        ix->search;
    void (*release_fn)(grip_index *) = ix->release;
    release_fn(ix);
    HOSTILE(t, search_fn(ix, &t->queries, K, INFINITY, &oi, &os), GRIP_EINVAL, NULL, "not a live index");
    release_fn(ix);
#else
    ix->release(ix);
#endif
    /* a reference set of NaN rows only: an index that never answers */
    r = abi_array(GRIP_F32, QUERY_ROWS, REF_DIM, nan_rows);
    VALID(t, build(t, t->st, &r, NULL, &ix));
    VALID(t, search(ix, &t->queries, K, INFINITY, &oi, &os));
    for (size_t i = 0; i < QUERY_ROWS * K; i++)
        ck_assert_uint_eq(out_ids[i], UINT32_MAX);
    ix->release(ix);
    grip_array zeroed;
    memset(&zeroed, 0, sizeof zeroed); /* a host's "no model ids": all model 0 */
    VALID(t, build(t, t->st, &t->reference, &zeroed, NULL));
}

/* ---- match --------------------------------------------------------------------------------------------------- */

/* An index of "another plugin": the real one's fields, with a search of its own that forwards, or misbehaves. */
typedef enum { FORWARD, BOGUS_IDS, FAIL } foreign_mode;
typedef struct foreign_index {
    grip_index pub;
    grip_index *real;
    foreign_mode mode;
} foreign_index;

static grip_status foreign_search(grip_index *self, const grip_array *queries, uint32_t k, float bound,
                                  grip_array *ids, grip_array *sqdist)
{
    foreign_index *f = (foreign_index *)self;
    if (f->mode == FAIL)
        return GRIP_EINTERNAL;
    grip_status s = f->real->search(f->real, queries, k, bound, ids, sqdist);
    if (!s && f->mode == BOGUS_IDS)
        ((uint32_t *)ids->data)[0] = 999;
    return s;
}

static foreign_index foreign_of(grip_index *real, foreign_mode mode)
{
    foreign_index f;
    memset(&f, 0, sizeof f);
    f.pub = *real;
    f.pub.search = foreign_search;
    f.real = real;
    f.mode = mode;
    return f;
}

static void match_calls(kit *t)
{
#define MATCH(index, queries, want, needle)                                                                            \
    HOSTILE(t, match(t, t->st, index, queries, GRIP_MEM_HOST, NULL), want, t->ctx, needle)
    MATCH(NULL, &t->queries, GRIP_EINVAL, "match: index is NULL");
    foreign_index f = foreign_of(t->index, FORWARD);
    f.pub.struct_size = 0;
    MATCH(&f.pub, &t->queries, GRIP_EINVAL, "index: struct_size 0");
    f = foreign_of(t->index, FORWARD), f.pub.search = NULL;
    MATCH(&f.pub, &t->queries, GRIP_EINVAL, "no search function");
    f = foreign_of(t->index, FORWARD), f.pub.model_ids.dtype = GRIP_F32;
    MATCH(&f.pub, &t->queries, GRIP_EINVAL, "index.model_ids: dtype");
    f = foreign_of(t->index, FORWARD), f.pub.model_ids.memory = GRIP_MEM_CUDA;
    MATCH(&f.pub, &t->queries, GRIP_EINVAL, "host memory");
    f = foreign_of(t->index, FORWARD), f.pub.model_ids.rows = 3;
    MATCH(&f.pub, &t->queries, GRIP_EINVAL, "cover");
    f = foreign_of(t->index, FORWARD), f.pub.n_models = 1;
    MATCH(&f.pub, &t->queries, GRIP_EINVAL, "names model 1 of 1");
    uint32_t descending[REF_ROWS];
    for (size_t i = 0; i < REF_ROWS; i++)
        descending[i] = i == 0 ? 1 : t->model_id_rows[i];
    f = foreign_of(t->index, FORWARD), f.pub.model_ids.data = descending;
    MATCH(&f.pub, &t->queries, GRIP_EINVAL, "must ascend");
    f = foreign_of(t->index, BOGUS_IDS);
    MATCH(&f.pub, &t->queries, GRIP_EINVAL, "beyond the 40 reference rows");
    f = foreign_of(t->index, FAIL);
    MATCH(&f.pub, &t->queries, GRIP_EINTERNAL, "index.search failed");
    MATCH(t->index, NULL, GRIP_EINVAL, "match: queries is NULL");
    grip_array q = t->queries;
    q.struct_size = 0;
    MATCH(t->index, &q, GRIP_EINVAL, "queries: struct_size 0");
    q = t->queries, q.cols = 3;
    MATCH(t->index, &q, GRIP_EINVAL, "dimensions");
    q = t->queries, q.dtype = GRIP_U32;
    MATCH(t->index, &q, GRIP_EINVAL, "queries: dtype");
    q = t->queries, q.data = NULL;
    MATCH(t->index, &q, GRIP_EINVAL, "data is NULL");
#undef MATCH

    /* valid: another plugin's index, no queries, NaN queries, and no pair surviving the bound */
    uint64_t count = 1;
    f = foreign_of(t->index, FORWARD);
    VALID(t, match(t, t->st, &f.pub, &t->queries, GRIP_MEM_HOST, &count));
    ck_assert_uint_gt(count, 0);
    q = abi_array(GRIP_F32, 0, REF_DIM, NULL);
    VALID(t, match(t, t->st, t->index, &q, GRIP_MEM_HOST, &count));
    ck_assert_uint_eq(count, 0);
    float nan_rows[QUERY_ROWS * REF_DIM];
    for (size_t i = 0; i < QUERY_ROWS * REF_DIM; i++)
        nan_rows[i] = NAN;
    q = abi_array(GRIP_F32, QUERY_ROWS, REF_DIM, nan_rows);
    count = 1;
    VALID(t, match(t, t->st, t->index, &q, GRIP_MEM_HOST, &count));
    ck_assert_uint_eq(count, 0);
    if (abi_has_param(t->impl, "max_sqdist")) {
        static const grip_kv tight[] = {{"max_sqdist", "1e-30"}};
        grip_stage *strict = kit_stage(t, t->impl, tight, 1);
        count = 1;
        VALID(t, match(t, strict, t->index, &t->queries, GRIP_MEM_HOST, &count));
        ck_assert_uint_eq(count, 0);
        t->impl->destroy(strict);
    }
#if !UNDER_ASAN
    const grip_stage_impl *ixi = abi_default_stage(t->api, GRIP_STAGE_INDEX);
    grip_stage *builder = kit_stage(t, ixi, NULL, 0);
    grip_index *gone = NULL;
    ck_assert_int_eq(ixi->build(builder, &t->reference, NULL, &gone), GRIP_OK);
    ixi->destroy(builder);
    gone->release(gone);
    HOSTILE(t, match(t, t->st, gone, &t->queries, GRIP_MEM_HOST, NULL), GRIP_EINVAL, t->ctx, "was released");
#endif
}

/* ---- group --------------------------------------------------------------------------------------------------- */

static void group_calls(kit *t)
{
    const size_t k = (size_t)t->matches.count;
    grip_matches m;
    grip_view v, bad[2];
    grip_features f;
    grip_cloud c;
#define GROUP(models, n, scene, matches, needle)                                                                       \
    HOSTILE(t, group(t, t->st, models, n, scene, matches, NULL), GRIP_EINVAL, t->ctx, needle)
    GROUP(&t->view, 1, &t->view, NULL, "group: matches is NULL");
    m = t->matches, m.struct_size = 0;
    GROUP(&t->view, 1, &t->view, &m, "group: matches: struct_size 0");
    m = t->matches, m.count = k + 1;
    GROUP(&t->view, 1, &t->view, &m, "matches.query has");
    m = t->matches, m.query.dtype = GRIP_F32;
    GROUP(&t->view, 1, &t->view, &m, "matches.query: dtype");
    m = t->matches, m.reference.struct_size = 0;
    GROUP(&t->view, 1, &t->view, &m, "matches.reference: struct_size 0");
    m = t->matches, m.sqdist.cols = 2;
    GROUP(&t->view, 1, &t->view, &m, "matches.sqdist: 2 columns");
    /* one bad correspondence among good ones, in copies of the kit's arrays */
    uint32_t *q = malloc(k * sizeof *q), *r = malloc(k * sizeof *r), *mid = malloc(k * sizeof *mid);
    float *dist = malloc(k * sizeof *dist);
    ck_assert(q && r && mid && dist);
    memcpy(q, t->corr_query, k * sizeof *q);
    memcpy(r, t->corr_reference, k * sizeof *r);
    memcpy(mid, t->corr_model, k * sizeof *mid);
    memcpy(dist, t->corr_sqdist, k * sizeof *dist);
    m = t->matches, m.query.data = q, m.reference.data = r, m.model_id.data = mid, m.sqdist.data = dist;
    mid[0] = 7;
    GROUP(&t->view, 1, &t->view, &m, "names model 7");
    mid[0] = 0, q[0] = 100000;
    GROUP(&t->view, 1, &t->view, &m, "scene keypoint 100000 is out of range");
    q[0] = 0, r[0] = 100000;
    GROUP(&t->view, 1, &t->view, &m, "model keypoint 100000 is out of range");
    r[0] = 0, dist[0] = NAN;
    GROUP(&t->view, 1, &t->view, &m, "squared distance is NaN");
    free(q);
    free(r);
    free(mid);
    free(dist);

    GROUP(&t->view, 1, NULL, &t->matches, "group: scene is NULL");
    v = t->view, v.struct_size = 0;
    GROUP(&t->view, 1, &v, &t->matches, "group: scene: struct_size 0");
    v = t->view, v.struct_size = 8;
    GROUP(&t->view, 1, &v, &t->matches, "group: scene: struct_size 8");
    v = t->view, v.cloud = NULL;
    GROUP(&t->view, 1, &v, &t->matches, "group: scene.cloud is NULL");
    v = t->view, v.features = NULL;
    GROUP(&t->view, 1, &v, &t->matches, "group: scene.features is NULL");
    c = t->cloud.cloud, c.struct_size = 0, v = t->view, v.cloud = &c;
    GROUP(&t->view, 1, &v, &t->matches, "scene.cloud: struct_size 0");
    f = *t->features, f.struct_size = 0, v = t->view, v.features = &f;
    GROUP(&t->view, 1, &v, &t->matches, "scene.features: struct_size 0");
    f = *t->features, f.keypoint_xyz.dtype = GRIP_U32, v = t->view, v.features = &f;
    GROUP(&t->view, 1, &v, &t->matches, "scene.features.keypoint_xyz: dtype");
    f = *t->features, f.keypoints.rows = 1, v = t->view, v.features = &f;
    GROUP(&t->view, 1, &v, &t->matches, "keypoints but");
    GROUP(NULL, 1, &t->view, &t->matches, "no model views");
    GROUP(&t->view, 0, &t->view, &t->matches, "no model views");
    bad[0] = t->view, bad[0].struct_size = 0;
    GROUP(bad, 1, &t->view, &t->matches, "group: models[0]: struct_size 0");
    bad[0] = t->view, bad[0].features = NULL;
    GROUP(bad, 1, &t->view, &t->matches, "group: models[0].features is NULL");
    bad[0] = t->view, bad[1] = t->view, bad[1].cloud = NULL;
    GROUP(bad, 2, &t->view, &t->matches, "group: models[1].cloud is NULL");
#undef GROUP

    /* valid: no correspondences at all */
    uint32_t count = 1;
    m = t->matches, m.count = 0, m.query.rows = m.reference.rows = m.model_id.rows = m.sqdist.rows = 0;
    VALID(t, group(t, t->st, &t->view, 1, &t->view, &m, &count));
    ck_assert_uint_eq(count, 0);
}

/* ---- verify -------------------------------------------------------------------------------------------------- */

static void verify_calls(kit *t)
{
    grip_hypotheses h;
    grip_hypothesis one = t->hypothesis, *hy = &one; /* mutated below: the kit's stays valid */
    const grip_hypotheses mine = {sizeof mine, 1, sizeof one, &one, NULL};
    grip_view v, bad;
    grip_cloud c;
#define VERIFY(models, n, scene, hyps, needle)                                                                         \
    HOSTILE(t, verify(t, t->st, models, n, scene, hyps, NULL), GRIP_EINVAL, t->ctx, needle)
    VERIFY(&t->view, 1, &t->view, NULL, "verify: hypotheses is NULL");
    h = t->hypotheses, h.struct_size = 0;
    VERIFY(&t->view, 1, &t->view, &h, "verify: hypotheses: struct_size 0");
    h = t->hypotheses, h.item_size = 8;
    VERIFY(&t->view, 1, &t->view, &h, "item_size 8");
    h = t->hypotheses, h.items = NULL;
    VERIFY(&t->view, 1, &t->view, &h, "items is NULL");
    hy->struct_size = 0;
    VERIFY(&t->view, 1, &t->view, &mine, "items[0].struct_size 0");
    hy->struct_size = sizeof *hy;
    hy->model_id = 3;
    VERIFY(&t->view, 1, &t->view, &mine, "names model 3");
    hy->model_id = 0;
    hy->pose[5] = NAN;
    VERIFY(&t->view, 1, &t->view, &mine, "pose is not finite");
    hy->pose[5] = INFINITY;
    VERIFY(&t->view, 1, &t->view, &mine, "pose is not finite");

    VERIFY(&t->view, 1, NULL, &t->hypotheses, "verify: scene is NULL");
    v = t->view, v.struct_size = 0;
    VERIFY(&t->view, 1, &v, &t->hypotheses, "verify: scene: struct_size 0");
    v = t->view, v.cloud = NULL;
    VERIFY(&t->view, 1, &v, &t->hypotheses, "verify: scene.cloud is NULL");
    c = t->cloud.cloud, c.struct_size = 0, v = t->view, v.cloud = &c;
    VERIFY(&t->view, 1, &v, &t->hypotheses, "scene.cloud: struct_size 0");
    float nan_xyz[3 * 4];
    for (size_t i = 0; i < 3 * 4; i++)
        nan_xyz[i] = NAN;
    c = t->cloud.cloud, c.xyz = abi_array(GRIP_F32, 4, 3, nan_xyz), c.width = 4, v = t->view, v.cloud = &c;
    VERIFY(&t->view, 1, &v, &t->hypotheses, "scene.cloud has no finite point");
    VERIFY(NULL, 1, &t->view, &t->hypotheses, "models is NULL");
    bad = t->view, bad.struct_size = 0;
    VERIFY(&bad, 1, &t->view, &t->hypotheses, "verify: models[0]: struct_size 0");
    bad = t->view, bad.cloud = NULL;
    VERIFY(&bad, 1, &t->view, &t->hypotheses, "verify: models[0].cloud is NULL");
    c = t->cloud.cloud, c.xyz.rows = 0, c.width = 0, bad = t->view, bad.cloud = &c;
    VERIFY(&bad, 1, &t->view, &t->hypotheses, "verify: models[0].cloud is empty");
#undef VERIFY

    /* valid: no hypotheses, with and without models */
    uint32_t count = 1;
    h = t->hypotheses, h.count = 0, h.items = NULL;
    VALID(t, verify(t, t->st, &t->view, 1, &t->view, &h, &count));
    ck_assert_uint_eq(count, 0);
    VALID(t, verify(t, t->st, NULL, 0, &t->view, &h, &count));
}

START_TEST(every_stage_refuses_bad_inputs)
{
    kit t;
    kit_open(&t, plugin.api->stages[_i]);
    switch (t.impl->kind) {
    case GRIP_STAGE_DESCRIPTOR: descriptor_calls(&t); break;
    case GRIP_STAGE_INDEX: index_calls(&t); break;
    case GRIP_STAGE_MATCH: match_calls(&t); break;
    case GRIP_STAGE_GROUP: group_calls(&t); break;
    case GRIP_STAGE_VERIFY: verify_calls(&t); break;
    default: ck_abort_msg("%s: unknown kind %u", t.impl->name, t.impl->kind);
    }
    kit_close(&t);
}
END_TEST

/* ---- contexts ------------------------------------------------------------------------------------------------ */

/* A context-less call failed with want, and the thread's text holds needle. */
static void expect_orphan(const grip_plugin *api, grip_status got, grip_status want, const char *needle, int line)
{
    const char *text = api->ctx_last_error(NULL);
    ck_assert_msg(got == want, "line %d: returned %d, expected %d (%s)", line, got, want, text);
    ck_assert_msg(strstr(text, needle), "line %d: the text '%s' lacks '%s'", line, text, needle);
}

START_TEST(contexts_refuse_bad_options)
{
    const grip_plugin *api = plugin.api;
    grip_ctx *ctx = (grip_ctx *)(void *)&api;
    grip_ctx_options o = one_thread;
    expect_orphan(api, api->ctx_create(NULL, NULL), GRIP_EINVAL, "ctx_create: out is NULL", __LINE__);
    o.struct_size = 0;
    expect_orphan(api, api->ctx_create(&o, &ctx), GRIP_EINVAL, "options.struct_size 0", __LINE__);
    ck_assert_ptr_null(ctx);
    o.struct_size = 8;
    expect_orphan(api, api->ctx_create(&o, &ctx), GRIP_EINVAL, "options.struct_size 8", __LINE__);
    static const uint32_t too_many[] = {1025, 0x80000000u, UINT32_MAX};
    for (size_t i = 0; i < sizeof too_many / sizeof too_many[0]; i++) {
        o = one_thread, o.threads = too_many[i];
        ctx = (grip_ctx *)(void *)&api;
        expect_orphan(api, api->ctx_create(&o, &ctx), GRIP_EINVAL, "options.threads", __LINE__);
        ck_assert_ptr_null(ctx);
    }
    o = one_thread, o.device_ordinal = -2;
    expect_orphan(api, api->ctx_create(&o, &ctx), GRIP_EINVAL, "options.device_ordinal -2", __LINE__);
    o = one_thread, o.threads = 1024; /* the documented maximum */
    ck_assert_int_eq(api->ctx_create(&o, &ctx), GRIP_OK);
    api->ctx_destroy(ctx);
    api->ctx_destroy(NULL);
    ck_assert_int_eq(api->device_count(NULL), 0);
    for (int s = -20; s <= 5; s++)
        ck_assert_ptr_nonnull(api->status_str((grip_status)s));

    /* after all that, a context works */
    ck_assert_int_eq(api->ctx_create(&one_thread, &ctx), GRIP_OK);
    ck_assert_str_eq(api->ctx_last_error(ctx), "");
    ck_assert_str_eq(api->ctx_last_error(NULL), "");
    abi_cloud cloud;
    abi_cloud_make(&cloud, 0.06f, 0.005f, NULL);
    const grip_stage_impl *d = abi_default_stage(api, GRIP_STAGE_DESCRIPTOR);
    grip_stage *st = NULL;
    grip_features *f = NULL;
    ck_assert_int_eq(d->create(ctx, NULL, 0, &st), GRIP_OK);
    ck_assert_int_eq(d->describe(st, &cloud.cloud, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, &f), GRIP_OK);
    f->release(f);
    d->destroy(st);
    abi_cloud_free(&cloud);
    api->ctx_destroy(ctx);
#if !UNDER_ASAN
    ck_assert_ptr_nonnull(strstr(api->ctx_last_error(ctx), "not a live grip context"));
    ck_assert_int_eq(api->device_count(ctx), 0);
    api->ctx_destroy(ctx);
#endif
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hostile_host");
    TCase *tc = tcase_create("stages");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, every_stage_refuses_bad_stages_and_outs, 0, (int)plugin.api->n_stages);
    tcase_add_loop_test(tc, every_stage_refuses_bad_inputs, 0, (int)plugin.api->n_stages);
    suite_add_tcase(s, tc);
    grip_test_add_case(s, "contexts", contexts_refuse_bad_options);
    return s;
}

int main(void)
{
    const char *path = getenv("GRIP_PLUGIN");
    if (!path || !*path) {
        fprintf(stderr, "test_hostile_host: GRIP_PLUGIN is not set (ctest sets it); skipped\n");
        return GRIP_TEST_SKIP;
    }
    char err[512] = "";
    if (abi_plugin_open(&plugin, err, sizeof err) != 0) {
        fprintf(stderr, "test_hostile_host: %s\n", err);
        return 1;
    }
    int rc = grip_test_run(suite());
    abi_plugin_close(&plugin);
    return rc;
}
