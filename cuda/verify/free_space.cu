// free_space.cu -- grip_free_space_violations_cuda (src/verify/free_space_cuda.h). The distinct models of the jobs
// are uploaded once, one after another in one buffer; a block takes kPoints consecutive points of one pose (a table
// of blocks says which pose and where), each thread tests one point with free_space_math.h's functions, the block
// adds its counts and one thread adds them to its pose's with integer atomics, whose order changes no sum.
#include "cuda/core/check.cuh"
#include "cuda/core/device.cuh"

extern "C" {
#include "core/cuda_bridge.h"
#include "verify/free_space_cuda.h"
#include "verify/free_space_math.h"
}

#include <stdlib.h>
#include <string.h>

namespace {

constexpr int kPoints = 256; // model points a block, a thread each

struct pose_job {
    double pose[16];
    uint64_t first; // of the pose's model in the points buffer, in points
    uint64_t n;
};

struct block_job {
    uint32_t job;
    uint32_t start; // the block's first point within the model
};

__global__ void free_space_kernel(const float *__restrict__ scene, size_t stride, uint32_t width, uint32_t height,
                                  double fx, double fy, double cx, double cy, double tol,
                                  const float *__restrict__ points, const pose_job *__restrict__ jobs,
                                  const block_job *__restrict__ blocks, unsigned long long *counts)
{
    __shared__ unsigned int seen, violations;
    if (threadIdx.x == 0)
        seen = violations = 0;
    __syncthreads();
    const block_job b = blocks[blockIdx.x];
    const pose_job &j = jobs[b.job];
    const uint64_t i = (uint64_t)b.start + threadIdx.x;
    if (i < j.n) {
        const double cam[4] = {fx, fy, cx, cy};
        const int k = grip_free_space_point(cam, scene, stride, width, height, points + 3 * (j.first + i), j.pose, tol);
        if (k > 0)
            atomicAdd(&seen, 1u);
        else if (k < 0)
            atomicAdd(&violations, 1u);
    }
    __syncthreads(); // orders the block's shared counts before thread 0 reads them
    if (threadIdx.x == 0) {
        if (seen)
            atomicAdd(&counts[2 * b.job], (unsigned long long)seen);
        if (violations)
            atomicAdd(&counts[2 * b.job + 1], (unsigned long long)violations);
    }
}

// Host side of one call: what is uploaded, freed together.
struct call_buffers {
    float *points;
    pose_job *jobs;
    block_job *blocks;
    unsigned long long *counts;
};

void call_buffers_free(call_buffers *d)
{
    grip_cuda_free(d->points);
    grip_cuda_free(d->jobs);
    grip_cuda_free(d->blocks);
    grip_cuda_free(d->counts);
}

// The jobs' distinct models in one buffer (by pointer and size: a model several poses share crosses once), the
// jobs with their models' places, and the table of blocks. Host arrays are malloc'd and freed here.
grip_status upload_jobs(grip_ctx *ctx, const grip_free_space_job *jobs, size_t n, call_buffers *d, size_t *n_blocks)
{
    pose_job *pj = (pose_job *)calloc(n + 1, sizeof *pj);
    size_t *distinct = (size_t *)malloc((n + 1) * sizeof *distinct); // the first job of each model, in job order
    grip_status st = pj && distinct
                         ? GRIP_OK
                         : grip_fail(ctx, GRIP_ENOMEM, "verify (cuda): out of host memory for %zu poses", n);
    size_t n_distinct = 0;
    uint64_t total = 0, blocks = 0;
    for (size_t k = 0; k < n && st == GRIP_OK; k++) {
        size_t o = 0; // poses are many, their models few: look among the models met so far
        while (o < n_distinct && (jobs[distinct[o]].model_xyz != jobs[k].model_xyz ||
                                  jobs[distinct[o]].n_model != jobs[k].n_model))
            o++;
        if (o == n_distinct) {
            distinct[n_distinct++] = k;
            pj[k].first = total;
            total += jobs[k].n_model;
        } else {
            pj[k].first = pj[distinct[o]].first;
        }
        memcpy(pj[k].pose, jobs[k].pose, sizeof pj[k].pose);
        pj[k].n = jobs[k].n_model;
        blocks += (jobs[k].n_model + kPoints - 1) / kPoints;
    }
    if (st == GRIP_OK && (blocks > 0x7fffffffu || total > UINT32_MAX))
        st = grip_fail(ctx, GRIP_EUNSUPPORTED,
                       "verify (cuda): %llu model points are more than one free-space launch takes",
                       (unsigned long long)total);
    block_job *bj = st == GRIP_OK ? (block_job *)malloc((blocks + 1) * sizeof *bj) : NULL;
    if (st == GRIP_OK && !bj)
        st = grip_fail(ctx, GRIP_ENOMEM, "verify (cuda): out of host memory for %llu blocks",
                       (unsigned long long)blocks);
    for (size_t k = 0, b = 0; k < n && st == GRIP_OK; k++)
        for (uint64_t s = 0; s < jobs[k].n_model; s += kPoints)
            bj[b++] = block_job{(uint32_t)k, (uint32_t)s};
    if (st == GRIP_OK)
        st = grip_cuda_alloc_n(ctx, &d->points, 3 * total + 1);
    for (size_t o = 0; o < n_distinct && st == GRIP_OK; o++)
        if (jobs[distinct[o]].n_model)
            st = grip_cuda_copy_to_device(ctx, d->points + 3 * pj[distinct[o]].first, jobs[distinct[o]].model_xyz,
                                          3 * jobs[distinct[o]].n_model * sizeof(float));
    if (st == GRIP_OK)
        st = grip_cuda_alloc_n(ctx, &d->jobs, n);
    if (st == GRIP_OK)
        st = grip_cuda_copy_to_device(ctx, d->jobs, pj, n * sizeof *pj);
    if (st == GRIP_OK)
        st = grip_cuda_alloc_n(ctx, &d->blocks, blocks + 1);
    if (st == GRIP_OK && blocks)
        st = grip_cuda_copy_to_device(ctx, d->blocks, bj, blocks * sizeof *bj);
    if (st == GRIP_OK)
        st = grip_cuda_alloc_n(ctx, &d->counts, 2 * n);
    if (st == GRIP_OK)
        st = grip_cuda_status(ctx, GRIP_CUDA_COPY(cudaMemsetAsync(d->counts, 0, 2 * n * sizeof *d->counts, 0)),
                              "cudaMemsetAsync", __FILE__, __LINE__);
    *n_blocks = (size_t)blocks;
    free(pj);
    free(distinct);
    free(bj);
    return st;
}

} // namespace

