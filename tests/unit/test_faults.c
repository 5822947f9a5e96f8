/* test_faults.c -- fault injection on the CPU twins (built with GRIP_FAULT_INJECTION only): a whole CPU pipeline,
 * with either grouping, passes no device hook, so that no fault armed for a device allocation, launch or copy can
 * fire in it. The CPU twins call nothing else that fault injection could fail: RANSAC's and ICP's fits are closed
 * forms of their own (math/horn.h). */
#include "test_support.h"
#include "fault_walk.h"

#include <stdio.h>

/* SHOT with BOARD frames for Hough 3D, few RANSAC and ICP iterations: two hypotheses (one per model), one accepted. */
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

/* The CPU twins never reach a device hook: a device fault armed at its first point never fires. */
static void pass_no_device_hook(const char *const *settings)
{
    fault_pipeline p;
    fault_pipeline_open(&p, settings, 1, GRIP_MEM_HOST);
    static const grip_fault_kind device_kinds[] = {GRIP_FAULT_DEVICE_ALLOC, GRIP_FAULT_LAUNCH, GRIP_FAULT_COPY};
    for (size_t i = 0; i < sizeof device_kinds / sizeof device_kinds[0]; i++) {
        fault_walk_report r;
        fault_walk(&p, device_kinds[i], GRIP_ECUDA, NULL, &r);
        ck_assert_msg(r.points == 0, "%s: a CPU pipeline passed %llu device hooks",
                      grip_fault_kind_name(device_kinds[i]), (unsigned long long)r.points);
    }
    fault_pipeline_close(&p);
}

START_TEST(cpu_stages_pass_no_device_hook)
{
    pass_no_device_hook(cpu_pipeline);
    pass_no_device_hook(cpu_pipeline_gc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("faults");
    grip_test_add_case(s, "cpu_no_device_hooks", cpu_stages_pass_no_device_hook);
    return grip_test_run(s);
}
