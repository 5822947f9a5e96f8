/* test_faults_cuda.c (gpu) -- fault injection on CUDA (built with GRIP_FAULT_INJECTION only): every device
 * allocation, kernel launch and device copy of a whole pipeline (descriptor, index, match and the group stage's Hough
 * voting on the device, `device = auto`; BOARD frames with PCL's ties and verify on the CPU) is made to fail in turn, then every LAPACKE call. Each faulted run stops with the status the
 * real failure gives (GRIP_ENOMEM for an allocation, GRIP_ECUDA for a launch or a copy, GRIP_ELAPACK), a last error
 * naming the stage, no result left and the device's memory in use as after a clean run (the pool's bytes in use, and
 * the device's after the pool is trimmed); then the same context gives the clean run's results bit for bit
 * (tests/support/fault_walk.h). A fault that a fallback absorbs (smaller chunks, a streamed index) must leave the
 * clean results. Two pipelines: features in host memory with the brute-force index and the mutual filter, and
 * features left on the device with the kd-tree index. FPFH, not SHOT: its kernels vote in integers, so a run's
 * descriptors are the same bits every time. Skips (77) without a usable device. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_support.h"
#include "fault_walk.h"

#ifdef GRIP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include <stdio.h>
#include <stdlib.h>

#define FPFH_SETTINGS                                                                                                 \
    "descriptor.impl=fpfh", "descriptor.device=cuda", "descriptor.radius=0.04", "descriptor.model_leaf=0.012",         \
        "descriptor.scene_leaf=0.012", "group.impl=hough3d", "group.bin_size=0.02", "group.threshold=3",              \
        "group.frame_radius=0.03", "group.ransac_iterations=5", "verify.impl=icp", "verify.max_iterations=5"

static const char *const host_features[] = {FPFH_SETTINGS,      "index.impl=bruteforce", "index.device=cuda",
                                            "match.impl=knn",   "match.device=cuda",     "match.mutual=true",
                                            "match.k=3",        NULL};
static const char *const device_features[] = {FPFH_SETTINGS, "index.impl=kdtree", "index.device=cuda",
                                              "match.impl=knn", "match.device=cuda", NULL};

#ifdef GRIP_HAVE_CUDA
/* Device memory in use, between runs (nothing of grip's alive): the default pool's bytes handed out, then the
 * device's after the pool gave back what it caches. */
static void device_usage(fault_device_usage *out)
{
    int device = 0;
    cudaMemPool_t pool;
    size_t free_bytes = 0, total = 0;
    uint64_t used = 0; /* cuuint64_t */
    ck_assert_int_eq(cudaGetDevice(&device), cudaSuccess);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    ck_assert_int_eq(cudaDeviceGetDefaultMemPool(&pool, device), cudaSuccess);
    ck_assert_int_eq(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used), cudaSuccess);
    ck_assert_int_eq(cudaMemPoolTrimTo(pool, 0), cudaSuccess);
    ck_assert_int_eq(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
    out->pool_used = used;
    out->device_used = total - free_bytes;
}
#define DEVICE_PROBE device_usage
#else
#define DEVICE_PROBE NULL
#endif

static void walk_all(const char *label, const char *const *settings, uint32_t features_memory)
{
    static const struct {
        grip_fault_kind kind;
        grip_status want;
    } kinds[] = {{GRIP_FAULT_DEVICE_ALLOC, GRIP_ENOMEM},
                 {GRIP_FAULT_LAUNCH, GRIP_ECUDA},
                 {GRIP_FAULT_COPY, GRIP_ECUDA},
                 {GRIP_FAULT_LAPACKE, GRIP_ELAPACK}};
    fault_pipeline p;
    fault_pipeline_open(&p, settings, 1, features_memory);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        fault_walk_report r;
        fault_walk(&p, kinds[i].kind, kinds[i].want, DEVICE_PROBE, &r);
        fault_walk_print(label, kinds[i].kind, &r);
        if (kinds[i].kind != GRIP_FAULT_LAPACKE) /* the descriptor stage runs on the device */
            ck_assert_uint_gt(r.by_stage[GRIP_STAGE_DESCRIPTOR], 0);
    }
    fault_pipeline_close(&p);
}

START_TEST(host_features_bruteforce_mutual)
{
    walk_all("cuda, host features, bruteforce, mutual", host_features, GRIP_MEM_HOST);
}
END_TEST

START_TEST(device_features_kdtree)
{
    walk_all("cuda, device features, kdtree", device_features, GRIP_MEM_CUDA);
}
END_TEST

int main(void)
{
    /* every kernel image loaded when CUDA starts, not at a kernel's first launch, so that the device memory a
     * faulted run leaves is comparable with a clean run's */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    Suite *s = suite_create("faults_cuda");
    grip_test_add_case(s, "host_features", host_features_bruteforce_mutual);
    grip_test_add_case(s, "device_features", device_features_kdtree);
    return grip_test_run_gpu(s);
}
