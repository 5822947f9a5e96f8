/* test_threads.c -- libgrip.so in a multi-threaded host, through its ABI alone: 4 threads at once, each with 4
 * contexts of its own, run the whole pipeline (every kind's default stage, on the CPU, whose results reproduce bit
 * for bit) on one small synthetic model and scene, and every one of the 16 runs gives the results of a run on the
 * main thread, bit for bit; and the plugin goes through 50 dlopen/dlclose cycles, making and freeing a context and
 * a stage of every implementation in each.
 * Every context asks for threads = 1, so that OpenMP starts no thread pools: this test also runs under
 * ThreadSanitizer, which does not see into libgomp. */
#define _POSIX_C_SOURCE 200809L
#include "plugin_abi_support.h"

#include <pthread.h>

#define N_THREADS 4
#define CONTEXTS_PER_THREAD 4
#define DLOPEN_CYCLES 50

static const grip_ctx_options one_thread = {sizeof(grip_ctx_options), -1, 1};

/* The scene: the model turned 30 degrees about z, tilted 10 degrees about x, and moved away. */
static const float scene_pose[16] = {
    0.8660254f, -0.5f,       0.0f,        0.30f,
    0.4924039f, 0.8528685f,  -0.1736482f, -0.20f,
    0.0868241f, 0.1503837f,  0.9848078f,  0.60f,
    0.0f,       0.0f,        0.0f,        1.0f,
};

typedef struct worker {
    pthread_t thread;
    const grip_plugin *api;
    const grip_cloud *model, *scene;
    abi_run runs[CONTEXTS_PER_THREAD];
    grip_status status;
    char error[GRIP_ERROR_TEXT_MAX];
} worker;

/* A thread of the host: makes its contexts, runs the pipeline once in each, in turn, and frees them. It fails no
 * Check assertion (the main thread judges): a failure is kept in status and error. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    grip_ctx *ctx[CONTEXTS_PER_THREAD] = {NULL};
    for (int c = 0; c < CONTEXTS_PER_THREAD && !w->status; c++) {
        w->status = w->api->ctx_create(&one_thread, &ctx[c]);
        if (w->status)
            snprintf(w->error, sizeof w->error, "ctx_create: %s", w->api->ctx_last_error(NULL));
    }
    for (int c = 0; c < CONTEXTS_PER_THREAD && !w->status; c++) {
        w->status = abi_pipeline_run(w->api, ctx[c], w->model, w->scene, &w->runs[c]);
        if (w->status)
            snprintf(w->error, sizeof w->error, "context %d: %s", c, w->api->ctx_last_error(ctx[c]));
    }
    for (int c = 0; c < CONTEXTS_PER_THREAD; c++)
        w->api->ctx_destroy(ctx[c]);
    return NULL;
}

START_TEST(every_thread_gets_the_same_results)
{
    abi_plugin pl;
    char err[512] = "";
    ck_assert_msg(abi_plugin_open(&pl, err, sizeof err) == 0, "%s", err);
    abi_cloud model, scene;
    abi_cloud_make(&model, 0.2f, 0.005f, NULL);
    abi_cloud_make(&scene, 0.2f, 0.005f, scene_pose);

    grip_ctx *ctx = NULL;
    ck_assert_int_eq(pl.api->ctx_create(&one_thread, &ctx), GRIP_OK);
    abi_run want;
    grip_status s = abi_pipeline_run(pl.api, ctx, &model.cloud, &scene.cloud, &want);
    ck_assert_msg(s == GRIP_OK, "the main thread's run: %s", pl.api->ctx_last_error(ctx));
    pl.api->ctx_destroy(ctx);
    printf("pipeline: %llu model and %llu scene keypoints, %llu matches, %u hypotheses, %u accepted\n",
           (unsigned long long)want.model_keypoints, (unsigned long long)want.scene_keypoints,
           (unsigned long long)want.matches, want.hypotheses, want.accepted);
    /* results worth comparing: every stage had something to do */
    ck_assert_uint_gt(want.matches, 0);
    ck_assert_uint_gt(want.hypotheses, 0);

    static worker workers[N_THREADS];
    memset(workers, 0, sizeof workers);
    for (int t = 0; t < N_THREADS; t++) {
        workers[t].api = pl.api;
        workers[t].model = &model.cloud;
        workers[t].scene = &scene.cloud;
        ck_assert_int_eq(pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]), 0);
    }
    for (int t = 0; t < N_THREADS; t++)
        ck_assert_int_eq(pthread_join(workers[t].thread, NULL), 0);
    for (int t = 0; t < N_THREADS; t++) {
        ck_assert_msg(workers[t].status == GRIP_OK, "thread %d: %s", t, workers[t].error);
        for (int c = 0; c < CONTEXTS_PER_THREAD; c++) {
            const abi_run *got = &workers[t].runs[c];
            ck_assert_msg(got->model_keypoints == want.model_keypoints && got->scene_keypoints == want.scene_keypoints &&
                              got->matches == want.matches && got->hypotheses == want.hypotheses &&
                              got->accepted == want.accepted && got->digest == want.digest,
                          "thread %d, context %d: results differ from the main thread's", t, c);
        }
    }
    abi_cloud_free(&model);
    abi_cloud_free(&scene);
    abi_plugin_close(&pl);
}
END_TEST

START_TEST(dlopen_dlclose_cycles)
{
    for (int cycle = 0; cycle < DLOPEN_CYCLES; cycle++) {
        abi_plugin pl;
        char err[512] = "";
        ck_assert_msg(abi_plugin_open(&pl, err, sizeof err) == 0, "cycle %d: %s", cycle, err);
        grip_ctx *ctx = NULL;
        ck_assert_int_eq(pl.api->ctx_create(&one_thread, &ctx), GRIP_OK);
        for (uint32_t i = 0; i < pl.api->n_stages; i++) {
            const grip_stage_impl *impl = pl.api->stages[i];
            grip_stage *st = NULL;
            ck_assert_msg(impl->create(ctx, NULL, 0, &st) == GRIP_OK, "cycle %d, %s: %s", cycle, impl->name,
                          pl.api->ctx_last_error(ctx));
            impl->destroy(st);
        }
        pl.api->ctx_destroy(ctx);
        abi_plugin_close(&pl);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("threads");
    grip_test_add_case(s, "threads", every_thread_gets_the_same_results);
    grip_test_add_case(s, "dlopen", dlopen_dlclose_cycles);
    return s;
}

int main(void)
{
    const char *plugin = getenv("GRIP_PLUGIN");
    if (!plugin || !*plugin) {
        fprintf(stderr, "test_threads: GRIP_PLUGIN is not set (ctest sets it); skipped\n");
        return GRIP_TEST_SKIP;
    }
    return grip_test_run(suite());
}
