/* test_faults_cuda.c (gpu) -- fault injection on CUDA (built with GRIP_FAULT_INJECTION only): every device allocation,
 * kernel launch and device copy of a whole pipeline (descriptor, index, match, the group stage's Hough voting and
 * verify on the device, `device = auto`; BOARD frames with PCL's ties on the CPU) is made to fail in turn. Each faulted
 * run stops with the status the real failure gives (GRIP_ENOMEM for an allocation, GRIP_ECUDA for a launch or a copy),
 * a last error naming the stage, no result left and the device's memory in use as after a clean run (the pool's bytes
 * in use, and the device's after the pool is trimmed); then the same context gives the clean run's results bit for bit
 * (tests/support/fault_walk.h). A fault that a fallback absorbs (smaller chunks, a streamed index) must leave the clean
 * results. Two pipelines: features in host memory with the brute-force index and the mutual filter (also on a context
 * of 4 threads with BOARD frames on the device, where the two models' descriptions and Hough votes run on workers at
 * once), and features left on the device with the kd-tree index. FPFH, not SHOT: its kernels vote in integers, so a
 * run's descriptors are the same bits every time. Two more cases walk the device faults of one call of each stage with
 * a CUDA backend under `device = auto` and `fallback = cpu` (descriptor, index, match, group by hough3d with BOARD
 * frames on the device, verify by icp; then group by gc and verify by ghv): every call must succeed, with the CPU
 * twin's result where it fell back, and leave the device's memory in use as it was. Skips (77) without a usable
 * device. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_support.h"
#include "fault_walk.h"
#include "pipeline.h"

#ifdef GRIP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include "core/array.h"
#include "core/cuda_bridge.h"
#include "stages/stage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FPFH_DESCRIPTOR \
    "descriptor.impl=fpfh", "descriptor.radius=0.04", "descriptor.model_leaf=0.012", "descriptor.scene_leaf=0.012"
#define HOUGH3D_ICP                                                                              \
    "group.impl=hough3d", "group.bin_size=0.02", "group.threshold=3", "group.frame_radius=0.03", \
        "group.ransac_iterations=5", "verify.impl=icp", "verify.max_iterations=5"
#define FPFH_SETTINGS FPFH_DESCRIPTOR, HOUGH3D_ICP

static const char *const host_features[] = {FPFH_SETTINGS,           "descriptor.device=cuda", "index.impl=bruteforce",
                                            "index.device=cuda",     "match.impl=knn",         "match.device=cuda",
                                            "match.mutual=true",     "match.k=3",              NULL};
/* host_features with BOARD frames on the device (nearest ties): a model's Hough vote is then the device's work alone,
 * which the group stage runs for the models at once on a context of several threads */
static const char *const host_features_nearest[] = {FPFH_SETTINGS,       "group.frame_ties=nearest",
                                                    "descriptor.device=cuda", "index.impl=bruteforce",
                                                    "index.device=cuda",      "match.impl=knn",
                                                    "match.device=cuda",      "match.mutual=true",
                                                    "match.k=3",              NULL};
static const char *const device_features[] = {FPFH_SETTINGS,       "descriptor.device=cuda", "index.impl=kdtree",
                                              "index.device=cuda", "match.impl=knn",         "match.device=cuda",
                                              NULL};

#ifdef GRIP_HAVE_CUDA
/* Device memory in use, between runs (nothing of grip's alive): the bytes ctx's pool has handed out, then the
 * device's after the pool gave back what it caches. */
