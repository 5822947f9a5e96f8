/* test_faults.c -- fault injection on the CPU twins (built with GRIP_FAULT_INJECTION only): every LAPACKE call a
 * whole pipeline makes (RANSAC's rigid fits; ICP's updates are closed-form, shared with its kernels, and call no
 * LAPACKE) is made to fail in turn; the run stops with GRIP_ELAPACK and
 * a last error naming the stage, leaves no result and no memory behind (LeakSanitizer, in scripts/ci-sanitize.sh),
 * and the same context then gives the clean run's results bit for bit (tests/support/fault_walk.h). A CPU pipeline
 * passes no device hook at all. One CPU thread, so that the Nth call is the same call in every run, except in the
 * group RANSAC's own case, which fails calls on its 4 worker threads (whichever call it is must fail the run). */
#include "test_support.h"
#include "fault_walk.h"
#include "ransac_clusters.h"

#include <stdio.h>

/* SHOT with BOARD frames for Hough 3D, few RANSAC and ICP iterations: two hypotheses (one per model), one accepted,
 * a dozen LAPACKE calls. */
static const char *const cpu_pipeline[] = {
    "descriptor.impl=shot",        "descriptor.device=cpu",       "descriptor.radius=0.05",
    "descriptor.model_leaf=0.015", "descriptor.scene_leaf=0.015", "index.impl=bruteforce",
    "index.device=cpu",            "match.impl=knn",              "match.device=cpu",
    "group.impl=hough3d",          "group.device=cpu",            "group.bin_size=0.02",
    "group.threshold=4",           "group.frame_radius=0.03",     "group.ransac_iterations=5",
    "verify.impl=icp",             "verify.device=cpu",           "verify.max_iterations=5",
    NULL};

/* The other grouping (geometric consistency, its own RANSAC caller) behind the kd-tree index and the ratio test. */
static const char *const cpu_pipeline_gc[] = {
    "descriptor.impl=shot",        "descriptor.device=cpu",       "descriptor.radius=0.05",
    "descriptor.model_leaf=0.015", "descriptor.scene_leaf=0.015", "index.impl=kdtree",
    "index.device=cpu",            "match.impl=knn",              "match.device=cpu",
    "match.ratio=0.9",             "group.impl=gc",               "group.device=cpu",
    "group.size=0.01",             "group.threshold=10",          "group.ransac_iterations=3",
    "verify.impl=icp",             "verify.device=cpu",           "verify.max_iterations=3",
    NULL};

START_TEST(every_lapacke_call_fails_cleanly)
{
    fault_pipeline p;
    fault_pipeline_open(&p, cpu_pipeline, 1, GRIP_MEM_HOST);
    fault_walk_report r;
    fault_walk(&p, GRIP_FAULT_LAPACKE, GRIP_ELAPACK, NULL, &r);
    fault_walk_print("cpu", GRIP_FAULT_LAPACKE, &r);
    ck_assert_uint_gt(r.by_stage[GRIP_STAGE_GROUP], 0);
    ck_assert_uint_eq(r.by_stage[GRIP_STAGE_VERIFY], 0); /* icp_math.h's Horn quaternion: no LAPACKE */
    ck_assert_uint_eq(r.absorbed, 0); /* a failed SVD is an error wherever it happens */
    fault_pipeline_close(&p);
}
END_TEST

START_TEST(every_lapacke_call_of_gc_fails_cleanly)
{
    fault_pipeline p;
    fault_pipeline_open(&p, cpu_pipeline_gc, 1, GRIP_MEM_HOST);
    fault_walk_report r;
    fault_walk(&p, GRIP_FAULT_LAPACKE, GRIP_ELAPACK, NULL, &r);
    fault_walk_print("cpu, gc", GRIP_FAULT_LAPACKE, &r);
    ck_assert_uint_gt(r.by_stage[GRIP_STAGE_GROUP], 0);
    ck_assert_uint_eq(r.by_stage[GRIP_STAGE_VERIFY], 0); /* as above: ICP calls no LAPACKE */
    ck_assert_uint_eq(r.absorbed, 0);
    fault_pipeline_close(&p);
}
END_TEST