extern "C" grip_status grip_free_space_violations_cuda(grip_ctx *ctx, const grip_pinhole *cam, const float *scene_dev,
                                                       size_t stride, uint32_t width, uint32_t height,
                                                       const grip_free_space_job *jobs, size_t n, double tolerance,
                                                       float *violation)
{
    if (!cam || (!scene_dev && cam->valid) || stride < 3 || (n && (!jobs || !violation)))
        return grip_fail(ctx, GRIP_EINVAL, "verify (cuda): free-space check: NULL argument or stride %zu below 3",
                         stride);
    if (n == 0)
        return GRIP_OK;
    if (!cam->valid) { // an unorganized scene: nothing to count, as on the CPU
        for (size_t k = 0; k < n; k++)
            violation[k] = grip_free_space_fraction(0, 0, 0);
        return GRIP_OK;
    }
    call_buffers d = {};
    size_t blocks = 0;
    grip_status st = upload_jobs(ctx, jobs, n, &d, &blocks);
    if (st == GRIP_OK && blocks) {
        free_space_kernel<<<(unsigned)blocks, kPoints>>>(scene_dev, stride, width, height, cam->fx, cam->fy, cam->cx,
                                                         cam->cy, tolerance, d.points, d.jobs, d.blocks, d.counts);
        st = grip_cuda_status(ctx, GRIP_CUDA_LAUNCH(cudaGetLastError()), "free_space_kernel", __FILE__, __LINE__);
    }
    unsigned long long *counts = st == GRIP_OK ? (unsigned long long *)malloc(2 * n * sizeof *counts) : NULL;
    if (st == GRIP_OK && !counts)
        st = grip_fail(ctx, GRIP_ENOMEM, "verify (cuda): out of host memory for %zu counts", n);
    if (st == GRIP_OK)
        st = grip_cuda_copy_to_host(ctx, counts, d.counts, 2 * n * sizeof *counts);
    for (size_t k = 0; k < n && st == GRIP_OK; k++)
        violation[k] = grip_free_space_fraction(1, counts[2 * k], counts[2 * k + 1]);
    free(counts);
    call_buffers_free(&d);
    return st;
}