static void device_usage(grip_ctx *ctx, fault_device_usage *out)
{
    size_t free_bytes = 0, total = 0;
    grip_cuda_pool_figures pool;
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    ck_assert_int_eq(grip_cuda_pool_usage(ctx, &pool), GRIP_OK);
    ck_assert_int_eq(grip_cuda_pool_trim(ctx), GRIP_OK);
    ck_assert_int_eq(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
    out->pool_used = pool.used;
    out->device_used = total - free_bytes;
}
#define DEVICE_PROBE device_usage
#else
#define DEVICE_PROBE NULL
#endif

static void walk_all(const char *label, const char *const *settings, uint32_t threads, uint32_t features_memory)
{
    static const struct {
        grip_fault_kind kind;
        grip_status want;
    } kinds[] = {{GRIP_FAULT_DEVICE_ALLOC, GRIP_ENOMEM},
                 {GRIP_FAULT_LAUNCH, GRIP_ECUDA},
                 {GRIP_FAULT_COPY, GRIP_ECUDA}};
    fault_pipeline p;
    fault_pipeline_open(&p, settings, threads, features_memory);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        fault_walk_report r;
        fault_walk(&p, kinds[i].kind, kinds[i].want, DEVICE_PROBE, &r);
        fault_walk_print(label, kinds[i].kind, &r);
        ck_assert_uint_gt(r.by_stage[GRIP_STAGE_DESCRIPTOR], 0); /* the descriptor stage runs on the device */
    }
    fault_pipeline_close(&p);
}

START_TEST(host_features_bruteforce_mutual)
{
    walk_all("cuda, host features, bruteforce, mutual", host_features, 1, GRIP_MEM_HOST);
}
END_TEST

START_TEST(device_features_kdtree)
{
    walk_all("cuda, device features, kdtree", device_features, 1, GRIP_MEM_CUDA);
}
END_TEST

/* The walk on a context of 4 threads, BOARD frames on the device: the two models are described at once
 * (describe_many) and their Hough votes cast at once (the group stage's prepare step), each on a worker context and
 * stream of its own (stages/stage_workers.h), so that a fault fires in one worker while the other runs. The fault points are counted
 * across threads, so a stage's count, and with it the stage where the nth point fails, does not depend on which
 * worker meets it; the other worker's results must be released as the failing one's. */
START_TEST(host_features_workers_at_once)
{
    walk_all("cuda, host features, nearest ties, 4 threads", host_features_nearest, 4, GRIP_MEM_HOST);
}
END_TEST

/* ---- device = auto, fallback = cpu ------------------------------------------------------------------------- */
#ifdef GRIP_HAVE_CUDA /* the walk reads the device's memory in use (device_usage) */

/* The fallback cases' pipelines: everything on the CPU twins, and `device = auto` with `fallback = cpu` in every
 * stage; grouped and verified by hough3d and icp (BOARD's frames with nearest ties: computed on the device), or by
 * gc and ghv. */
#define FALLBACK_SETTINGS(device)                                                                            \
    FPFH_DESCRIPTOR, "index.impl=bruteforce", "match.impl=knn", "match.mutual=true", "match.k=3",            \
        "descriptor.device=" device, "index.device=" device, "match.device=" device, "group.device=" device, \
        "verify.device=" device
#define AUTO_FALLBACK                                                                                 \
    FALLBACK_SETTINGS("auto"), "descriptor.fallback=cpu", "index.fallback=cpu", "match.fallback=cpu", \
        "group.fallback=cpu", "verify.fallback=cpu"
#define GC_GHV "group.impl=gc", "group.size=0.01", "group.threshold=3", "group.ransac_iterations=5", "verify.impl=ghv"
static const char *const hough3d_icp_on_cpu[] = {FALLBACK_SETTINGS("cpu"), HOUGH3D_ICP, "group.frame_ties=nearest",
                                                 NULL};
static const char *const hough3d_icp_auto[] = {AUTO_FALLBACK, HOUGH3D_ICP, "group.frame_ties=nearest", NULL};
static const char *const gc_ghv_on_cpu[] = {FALLBACK_SETTINGS("cpu"), GC_GHV, NULL};
static const char *const gc_ghv_auto[] = {AUTO_FALLBACK, GC_GHV, NULL};

