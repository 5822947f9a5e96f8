/* test_contexts_cuda.c (gpu) -- contexts driven from distinct host threads at once, each call's GPU work on its
 * thread's own default stream (plugin.h, "Synchrony"): 4 threads, each with a pipeline of its own (its own
 * context), run a generated scene twice while the others run theirs, and every run gives the results of a run on
 * the main thread alone, bit for bit. The pipelines are made on the main thread and released there after the
 * threads end, so that a context's frees queued from a worker's stream are waited for at release.
 * The scene is the demo's (2 objects, models of 8 views). Index, match, group and verify run on CUDA
 * (device = cuda), deterministic kernels whose results repeat bit for bit; the descriptor stage runs on the CPU for
 * that reason (SHOT's GPU votes are added with float atomics). A second pass runs every stage on CUDA in the
 * threads at once and checks what does not depend on the order of those additions: the keypoints and the objects
 * found. Skips (77) without a usable device. */
#include "test_support.h"
#include "judge/task.h"
#include "pipeline.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_THREADS 4
#define RUNS_PER_THREAD 2

typedef struct worker {
    pthread_t thread;
    grip_pipeline *p;
    const recognition_task *task;
    pipeline_result runs[RUNS_PER_THREAD];
    int failed;
    char error[512];
} worker;

static void open_pipeline(grip_pipeline *p, grip_config *cfg, const char *descriptor_device)
{
    char config[4096], set[64];
    snprintf(config, sizeof config, "%s/configs/synth_hough3d_icp.conf", grip_test_source_dir());
    snprintf(set, sizeof set, "descriptor.device=%s", descriptor_device);
    grip_diag diag = {0};
    ck_assert_int_eq(grip_config_load(config, cfg, &diag), 0);
    ck_assert_int_eq(grip_config_set(cfg, "pipeline.device=cuda", &diag), 0);
    ck_assert_int_eq(grip_config_set(cfg, set, &diag), 0);
    ck_assert_int_eq(grip_config_set(cfg, "pipeline.threads=2", &diag), 0);
    int opened = pipeline_open(p, getenv("GRIP_PLUGIN"), cfg, &diag);
    grip_diag_print(&diag, stderr);
    grip_diag_free(&diag);
    ck_assert_int_eq(opened, 0);
}

static int run(grip_pipeline *p, const recognition_task *t, pipeline_result *r, char *error, size_t n)
{
    grip_diag diag = {0};
    int rc = pipeline_run(p, t->clouds, t->n_clouds, t->model_of_cloud, t->n_models, t->scene, r, &diag);
    if (rc != 0)
        snprintf(error, n, "%s", diag.count ? diag.messages[diag.count - 1] : "pipeline_run failed");
    grip_diag_free(&diag);
    return rc;
}

/* A thread of the host: its pipeline, RUNS_PER_THREAD times. It fails no Check assertion: the main thread judges. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    for (int r = 0; r < RUNS_PER_THREAD && !w->failed; r++)
        w->failed = run(w->p, w->task, &w->runs[r], w->error, sizeof w->error) != 0;
    return NULL;
}

/* Whether a and b found the same things: counts, and with `bits` every hypothesis's pose, score and verdict bit for
 * bit; without, the accepted instances' models and poses within 1e-4. */
static int same_results(const pipeline_result *a, const pipeline_result *b, int bits)
{
    if (a->n_models != b->n_models || a->scene_keypoints != b->scene_keypoints)
        return 0;
    for (uint32_t m = 0; m < a->n_models; m++)
        if (a->model_keypoints[m] != b->model_keypoints[m])
            return 0;
    if (bits) {
        if (a->correspondences != b->correspondences || a->n_hypotheses != b->n_hypotheses)
            return 0;
        for (size_t i = 0; i < a->n_hypotheses; i++) {
            const pipeline_instance *x = &a->hypotheses[i], *y = &b->hypotheses[i];
            if (x->model != y->model || memcmp(x->pose, y->pose, sizeof x->pose) != 0 ||
                x->correspondences != y->correspondences || memcmp(&x->votes, &y->votes, sizeof x->votes) != 0 ||
                memcmp(&x->fitness, &y->fitness, sizeof x->fitness) != 0 ||
                memcmp(&x->rmse, &y->rmse, sizeof x->rmse) != 0 ||
                memcmp(&x->violation, &y->violation, sizeof x->violation) != 0 || x->accepted != y->accepted ||
                x->reason != y->reason)
                return 0;
        }
        return 1;
    }
    return pipeline_result_same_instances(a, b, 1e-4);
}

static void threads_against_one(const char *descriptor_device, int bits)
{
    synth_params sp; /* the demo's scene: 2 objects, each kind's model made of 8 rendered views */
    synth_params_default(&sp);
    sp.n_objects = 2;
    sp.model_views = 8;
    recognition_task task;
    char err[256] = "";
    ck_assert_msg(task_from_synth(&sp, 0.01, 180.0, &task, err, sizeof err) == 0, "%s", err);

    grip_config cfg[N_THREADS + 1];
    grip_pipeline p[N_THREADS + 1];
    memset(cfg, 0, sizeof cfg);
    for (int t = 0; t <= N_THREADS; t++)
        open_pipeline(&p[t], &cfg[t], descriptor_device);

    pipeline_result want;
    ck_assert_msg(run(&p[N_THREADS], &task, &want, err, sizeof err) == 0, "the main thread's run: %s", err);
    const size_t found = pipeline_result_accepted(&want);
    printf("descriptor on %s: %zu scene keypoints, %zu correspondences, %zu hypotheses, %zu accepted\n",
           descriptor_device, want.scene_keypoints, want.correspondences, want.n_hypotheses, found);
    ck_assert_uint_gt(found, 0); /* results worth comparing: every stage had something to do */

    static worker workers[N_THREADS];
    memset(workers, 0, sizeof workers);
    for (int t = 0; t < N_THREADS; t++) {
        workers[t].p = &p[t];
        workers[t].task = &task;
        ck_assert_int_eq(pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]), 0);
    }
    for (int t = 0; t < N_THREADS; t++)
        ck_assert_int_eq(pthread_join(workers[t].thread, NULL), 0);
    for (int t = 0; t < N_THREADS; t++) {
        ck_assert_msg(!workers[t].failed, "thread %d: %s", t, workers[t].error);
        for (int r = 0; r < RUNS_PER_THREAD; r++) {
            ck_assert_msg(same_results(&want, &workers[t].runs[r], bits),
                          "thread %d, run %d: results differ from the main thread's", t, r);
            pipeline_result_free(&workers[t].runs[r]);
        }
    }
    pipeline_result_free(&want);
    for (int t = 0; t <= N_THREADS; t++) {
        pipeline_close(&p[t]);
        grip_config_free(&cfg[t]);
    }
    task_free(&task);
}

START_TEST(threads_give_the_main_threads_bits)
{
    threads_against_one("cpu", 1);
}
END_TEST

START_TEST(threads_find_the_same_objects_all_on_cuda)
{
    threads_against_one("cuda", 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("contexts_cuda");
    grip_test_add_case(s, "bits", threads_give_the_main_threads_bits);
    grip_test_add_case(s, "all_cuda", threads_find_the_same_objects_all_on_cuda);
    return grip_test_run_gpu(s);
}
