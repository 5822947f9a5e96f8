/* test_faults.c -- fault injection on the CPU twins (built with GRIP_FAULT_INJECTION only): every LAPACKE call a
 * whole pipeline makes (RANSAC's rigid fits; ICP's updates are closed-form, shared with its kernels, and call no
 * LAPACKE) is made to fail in turn; the run stops with GRIP_ELAPACK and
 * a last error naming the stage, leaves no result and no memory behind (LeakSanitizer, in scripts/ci-sanitize.sh),
 * and the same context then gives the clean run's results bit for bit (tests/support/fault_walk.h). A CPU pipeline
 * passes no device hook at all. One CPU thread, so that the Nth call is the same call in every run. */
#include "test_support.h"
#include "fault_walk.h"

#include <stdio.h>

/* SHOT with BOARD frames for Hough 3D, few RANSAC and ICP iterations: two hypotheses (one per model), one accepted,
 * a dozen LAPACKE calls. */
static const char *const cpu_pipeline[] = {
    "descriptor.impl=shot",        "descriptor.device=cpu",       "descriptor.radius=0.05",
    "descriptor.model_leaf=0.015", "descriptor.scene_leaf=0.015", "index.impl=bruteforce",
    "index.device=cpu",            "match.impl=knn",              "match.device=cpu",
    "group.impl=hough3d",          "group.bin_size=0.02",         "group.threshold=4",
    "group.frame_radius=0.03",     "group.ransac_iterations=5",   "verify.impl=icp",
    "verify.max_iterations=5",     NULL};

/* The other grouping (geometric consistency, its own RANSAC caller) behind the kd-tree index and the ratio test. */
static const char *const cpu_pipeline_gc[] = {
    "descriptor.impl=shot",        "descriptor.device=cpu",       "descriptor.radius=0.05",
    "descriptor.model_leaf=0.015", "descriptor.scene_leaf=0.015", "index.impl=kdtree",
    "index.device=cpu",            "match.impl=knn",              "match.device=cpu",
    "match.ratio=0.9",             "group.impl=gc",               "group.size=0.01",
    "group.threshold=10",          "group.ransac_iterations=3",   "verify.impl=icp",
    "verify.max_iterations=3",     NULL};

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

int main(void)
{
    Suite *s = suite_create("faults");
    grip_test_add_case(s, "lapacke", every_lapacke_call_fails_cleanly);
    grip_test_add_case(s, "lapacke_gc", every_lapacke_call_of_gc_fails_cleanly);
    grip_test_add_case(s, "cpu_no_device_hooks", cpu_stages_pass_no_device_hook);
    return grip_test_run(s);
}