/* The inputs of the stage under test, all made by the CPU twins, in host memory. */
typedef struct fallback_kit {
    fault_pipeline cpu;   /* every stage on the CPU: the twins whose results a fallen-back call must give */
    fault_pipeline fb;    /* device = auto, fallback = cpu (a context of its own) */
    grip_cloud model;     /* the first model */
    grip_features *model_features, *scene_features;
    grip_index *index;    /* the CPU index over the model's descriptors */
    fault_run run;        /* the whole CPU pipeline on every model: the views, matches and hypotheses that the group
                           * and verify stages under test take */
} fallback_kit;

/* What one call of the stage under test gave, in host memory: a descriptor's features, an index with the scene's
 * descriptors searched in it (k = 3), a match's matches, a group's hypotheses or a verify's verdicts. */
typedef struct outcome {
    grip_features *features;
    grip_index *index;
    grip_array ids, sqdist;
    grip_matches *matches;
    grip_hypotheses *hypotheses;
    grip_verdicts *verdicts;
} outcome;

static void outcome_free(outcome *o)
{
    if (o->features)
        o->features->release(o->features);
    if (o->index)
        o->index->release(o->index);
    if (o->matches)
        o->matches->release(o->matches);
    if (o->hypotheses)
        o->hypotheses->release(o->hypotheses);
    if (o->verdicts)
        o->verdicts->release(o->verdicts);
    grip_array_free_host(&o->ids);
    grip_array_free_host(&o->sqdist);
    memset(o, 0, sizeof *o);
}

/* The one call of `kind` on stage (a stage of pipeline p), into *o. */
static grip_status call_stage(fallback_kit *t, fault_pipeline *p, uint32_t kind, outcome *o)
{
    memset(o, 0, sizeof *o);
    const grip_stage_impl *impl = p->impl[kind];
    grip_stage *st = p->stage[kind];
    if (kind == GRIP_STAGE_DESCRIPTOR)
        return impl->describe(st, &t->model, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, &o->features);
    if (kind == GRIP_STAGE_INDEX)
        return impl->build(st, &t->model_features->descriptors, NULL, &o->index);
    if (kind == GRIP_STAGE_MATCH)
        return impl->match(st, t->index, &t->scene_features->descriptors, GRIP_MEM_HOST, &o->matches);
    const fault_run *r = &t->run;
    if (kind == GRIP_STAGE_GROUP)
        return impl->group(st, r->views, r->n_models, &r->views[r->n_models], r->matches, &o->hypotheses);
    return impl->verify(st, r->views, r->n_models, &r->views[r->n_models], r->hypotheses, &o->verdicts);
}

/* After the call (nothing armed): an index answers the scene's descriptors, k = 3. */
static void outcome_finish(fallback_kit *t, outcome *o)
{
    if (!o->index)
        return;
    const grip_array *q = &t->scene_features->descriptors;
    ck_assert_int_eq(grip_array_alloc_host(NULL, &o->ids, GRIP_U32, q->rows, 3), GRIP_OK);
    ck_assert_int_eq(grip_array_alloc_host(NULL, &o->sqdist, GRIP_F32, q->rows, 3), GRIP_OK);
    ck_assert_int_eq(o->index->search(o->index, q, 3, INFINITY, &o->ids, &o->sqdist), GRIP_OK);
}

/* Two host arrays of the same shape and bytes. */
static int same_array(const grip_array *a, const grip_array *b)
{
    return a->memory == GRIP_MEM_HOST && b->memory == GRIP_MEM_HOST && a->dtype == b->dtype && a->rows == b->rows &&
           a->cols == b->cols &&
           (a->rows * a->cols == 0 || memcmp(a->data, b->data, a->rows * a->cols * grip_dtype_size(a->dtype)) == 0);
}

/* Two group or verify results with the same bytes. */
static int same_items(const grip_hypotheses *ha, const grip_hypotheses *hb, const grip_verdicts *va,
                      const grip_verdicts *vb)
{
    fault_digest da, db;
    memset(&da, 0, sizeof da);
    memset(&db, 0, sizeof db);
    if (ha) {
        fault_digest_hypotheses(&da, ha);
        fault_digest_hypotheses(&db, hb);
    } else {
        fault_digest_verdicts(&da, va);
        fault_digest_verdicts(&db, vb);
    }
    int same = fault_digest_equal(&da, &db);
    fault_digest_free(&da);
    fault_digest_free(&db);
    return same;
}