/* The CPU twins never reach a device hook: a device fault armed at its first point never fires. */
START_TEST(cpu_stages_pass_no_device_hook)
{
    fault_pipeline p;
    fault_pipeline_open(&p, cpu_pipeline, 1, GRIP_MEM_HOST);
    static const grip_fault_kind device_kinds[] = {GRIP_FAULT_DEVICE_ALLOC, GRIP_FAULT_LAUNCH, GRIP_FAULT_COPY};
    for (size_t i = 0; i < sizeof device_kinds / sizeof device_kinds[0]; i++) {
        fault_walk_report r;
        fault_walk(&p, device_kinds[i], GRIP_ECUDA, NULL, &r);
        ck_assert_msg(r.points == 0, "%s: a CPU pipeline passed %llu device hooks",
                      grip_fault_kind_name(device_kinds[i]), (unsigned long long)r.points);
    }
    fault_pipeline_close(&p);
}
END_TEST

/* The group stages' RANSAC fits a cluster's samples in chunks on worker threads, which note their failures for the
 * calling thread to report: a LAPACKE failure on any of 4 threads, early, midway or late in the run, fails the call
 * with the rigid fit's text, frees every cluster (LeakSanitizer checks) and leaves the context as the clean run
 * found it. */
START_TEST(a_lapacke_failure_on_a_ransac_worker_fails_cleanly)
{
    const grip_ctx_options four = {sizeof four, -1, 4};
    grip_ctx *ctx = NULL;
    ck_assert_int_eq(grip_ctx_new(&four, &ctx), GRIP_OK);
    grip_ransac_scene sc;
    ck_assert(grip_ransac_scene_make(7, 40, 2, 160, &sc));
    const grip_ransac_params rp = {0.01, GRIP_RANSAC_PCL_ITERATIONS, GRIP_RANSAC_PCL_SEED, 3, 5};
    grip_fault_disarm();
    grip_cluster *clean = grip_ransac_scene_clusters(&sc);
    size_t n_clean = sc.n_clusters;
    ck_assert_int_eq(grip_clusters_ransac(ctx, &rp, sc.model_kp, sc.scene_kp, sc.corr, &clean, &n_clean), GRIP_OK);
    const uint64_t calls = grip_fault_calls(GRIP_FAULT_LAPACKE);
    ck_assert_uint_gt(calls, 1000);
    const uint64_t nth[] = {1, calls / 2, calls};
    for (size_t k = 0; k < sizeof nth / sizeof nth[0]; ++k) {
        grip_cluster *c = grip_ransac_scene_clusters(&sc);
        size_t n = sc.n_clusters;
        grip_fault_arm(GRIP_FAULT_LAPACKE, nth[k]);
        ck_assert_int_eq(grip_clusters_ransac(ctx, &rp, sc.model_kp, sc.scene_kp, sc.corr, &c, &n), GRIP_ELAPACK);
        ck_assert(grip_fault_fired());
        ck_assert_str_eq(ctx->last_error, "rigid_fit: LAPACKE_dgesvd failed (info 1)");
        ck_assert_ptr_null(c);
        ck_assert_uint_eq(n, 0);
    }
    grip_fault_disarm();
    grip_cluster *again = grip_ransac_scene_clusters(&sc);
    size_t n_again = sc.n_clusters;
    ck_assert_int_eq(grip_clusters_ransac(ctx, &rp, sc.model_kp, sc.scene_kp, sc.corr, &again, &n_again), GRIP_OK);
    ck_assert_uint_eq(n_again, n_clean);
    for (size_t i = 0; i < n_clean; ++i) {
        ck_assert_uint_eq(again[i].n_members, clean[i].n_members);
        ck_assert(!memcmp(again[i].members, clean[i].members, clean[i].n_members * sizeof(uint32_t)));
        ck_assert(!memcmp(again[i].pose, clean[i].pose, sizeof clean[i].pose));
    }
    grip_clusters_free(again, n_again);
    grip_clusters_free(clean, n_clean);
    grip_ransac_scene_free(&sc);
    grip_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("faults");
    grip_test_add_case(s, "lapacke", every_lapacke_call_fails_cleanly);
    grip_test_add_case(s, "lapacke_gc", every_lapacke_call_of_gc_fails_cleanly);
    grip_test_add_case(s, "cpu_no_device_hooks", cpu_stages_pass_no_device_hook);
    grip_test_add_case(s, "ransac_workers", a_lapacke_failure_on_a_ransac_worker_fails_cleanly);
    return grip_test_run(s);
}