static int same_outcome(const outcome *a, const outcome *b)
{
    if (a->hypotheses)
        return b->hypotheses && same_items(a->hypotheses, b->hypotheses, NULL, NULL);
    if (a->verdicts)
        return b->verdicts && same_items(NULL, NULL, a->verdicts, b->verdicts);
    if (a->features)
        return b->features && same_array(&a->features->keypoints, &b->features->keypoints) &&
               same_array(&a->features->normals, &b->features->normals) &&
               same_array(&a->features->descriptors, &b->features->descriptors);
    if (a->index)
        return b->index && same_array(&a->ids, &b->ids) && same_array(&a->sqdist, &b->sqdist);
    return a->matches && b->matches && a->matches->count == b->matches->count &&
           same_array(&a->matches->query, &b->matches->query) &&
           same_array(&a->matches->reference, &b->matches->reference) &&
           same_array(&a->matches->model_id, &b->matches->model_id) &&
           same_array(&a->matches->sqdist, &b->matches->sqdist);
}

/* Every device allocation, launch and copy of one call of `kind` made to fail in turn, on the fallback stage: each
 * call must succeed, with the CPU twin's result bit for bit (it fell back) or, where the stage's own fallback
 * absorbed the fault on the device (smaller chunks, a streamed index), the clean device call's; device memory in use
 * is back to the clean call's after each; afterwards the stage runs on the device again. (Where the twin and the
 * device give the same bits, as the mutual filter's exact searches do, a result counts as the twin's.) Returns the
 * calls that gave the CPU twin's result; adds the fault points walked to *walked. */
static uint64_t walk_fallback(fallback_kit *t, uint32_t kind, uint64_t *walked)
{
    const char *name = grip_stage_kind_name(kind);
    outcome want_cpu, want_device, got;
    ck_assert_int_eq(call_stage(t, &t->cpu, kind, &want_cpu), GRIP_OK);
    outcome_finish(t, &want_cpu);
    ck_assert_int_eq(call_stage(t, &t->fb, kind, &want_device), GRIP_OK); /* warm-up */
    outcome_free(&want_device);
    uint64_t points[GRIP_FAULT_KIND_COUNT] = {0}, fell_back = 0;
    grip_fault_disarm();
    ck_assert_int_eq(call_stage(t, &t->fb, kind, &want_device), GRIP_OK);
    for (int k = 0; k < GRIP_FAULT_KIND_COUNT; k++)
        points[k] = grip_fault_calls((grip_fault_kind)k);
    outcome_finish(t, &want_device);
    ck_assert_msg(points[GRIP_FAULT_DEVICE_ALLOC] > 0, "%s: device = auto did not put the stage on the device", name);
    fault_device_usage clean;
    device_usage(t->fb.ctx, &clean);
    for (int k = GRIP_FAULT_DEVICE_ALLOC; k <= GRIP_FAULT_COPY; k++) {
        uint64_t back = 0, absorbed = 0;
        for (uint64_t nth = 1; nth <= points[k]; nth++) {
            grip_fault_arm((grip_fault_kind)k, nth);
            grip_status s = call_stage(t, &t->fb, kind, &got);
            int fired = grip_fault_fired();
            grip_fault_disarm();
            ck_assert_msg(fired, "%s: %s %llu did not fire", name, grip_fault_kind_name(k), (unsigned long long)nth);
            ck_assert_msg(s == GRIP_OK, "%s: %s %llu: %s: %s", name, grip_fault_kind_name(k), (unsigned long long)nth,
                          t->fb.plugin->status_str(s), t->fb.plugin->ctx_last_error(t->fb.ctx));
            outcome_finish(t, &got);
            if (same_outcome(&want_cpu, &got))
                back++;
            else if (same_outcome(&want_device, &got))
                absorbed++;
            else
                ck_abort_msg("%s: %s %llu: the result is neither the CPU twin's nor the clean device call's", name,
                             grip_fault_kind_name(k), (unsigned long long)nth);
            outcome_free(&got);
            fault_device_usage now;
            device_usage(t->fb.ctx, &now);
            ck_assert_msg(now.pool_used == clean.pool_used && now.device_used == clean.device_used,
                          "%s: %s %llu: device memory in use went from %llu / %llu to %llu / %llu bytes", name,
                          grip_fault_kind_name(k), (unsigned long long)nth, (unsigned long long)clean.pool_used,
                          (unsigned long long)clean.device_used, (unsigned long long)now.pool_used,
                          (unsigned long long)now.device_used);
        }
        fprintf(stderr, "fallback: %s: %s: %llu fault points, %llu gave the CPU twin's result, %llu the device's\n",
                name, grip_fault_kind_name(k), (unsigned long long)points[k], (unsigned long long)back,
                (unsigned long long)absorbed);
        fell_back += back;
        *walked += points[k];
    }
    /* the stage is on the device again: a clean call gives the clean device result */
    ck_assert_int_eq(call_stage(t, &t->fb, kind, &got), GRIP_OK);
    ck_assert_uint_gt(grip_fault_calls(GRIP_FAULT_DEVICE_ALLOC), 0);
    grip_fault_disarm();
    outcome_finish(t, &got);
    ck_assert(same_outcome(&want_device, &got));
    outcome_free(&got);
    outcome_free(&want_device);
    outcome_free(&want_cpu);
    return fell_back;
}

/* A descriptor stage made on fb's context from kv, whose first device allocation fails: it must fail with
 * GRIP_ENOMEM, naming the stage (no fallback asked for, or the device asked for by name). */
static void expect_no_fallback(fallback_kit *t, const grip_kv *kv, uint32_t n_kv)
{
    const grip_stage_impl *impl = t->fb.impl[GRIP_STAGE_DESCRIPTOR];
    grip_stage *st = NULL;
    grip_features *f = NULL;
    ck_assert_int_eq(impl->create(t->fb.ctx, kv, n_kv, &st), GRIP_OK);
    grip_fault_arm(GRIP_FAULT_DEVICE_ALLOC, 1);
    grip_status s = impl->describe(st, &t->model, GRIP_ROLE_MODEL, NULL, GRIP_MEM_HOST, &f);
    int fired = grip_fault_fired();
    grip_fault_disarm();
    ck_assert(fired);
    ck_assert_int_eq(s, GRIP_ENOMEM);
    ck_assert_ptr_null(f);
    ck_assert_msg(strncmp(t->fb.plugin->ctx_last_error(t->fb.ctx), "descriptor", 10) == 0, "%s",
                  t->fb.plugin->ctx_last_error(t->fb.ctx));
    impl->destroy(st);
}

/* The kit of two pipelines made from settings (on the CPU, and device = auto with fallback = cpu): the first model's
 * and the scene's features, an index over the model's, and a whole CPU run, all made by the CPU twins. */
static void kit_open(fallback_kit *t, const char *const *on_cpu, const char *const *on_auto)
{
    memset(t, 0, sizeof *t);
    fault_pipeline_open(&t->cpu, on_cpu, 1, GRIP_MEM_HOST);
    fault_pipeline_open(&t->fb, on_auto, 1, GRIP_MEM_HOST);
    t->model = pipeline_cloud_view(&t->cpu.models[0]);
    grip_cloud scene = pipeline_cloud_view(t->cpu.scene_cloud);
    const grip_stage_impl *const *impl = t->cpu.impl;
    grip_stage *const *st = t->cpu.stage;
    ck_assert_int_eq(impl[GRIP_STAGE_DESCRIPTOR]->describe(st[GRIP_STAGE_DESCRIPTOR], &t->model, GRIP_ROLE_MODEL, NULL,
                                                           GRIP_MEM_HOST, &t->model_features),
                     GRIP_OK);
    ck_assert_int_eq(impl[GRIP_STAGE_DESCRIPTOR]->describe(st[GRIP_STAGE_DESCRIPTOR], &scene, GRIP_ROLE_SCENE, NULL,
                                                           GRIP_MEM_HOST, &t->scene_features),
                     GRIP_OK);
    ck_assert_int_eq(
        impl[GRIP_STAGE_INDEX]->build(st[GRIP_STAGE_INDEX], &t->model_features->descriptors, NULL, &t->index), GRIP_OK);
    ck_assert_msg(fault_pipeline_run(&t->cpu, &t->run) == GRIP_OK, "the CPU run: %s",
                  t->cpu.plugin->ctx_last_error(t->cpu.ctx));
    /* the group and verify stages under test have work: correspondences to group, hypotheses to verify */
    ck_assert_uint_gt(t->run.matches->count, 0);
    ck_assert_uint_gt(t->run.hypotheses->count, 0);
    fprintf(stderr, "fallback: the CPU run: %llu matches, %u hypotheses, %u verdicts\n",
            (unsigned long long)t->run.matches->count, t->run.hypotheses->count, t->run.verdicts->count);
}

static void kit_close(fallback_kit *t)
{
    fault_run_free(&t->run);
    t->index->release(t->index);
    t->scene_features->release(t->scene_features);
    t->model_features->release(t->model_features);
    fault_pipeline_close(&t->fb);
    fault_pipeline_close(&t->cpu);
}

/* Walks the stages first .. last of the kit's fallback pipeline (walk_fallback); prints the fault points walked. */
static void walk_stages(fallback_kit *t, const char *label, uint32_t first, uint32_t last)
{
    uint64_t points = 0;
    for (uint32_t kind = first; kind <= last; kind++)
        ck_assert_msg(walk_fallback(t, kind, &points) > 0, "%s: %s: no fault fell back to the CPU", label,
                      grip_stage_kind_name(kind));
    fprintf(stderr, "fallback: %s: %llu fault points walked, every call succeeded\n", label,
            (unsigned long long)points);
}

START_TEST(auto_falls_back_to_cpu)
{
    fallback_kit t;
    kit_open(&t, hough3d_icp_on_cpu, hough3d_icp_auto);
    walk_stages(&t, "descriptor .. verify (hough3d, icp)", GRIP_STAGE_DESCRIPTOR, GRIP_STAGE_VERIFY);
    static const grip_kv auto_none[] = {{"device", "auto"}}, cuda_cpu[] = {{"device", "cuda"}, {"fallback", "cpu"}};
    expect_no_fallback(&t, auto_none, 1);
    expect_no_fallback(&t, cuda_cpu, 2);
    kit_close(&t);
}
END_TEST

/* The other group and verify implementations; the descriptor, index and match stages are the first case's. */
START_TEST(auto_falls_back_to_cpu_gc_ghv)
{
    fallback_kit t;
    kit_open(&t, gc_ghv_on_cpu, gc_ghv_auto);
    walk_stages(&t, "group, verify (gc, ghv)", GRIP_STAGE_GROUP, GRIP_STAGE_VERIFY);
    kit_close(&t);
}
END_TEST
#endif

int main(void)
{
    /* every kernel image loaded when CUDA starts, not at a kernel's first launch, so that the device memory a
     * faulted run leaves is comparable with a clean run's */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    Suite *s = suite_create("faults_cuda");
    grip_test_add_case(s, "host_features", host_features_bruteforce_mutual);
    grip_test_add_case(s, "device_features", device_features_kdtree);
    grip_test_add_case(s, "host_features_workers", host_features_workers_at_once);
#ifdef GRIP_HAVE_CUDA
    grip_test_add_case(s, "auto_fallback", auto_falls_back_to_cpu);
    grip_test_add_case(s, "auto_fallback_gc_ghv", auto_falls_back_to_cpu_gc_ghv);
#endif
    return grip_test_run_gpu(s);
}
